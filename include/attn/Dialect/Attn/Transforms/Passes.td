//===- Passes.td - attn transformation passes --------------*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
#define ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnDecomposePass : Pass<"attn-decompose"> {
  let summary = "Decompose attn ops into naive linalg on tensors";
  let description = [{
    Rewrites every attn op into `linalg.generic` ops on tensors that spell
    out the reference semantics: the full `Sq x Sk` score tensor, the mask,
    a safe softmax (a fully masked row gives O = 0 and LSE = -inf, never NaN)
    and the second contraction; the split-KV ops and the gradients likewise.
    It is the definition the tiled lowering is tested against, not a fast
    path: it materialises `Sq x Sk` tensors.

    Example: `attn-opt --attn-decompose input.mlir`.
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "math::MathDialect", "tensor::TensorDialect"];
  let statistics = [
    Statistic<"numDecomposed", "num-decomposed", "Number of attn ops decomposed">
  ];
}

def AttnDecomposeAggregatesPass : Pass<"attn-decompose-aggregates"> {
  let summary = "Decompose aggregate linalg ops (linalg.softmax) into generics";
  let description = [{
    Front ends emit named aggregate ops such as `linalg.softmax` that no
    upstream pass lowers further (upstream decomposes them only through the
    transform dialect's `decompose_interface`). This pass applies
    `AggregatedOpInterface::decomposeOperation` to every such op so that the
    rest of a pipeline sees plain `linalg.generic`s.
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "math::MathDialect", "tensor::TensorDialect"];
}

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
