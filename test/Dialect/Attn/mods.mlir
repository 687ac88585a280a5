// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --attn-decompose | FileCheck %s --check-prefix=DECOMPOSE

// Score and mask modifications round-trip on the three ops that take them,
// with the tensors they read; attn-decompose (the reference semantics)
// emits the score modification on the scaled score, the mask modification
// after the causal mask, and, in the gradient, the score modification's
// derivative (here of tanh: 1 - t^2) times dS.

// CHECK-LABEL: func @forward
// CHECK: attn.attention {{.*}} mod_operands(%{{.*}} : tensor<8xf32>) {causal = #attn.causal<bottom_right>, mod_name = "alibi_cap"} : {{.*}} score_mod {
// CHECK: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: f32, %{{.*}}: tensor<8xf32>):
// CHECK: math.tanh
// CHECK: tensor.extract
// CHECK: attn.yield %{{.*}} : f32
// CHECK: } mask_mod {
// CHECK: attn.yield %{{.*}} : i1
// DECOMPOSE-LABEL: func @forward
// DECOMPOSE: linalg.generic
// DECOMPOSE: linalg.generic
// DECOMPOSE: %[[S:.*]] = arith.mulf %{{.*}}, %cst
// DECOMPOSE: %[[H:.*]] = linalg.index 1
// DECOMPOSE: math.tanh
// DECOMPOSE: tensor.extract %{{.*}}[%[[H]]] : tensor<8xf32>
// DECOMPOSE: arith.cmpi sgt
// DECOMPOSE: arith.remui
// DECOMPOSE: arith.select
// DECOMPOSE-NOT: attn.
func.func @forward(%q: tensor<2x8x77x64xbf16>, %k: tensor<2x2x90x64xbf16>, %v: tensor<2x2x90x64xbf16>, %slopes: tensor<8xf32>) -> tensor<2x8x77x64xbf16> {
  %o = attn.attention %q, %k, %v mod_operands(%slopes : tensor<8xf32>) {causal = #attn.causal<bottom_right>, mod_name = "alibi_cap"} : tensor<2x8x77x64xbf16>, tensor<2x2x90x64xbf16>, tensor<2x2x90x64xbf16> -> tensor<2x8x77x64xbf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %sl: tensor<8xf32>):
      %cap = arith.constant 30.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %t, %cap : f32
      %slope = tensor.extract %sl[%h] : tensor<8xf32>
      %d = arith.subi %i, %j : index
      %d64 = arith.index_cast %d : index to i64
      %df = arith.sitofp %d64 : i64 to f32
      %ad = math.absf %df : f32
      %bias = arith.mulf %slope, %ad : f32
      %r = arith.subf %y, %bias : f32
      attn.yield %r : f32
    } mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %sl: tensor<8xf32>):
      %c3 = arith.constant 3 : index
      %m = arith.remui %j, %c3 : index
      %c0 = arith.constant 0 : index
      %keep = arith.cmpi ne, %m, %c0 : index
      attn.yield %keep : i1
    }
  return %o : tensor<2x8x77x64xbf16>
}

// CHECK-LABEL: func @partial
// CHECK: attn.attention_partial {{.*}} {num_splits = 4 : i64} : {{.*}} mask_mod {
// DECOMPOSE-LABEL: func @partial
// DECOMPOSE: arith.cmpi ule
// DECOMPOSE-NOT: attn.
func.func @partial(%q: tensor<1x8x1x64xf16>, %k: tensor<1x2x300x64xf16>, %v: tensor<1x2x300x64xf16>) -> (tensor<4x1x8x1x64xf32>, tensor<4x1x8x1xf32>) {
  %po, %plse = attn.attention_partial %q, %k, %v {num_splits = 4 : i64} : tensor<1x8x1x64xf16>, tensor<1x2x300x64xf16>, tensor<1x2x300x64xf16> -> tensor<4x1x8x1x64xf32>, tensor<4x1x8x1xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c = arith.constant 100 : index
      %keep = arith.cmpi ule, %j, %c : index
      attn.yield %keep : i1
    }
  return %po, %plse : tensor<4x1x8x1x64xf32>, tensor<4x1x8x1xf32>
}

// CHECK-LABEL: func @grad
// CHECK: attn.attention_grad {{.*}} score_mod {
// DECOMPOSE-LABEL: func @grad
// DECOMPOSE: math.tanh
// DECOMPOSE: %[[T:.*]] = math.tanh
// DECOMPOSE: %[[T2:.*]] = arith.mulf %[[T]], %[[T]]
// DECOMPOSE: arith.subf %{{.*}}, %[[T2]]
// DECOMPOSE: arith.cmpf oeq
// DECOMPOSE: arith.select
// DECOMPOSE-NOT: attn.
func.func @grad(%q: tensor<1x4x33x32xf32>, %k: tensor<1x4x40x32xf32>, %v: tensor<1x4x40x32xf32>, %o: tensor<1x4x33x32xf32>, %do: tensor<1x4x33x32xf32>, %lse: tensor<1x4x33xf32>) -> (tensor<1x4x33x32xf32>, tensor<1x4x40x32xf32>, tensor<1x4x40x32xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<1x4x33x32xf32>, tensor<1x4x40x32xf32>, tensor<1x4x40x32xf32>, tensor<1x4x33x32xf32>, tensor<1x4x33x32xf32>, tensor<1x4x33xf32> -> tensor<1x4x33x32xf32>, tensor<1x4x40x32xf32>, tensor<1x4x40x32xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      %t = math.tanh %s : f32
      attn.yield %t : f32
    }
  return %dq, %dk, %dv : tensor<1x4x33x32xf32>, tensor<1x4x40x32xf32>, tensor<1x4x40x32xf32>
}

// A constant index and a constant yielded: attn-decompose's greedy rewrite
// hoists region constants out of the regions; their reads and yields take
// them where they are (the IR fuzzer's crash, seed 11).
// CHECK-LABEL: func @constant_index
// DECOMPOSE-LABEL: func @constant_index
// DECOMPOSE: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<2x8xf32>
// DECOMPOSE-NOT: attn.
func.func @constant_index(%q: tensor<1x8x16x32xf32>, %t: tensor<2x8xf32>) -> tensor<1x8x16x32xf32> {
  %o = attn.attention %q, %q, %q mod_operands(%t : tensor<2x8xf32>) : tensor<1x8x16x32xf32>, tensor<1x8x16x32xf32>, tensor<1x8x16x32xf32> -> tensor<1x8x16x32xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %x: tensor<2x8xf32>):
      %c1 = arith.constant 1 : index
      %e = tensor.extract %x[%c1, %h] : tensor<2x8xf32>
      %y = arith.addf %s, %e : f32
      attn.yield %y : f32
    } mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %x: tensor<2x8xf32>):
      %true = arith.constant true
      attn.yield %true : i1
    }
  return %o : tensor<1x8x16x32xf32>
}
