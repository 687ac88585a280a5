//===- TileForward.cpp - attention and split-KV attention as tiled loops --===//
//
// FlashAttention-2's forward pass: a query tile stays in workgroup memory
// while key/value tiles stream past it; the running row max m, the running
// row sum l and the unnormalised f32 accumulator are updated once per
// key/value tile and the output is divided by l once, after the loop.
//
//===----------------------------------------------------------------------===//

#include "TileCommon.h"

#include "mlir/IR/PatternMatch.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::tile;


namespace {
/// The buffers of one query tile. Q, K and V live in the configured memory
/// space (workgroup memory on GPUs); the rest is f32 state that a GPU keeps
/// in registers.
struct ForwardTiles {
  Value q, k, v;
  /// Scores S, then probabilities P, of the current key/value tile.
  Value s;
  /// Running max, running sum and unnormalised output of each query row.
  Value m, l, acc;
  /// Per key/value tile: the new max and the rescale factor exp(m - m_new).
  Value mNew, alpha;
};
} // namespace

/// Allocates the tiles at the top of the loop nest's body and starts the
/// softmax state at m = -inf, l = 0, acc = 0.
static ForwardTiles allocForwardTiles(OpBuilder &b, Location loc,
                                      const Problem &p,
                                      const AttnTileConfig &config) {
  int64_t br = config.sizes.blockQ, bc = config.sizes.blockKV;
  int64_t d = p.dims.headDim, dv = p.dims.valueDim;
  Type f32 = b.getF32Type();
  ForwardTiles t;
  t.q = allocTile(b, loc, {br, d}, p.elementType, config.memorySpace);
  t.k = allocTile(b, loc, {bc, d}, p.elementType, config.memorySpace);
  t.v = allocTile(b, loc, {bc, dv}, p.elementType, config.memorySpace);
  t.s = allocTile(b, loc, {br, bc}, f32);
  t.m = allocTile(b, loc, {br}, f32);
  t.l = allocTile(b, loc, {br}, f32);
  t.acc = allocTile(b, loc, {br, dv}, f32);
  t.mNew = allocTile(b, loc, {br}, f32);
  t.alpha = allocTile(b, loc, {br}, f32);
  fill(b, loc, t.m, -std::numeric_limits<double>::infinity());
  fill(b, loc, t.l, 0.0);
  fill(b, loc, t.acc, 0.0);
  return t;
}

/// Folds the probabilities of the score tile into the running state
/// (FlashAttention-2 order): m_new = max(m, rowmax S), alpha =
/// exp(m - m_new), P = exp(S - m_new), l = alpha l + rowsum P,
/// acc = alpha acc + P V.
static void onlineSoftmaxStep(OpBuilder &b, Location loc,
                              const ForwardTiles &t) {
  MLIRContext *ctx = b.getContext();
  AffineExpr r, c, e;
  bindDims(ctx, r, c);
  AffineMap rc = AffineMap::get(2, 0, {r, c}, ctx);
  AffineMap rOf2 = AffineMap::get(2, 0, {r}, ctx);
  AffineMap id1 = b.getMultiDimIdentityMap(1);

  linalg::CopyOp::create(b, loc, ValueRange{t.m}, ValueRange{t.mNew});
  generic(b, loc, t.s, t.mNew, {rc, rOf2}, {par, red},
          [](OpBuilder &b, Location loc, ValueRange a) {
            linalg::YieldOp::create(
                b, loc, Value(arith::MaximumFOp::create(b, loc, a[1], a[0])));
          });

  // A row that has seen no visible key yet has m = -inf and l = acc = 0:
  // alpha = 0 keeps it that way without computing exp(-inf - -inf).
  generic(b, loc, t.mNew, ValueRange{t.m, t.alpha}, {id1, id1, id1}, {par},
          [](OpBuilder &b, Location loc, ValueRange a) {
            Value mNew = a[0], mOld = a[1];
            Value fresh = arith::CmpFOp::create(
                b, loc, arith::CmpFPredicate::OEQ, mOld, negInf(b, loc));
            Value alpha = math::ExpOp::create(
                b, loc, arith::SubFOp::create(b, loc, mOld, mNew));
            alpha = arith::SelectOp::create(b, loc, fresh,
                                            constF32(b, loc, 0.0), alpha);
            linalg::YieldOp::create(b, loc, ValueRange{mNew, alpha});
          });

  generic(b, loc, t.m, t.s, {rOf2, rc}, {par, par},
          [](OpBuilder &b, Location loc, ValueRange a) {
            Value shifted =
                arith::SubFOp::create(b, loc, a[1], safeMax(b, loc, a[0]));
            linalg::YieldOp::create(
                b, loc, Value(math::ExpOp::create(b, loc, shifted)));
          });

  auto scaleBy = [](OpBuilder &b, Location loc, ValueRange a) {
    linalg::YieldOp::create(b, loc,
                            Value(arith::MulFOp::create(b, loc, a[1], a[0])));
  };
  generic(b, loc, t.alpha, t.l, {id1, id1}, {par}, scaleBy);
  generic(b, loc, t.s, t.l, {rc, rOf2}, {par, red},
          [](OpBuilder &b, Location loc, ValueRange a) {
            linalg::YieldOp::create(
                b, loc, Value(arith::AddFOp::create(b, loc, a[1], a[0])));
          });
  generic(b, loc, t.alpha, t.acc, {rOf2, b.getMultiDimIdentityMap(2)},
          {par, par}, scaleBy);
  // Loop dims (r, e, j): acc[r, e] += P[r, j] V[j, e].
  AffineExpr j;
  bindDims(ctx, r, e, j);
  contract(b, loc, t.s, AffineMap::get(3, 0, {r, j}, ctx), t.v,
           AffineMap::get(3, 0, {j, e}, ctx), t.acc,
           AffineMap::get(3, 0, {r, e}, ctx));
}

/// The sequential loop over the key/value tiles of keys [jBegin, jEnd) of
/// key/value head `kvHead`: keys outside are never read, and the last tile
/// copies only the keys before jEnd (the rest of it is zero and masked).
static void buildKeyValueLoop(OpBuilder &b, Location loc, const Problem &p,
                              const ForwardTiles &t, const RowTile &rows,
                              Value kvHead, Value jBegin, Value jEnd,
                              int64_t blockKV) {
  OpBuilder::InsertionGuard guard(b);
  IndexMath ix{b, loc};
  Value j0 = beginFor(b, loc, jBegin, jEnd, ix.c(blockKV));
  Value cols = ix.min(ix.c(blockKV), ix.sub(jEnd, j0));
  loadRows(b, loc,
           seqRows(b, loc, p.key, p.layout, rows.batch, kvHead, j0, cols), t.k,
           cols, 0.0);
  loadRows(b, loc,
           seqRows(b, loc, p.value, p.layout, rows.batch, kvHead, j0, cols),
           t.v, cols, 0.0);
  buildScoreTile(b, loc, p, rows, t.q, t.k, t.s, j0, jEnd);
  onlineSoftmaxStep(b, loc, t);
}

/// O = acc / l, or 0 on a row that saw no key.
static Value normalised(OpBuilder &b, Location loc, Value acc, Value l) {
  Value zero = constF32(b, loc, 0.0);
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, zero);
  Value o = arith::DivFOp::create(b, loc, acc, l);
  return arith::SelectOp::create(b, loc, empty, zero, o);
}

/// LSE = m + log l: -inf on a row that saw no key (l = 0, m = -inf).
static Value logSumExp(OpBuilder &b, Location loc, Value m, Value l) {
  return arith::AddFOp::create(b, loc, safeMax(b, loc, m),
                               math::LogOp::create(b, loc, l));
}

LogicalResult tile::tileAttention(RewriterBase &rewriter, AttentionOp op,
                                  const AttnTileConfig &config) {
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Problem p = getProblem(b, loc, op);
  const AttentionDims &d = p.dims;
  IndexMath ix{b, loc};
  int64_t br = config.sizes.blockQ;

  Value hq = ix.c(d.queryHeads);
  SmallVector<Value> oSizes = {p.batch, hq, p.querySeq, ix.c(d.valueDim)};
  if (p.layout == Layout::BSHD)
    std::swap(oSizes[1], oSizes[2]);
  Value out = allocResult(b, loc, op.getOutput().getType(), oSizes);
  Value lse;
  if (op.getLse())
    lse = allocResult(b, loc, op.getLse().getType(), {p.batch, hq, p.querySeq});

  {
    OpBuilder::InsertionGuard guard(b);
    RowTile rows = beginQueryTileForall(b, loc, p, br);
    Value batch = rows.batch, head = rows.head, q0 = rows.rowBegin;
    ForwardTiles t = allocForwardTiles(b, loc, p, config);
    loadRows(b, loc,
             seqRows(b, loc, p.query, p.layout, batch, head, q0, rows.rows),
             t.q, rows.rows, 0.0);

    auto [iLo, iHi] = rows.queryRange(ix, p);
    auto [jBegin, jEnd] = visibleKeys(ix, p, iLo, iHi);
    Value kvHead = ix.div(head, ix.c(d.groupSize()));
    buildKeyValueLoop(b, loc, p, t, rows, kvHead, jBegin, jEnd,
                      config.sizes.blockKV);

    AffineExpr r, e;
    bindDims(ctx, r, e);
    AffineMap id2 = b.getMultiDimIdentityMap(2);
    generic(b, loc,
            {leadingRows(b, loc, t.acc, rows.rows),
             leadingRows(b, loc, t.l, rows.rows)},
            seqRows(b, loc, out, p.layout, batch, head, q0, rows.rows),
            {id2, AffineMap::get(2, 0, {r}, ctx), id2}, {par, par},
            [&](OpBuilder &b, Location loc, ValueRange a) {
              linalg::YieldOp::create(
                  b, loc,
                  fromF32(b, loc, normalised(b, loc, a[0], a[1]),
                          p.elementType));
            });
    if (lse) {
      AffineMap id1 = b.getMultiDimIdentityMap(1);
      generic(b, loc,
              {leadingRows(b, loc, t.m, rows.rows),
               leadingRows(b, loc, t.l, rows.rows)},
              statRows(b, loc, lse, batch, head, q0, rows.rows),
              {id1, id1, id1}, {par},
              [](OpBuilder &b, Location loc, ValueRange a) {
                linalg::YieldOp::create(b, loc, logSumExp(b, loc, a[0], a[1]));
              });
    }
  }

  replaceWithOutputAndLse(rewriter, loc, op, out, lse);
  return success();
}

LogicalResult tile::tileAttentionPartial(RewriterBase &rewriter,
                                         AttentionPartialOp op,
                                         const AttnTileConfig &config) {
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  Problem p = getProblem(b, loc, op);
  const AttentionDims &d = p.dims;
  IndexMath ix{b, loc};
  int64_t br = config.sizes.blockQ;
  int64_t numSplits = op.getNumSplits();

  Value hq = ix.c(d.queryHeads), dv = ix.c(d.valueDim);
  Value splits = ix.c(numSplits);
  Value parts = allocResult(b, loc, op.getPartialOutput().getType(),
                            {splits, p.batch, hq, p.querySeq, dv});
  Value lses = allocResult(b, loc, op.getPartialLse().getType(),
                           {splits, p.batch, hq, p.querySeq});

  {
    OpBuilder::InsertionGuard guard(b);
    // The rows of a tile are (query head, query) pairs of the query heads
    // that share one key/value head, so the group reads each K/V tile once.
    Value group = ix.c(d.groupSize());
    Value packedRows = ix.mul(group, p.querySeq);
    SmallVector<Value> ivs =
        beginForall(b, loc,
                    {splits, p.batch, ix.c(d.kvHeads),
                     ix.ceilDiv(packedRows, ix.c(br))});
    Value split = ivs[0], batch = ivs[1], kvHead = ivs[2];
    Value r0 = ix.mul(ivs[3], ix.c(br));
    RowTile rows{batch, ix.mul(kvHead, group), r0,
                 ix.min(ix.c(br), ix.sub(packedRows, r0)), /*packed=*/true};
    ForwardTiles t = allocForwardTiles(b, loc, p, config);
    {
      OpBuilder::InsertionGuard rowGuard(b);
      Value r = beginFor(b, loc, ix.c(0), rows.rows, ix.c(1));
      auto [head, pos] = rows.coords(ix, p, r);
      linalg::CopyOp::create(
          b, loc,
          ValueRange{seqRow(b, loc, p.query, p.layout, batch, head, pos)},
          ValueRange{tileRow(b, loc, t.q, r)});
    }
    fill(b, loc, trailingRows(b, loc, t.q, rows.rows), 0.0);

    // Split s holds keys [s * chunk, (s + 1) * chunk), chunk = ceil(Sk / N);
    // a split past Sk is empty and its loop runs no iteration.
    Value chunk = ix.ceilDiv(p.keySeq, splits);
    Value splitBegin = ix.mul(split, chunk);
    Value splitEnd = ix.min(p.keySeq, ix.add(splitBegin, chunk));
    auto [iLo, iHi] = rows.queryRange(ix, p);
    auto [jBegin, jEnd] = visibleKeys(ix, p, iLo, iHi);
    buildKeyValueLoop(b, loc, p, t, rows, kvHead, ix.max(jBegin, splitBegin),
                      ix.min(jEnd, splitEnd), config.sizes.blockKV);

    // Written row by row: consecutive tile rows may belong to different
    // heads.
    Value r = beginFor(b, loc, ix.c(0), rows.rows, ix.c(1));
    auto [head, pos] = rows.coords(ix, p, r);
    Value l = memref::LoadOp::create(b, loc, t.l, r);
    Value m = memref::LoadOp::create(b, loc, t.m, r);
    SmallVector<OpFoldResult> offsets = {split, batch, head, pos,
                                         b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes(4, b.getIndexAttr(1));
    sizes.push_back(b.getIndexAttr(d.valueDim));
    SmallVector<OpFoldResult> strides(5, b.getIndexAttr(1));
    auto partsType = cast<MemRefType>(parts.getType());
    Value partRow = memref::SubViewOp::create(
        b, loc,
        memref::SubViewOp::inferRankReducedResultType(
            {d.valueDim}, partsType, offsets, sizes, strides),
        parts, offsets, sizes, strides);
    AffineMap id1 = b.getMultiDimIdentityMap(1);
    generic(b, loc, tileRow(b, loc, t.acc, r), partRow, {id1, id1}, {par},
            [&](OpBuilder &b, Location loc, ValueRange a) {
              linalg::YieldOp::create(b, loc, normalised(b, loc, a[0], l));
            });
    memref::StoreOp::create(b, loc, logSumExp(b, loc, m, l), lses,
                            ValueRange{split, batch, head, pos});
  }

  rewriter.replaceOp(
      op, {toTensorResult(b, loc, op.getPartialOutput().getType(), parts),
           toTensorResult(b, loc, op.getPartialLse().getType(), lses)});
  return success();
}
