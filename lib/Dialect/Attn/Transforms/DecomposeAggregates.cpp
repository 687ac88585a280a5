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

namespace {
struct AttnDecomposeAggregatesPass
    : public attn::impl::AttnDecomposeAggregatesPassBase<
          AttnDecomposeAggregatesPass> {
  void runOnOperation() override {
    SmallVector<linalg::AggregatedOpInterface> aggregates;
    getOperation()->walk(
        [&](linalg::AggregatedOpInterface op) { aggregates.push_back(op); });
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
