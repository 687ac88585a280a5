//===- AttnTilePass.cpp - the attn-tile pass and its tile sizes -----------===//

#include "TileCommon.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNTILEPASS
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

/// The buffers an op's results are materialized in, when every result's
/// one use is a `bufferization.materialize_in_destination` into a memref
/// (MLIR's destination-passing idiom); those uses are erased. Empty
/// otherwise.
static SmallVector<Value> takeDestinations(RewriterBase &rewriter,
                                           Operation *op) {
  if (!isa<AttentionOp, AttentionPartialOp, CombineOp, AttentionGradOp>(op) ||
      op->getNumResults() == 0)
    return {};
  SmallVector<bufferization::MaterializeInDestinationOp> uses;
  for (Value result : op->getResults()) {
    if (!result.hasOneUse())
      return {};
    auto use = dyn_cast<bufferization::MaterializeInDestinationOp>(
        *result.getUsers().begin());
    if (!use || !isa<MemRefType>(use.getDest().getType()))
      return {};
    uses.push_back(use);
  }
  SmallVector<Value> destinations;
  for (auto use : uses) {
    destinations.push_back(use.getDest());
    rewriter.eraseOp(use);
  }
  return destinations;
}

LogicalResult attn::tileAttnOp(RewriterBase &rewriter, Operation *op,
                               const AttnTileConfig &givenConfig) {
  AttnTileConfig config = givenConfig;
  if (config.destinations.empty())
    config.destinations = takeDestinations(rewriter, op);
  if (!config.destinations.empty() &&
      (config.destinations.size() != op->getNumResults() || !op->use_empty()))
    return op->emitOpError("attn-tile: destination buffers are for ops with "
                           "unused results, one per result");
  if (config.gradNest &&
      (!isa<AttentionGradOp>(op) || config.destinations.empty() ||
       !config.rowStats || config.accumulatesDq() != bool(config.dqAccum) ||
       config.orderedDq != bool(config.dqTurns)))
    return op->emitOpError("attn-tile: a single gradient nest is for "
                           "attention_grad ops with destination buffers, a "
                           "row statistics buffer and, in the modes that "
                           "accumulate dQ (only), a dQ accumulator (and, "
                           "ordered, turn counters)");
  // A block mask's blocks are whole tiles, so that a query tile lies in
  // one query block and a key tile in one key block.
  if (BlockMask blocks = getBlockMask(op);
      blocks && (blocks.blockQ % config.sizes.blockQ ||
                 blocks.blockK % config.sizes.blockKV))
    return op->emitOpError("has a block mask of ")
           << blocks.blockQ << " x " << blocks.blockK
           << " blocks, which tiles of block-q = " << config.sizes.blockQ
           << " and block-kv = " << config.sizes.blockKV
           << " do not divide; choose tiles that divide the blocks";
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<AttentionOp>([&](AttentionOp op) {
        return tile::tileAttention(rewriter, op, config);
      })
      .Case<AttentionPartialOp>([&](AttentionPartialOp op) {
        return tile::tileAttentionPartial(rewriter, op, config);
      })
      .Case<CombineOp>(
          [&](CombineOp op) { return tile::tileCombine(rewriter, op, config); })
      .Case<AttentionGradOp>([&](AttentionGradOp op) {
        return tile::tileAttentionGrad(rewriter, op, config);
      })
      .Default([](Operation *op) {
        return op->emitOpError("is not an attn op that attn-tile lowers");
      });
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct AttnTilePass : public attn::impl::AttnTilePassBase<AttnTilePass> {
  using Base::Base;

  /// The memory space attribute of the tile buffers (null: default).
  FailureOr<Attribute> parseMemorySpace(Operation *root) {
    StringRef text = StringRef(memorySpace).trim();
    if (text.empty() || text == "default")
      return Attribute();
    Attribute attr;
    {
      // The parser's and the type's own diagnostics would point nowhere
      // useful; the error below says what is wrong.
      ScopedDiagnosticHandler silence(&getContext(),
                                      [](Diagnostic &) { return success(); });
      attr = parseAttribute(text, &getContext());
      auto emitError = [&] { return mlir::emitError(root->getLoc()); };
      if (attr && !MemRefType::getChecked(emitError, {1},
                                          Float32Type::get(&getContext()),
                                          MemRefLayoutAttrInterface(), attr))
        attr = {};
    }
    if (!attr) {
      root->emitError() << "attn-tile: memory-space must be a memref memory "
                           "space attribute (e.g. "
                           "#gpu.address_space<workgroup> or 3) or 'default', "
                           "got '"
                        << memorySpace << "'";
      return failure();
    }
    return attr;
  }

  void runOnOperation() override {
    Operation *root = getOperation();
    // Options are checked where they enter: within these ranges no size the
    // cost model and the loops compute from them overflows.
    bool badOption = false;
    auto checkRange = [&](StringRef name, int64_t value, int64_t lo, int64_t hi,
                          StringRef meaning) {
      if (value >= lo && value <= hi)
        return;
      root->emitError() << "attn-tile: " << name << " = " << value
                        << " is out of range [" << lo << ", " << hi << "] ("
                        << meaning << ")";
      badOption = true;
    };
    checkRange("block-q", blockQ, 0, kMaxTileBlock, "rows; 0: automatic");
    checkRange("block-kv", blockKV, 0, kMaxTileBlock, "keys; 0: automatic");
    checkRange("stages", stages, 0, kMaxTileStages, "0: automatic");
    checkRange("warps", warps, 0, kMaxTileWarps, "0: automatic");
    checkRange("smem-budget", smemBudget, 1, kMaxSmemBudget, "bytes");
    checkRange("value-blocks", valueBlocks, 0, kMaxValueBlocks,
               "column blocks of V and O, or of dQ, dK and dV; 0: automatic");
    if (!(sparsity >= 0.0 && sparsity < 1.0)) {
      root->emitError() << "attn-tile: sparsity = " << sparsity
                        << " is out of range [0, 1) (the fraction of the "
                           "blocks a block mask leaves out)";
      badOption = true;
    }
    if (orderedDq && !deterministic) {
      root->emitError() << "attn-tile: ordered-dq is a deterministic mode; "
                           "it cannot go with deterministic=false";
      badOption = true;
    }
    if (badOption)
      return signalPassFailure();
    FailureOr<Attribute> space = parseMemorySpace(root);
    if (failed(space))
      return signalPassFailure();
    if (target != "sm_80" && target != "sm_90a") {
      root->emitError() << "attn-tile: target must be sm_80 or sm_90a, got '"
                        << target << "'";
      return signalPassFailure();
    }

    SmallVector<Operation *> ops;
    bool badDim = false;
    root->walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionPartialOp, CombineOp, AttentionGradOp>(op))
        ops.push_back(op);
      // The dim ops' verifiers accept a constant index outside the shape,
      // on which upstream canonicalization patterns that the passes after
      // this one run crash (MLIR 22): refused here, where the IR enters.
      std::optional<int64_t> index;
      Type shaped;
      if (auto dim = dyn_cast<tensor::DimOp>(op)) {
        index = dim.getConstantIndex();
        shaped = dim.getSource().getType();
      } else if (auto dim = dyn_cast<memref::DimOp>(op)) {
        index = dim.getConstantIndex();
        shaped = dim.getSource().getType();
      }
      auto ranked = dyn_cast_if_present<ShapedType>(shaped);
      if (index && ranked && ranked.hasRank() &&
          (*index < 0 || *index >= ranked.getRank())) {
        op->emitOpError() << "has dimension index " << *index
                          << ", outside the rank " << ranked.getRank()
                          << " of its operand";
        badDim = true;
      }
    });
    if (badDim)
      return signalPassFailure();

    IRRewriter rewriter(&getContext());
    bool anyFailed = false;
    for (Operation *op : ops) {
      AttnTileRequest request{blockQ,
                              blockKV,
                              stages,
                              warps,
                              smemBudget,
                              target == "sm_90a" ? TileTarget::Sm90a
                                                 : TileTarget::Sm80,
                              /*persistent=*/false,
                              valueBlocks,
                              deterministic,
                              orderedDq};
      FailureOr<AttnTileSizes> sizes = chooseAttnTileSizes(op, request);
      if (failed(sizes)) {
        anyFailed = true;
        continue;
      }
      AttnTileConfig config{*sizes, *space, deterministic, orderedDq};
      config.sparsity = sparsity;
      if (report)
        op->emitRemark() << describeAttnTiling(op, config);
      rewriter.setInsertionPoint(op);
      if (failed(tileAttnOp(rewriter, op, config))) {
        anyFailed = true;
        continue;
      }
      ++numTiled;
      maxBlockQ.updateMax(sizes->blockQ);
      maxBlockKV.updateMax(sizes->blockKV);
      maxWorkgroupBytes.updateMax(sizes->workgroupBytes);
    }
    if (anyFailed)
      signalPassFailure();
  }
};
} // namespace
