// RUN: attn-opt %s --attn-to-llvm | FileCheck %s
// RUN: attn-opt %s --attn-to-llvm="decompose" | FileCheck %s
// RUN: attn-opt %s --pass-pipeline="builtin.module(attn-nested-modules{pipeline=builtin.module(attn-decompose)})" | FileCheck %s --check-prefix=NESTED
// RUN: not attn-opt %s --pass-pipeline="builtin.module(attn-nested-modules{pipeline=func.func(canonicalize)})" 2>&1 | FileCheck %s --check-prefix=NESTED-ANCHOR
// RUN: not attn-opt %s --pass-pipeline="builtin.module(func.func(attn-to-llvm))" 2>&1 | FileCheck %s --check-prefix=LLVM-ANCHOR
// RUN: not attn-opt %s --pass-pipeline="builtin.module(attn-nested-modules{pipeline=func.func(attn-to-llvm)})" 2>&1 | FileCheck %s --check-prefix=LLVM-ANCHOR
// RUN: not attn-opt %s --pass-pipeline="builtin.module(func.func(attn-to-ptx))" 2>&1 | FileCheck %s --check-prefix=PTX-ANCHOR

// attn-to-llvm lowers the functions of nested builtin.modules too, each
// module on its own and the innermost first (before, one-shot
// bufferization and the function passes saw only the outer module's
// functions: those of a nested module stayed as they were and the
// conversions failed on them).

// attn-nested-modules, its first stage, runs a pipeline on the nested
// modules only; the outer one is left to the rest of attn-to-llvm.
// NESTED-LABEL: module @outer
// NESTED:         module @inner {
// NESTED:           module @innermost {
// NESTED:             func.func @attention_innermost(
// NESTED-NOT:           attn.attention
// NESTED:           func.func @attention_inner(
// NESTED-NOT:         attn.attention
// NESTED:         func.func @attention_outer(
// NESTED-NEXT:      attn.attention

// The pipelines run on modules: anchored on another op, they get an error
// (not an abort, nor a module pipeline run on a module as if it were a
// function).
// NESTED-ANCHOR: error: attn-nested-modules: 'pipeline' must run on 'builtin.module' (or 'any'), got a pipeline on 'func.func'
// LLVM-ANCHOR: the 'attn-to-llvm' pipeline runs on 'builtin.module', not nested in 'func.func'
// LLVM-ANCHOR-NOT: LLVM ERROR
// PTX-ANCHOR: the 'attn-to-ptx' pipeline runs on 'builtin.module', not nested in 'func.func'
// PTX-ANCHOR-NOT: LLVM ERROR

// CHECK-LABEL: module @outer
// CHECK:         module @inner {
// CHECK:           module @innermost {
// CHECK:             llvm.func @attention_innermost(
// CHECK:           }
// CHECK:           llvm.func @attention_inner(
// CHECK:         }
// CHECK:         llvm.func @attention_outer(
// CHECK-NOT:     func.func
// CHECK-NOT:     attn.
// CHECK-NOT:     linalg.
// CHECK-NOT:     bufferization.
module @outer {
  module @inner {
    module @innermost {
      func.func @attention_innermost(%q: tensor<1x2x16x16xf32>, %k: tensor<1x2x16x16xf32>, %v: tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32> {
        %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32> -> tensor<1x2x16x16xf32>
        return %o : tensor<1x2x16x16xf32>
      }
    }
    func.func @attention_inner(%q: tensor<1x2x16x16xf16>, %k: tensor<1x2x16x16xf16>, %v: tensor<1x2x16x16xf16>) -> tensor<1x2x16x16xf16> {
      %o = attn.attention %q, %k, %v : tensor<1x2x16x16xf16>, tensor<1x2x16x16xf16>, tensor<1x2x16x16xf16> -> tensor<1x2x16x16xf16>
      return %o : tensor<1x2x16x16xf16>
    }
  }
  func.func @attention_outer(%q: tensor<1x2x16x16xf32>, %k: tensor<1x2x16x16xf32>, %v: tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32> {
    %o = attn.attention %q, %k, %v : tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32> -> tensor<1x2x16x16xf32>
    return %o : tensor<1x2x16x16xf32>
  }
}
