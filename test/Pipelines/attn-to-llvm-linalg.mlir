// RUN: attn-opt %s --attn-to-llvm \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_lib_dir/libmlir_runner_utils%shlibext,%mlir_lib_dir/libmlir_c_runner_utils%shlibext \
// RUN: | FileCheck %s

// attn-to-llvm on attention as a linalg front end writes it, with no attn op:
// transpose K, batch_matmul, scale (arith on tensors), linalg.softmax,
// batch_matmul, with batch and heads folded into one dimension.

func.func private @printMemrefF32(memref<*xf32>)

func.func @attention(%q: tensor<2x2x2xf32>, %k: tensor<2x3x2xf32>, %v: tensor<2x3x2xf32>) -> tensor<2x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant dense<0.5> : tensor<2x2x3xf32>
  %kte = tensor.empty() : tensor<2x2x3xf32>
  %kt = linalg.transpose ins(%k : tensor<2x3x2xf32>) outs(%kte : tensor<2x2x3xf32>) permutation = [0, 2, 1]
  %se = tensor.empty() : tensor<2x2x3xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
  %qk = linalg.batch_matmul ins(%q, %kt : tensor<2x2x2xf32>, tensor<2x2x3xf32>) outs(%sz : tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
  %s = arith.mulf %qk, %scale : tensor<2x2x3xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<2x2x3xf32>) outs(%se : tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
  %oe = tensor.empty() : tensor<2x2x2xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x2x3xf32>, tensor<2x3x2xf32>) outs(%oz : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  return %o : tensor<2x2x2xf32>
}

// Scaled scores, by head and query row:
//   head 0, row 0: [0, 0, 0]      -> O = mean(V) = [4, 5]
//   head 0, row 1: [0, 50, 0]     -> O = v1 = [4, 8]
//   head 1, row 0: [0, 1, -100]   -> O = [1, e] / (1 + e) = [0.268941, 0.731059]
//   head 1, row 1: [0, -1, 100]   -> O = v2 = [6, 6]
func.func @main() {
  %q = arith.constant dense<[[[0.0, 0.0], [100.0, 0.0]],
                             [[0.0, 2.0], [0.0, -2.0]]]> : tensor<2x2x2xf32>
  %k = arith.constant dense<[[[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]],
                             [[0.0, 0.0], [0.0, 1.0], [0.0, -100.0]]]> : tensor<2x3x2xf32>
  %v = arith.constant dense<[[[1.0, 2.0], [4.0, 8.0], [7.0, 5.0]],
                             [[1.0, 0.0], [0.0, 1.0], [6.0, 6.0]]]> : tensor<2x3x2xf32>
  %o = call @attention(%q, %k, %v) : (tensor<2x2x2xf32>, tensor<2x3x2xf32>, tensor<2x3x2xf32>) -> tensor<2x2x2xf32>
  %m = bufferization.to_buffer %o : tensor<2x2x2xf32> to memref<2x2x2xf32>
  %u = memref.cast %m : memref<2x2x2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
// CHECK:      sizes = [2, 2, 2]
// CHECK-NEXT: [4, 5],
// CHECK-NEXT: [4, 8]],
// CHECK-NEXT: [0.268941, 0.731059],
// CHECK-NEXT: [6, 6]]]
