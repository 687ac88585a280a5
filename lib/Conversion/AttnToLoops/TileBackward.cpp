//===- TileBackward.cpp - attention gradients as tiled loops --------------===//
//
// FlashAttention-2's backward pass by recomputation, from Q, K, V, O, dO and
// LSE only:
//
//   1. D = rowsum(dO * O), one pass over the query rows.
//   2. For each key/value tile (and every query head of its group), a loop
//      over the query tiles that see it recomputes S, P = exp(S - LSE),
//      dP = dO V^T and dS = P * (dP - D), and accumulates
//      dV += P^T dO and dK += scale dS^T Q on chip.
//   3. dQ = scale dS K: by default its own loop nest over query tiles (a
//      loop over key/value tiles recomputing P and dS), so that every sum
//      has a fixed order; with `deterministic=false`, step 2 adds each
//      tile's contribution to an f32 buffer with atomic adds instead.
//
// Steps 1 and 3 are in the tile form (attn.tile ops; step 3 on the
// forward's K/V ring), as GPU kernels will run them; step 2 is still loops
// and linalg on buffers.
//
// Padding query rows load LSE = -inf, so their P and dS are 0 and they add
// nothing to dK and dV.
//
//===----------------------------------------------------------------------===//

#include "TileCommon.h"

#include "mlir/IR/PatternMatch.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::tile;


namespace {
/// The operands of attn.attention_grad as buffers.
struct GradProblem {
  Problem p;
  Value output, gradOutput, lse;
};

/// The tiles one (query tile, key/value tile) step works on. Q, dO, K and V
/// live in the configured memory space; the rest is f32 state.
struct GradTiles {
  Value q, dO, k, v;
  /// LSE and D of the query rows.
  Value lse, rowDot;
  /// Scores S, then probabilities P.
  Value s;
  /// dP, then dS.
  Value dS;
};
} // namespace

static GradTiles allocGradTiles(OpBuilder &b, Location loc, const Problem &p,
                                const AttnTileConfig &config) {
  int64_t br = config.sizes.blockQ, bc = config.sizes.blockKV;
  int64_t d = p.dims.headDim, dv = p.dims.valueDim;
  Type f32 = b.getF32Type();
  GradTiles t;
  t.q = allocTile(b, loc, {br, d}, p.elementType, config.memorySpace);
  t.dO = allocTile(b, loc, {br, dv}, p.elementType, config.memorySpace);
  t.k = allocTile(b, loc, {bc, d}, p.elementType, config.memorySpace);
  t.v = allocTile(b, loc, {bc, dv}, p.elementType, config.memorySpace);
  t.lse = allocTile(b, loc, {br}, f32);
  t.rowDot = allocTile(b, loc, {br}, f32);
  t.s = allocTile(b, loc, {br, bc}, f32);
  t.dS = allocTile(b, loc, {br, bc}, f32);
  return t;
}

/// Loads Q, dO, LSE and D of query rows `rows` of head `rows.head`.
static void loadQueryTiles(OpBuilder &b, Location loc, const GradProblem &g,
                           const GradTiles &t, Value rowDot,
                           const RowTile &rows) {
  const Problem &p = g.p;
  loadRows(b, loc,
           seqRows(b, loc, p.query, p.layout, rows.batch, rows.head,
                   rows.rowBegin, rows.rows),
           t.q, rows.rows, 0.0);
  loadRows(b, loc,
           seqRows(b, loc, g.gradOutput, p.layout, rows.batch, rows.head,
                   rows.rowBegin, rows.rows),
           t.dO, rows.rows, 0.0);
  loadRows(b, loc,
           statRows(b, loc, g.lse, rows.batch, rows.head, rows.rowBegin,
                    rows.rows),
           t.lse, rows.rows, -std::numeric_limits<double>::infinity());
  loadRows(b, loc,
           statRows(b, loc, rowDot, rows.batch, rows.head, rows.rowBegin,
                    rows.rows),
           t.rowDot, rows.rows, 0.0);
}

/// Loads keys and values `[j0, j0 + cols)` of key/value head `kvHead`.
static void loadKeyTiles(OpBuilder &b, Location loc, const Problem &p,
                         const GradTiles &t, Value batch, Value kvHead,
                         Value j0, Value cols) {
  loadRows(b, loc, seqRows(b, loc, p.key, p.layout, batch, kvHead, j0, cols),
           t.k, cols, 0.0);
  loadRows(b, loc, seqRows(b, loc, p.value, p.layout, batch, kvHead, j0, cols),
           t.v, cols, 0.0);
}

/// From the score tile: P = exp(S - LSE) in place (0 on rows with
/// LSE = -inf), then dS = P * (dO V^T - D) into `t.dS`.
static void buildProbsAndScoreGrads(OpBuilder &b, Location loc,
                                    const GradTiles &t) {
  MLIRContext *ctx = b.getContext();
  AffineExpr r, c, e;
  bindDims(ctx, r, c);
  AffineMap rc = AffineMap::get(2, 0, {r, c}, ctx);
  AffineMap rOf2 = AffineMap::get(2, 0, {r}, ctx);
  generic(b, loc, t.lse, t.s, {rOf2, rc}, {par, par},
          [](OpBuilder &b, Location loc, ValueRange a) {
            Value lse = a[0];
            Value pexp = math::ExpOp::create(
                b, loc, arith::SubFOp::create(b, loc, a[1], safeMax(b, loc, lse)));
            Value dead = arith::CmpFOp::create(
                b, loc, arith::CmpFPredicate::OEQ, lse, negInf(b, loc));
            linalg::YieldOp::create(
                b, loc,
                Value(arith::SelectOp::create(b, loc, dead,
                                              constF32(b, loc, 0.0), pexp)));
          });

  // Loop dims (r, c, e): dP[r, c] = sum_e dO[r, e] V[c, e].
  bindDims(ctx, r, c, e);
  fill(b, loc, t.dS, 0.0);
  contract(b, loc, t.dO, AffineMap::get(3, 0, {r, e}, ctx), t.v,
           AffineMap::get(3, 0, {c, e}, ctx), t.dS,
           AffineMap::get(3, 0, {r, c}, ctx));
  generic(b, loc, {t.s, t.rowDot}, t.dS, {rc, rOf2, rc}, {par, par},
          [](OpBuilder &b, Location loc, ValueRange a) {
            Value diff = arith::SubFOp::create(b, loc, a[2], a[1]);
            linalg::YieldOp::create(
                b, loc, Value(arith::MulFOp::create(b, loc, a[0], diff)));
          });
}

/// acc[r, k] += scale sum_c dS[r, c] K[c, k]: this step's share of dQ.
static void accumulateQueryGrad(OpBuilder &b, Location loc, const Problem &p,
                                const GradTiles &t, Value acc) {
  MLIRContext *ctx = b.getContext();
  AffineExpr r, k, c;
  bindDims(ctx, r, k, c);
  contract(b, loc, t.dS, AffineMap::get(3, 0, {r, c}, ctx), t.k,
           AffineMap::get(3, 0, {c, k}, ctx), acc,
           AffineMap::get(3, 0, {r, k}, ctx), p.scale);
}

/// Step 1: D = rowsum(dO * O) into `rowDot` ([B, Hq, Sq] f32), in the tile
/// form: per query tile a map whose region reads dO and O element by element
/// (f32 products), a row sum, and a store of the tile's rows.
static void buildRowDots(OpBuilder &b, Location loc, const GradProblem &g,
                         Value rowDot, int64_t blockQ) {
  OpBuilder::InsertionGuard guard(b);
  const Problem &p = g.p;
  Type f32 = b.getF32Type();
  RowTile rows = beginQueryTileForall(b, loc, p, blockQ);
  Value products = tileMap(
      b, loc, RankedTensorType::get({blockQ, p.dims.valueDim}, f32),
      ValueRange(),
      [&](OpBuilder &b, Location loc, ValueRange idx, ValueRange) {
        IndexMath ix{b, loc};
        // Rows past the tile's read its last row; they are not stored.
        auto [head, pos] = rows.coords(ix, p, idx[0]);
        SmallVector<Value> at = storedIndices(p.layout, rows.batch, head, pos);
        at.push_back(idx[1]);
        Value dO = memref::LoadOp::create(b, loc, g.gradOutput, at);
        Value o = memref::LoadOp::create(b, loc, g.output, at);
        return Value(
            arith::MulFOp::create(b, loc, toF32(b, loc, dO), toF32(b, loc, o)));
      });
  Value sums =
      tileReduce(b, loc, TileReduceKind::Add, products,
                 splat(b, loc, RankedTensorType::get({blockQ}, f32), 0.0));
  tileStore(b, loc, sums, rowDot, rows.rows,
            [&](OpBuilder &b, Location loc, Value r) {
              IndexMath ix{b, loc};
              return SmallVector<Value>{rows.batch, rows.head,
                                        ix.add(rows.rowBegin, r)};
            });
}

/// Adds the f32 tile `part` (`[Br, D]`, rows `[0, rows)` valid) to rows
/// `[q0, q0 + rows)` of head `head` of the `[B, Hq, Sq, D]` buffer `acc`,
/// element by element with atomic adds (other loop iterations add to the
/// same rows concurrently).
static void atomicAddRows(OpBuilder &b, Location loc, Value part, Value acc,
                          Value batch, Value head, Value q0, Value rows) {
  OpBuilder::InsertionGuard guard(b);
  IndexMath ix{b, loc};
  int64_t width = cast<MemRefType>(part.getType()).getDimSize(1);
  Value r = beginFor(b, loc, ix.c(0), rows, ix.c(1));
  Value k = beginFor(b, loc, ix.c(0), ix.c(width), ix.c(1));
  Value v = memref::LoadOp::create(b, loc, part, ValueRange{r, k});
  memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf, v, acc,
                              ValueRange{batch, head, ix.add(q0, r), k});
}

/// Step 2: dK and dV, one key/value tile per loop iteration. `dqAcc` is the
/// f32 dQ accumulator of the non-deterministic mode, or null.
static void buildKeyValueGrads(OpBuilder &b, Location loc,
                               const GradProblem &g,
                               const AttnTileConfig &config, Value rowDot,
                               Value gradKey, Value gradValue, Value dqAcc) {
  OpBuilder::InsertionGuard guard(b);
  const Problem &p = g.p;
  const AttentionDims &d = p.dims;
  MLIRContext *ctx = b.getContext();
  IndexMath ix{b, loc};
  int64_t br = config.sizes.blockQ, bc = config.sizes.blockKV;
  SmallVector<Value> ivs = beginForall(
      b, loc, {p.batch, ix.c(d.kvHeads), ix.ceilDiv(p.keySeq, ix.c(bc))});
  Value batch = ivs[0], kvHead = ivs[1];
  Value j0 = ix.mul(ivs[2], ix.c(bc));
  Value cols = ix.min(ix.c(bc), ix.sub(p.keySeq, j0));
  Value jEnd = ix.add(j0, cols);

  GradTiles t = allocGradTiles(b, loc, p, config);
  Type f32 = b.getF32Type();
  Value dK = allocTile(b, loc, {bc, d.headDim}, f32);
  Value dV = allocTile(b, loc, {bc, d.valueDim}, f32);
  Value dqPart;
  if (dqAcc)
    dqPart = allocTile(b, loc, {br, d.headDim}, f32);
  fill(b, loc, dK, 0.0);
  fill(b, loc, dV, 0.0);
  loadKeyTiles(b, loc, p, t, batch, kvHead, j0, cols);

  // Only the query tiles that can see a key of this tile are visited.
  auto [iBegin, iEnd] = visibleQueries(ix, p, j0, ix.sub(jEnd, ix.c(1)));
  {
    OpBuilder::InsertionGuard loopGuard(b);
    Value member = beginFor(b, loc, ix.c(0), ix.c(d.groupSize()), ix.c(1));
    Value head = ix.add(ix.mul(kvHead, ix.c(d.groupSize())), member);
    Value q0 = beginFor(b, loc, iBegin, iEnd, ix.c(br));
    RowTile rows{batch, head, q0, ix.min(ix.c(br), ix.sub(iEnd, q0)),
                 /*packed=*/false};
    loadQueryTiles(b, loc, g, t, rowDot, rows);
    buildScoreTile(b, loc, p, rows, t.q, t.k, t.s, j0, jEnd);
    buildProbsAndScoreGrads(b, loc, t);

    // Loop dims (c, x, r): dV[c, x] += P[r, c] dO[r, x] and
    // dK[c, x] += scale dS[r, c] Q[r, x].
    AffineExpr c, x, r;
    bindDims(ctx, c, x, r);
    AffineMap rc = AffineMap::get(3, 0, {r, c}, ctx);
    AffineMap rx = AffineMap::get(3, 0, {r, x}, ctx);
    AffineMap cx = AffineMap::get(3, 0, {c, x}, ctx);
    contract(b, loc, t.s, rc, t.dO, rx, dV, cx);
    contract(b, loc, t.dS, rc, t.q, rx, dK, cx, p.scale);

    if (dqAcc) {
      fill(b, loc, dqPart, 0.0);
      accumulateQueryGrad(b, loc, p, t, dqPart);
      atomicAddRows(b, loc, dqPart, dqAcc, batch, head, q0, rows.rows);
    }
  }
  storeConverted(b, loc, leadingRows(b, loc, dK, cols),
                 seqRows(b, loc, gradKey, p.layout, batch, kvHead, j0, cols));
  storeConverted(b, loc, leadingRows(b, loc, dV, cols),
                 seqRows(b, loc, gradValue, p.layout, batch, kvHead, j0, cols));
}

/// Step 3 (deterministic): dQ, one query tile per loop iteration, in the
/// tile form (attn.tile ops, as the forward): Q and dO stay in memory tiles
/// while the K/V tiles stream past them through the forward's ring; per
/// key/value tile S = Q K^T, P = exp2(S scale log2(e) - LSE log2(e)) (0 on
/// a row with LSE = -inf), dP = dO V^T, dS = P (dP - D) and dQ += dS K
/// (dS in the operands' element type, the product's A operand); dQ is
/// scaled once, after the loop.
static void buildQueryGrads(OpBuilder &b, Location loc, const GradProblem &g,
                            const AttnTileConfig &config, Value rowDot,
                            Value gradQuery) {
  OpBuilder::InsertionGuard guard(b);
  const Problem &p = g.p;
  const AttentionDims &d = p.dims;
  IndexMath ix{b, loc};
  int64_t br = config.sizes.blockQ, bc = config.sizes.blockKV;
  int64_t stages = config.sizes.stages;
  Type f32 = b.getF32Type();
  RowTile rows = beginQueryTileForall(b, loc, p, br);
  auto [iLo, iHi] = rows.queryRange(ix, p);
  auto [jBegin, jEnd] = visibleKeys(ix, p, iLo, iHi);
  Value kvHead = ix.div(rows.head, p.group);

  Value qTile =
      allocTile(b, loc, {br, d.headDim}, p.elementType, config.memorySpace);
  Value doTile =
      allocTile(b, loc, {br, d.valueDim}, p.elementType, config.memorySpace);
  KeyValueRing ring(b, loc, p, rows, config);
  auto rowIndices = [&](OpBuilder &b, Location loc, Value r) {
    IndexMath ix{b, loc};
    auto [head, pos] = rows.coords(ix, p, r);
    return storedIndices(p.layout, rows.batch, head, pos);
  };
  tileLoad(b, loc, p.query, qTile, rows.rows, rowIndices);
  tileLoad(b, loc, g.gradOutput, doTile, rows.rows, rowIndices);
  ring.stream(b, loc, kvHead, jBegin, jEnd);
  for (int64_t n = 0; n < stages - 1; ++n)
    ring.load(b, loc, ix.c(n));

  // LSE (in log2 units) and D of each row; a row past the tile's has
  // LSE = -inf, so its P and dS are 0.
  auto rowType = RankedTensorType::get({br}, f32);
  auto rowStat = [&](Value buffer, double pad, double factor) {
    return tileMap(
        b, loc, rowType, ValueRange(),
        [&](OpBuilder &b, Location loc, ValueRange idx, ValueRange) {
          IndexMath ix{b, loc};
          auto [head, pos] = rows.coords(ix, p, idx[0]);
          Value v = memref::LoadOp::create(b, loc, buffer,
                                           ValueRange{rows.batch, head, pos});
          if (factor != 1.0)
            v = arith::MulFOp::create(b, loc, v, constF32(b, loc, factor));
          return Value(arith::SelectOp::create(
              b, loc, ix.cmp(arith::CmpIPredicate::slt, idx[0], rows.rows), v,
              constF32(b, loc, pad)));
        });
  };
  Value lseLog2 = rowStat(g.lse, -INFINITY, kLog2e);
  Value dRow = rowStat(rowDot, 0.0, 1.0);
  // The mask operand is added to the unscaled scores: times 1 / scale.
  Value maskScale;
  if (p.mask && !p.boolMask)
    maskScale =
        arith::DivFOp::create(b, loc, constF32(b, loc, kLog2e), p.scaleLog2);

  auto scoreType = RankedTensorType::get({br, bc}, f32);
  auto dqType = RankedTensorType::get({br, d.headDim}, f32);
  auto loop = scf::ForOp::create(b, loc, ix.c(0), ring.numTiles, ix.c(1),
                                 ValueRange{splat(b, loc, dqType, 0.0)});
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value n = loop.getInductionVar();
    ring.load(b, loc, ix.add(n, ix.c(stages - 1)));
    Value kStage = ring.keyStage(b, loc, n);
    Value j0 = ring.firstKey(ix, n);
    Value s = TileMatmulOp::create(b, loc, scoreType, qTile, kStage,
                                   splat(b, loc, scoreType, 0.0),
                                   /*transpose_rhs=*/b.getUnitAttr())
                  .getResult();
    s = maskedScores(b, loc, p, rows, s, j0, jEnd, bc, /*slices=*/1, maskScale);
    Value probs = tileMap(
        b, loc, scoreType, {s, lseLog2},
        [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
          Value dead = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                             x[1], negInf(b, loc));
          Value arg = math::FmaOp::create(
              b, loc, x[0], p.scaleLog2,
              arith::NegFOp::create(b, loc, safeMax(b, loc, x[1])));
          return Value(
              arith::SelectOp::create(b, loc, dead, constF32(b, loc, 0.0),
                                      math::Exp2Op::create(b, loc, arg)));
        });
    Value dP = TileMatmulOp::create(b, loc, scoreType, doTile,
                                    ring.valueStage(b, loc, n),
                                    splat(b, loc, scoreType, 0.0),
                                    /*transpose_rhs=*/b.getUnitAttr())
                   .getResult();
    Value dS = tileMap(
        b, loc, RankedTensorType::get({br, bc}, p.elementType),
        {probs, dP, dRow},
        [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
          Value diff = arith::SubFOp::create(b, loc, x[1], x[2]);
          return fromF32(b, loc, arith::MulFOp::create(b, loc, x[0], diff),
                         p.elementType);
        });
    Value dQ = TileMatmulOp::create(b, loc, dqType, dS, kStage,
                                    loop.getRegionIterArgs()[0],
                                    /*transpose_rhs=*/UnitAttr())
                   .getResult();
    scf::YieldOp::create(b, loc, dQ);
  }
  // scale = scale log2(e) / log2(e).
  Value scale =
      arith::DivFOp::create(b, loc, p.scaleLog2, constF32(b, loc, kLog2e));
  Value dQ = tileMap(
      b, loc, RankedTensorType::get({br, d.headDim}, p.elementType),
      {loop.getResult(0)},
      [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
        return fromF32(b, loc, arith::MulFOp::create(b, loc, x[0], scale),
                       p.elementType);
      });
  tileStore(b, loc, dQ, gradQuery, rows.rows,
            [&](OpBuilder &b, Location loc, Value r) {
              IndexMath ix{b, loc};
              return storedIndices(p.layout, rows.batch, rows.head,
                                   ix.add(rows.rowBegin, r));
            });
}

/// Non-deterministic mode: dQ from the f32 accumulator.
static void storeAccumulatedQueryGrads(OpBuilder &b, Location loc,
                                       const Problem &p, int64_t blockQ,
                                       Value dqAcc, Value gradQuery) {
  OpBuilder::InsertionGuard guard(b);
  RowTile tile = beginQueryTileForall(b, loc, p, blockQ);
  Value batch = tile.batch, head = tile.head, q0 = tile.rowBegin,
        rows = tile.rows;
  storeConverted(
      b, loc, seqRows(b, loc, dqAcc, Layout::BHSD, batch, head, q0, rows),
      seqRows(b, loc, gradQuery, p.layout, batch, head, q0, rows));
}

LogicalResult tile::tileAttentionGrad(RewriterBase &rewriter,
                                      AttentionGradOp op,
                                      const AttnTileConfig &config) {
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  GradProblem g;
  g.p = getProblem(b, loc, op);
  g.output = toReadOnlyBuffer(b, loc, op.getOutput());
  g.gradOutput = toReadOnlyBuffer(b, loc, op.getGradOutput());
  g.lse = toReadOnlyBuffer(b, loc, op.getLse());
  const Problem &p = g.p;
  const AttentionDims &d = p.dims;
  IndexMath ix{b, loc};

  auto stored = [&](Value heads, Value seq, int64_t last) {
    SmallVector<Value> sizes = {p.batch, heads, seq, ix.c(last)};
    if (p.layout == Layout::BSHD)
      std::swap(sizes[1], sizes[2]);
    return sizes;
  };
  Value hq = ix.c(d.queryHeads), hkv = ix.c(d.kvHeads);
  Value gradQuery = allocResult(b, loc, op.getGradQuery().getType(),
                                stored(hq, p.querySeq, d.headDim));
  Value gradKey = allocResult(b, loc, op.getGradKey().getType(),
                              stored(hkv, p.keySeq, d.headDim));
  Value gradValue = allocResult(b, loc, op.getGradValue().getType(),
                                stored(hkv, p.keySeq, d.valueDim));

  Type f32 = b.getF32Type();
  Value rowDot = allocResult(
      b, loc,
      RankedTensorType::get({d.batch, d.queryHeads, d.querySeq}, f32),
      {p.batch, hq, p.querySeq});
  buildRowDots(b, loc, g, rowDot, config.sizes.blockQ);

  if (config.deterministic) {
    buildKeyValueGrads(b, loc, g, config, rowDot, gradKey, gradValue,
                       /*dqAcc=*/nullptr);
    buildQueryGrads(b, loc, g, config, rowDot, gradQuery);
  } else {
    Value dqAcc = allocResult(
        b, loc,
        RankedTensorType::get(
            {d.batch, d.queryHeads, d.querySeq, d.headDim}, f32),
        {p.batch, hq, p.querySeq, ix.c(d.headDim)});
    fill(b, loc, dqAcc, 0.0);
    buildKeyValueGrads(b, loc, g, config, rowDot, gradKey, gradValue, dqAcc);
    storeAccumulatedQueryGrads(b, loc, p, config.sizes.blockQ, dqAcc,
                               gradQuery);
  }

  rewriter.replaceOp(
      op, {toTensorResult(b, loc, op.getGradQuery().getType(), gradQuery),
           toTensorResult(b, loc, op.getGradKey().getType(), gradKey),
           toTensorResult(b, loc, op.getGradValue().getType(), gradValue)});
  return success();
}
