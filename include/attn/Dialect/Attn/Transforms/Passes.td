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
                           "math::MathDialect", "scf::SCFDialect",
                           "tensor::TensorDialect"];
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
    rest of a pipeline sees plain `linalg.generic`s. It takes
    `linalg.softmax` over float tensors only: an integer softmax or one on
    buffers is an error on the op, and nothing is rewritten.
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "math::MathDialect", "tensor::TensorDialect"];
}

def AttnRaisePass : Pass<"attn-raise"> {
  let summary = "Fuse matmul -> softmax -> matmul chains into attn.attention";
  let description = [{
    Finds attention spelled as two contractions around a softmax in linalg
    (named `linalg.matmul`, `linalg.batch_matmul` with or without transposing
    `indexing_maps`, contraction `linalg.generic`s, `linalg.softmax` or a
    written-out max / exp / sum / divide) or tosa (`tosa.matmul`,
    `tosa.reduce_max`, `tosa.exp`, `tosa.reduce_sum`, `tosa.reciprocal`, ...)
    IR and replaces the chain with one `attn.attention` computing the same
    values. It folds into the op what the chain computes around the
    contractions:

    - constant scales on Q, on K or on the scores into `scale`; an exp2
      softmax with log2(e) folded into its argument is recognised too;
    - an additive float mask added to the scaled scores, or a boolean mask
      selected to -inf, into the `mask` operand;
    - a mask computed from indices (`linalg.index` comparisons or constant
      index vectors) or folded to a constant that hides the keys after a causal diagonal into
      `causal` (top-left or bottom-right), and before a window into
      `window`, never into a materialised mask; a mask computed from
      tensors and constants (casts of boolean masks) is read from the
      tensor the chain computes it into;
    - the log-sum-exp softmax (and its log-sum-exp, when the chain returns
      it, from the op's LSE result), upstream's softmax decomposition (a max
      from a NaN fill with `arith.maxnumf`), keep-dim reductions, and the
      leftovers front ends do not clean up (x + 0, x * 1, a scale as
      `tosa.reciprocal` of a constant or a rank-0 f64 constant);
    - a softmax without the row max subtraction, or computed in f16/bf16:
      fused with a remark saying what changed (the fused op is more exact);
      `strict-softmax` leaves them unfused;
    - transposes of K, layouts (`[B, H, S, D]` or `[B, S, H, D]`) and
      batch/head reshapes (`tensor.collapse_shape` / `expand_shape`,
      `tosa.reshape`) into the operands' views; keys and values shared by
      every query head (multi-query attention) into one K/V head, and keys
      and values repeated or broadcast to the query heads (a broadcasting
      `linalg.generic`, `tosa.tile` of a unit dim) into grouped-query
      attention when query head h reads key/value head h / (Hq / Hkv);
    - f16/bf16 operands extended to f32 for the contractions: with a final
      truncation back to the narrow type the op works on the narrow
      operands; without one it works in f32 so that the result is unchanged.

    A chain is left alone, with its reason, when its softmax is not over the
    key axis, its second contraction does not sum over that axis, its scores
    or probabilities have another use, it spans several blocks, its shapes
    are dynamic or zero-sized, or anything else differs from
    `softmax(scale * Q K^T + mask) V`. With `report-unfused` the pass emits
    `remark: attn-raise: not fused: <reason>` on every such chain.

    The fused op yields 0 where the chain yields NaN (a query row whose
    scores are all -inf); every other value agrees up to rounding.

    Example: `attn-opt --attn-raise=report-unfused input.mlir`.
  }];
  let dependentDialects = ["attn::AttnDialect", "arith::ArithDialect",
                           "linalg::LinalgDialect", "tensor::TensorDialect"];
  let options = [
    Option<"reportUnfused", "report-unfused", "bool", /*default=*/"false",
           "Emit a remark with the reason on every candidate chain left "
           "unfused">,
    Option<"strictSoftmax", "strict-softmax", "bool", /*default=*/"false",
           "Leave unfused the chains whose fusion changes rounding or "
           "overflow: a softmax in f16/bf16, or one that does not subtract "
           "the row max (fused by default, with a remark)">
  ];
  let statistics = [
    Statistic<"numFused", "num-fused", "Number of chains fused into attn.attention">,
    Statistic<"numUnfused", "num-unfused", "Number of candidate chains left unfused">
  ];
}

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
