// RUN: attn-opt %s -split-input-file --attn-decompose-aggregates -verify-diagnostics | FileCheck %s
// RUN: not attn-opt %s -split-input-file --attn-to-llvm 2>&1 | FileCheck %s --check-prefix=LLVM

// attn-decompose-aggregates turns linalg.softmax into linalg.generics (max,
// exp and sum over the dimension, divide), what upstream's transform-dialect
// decomposition does. It takes softmax over float tensors only; anything
// else is an error on the op (integer elements crashed the decomposition,
// buffers gave invalid generics), also inside attn-to-llvm.

// CHECK-LABEL: func.func @float_softmax
// CHECK-NOT:     linalg.softmax
// CHECK:         linalg.generic
// CHECK:           arith.maxnumf
// CHECK:         linalg.generic
// CHECK:           math.exp
// CHECK:           arith.addf
// CHECK:         linalg.generic
// CHECK:           arith.divf
func.func @float_softmax(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %e = tensor.empty() : tensor<2x16xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<2x16xf32>) outs(%e : tensor<2x16xf32>) -> tensor<2x16xf32>
  return %s : tensor<2x16xf32>
}

// -----

// LLVM: error: 'linalg.softmax' op attn-decompose-aggregates: softmax needs a floating-point element type, got 'i32'
func.func @integer_softmax(%x: tensor<2x16xi32>) -> tensor<2x16xi32> {
  %e = tensor.empty() : tensor<2x16xi32>
  // expected-error @+1 {{'linalg.softmax' op attn-decompose-aggregates: softmax needs a floating-point element type, got 'i32'}}
  %s = linalg.softmax dimension(1) ins(%x : tensor<2x16xi32>) outs(%e : tensor<2x16xi32>) -> tensor<2x16xi32>
  return %s : tensor<2x16xi32>
}

// -----

func.func @buffer_softmax(%x: memref<2x16xf32>, %y: memref<2x16xf32>) {
  // expected-error @+1 {{'linalg.softmax' op attn-decompose-aggregates: softmax must be on ranked tensors, not buffers; got 'memref<2x16xf32>'}}
  linalg.softmax dimension(1) ins(%x : memref<2x16xf32>) outs(%y : memref<2x16xf32>)
  return
}
