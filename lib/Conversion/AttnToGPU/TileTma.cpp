//===- TileTma.cpp - tile.load by TMA on sm_90a ---------------------------===//
//
// The sm_90a copies of the tile form's memory tiles (TileLowering.h): one
// thread issues `cp.async.bulk.tensor` for each column block of a tile (a
// box of the kernel's tensor map, swizzled as the tile is), and the copies
// complete on mbarriers instead of cp.async groups:
//
// - a group of copies is what sm_80 commits as one cp.async group: the
//   loads of one scf.if. Group g arms barrier g % stages with the bytes of
//   its boxes (`mbarrier.arrive.expect_tx` by thread 0); the pipelined loop
//   waits in iteration j for group j (the tile it reads) at parity
//   (j / stages) % 2, then one CTA barrier, after which the stage the
//   prefetch reuses is free, as on sm_80;
// - the loads outside any scf.if (Q) share barrier `stages`, waited once
//   before the pipelined loop;
// - warp-specialised kernels (all of them so far) lower the loop nest
//   twice, after the barriers are made: for one thread of a producer
//   warpgroup (with setmaxnreg giving its registers away), which issues
//   the copies and, before it refills a stage, waits on that stage's
//   "empty" mbarrier; and for the consumer warps, which skip the copies,
//   wait for each group as above without a CTA barrier and, at the end of
//   an iteration, arrive on the empty barrier of the stage they read (one
//   arrival per warpgroup).
//
// A TMA box is a whole tile: rows past the tile's `rows` that lie inside
// the source are read, not zero-filled (their keys are masked and their
// rows never stored, by attn-tile); rows past the source's end read zeros.
// The tensor maps are made by the runtime (docs/KernelABI.md).
//
//===----------------------------------------------------------------------===//

#include "TileLowering.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::tile_lowering;

/// Bytes of one mbarrier.
static constexpr int64_t kBarrierBytes = 8;
/// try_wait's suspend-time hint (ns), as upstream's nvgpu lowering uses.
static constexpr int64_t kWaitTicks = 10000000;
/// setmaxnreg's split of the register file: 2 x 128 consumer threads at
/// 240 and 128 producer threads at 24 (FlashAttention-3's), 64512 of 65536.
static constexpr int64_t kProducerRegisters = 24, kConsumerRegisters = 240;
static constexpr int64_t kWarpgroupThreads = 128;

Value TileLowering::barrierAt(Value slot) {
  return sharedAt(e.add(barrierOffset, e.mul(slot, e.c32(kBarrierBytes))));
}

/// The bytes the copies of the loads in `region` bring.
static int64_t loadBytes(Region &region) {
  int64_t bytes = 0;
  region.walk([&](TileLoadOp load) {
    auto type = cast<MemRefType>(load.getTile().getType());
    bytes += type.getNumElements() * type.getElementTypeBitWidth() / 8;
  });
  return bytes;
}

/// Runs the ops `body` builds in thread 0 only (in a role of one thread,
/// the producer's, as they are).
static void inThreadZero(Emitter &e, Value tid, Role role,
                         function_ref<void()> body) {
  if (role == Role::Producer)
    return body();
  OpBuilder::InsertionGuard guard(e.b);
  auto ifOp = scf::IfOp::create(e.b, e.loc, e.eq(tid, e.c32(0)), false);
  e.b.setInsertionPointToStart(ifOp.thenBlock());
  body();
}

void TileLowering::initBarriers() {
  {
    OpBuilder atEntry = OpBuilder::atBlockBegin(entry);
    barrierOffset =
        arith::ConstantOp::create(atEntry, e.loc, atEntry.getI32IntegerAttr(0));
  }
  inThreadZero(e, tid, role, [&] {
    for (int64_t i = 0; i < barrierCount(); ++i) {
      // Full: one arrival per group, one per load outside any scf.if.
      // Empty (warp-specialised): one per consumer warpgroup.
      int64_t count = i < stages    ? 1
                      : i == stages ? std::max<int64_t>(topLevelLoads, 1)
                                    : warps * 32 / kWarpgroupThreads;
      NVVM::MBarrierInitOp::create(b, e.loc, barrierAt(e.c32(i)), e.c32(count),
                                   /*predicate=*/Value());
    }
    NVVM::FenceMbarrierInitOp::create(b, e.loc);
  });
  gpu::BarrierOp::create(b, e.loc);
}

void TileLowering::ctaBarrier() {
  if (role != Role::Consumer) {
    gpu::BarrierOp::create(b, e.loc);
    return;
  }
  // Named barrier 1 of the consumer threads: the producer has gone its way.
  NVVM::BarrierOp::create(b, e.loc, /*res=*/Type(), e.c32(1), e.c32(warps * 32),
                          /*reductionOp=*/nullptr,
                          /*reductionPredicate=*/Value());
}

LogicalResult TileLowering::lowerRoles(Block &body) {
  // What both lowerings start from; each maps the body's values anew.
  IRMapping scalars0 = scalars;
  DenseMap<Value, Global *> globals0 = globals;
  DenseMap<Value, SharedTile> shared0 = shared;
  DenseMap<Value, Fragment> regs0 = regs;
  int64_t tileBytes0 = tileBytes, groups0 = prologueGroups;

  Value producer = e.ge(tid, e.c32(warps * 32));
  auto split = scf::IfOp::create(b, e.loc, producer, /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  // The producer warpgroup gives its registers to the consumers; one of
  // its threads issues every copy.
  b.setInsertionPointToStart(split.thenBlock());
  NVVM::SetMaxRegisterOp::create(b, e.loc, kProducerRegisters,
                                 NVVM::SetMaxRegisterAction::decrease);
  auto one = scf::IfOp::create(b, e.loc, e.eq(tid, e.c32(warps * 32)), false);
  b.setInsertionPointToStart(one.thenBlock());
  role = Role::Producer;
  if (failed(lowerBlock(body, nullptr)))
    return failure();
  int64_t producerBytes = tileBytes;

  scalars = scalars0;
  globals = globals0;
  shared = shared0;
  regs = regs0;
  tileBytes = tileBytes0;
  prologueGroups = groups0;
  b.setInsertionPointToStart(split.elseBlock());
  NVVM::SetMaxRegisterOp::create(b, e.loc, kConsumerRegisters,
                                 NVVM::SetMaxRegisterAction::increase);
  role = Role::Consumer;
  if (failed(lowerBlock(body, nullptr)))
    return failure();
  // No copy may still be landing when the consumers exit.
  if (topLevelPending())
    waitForGroup(Value());
  role = Role::All;
  if (tileBytes != producerBytes)
    return body.getParentOp()->emitOpError(
        "lays out shared memory differently for the producer and the "
        "consumers");
  return success();
}

void TileLowering::releaseStage(Value iter) {
  // One arrival per warpgroup, from its first thread: the stage's only
  // readers are the warpgroup's wgmmas, which it has waited for.
  Value slot = e.add(e.c32(stages + 1), e.urem(iter, e.c32(stages)));
  OpBuilder::InsertionGuard guard(b);
  auto first = scf::IfOp::create(
      b, e.loc, e.eq(e.urem(tid, e.c32(kWarpgroupThreads)), e.c32(0)), false);
  b.setInsertionPointToStart(first.thenBlock());
  NVVM::MBarrierArriveOp::create(b, e.loc, /*res=*/Type(), barrierAt(slot),
                                 /*count=*/Value());
}

void TileLowering::openGroup(scf::IfOp op) {
  // Group g of the loop's iteration j is g = j + the groups issued before
  // it; outside a loop, the next prologue group.
  Value g = loopIter ? e.add(loopIter, e.c32(prologueGroups))
                     : e.c32(prologueGroups++);
  Value slot = e.urem(g, e.c32(stages));
  groupBarrier = barrierAt(slot);
  if (specialized) {
    // The consumers have released the stage's previous group, g - stages
    // (phase (g / stages - 1) % 2 of its empty barrier; for g < stages the
    // phase before the first, which counts as complete).
    Value parity = e.bxor(e.urem(e.udiv(g, e.c32(stages)), e.c32(2)), e.c32(1));
    NVVM::MBarrierTryWaitParityOp::create(
        b, e.loc, barrierAt(e.add(e.c32(stages + 1), slot)), parity,
        e.c32(kWaitTicks));
  }
  int64_t bytes = loadBytes(op.getThenRegion());
  inThreadZero(e, tid, role, [&] {
    NVVM::MBarrierArriveExpectTxOp::create(
        b, e.loc, /*res=*/Type(), groupBarrier, e.c32(bytes),
        NVVM::MemScopeKind::CTA, /*relaxed=*/false, /*predicate=*/Value());
  });
}

void TileLowering::waitForGroup(Value iter) {
  Value barrier, parity;
  if (iter) {
    barrier = barrierAt(e.urem(iter, e.c32(stages)));
    parity = e.urem(e.udiv(iter, e.c32(stages)), e.c32(2));
  } else {
    barrier = barrierAt(e.c32(stages));
    parity = e.c32(0);
    topLevelWaited = true;
  }
  NVVM::MBarrierTryWaitParityOp::create(b, e.loc, barrier, parity,
                                        e.c32(kWaitTicks));
}

/// The index of a tile.load's row region that follows the row: `row`,
/// `base + row`, or either with the row clamped by `min(row, bound)`, the
/// others independent of the row. None if the region is of another form.
static std::optional<unsigned> rowIndex(Region &region) {
  Block &body = region.front();
  Value row = body.getArgument(0);
  auto dependsOnRow = [&](Value v) {
    SmallVector<Value> work = {v};
    DenseSet<Value> seen;
    while (!work.empty()) {
      Value x = work.pop_back_val();
      if (x == row)
        return true;
      Operation *def = x.getDefiningOp();
      if (!seen.insert(x).second || !def ||
          !region.isAncestor(def->getParentRegion()))
        continue;
      llvm::append_range(work, def->getOperands());
    }
    return false;
  };
  auto isRow = [&](Value v) {
    if (v == row)
      return true;
    auto min = v.getDefiningOp<arith::MinSIOp>();
    return min && ((min.getLhs() == row && !dependsOnRow(min.getRhs())) ||
                   (min.getRhs() == row && !dependsOnRow(min.getLhs())));
  };
  std::optional<unsigned> found;
  for (auto [i, v] : llvm::enumerate(body.getTerminator()->getOperands())) {
    if (!dependsOnRow(v))
      continue;
    bool ok = isRow(v);
    if (auto add = v.getDefiningOp<arith::AddIOp>())
      ok = (isRow(add.getLhs()) && !dependsOnRow(add.getRhs())) ||
           (isRow(add.getRhs()) && !dependsOnRow(add.getLhs()));
    if (!ok || found)
      return std::nullopt;
    found = i;
  }
  return found;
}

LogicalResult TileLowering::lowerLoadTma(TileLoadOp op, const Global &g,
                                         const SharedTile &t) {
  int64_t rank = g.sizes.size();
  std::optional<unsigned> row = rowIndex(op.getIndices());
  if (!g.tensorMap || !t.swizzle ||
      !(row && static_cast<int64_t>(*row) == rank - 2))
    return op.emitOpError("cannot be copied by TMA: the sm_90a kernels copy "
                          "tiles whose rows are consecutive in the "
                          "second-innermost dimension of a kernel parameter "
                          "with a tensor map");
  // The tile's first row: the box's coordinates, innermost first.
  FailureOr<SmallVector<Value>> first = rowIndices(op.getIndices(), e.c32(0));
  if (failed(first))
    return failure();
  Value barrier = groupBarrier;
  if (!barrier) {
    // A load outside any scf.if arrives on its own.
    barrier = barrierAt(e.c32(stages));
    int64_t bytes = t.shape[0] * t.shape[1] * t.elementBytes();
    inThreadZero(e, tid, role, [&] {
      NVVM::MBarrierArriveExpectTxOp::create(
          b, e.loc, /*res=*/Type(), barrier, e.c32(bytes),
          NVVM::MemScopeKind::CTA, /*relaxed=*/false, /*predicate=*/Value());
    });
  }
  int64_t blockCols = t.swizzle / t.elementBytes();
  int64_t blocks = t.shape[1] / blockCols;
  inThreadZero(e, tid, role, [&] {
    for (int64_t blk = 0; blk < blocks; ++blk) {
      SmallVector<Value> coords = {e.c32(blk * blockCols)};
      for (Value index : llvm::reverse(*first))
        coords.push_back(index);
      Value dst =
          sharedAt(e.add(t.offset, e.c32(blk * t.shape[0] * t.swizzle)));
      // The CTA's own shared memory, addressed as shared::cluster.
      Value clusterDst = LLVM::AddrSpaceCastOp::create(
          b, e.loc, LLVM::LLVMPointerType::get(b.getContext(), 7), dst);
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          b, e.loc, clusterDst, g.tensorMap, coords, barrier,
          /*im2colOffsets=*/ValueRange(), /*multicastMask=*/Value(),
          /*l2CacheHint=*/Value(),
          NVVM::TMALoadModeAttr::get(b.getContext(), NVVM::TMALoadMode::TILE),
          b.getBoolAttr(false), /*group=*/nullptr, /*predicate=*/Value());
    }
  });
  return success();
}
