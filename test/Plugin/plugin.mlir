// The attn dialect and passes load into Debian's stock mlir-opt-22.
// RUN: mlir-opt %s --load-dialect-plugin=%attn_libs/AttnPlugin%shlibext --load-pass-plugin=%attn_libs/AttnPlugin%shlibext --pass-pipeline="builtin.module(attn-decompose)" | FileCheck %s
// RUN: mlir-opt %s --load-dialect-plugin=%attn_libs/AttnPlugin%shlibext --load-pass-plugin=%attn_libs/AttnPlugin%shlibext --pass-pipeline="builtin.module(attn-to-llvm)" | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func @attention
// CHECK-NOT: attn.
// CHECK: linalg.generic
// CHECK: math.exp
// LLVM-LABEL: llvm.func @attention
func.func @attention(%q: tensor<1x2x7x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x16xf32>) -> tensor<1x2x7x16xf32> {
  %o = attn.attention %q, %k, %v : tensor<1x2x7x16xf32>, tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32> -> tensor<1x2x7x16xf32>
  return %o : tensor<1x2x7x16xf32>
}
