//===- TileBackward.cpp - attention gradients as tiled loops --------------===//
//
// FlashAttention-2's backward pass by recomputation, from Q, K, V, O, dO and
// LSE only:
//
//   1. One pass over the query rows writes a 16-byte record of statistics
//      per row: LSE log2(e) and D = rowsum(dO * O).
//   2. For each key/value tile (and every query head of its group), a loop
//      over the query tiles that see it recomputes S, P = exp(S - LSE),
//      dP = dO V^T and dS = P * (dP - D), and accumulates
//      dV += P^T dO and dK += scale dS^T Q on chip.
//   3. dQ = scale dS K: by default its own loop nest over query tiles (a
//      loop over key/value tiles recomputing P and dS), so that every sum
//      has a fixed order; with `deterministic=false`, step 2 adds each
//      tile's contribution to an f32 buffer with atomic adds instead, and
//      with `orderedDq` it does so in a fixed order: the key tiles that see
//      a query tile take turns adding to its rows (buildKeyValueGrads).
//
// All three are in the tile form (attn.tile ops), as GPU kernels run
// them: step 2 with the scores transposed (keys as the tiles' rows), step
// 3 on the forward's K/V ring.
//
// With column blocks (AttnTileSizes::valueBlocks; a GPU kernel's past head
// dims of 256, whose dK and dV or dQ would not fit in registers), steps 2
// and 3 run once per block of the head dims' columns, a CTA each: every
// block recomputes S and dP from the whole tiles and accumulates and
// stores its own columns of dK and dV (dQ) only.
//
// A row with LSE = -inf (fully masked) has LSE log2(e) = +inf in its
// record, so that its P = exp2(S scale log2(e) - LSE log2(e)) is exactly 0
// with no select per score; padding query rows read +inf too in step 3;
// in step 2 their rows of the ring (Q, dO and the records) are zero-filled:
// their scores are 0 (with an additive mask their LSE log2(e) is taken as
// +inf), so their P^T is finite against dO's zero rows and dS^T is 0.
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
  /// The `[B, Hq, Sq, 4]` f32 row statistics (RecordField).
  Value rowStats;
};
} // namespace

/// The fields of a row's record in the `[B, Hq, Sq, 4]` f32 row statistics
/// (step 1 writes them, steps 2 and 3 read them; a GPU kernel copies a
/// record as one 16-byte chunk): LSE log2(e), +inf where LSE = -inf; D; two
/// zeros.
enum RecordField : int64_t { kLseLog2 = 0, kRowDot = 1, kRecordSize = 4 };

/// Field `field` of the record of query row `r` of `rows` in `rowStats`,
/// or `pad` for a row past the tile's: a scalar for a tile.map's region.
static Value rowStat(OpBuilder &b, Location loc, const Problem &p,
                     const RowTile &rows, Value rowStats, Value r,
                     RecordField field, double pad) {
  IndexMath ix{b, loc};
  auto [head, pos] = rows.coords(ix, p, r);
  Value v = memref::LoadOp::create(
      b, loc, rowStats, ValueRange{rows.batch, head, pos, ix.c(field)});
  return arith::SelectOp::create(
      b, loc, ix.cmp(arith::CmpIPredicate::slt, r, rows.rows), v,
      constF32(b, loc, pad));
}

/// P = exp2(S scale log2(e) - LSE log2(e)) of the unscaled score `s` and a
/// record's `lseLog2` (+inf: P = 0).
static Value probability(OpBuilder &b, Location loc, const Problem &p, Value s,
                         Value lseLog2) {
  Value arg = math::FmaOp::create(b, loc, s, p.scaleLog2,
                                  arith::NegFOp::create(b, loc, lseLog2));
  return math::Exp2Op::create(b, loc, arg);
}

/// dS = P (dP - D), through the score modification's derivative at the
/// unscaled score `rawScore` of tile row `r` and key `j` when there is one
/// (scoreModGrad), in the operands' element type (the A operand of the
/// products that follow).
static Value scoreGrad(OpBuilder &b, Location loc, const Problem &p,
                       const RowTile &rows, Value prob, Value dP, Value rowDot,
                       Value rawScore, Value r, Value j) {
  Value diff = arith::SubFOp::create(b, loc, dP, rowDot);
  Value grad = arith::MulFOp::create(b, loc, prob, diff);
  grad = scoreModGrad(b, loc, p, rows, grad, prob, rawScore, r, j);
  return fromF32(b, loc, grad, p.elementType);
}

/// The softmax scale, from scale log2(e).
static Value softmaxScale(OpBuilder &b, Location loc, const Problem &p) {
  return arith::DivFOp::create(b, loc, p.scaleLog2, constF32(b, loc, kLog2e));
}

/// The additive mask is added to the unscaled scores: times 1 / scale (in
/// log2 units). Null without one.
static Value additiveMaskScale(OpBuilder &b, Location loc, const Problem &p) {
  if (!p.mask || p.boolMask)
    return Value();
  return arith::DivFOp::create(b, loc, constF32(b, loc, kLog2e), p.scaleLog2);
}

/// The f32 tile `acc` times `scale` (none when null), converted to
/// `elementType`.
static Value scaledTile(OpBuilder &b, Location loc, Value acc, Value scale,
                        Type elementType) {
  auto accType = cast<RankedTensorType>(acc.getType());
  return tileMap(
      b, loc, RankedTensorType::get(accType.getShape(), elementType), {acc},
      [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
        Value v =
            scale ? Value(arith::MulFOp::create(b, loc, x[0], scale)) : x[0];
        return fromF32(b, loc, v, elementType);
      });
}

namespace {
/// One column block of a head dim in a gradient nest
/// (AttnTileSizes::valueBlocks, gradBlocking): the columns of the tiles
/// that its products read and of the result that it writes.
struct ColumnBlock {
  GradBlocking blocking;
  int64_t dim;
  /// The block's first column (a product with 16 or 8, or with the
  /// blocking's `align` where larger, so that a GPU kernel's view of a
  /// kernel parameter keeps whole 16-byte chunks, and one of a swizzled
  /// tile whole column blocks), and
  /// whether it is the last block; null with one block.
  Value first, isLast, block;

  ColumnBlock(IndexMath &ix, int64_t dim, int64_t cols, int64_t count,
              int64_t align, Value block)
      : blocking(gradBlocking(dim, cols, count, align)), dim(dim),
        block(block) {
    assert(blocking.valid && "the schedule checks the blocks");
    if (count == 1)
      return;
    first = firstOf(ix, ix.min(block, ix.c(count - 1)));
    isLast = ix.cmp(arith::CmpIPredicate::eq, block, ix.c(count - 1));
  }

  /// Tile columns per block (all of them with one block).
  int64_t width() const { return blocking.step; }

  /// The block's columns of `tile`, whose rows hold all the tile columns.
  Value view(OpBuilder &b, Location loc, Value tile) const {
    if (!first)
      return tile;
    return columnView(b, loc, tile, first, blocking.step);
  }

  /// Stores the block's columns `tile` (rows `[0, rows)`) into `out`, whose
  /// last dimension is the head dim. Where the last block's columns do not
  /// end at the head dim (one that is no multiple of 8), a block but the
  /// last writes all its columns, the last those up to the head dim: two
  /// stores, each of no rows in the other case, so that every view stays
  /// inside `out`.
  void store(OpBuilder &b, Location loc, Value tile, Value out, Value rows,
             RowIndices indices) const {
    if (!first) {
      tileStore(b, loc, tile, out, rows, indices);
      return;
    }
    int64_t step = blocking.step;
    if (blocking.lastWidth(dim) == step) {
      tileStore(b, loc, tile, columnView(b, loc, out, first, step), rows,
                indices);
      return;
    }
    IndexMath ix{b, loc};
    Value regular = firstOf(ix, ix.min(block, ix.c(blocking.count - 2)));
    tileStore(b, loc, tile, columnView(b, loc, out, regular, step),
              ix.select(isLast, ix.c(0), rows), indices);
    tileStore(b, loc, tile,
              columnView(b, loc, out, ix.c(blocking.lastFirst),
                         blocking.lastWidth(dim)),
              ix.select(isLast, rows, ix.c(0)), indices);
  }

private:
  /// min(c step, lastFirst) for a block c < count, a product with 16 or 8,
  /// or with `align` where larger.
  Value firstOf(IndexMath &ix, Value c) const {
    int64_t unit = std::max(
        blocking.align,
        blocking.lastFirst % kTileColumnStep ? int64_t(8) : kTileColumnStep);
    return ix.mul(ix.min(ix.mul(c, ix.c(blocking.step / unit)),
                         ix.c(blocking.lastFirst / unit)),
                  ix.c(unit));
  }
};

/// The Q and dO tiles the dK/dV loop streams past one key/value tile, and
/// the records of their rows: the query tiles of positions
/// `[iBegin, iEnd)` of every query head of the group of `kvHead`, head
/// after head. Step `n` goes to stage
/// `n mod stages` of a ring of each (the key/value ring's scheme, with the
/// roles of queries and keys swapped).
struct QueryRing {
  Value queries, gradOutputs, records;
  Value batch, kvHead, iBegin, iEnd;
  /// With a block mask: the key block whose lists are walked, and the
  /// query blocks.
  Value keyBlock, queryBlocks;
  /// Query tiles per head, and steps in all.
  Value tilesPerHead, numTiles;
  int64_t blockQ = 0, stages = 0;

  QueryRing(OpBuilder &b, Location loc, const GradProblem &g,
            const AttnTileConfig &config)
      : blockQ(config.sizes.blockQ), stages(config.sizes.stages), g(&g) {
    const Problem &p = g.p;
    queries = allocTile(b, loc, {stages, blockQ, p.headCols}, p.elementType,
                        config.memorySpace);
    gradOutputs = allocTile(b, loc, {stages, blockQ, p.valueCols},
                            p.elementType, config.memorySpace);
    records = allocTile(b, loc, {stages, blockQ, kRecordSize}, b.getF32Type(),
                        config.memorySpace);
  }

  /// Streams the query tiles of positions `[begin, end)`, or with a block
  /// mask those of the query blocks that key block `keyBlock` lists for
  /// each head: every head gets as many steps as the longest of the
  /// group's lists (a scalar loop over the group before the loop), the
  /// steps past a head's own entries are tiles without rows.
  void stream(OpBuilder &b, Location loc, Value batchIv, Value kvHeadIv,
              Value begin, Value end, Value keyBlock) {
    batch = batchIv;
    kvHead = kvHeadIv;
    iBegin = begin;
    iEnd = end;
    IndexMath ix{b, loc};
    const Problem &p = g->p;
    if (!p.maskBlockQ) {
      tilesPerHead =
          ix.ceilDiv(ix.max(ix.sub(iEnd, iBegin), ix.c(0)), ix.c(blockQ));
      numTiles = ix.mul(tilesPerHead, p.group);
      return;
    }
    this->keyBlock = keyBlock;
    queryBlocks = ix.ceilDiv(p.querySeq, ix.c(p.maskBlockQ));
    auto longest = scf::ForOp::create(
        b, loc, ix.c(0), p.group, ix.c(1), ValueRange{ix.c(0)},
        [&](OpBuilder &b, Location loc, Value h, ValueRange most) {
          IndexMath ix{b, loc};
          BlockWalk walk = walkOf(ix, ix.add(ix.mul(kvHead, p.group), h));
          scf::YieldOp::create(b, loc, ix.max(most[0], walk.total));
        });
    tilesPerHead = ix.mul(longest.getResult(0), ix.c(p.maskBlockQ / blockQ));
    numTiles = ix.mul(tilesPerHead, p.group);
  }

  /// The query rows of step `n`.
  RowTile rowsOf(IndexMath &ix, Value n) const {
    const Problem &p = g->p;
    Value head = ix.add(ix.mul(kvHead, p.group), ix.div(n, tilesPerHead));
    Value step = ix.rem(n, tilesPerHead);
    if (!p.maskBlockQ) {
      // The rows run to Sq, not to iEnd: the queries past iEnd that the
      // tile holds are real rows that the index masks hide from every key
      // (a GPU kernel's TMA box reads them; zero rows are not what it
      // gives there, and a row past `rows` would take the masks of row
      // `rows - 1`).
      Value q0 = ix.add(iBegin, ix.mul(step, ix.c(blockQ)));
      return RowTile{batch, head, q0,
                     ix.min(ix.c(blockQ), ix.sub(p.querySeq, q0)),
                     /*packed=*/false};
    }
    int64_t perBlock = p.maskBlockQ / blockQ;
    Value entry = ix.div(step, ix.c(perBlock));
    BlockWalk walk = walkOf(ix, head);
    Value q0 = ix.add(ix.mul(walk.block(ix, entry), ix.c(p.maskBlockQ)),
                      ix.mul(ix.rem(step, ix.c(perBlock)), ix.c(blockQ)));
    // A step past the head's entries, or a tile past Sq, has no rows; its
    // first row is Sq, so that the rows its index masks clamp to (the one
    // before) exist.
    Value valid = ix.andI(ix.cmp(arith::CmpIPredicate::slt, entry, walk.total),
                          ix.cmp(arith::CmpIPredicate::slt, q0, p.querySeq));
    Value rows =
        ix.select(valid, ix.min(ix.c(blockQ), ix.sub(p.querySeq, q0)), ix.c(0));
    return RowTile{batch, head, ix.select(valid, q0, p.querySeq), rows,
                   /*packed=*/false};
  }

  /// Whether the mask modification applies to step `n` (false on a block
  /// mask's full blocks); null where it applies to every step.
  Value maskModOn(IndexMath &ix, Value n) const {
    const Problem &p = g->p;
    if (!p.maskBlockQ || !p.maskMod)
      return Value();
    Value head = ix.add(ix.mul(kvHead, p.group), ix.div(n, tilesPerHead));
    Value entry = ix.div(ix.rem(n, tilesPerHead), ix.c(p.maskBlockQ / blockQ));
    return ix.cmp(arith::CmpIPredicate::slt, entry, walkOf(ix, head).partial);
  }

  /// Loads step `n`'s tiles into its stage when `n < numTiles`.
  void load(OpBuilder &b, Location loc, Value n) const {
    OpBuilder::InsertionGuard guard(b);
    beginIfLess(b, loc, n, numTiles);
    IndexMath ix{b, loc};
    const Problem &p = g->p;
    RowTile rows = rowsOf(ix, n);
    Value stage = ix.rem(n, ix.c(stages));
    auto queryRow = [&](OpBuilder &b, Location loc, Value r) {
      IndexMath ix{b, loc};
      return storedIndices(p.layout, rows.batch, rows.head,
                           ix.add(rows.rowBegin, r));
    };
    tileLoad(b, loc, p.query, ringStage(b, loc, queries, stage), rows.rows,
             queryRow);
    tileLoad(b, loc, g->gradOutput, ringStage(b, loc, gradOutputs, stage),
             rows.rows, queryRow);
    tileLoad(b, loc, g->rowStats, ringStage(b, loc, records, stage), rows.rows,
             [&](OpBuilder &b, Location loc, Value r) {
               IndexMath ix{b, loc};
               return SmallVector<Value>{rows.batch, rows.head,
                                         ix.add(rows.rowBegin, r)};
             });
  }

  Value queryStage(OpBuilder &b, Location loc, Value n) const {
    IndexMath ix{b, loc};
    return ringStage(b, loc, queries, ix.rem(n, ix.c(stages)));
  }
  Value gradOutputStage(OpBuilder &b, Location loc, Value n) const {
    IndexMath ix{b, loc};
    return ringStage(b, loc, gradOutputs, ix.rem(n, ix.c(stages)));
  }
  Value recordStage(OpBuilder &b, Location loc, Value n) const {
    IndexMath ix{b, loc};
    return ringStage(b, loc, records, ix.rem(n, ix.c(stages)));
  }

private:
  const GradProblem *g;

  /// The walk of the query blocks that `keyBlock` lists for `head`.
  BlockWalk walkOf(IndexMath &ix, Value head) const {
    return BlockWalk(ix, g->p.qBlocks, batch, head, keyBlock, queryBlocks);
  }
};
} // namespace

/// Step 1: the row statistics (RecordField) into `g.rowStats`, in the tile
/// form: per query tile a map whose region reads dO and O element by element
/// (f32 products) and a row sum for D, LSE log2(e) per row, and a store of
/// each field of the tile's rows. Where dQ is accumulated it also zeroes
/// the tile's rows of the accumulator `dqAcc` and, in the ordered mode,
/// their turn counters `turns`.
static void buildRowStats(OpBuilder &b, Location loc, const GradProblem &g,
                          const AttnTileConfig &config, Value dqAcc,
                          Value turns) {
  OpBuilder::InsertionGuard guard(b);
  const Problem &p = g.p;
  Type f32 = b.getF32Type();
  int64_t blockQ = config.sizes.blockQ;
  RowTile rows = beginQueryTileForall(b, loc, p, blockQ);
  setSchedule(b, config);
  // Over the padded columns (a GPU's fragments), which add zeros; past
  // kMaxValueBlockCols a block of columns at a time, summed into the rows'
  // sums (a 16-row tile of 256 f32 columns is 128 registers a thread: the
  // whole rows at Dv = 512 spilled 312 bytes).
  auto rowType = RankedTensorType::get({blockQ}, f32);
  Value sums;
  for (int64_t c0 = 0; c0 < p.valueCols; c0 += kMaxValueBlockCols) {
    int64_t width = std::min(kMaxValueBlockCols, p.valueCols - c0);
    Value products = tileMap(
        b, loc, RankedTensorType::get({blockQ, width}, f32), ValueRange(),
        [&](OpBuilder &b, Location loc, ValueRange idx, ValueRange) {
          IndexMath ix{b, loc};
          // Rows past the tile's read its last row; they are not stored.
          auto [head, pos] = rows.coords(ix, p, idx[0]);
          SmallVector<Value> at =
              storedIndices(p.layout, rows.batch, head, pos);
          Value col = c0 ? ix.add(idx[1], ix.c(c0)) : idx[1];
          Value inRow =
              ix.cmp(arith::CmpIPredicate::ult, col, ix.c(p.dims.valueDim));
          at.push_back(ix.select(inRow, col, ix.c(0)));
          Value dO = memref::LoadOp::create(b, loc, g.gradOutput, at);
          Value o = memref::LoadOp::create(b, loc, g.output, at);
          Value product = arith::MulFOp::create(b, loc, toF32(b, loc, dO),
                                                toF32(b, loc, o));
          return Value(arith::SelectOp::create(b, loc, inRow, product,
                                               constF32(b, loc, 0.0)));
        });
    if (!sums)
      sums = splat(b, loc, rowType, 0.0);
    sums = tileReduce(b, loc, TileReduceKind::Add, products, sums);
  }
  Value lseLog2 = tileMap(
      b, loc, rowType, ValueRange(),
      [&](OpBuilder &b, Location loc, ValueRange idx, ValueRange) {
        IndexMath ix{b, loc};
        auto [head, pos] = rows.coords(ix, p, idx[0]);
        Value lse = memref::LoadOp::create(b, loc, g.lse,
                                           ValueRange{rows.batch, head, pos});
        Value dead = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                           lse, negInf(b, loc));
        return Value(arith::SelectOp::create(
            b, loc, dead, constF32(b, loc, INFINITY),
            arith::MulFOp::create(b, loc, lse, constF32(b, loc, kLog2e))));
      });
  Value zeros = splat(b, loc, rowType, 0.0);
  Value fields[kRecordSize] = {lseLog2, sums, zeros, zeros};
  for (auto [field, value] : llvm::enumerate(fields))
    tileStore(b, loc, value, g.rowStats, rows.rows,
              [&](OpBuilder &b, Location loc, Value r) {
                IndexMath ix{b, loc};
                return SmallVector<Value>{rows.batch, rows.head,
                                          ix.add(rows.rowBegin, r),
                                          ix.c(field)};
              });
  if (dqAcc)
    tileStore(b, loc,
              splat(b, loc, RankedTensorType::get({blockQ, p.headCols}, f32),
                    0.0),
              dqAcc, rows.rows, [&](OpBuilder &b, Location loc, Value r) {
                IndexMath ix{b, loc};
                return SmallVector<Value>{rows.batch, rows.head,
                                          ix.add(rows.rowBegin, r)};
              });
  if (turns) {
    // Scalar stores (the counters are i32; register tiles are floats).
    IndexMath ix{b, loc};
    Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
    Value r = beginFor(b, loc, ix.c(0), rows.rows, ix.c(1));
    memref::StoreOp::create(
        b, loc, zero, turns,
        ValueRange{rows.batch, rows.head, ix.add(rows.rowBegin, r)});
  }
}

/// Columns `[c0, c0 + width)` of the `[B, Hq, Sq, D]` dQ accumulator.
static Value dqColumns(OpBuilder &b, Location loc, Value dqAcc, int64_t c0,
                       int64_t width) {
  auto type = cast<MemRefType>(dqAcc.getType());
  if (c0 == 0 && width == type.getDimSize(3))
    return dqAcc;
  SmallVector<OpFoldResult> offsets(3, b.getIndexAttr(0));
  offsets.push_back(b.getIndexAttr(c0));
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < 3; ++i)
    sizes.push_back(memref::getMixedSize(b, loc, dqAcc, i));
  sizes.push_back(b.getIndexAttr(width));
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  return memref::SubViewOp::create(b, loc, dqAcc, offsets, sizes, strides);
}

/// Step 2: dK and dV per key/value tile (forall over batch, key/value head,
/// key tile), in the tile form with the scores transposed so that the
/// keys are the register tiles' rows: K and V stay in memory tiles while
/// the Q and dO tiles of every query head of the group stream past through
/// a ring; per query tile S^T = K Q^T, P^T (LSE read per column in the
/// map's region), dP^T = V dO^T, dS^T = P^T (dP^T - D), then
/// dV += P^T dO and dK += dS^T Q; dK is scaled once, after the loop.
/// `dqAcc` is the `[B, Hq, Sq, D]` f32 dQ accumulator of the
/// non-deterministic and ordered modes, or null: there each step stages
/// dS^T in memory and adds its dQ to it, as the product K^T dS^T (dQ^T,
/// stored transposed) where the head columns fill a GPU CTA's rows.
///
/// The ordered mode (`turns`, the `[B, Hq, Sq]` i32 turn counters) fixes
/// the order in which the key tiles add to a query tile's rows, so that dQ
/// is bitwise reproducible (FlashAttention-3's deterministic backward):
/// - the query tiles start on multiples of block-q (the first one reaching
///   back to one), so that every key tile's tiles are the same rows;
/// - the key tiles that see query tile t are consecutive ones, and they
///   add in the order the forall runs them: ascending without causal
///   (every key tile starts at query tile 0), descending with it (a key
///   tile's loop starts at its diagonal, so the key tile after it reached
///   t first); the forall's index runs the key tiles in that order, so
///   that a GPU CTA only ever waits for CTAs launched before it;
/// - before adding to t, a key tile j whose predecessor in that order
///   also sees t awaits the predecessor's code (its key tile + 1) in t's
///   first row's counter, and it passes its own code there once its
///   additions are complete: one step later (at the next query tile's
///   addition, or after the loop), by when a GPU's bulk reductions have
///   long finished. Each key tile so runs a step behind the one before it
///   where a wave of CTAs starts them together (docs/GPU.md measures what
///   the turns cost).
static void buildKeyValueGrads(OpBuilder &b, Location loc, const GradProblem &g,
                               const AttnTileConfig &config, Value gradKey,
                               Value gradValue, Value dqAcc, Value turns) {
  OpBuilder::InsertionGuard guard(b);
  const Problem &p = g.p;
  const AttentionDims &d = p.dims;
  IndexMath ix{b, loc};
  int64_t br = config.sizes.blockQ, bc = config.sizes.blockKV;
  int64_t stages = config.sizes.stages;
  Type f32 = b.getF32Type();
  // With column blocks, a CTA per key tile and block, the blocks of a key
  // tile consecutive (they read the same tiles).
  int64_t blocks = config.sizes.valueBlocks;
  assert((blocks == 1 || !dqAcc) &&
         "the schedule keeps the atomic mode to one block");
  Value keyTiles = ix.ceilDiv(p.keySeq, ix.c(bc));
  SmallVector<Value> ivs = beginForall(
      b, loc,
      {p.batch, p.kvHeads,
       blocks > 1 ? ix.mul(keyTiles, ix.c(blocks)) : keyTiles},
      {gpu::MappingId::DimZ, gpu::MappingId::DimY, gpu::MappingId::DimX});
  setSchedule(b, config);
  Value batch = ivs[0], kvHead = ivs[1];
  Value keyTile = ivs[2], block;
  if (blocks > 1) {
    keyTile = ix.div(ivs[2], ix.c(blocks));
    block = ix.rem(ivs[2], ix.c(blocks));
  }
  bool descending = turns && p.causal != CausalKind::None;
  if (descending)
    keyTile = ix.sub(ix.sub(keyTiles, ix.c(1)), keyTile);
  ColumnBlock keyBlock(ix, d.headDim, p.headCols, blocks,
                       config.sizes.headBlockAlign, block);
  ColumnBlock valueBlock(ix, d.valueDim, p.valueCols, blocks,
                         config.sizes.valueBlockAlign, block);
  Value j0 = ix.mul(keyTile, ix.c(bc));
  Value cols = ix.min(ix.c(bc), ix.sub(p.keySeq, j0));
  Value jEnd = ix.add(j0, cols);

  Value kTile =
      allocTile(b, loc, {bc, p.headCols}, p.elementType, config.memorySpace);
  Value vTile =
      allocTile(b, loc, {bc, p.valueCols}, p.elementType, config.memorySpace);
  QueryRing ring(b, loc, g, config);
  Value dsTile;
  if (dqAcc)
    dsTile = allocTile(b, loc, {bc, br}, p.elementType, config.memorySpace);
  auto keyRow = [&](OpBuilder &b, Location loc, Value r) {
    IndexMath ix{b, loc};
    return storedIndices(p.layout, batch, kvHead, ix.add(j0, r));
  };
  tileLoad(b, loc, p.key, kTile, cols, keyRow);
  tileLoad(b, loc, p.value, vTile, cols, keyRow);
  // Only the query tiles that can see a key of a key tile are visited
  // (in the ordered mode from a multiple of block-q on).
  auto visited = [&](Value tile) -> std::pair<Value, Value> {
    Value first = ix.mul(tile, ix.c(bc));
    Value last = ix.sub(ix.min(p.keySeq, ix.add(first, ix.c(bc))), ix.c(1));
    auto [begin, end] = visibleQueries(ix, p, first, last);
    if (turns)
      begin = ix.select(ix.cmp(arith::CmpIPredicate::slt, begin, end),
                        ix.mul(ix.div(begin, ix.c(br)), ix.c(br)), begin);
    return {begin, end};
  };
  auto [iBegin, iEnd] = visited(keyTile);
  ring.stream(b, loc, batch, kvHead, iBegin, iEnd,
              p.maskBlockK ? ix.div(j0, ix.c(p.maskBlockK)) : Value());
  // The ordered mode: the key tile before this one in the order, whether
  // it exists, and the query rows it visits.
  Value before, beforeExists, beforeBegin, beforeEnd;
  if (turns) {
    before = descending ? ix.add(keyTile, ix.c(1)) : ix.sub(keyTile, ix.c(1));
    beforeExists =
        descending ? ix.cmp(arith::CmpIPredicate::slt, before, keyTiles)
                   : ix.cmp(arith::CmpIPredicate::sgt, keyTile, ix.c(0));
    // (Clamped, so that the index math stays in range where it is not.)
    std::tie(beforeBegin, beforeEnd) =
        visited(ix.select(beforeExists, before, keyTile));
  }
  // A key tile's code in the turn counters.
  auto codeOf = [&](IndexMath &ix, Value tile) { return ix.add(tile, ix.c(1)); };
  auto turnAt = [&](const RowTile &rows) {
    return SmallVector<Value>{rows.batch, rows.head, rows.rowBegin};
  };
  for (int64_t n = 0; n < stages - 1; ++n)
    ring.load(b, loc, ix.c(n));
  Value maskScale = additiveMaskScale(b, loc, p);

  auto scoreType = RankedTensorType::get({bc, br}, f32);
  auto dkType = RankedTensorType::get({bc, keyBlock.width()}, f32);
  auto dvType = RankedTensorType::get({bc, valueBlock.width()}, f32);
  auto loop = scf::ForOp::create(
      b, loc, ix.c(0), ring.numTiles, ix.c(1),
      ValueRange{splat(b, loc, dkType, 0.0), splat(b, loc, dvType, 0.0)});
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value n = loop.getInductionVar();
    IndexMath ix{b, loc};
    ring.load(b, loc, ix.add(n, ix.c(stages - 1)));
    RowTile rows = ring.rowsOf(ix, n);
    Value qStage = ring.queryStage(b, loc, n);
    Value doStage = ring.gradOutputStage(b, loc, n);
    Value recStage = ring.recordStage(b, loc, n);
    // A field of query (column) c's record, from the ring.
    auto recordField = [&](OpBuilder &b, Location loc, Value c,
                           RecordField field) {
      IndexMath ix{b, loc};
      return memref::LoadOp::create(b, loc, recStage,
                                    ValueRange{c, ix.c(field)})
          .getResult();
    };
    Value sT = TileMatmulOp::create(b, loc, scoreType, kTile, qStage,
                                    splat(b, loc, scoreType, 0.0),
                                    /*transpose_rhs=*/b.getUnitAttr())
                   .getResult();
    // With the schedule's `overlap`, dP^T is issued before anything reads
    // S^T: on sm_90a the masks and exponentials then run while the tensor
    // cores compute dP^T (wgmma is asynchronous; the lowering waits where a
    // product is first read), at the cost of registers.
    auto scoreGradOut = [&] {
      return TileMatmulOp::create(b, loc, scoreType, vTile, doStage,
                                  splat(b, loc, scoreType, 0.0),
                                  /*transpose_rhs=*/b.getUnitAttr())
          .getResult();
    };
    Value dPT = config.sizes.overlap ? scoreGradOut() : Value();
    Value rawT = sT;
    sT = maskedScores(b, loc, p, rows, sT, j0, jEnd, bc, /*slices=*/1,
                      maskScale, /*keyRows=*/true, ring.maskModOn(ix, n));
    Value probsT =
        tileMap(b, loc, scoreType, {sT},
                [&](OpBuilder &b, Location loc, ValueRange idx, ValueRange x) {
                  Value lse = recordField(b, loc, idx[1], kLseLog2);
                  // A padding query's record is zero-filled and its score
                  // is 0 plus, with an additive mask, the tile's last
                  // row's mask, which could overflow P to inf against dO's
                  // zero row: +inf keeps its P at 0 there.
                  if (maskScale) {
                    IndexMath ix{b, loc};
                    lse = arith::SelectOp::create(
                        b, loc,
                        ix.cmp(arith::CmpIPredicate::slt, idx[1], rows.rows),
                        lse, constF32(b, loc, INFINITY));
                  }
                  return probability(b, loc, p, x[0], lse);
                });
    if (!dPT)
      dPT = scoreGradOut();
    auto operandType = RankedTensorType::get({bc, br}, p.elementType);
    // With a score modification the map also reads the unscaled scores.
    SmallVector<Value> dsInputs = {probsT, dPT};
    if (p.scoreMod)
      dsInputs.push_back(rawT);
    Value dST =
        tileMap(b, loc, operandType, dsInputs,
                [&](OpBuilder &b, Location loc, ValueRange idx, ValueRange x) {
                  IndexMath ix{b, loc};
                  return scoreGrad(b, loc, p, rows, x[0], x[1],
                                   recordField(b, loc, idx[1], kRowDot),
                                   p.scoreMod ? x[2] : Value(), idx[1],
                                   ix.add(j0, idx[0]));
                });
    Value pT = scaledTile(b, loc, probsT, Value(), p.elementType);
    Value dV = TileMatmulOp::create(b, loc, dvType, pT,
                                    valueBlock.view(b, loc, doStage),
                                    loop.getRegionIterArgs()[1],
                                    /*transpose_rhs=*/UnitAttr())
                   .getResult();
    Value dK = TileMatmulOp::create(b, loc, dkType, dST,
                                    keyBlock.view(b, loc, qStage),
                                    loop.getRegionIterArgs()[0],
                                    /*transpose_rhs=*/UnitAttr())
                   .getResult();
    if (dqAcc) {
      // dQ[r, :] += scale sum_c dS^T[c, r] K[c, :], added to the shared
      // accumulator (its rows past the tile's are not stored), in chunks of
      // head columns (gradDqProduct): as dQ^T = K^T dS^T, the chunk's
      // columns the product's rows, or as dQ = dS K. (Issued before dV's
      // and dK's products, so that its reduction would overlap them on
      // sm_90a, the first chunk measured 0.96x to 0.98x the speed at
      // D = 128 on an H200, 1.05x at D = 64; dK's product issued after the
      // first chunk's, so that it would overlap the stage's stores and
      // reduction, 0.99x to 1.01x: docs/GPU.md.)
      tileStore(
          b, loc, dST, dsTile, ix.c(bc),
          [](OpBuilder &, Location, Value r) { return SmallVector<Value>{r}; });
      GradDqProduct dq = gradDqProduct(p.headCols, config.sizes.warps);
      for (int64_t c0 = 0; c0 < p.headCols; c0 += dq.width) {
        // The ordered mode takes its turn just before the first addition
        // (the product of the first chunk already issued): it passes the
        // previous step's turn on, then awaits this one's.
        auto takeTurn = [&] {
          OpBuilder::InsertionGuard guard(b);
          IndexMath ix{b, loc};
          beginIfLess(b, loc, ix.c(0), n);
          {
            IndexMath ix{b, loc};
            RowTile prev = ring.rowsOf(ix, ix.sub(n, ix.c(1)));
            TilePassTurnOp::create(b, loc, turns, turnAt(prev),
                                   codeOf(ix, keyTile));
          }
          b.setInsertionPointAfter(b.getInsertionBlock()->getParentOp());
          Value t0 = rows.rowBegin;
          Value waits = ix.andI(
              beforeExists,
              ix.andI(ix.cmp(arith::CmpIPredicate::sle, beforeBegin, t0),
                      ix.cmp(arith::CmpIPredicate::slt, t0, beforeEnd)));
          auto ifWaits = scf::IfOp::create(b, loc, waits, false);
          b.setInsertionPointToStart(ifWaits.thenBlock());
          IndexMath tx{b, loc};
          TileAwaitTurnOp::create(b, loc, turns, turnAt(rows),
                                  codeOf(tx, before));
        };
        int64_t width = std::min(dq.width, p.headCols - c0);
        Value kCols = width == p.headCols
                          ? kTile
                          : memref::SubViewOp::create(
                                b, loc, kTile,
                                ArrayRef<OpFoldResult>{b.getIndexAttr(0),
                                                       b.getIndexAttr(c0)},
                                ArrayRef<OpFoldResult>{b.getIndexAttr(bc),
                                                       b.getIndexAttr(width)},
                                ArrayRef<OpFoldResult>{b.getIndexAttr(1),
                                                       b.getIndexAttr(1)});
        auto dqType =
            RankedTensorType::get(dq.transposed ? ArrayRef<int64_t>{width, br}
                                                : ArrayRef<int64_t>{br, width},
                                  f32);
        Value part =
            TileMatmulOp::create(b, loc, dqType, dq.transposed ? kCols : dsTile,
                                 dq.transposed ? dsTile : kCols,
                                 splat(b, loc, dqType, 0.0),
                                 /*transpose_rhs=*/UnitAttr(),
                                 /*transpose_lhs=*/b.getUnitAttr())
                .getResult();
        part = scaledTile(b, loc, part, softmaxScale(b, loc, p), f32);
        if (turns && c0 == 0)
          takeTurn();
        auto store = TileStoreOp::create(
            b, loc, part,
            dqColumns(b, loc, dqAcc, c0, std::min(width, d.headDim - c0)),
            rows.rows,
            /*accumulate=*/b.getUnitAttr(),
            /*transpose=*/dq.transposed ? b.getUnitAttr() : UnitAttr());
        OpBuilder::InsertionGuard regionGuard(b);
        Block *block =
            b.createBlock(&store.getIndices(), {}, {b.getIndexType()}, {loc});
        IndexMath rx{b, loc};
        TileYieldOp::create(
            b, loc,
            ValueRange{rows.batch, rows.head,
                       rx.add(rows.rowBegin, block->getArgument(0))});
      }
    }
    scf::YieldOp::create(b, loc, ValueRange{dK, dV});
  }
  if (turns) {
    // The last step's turn.
    OpBuilder::InsertionGuard guard(b);
    beginIfLess(b, loc, ix.c(0), ring.numTiles);
    IndexMath ix{b, loc};
    RowTile last = ring.rowsOf(ix, ix.sub(ring.numTiles, ix.c(1)));
    TilePassTurnOp::create(b, loc, turns, turnAt(last), codeOf(ix, keyTile));
  }
  Value dK = scaledTile(b, loc, loop.getResult(0), softmaxScale(b, loc, p),
                        p.elementType);
  Value dV = scaledTile(b, loc, loop.getResult(1), Value(), p.elementType);
  keyBlock.store(b, loc, dK, gradKey, cols, keyRow);
  valueBlock.store(b, loc, dV, gradValue, cols, keyRow);
}

/// Step 3 (deterministic): dQ, one query tile per loop iteration, in the
/// tile form (attn.tile ops, as the forward): Q and dO stay in memory tiles
/// while the K/V tiles stream past them through the forward's ring; per
/// key/value tile S = Q K^T, P, dP = dO V^T, dS = P (dP - D) and
/// dQ += dS K (dS the product's A operand); dQ is scaled once, after the
/// loop.
static void buildQueryGrads(OpBuilder &b, Location loc, const GradProblem &g,
                            const AttnTileConfig &config, Value gradQuery) {
  OpBuilder::InsertionGuard guard(b);
  const Problem &p = g.p;
  IndexMath ix{b, loc};
  int64_t br = config.sizes.blockQ, bc = config.sizes.blockKV;
  int64_t stages = config.sizes.stages;
  Type f32 = b.getF32Type();
  // With column blocks, a CTA per query tile and block of dQ's columns.
  int64_t blocks = config.sizes.valueBlocks;
  Value block;
  RowTile rows = beginQueryTileForall(b, loc, p, br, /*seq=*/nullptr, blocks,
                                      blocks > 1 ? &block : nullptr);
  setSchedule(b, config);
  ColumnBlock keyBlock(ix, p.dims.headDim, p.headCols, blocks,
                       config.sizes.headBlockAlign, block);
  auto [iLo, iHi] = rows.queryRange(ix, p);
  auto [jBegin, jEnd] = visibleKeys(ix, p, iLo, iHi);
  Value kvHead = ix.div(rows.head, p.group);

  Value qTile =
      allocTile(b, loc, {br, p.headCols}, p.elementType, config.memorySpace);
  Value doTile =
      allocTile(b, loc, {br, p.valueCols}, p.elementType, config.memorySpace);
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

  // LSE (in log2 units) and D of each row, read once.
  auto rowType = RankedTensorType::get({br}, f32);
  auto rowTile = [&](RecordField field, double pad) {
    return tileMap(b, loc, rowType, ValueRange(),
                   [&](OpBuilder &b, Location loc, ValueRange idx, ValueRange) {
                     return rowStat(b, loc, p, rows, g.rowStats, idx[0], field,
                                    pad);
                   });
  };
  Value lseLog2 = rowTile(kLseLog2, INFINITY);
  Value dRow = rowTile(kRowDot, 0.0);
  Value maskScale = additiveMaskScale(b, loc, p);

  auto scoreType = RankedTensorType::get({br, bc}, f32);
  auto dqType = RankedTensorType::get({br, keyBlock.width()}, f32);
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
    // With `overlap`, issued before anything reads S (as in the dK/dV
    // nest).
    auto scoreGradOut = [&] {
      return TileMatmulOp::create(b, loc, scoreType, doTile,
                                  ring.valueStage(b, loc, n),
                                  splat(b, loc, scoreType, 0.0),
                                  /*transpose_rhs=*/b.getUnitAttr())
          .getResult();
    };
    Value dP = config.sizes.overlap ? scoreGradOut() : Value();
    Value raw = s;
    s = maskedScores(b, loc, p, rows, s, j0, jEnd, bc, /*slices=*/1, maskScale,
                     /*keyRows=*/false, ring.maskModOn(ix, n));
    Value probs =
        tileMap(b, loc, scoreType, {s, lseLog2},
                [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
                  return probability(b, loc, p, x[0], x[1]);
                });
    if (!dP)
      dP = scoreGradOut();
    SmallVector<Value> dsInputs = {probs, dP, dRow};
    if (p.scoreMod)
      dsInputs.push_back(raw);
    Value dS = tileMap(
        b, loc, RankedTensorType::get({br, bc}, p.elementType), dsInputs,
        [&](OpBuilder &b, Location loc, ValueRange idx, ValueRange x) {
          IndexMath ix{b, loc};
          return scoreGrad(b, loc, p, rows, x[0], x[1], x[2],
                           p.scoreMod ? x[3] : Value(), idx[0],
                           ix.add(j0, idx[1]));
        });
    Value dQ = TileMatmulOp::create(b, loc, dqType, dS,
                                    keyBlock.view(b, loc, kStage),
                                    loop.getRegionIterArgs()[0],
                                    /*transpose_rhs=*/UnitAttr())
                   .getResult();
    scf::YieldOp::create(b, loc, dQ);
  }
  Value dQ = scaledTile(b, loc, loop.getResult(0), softmaxScale(b, loc, p),
                        p.elementType);
  keyBlock.store(b, loc, dQ, gradQuery, rows.rows,
                 [&](OpBuilder &b, Location loc, Value r) {
                   IndexMath ix{b, loc};
                   return storedIndices(p.layout, rows.batch, rows.head,
                                        ix.add(rows.rowBegin, r));
                 });
}

/// Non-deterministic mode: dQ from the f32 accumulator, per query tile a
/// map that loads it and converts, and a store.
static void storeAccumulatedQueryGrads(OpBuilder &b, Location loc,
                                       const Problem &p,
                                       const AttnTileConfig &config,
                                       Value dqAcc, Value gradQuery) {
  OpBuilder::InsertionGuard guard(b);
  int64_t blockQ = config.sizes.blockQ;
  RowTile rows = beginQueryTileForall(b, loc, p, blockQ);
  setSchedule(b, config);
  // Over the padded columns, which the store drops (they read column 0).
  Value dQ = tileMap(
      b, loc, RankedTensorType::get({blockQ, p.headCols}, p.elementType),
      ValueRange(),
      [&](OpBuilder &b, Location loc, ValueRange idx, ValueRange) {
        IndexMath ix{b, loc};
        auto [head, pos] = rows.coords(ix, p, idx[0]);
        Value inRow =
            ix.cmp(arith::CmpIPredicate::ult, idx[1], ix.c(p.dims.headDim));
        Value v = memref::LoadOp::create(
            b, loc, dqAcc,
            ValueRange{rows.batch, head, pos,
                       ix.select(inRow, idx[1], ix.c(0))});
        return fromF32(b, loc, v, p.elementType);
      });
  tileStore(b, loc, dQ, gradQuery, rows.rows,
            [&](OpBuilder &b, Location loc, Value r) {
              IndexMath ix{b, loc};
              return storedIndices(p.layout, rows.batch, rows.head,
                                   ix.add(rows.rowBegin, r));
            });
}

LogicalResult tile::tileAttentionGrad(RewriterBase &rewriter,
                                      AttentionGradOp op,
                                      const AttnTileConfig &config) {
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  GradProblem g;
  g.p = getProblem(b, loc, op, config.sizes, ProblemForm::Kernel);
  g.output = toReadOnlyBuffer(b, loc, op.getOutput());
  g.gradOutput = toReadOnlyBuffer(b, loc, op.getGradOutput());
  g.lse = toReadOnlyBuffer(b, loc, op.getLse());
  const Problem &p = g.p;
  const AttentionDims &d = p.dims;
  IndexMath ix{b, loc};
  // A block mask lists a key tile's query tiles, which then need not be
  // one range: the order of buildKeyValueGrads does not hold.
  if (config.orderedDq && p.maskBlockQ)
    return op.emitOpError("attn-tile: the ordered dQ mode needs each key "
                          "tile's query tiles to be one range; with a block "
                          "mask, use the recomputed or the atomic dQ");

  auto stored = [&](Value heads, Value seq, int64_t last) {
    SmallVector<Value> sizes = {p.batch, heads, seq, ix.c(last)};
    if (p.layout == Layout::BSHD)
      std::swap(sizes[1], sizes[2]);
    return sizes;
  };
  Value hq = p.queryHeads, hkv = p.kvHeads;
  Value gradQuery, gradKey, gradValue;
  if (config.destinations.empty()) {
    gradQuery = allocResult(b, loc, op.getGradQuery().getType(),
                            stored(hq, p.querySeq, d.headDim));
    gradKey = allocResult(b, loc, op.getGradKey().getType(),
                          stored(hkv, p.keySeq, d.headDim));
    gradValue = allocResult(b, loc, op.getGradValue().getType(),
                            stored(hkv, p.keySeq, d.valueDim));
  } else {
    gradQuery = config.destinations[0];
    gradKey = config.destinations[1];
    gradValue = config.destinations[2];
  }

  Type f32 = b.getF32Type();
  g.rowStats = config.rowStats;
  if (!g.rowStats)
    g.rowStats =
        allocResult(b, loc,
                    RankedTensorType::get(
                        {d.batch, d.queryHeads, d.querySeq, kRecordSize}, f32),
                    {p.batch, hq, p.querySeq, ix.c(kRecordSize)});
  auto writes = [&](GradNest nest) {
    return !config.gradNest || *config.gradNest == nest;
  };
  // The dQ accumulator of the non-deterministic and ordered modes: step 1
  // zeroes it, step 2 adds to it, step 3 converts it.
  Value dqAcc = config.dqAccum;
  if (config.accumulatesDq() && !dqAcc)
    dqAcc =
        allocResult(b, loc,
                    RankedTensorType::get(
                        {d.batch, d.queryHeads, d.querySeq, d.headDim}, f32),
                    {p.batch, hq, p.querySeq, ix.c(d.headDim)});
  Value turns = config.dqTurns;
  if (config.orderedDq && !turns)
    turns = allocResult(
        b, loc,
        RankedTensorType::get({d.batch, d.queryHeads, d.querySeq},
                              b.getI32Type()),
        {p.batch, hq, p.querySeq});
  if (writes(GradNest::RowStats))
    buildRowStats(b, loc, g, config, dqAcc, turns);
  if (writes(GradNest::KeyValue))
    buildKeyValueGrads(b, loc, g, config, gradKey, gradValue, dqAcc, turns);
  if (writes(GradNest::Query)) {
    if (dqAcc)
      storeAccumulatedQueryGrads(b, loc, p, config, dqAcc, gradQuery);
    else
      buildQueryGrads(b, loc, g, config, gradQuery);
  }

  if (!config.destinations.empty()) {
    rewriter.eraseOp(op);
    return success();
  }
  rewriter.replaceOp(
      op, {toTensorResult(b, loc, op.getGradQuery().getType(), gradQuery),
           toTensorResult(b, loc, op.getGradKey().getType(), gradKey),
           toTensorResult(b, loc, op.getGradValue().getType(), gradValue)});
  return success();
}
