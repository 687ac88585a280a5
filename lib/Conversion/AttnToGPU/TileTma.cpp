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
//   before the pipelined loop.
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

/// Runs the ops `body` builds in thread 0 only.
static void inThreadZero(Emitter &e, Value tid,
                         function_ref<void()> body) {
  OpBuilder::InsertionGuard guard(e.b);
  auto ifOp = scf::IfOp::create(e.b, e.loc, e.eq(tid, e.c32(0)), false);
  e.b.setInsertionPointToStart(ifOp.thenBlock());
  body();
}

void TileLowering::initBarriers() {
  {
    OpBuilder atEntry = OpBuilder::atBlockBegin(entry);
    barrierOffset = arith::ConstantOp::create(atEntry, e.loc,
                                              atEntry.getI32IntegerAttr(0));
  }
  inThreadZero(e, tid, [&] {
    for (int64_t i = 0; i <= stages; ++i) {
      // One arrival per group; the loads outside any scf.if arrive each.
      int64_t count = i < stages ? 1 : std::max<int64_t>(topLevelLoads, 1);
      NVVM::MBarrierInitOp::create(b, e.loc, barrierAt(e.c32(i)),
                                   e.c32(count), /*predicate=*/Value());
    }
    NVVM::FenceMbarrierInitOp::create(b, e.loc);
  });
  gpu::BarrierOp::create(b, e.loc);
}

void TileLowering::openGroup(scf::IfOp op) {
  // Group g of the loop's iteration j is g = j + the groups issued before
  // it; outside a loop, the next prologue group.
  Value slot =
      loopIter ? e.urem(e.add(loopIter, e.c32(prologueGroups)), e.c32(stages))
               : e.c32(prologueGroups++ % stages);
  groupBarrier = barrierAt(slot);
  int64_t bytes = loadBytes(op.getThenRegion());
  inThreadZero(e, tid, [&] {
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
    topLevelPending = false;
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
    topLevelPending = true;
    int64_t bytes = t.shape[0] * t.shape[1] * t.elementBytes();
    inThreadZero(e, tid, [&] {
      NVVM::MBarrierArriveExpectTxOp::create(
          b, e.loc, /*res=*/Type(), barrier, e.c32(bytes),
          NVVM::MemScopeKind::CTA, /*relaxed=*/false, /*predicate=*/Value());
    });
  }
  int64_t blockCols = t.swizzle / t.elementBytes();
  int64_t blocks = t.shape[1] / blockCols;
  inThreadZero(e, tid, [&] {
    for (int64_t blk = 0; blk < blocks; ++blk) {
      SmallVector<Value> coords = {e.c32(blk * blockCols)};
      for (Value index : llvm::reverse(*first))
        coords.push_back(index);
      Value dst = sharedAt(e.add(t.offset, e.c32(blk * t.shape[0] * t.swizzle)));
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
