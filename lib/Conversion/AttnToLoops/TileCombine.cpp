//===- TileCombine.cpp - split-KV combine as loops ------------------------===//
//
// The second half of Flash-Decoding: every (batch, head, query) row merges
// its splits by their log-sum-exp. A split with LSE = -inf (empty or fully
// masked) gets weight 0; a row whose splits are all empty gets O = 0 and
// LSE = -inf.
//
//===----------------------------------------------------------------------===//

#include "TileCommon.h"

#include "mlir/IR/PatternMatch.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::tile;

/// A sequential loop over `[0, ub)` carrying one f32 value.
static Value reduceLoop(OpBuilder &b, Location loc, Value ub, Value init,
                        function_ref<Value(OpBuilder &, Location, Value, Value)>
                            step) {
  IndexMath ix{b, loc};
  auto loop = scf::ForOp::create(
      b, loc, ix.c(0), ub, ix.c(1), init,
      [&](OpBuilder &b, Location loc, Value iv, ValueRange args) {
        scf::YieldOp::create(b, loc, step(b, loc, iv, args[0]));
      });
  return loop.getResult(0);
}

LogicalResult tile::tileCombine(RewriterBase &rewriter, CombineOp op) {
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  IndexMath ix{b, loc};
  Value parts = toReadOnlyBuffer(b, loc, op.getPartialOutput());
  Value lses = toReadOnlyBuffer(b, loc, op.getPartialLse());
  auto partsType = cast<MemRefType>(parts.getType());
  auto dimOf = [&](int64_t i) -> Value {
    if (!partsType.isDynamicDim(i))
      return ix.c(partsType.getDimSize(i));
    return memref::DimOp::create(b, loc, parts, i);
  };
  Value splits = dimOf(0), batch = dimOf(1), heads = dimOf(2),
        querySeq = dimOf(3);
  int64_t valueDim = partsType.getDimSize(4);
  Layout layout = op.getLayout();

  SmallVector<Value> oSizes = {batch, heads, querySeq, ix.c(valueDim)};
  if (layout == Layout::BSHD)
    std::swap(oSizes[1], oSizes[2]);
  Value out = allocResult(b, loc, op.getOutput().getType(), oSizes);
  Value lse;
  if (op.getLse())
    lse = allocResult(b, loc, op.getLse().getType(), {batch, heads, querySeq});

  {
    OpBuilder::InsertionGuard guard(b);
    SmallVector<Value> ivs = beginForall(b, loc, {batch, heads, querySeq});
    Value bi = ivs[0], h = ivs[1], i = ivs[2];
    auto splitLse = [&](OpBuilder &b, Location loc, Value s) -> Value {
      return memref::LoadOp::create(b, loc, lses, ValueRange{s, bi, h, i});
    };

    Value m = reduceLoop(
        b, loc, splits, negInf(b, loc),
        [&](OpBuilder &b, Location loc, Value s, Value acc) -> Value {
          return arith::MaximumFOp::create(b, loc, acc, splitLse(b, loc, s));
        });
    Value shift = safeMax(b, loc, m);
    auto unnormalisedWeight = [&](OpBuilder &b, Location loc,
                                  Value s) -> Value {
      return math::ExpOp::create(
          b, loc, arith::SubFOp::create(b, loc, splitLse(b, loc, s), shift));
    };
    Value sum = reduceLoop(
        b, loc, splits, constF32(b, loc, 0.0),
        [&](OpBuilder &b, Location loc, Value s, Value acc) -> Value {
          return arith::AddFOp::create(b, loc, acc,
                                       unnormalisedWeight(b, loc, s));
        });
    Value allEmpty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                           sum, constF32(b, loc, 0.0));

    Value acc = allocTile(b, loc, {valueDim}, b.getF32Type());
    fill(b, loc, acc, 0.0);
    {
      OpBuilder::InsertionGuard loopGuard(b);
      Value s = beginFor(b, loc, ix.c(0), splits, ix.c(1));
      Value w = arith::DivFOp::create(b, loc, unnormalisedWeight(b, loc, s),
                                      sum);
      w = arith::SelectOp::create(b, loc, allEmpty, constF32(b, loc, 0.0), w);
      SmallVector<OpFoldResult> offsets = {s, bi, h, i, b.getIndexAttr(0)};
      SmallVector<OpFoldResult> sizes(4, b.getIndexAttr(1));
      sizes.push_back(b.getIndexAttr(valueDim));
      SmallVector<OpFoldResult> strides(5, b.getIndexAttr(1));
      Value partRow = memref::SubViewOp::create(
          b, loc,
          memref::SubViewOp::inferRankReducedResultType(
              {valueDim}, partsType, offsets, sizes, strides),
          parts, offsets, sizes, strides);
      AffineMap id1 = b.getMultiDimIdentityMap(1);
      generic(b, loc, partRow, acc, {id1, id1},
              {utils::IteratorType::parallel},
              [&](OpBuilder &b, Location loc, ValueRange a) {
                Value contrib = arith::MulFOp::create(b, loc, w, a[0]);
                linalg::YieldOp::create(
                    b, loc, Value(arith::AddFOp::create(b, loc, a[1], contrib)));
              });
    }
    storeConverted(b, loc, acc, seqRow(b, loc, out, layout, bi, h, i));
    if (lse)
      memref::StoreOp::create(
          b, loc,
          arith::AddFOp::create(b, loc, shift, math::LogOp::create(b, loc, sum)),
          lse, ValueRange{bi, h, i});
  }

  replaceWithOutputAndLse(rewriter, loc, op, out, lse);
  return success();
}
