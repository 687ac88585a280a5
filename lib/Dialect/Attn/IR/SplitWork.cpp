//===- SplitWork.cpp - balanced split-KV work items -----------------------===//

#include "attn/Dialect/Attn/IR/SplitWork.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn;

/// An index constant.
static Value cst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// A comparison of two indices.
static Value cmp(OpBuilder &b, Location loc, arith::CmpIPredicate p, Value x,
                 Value y) {
  return arith::CmpIOp::create(b, loc, p, x, y);
}

/// `v` (index or an integer type, non-negative) as i64, and back.
static Value toI64(OpBuilder &b, Location loc, Value v) {
  Type i64 = b.getI64Type();
  if (v.getType().isIndex())
    return arith::IndexCastOp::create(b, loc, i64, v);
  if (v.getType() == i64)
    return v;
  return arith::ExtUIOp::create(b, loc, i64, v);
}
static Value fromI64(OpBuilder &b, Location loc, Value v, Type type) {
  if (type.isIndex())
    return arith::IndexCastOp::create(b, loc, type, v);
  if (type == v.getType())
    return v;
  return arith::TruncIOp::create(b, loc, type, v);
}

Value attn::balancedChunk(OpBuilder &b, Location loc, Value items, Value batch,
                          Value capacity, SequenceLength length) {
  Value zero64 = arith::ConstantIntOp::create(b, loc, 0, 64);
  auto sum = scf::ForOp::create(
      b, loc, cst(b, loc, 0), batch, cst(b, loc, 1), ValueRange{zero64},
      [&](OpBuilder &b, Location loc, Value s, ValueRange acc) {
        Value total = arith::AddIOp::create(b, loc, acc[0],
                                            toI64(b, loc, length(b, loc, s)));
        scf::YieldOp::create(b, loc, total);
      });
  SmallVector<Value> candidates = balancedChunkCandidates(
      b, loc, sum.getResult(0), items, batch, capacity);
  // The item counts of every candidate but the last, which needs none.
  SmallVector<Value> inits(candidates.size() - 1, zero64);
  auto count = scf::ForOp::create(
      b, loc, cst(b, loc, 0), batch, cst(b, loc, 1), inits,
      [&](OpBuilder &b, Location loc, Value s, ValueRange acc) {
        Value len = length(b, loc, s);
        SmallVector<Value> next;
        for (auto [c, a] : llvm::zip(candidates, acc))
          next.push_back(arith::AddIOp::create(
              b, loc, a, toI64(b, loc, sequenceItemCount(b, loc, len, c))));
        scf::YieldOp::create(b, loc, next);
      });
  return pickBalancedChunk(b, loc, candidates,
                           SmallVector<Value>(count.getResults()), items);
}

SmallVector<Value> attn::balancedChunkCandidates(OpBuilder &b, Location loc,
                                                 Value total, Value items,
                                                 Value batch, Value capacity) {
  Type type = items.getType();
  auto c64 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 64);
  };
  auto constant = [&](int64_t v) -> Value {
    return type.isIndex()
               ? cst(b, loc, v)
               : Value(arith::ConstantIntOp::create(b, loc, type, v));
  };
  Value align = c64(kBalancedChunkAlign);
  Value cap = toI64(b, loc, capacity);
  SmallVector<Value> chunks;
  for (Value slack : {constant(0),
                      Value(arith::CeilDivUIOp::create(b, loc, batch,
                                                       constant(2))),
                      batch}) {
    Value m = toI64(
        b, loc,
        arith::MaxSIOp::create(b, loc,
                               arith::SubIOp::create(b, loc, items, slack),
                               constant(1)));
    Value aligned = arith::CeilDivUIOp::create(
        b, loc, total, arith::MulIOp::create(b, loc, align, m));
    Value chunk = arith::MulIOp::create(
        b, loc, align, arith::MaxSIOp::create(b, loc, aligned, c64(1)));
    chunk = arith::MinSIOp::create(b, loc, chunk, cap);
    // At least one key, so that the item counts divide by it.
    chunk = arith::MaxSIOp::create(b, loc, chunk, c64(1));
    chunks.push_back(fromI64(b, loc, chunk, type));
  }
  return chunks;
}

Value attn::pickBalancedChunk(OpBuilder &b, Location loc,
                              ArrayRef<Value> candidates, ArrayRef<Value> counts,
                              Value items) {
  Value itemsI64 = toI64(b, loc, items);
  Value chunk = candidates.back();
  for (int64_t i = static_cast<int64_t>(counts.size()) - 1; i >= 0; --i) {
    Value fits = cmp(b, loc, arith::CmpIPredicate::sle, counts[i], itemsI64);
    chunk = arith::SelectOp::create(b, loc, fits, candidates[i], chunk);
  }
  return chunk;
}

Value attn::sequenceItemCount(OpBuilder &b, Location loc, Value length,
                              Value chunk) {
  return arith::CeilDivUIOp::create(b, loc, length, chunk);
}

SmallVector<Value> attn::scanWorkItems(
    OpBuilder &b, Location loc, Value chunk, Value batch, SequenceLength length,
    ValueRange inits,
    function_ref<SmallVector<Value>(OpBuilder &, Location,
                                    const SequenceItems &, ValueRange)>
        body) {
  SmallVector<Value> carried(inits);
  carried.push_back(cst(b, loc, 0));
  auto loop = scf::ForOp::create(
      b, loc, cst(b, loc, 0), batch, cst(b, loc, 1), carried,
      [&](OpBuilder &b, Location loc, Value s, ValueRange args) {
        Value first = args.back();
        Value count = sequenceItemCount(b, loc, length(b, loc, s), chunk);
        SmallVector<Value> next =
            body(b, loc, {s, first, count}, args.drop_back());
        next.push_back(ArithBuilder(b, loc).add(first, count));
        scf::YieldOp::create(b, loc, next);
      });
  return SmallVector<Value>(loop.getResults());
}

WorkItem attn::findWorkItem(OpBuilder &b, Location loc, Value item, Value chunk,
                            Value batch, SequenceLength length) {
  ArithBuilder ab(b, loc);
  // (sequence, chunk index, found): the one sequence whose items hold
  // `item`; an item past the last keeps sequence 0 and an empty range.
  Value zero = cst(b, loc, 0);
  Value none = arith::ConstantIntOp::create(b, loc, 0, 1);
  SmallVector<Value> found = scanWorkItems(
      b, loc, chunk, batch, length, {zero, zero, none},
      [&](OpBuilder &b, Location loc, const SequenceItems &seq,
          ValueRange acc) -> SmallVector<Value> {
        ArithBuilder ab(b, loc);
        Value here =
            ab._and(cmp(b, loc, arith::CmpIPredicate::uge, item, seq.first),
                    cmp(b, loc, arith::CmpIPredicate::ult, item,
                        ab.add(seq.first, seq.count)));
        return {ab.select(here, seq.batch, acc[0]),
                ab.select(here, ab.sub(item, seq.first), acc[1]),
                arith::OrIOp::create(b, loc, here, acc[2])};
      });
  Value sequence = found[0], valid = found[2];
  Value len = length(b, loc, sequence);
  Value begin = ab.mul(found[1], chunk);
  Value end = arith::MinUIOp::create(b, loc, ab.add(begin, chunk), len);
  return {sequence, ab.select(valid, begin, zero), ab.select(valid, end, zero)};
}
