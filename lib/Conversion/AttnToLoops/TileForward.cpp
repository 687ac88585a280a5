//===- TileForward.cpp - attention and split-KV attention as tiled loops --===//
//
// FlashAttention-2's forward pass: a query tile stays in workgroup memory
// while key/value tiles stream past it; the running row max m, the running
// row sum l and the unnormalised f32 accumulator are updated once per
// key/value tile and the output is divided by l once, after the loop.
//
//===----------------------------------------------------------------------===//

#include "TileCommon.h"

#include "attn/Dialect/Attn/IR/SplitWork.h"

#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::tile;

//===----------------------------------------------------------------------===//
// The loop nest of one query tile
//===----------------------------------------------------------------------===//

namespace {
/// The softmax state of a query tile: running max m (log2 units of the
/// scaled scores), running sum l, unnormalised output acc (register tiles).
struct SoftmaxState {
  Value m, l, acc;
};
} // namespace

/// Merges the softmax states of the key slices (`[S, R]`, `[S, R, Dv]`)
/// as split-KV's combine does: M = max_s m_s, w_s = exp2(m_s - M),
/// l = sum_s w_s l_s, acc = sum_s w_s acc_s. Slices that saw no key have
/// m_s = -inf and weight 0.
static SoftmaxState mergeSlices(OpBuilder &b, Location loc,
                                const SoftmaxState &st, int64_t br,
                                int64_t dv) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  auto rowType = RankedTensorType::get({br}, f32);
  auto slicedRows = cast<RankedTensorType>(st.m.getType());
  auto accType = RankedTensorType::get({br, dv}, f32);
  Value m = tileReduce(b, loc, TileReduceKind::Max, st.m,
                       splat(b, loc, rowType, -INFINITY), /*dim=*/0);
  AffineExpr s, r;
  bindDims(ctx, s, r);
  Value weights = tileMap(
      b, loc, slicedRows, {st.m, m},
      [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
        Value diff = arith::SubFOp::create(b, loc, x[0], safeMax(b, loc, x[1]));
        return Value(math::Exp2Op::create(b, loc, diff));
      },
      {AffineMap::get(2, 0, {s, r}, ctx), AffineMap::get(2, 0, {r}, ctx)});
  auto weighted = [](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
    return Value(arith::MulFOp::create(b, loc, x[0], x[1]));
  };
  Value l = tileReduce(b, loc, TileReduceKind::Add,
                       tileMap(b, loc, slicedRows, {st.l, weights}, weighted),
                       splat(b, loc, rowType, 0.0), /*dim=*/0);
  Value acc = tileReduce(
      b, loc, TileReduceKind::Add,
      tileMap(b, loc, cast<RankedTensorType>(st.acc.getType()),
              {st.acc, weights}, weighted),
      splat(b, loc, accType, 0.0), /*dim=*/0);
  return {m, l, acc};
}

/// Loads the Q tile and runs the online softmax over the key/value tiles of
/// keys [jBegin, jEnd) of key/value head `kvHead`, `stages` tiles in flight.
/// With key slices, every tile is cut into `keySlices` consecutive parts
/// with a softmax state each (register tiles with a leading slice
/// dimension), merged after the loop.
static SoftmaxState buildQueryTile(OpBuilder &b, Location loc,
                                   const Problem &p, const RowTile &rows,
                                   Value kvHead, Value jBegin, Value jEnd,
                                   const AttnTileConfig &config) {
  const AttnTileSizes &t = config.sizes;
  int64_t br = t.blockQ, bc = t.blockKV, stages = t.stages;
  int64_t d = p.headCols, dv = p.valueCols;
  Type f32 = b.getF32Type();
  IndexMath ix{b, loc};

  Value qTile = allocTile(b, loc, {br, d}, p.elementType, config.memorySpace);
  KeyValueRing ring(b, loc, p, rows, config);
  tileLoad(b, loc, p.query, qTile, rows.rows,
           [&](OpBuilder &b, Location loc, Value r) {
             IndexMath ix{b, loc};
             auto [head, pos] = rows.coords(ix, p, r);
             return p.queryIndices(b, loc, rows.batch, head, pos);
           });
  ring.stream(b, loc, kvHead, jBegin, jEnd);

  // The loads of tile n + stages - 1 overlap the work on tile n. A rotated
  // loop (the schedule's `overlap`) still reads tile n - 1's V in
  // iteration n (its V loads say so: a GPU kernel frees a V tile's stage
  // after that read and, with 2 stages, waits for a V tile an iteration
  // later than for its K tile): it prefetches one tile less far ahead.
  bool rotated = t.overlap;
  if (rotated)
    ring.valueLag = 1;
  int64_t ahead = rotated ? stages - 2 : stages - 1;
  for (int64_t n = 0; n < ahead; ++n)
    ring.load(b, loc, ix.c(n));

  int64_t slices = t.keySlices, kps = bc / slices;
  auto tileType = [&](ArrayRef<int64_t> shape, Type elementType) {
    SmallVector<int64_t> dims;
    if (slices > 1)
      dims.push_back(slices);
    llvm::append_range(dims, shape);
    return RankedTensorType::get(dims, elementType);
  };
  auto rowType = tileType({br}, f32);
  auto scoreType = tileType({br, kps}, f32);
  auto accType = tileType({br, dv}, f32);
  Value scaleLog2 = p.scaleLog2;
  // The mask operand is added to the unscaled scores: times 1 / scale.
  Value maskScale;
  if (p.mask && !p.boolMask)
    maskScale = arith::DivFOp::create(b, loc, constF32(b, loc, kLog2e),
                                      scaleLog2);
  RankedTensorType pType = tileType({br, kps}, p.elementType);
  SmallVector<Value> init = {splat(b, loc, rowType, -INFINITY),
                             splat(b, loc, rowType, 0.0),
                             splat(b, loc, accType, 0.0)};
  if (rotated)
    init.push_back(splat(b, loc, pType, 0.0));
  auto loop = scf::ForOp::create(b, loc, ix.c(0), ring.numTiles, ix.c(1), init);
  // acc += P V of tile `n` (stage n mod stages).
  auto productPV = [&](OpBuilder &b, Location loc, Value pOperand, Value n,
                       Value acc) -> Value {
    return TileMatmulOp::create(
               b, loc, accType, pOperand,
               sliceRows(b, loc, ring.valueStage(b, loc, n), slices), acc,
               /*transpose_rhs=*/UnitAttr())
        .getResult();
  };
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value n = loop.getInductionVar();
  Value m = loop.getRegionIterArgs()[0], l = loop.getRegionIterArgs()[1],
        acc = loop.getRegionIterArgs()[2];
  ring.load(b, loc, ix.add(n, ix.c(ahead)));
  Value kStage = ring.keyStage(b, loc, n);
  Value j0 = ring.firstKey(ix, n);

  // S = Q K^T, unscaled: the max commutes with the positive scale and
  // exp2(scale log2(e) s - m) is one FMA.
  Value s = TileMatmulOp::create(b, loc, scoreType, qTile,
                                 sliceRows(b, loc, kStage, slices),
                                 splat(b, loc, scoreType, 0.0),
                                 /*transpose_rhs=*/b.getUnitAttr())
                .getResult();
  // Rotated: P V of the previous tile, next to S of this one, in the same
  // block so that the two products are in flight together (acc is already
  // scaled to the previous tile's max). In the first iteration P is 0 and
  // the V tile tile 0's: the product adds 0 (V's values reach the
  // accumulator as they would through its masked keys).
  if (rotated)
    acc = productPV(b, loc, loop.getRegionIterArgs()[3],
                    ix.max(ix.sub(n, ix.c(1)), ix.c(0)), acc);

  s = maskedScores(b, loc, p, rows, s, j0, jEnd, bc, slices, maskScale,
                   /*keyRows=*/false, ring.maskModOn(ix, n));

  // Online softmax in log2 units (FlashAttention-2 order).
  Value rowMax = tileReduce(b, loc, TileReduceKind::Max, s,
                            splat(b, loc, rowType, -INFINITY));
  Value mNew = tileMap(b, loc, rowType, {m, rowMax},
                       [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
                         Value scaled = arith::MulFOp::create(
                             b, loc, x[1], scaleLog2);
                         return Value(arith::MaximumFOp::create(b, loc, x[0], scaled));
                       });
  // A row that has seen no visible key keeps m = -inf: its P and alpha are
  // exp2(-inf) = 0, never exp2(-inf - -inf).
  Value p2 = tileMap(b, loc, scoreType, {s, mNew},
                     [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
                       Value negM = arith::NegFOp::create(
                           b, loc, safeMax(b, loc, x[1]));
                       Value arg = math::FmaOp::create(
                           b, loc, x[0], scaleLog2, negM);
                       return Value(math::Exp2Op::create(b, loc, arg));
                     });
  Value alpha = tileMap(b, loc, rowType, {m, mNew},
                        [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
                          Value diff = arith::SubFOp::create(
                              b, loc, x[0], safeMax(b, loc, x[1]));
                          return Value(math::Exp2Op::create(b, loc, diff));
                        });
  Value rowSum = tileReduce(b, loc, TileReduceKind::Add, p2,
                            splat(b, loc, rowType, 0.0));
  Value lNew = tileMap(b, loc, rowType, {l, alpha, rowSum},
                       [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
                         Value scaled = arith::MulFOp::create(b, loc, x[0], x[1]);
                         return Value(arith::AddFOp::create(b, loc, scaled, x[2]));
                       });
  Value accScaled = tileMap(b, loc, accType, {acc, alpha},
                            [&](OpBuilder &b, Location loc, ValueRange,
                                ValueRange x) {
                              return Value(arith::MulFOp::create(b, loc, x[0], x[1]));
                            });
  // P enters the second product in the element type, as the A operand of
  // the tensor cores.
  Value pOperand = p2;
  if (p.elementType != f32)
    pOperand =
        tileMap(b, loc, pType, p2,
                [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
                  return fromF32(b, loc, x[0], p.elementType);
                });
  if (rotated) {
    // This tile's P V is the next iteration's (or after the loop).
    scf::YieldOp::create(b, loc, ValueRange{mNew, lNew, accScaled, pOperand});
  } else {
    Value accNew = productPV(b, loc, pOperand, n, accScaled);
    scf::YieldOp::create(b, loc, ValueRange{mNew, lNew, accNew});
  }
  b.setInsertionPointAfter(loop);
  Value accOut = loop.getResult(2);
  if (rotated) {
    // The last tile's P V.
    auto last = scf::IfOp::create(
        b, loc, ix.cmp(arith::CmpIPredicate::sgt, ring.numTiles, ix.c(0)),
        [&](OpBuilder &b, Location loc) {
          IndexMath ix{b, loc};
          scf::YieldOp::create(b, loc,
                               productPV(b, loc, loop.getResult(3),
                                         ix.sub(ring.numTiles, ix.c(1)),
                                         accOut));
        },
        [&](OpBuilder &b, Location loc) {
          scf::YieldOp::create(b, loc, accOut);
        });
    accOut = last.getResult(0);
  }
  SoftmaxState state{loop.getResult(0), loop.getResult(1), accOut};
  if (slices == 1)
    return state;
  return mergeSlices(b, loc, state, br, dv);
}

/// O = acc (1 / l) in `type`'s element type, 0 on a row that saw no key:
/// one division per row.
static Value normalisedTile(OpBuilder &b, Location loc,
                            const SoftmaxState &st, RankedTensorType type) {
  Value inv = tileMap(
      b, loc, cast<RankedTensorType>(st.l.getType()), st.l,
      [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
        Value zero = constF32(b, loc, 0.0);
        Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                            x[0], zero);
        Value r = arith::DivFOp::create(b, loc, constF32(b, loc, 1.0), x[0]);
        return Value(arith::SelectOp::create(b, loc, empty, zero, r));
      });
  return tileMap(b, loc, type, {st.acc, inv},
                 [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
                   Value o = arith::MulFOp::create(b, loc, x[0], x[1]);
                   return fromF32(b, loc, o, type.getElementType());
                 });
}

/// LSE = ln(2) (m + log2 l), natural-log based; -inf on a row that saw no
/// key (l = 0, m = -inf).
static Value lseTile(OpBuilder &b, Location loc, const SoftmaxState &st) {
  return tileMap(b, loc, cast<RankedTensorType>(st.l.getType()), {st.m, st.l},
                 [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
                   Value empty = arith::CmpFOp::create(
                       b, loc, arith::CmpFPredicate::OEQ, x[1],
                       constF32(b, loc, 0.0));
                   Value log2Sum = arith::AddFOp::create(
                       b, loc, safeMax(b, loc, x[0]),
                       math::Log2Op::create(b, loc, x[1]));
                   Value lse = arith::MulFOp::create(b, loc, log2Sum,
                                                     constF32(b, loc, kLn2));
                   return Value(arith::SelectOp::create(b, loc, empty,
                                                        negInf(b, loc), lse));
                 });
}

/// Restricts `seq` to value block `block` of `blocks`
/// (AttnTileSizes::valueBlocks): it reads the block's columns of V, and
/// the results are `out` viewed at them and the rows of LSE it writes
/// (the first block's only). With one block, `out` and all of `rows`.
static std::pair<Value, Value>
restrictToValueBlock(OpBuilder &b, Location loc, Problem &seq, int64_t blocks,
                     Value block, Value out, const RowTile &rows) {
  if (blocks == 1)
    return {out, rows.rows};
  IndexMath ix{b, loc};
  ValueBlocking blocking = valueBlocking(seq.dims.valueDim, blocks);
  Value first;
  seq = valueBlockProblem(b, loc, seq, blocking, block, first);
  Value isFirst = ix.cmp(arith::CmpIPredicate::eq, block, ix.c(0));
  return {columnView(b, loc, out, first, blocking.width),
          ix.select(isFirst, rows.rows, ix.c(0))};
}

LogicalResult tile::tileAttention(RewriterBase &rewriter, AttentionOp op,
                                  const AttnTileConfig &config) {
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  Problem p = getProblem(b, loc, op, config.sizes, ProblemForm::Kernel);
  const AttentionDims &d = p.dims;
  IndexMath ix{b, loc};
  int64_t br = config.sizes.blockQ;

  Value hq = p.queryHeads;
  // A packed batch's O and LSE hold its sequences in one: a leading 1.
  Value stored = p.queryOffsets ? ix.c(1) : p.batch;
  SmallVector<Value> oSizes = {stored, hq, p.querySeq, ix.c(d.valueDim)};
  if (p.layout == Layout::BSHD)
    std::swap(oSizes[1], oSizes[2]);
  Value out, lse;
  if (!config.destinations.empty()) {
    out = config.destinations[0];
    lse = config.destinations.size() > 1 ? config.destinations[1] : Value();
  } else {
    out = allocResult(b, loc, op.getOutput().getType(), oSizes);
    if (op.getLse())
      lse =
          allocResult(b, loc, op.getLse().getType(), {stored, hq, p.querySeq});
  }

  {
    OpBuilder::InsertionGuard guard(b);
    Problem seq;
    int64_t valueBlocks = config.sizes.valueBlocks;
    Value valueBlock;
    RowTile rows =
        beginQueryTileForall(b, loc, p, br, &seq, valueBlocks, &valueBlock);
    setSchedule(b, config);
    auto [outBlock, lseRows] =
        restrictToValueBlock(b, loc, seq, valueBlocks, valueBlock, out, rows);
    auto [iLo, iHi] = rows.queryRange(ix, seq);
    auto [jBegin, jEnd] = visibleKeys(ix, seq, iLo, iHi);
    // A packed batch's tiles past their sequence's rows visit no keys.
    if (p.queryOffsets)
      jEnd = ix.select(ix.cmp(arith::CmpIPredicate::sgt, rows.rows, ix.c(0)),
                       jEnd, jBegin);
    Value kvHead = ix.div(rows.head, p.group);
    SoftmaxState st =
        buildQueryTile(b, loc, seq, rows, kvHead, jBegin, jEnd, config);
    auto outRow = [&](OpBuilder &b, Location loc, Value r) {
      IndexMath ix{b, loc};
      return seq.queryIndices(b, loc, rows.batch, rows.head,
                              ix.add(rows.rowBegin, r));
    };
    tileStore(
        b, loc,
        normalisedTile(b, loc, st,
                       RankedTensorType::get({br, p.valueCols}, p.elementType)),
        outBlock, rows.rows, outRow);
    if (lse)
      tileStore(b, loc, lseTile(b, loc, st), lse, lseRows,
                [&](OpBuilder &b, Location loc, Value r) {
                  IndexMath ix{b, loc};
                  return seq.lseIndices(b, loc, rows.batch, rows.head,
                                        ix.add(rows.rowBegin, r));
                });
  }

  if (!config.destinations.empty())
    rewriter.eraseOp(op);
  else
    replaceWithOutputAndLse(rewriter, loc, op, out, lse);
  return success();
}

LogicalResult tile::tileAttentionPartial(RewriterBase &rewriter,
                                         AttentionPartialOp op,
                                         const AttnTileConfig &config) {
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  Problem p = getProblem(b, loc, op, config.sizes, ProblemForm::Kernel);
  const AttentionDims &d = p.dims;
  IndexMath ix{b, loc};
  int64_t br = config.sizes.blockQ;
  int64_t numSplits = op.getNumSplits();

  Value hq = p.queryHeads, dv = ix.c(d.valueDim);
  // Balanced: the splits are the batch's N * B work items (SplitWork.h),
  // [W, 1, Hq, Sq, Dv], and the ops' third result their split_offsets.
  bool balanced = op.getBalanced();
  Value parts, lses, offsets, splits;
  if (!config.destinations.empty()) {
    // A kernel serves any split count: the launch sizes the partial
    // results.
    parts = config.destinations[0];
    lses = config.destinations[1];
    if (balanced)
      offsets = config.destinations[2];
    splits = memref::DimOp::create(b, loc, parts, 0);
  } else {
    splits = balanced ? ix.mul(ix.c(numSplits), p.batch) : ix.c(numSplits);
    Value partBatch = balanced ? ix.c(1) : p.batch;
    parts = allocResult(b, loc, op.getPartialOutput().getType(),
                        {splits, partBatch, hq, p.querySeq, dv});
    lses = allocResult(b, loc, op.getPartialLse().getType(),
                       {splits, partBatch, hq, p.querySeq});
    if (balanced)
      offsets = allocResult(b, loc, op.getSplitOffsets().getType(),
                            {ix.add(p.batch, ix.c(1))});
  }

  {
    OpBuilder::InsertionGuard guard(b);
    // The rows of a tile are (query head, query) pairs of the query heads
    // that share one key/value head, so the group reads each K/V tile once.
    // One loop dimension walks the key/value heads and their row tiles (on
    // a GPU, grid dimension y; one row tile per head when the rows fit).
    // With value blocks (AttnTileSizes::valueBlocks) each row tile is that
    // many consecutive iterations of it, one per block.
    Value group = p.group;
    Value packedRows = ix.mul(group, p.querySeq);
    Value rowTiles = ix.ceilDiv(packedRows, ix.c(br));
    int64_t valueBlocks = config.sizes.valueBlocks;
    SmallVector<Value> ivs = beginForall(
        b, loc,
        {splits, balanced ? ix.c(1) : p.batch,
         ix.mul(ix.mul(p.kvHeads, rowTiles), ix.c(valueBlocks))},
        {gpu::MappingId::DimX, gpu::MappingId::DimZ, gpu::MappingId::DimY});
    Value split = ivs[0], batch = ivs[1];
    setSchedule(b, config);

    Value splitBegin, splitEnd;
    if (balanced) {
      // Every CTA finds its item from the lengths (device data); the
      // first one writes the offsets.
      auto length = [&](OpBuilder &b, Location loc, Value s) {
        return p.forBatch(b, loc, s).keySeq;
      };
      Type index = b.getIndexType();
      auto item = TileWorkItemOp::create(b, loc, index, index, index, split,
                                         splits, p.batch, p.keySeq);
      {
        OpBuilder::InsertionGuard guard(b);
        Block *body = b.createBlock(&item.getLength(), {}, b.getIndexType(),
                                    loc);
        TileYieldOp::create(b, loc, length(b, loc, body->getArgument(0)));
        // forBatch builds more than the length.
        for (Operation &op :
             llvm::make_early_inc_range(llvm::reverse(*body)))
          if (isOpTriviallyDead(&op))
            op.erase();
      }
      batch = item.getSequence();
      splitBegin = item.getBegin();
      splitEnd = item.getEnd();
      Value first = ix.andI(ix.cmp(arith::CmpIPredicate::eq, split, ix.c(0)),
                            ix.cmp(arith::CmpIPredicate::eq, ivs[2], ix.c(0)));
      OpBuilder::InsertionGuard guard(b);
      auto writer = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
      b.setInsertionPointToStart(writer.thenBlock());
      Value chunk = balancedChunk(b, loc, splits, p.batch, p.keySeq, length);
      auto store = [&](OpBuilder &b, Location loc, Value at, Value offset) {
        Value v = arith::IndexCastOp::create(b, loc, b.getI32Type(), offset);
        memref::StoreOp::create(b, loc, v, offsets, at);
      };
      SmallVector<Value> total = scanWorkItems(
          b, loc, chunk, p.batch, length, {},
          [&](OpBuilder &b, Location loc, const SequenceItems &seq,
              ValueRange) -> SmallVector<Value> {
            store(b, loc, seq.batch, seq.first);
            return {};
          });
      store(b, loc, p.batch, total[0]);
    }
    Value rowTile = ix.div(ivs[2], ix.c(valueBlocks));
    Value valueBlock = ix.rem(ivs[2], ix.c(valueBlocks));
    Value kvHead = ix.div(rowTile, rowTiles);
    Value r0 = ix.mul(ix.rem(rowTile, rowTiles), ix.c(br));
    RowTile rows{batch, ix.mul(kvHead, group), r0,
                 ix.min(ix.c(br), ix.sub(packedRows, r0)), /*packed=*/true};

    Problem seq = p.forBatch(b, loc, batch);
    auto [partsBlock, lseRows] =
        restrictToValueBlock(b, loc, seq, valueBlocks, valueBlock, parts, rows);
    if (!balanced) {
      // Split s holds keys [s * chunk, (s + 1) * chunk), chunk = ceil(Sk /
      // N) (the sequence's own Sk with per-sequence key counts); a split
      // past Sk is empty and its loop runs no iteration.
      Value chunk = ix.ceilDiv(seq.keySeq, splits);
      splitBegin = ix.mul(split, chunk);
      splitEnd = ix.min(seq.keySeq, ix.add(splitBegin, chunk));
    }
    auto [iLo, iHi] = rows.queryRange(ix, seq);
    auto [jBegin, jEnd] = visibleKeys(ix, seq, iLo, iHi);
    SoftmaxState st =
        buildQueryTile(b, loc, seq, rows, kvHead, ix.max(jBegin, splitBegin),
                       ix.min(jEnd, splitEnd), config);

    // Consecutive tile rows may belong to different query heads.
    auto partRow = [&](OpBuilder &b, Location loc, Value r) {
      IndexMath ix{b, loc};
      auto [head, pos] = rows.coords(ix, p, r);
      return SmallVector<Value>{split, balanced ? ix.c(0) : batch, head, pos};
    };
    tileStore(b, loc,
              normalisedTile(
                  b, loc, st,
                  RankedTensorType::get({br, p.valueCols}, b.getF32Type())),
              partsBlock, rows.rows, partRow);
    tileStore(b, loc, lseTile(b, loc, st), lses, lseRows, partRow);
  }

  if (!config.destinations.empty())
    rewriter.eraseOp(op);
  else if (balanced)
    rewriter.replaceOp(
        op, {toTensorResult(b, loc, op.getPartialOutput().getType(), parts),
             toTensorResult(b, loc, op.getPartialLse().getType(), lses),
             toTensorResult(b, loc, op.getSplitOffsets().getType(), offsets)});
  else
    rewriter.replaceOp(
        op, {toTensorResult(b, loc, op.getPartialOutput().getType(), parts),
             toTensorResult(b, loc, op.getPartialLse().getType(), lses)});
  return success();
}
