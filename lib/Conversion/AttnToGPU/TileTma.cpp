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
//   before the pipelined loop. A source without a tensor map (decode's Q,
//   whose rows run over the query heads of a group) is copied there by
//   cp.async instead, into the same swizzled layout, and waited for at the
//   same point;
// - warp-specialised kernels lower the loop nest twice, after the
//   barriers are made: for one thread of a producer warpgroup (with
//   setmaxnreg giving its registers away), which issues the copies and,
//   before it refills a stage, waits on that stage's "empty" mbarrier; and
//   for the consumer warps, which skip the copies, wait for each group as
//   above without a CTA barrier and, at the end of an iteration, arrive on
//   the empty barrier of the stage they read (one arrival per warpgroup);
// - a warp-specialised kernel's sources without a tensor map (a paged
//   cache, whose rows the block table scatters) are copied by cp.async from
//   all 128 producer threads, which then all run the producer's lowering:
//   after each such load every one of them arrives on the load's full
//   barrier once its copies have landed (cp.async.mbarrier.arrive.noinc),
//   so a barrier counts 128 arrivals per cp.async load of its group, plus
//   one where TMA copies arm it with their bytes; the consumers fence the
//   async proxy after such a wait (wgmma reads what the generic proxy
//   wrote);
// - a ring whose tiles the loop reads L iterations late (kRingLagAttr on
//   their loads: a rotated loop's V tiles, L = 1) keeps its stage until
//   the end of iteration j + L. With a single barrier set the consumers
//   then free group j's stage L iterations late, so the producer fills it
//   stages - L - 1 iterations before its first read: none with 2 stages
//   and L = 1. There, the loads of each lag l have full and empty barriers
//   of their own (a barrier set): iteration j waits for set l's copies of
//   group max(j - l, 0) and frees those of group j - l, the copies of the
//   last l groups are waited for after the loop, and the producer waits
//   for each set's stage to be free just before it copies into it; so a
//   K tile is not held up by the V tile beside it. With more stages one
//   set keeps the kernels as they were, with fewer instructions per
//   iteration (two sets measured no faster at D = 128: docs/GPU.md);
// - persistent kernels (all warp-specialised ones) run each role's lowering
//   in a grid-stride loop over the scf.forall's tiles. Each tile's group g
//   fills stage g % stages again (the stage the tile form's ring index
//   names), so the barriers' phases run on across tiles: the loop carries
//   one bit per stage (its fills so far, mod 2) and one for Q, whose
//   barrier completes one phase per tile. One more
//   mbarrier frees Q: the consumers arrive on it after their last read of
//   Q, and the producer waits for it before it loads the next tile's. The
//   stages a rotated loop still reads after its last iteration are freed
//   after the last op that reads them. So the producer loads the next
//   tile's Q and first K/V tiles while the consumers finish the last one.
//
// A TMA box is a whole tile's rows (of a swizzled tile one column block, of
// the backward's unswizzled row records all four fields): rows past the
// tile's `rows` that lie inside the source are read, not zero-filled (their
// keys are masked and their rows never stored, by attn-tile); rows past the
// source's end read zeros. The tensor maps are made by the runtime
// (docs/KernelABI.md).
//
//===----------------------------------------------------------------------===//

#include "TileLowering.h"

#include <functional>

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::tile_lowering;

/// Bytes of one mbarrier.
static constexpr int64_t kBarrierBytes = 8;
/// try_wait's suspend-time hint (ns), as upstream's nvgpu lowering uses.
static constexpr int64_t kWaitTicks = 10000000;
/// setmaxnreg's split of the 64512 registers of 384 threads at 168: 2 x 128
/// consumer threads at 240 and 128 producer threads at 24 (FlashAttention-3's).
/// A persistent producer's tile loop needs more than 24 (ptxas spilled 4 to
/// 12 bytes there): 232 and 40 then, which the consumers fit in without
/// spills (and measured as fast as 240 on a non-persistent kernel, H200,
/// D = 128: docs/GPU.md). A producer that copies a paged cache's rows by
/// cp.async walks the block table: 48 (at 40 its causal kernels spilled 36
/// bytes, at 24 every one 72 to 84), and the consumers fit in 224.
static constexpr int64_t kProducerRegisters = 24, kConsumerRegisters = 240;
static constexpr int64_t kPersistentProducerRegisters = 40,
                         kPersistentConsumerRegisters = 232;
static constexpr int64_t kCopyingProducerRegisters = 48,
                         kCopyingConsumerRegisters = 224;

Value TileLowering::barrierAt(Value slot) {
  return sharedAt(e.add(barrierOffset, e.mul(slot, e.c32(kBarrierBytes))));
}

Value TileLowering::fullSlot(int64_t set, Value stage) {
  if (!set)
    return stage;
  return e.add(e.c32(laterSetsBase() + (set - 1) * 2 * stages), stage);
}

Value TileLowering::emptySlot(int64_t set, Value stage) {
  if (!set)
    return e.add(e.c32(stages + 1), stage);
  return e.add(e.c32(laterSetsBase() + (set - 1) * 2 * stages + stages), stage);
}

int64_t TileLowering::setOf(TileLoadOp load) const {
  if (loadSets == 1)
    return 0;
  auto attr = load->getAttrOfType<IntegerAttr>(kRingLagAttr);
  return attr ? attr.getInt() : 0;
}

LogicalResult TileLowering::countLoadLags(Block &body) {
  ringLag = 0;
  WalkResult walk = body.walk([&](TileLoadOp load) {
    auto attr = load->getAttrOfType<IntegerAttr>(kRingLagAttr);
    if (!attr)
      return WalkResult::advance();
    int64_t lag = attr.getInt();
    if (lag < 0 || lag >= stages || !load->getParentOfType<scf::IfOp>()) {
      load.emitOpError("is read ")
          << lag << " iterations after its own, with " << stages
          << " stages; a ring's tile is read from 0 to stages - 1 "
          << "iterations later, and only a ring's (in an scf.if) can be";
      return WalkResult::interrupt();
    }
    ringLag = std::max(ringLag, lag);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // Only warp-specialised consumers wait for and free a set on its own
  // (the file comment); the others wait for a whole group at the start of
  // its iteration, and a CTA barrier frees the stage the prefetch reuses.
  loadSets = specialized && ringLag && stages <= ringLag + 1 ? ringLag + 1 : 1;
  return countGroupArrivals(body);
}

LogicalResult TileLowering::countGroupArrivals(Block &body) {
  groupArrivals.assign(loadSets, 1);
  groupCopiesRows.assign(loadSets, false);
  bool counted = false;
  WalkResult walk = body.walk([&](scf::IfOp group) {
    SmallVector<int64_t> boxes(loadSets, 0), copies(loadSets, 0);
    bool loads = false;
    group.getThenRegion().walk([&](TileLoadOp load) {
      Global *g = sourceOf(load);
      loads = true;
      ++(g && g->tensorMap ? boxes : copies)[setOf(load)];
    });
    if (!loads)
      return WalkResult::advance();
    SmallVector<int64_t> arrivals;
    for (auto [tmaLoads, rowLoads] : llvm::zip_equal(boxes, copies))
      arrivals.push_back((tmaLoads ? 1 : 0) + rowLoads * kWarpgroupThreads);
    if (counted && arrivals != ArrayRef<int64_t>(groupArrivals)) {
      group.emitOpError("copies tiles by TMA and by cp.async in another mix "
                        "than the kernel's other groups; every group of "
                        "copies completes on barriers set up alike");
      return WalkResult::interrupt();
    }
    counted = true;
    groupArrivals = arrivals;
    for (auto [set, rowLoads] : llvm::enumerate(copies))
      groupCopiesRows[set] = rowLoads > 0;
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Runs the ops `body` builds in one thread of the role: thread 0, or the
/// producer warpgroup's first (a producer of one thread as it is).
void TileLowering::inOneThread(function_ref<void()> body) {
  if (role == Role::Producer && !producerCopies)
    return body();
  int64_t first = role == Role::Producer ? warps * 32 : 0;
  OpBuilder::InsertionGuard guard(e.b);
  auto ifOp = scf::IfOp::create(e.b, e.loc, e.eq(tid, e.c32(first)), false);
  e.b.setInsertionPointToStart(ifOp.thenBlock());
  body();
}

void TileLowering::initBarriers() {
  {
    OpBuilder atEntry = OpBuilder::atBlockBegin(entry);
    barrierOffset =
        arith::ConstantOp::create(atEntry, e.loc, atEntry.getI32IntegerAttr(0));
  }
  inOneThread([&] {
    for (int64_t i = 0; i < barrierCount(); ++i) {
      // Full: the group's arrivals (groupArrivals), those of the loads
      // outside any scf.if. Empty (the rings' and, persistent, Q's): one
      // per consumer warpgroup. Then each set past the first: `stages`
      // full, `stages` empty.
      int64_t later = i - laterSetsBase();
      int64_t count =
          i < stages    ? groupArrivals[0]
          : i == stages ? std::max<int64_t>(topLevelArrivals, 1)
          : later >= 0 && later % (2 * stages) < stages
              ? groupArrivals[1 + later / (2 * stages)]
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

Value TileLowering::tripCount(scf::ForOp loop) {
  Value span =
      e.max(e.sub(loop.getUpperBound(), loop.getLowerBound()), e.c32(0));
  Value step = loop.getStep();
  return e.div(e.add(span, e.sub(step, e.c32(1))), step);
}

Value TileLowering::fillParity(Value g) {
  Value parity = e.urem(e.udiv(g, e.c32(stages)), e.c32(2));
  if (!ringPhases)
    return parity;
  Value before = e.band(e.shr(ringPhases, e.urem(g, e.c32(stages))), e.c32(1));
  return e.bxor(parity, before);
}

Value TileLowering::qParity() {
  if (!ringPhases)
    return e.c32(0);
  return e.band(e.shr(ringPhases, e.c32(kQPhaseBit)), e.c32(1));
}

void TileLowering::endRing(scf::ForOp loop) {
  ringTrips = tripCount(loop);
  // The tile's `trips` groups filled stage s ceil((trips - s) / stages)
  // times; an odd count flips the stage's phase bit. Q's flips once.
  Value flips = e.c32(int64_t(1) << kQPhaseBit);
  for (int64_t s = 0; s < stages; ++s) {
    Value fills =
        e.udiv(e.add(ringTrips, e.c32(stages - 1 - s)), e.c32(stages));
    flips = e.bor(flips, e.shl(e.band(fills, e.c32(1)), e.c32(s)));
  }
  nextRingPhases = e.bxor(ringPhases, flips);
}

void TileLowering::forLastGroups(
    Value trips, function_ref<int64_t(int64_t)> lag,
    function_ref<void(Value group, int64_t set)> body) {
  for (int64_t set = 0; set < loadSets; ++set)
    for (int64_t i = 1; i <= lag(set); ++i) {
      OpBuilder::InsertionGuard guard(b);
      auto ran = scf::IfOp::create(b, e.loc, e.ge(trips, e.c32(i)), false);
      b.setInsertionPointToStart(ran.thenBlock());
      body(e.sub(trips, e.c32(i)), set);
    }
}

void TileLowering::releaseLaggedStages() {
  forLastGroups(
      ringTrips, [&](int64_t set) { return releaseLag(set); },
      [&](Value group, int64_t set) { releaseStage(group, set); });
}

/// The op of `body` (at its top level) that last reads one of `tiles` or a
/// view of one; a tile.load that writes one does not read it. Null if none
/// does.
static Operation *lastReader(Block &body, ArrayRef<Value> tiles) {
  SmallVector<Value> work(tiles.begin(), tiles.end());
  DenseSet<Value> seen(tiles.begin(), tiles.end());
  Operation *last = nullptr;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<memref::SubViewOp, memref::CastOp, memref::ExpandShapeOp>(user)) {
        if (seen.insert(user->getResult(0)).second)
          work.push_back(user->getResult(0));
        continue;
      }
      if (auto load = dyn_cast<TileLoadOp>(user); load && load.getTile() == v)
        continue;
      Operation *top = body.findAncestorOpInBlock(*user);
      if (top && (!last || last->isBeforeInBlock(top)))
        last = top;
    }
  }
  return last;
}

LogicalResult TileLowering::lowerPersistent(scf::ForallOp op, Block &body) {
  // The tiles of the grid: x fastest, as the blocks of a grid launch. In
  // i32 (registers: the runtime refuses more than 2^31 - 1 tiles).
  Value extent[3] = {e.c32(1), e.c32(1), e.c32(1)};
  SmallVector<int64_t> dims;
  for (auto [ub, attr] :
       llvm::zip_equal(op.getMixedUpperBound(), *op.getMapping())) {
    int64_t d =
        static_cast<int64_t>(cast<gpu::GPUBlockMappingAttr>(attr).getBlock()) -
        static_cast<int64_t>(gpu::MappingId::DimX);
    Value size = isa<Value>(ub) ? scalars.lookupOrNull(cast<Value>(ub))
                                : e.c32(*getConstantIntValue(ub));
    if (!size)
      return op.emitOpError("has a bound the GPU lowering did not map");
    extent[d] = size;
    dims.push_back(d);
  }
  Value total = e.mul(e.mul(extent[0], extent[1]), extent[2]);
  Value first = e.toI32(gpu::BlockIdOp::create(b, e.loc, gpu::Dimension::x));
  Value stride = e.toI32(gpu::GridDimOp::create(b, e.loc, gpu::Dimension::x));
  // Carried in one register (the consumers have none to spare): the
  // barriers' phases.
  auto loop =
      scf::ForOp::create(b, e.loc, first, total, stride, ValueRange{e.c32(0)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value w = loop.getInductionVar();
  Value rest = e.udiv(w, extent[0]);
  Value coord[3] = {e.urem(w, extent[0]), e.urem(rest, extent[1]),
                    e.udiv(rest, extent[1])};
  for (auto [iv, d] : llvm::zip_equal(op.getInductionVars(), dims))
    scalars.map(iv, coord[d]);
  ringPhases = loop.getRegionIterArgs()[0];
  nextRingPhases = Value();
  topLevelEmptyWaited = false;
  if (failed(lowerBlock(body, nullptr)))
    return failure();
  if (!nextRingPhases)
    return op.emitOpError("has no pipelined key/value loop; a persistent "
                          "kernel's rings need one per tile");
  scf::YieldOp::create(b, e.loc, nextRingPhases);
  ringPhases = nextRingPhases = Value();
  return success();
}

LogicalResult TileLowering::lowerRoles(scf::ForallOp op) {
  Block &body = *op.getBody();
  if (persistent) {
    SmallVector<Value> topLevel, rings;
    body.walk([&](TileLoadOp load) {
      Value tile = load.getTile();
      while (auto view = tile.getDefiningOp<memref::SubViewOp>())
        tile = view.getSource();
      (load->getParentOfType<scf::IfOp>() ? rings : topLevel).push_back(tile);
    });
    lastTopLevelRead = lastReader(body, topLevel);
    lastRingRead = lastReader(body, rings);
    if (!lastTopLevelRead || !lastRingRead)
      return op.emitOpError("loads tiles that no op reads; a persistent "
                            "kernel frees them after their last read");
  }
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
  // its threads issues every TMA copy, all of them the cp.async ones.
  int64_t producerRegisters = producerCopies ? kCopyingProducerRegisters
                              : persistent   ? kPersistentProducerRegisters
                                             : kProducerRegisters;
  int64_t consumerRegisters = producerCopies ? kCopyingConsumerRegisters
                              : persistent   ? kPersistentConsumerRegisters
                                             : kConsumerRegisters;
  b.setInsertionPointToStart(split.thenBlock());
  NVVM::SetMaxRegisterOp::create(b, e.loc, producerRegisters,
                                 NVVM::SetMaxRegisterAction::decrease);
  if (producerCopies) {
    copyTid = e.sub(tid, e.c32(warps * 32));
    copyThreads = kWarpgroupThreads;
  } else {
    auto one =
        scf::IfOp::create(b, e.loc, e.eq(tid, e.c32(warps * 32)), false);
    b.setInsertionPointToStart(one.thenBlock());
  }
  role = Role::Producer;
  auto lowerBody = [&] {
    return persistent ? lowerPersistent(op, body) : lowerBlock(body, nullptr);
  };
  if (failed(lowerBody()))
    return failure();
  int64_t producerBytes = tileBytes;
  copyTid = Value();
  copyThreads = 0;

  scalars = scalars0;
  globals = globals0;
  shared = shared0;
  regs = regs0;
  tileBytes = tileBytes0;
  prologueGroups = groups0;
  b.setInsertionPointToStart(split.elseBlock());
  NVVM::SetMaxRegisterOp::create(b, e.loc, consumerRegisters,
                                 NVVM::SetMaxRegisterAction::increase);
  role = Role::Consumer;
  if (failed(lowerBody()))
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

void TileLowering::releaseStage(Value iter, int64_t set) {
  arriveFromWarpgroups(emptySlot(set, e.urem(iter, e.c32(stages))));
}

void TileLowering::arriveFromWarpgroups(Value slot) {
  // One arrival per warpgroup, from its first thread: the tile's only
  // readers are the warpgroup's wgmmas, which it has waited for.
  OpBuilder::InsertionGuard guard(b);
  auto first = scf::IfOp::create(
      b, e.loc, e.eq(e.urem(tid, e.c32(kWarpgroupThreads)), e.c32(0)), false);
  b.setInsertionPointToStart(first.thenBlock());
  NVVM::MBarrierArriveOp::create(b, e.loc, /*res=*/Type(), barrierAt(slot),
                                 /*count=*/Value());
}

LogicalResult TileLowering::openGroup(scf::IfOp op) {
  // Group g of the loop's iteration j is g = j + the groups issued before
  // it; outside a loop, the next prologue group.
  groupIndex = loopIter ? e.add(loopIter, e.c32(prologueGroups))
                        : e.c32(prologueGroups++);
  groupBytes.assign(loadSets, 0);
  groupFull.assign(loadSets, Value());
  SmallVector<bool> loads(loadSets, false);
  op.getThenRegion().walk([&](TileLoadOp load) {
    loads[setOf(load)] = true;
    // The bytes of the TMA copies; cp.async ones arrive by themselves.
    Global *g = sourceOf(load);
    if (!g || !g->tensorMap)
      return;
    auto type = cast<MemRefType>(load.getTile().getType());
    groupBytes[setOf(load)] +=
        type.getNumElements() * type.getElementTypeBitWidth() / 8;
  });
  // Every group arms every set's barrier: the consumers wait on each.
  for (auto [set, any] : llvm::enumerate(loads))
    if (!any)
      return op.emitOpError("copies no tile read ")
             << set << " iterations late, which other groups of copies "
             << "of the kernel do; each group loads a tile of every ring";
  // One set is armed before the copies; several each just before its own
  // (the producer waits for each stage to be free there).
  if (loadSets == 1)
    armGroup(0);
  return success();
}

Value TileLowering::armGroup(int64_t set) {
  if (groupFull[set])
    return groupFull[set];
  if (specialized) {
    // The consumers have released the stage's previous fill (the phase
    // before this fill's of its empty barrier; before the stage's first
    // fill, the phase before the first, which counts as complete).
    Value parity = e.bxor(fillParity(groupIndex), e.c32(1));
    waitParity(barrierAt(emptySlot(set, e.urem(groupIndex, e.c32(stages)))),
               parity);
  }
  Value barrier = barrierAt(fullSlot(set, e.urem(groupIndex, e.c32(stages))));
  groupFull[set] = barrier;
  if (!groupBytes[set])
    return barrier;
  inOneThread([&] {
    NVVM::MBarrierArriveExpectTxOp::create(
        b, e.loc, /*res=*/Type(), barrier, e.c32(groupBytes[set]),
        NVVM::MemScopeKind::CTA, /*relaxed=*/false, /*predicate=*/Value());
  });
  return barrier;
}

void TileLowering::waitParity(Value barrier, Value parity) {
  // The producer's thread waits alone: upstream's loop on its own try_wait.
  if (role == Role::Producer && !producerCopies) {
    NVVM::MBarrierTryWaitParityOp::create(b, e.loc, barrier, parity,
                                          e.c32(kWaitTicks));
    return;
  }
  // Whole warps wait here. Upstream's loop branches on each thread's
  // try_wait result, so ptxas takes the wait for a loop that threads may
  // leave apart: every loop around it gets a convergence barrier and loses
  // the uniform datapath (a persistent kernel's tile loop, and the key loop
  // inside it). Voting the results across the warp makes the loop's exit
  // warp-uniform. Upstream has no op for this form, hence inline PTX.
  Value address = LLVM::PtrToIntOp::create(b, e.loc, e.i32(), barrier);
  LLVM::InlineAsmOp::create(
      b, e.loc, TypeRange(), ValueRange{address, parity, e.c32(kWaitTicks)},
      "{\n\t.reg .pred P1;\n\tLAB_WAIT:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1, $2;\n\t"
      "vote.sync.all.pred P1, P1, -1;\n\t"
      "@!P1 bra.uni LAB_WAIT;\n\t}",
      "r,r,n", /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
}

void TileLowering::waitForGroup(Value iter, int64_t set) {
  Value barrier, parity;
  bool copiedRows;
  if (iter) {
    barrier = barrierAt(fullSlot(set, e.urem(iter, e.c32(stages))));
    parity = fillParity(iter);
    copiedRows = groupCopiesRows[set];
  } else {
    // Phase t % 2 for a persistent kernel's t-th tile.
    barrier = barrierAt(e.c32(stages));
    parity = qParity();
    topLevelWaited = true;
    copiedRows = topLevelCopiesRows;
  }
  waitParity(barrier, parity);
  // The producer's cp.async copies wrote through the generic proxy; wgmma
  // reads through the async one.
  if (copiedRows && wgmma)
    fenceAsyncProxy();
}

void TileLowering::awaitTopLevelLoads() {
  if (cpAsyncPending) {
    // Each thread's own copies, then every thread's.
    if (uncommittedLoads)
      NVVM::CpAsyncCommitGroupOp::create(b, e.loc);
    uncommittedLoads = false;
    NVVM::CpAsyncWaitGroupOp::create(b, e.loc, 0);
    ctaBarrier();
    cpAsyncPending = false;
  }
  if (topLevelPending())
    waitForGroup(Value());
}

/// The index of a tile.load's row region that follows the row: `row`,
/// `row` clamped by `min(row, bound)`, or either plus terms independent of
/// the row (`base + q0 + min(row, bound)`: a packed sequence's first row,
/// the tile's), the others independent of the row. None if the region is
/// of another form.
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
  auto isClampedRow = [&](Value v) {
    if (v == row)
      return true;
    auto min = v.getDefiningOp<arith::MinSIOp>();
    return min && ((min.getLhs() == row && !dependsOnRow(min.getRhs())) ||
                   (min.getRhs() == row && !dependsOnRow(min.getLhs())));
  };
  // The (clamped) row plus any number of row-independent terms.
  std::function<bool(Value)> followsRow = [&](Value v) {
    if (isClampedRow(v))
      return true;
    auto add = v.getDefiningOp<arith::AddIOp>();
    return add && ((followsRow(add.getLhs()) && !dependsOnRow(add.getRhs())) ||
                   (followsRow(add.getRhs()) && !dependsOnRow(add.getLhs())));
  };
  std::optional<unsigned> found;
  for (auto [i, v] : llvm::enumerate(body.getTerminator()->getOperands())) {
    if (!dependsOnRow(v))
      continue;
    if (!followsRow(v) || found)
      return std::nullopt;
    found = i;
  }
  return found;
}

LogicalResult TileLowering::lowerLoadTma(TileLoadOp op, const Global &g,
                                         const SharedTile &t) {
  int64_t rank = g.sizes.size();
  std::optional<unsigned> row = rowIndex(op.getIndices());
  // A swizzled tile is copied a column block at a time; an unswizzled one
  // (the backward's row records) whole, its rows unpadded whole 16-byte
  // units.
  bool dense = !t.swizzle && t.pitch == t.shape[1] &&
               t.shape[1] * t.elementBytes() % 16 == 0 && t.shape[1] <= 256;
  if (!g.tensorMap || !(t.swizzle || dense) ||
      !(row && static_cast<int64_t>(*row) == rank - 2))
    return op.emitOpError("cannot be copied by TMA: the sm_90a kernels copy "
                          "swizzled tiles, or unpadded ones of whole 16-byte "
                          "rows, whose rows are consecutive in the "
                          "second-innermost dimension of a kernel parameter "
                          "with a tensor map");
  // The tile's first row: the box's coordinates, innermost first.
  FailureOr<SmallVector<Value>> first = rowIndices(op.getIndices(), e.c32(0));
  if (failed(first))
    return failure();
  Value barrier = groupIndex ? armGroup(setOf(op)) : Value();
  if (!barrier) {
    // A persistent producer first waits until the consumers are done with
    // the last tile's (the phase before the first counts as complete).
    if (persistent && role == Role::Producer && !topLevelEmptyWaited) {
      waitParity(barrierAt(e.c32(topLevelEmptySlot())),
                 e.bxor(qParity(), e.c32(1)));
      topLevelEmptyWaited = true;
    }
    // A load outside any scf.if arrives on its own.
    barrier = barrierAt(e.c32(stages));
    int64_t bytes = t.shape[0] * t.shape[1] * t.elementBytes();
    inOneThread([&] {
      NVVM::MBarrierArriveExpectTxOp::create(
          b, e.loc, /*res=*/Type(), barrier, e.c32(bytes),
          NVVM::MemScopeKind::CTA, /*relaxed=*/false, /*predicate=*/Value());
    });
  }
  int64_t blockCols = t.swizzle ? t.swizzle / t.elementBytes() : t.shape[1];
  int64_t blocks = t.shape[1] / blockCols;
  inOneThread([&] {
    for (int64_t blk = 0; blk < blocks; ++blk) {
      SmallVector<Value> coords = {e.c32(blk * blockCols)};
      for (Value index : llvm::reverse(*first))
        coords.push_back(index);
      Value dst =
          sharedAt(e.add(t.offset, e.c32(blk * t.blockRows * t.swizzle)));
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
