//===- TileWorkItem.cpp - a balanced split-KV work item on a warp ---------===//
//
// tile.work_item in a GPU kernel. Every CTA of a balanced split-KV kernel
// finds its own work item from the sequences' lengths, which live on the
// device. SplitWork.h defines the work list with scalar loops over the
// sequences (the CPU's lowering); run by one thread, each of their B steps
// waits for a load and a division, and at B = 64 that prologue took about
// 5 us of every CTA (docs/GPU.md). Here the 32 lanes of each warp take one
// sequence each, 32 at a time: the sums (of the lengths, then of each
// candidate chunk's item counts) are redux.sync adds across the warp, each
// lane's first item an inclusive scan (shfl.up), and the lane whose items
// hold the CTA's item is found by a ballot. The candidates, the choice
// among them and the item counts are SplitWork's own functions; only the
// order of the additions is the warp's. Every warp computes the same
// values (no shared memory, no barrier). Upstream MLIR has no warp scan;
// the shuffles are gpu.shuffle, the sums nvvm.redux.sync (sm_80 and
// later) and the vote nvvm.vote.sync.
//
//===----------------------------------------------------------------------===//

#include "TileLowering.h"

#include "attn/Dialect/Attn/IR/SplitWork.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::tile_lowering;

LogicalResult TileLowering::lowerWorkItem(TileWorkItemOp op) {
  Value item = scalars.lookupOrNull(op.getItem()),
        items = scalars.lookupOrNull(op.getItems()),
        batch = scalars.lookupOrNull(op.getBatch()),
        capacity = scalars.lookupOrNull(op.getCapacity());
  if (!item || !items || !batch || !capacity)
    return op.emitOpError("uses a value the GPU lowering did not map");
  Location loc = e.loc;
  Type i32 = e.i32(), i64 = e.i64();
  Value zero = e.c32(0), one = e.c32(1), width = e.c32(32);
  Block &body = op.getLength().front();

  // Lane `lane`'s sequence of round r and its length, 0 past the batch
  // (the region then reads sequence 0's, which exists in any round that
  // runs).
  auto laneLength = [&](Value r, Value &inBatch) -> FailureOr<Value> {
    Value s = e.add(e.mul(r, width), lane);
    inBatch = e.lt(s, batch);
    scalars.map(body.getArgument(0), e.select(inBatch, s, zero));
    for (Operation &inner : body.without_terminator())
      if (failed(lowerOp(&inner)))
        return failure();
    Value length = scalars.lookupOrNull(
        cast<TileYieldOp>(body.getTerminator()).getValues()[0]);
    if (!length)
      return op.emitOpError("has a length the GPU lowering did not map");
    return e.select(inBatch, length, zero);
  };
  auto shuffle = [&](Value v, Value offset, gpu::ShuffleMode mode) -> Value {
    return gpu::ShuffleOp::create(b, loc, v, offset, width, mode)
        .getShuffleResult();
  };
  Value rounds = e.udiv(e.add(batch, e.c32(31)), width);

  // A 64-bit sum over the warp: redux.sync adds 32-bit values, so the
  // lanes' sums (at most 2^63 - 1) go in three independent pieces of 21
  // bits, each of which 32 lanes sum without a carry out of 32 bits.
  constexpr int64_t kPieceBits = 21;
  auto warpSum = [&](Value v) {
    Value sum = e.c64(0);
    for (int64_t piece = 0; piece < 3; ++piece) {
      Value shift = e.c64(piece * kPieceBits);
      Value bits = arith::TruncIOp::create(
          b, loc, i32,
          e.band(e.shr(v, shift), e.c64((int64_t{1} << kPieceBits) - 1)));
      Value part = NVVM::ReduxOp::create(b, loc, i32, bits,
                                         NVVM::ReduxKind::ADD, e.c32(-1));
      sum = e.add(sum,
                  e.shl(arith::ExtUIOp::create(b, loc, i64, part), shift));
    }
    return sum;
  };
  // Sums over the lanes' sequences, each lane its own first: `terms` gives
  // a lane's terms from its length, in i64.
  auto laneSums =
      [&](int64_t n,
          function_ref<SmallVector<Value>(Value)> terms) -> FailureOr<ValueRange> {
    auto loop = scf::ForOp::create(b, loc, zero, rounds, one,
                                   SmallVector<Value>(n, e.c64(0)));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value inBatch;
    FailureOr<Value> length = laneLength(loop.getInductionVar(), inBatch);
    if (failed(length))
      return failure();
    SmallVector<Value> next;
    for (auto [acc, term] : llvm::zip(loop.getRegionIterArgs(), terms(*length)))
      next.push_back(e.add(acc, term));
    scf::YieldOp::create(b, loc, next);
    return ValueRange(loop.getResults());
  };

  // The sum of the lengths, SplitWork's candidate chunks, the item count
  // of each but the last, and the chunk.
  FailureOr<ValueRange> total = laneSums(1, [&](Value length) {
    return SmallVector<Value>{arith::ExtUIOp::create(b, loc, i64, length)};
  });
  if (failed(total))
    return failure();
  SmallVector<Value> candidates = balancedChunkCandidates(
      b, loc, warpSum((*total)[0]), items, batch, capacity);
  FailureOr<ValueRange> counts =
      laneSums(candidates.size() - 1, [&](Value length) {
        SmallVector<Value> terms;
        for (Value c : ArrayRef(candidates).drop_back())
          terms.push_back(arith::ExtUIOp::create(
              b, loc, i64, sequenceItemCount(b, loc, length, c)));
        return terms;
      });
  if (failed(counts))
    return failure();
  SmallVector<Value> warpCounts =
      llvm::map_to_vector(*counts, [&](Value v) { return warpSum(v); });
  Value chunk = pickBalancedChunk(b, loc, candidates, warpCounts, items);

  // The item's sequence: round by round, each lane's first item (the
  // items before the round, `carried`, plus an inclusive scan of the item
  // counts), and a ballot of the lanes whose items hold `item`.
  auto find = scf::ForOp::create(
      b, loc, zero, rounds, one,
      ValueRange{zero, zero, zero, zero, e.cbool(false)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(find.getBody());
    Value r = find.getInductionVar();
    ValueRange args = find.getRegionIterArgs();
    Value carried = args[0], sequence = args[1], index = args[2],
          length = args[3], found = args[4];
    Value inBatch;
    FailureOr<Value> laneLen = laneLength(r, inBatch);
    if (failed(laneLen))
      return failure();
    Value count = sequenceItemCount(b, loc, *laneLen, chunk);
    Value scan = count;
    for (int64_t offset = 1; offset < 32; offset *= 2) {
      Value up = shuffle(scan, e.c32(offset), gpu::ShuffleMode::UP);
      scan = e.add(scan, e.select(e.ge(lane, e.c32(offset)), up, zero));
    }
    Value first = e.sub(e.add(carried, scan), count);
    Value here = e.band(
        inBatch,
        e.band(e.cmp(arith::CmpIPredicate::uge, item, first),
               e.cmp(arith::CmpIPredicate::ult, item, e.add(first, count))));
    Value ballot = NVVM::VoteSyncOp::create(b, loc, i32, e.c32(-1), here,
                                            NVVM::VoteSyncKind::ballot);
    Value any = e.ne(ballot, zero);
    Value src = e.band(LLVM::CountTrailingZerosOp::create(
                           b, loc, i32, ballot, b.getBoolAttr(false)),
                       e.c32(31));
    Value idx = shuffle(e.sub(item, first), src, gpu::ShuffleMode::IDX);
    scf::YieldOp::create(
        b, loc,
        ValueRange{
            e.add(carried, shuffle(scan, e.c32(31), gpu::ShuffleMode::IDX)),
            e.select(any, e.add(e.mul(r, width), src), sequence),
            e.select(any, idx, index),
            e.select(any, shuffle(*laneLen, src, gpu::ShuffleMode::IDX),
                     length),
            e.bor(found, any)});
  }
  Value found = find.getResult(4);
  Value begin = e.mul(find.getResult(2), chunk);
  Value end = arith::MinUIOp::create(b, loc, e.add(begin, chunk),
                                     find.getResult(3));
  scalars.map(op.getSequence(), e.select(found, find.getResult(1), zero));
  scalars.map(op.getBegin(), e.select(found, begin, zero));
  scalars.map(op.getEnd(), e.select(found, end, zero));
  return success();
}
