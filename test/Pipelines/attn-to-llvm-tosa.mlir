// RUN: attn-opt %s --attn-to-llvm \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_lib_dir/libmlir_runner_utils%shlibext,%mlir_lib_dir/libmlir_c_runner_utils%shlibext \
// RUN: | FileCheck %s

// attn-to-llvm on attention as a TOSA front end writes it, with no attn op:
// [B, H, S, D] reshaped to [B*H, S, D], K transposed, matmul, scale, a
// softmax spelled out (reduce_max, sub, exp, reduce_sum, reciprocal, mul),
// matmul, and the result reshaped back.

func.func private @printMemrefF32(memref<*xf32>)

func.func @attention(%q: tensor<1x2x2x2xf32>, %k: tensor<1x2x3x2xf32>, %v: tensor<1x2x3x2xf32>) -> tensor<1x2x2x2xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %scale = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %q3s = tosa.const_shape {values = dense<[2, 2, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %kv3s = tosa.const_shape {values = dense<[2, 3, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %o4s = tosa.const_shape {values = dense<[1, 2, 2, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %q3 = tosa.reshape %q, %q3s : (tensor<1x2x2x2xf32>, !tosa.shape<3>) -> tensor<2x2x2xf32>
  %k3 = tosa.reshape %k, %kv3s : (tensor<1x2x3x2xf32>, !tosa.shape<3>) -> tensor<2x3x2xf32>
  %v3 = tosa.reshape %v, %kv3s : (tensor<1x2x3x2xf32>, !tosa.shape<3>) -> tensor<2x3x2xf32>
  %kt = tosa.transpose %k3 {perms = array<i32: 0, 2, 1>} : (tensor<2x3x2xf32>) -> tensor<2x2x3xf32>
  %qk = tosa.matmul %q3, %kt, %zp, %zp : (tensor<2x2x2xf32>, tensor<2x2x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x2x3xf32>
  %s = tosa.mul %qk, %scale, %shift : (tensor<2x2x3xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x2x3xf32>
  %m = tosa.reduce_max %s {axis = 2 : i32} : (tensor<2x2x3xf32>) -> tensor<2x2x1xf32>
  %d = tosa.sub %s, %m : (tensor<2x2x3xf32>, tensor<2x2x1xf32>) -> tensor<2x2x3xf32>
  %e = tosa.exp %d : (tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
  %l = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<2x2x3xf32>) -> tensor<2x2x1xf32>
  %r = tosa.reciprocal %l : (tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<2x2x3xf32>, tensor<2x2x1xf32>, tensor<1xi8>) -> tensor<2x2x3xf32>
  %o3 = tosa.matmul %p, %v3, %zp, %zp : (tensor<2x2x3xf32>, tensor<2x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x2x2xf32>
  %o = tosa.reshape %o3, %o4s : (tensor<2x2x2xf32>, !tosa.shape<4>) -> tensor<1x2x2x2xf32>
  return %o : tensor<1x2x2x2xf32>
}

// Scaled scores, by head and query row:
//   head 0, row 0: [0, 0, 0]      -> O = mean(V) = [4, 5]
//   head 0, row 1: [0, 50, 0]     -> O = v1 = [4, 8]
//   head 1, row 0: [0, 1, -100]   -> O = [1, e] / (1 + e) = [0.268941, 0.731059]
//   head 1, row 1: [0, -1, 100]   -> O = v2 = [6, 6]
func.func @main() {
  %q = arith.constant dense<[[[[0.0, 0.0], [100.0, 0.0]],
                              [[0.0, 2.0], [0.0, -2.0]]]]> : tensor<1x2x2x2xf32>
  %k = arith.constant dense<[[[[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]],
                              [[0.0, 0.0], [0.0, 1.0], [0.0, -100.0]]]]> : tensor<1x2x3x2xf32>
  %v = arith.constant dense<[[[[1.0, 2.0], [4.0, 8.0], [7.0, 5.0]],
                              [[1.0, 0.0], [0.0, 1.0], [6.0, 6.0]]]]> : tensor<1x2x3x2xf32>
  %o = call @attention(%q, %k, %v) : (tensor<1x2x2x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>) -> tensor<1x2x2x2xf32>
  %m = bufferization.to_buffer %o : tensor<1x2x2x2xf32> to memref<1x2x2x2xf32>
  %u = memref.cast %m : memref<1x2x2x2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
// CHECK:      sizes = [1, 2, 2, 2]
// CHECK-NEXT: [4, 5],
// CHECK-NEXT: [4, 8]],
// CHECK-NEXT: [0.268941, 0.731059],
// CHECK-NEXT: [6, 6]]]]
