//===- DecomposeAggregates.cpp - linalg aggregate ops to generics ---------===//
//
// Upstream decomposes aggregate linalg ops (linalg.softmax) only through the
// transform dialect; this pass does the same for pass pipelines.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNDECOMPOSEAGGREGATESPASS
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

/// Checks what upstream's decomposition of `op` assumes without checking:
/// a linalg.softmax on float tensors (its generics compute max, exp and
/// divide on the element type, and take the result as a tensor).
static LogicalResult checkDecomposable(linalg::AggregatedOpInterface op) {
  auto softmax = dyn_cast<linalg::SoftmaxOp>(op.getOperation());
  if (!softmax)
    return success();
  ShapedType input = softmax.getInputOperandType();
  if (!isa<RankedTensorType>(input) ||
      !isa<RankedTensorType>(softmax.getOutputOperandType()))
    return softmax.emitOpError("attn-decompose-aggregates: softmax must be on "
                               "ranked tensors, not buffers; got ")
           << input;
  if (!isa<FloatType>(input.getElementType()))
    return softmax.emitOpError("attn-decompose-aggregates: softmax needs a "
                               "floating-point element type, got ")
           << input.getElementType();
  return success();
}

namespace {
struct AttnDecomposeAggregatesPass
    : public attn::impl::AttnDecomposeAggregatesPassBase<
          AttnDecomposeAggregatesPass> {
  void runOnOperation() override {
    SmallVector<linalg::AggregatedOpInterface> aggregates;
    getOperation()->walk(
        [&](linalg::AggregatedOpInterface op) { aggregates.push_back(op); });
    // Every op is checked before any is rewritten: all the errors at once,
    // and no half-decomposed IR.
    bool valid = true;
    for (linalg::AggregatedOpInterface op : aggregates)
      valid &= succeeded(checkDecomposable(op));
    if (!valid)
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    for (linalg::AggregatedOpInterface op : aggregates) {
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> replacements =
          op.decomposeOperation(rewriter);
      if (failed(replacements)) {
        op->emitError("could not decompose this aggregate op");
        return signalPassFailure();
      }
      rewriter.replaceOp(op, *replacements);
    }
  }
};
} // namespace
