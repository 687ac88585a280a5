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

//===----------------------------------------------------------------------===//
// Tile sizes
//===----------------------------------------------------------------------===//

namespace {
/// What the tile sizes of one op depend on.
struct TileShape {
  int64_t headDim = 0, valueDim = 0, elementBytes = 0;
  /// Rows a query tile can hold at most (for split-KV, the packed (query
  /// head, query) rows of a group) and keys one loop can see at most, when
  /// static.
  std::optional<int64_t> rows, keys;
  /// Whether the dO tile joins Q, K and V in workgroup memory.
  bool gradient = false;
};
} // namespace

static std::optional<int64_t> staticDim(int64_t d) {
  if (ShapedType::isDynamic(d))
    return std::nullopt;
  return d;
}

template <typename OpTy>
static TileShape getTileShape(OpTy op) {
  AttentionDims d =
      getAttentionDims(op.getLayout(), op.getQuery().getType(),
                       op.getKey().getType(), op.getValue().getType());
  TileShape s;
  s.headDim = d.headDim;
  s.valueDim = d.valueDim;
  s.elementBytes =
      op.getQuery().getType().getElementType().getIntOrFloatBitWidth() / 8;
  s.rows = staticDim(d.querySeq);
  s.keys = staticDim(d.keySeq);
  return s;
}

/// The tile shape of an op with tiles; nullopt for attn.combine.
static std::optional<TileShape> getTileShape(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<TileShape>>(op)
      .Case<AttentionOp>([](AttentionOp op) { return getTileShape(op); })
      .Case<AttentionPartialOp>([](AttentionPartialOp op) {
        TileShape s = getTileShape(op);
        AttentionDims d =
            getAttentionDims(op.getLayout(), op.getQuery().getType(),
                             op.getKey().getType(), op.getValue().getType());
        if (s.rows)
          s.rows = *s.rows * d.groupSize();
        if (s.keys)
          s.keys = llvm::divideCeil(*s.keys, op.getNumSplits());
        return s;
      })
      .Case<AttentionGradOp>([](AttentionGradOp op) {
        TileShape s = getTileShape(op);
        s.gradient = true;
        return s;
      })
      .Default([](Operation *) { return std::nullopt; });
}

static int64_t workgroupBytes(const TileShape &s, int64_t blockQ,
                              int64_t blockKV) {
  int64_t qSide = blockQ * (s.headDim + (s.gradient ? s.valueDim : 0));
  int64_t kvSide = blockKV * (s.headDim + s.valueDim);
  return (qSide + kvSide) * s.elementBytes;
}

int64_t attn::getAttnTileWorkgroupBytes(Operation *op, int64_t blockQ,
                                        int64_t blockKV) {
  std::optional<TileShape> s = getTileShape(op);
  return s ? workgroupBytes(*s, blockQ, blockKV) : 0;
}

FailureOr<AttnTileSizes> attn::chooseAttnTileSizes(Operation *op,
                                                   int64_t blockQ,
                                                   int64_t blockKV,
                                                   int64_t smemBudget) {
  std::optional<TileShape> shape = getTileShape(op);
  if (!shape)
    return AttnTileSizes();
  const TileShape &s = *shape;
  constexpr int64_t kMinBlock = 16;

  // FlashAttention-2's starting points (sm80): 128 query rows (64 for
  // gradients, which hold four tiles), 128 keys for head dims up to 64 and
  // 64 beyond; a tile never needs to exceed the (power-of-two-rounded) rows
  // or keys of a static shape.
  int64_t bq = blockQ, bkv = blockKV;
  if (!bq) {
    bq = s.gradient ? 64 : 128;
    if (s.rows)
      bq = std::min(bq, std::max<int64_t>(kMinBlock,
                                          llvm::PowerOf2Ceil(*s.rows)));
  }
  if (!bkv) {
    bkv = s.headDim <= 64 ? 128 : 64;
    if (s.keys)
      bkv = std::min(bkv, std::max<int64_t>(kMinBlock,
                                            llvm::PowerOf2Ceil(*s.keys)));
  }
  // Halve the larger automatic tile (the key tile on a tie) until the tiles
  // fit: d = 128 in f16 gets 128 x 64 from 64 KiB, 64 x 64 from 48 KiB.
  while (workgroupBytes(s, bq, bkv) > smemBudget) {
    bool canQ = !blockQ && bq > kMinBlock, canKV = !blockKV && bkv > kMinBlock;
    if (canQ && (bq > bkv || !canKV))
      bq /= 2;
    else if (canKV)
      bkv /= 2;
    else
      break;
  }
  int64_t bytes = workgroupBytes(s, bq, bkv);
  if (bytes > smemBudget) {
    InFlightDiagnostic diag = op->emitError();
    diag << "tiles of block-q = " << bq << " and block-kv = " << bkv
         << " need " << bytes << " bytes of workgroup memory ("
         << (s.gradient ? "Q, dO, K, V" : "Q, K, V") << " tiles, D = "
         << s.headDim << ", Dv = " << s.valueDim << ", " << s.elementBytes
         << "-byte elements), more than smem-budget = " << smemBudget;
    if (blockQ && blockKV)
      diag << "; choose smaller block-q/block-kv or raise smem-budget";
    else
      diag << "; no smaller automatic tile fits: raise smem-budget";
    return failure();
  }
  return AttnTileSizes{bq, bkv, bytes};
}

LogicalResult attn::tileAttnOp(RewriterBase &rewriter, Operation *op,
                               const AttnTileConfig &config) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<AttentionOp>([&](AttentionOp op) {
        return tile::tileAttention(rewriter, op, config);
      })
      .Case<AttentionPartialOp>([&](AttentionPartialOp op) {
        return tile::tileAttentionPartial(rewriter, op, config);
      })
      .Case<CombineOp>(
          [&](CombineOp op) { return tile::tileCombine(rewriter, op); })
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
    if (blockQ < 0 || blockKV < 0 || smemBudget <= 0) {
      root->emitError() << "attn-tile: block-q and block-kv must be >= 0 (0: "
                           "automatic) and smem-budget > 0, got block-q = "
                        << static_cast<int64_t>(blockQ) << ", block-kv = "
                        << static_cast<int64_t>(blockKV) << ", smem-budget = "
                        << static_cast<int64_t>(smemBudget);
      return signalPassFailure();
    }
    FailureOr<Attribute> space = parseMemorySpace(root);
    if (failed(space))
      return signalPassFailure();

    SmallVector<Operation *> ops;
    root->walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionPartialOp, CombineOp, AttentionGradOp>(op))
        ops.push_back(op);
    });

    IRRewriter rewriter(&getContext());
    bool anyFailed = false;
    for (Operation *op : ops) {
      FailureOr<AttnTileSizes> sizes =
          chooseAttnTileSizes(op, blockQ, blockKV, smemBudget);
      if (failed(sizes)) {
        anyFailed = true;
        continue;
      }
      AttnTileConfig config{*sizes, *space, deterministic};
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
