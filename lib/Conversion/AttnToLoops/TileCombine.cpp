//===- TileCombine.cpp - split-KV combine as tiled loops ------------------===//
//
// The second half of Flash-Decoding: every (batch, head, query) row merges
// its splits by their log-sum-exp, O = sum_s w_s O_s / sum_s w_s with
// w_s = exp(LSE_s - max_s LSE_s), in one online pass over the splits. A split with LSE = -inf (empty or fully
// masked) gets weight 0; a row whose splits are all empty gets O = 0 and
// LSE = -inf. The rows (B x Hq x Sq of them, flattened) go in tiles of
// block_q rows by block_kv columns; each tile reads its part of every split
// straight into register tiles (a map that loads), so the same loop nest is
// the CPU's loops and a GPU's kernel.
//
//===----------------------------------------------------------------------===//

#include "TileCommon.h"

#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::tile;

LogicalResult tile::tileCombine(RewriterBase &rewriter, CombineOp op,
                                const AttnTileConfig &config) {
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  IndexMath ix{b, loc};
  Value parts = toReadOnlyBuffer(b, loc, op.getPartialOutput());
  Value lses = toReadOnlyBuffer(b, loc, op.getPartialLse());
  auto dimOf = [&](int64_t i) -> Value {
    return memref::DimOp::create(b, loc, parts, i);
  };
  Value splits = dimOf(0), batch = dimOf(1), heads = dimOf(2),
        querySeq = dimOf(3);
  // With split_offsets the splits are the batch's work items [W, 1, ...],
  // sequence b's [split_offsets[b], split_offsets[b + 1]).
  Value offsets;
  if (op.getSplitOffsets()) {
    offsets = toReadOnlyBuffer(b, loc, op.getSplitOffsets());
    batch = ix.sub(memref::DimOp::create(b, loc, offsets, 0), ix.c(1));
  }
  int64_t dv = cast<MemRefType>(parts.getType()).getDimSize(4);
  Layout layout = op.getLayout();
  Type f32 = b.getF32Type();

  Value out, lse;
  if (!config.destinations.empty()) {
    out = config.destinations[0];
    lse = config.destinations.size() > 1 ? config.destinations[1] : Value();
  } else {
    SmallVector<Value> oSizes = {batch, heads, querySeq, ix.c(dv)};
    if (layout == Layout::BSHD)
      std::swap(oSizes[1], oSizes[2]);
    out = allocResult(b, loc, op.getOutput().getType(), oSizes);
    if (op.getLse())
      lse = allocResult(b, loc, op.getLse().getType(),
                        {batch, heads, querySeq});
  }

  {
    OpBuilder::InsertionGuard guard(b);
    int64_t br = config.sizes.blockQ, bc = config.sizes.blockKV;
    // Column tiles of bc, the last one ragged where bc does not divide Dv:
    // its columns past Dv read as zeros and the store drops them.
    int64_t colTiles = llvm::divideCeil(dv, bc), tail = dv % bc;
    Value total = ix.mul(ix.mul(batch, heads), querySeq);
    SmallVector<Value> ivs =
        beginForall(b, loc, {ix.ceilDiv(total, ix.c(br)), ix.c(colTiles)},
                    {gpu::MappingId::DimX, gpu::MappingId::DimY});
    setSchedule(b, config);
    Value r0 = ix.mul(ivs[0], ix.c(br));
    Value c0 = ix.mul(ivs[1], ix.c(bc));
    Value rows = ix.min(ix.c(br), ix.sub(total, r0));
    // (batch, head, query) of tile row r; rows past `rows` read the last.
    auto coords = [&](IndexMath &ix, Value r) {
      Value flat = ix.add(r0, ix.min(r, ix.sub(rows, ix.c(1))));
      Value i = ix.rem(flat, querySeq);
      Value bh = ix.div(flat, querySeq);
      return std::array<Value, 3>{ix.div(bh, heads), ix.rem(bh, heads), i};
    };
    auto rowType = RankedTensorType::get({br}, f32);
    auto accType = RankedTensorType::get({br, bc}, f32);
    // Split s of a row's sequence: work item s of its own with offsets
    // (LSE -inf on another sequence's item).
    auto partIndices = [&](IndexMath &ix, Value s, Value bi, Value h,
                           Value i) -> SmallVector<Value> {
      return {s, offsets ? ix.c(0) : bi, h, i};
    };
    auto splitLse = [&](OpBuilder &b, Location loc, Value s) {
      return tileMap(b, loc, rowType, {},
                     [&](OpBuilder &b, Location loc, ValueRange idx,
                         ValueRange) -> Value {
                       IndexMath ix{b, loc};
                       auto [bi, h, i] = coords(ix, idx[0]);
                       Value lse = memref::LoadOp::create(
                           b, loc, lses, partIndices(ix, s, bi, h, i));
                       if (!offsets)
                         return lse;
                       auto [begin, end] =
                           packedRows(b, loc, offsets, bi, splits);
                       Value own =
                           ix.andI(ix.cmp(arith::CmpIPredicate::uge, s, begin),
                                   ix.cmp(arith::CmpIPredicate::ult, s, end));
                       return Value(arith::SelectOp::create(b, loc, own, lse,
                                                            negInf(b, loc)));
                     });
    };
    auto maxOf = [](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
      return Value(arith::MaximumFOp::create(b, loc, x[0], x[1]));
    };

    // One pass over the splits, as the online softmax does over keys: the
    // running max M of the LSE_s, l = sum_s w_s and acc = sum_s w_s O_s
    // with w_s = exp2((LSE_s - M) log2 e), both rescaled by
    // exp2((M_old - M) log2 e) when M grows (a split is one latency-bound
    // step on a GPU: one pass, not a max pass and a sum pass).
    auto expDiff = [](OpBuilder &b, Location loc, Value x, Value m) -> Value {
      Value diff = arith::SubFOp::create(b, loc, x, safeMax(b, loc, m));
      return math::Exp2Op::create(
          b, loc,
          arith::MulFOp::create(b, loc, diff, constF32(b, loc, kLog2e)));
    };
    // With offsets: the items of the tile's sequences, first to last.
    Value splitsBegin = ix.c(0), splitsEnd = splits;
    if (offsets) {
      splitsBegin =
          packedRows(b, loc, offsets, coords(ix, ix.c(0))[0], splits).first;
      splitsEnd = ix.max(
          splitsBegin,
          packedRows(b, loc, offsets, coords(ix, rows)[0], splits).second);
    }
    auto loop = scf::ForOp::create(
        b, loc, splitsBegin, splitsEnd, ix.c(1),
        ValueRange{splat(b, loc, rowType, -INFINITY),
                   splat(b, loc, rowType, 0.0), splat(b, loc, accType, 0.0)},
        [&](OpBuilder &b, Location loc, Value s, ValueRange args) {
          Value m = args[0], l = args[1], acc = args[2];
          Value lseS = splitLse(b, loc, s);
          Value mNew = tileMap(b, loc, rowType, {m, lseS}, maxOf);
          Value alpha = tileMap(
              b, loc, rowType, {m, mNew},
              [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
                return expDiff(b, loc, x[0], x[1]);
              });
          Value w = tileMap(
              b, loc, rowType, {lseS, mNew},
              [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
                return expDiff(b, loc, x[0], x[1]);
              });
          Value part = tileMap(
              b, loc, accType, {},
              [&](OpBuilder &b, Location loc, ValueRange idx,
                  ValueRange) -> Value {
                IndexMath ix{b, loc};
                auto [bi, h, i] = coords(ix, idx[0]);
                Value col = ix.add(c0, idx[1]);
                SmallVector<Value> at = partIndices(ix, s, bi, h, i);
                if (!tail) {
                  at.push_back(col);
                  return memref::LoadOp::create(b, loc, parts, at);
                }
                Value inRow = ix.cmp(arith::CmpIPredicate::ult, col, ix.c(dv));
                at.push_back(ix.select(inRow, col, ix.c(0)));
                Value v = memref::LoadOp::create(b, loc, parts, at);
                return Value(arith::SelectOp::create(b, loc, inRow, v,
                                                     constF32(b, loc, 0.0)));
              });
          AffineMap id2 = b.getMultiDimIdentityMap(2);
          AffineMap row =
              AffineMap::get(2, 0, {b.getAffineDimExpr(0)}, b.getContext());
          Value accNew = tileMap(
              b, loc, accType, {acc, part, alpha, w},
              [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
                Value scaled = arith::MulFOp::create(b, loc, x[0], x[2]);
                // Another sequence's item (weight 0) adds nothing, whatever
                // it holds.
                Value part = x[1];
                if (offsets)
                  part = arith::SelectOp::create(
                      b, loc,
                      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                            x[3], constF32(b, loc, 0.0)),
                      constF32(b, loc, 0.0), part);
                return Value(math::FmaOp::create(b, loc, x[3], part, scaled));
              },
              {id2, id2, row, row});
          Value lNew = tileMap(
              b, loc, rowType, {l, alpha, w},
              [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
                return Value(math::FmaOp::create(b, loc, x[0], x[1], x[2]));
              });
          scf::YieldOp::create(b, loc, ValueRange{mNew, lNew, accNew});
        });
    Value m = loop.getResult(0), l = loop.getResult(1),
          acc = loop.getResult(2);

    // O = acc (1 / l), 0 on a row whose splits are all empty.
    Value inv = tileMap(
        b, loc, rowType, l,
        [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
          Value zero = constF32(b, loc, 0.0);
          Value empty = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OEQ, x[0], zero);
          Value r = arith::DivFOp::create(b, loc, constF32(b, loc, 1.0), x[0]);
          return Value(arith::SelectOp::create(b, loc, empty, zero, r));
        });
    Type elt = op.getOutput().getType().getElementType();
    Value o = tileMap(
        b, loc, RankedTensorType::get({br, bc}, elt), {acc, inv},
        [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
          return fromF32(b, loc, arith::MulFOp::create(b, loc, x[0], x[1]),
                         elt);
        });
    // The tile's `width` columns of the output (static, for the store).
    auto storeColumns = [&](int64_t width) {
      auto outType = cast<MemRefType>(out.getType());
      SmallVector<OpFoldResult> offsets(3, b.getIndexAttr(0)), sizes;
      offsets.push_back(c0);
      for (int64_t d = 0; d < 3; ++d)
        sizes.push_back(memref::getMixedSize(b, loc, out, d));
      sizes.push_back(b.getIndexAttr(width));
      SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
      Value outCols = memref::SubViewOp::create(
          b, loc,
          memref::SubViewOp::inferResultType(outType, offsets, sizes, strides),
          out, offsets, sizes, strides);
      tileStore(b, loc, o, outCols, rows,
                [&](OpBuilder &b, Location loc, Value r) {
                  IndexMath ix{b, loc};
                  auto [bi, h, i] = coords(ix, r);
                  return storedIndices(layout, bi, h, i);
                });
    };
    if (!tail) {
      storeColumns(bc);
    } else if (colTiles == 1) {
      storeColumns(tail);
    } else {
      OpBuilder::InsertionGuard guard(b);
      auto last = scf::IfOp::create(
          b, loc, ix.cmp(arith::CmpIPredicate::eq, ivs[1], ix.c(colTiles - 1)),
          /*withElseRegion=*/true);
      b.setInsertionPointToStart(last.thenBlock());
      storeColumns(tail);
      b.setInsertionPointToStart(last.elseBlock());
      storeColumns(bc);
    }
    if (lse) {
      // LSE = M + ln l, -inf on an empty row, from the first column tile.
      OpBuilder::InsertionGuard guard(b);
      auto first = scf::IfOp::create(
          b, loc, ix.cmp(arith::CmpIPredicate::eq, ivs[1], ix.c(0)), false);
      b.setInsertionPointToStart(first.thenBlock());
      Value t = tileMap(
          b, loc, rowType, {m, l},
          [&](OpBuilder &b, Location loc, ValueRange, ValueRange x) {
            Value empty = arith::CmpFOp::create(
                b, loc, arith::CmpFPredicate::OEQ, x[1], constF32(b, loc, 0.0));
            Value ln = arith::MulFOp::create(
                b, loc, math::Log2Op::create(b, loc, x[1]),
                constF32(b, loc, kLn2));
            Value v = arith::AddFOp::create(b, loc, safeMax(b, loc, x[0]), ln);
            return Value(
                arith::SelectOp::create(b, loc, empty, negInf(b, loc), v));
          });
      tileStore(b, loc, t, lse, rows, [&](OpBuilder &b, Location loc, Value r) {
        IndexMath ix{b, loc};
        auto [bi, h, i] = coords(ix, r);
        return SmallVector<Value>{bi, h, i};
      });
    }
  }

  if (!config.destinations.empty())
    rewriter.eraseOp(op);
  else
    replaceWithOutputAndLse(rewriter, loc, op, out, lse);
  return success();
}
