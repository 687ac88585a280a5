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

Value attn::balancedChunk(OpBuilder &b, Location loc, Value items, Value batch,
                          Value capacity, SequenceLength length) {
  ArithBuilder ab(b, loc);
  Type i64 = b.getI64Type();
  auto wide = [&](OpBuilder &b, Location loc, Value v) -> Value {
    return arith::IndexCastOp::create(b, loc, i64, v);
  };
  auto c64 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 64);
  };
  auto sum = scf::ForOp::create(
      b, loc, cst(b, loc, 0), batch, cst(b, loc, 1), ValueRange{c64(0)},
      [&](OpBuilder &b, Location loc, Value s, ValueRange acc) {
        Value total = arith::AddIOp::create(b, loc, acc[0],
                                            wide(b, loc, length(b, loc, s)));
        scf::YieldOp::create(b, loc, total);
      });
  Value chunks = wide(
      b, loc,
      arith::MaxSIOp::create(b, loc, ab.sub(items, batch), cst(b, loc, 1)));
  Value align = c64(kBalancedChunkAlign);
  Value aligned = arith::CeilDivUIOp::create(
      b, loc, sum.getResult(0), arith::MulIOp::create(b, loc, align, chunks));
  Value chunk = arith::MulIOp::create(
      b, loc, align, arith::MaxSIOp::create(b, loc, aligned, c64(1)));
  chunk = arith::MinSIOp::create(b, loc, chunk, wide(b, loc, capacity));
  // At least one key, so that the item counts divide by it.
  chunk = arith::MaxSIOp::create(b, loc, chunk, c64(1));
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), chunk);
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
        Value count =
            arith::CeilDivUIOp::create(b, loc, length(b, loc, s), chunk);
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
