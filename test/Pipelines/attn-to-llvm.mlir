// RUN: attn-opt %s --attn-to-llvm \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_lib_dir/libmlir_runner_utils%shlibext,%mlir_lib_dir/libmlir_c_runner_utils%shlibext \
// RUN: | FileCheck %s

// attn ops lowered to LLVM and run on the CPU, on inputs small enough to
// check by hand: queries that score every visible key alike give a uniform
// softmax (O = mean of the visible V rows, LSE = log(#visible)); a score of 50
// over 0 gives a one-hot softmax; a row that sees no key gives O = 0 and
// LSE = -inf. Every printed value is checked, in order.

func.func private @printMemrefF32(memref<*xf32>)

func.func @print(%t: tensor<*xf32>) {
  %m = bufferization.to_buffer %t : tensor<*xf32> to memref<*xf32>
  call @printMemrefF32(%m) : (memref<*xf32>) -> ()
  return
}

// Q, K, V [1, 1, 4, 2] and a boolean mask [Sq, Sk]:
//   row 0: Q = 0, every key visible        -> O = mean(V) = [4, 5],     LSE = log 4
//   row 1: Q = 0, keys 1 and 3 visible     -> O = (v1 + v3) / 2 = [5, 6], LSE = log 2
//   row 2: Q = [1, 0], scores [0, 50, 0, 0] -> O = v1 = [3, 4],          LSE = 50
//   row 3: no key visible                  -> O = [0, 0],              LSE = -inf
func.func @inputs() -> (tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32>, tensor<4x4xi1>) {
  %q = arith.constant dense<[[[[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [1.0, 0.0]]]]> : tensor<1x1x4x2xf32>
  %k = arith.constant dense<[[[[0.0, 1.0], [50.0, 1.0], [0.0, 1.0], [0.0, 1.0]]]]> : tensor<1x1x4x2xf32>
  %v = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]]]> : tensor<1x1x4x2xf32>
  %mask = arith.constant dense<[[true, true, true, true],
                                [false, true, false, true],
                                [true, true, true, true],
                                [false, false, false, false]]> : tensor<4x4xi1>
  return %q, %k, %v, %mask : tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32>, tensor<4x4xi1>
}

func.func @masked() {
  %q, %k, %v, %mask = call @inputs() : () -> (tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32>, tensor<4x4xi1>)
  %o, %lse = attn.attention %q, %k, %v mask(%mask : tensor<4x4xi1>) {scale = 1.0 : f32}
      : tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32> -> tensor<1x1x4x2xf32>, tensor<1x1x4xf32>
  %ou = tensor.cast %o : tensor<1x1x4x2xf32> to tensor<*xf32>
  call @print(%ou) : (tensor<*xf32>) -> ()
  %lu = tensor.cast %lse : tensor<1x1x4xf32> to tensor<*xf32>
  call @print(%lu) : (tensor<*xf32>) -> ()
  return
}
// CHECK:      sizes = [1, 1, 4, 2]
// CHECK-NEXT: [4, 5],
// CHECK-NEXT: [5, 6],
// CHECK-NEXT: [3, 4],
// CHECK-NEXT: [0, 0]]]]
// CHECK-NEXT: sizes = [1, 1, 4]
// CHECK-NEXT: [1.38629, 0.693147, 50, -inf]

// The same problem in 3 splits of 2 keys: split 0 holds keys {0, 1}, split 1
// keys {2, 3}, split 2 none (LSE = -inf everywhere). The combined O and LSE
// equal the unsplit ones.
func.func @split_kv() {
  %q, %k, %v, %mask = call @inputs() : () -> (tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32>, tensor<4x4xi1>)
  %po, %pl = attn.attention_partial %q, %k, %v mask(%mask : tensor<4x4xi1>) {num_splits = 3 : i64, scale = 1.0 : f32}
      : tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32> -> tensor<3x1x1x4x2xf32>, tensor<3x1x1x4xf32>
  %o, %lse = attn.combine %po, %pl : tensor<3x1x1x4x2xf32>, tensor<3x1x1x4xf32> -> tensor<1x1x4x2xf32>, tensor<1x1x4xf32>
  %plu = tensor.cast %pl : tensor<3x1x1x4xf32> to tensor<*xf32>
  call @print(%plu) : (tensor<*xf32>) -> ()
  %ou = tensor.cast %o : tensor<1x1x4x2xf32> to tensor<*xf32>
  call @print(%ou) : (tensor<*xf32>) -> ()
  %lu = tensor.cast %lse : tensor<1x1x4xf32> to tensor<*xf32>
  call @print(%lu) : (tensor<*xf32>) -> ()
  return
}
// CHECK-NEXT: sizes = [3, 1, 1, 4]
// CHECK-NEXT: [0.693147, 0, 50, -inf]
// CHECK-NEXT: [0.693147, 0, 0.693147, -inf]
// CHECK-NEXT: [-inf, -inf, -inf, -inf]
// CHECK-NEXT: sizes = [1, 1, 4, 2]
// CHECK-NEXT: [4, 5],
// CHECK-NEXT: [5, 6],
// CHECK-NEXT: [3, 4],
// CHECK-NEXT: [0, 0]]]]
// CHECK-NEXT: sizes = [1, 1, 4]
// CHECK-NEXT: [1.38629, 0.693147, 50, -inf]

// bshd with GQA (2 query heads, 1 KV head) and bottom_right causality with
// Sq = 3 > Sk = 2: query i sees keys j <= i - 1, so row 0 sees nothing.
// Head 0 has Q = 0 (uniform); head 1 has Q = 1 and K = [0, 2], so row 2
// weighs v0 = [1, 2] and v1 = [3, 4] by 1/(1+e^2) and e^2/(1+e^2):
// O = [2.76159, 3.76159], LSE = log(1 + e^2) = 2.12693.
func.func @gqa_bshd_bottom_right() {
  %q = arith.constant dense<[[[[0.0], [1.0]], [[0.0], [1.0]], [[0.0], [1.0]]]]> : tensor<1x3x2x1xf32>
  %k = arith.constant dense<[[[[0.0]], [[2.0]]]]> : tensor<1x2x1x1xf32>
  %v = arith.constant dense<[[[[1.0, 2.0]], [[3.0, 4.0]]]]> : tensor<1x2x1x2xf32>
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>, layout = #attn.layout<bshd>, scale = 1.0 : f32}
      : tensor<1x3x2x1xf32>, tensor<1x2x1x1xf32>, tensor<1x2x1x2xf32> -> tensor<1x3x2x2xf32>, tensor<1x2x3xf32>
  %ou = tensor.cast %o : tensor<1x3x2x2xf32> to tensor<*xf32>
  call @print(%ou) : (tensor<*xf32>) -> ()
  %lu = tensor.cast %lse : tensor<1x2x3xf32> to tensor<*xf32>
  call @print(%lu) : (tensor<*xf32>) -> ()
  return
}
// CHECK-NEXT: sizes = [1, 3, 2, 2]
// CHECK-NEXT: [0, 0],
// CHECK-NEXT: [0, 0]],
// CHECK-NEXT: [1, 2],
// CHECK-NEXT: [1, 2]],
// CHECK-NEXT: [2, 3],
// CHECK-NEXT: [2.76159, 3.76159]]]]
// CHECK-NEXT: sizes = [1, 2, 3]
// CHECK-NEXT: [-inf, 0, 0.693147],
// CHECK-NEXT: [-inf, 0, 2.12693]]]

// bf16, top_left with a window of 1 (query i sees keys i - 1 and i) and an
// additive mask of -inf on key 0 (padding): row 0 sees only the padded key.
// V = [1, 2, 4]: O = [0, 2, 3], LSE = [-inf, 0, log 2].
func.func @bf16_window_additive_mask() {
  %q = arith.constant dense<0.0> : tensor<1x1x3x1xbf16>
  %k = arith.constant dense<[[[[1.0], [2.0], [3.0]]]]> : tensor<1x1x3x1xbf16>
  %v = arith.constant dense<[[[[1.0], [2.0], [4.0]]]]> : tensor<1x1x3x1xbf16>
  %mask = arith.constant dense<[[0xFF800000, 0.0, 0.0]]> : tensor<1x3xf32>
  %o, %lse = attn.attention %q, %k, %v mask(%mask : tensor<1x3xf32>) {causal = #attn.causal<top_left>, window = 1 : i64}
      : tensor<1x1x3x1xbf16>, tensor<1x1x3x1xbf16>, tensor<1x1x3x1xbf16> -> tensor<1x1x3x1xbf16>, tensor<1x1x3xf32>
  %of = arith.extf %o : tensor<1x1x3x1xbf16> to tensor<1x1x3x1xf32>
  %ou = tensor.cast %of : tensor<1x1x3x1xf32> to tensor<*xf32>
  call @print(%ou) : (tensor<*xf32>) -> ()
  %lu = tensor.cast %lse : tensor<1x1x3xf32> to tensor<*xf32>
  call @print(%lu) : (tensor<*xf32>) -> ()
  return
}
// CHECK-NEXT: sizes = [1, 1, 3, 1]
// CHECK-NEXT: [0],
// CHECK-NEXT: [2],
// CHECK-NEXT: [3]]]]
// CHECK-NEXT: sizes = [1, 1, 3]
// CHECK-NEXT: [-inf, 0, 0.693147]

// Forward then backward, GQA (2 query heads on 1 KV head), D = 2, Dv = 1,
// dO = 1. K = [[1, 0], [1, 5]], V = [1, 3]. Row 0 of head h has
// Q = [h + 1, 0], so both keys score h + 1: P = [1/2, 1/2], O = 2, and
// dS = P * (dO V^T - dO.O) = [-1/2, 1/2]. Hence dQ = dS K = [0, 2.5],
// dK = sum_h dS^T Q = [[-1.5, 0], [1.5, 0]], dV = sum_h P^T dO = [1, 1].
// Row 1 is fully masked (LSE = -inf) and contributes nothing: its dQ is 0.
func.func @grad() {
  %q = arith.constant dense<[[[[1.0, 0.0], [3.0, 3.0]], [[2.0, 0.0], [3.0, 3.0]]]]> : tensor<1x2x2x2xf32>
  %k = arith.constant dense<[[[[1.0, 0.0], [1.0, 5.0]]]]> : tensor<1x1x2x2xf32>
  %v = arith.constant dense<[[[[1.0], [3.0]]]]> : tensor<1x1x2x1xf32>
  %mask = arith.constant dense<[[true, true], [false, false]]> : tensor<2x2xi1>
  %do = arith.constant dense<1.0> : tensor<1x2x2x1xf32>
  %o, %lse = attn.attention %q, %k, %v mask(%mask : tensor<2x2xi1>) {scale = 1.0 : f32}
      : tensor<1x2x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x1xf32> -> tensor<1x2x2x1xf32>, tensor<1x2x2xf32>
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mask(%mask : tensor<2x2xi1>) {scale = 1.0 : f32}
      : tensor<1x2x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x1xf32>, tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>, tensor<1x2x2xf32>
      -> tensor<1x2x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x1xf32>
  %lu = tensor.cast %lse : tensor<1x2x2xf32> to tensor<*xf32>
  call @print(%lu) : (tensor<*xf32>) -> ()
  %dqu = tensor.cast %dq : tensor<1x2x2x2xf32> to tensor<*xf32>
  call @print(%dqu) : (tensor<*xf32>) -> ()
  %dku = tensor.cast %dk : tensor<1x1x2x2xf32> to tensor<*xf32>
  call @print(%dku) : (tensor<*xf32>) -> ()
  %dvu = tensor.cast %dv : tensor<1x1x2x1xf32> to tensor<*xf32>
  call @print(%dvu) : (tensor<*xf32>) -> ()
  return
}
// CHECK-NEXT: sizes = [1, 2, 2]
// CHECK-NEXT: [1.69315, -inf],
// CHECK-NEXT: [2.69315, -inf]]]
// CHECK-NEXT: sizes = [1, 2, 2, 2]
// CHECK-NEXT: [0, 2.5],
// CHECK-NEXT: [0, 0]],
// CHECK-NEXT: [0, 2.5],
// CHECK-NEXT: [0, 0]]]]
// CHECK-NEXT: sizes = [1, 1, 2, 2]
// CHECK-NEXT: [-1.5, 0],
// CHECK-NEXT: [1.5, 0]]]]
// CHECK-NEXT: sizes = [1, 1, 2, 1]
// CHECK-NEXT: [1],
// CHECK-NEXT: [1]]]]

func.func @main() {
  call @masked() : () -> ()
  call @split_kv() : () -> ()
  call @gqa_bshd_bottom_right() : () -> ()
  call @bf16_window_additive_mask() : () -> ()
  call @grad() : () -> ()
  return
}
