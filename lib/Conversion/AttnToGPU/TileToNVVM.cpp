//===- TileToNVVM.cpp - the tile form on warps and tensor cores -----------===//
//
// Maps attn-tile's tile form onto one CTA (docs/TileToGPU.md), op by op; no
// op is recognised by the pattern around it, and the attention algorithm
// lives in attn-tile alone. This file holds the structure (loops, memory
// tiles, the kernel); TileFragments.cpp the register tiles. Upstream MLIR has the nvvm ops for ldmatrix,
// mma.sync and cp.async but no lowering of tensor-level ops onto register
// fragments (the vector-to-nvgpu path needs vector.contract on one warp's
// tile), so the mapping below is written here:
//
// - register tiles: each warp holds a set of 16-row MMA tiles, each thread
//   the elements MmaLayout.h says. Without key slices a `[R, C]` tile's
//   rows are split between the warps; with key slices (split-KV decode) a
//   `[S, R, C]` tile gives slice s to warp s, and a tile without the slice
//   dimension is held whole by every warp (R = 16 m-tiles);
// - memory tiles in workgroup memory: slices of the dynamic shared memory,
//   rows padded by 16 bytes, as attn-tile's cost model counts them;
// - index arithmetic in i32, global element offsets in i64;
// - tile.load: 16-byte cp.async chunks, zero-filled past `rows`; a commit
//   group after every scf.if that holds loads, and a wait for all but the
//   newest `stages - 2` groups plus one barrier at the top of the loop that
//   prefetches;
// - tile.matmul: ldmatrix and mma.sync.m16n8k16; a loop-invariant memory
//   lhs with one m-tile per warp is read into registers before the loop;
// - tile.reduce over columns: per thread, then across the four lanes of a
//   row; over key slices: through shared memory, after the K/V tiles are
//   retired. A sum over columns stays lane-partial (each of the row's four
//   lanes holds part of it) through the maps that are linear in it and the
//   loops that carry it, and is summed across the lanes only where its
//   value is needed (the running softmax sum: once, after the loop).
//
//===----------------------------------------------------------------------===//

#include "TileLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::tile_lowering;

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

LogicalResult TileLowering::lowerBlock(Block &block,
                                       SmallVectorImpl<Value> *yielded,
                                       ArrayRef<bool> partial) {
  int64_t firstGroup = wgmmaCommitted;
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      // No wgmma of this block stays in flight past its end.
      awaitAllWgmma(firstGroup);
      // The producer keeps no register tiles to yield.
      if (isa<scf::InParallelOp, func::ReturnOp>(op) ||
          (role == Role::Producer && isa<scf::YieldOp>(op)))
        continue;
      if (!yielded)
        return op.emitOpError("ends a region the GPU lowering does not "
                              "expect");
      for (auto [i, v] : llvm::enumerate(op.getOperands())) {
        FailureOr<SmallVector<Value>> flat =
            flatten(&op, v, i < partial.size() && partial[i]);
        if (failed(flat))
          return failure();
        llvm::append_range(*yielded, *flat);
      }
      continue;
    }
    if (failed(lowerOp(&op)))
      return failure();
    // Persistent consumers are done with Q, and with the ring stages the
    // loop left to later ops: the producer may load the next tile's.
    if (&op == lastTopLevelRead && role == Role::Consumer)
      arriveFromWarpgroups(e.c32(topLevelEmptySlot()));
    if (&op == lastRingRead && role == Role::Consumer)
      releaseLaggedStages();
  }
  return success();
}

LogicalResult TileLowering::lowerOp(Operation *op) {
  // The producer holds no register tiles: it skips the ops on them.
  auto onRegisterTiles = [&] {
    if (isa<TileMatmulOp, TileMapOp, TileReduceOp, TileStoreOp>(op))
      return true;
    return llvm::any_of(op->getOperands(), [&](Value v) {
      return isa<RankedTensorType>(v.getType()) && !globals.count(v);
    });
  };
  if (role == Role::Producer && !isa<scf::ForOp, scf::IfOp>(op) &&
      onRegisterTiles())
    return success();
  // The producer issues every copy; the consumers' thread 0 the
  // reductions whose order the turns fix.
  if (role == Role::Consumer && isa<TileLoadOp>(op))
    return success();
  if (role == Role::Producer && isa<TileAwaitTurnOp, TilePassTurnOp>(op))
    return success();
  if (isa<scf::ForOp, scf::IfOp>(op))
    awaitWgmmaIn(op);
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](scf::ForallOp op) { return lowerForall(op); })
      .Case([&](scf::ForOp op) { return lowerFor(op); })
      .Case([&](scf::IfOp op) { return lowerIf(op); })
      .Case([&](memref::AllocOp op) { return lowerAlloc(op); })
      .Case([&](memref::SubViewOp op) { return lowerSubView(op); })
      .Case<memref::LoadOp, tensor::ExtractOp>(
          [&](Operation *op) { return lowerGlobalLoad(op); })
      .Case([&](memref::StoreOp op) { return lowerGlobalStore(op); })
      .Case([&](TileLoadOp op) { return lowerLoad(op); })
      .Case([&](TileStoreOp op) { return lowerStore(op); })
      .Case([&](TileMatmulOp op) { return lowerMatmul(op); })
      .Case([&](TileMapOp op) { return lowerMap(op); })
      .Case([&](TileReduceOp op) { return lowerReduce(op); })
      .Case([&](TileWorkItemOp op) { return lowerWorkItem(op); })
      .Case([&](TileAwaitTurnOp op) { return lowerAwaitTurn(op); })
      .Case([&](TilePassTurnOp op) { return lowerPassTurn(op); })
      .Case([&](TileParamOp op) -> LogicalResult {
        auto it = paramArgs.find(op.getName());
        if (it == paramArgs.end())
          return op.emitOpError("names launch parameter '")
                 << op.getName() << "', which this kernel does not take";
        Value arg = it->second;
        if (op.getType().isIndex())
          arg = arith::TruncIOp::create(b, e.loc, e.i32(), arg);
        scalars.map(op.getResult(), arg);
        return success();
      })
      .Case<memref::CastOp, memref::ExpandShapeOp, bufferization::ToBufferOp,
            bufferization::ToTensorOp, tensor::CastOp>(
          [&](Operation *op) { return lowerView(op); })
      .Case<memref::DimOp, tensor::DimOp>([&](Operation *op) -> LogicalResult {
        std::optional<int64_t> dim = getConstantIntValue(op->getOperand(1));
        Global *g = globals.lookup(op->getOperand(0));
        if (!dim || !g)
          return op->emitOpError("reads a size the GPU lowering cannot map");
        scalars.map(op->getResult(0), g->sizes[*dim]);
        return success();
      })
      .Default([&](Operation *op) { return lowerScalar(op); });
}

LogicalResult TileLowering::lowerView(Operation *op) {
  Value src = op->getOperand(0), res = op->getResult(0);
  if (Global *g = globals.lookup(src)) {
    globals[res] = g;
    return success();
  }
  auto it = shared.find(src);
  if (it == shared.end())
    return op->emitOpError("views a buffer the GPU lowering did not map");
  SharedTile t = it->second;
  t.shape = llvm::to_vector(cast<MemRefType>(res.getType()).getShape());
  // Only leading dimensions may be split: the rows keep their pitch.
  if (auto expand = dyn_cast<memref::ExpandShapeOp>(op);
      expand && expand.getReassociationIndices().back().size() != 1)
    return op->emitOpError("splits the rows of a shared-memory tile");
  shared[res] = t;
  return success();
}

LogicalResult TileLowering::lowerScalar(Operation *op) {
  // Register tiles of one value become fragments where they are used.
  if (isa<arith::ConstantOp>(op) &&
      isa<RankedTensorType>(op->getResult(0).getType()))
    return success();
  auto isScalar = [](Type t) { return t.isIntOrIndexOrFloat(); };
  if (op->getNumRegions() || !llvm::all_of(op->getOperandTypes(), isScalar) ||
      !llvm::all_of(op->getResultTypes(), isScalar))
    return op->emitOpError("is not part of the tile form the GPU lowering "
                           "maps");
  for (Value operand : op->getOperands())
    if (!scalars.contains(operand)) {
      // A value of the consumers' only (a register tile's).
      if (role == Role::Producer)
        return success();
      return op->emitOpError("uses a value the GPU lowering did not map");
    }
  Value result = op->getNumResults() ? op->getResult(0) : Value();
  if (auto c = dyn_cast<arith::ConstantOp>(op); c && c.getType().isIndex()) {
    scalars.map(result, e.c32(cast<IntegerAttr>(c.getValue()).getInt()));
    return success();
  }
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op)) {
    Value in = scalars.lookup(op->getOperand(0));
    Type to = convert(result.getType());
    unsigned from = in.getType().getIntOrFloatBitWidth();
    unsigned width = to.getIntOrFloatBitWidth();
    Value out = in;
    if (width > from && isa<arith::IndexCastUIOp>(op))
      out = arith::ExtUIOp::create(b, e.loc, to, in);
    else if (width > from)
      out = arith::ExtSIOp::create(b, e.loc, to, in);
    else if (width < from)
      out = arith::TruncIOp::create(b, e.loc, to, in);
    scalars.map(result, out);
    return success();
  }
  // exp2 and log2 of f32 on the special-function unit (ex2/lg2.approx), as
  // the online softmax wants them, and fma as one instruction: no
  // libdevice calls.
  if (isa<math::Exp2Op, math::Log2Op>(op) && result.getType().isF32()) {
    Value x = scalars.lookup(op->getOperand(0));
    scalars.map(result, isa<math::Exp2Op>(op) ? e.exp2(x) : e.log2(x));
    return success();
  }
  if (auto fma = dyn_cast<math::FmaOp>(op)) {
    scalars.map(result, LLVM::FMAOp::create(b, e.loc,
                                            scalars.lookup(fma.getA()),
                                            scalars.lookup(fma.getB()),
                                            scalars.lookup(fma.getC())));
    return success();
  }
  // What the polynomial approximations of a modification's math functions
  // leave (AttnToGPU.cpp, approximateMath), as PTX instructions and bit
  // operations rather than convert-gpu-to-nvvm's libdevice calls; f16 and
  // bf16 ones through f32. tanh on the SFU (tanh.approx.f32, sm_75 and
  // later: relative error at most 2^-10.99), as FlashAttention's soft-cap;
  // an f32 division as div.full (at most 2 ulp) rather than div.rn's IEEE
  // sequence with its slow path: both are well inside the bf16 and f16
  // kernels' own rounding.
  if (auto div = dyn_cast<arith::DivFOp>(op); div && div.getType().isF32()) {
    scalars.map(result, LLVM::CallIntrinsicOp::create(
                            b, e.loc, result.getType(),
                            b.getStringAttr("llvm.nvvm.div.full"),
                            ValueRange{scalars.lookup(div.getLhs()),
                                       scalars.lookup(div.getRhs())})
                            .getResult(0));
    return success();
  }
  if (isa<math::TanhOp, math::FloorOp, math::SqrtOp, math::AbsFOp,
          math::CopySignOp>(op) &&
      isa<FloatType>(result.getType()) &&
      result.getType().getIntOrFloatBitWidth() <= 32) {
    Type f32 = b.getF32Type();
    auto operand = [&](unsigned i) -> Value {
      Value v = scalars.lookup(op->getOperand(i));
      return v.getType() == f32 ? v : arith::ExtFOp::create(b, e.loc, f32, v);
    };
    Value out;
    if (isa<math::TanhOp>(op)) {
      // llvm.tanh with afn is NVPTX's tanh.approx.f32.
      auto call = LLVM::CallIntrinsicOp::create(
          b, e.loc, f32, b.getStringAttr("llvm.tanh"), operand(0));
      call.setFastmathFlags(LLVM::FastmathFlags::afn);
      out = call.getResult(0);
    } else if (isa<math::FloorOp, math::SqrtOp>(op)) {
      StringRef intrinsic =
          isa<math::FloorOp>(op) ? "llvm.nvvm.floor.f" : "llvm.nvvm.sqrt.rn.f";
      out = LLVM::CallIntrinsicOp::create(
                b, e.loc, f32, b.getStringAttr(intrinsic), operand(0))
                .getResult(0);
    } else {
      // |x| clears the sign bit; copysign(x, y) takes y's.
      Type i32 = b.getI32Type();
      auto bits = [&](Value v) {
        return arith::BitcastOp::create(b, e.loc, i32, v);
      };
      Value magnitude =
          arith::AndIOp::create(b, e.loc, bits(operand(0)), e.c32(0x7fffffff));
      if (isa<math::CopySignOp>(op))
        magnitude = arith::OrIOp::create(
            b, e.loc, magnitude,
            arith::AndIOp::create(b, e.loc, bits(operand(1)),
                                  e.c32(static_cast<int32_t>(0x80000000u))));
      out = arith::BitcastOp::create(b, e.loc, f32, magnitude);
    }
    if (result.getType() != f32)
      out = arith::TruncFOp::create(b, e.loc, result.getType(), out);
    scalars.map(result, out);
    return success();
  }
  if (isa<math::MathDialect>(op->getDialect()))
    return op->emitOpError("has no lowering in the GPU kernels (of the math "
                           "ops, they take exp2, log2 and fma on f32, tanh, "
                           "absf, copysign, floor and sqrt, and the functions "
                           "upstream approximates by polynomials: exp, "
                           "log, erf, sin, cos, atan...)");
  Operation *clone = b.clone(*op, scalars);
  for (OpResult r : clone->getResults())
    r.setType(convert(r.getType()));
  return success();
}

LogicalResult TileLowering::lowerForall(scf::ForallOp op) {
  auto schedule = op->getAttrOfType<ScheduleAttr>("attn.schedule");
  std::optional<ArrayAttr> mapping = op.getMapping();
  if (!schedule || !mapping || warps)
    return op.emitOpError("is not a loop nest of attn-tile's kernel form (one "
                          "scf.forall with an #attn.schedule and a "
                          "#gpu.block mapping)");
  warps = schedule.getWarps();
  keySlices = schedule.getKeySlices();
  blockQ = schedule.getBlockQ();
  stages = schedule.getStages();
  wgmma = hopper && keySlices == 1;
  // The rows are queries, or keys in the backward's dK/dV nest.
  int64_t blockKV = schedule.getBlockKV();
  if (wgmma && (warps % 4 || (blockQ != 16 * warps && blockKV != 16 * warps)))
    return op.emitOpError("has a schedule of ")
           << warps << " warps, " << blockQ << " query rows and " << blockKV
           << " keys; the sm_90a lowering needs warpgroups of 4 warps with "
           << "16 rows each, queries or keys (or key slices, one per warp)";
  if (tma) {
    if (stages < 2)
      return op.emitOpError("copies by TMA in a schedule of ")
             << stages << " stage; it needs at least 2";
    if (failed(countLoadLags(*op.getBody())))
      return failure();
    initBarriers();
  }
  if (keySlices > 1 && (keySlices != warps || keySlices == blockQ))
    return op.emitOpError("splits key/value tiles into ")
           << keySlices << " slices; the GPU lowering gives one to each of "
           << "the " << warps << " warps and needs block_q != key_slices";
  for (auto [lb, step] : llvm::zip(op.getMixedLowerBound(), op.getMixedStep()))
    if (!isConstantIntValue(lb, 0) || !isConstantIntValue(step, 1))
      return op.emitOpError("has a dimension that does not start at 0 with "
                            "step 1; it cannot become a grid dimension");
  for (auto [iv, attr] : llvm::zip_equal(op.getInductionVars(), *mapping)) {
    auto block = dyn_cast<gpu::GPUBlockMappingAttr>(attr);
    if (!block || block.getBlock() > gpu::MappingId::DimZ)
      return op.emitOpError("maps a dimension to ")
             << attr << "; the GPU lowering takes #gpu.block<x|y|z>";
    auto dim = static_cast<gpu::Dimension>(
        static_cast<int64_t>(block.getBlock()) -
        static_cast<int64_t>(gpu::MappingId::DimX));
    // A persistent kernel maps the dimensions inside its tile loop.
    if (!persistent)
      scalars.map(iv, e.toI32(gpu::BlockIdOp::create(b, e.loc, dim)));
  }
  if (persistent && !specialized)
    return op.emitOpError("is mapped to a persistent grid without a producer "
                          "warpgroup; the GPU lowering makes only "
                          "warp-specialised kernels persistent");
  if (specialized)
    return lowerRoles(op);
  return lowerBlock(*op.getBody(), nullptr);
}

int64_t TileLowering::carriedRegisters(scf::ForOp op) const {
  int64_t regs = 0;
  for (Value carried : op.getRegionIterArgs())
    if (auto type = dyn_cast<RankedTensorType>(carried.getType()))
      regs += type.getNumElements() / (32 * warps);
  return regs;
}

LogicalResult TileLowering::lowerFor(scf::ForOp op) {
  for (Value v : {op.getLowerBound(), op.getUpperBound(), op.getStep()})
    if (!scalars.contains(v))
      return op.emitOpError("has bounds the GPU lowering did not map");
  bool pipelined =
      op.getBody()
          ->walk([](TileLoadOp) { return WalkResult::interrupt(); })
          .wasInterrupted();
  if (pipelined && stages < 2)
    return op.emitOpError("loads tiles in a schedule of ")
           << stages << " stage; the GPU kernels keep at least 2 key/value "
           << "tiles in flight";
  if (role == Role::Producer) {
    // The same iterations, carrying nothing: only the copies.
    if (!pipelined)
      return success();
    auto loop = scf::ForOp::create(b, e.loc, scalars.lookup(op.getLowerBound()),
                                   scalars.lookup(op.getUpperBound()),
                                   scalars.lookup(op.getStep()));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    scalars.map(op.getInductionVar(), loop.getInductionVar());
    Value outerIter = loopIter;
    loopIter = e.div(e.sub(loop.getInductionVar(), loop.getLowerBound()),
                     loop.getStep());
    LogicalResult body = lowerBlock(*op.getBody(), nullptr);
    loopIter = outerIter;
    b.setInsertionPointAfter(loop);
    if (persistent)
      endRing(loop);
    return body;
  }

  // A memory lhs that the loop does not write and one m-tile per warp: read
  // into registers once, before the loop (sm_80; wgmma reads it from
  // shared memory), while those fragments and the register tiles the loop
  // carries (one element per thread each, split between the warps) take
  // at most kHoistBudget registers a thread; past it an lhs is read from
  // shared memory at every use. The forward up to D = 128 hoists its Q
  // (O 64 + Q 32); the backward's dK/dV loop at D = 128 carries 128 and
  // would spill with K (32) and V (32) held too.
  constexpr int64_t kHoistBudget = 96;
  int64_t heldRegs = carriedRegisters(op);
  bool waited = false;
  WalkResult hoist = op.getBody()->walk([&](TileMatmulOp mm) {
    Value lhs = mm.getLhs();
    if (wgmma)
      return WalkResult::advance();
    auto it = shared.find(lhs);
    if (it == shared.end() || hoistedA.count(lhs))
      return WalkResult::advance();
    FailureOr<FragLayout> out = layoutOf(mm, mm.getType());
    if (failed(out))
      return WalkResult::interrupt();
    if (out->mTiles != 1 || it->second.shape.size() != 2)
      return WalkResult::advance();
    // Four 32-bit registers per 16 x 16 block of the warp's 16 rows; an
    // f32 tile's four per 16 x 8 block and TF32 part.
    const SharedTile &tile = it->second;
    bool f32 = tile.elementType.isF32();
    int64_t regs = f32 ? tile.shape[1] / 8 * 4 * (tf32 ? 1 : 2)
                       : tile.shape[1] / Mma::kK * 4;
    if (heldRegs + regs > kHoistBudget)
      return WalkResult::advance();
    heldRegs += regs;
    if (!waited && pipelined) {
      if (tma)
        awaitTopLevelLoads();
      else
        waitForStages(stages - 2);
    }
    waited = true;
    Value base = out->warpRows ? e.mul(warp, e.c32(Mma::kM)) : e.c32(0);
    SmallVector<Value> regsA;
    for (int64_t kk = 0; kk < tile.shape[1] / (f32 ? 8 : Mma::kK); ++kk)
      llvm::append_range(regsA, f32 ? sharedATf32(tile, base, 0, kk)
                                    : sharedA(tile, base, 0, kk));
    hoistedA[lhs] = regsA;
    return WalkResult::advance();
  });
  if (hoist.wasInterrupted())
    return failure();

  // Row sums the loop carries lane-partial: those whose start value can be
  // (a held partial or zero) and whose next value stays partial when they
  // are (optimistic, then pruned to a fixed point).
  auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
  DenseSet<Value> assumed;
  for (auto [arg, init] : llvm::zip(op.getRegionIterArgs(), op.getInitArgs())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      continue;
    FailureOr<FragLayout> l = layoutOf(op, type);
    if (failed(l))
      return failure();
    auto held = regs.find(init);
    bool zero = matchPattern(init, m_AnyZeroFloat());
    if (!l->cols && (zero || (held != regs.end() && held->second.partial)))
      assumed.insert(arg);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (auto [arg, next] :
         llvm::zip(op.getRegionIterArgs(), yield.getOperands()))
      if (assumed.contains(arg) && !staysPartial(next, assumed)) {
        assumed.erase(arg);
        changed = true;
      }
  }
  SmallVector<bool> partial = llvm::map_to_vector(
      op.getRegionIterArgs(), [&](Value v) { return assumed.contains(v); });

  SmallVector<Value> init;
  SmallVector<int64_t> sizes;
  for (auto [v, p] : llvm::zip(op.getInitArgs(), partial)) {
    FailureOr<SmallVector<Value>> flat = flatten(op, v, p);
    if (failed(flat))
      return failure();
    llvm::append_range(init, *flat);
    sizes.push_back(flat->size());
  }
  // The loads outside any scf.if (Q) have landed.
  if (pipelined && tma)
    awaitTopLevelLoads();
  auto loop = scf::ForOp::create(b, e.loc, scalars.lookup(op.getLowerBound()),
                                 scalars.lookup(op.getUpperBound()),
                                 scalars.lookup(op.getStep()), init);
  // A loop that carries nothing comes with its yield; the one below ends
  // the lowered body.
  if (init.empty())
    loop.getBody()->getTerminator()->erase();
  Value outerIter = loopIter;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    scalars.map(op.getInductionVar(), loop.getInductionVar());
    int64_t pos = 0;
    for (auto [arg, n, p] : llvm::zip(op.getRegionIterArgs(), sizes, partial)) {
      if (failed(bind(op, arg, loop.getRegionIterArgs().slice(pos, n), p)))
        return failure();
      pos += n;
    }
    // This tile has landed, and every warp is done with the stage that the
    // prefetch below overwrites.
    if (pipelined && tma) {
      loopIter = e.div(e.sub(loop.getInductionVar(), loop.getLowerBound()),
                       loop.getStep());
      // A set waited for `lag` iterations late holds tiles read then (and
      // tile 0's before).
      for (int64_t set = 0; set < loadSets; ++set) {
        int64_t lag = waitLag(set);
        waitForGroup(
            lag ? e.max(e.sub(loopIter, e.c32(lag)), e.c32(0)) : loopIter, set);
      }
      // Warp-specialised consumers release the stage instead (below).
      if (!specialized)
        ctaBarrier();
    } else if (pipelined) {
      waitForStages(stages - 2);
    }
    SmallVector<Value> yielded;
    if (failed(lowerBlock(*op.getBody(), &yielded, partial)))
      return failure();
    if (pipelined && specialized) {
      // Each set frees the stage it read last: that of the tile `lag`
      // iterations back.
      for (int64_t set = 0; set < loadSets; ++set) {
        int64_t lag = releaseLag(set);
        if (!lag) {
          releaseStage(loopIter, set);
          continue;
        }
        OpBuilder::InsertionGuard guard(b);
        auto behind =
            scf::IfOp::create(b, e.loc, e.ge(loopIter, e.c32(lag)), false);
        b.setInsertionPointToStart(behind.thenBlock());
        releaseStage(e.sub(loopIter, e.c32(lag)), set);
      }
    }
    scf::YieldOp::create(b, e.loc, yielded);
  }
  loopIter = outerIter;
  if (pipelined && specialized) {
    // The lagged tiles of the last iterations, which the ops after the
    // loop read.
    forLastGroups(
        tripCount(loop), [&](int64_t set) { return waitLag(set); },
        [&](Value group, int64_t set) { waitForGroup(group, set); });
  }
  if (pipelined && persistent)
    endRing(loop);
  // A loop without a copy ring (the combine's over splits) waits on memory
  // once per iteration: unrolled, ptxas issues the loads of several
  // iterations together. The results are then those of the remainder loop.
  ValueRange results = loop.getResults();
  if (!pipelined) {
    FailureOr<UnrolledLoopInfo> unrolled =
        loopUnrollByFactor(loop, kUnroll);
    if (failed(unrolled))
      return op.emitOpError("could not be unrolled");
    if (unrolled->epilogueLoopOp)
      results = unrolled->epilogueLoopOp->getResults();
    else if (unrolled->mainLoopOp)
      results = unrolled->mainLoopOp->getResults();
  }
  int64_t pos = 0;
  for (auto [res, n, p] : llvm::zip(op.getResults(), sizes, partial)) {
    if (failed(bind(op, res, results.slice(pos, n), p)))
      return failure();
    pos += n;
  }
  return success();
}

LogicalResult TileLowering::lowerIf(scf::IfOp op) {
  Value cond = scalars.lookupOrNull(op.getCondition());
  if (!cond)
    return op.emitOpError("has a condition the GPU lowering did not map");
  SmallVector<Type> types;
  SmallVector<int64_t> sizes;
  for (Value r : op.getResults()) {
    FailureOr<int64_t> n = flatSize(op, r);
    if (failed(n))
      return failure();
    types.append(*n, convert(getElementTypeOrSelf(r.getType())));
    sizes.push_back(*n);
  }
  bool hasElse = !op.getElseRegion().empty();
  bool loads = op->walk([](TileLoadOp) {
                   return WalkResult::interrupt();
                 }).wasInterrupted();
  if (role == Role::Producer) {
    // Only the copies, and the scf.ifs that hold them (no results).
    if (!loads)
      return success();
    types.clear();
    sizes.clear();
  }
  if (tma && loads && (hasElse || groupIndex))
    return op.emitOpError("copies by TMA in a nested or two-sided scf.if; "
                          "each group of copies is the then-block of one");
  auto ifOp = scf::IfOp::create(b, e.loc, types, cond, hasElse);
  for (auto [from, to] : llvm::zip(op->getRegions(), ifOp->getRegions())) {
    if (from.empty())
      continue;
    OpBuilder::InsertionGuard guard(b);
    Block &block = to.front();
    if (!block.empty())
      block.getTerminator()->erase();
    b.setInsertionPointToEnd(&block);
    if (tma && loads && role != Role::Consumer && failed(openGroup(op)))
      return failure();
    SmallVector<Value> yielded;
    if (failed(lowerBlock(from.front(), &yielded)))
      return failure();
    scf::YieldOp::create(b, e.loc, yielded);
  }
  groupIndex = Value();
  // One cp.async group per scf.if with loads, taken or not, so that the
  // groups count key/value tiles.
  if (loads && !tma) {
    NVVM::CpAsyncCommitGroupOp::create(b, e.loc);
    uncommittedLoads = false;
  }
  int64_t pos = 0;
  for (auto [res, n] : llvm::zip(op.getResults(), sizes)) {
    if (failed(bind(op, res, ifOp.getResults().slice(pos, n))))
      return failure();
    pos += n;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Memory tiles
//===----------------------------------------------------------------------===//

LogicalResult TileLowering::lowerAlloc(memref::AllocOp op) {
  MemRefType type = op.getType();
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
  if (!space || space.getValue() != gpu::AddressSpace::Workgroup ||
      !type.hasStaticShape() || type.getRank() < 2)
    return op.emitOpError("allocates ")
           << type << "; GPU kernels hold static tiles of rank 2 or more in "
           << "workgroup memory only";
  int64_t eb = type.getElementTypeBitWidth() / 8;
  if (eb < 1 || 16 % eb)
    return op.emitOpError("allocates a tile of ")
           << type.getElementType() << ", not whole 16-byte chunks per row";
  SharedTile t{e.c32(tileBytes), llvm::to_vector(type.getShape()),
               type.getShape().back() + 16 / eb, type.getElementType()};
  int64_t rows = 1;
  for (int64_t d : type.getShape().drop_back())
    rows *= d;
  int64_t rowBytes = type.getShape().back() * eb;
  if (hopper && rowBytes == 16) {
    // One 16-byte chunk a row (the backward's row statistics): no product
    // reads it through a descriptor, so its rows are neither swizzled nor
    // padded.
    t.pitch = type.getShape().back();
    tileBytes += llvm::alignTo(rows * rowBytes, 1024);
    shared[op.getResult()] = t;
    return success();
  }
  // Swizzled rows: the widest pattern (128, 64 or 32 bytes) that divides
  // the row, the pattern's 8-row period whole in every tile. On sm_80 too
  // in split-KV decode (key slices), which streams K and V at the memory's
  // speed: a warp's cp.async of whole rows into rows padded by 16 bytes
  // asked L2 for 1.5x the sectors it copied (bench/cp_async_pitch.cu,
  // docs/GPU.md); the swizzle keeps ldmatrix free of bank conflicts without
  // the padding. The other sm_80 kernels keep padded rows (the swizzle's
  // address arithmetic cost them registers: D = 80 forward spilled).
  if (hopper || keySlices > 1) {
    t.swizzle = swizzleBytes(rowBytes);
    t.pitch = type.getShape().back();
    t.blockRows = type.getShape().drop_back().back();
    if (rowBytes % 32 || type.getShape().drop_back().back() % 8)
      return op.emitOpError("allocates ")
             << type << "; swizzled tiles (sm_90a, split-KV decode) are "
             << "8-row groups with rows of whole 32-byte chunks";
    // TMA and wgmma's descriptors read the pattern from 1024-byte aligned
    // tiles; cp.async and ldmatrix need whole 128-byte lines.
    tileBytes += llvm::alignTo(rows * rowBytes, hopper ? 1024 : 128);
    shared[op.getResult()] = t;
    return success();
  }
  tileBytes += llvm::alignTo(rows * t.pitch * eb, 16);
  shared[op.getResult()] = t;
  return success();
}

/// Whether the index `v` is a multiple of `n` by its form: a constant
/// one, or a product with one (the tile form's value and column blocks,
/// valueBlockProblem and gradBlocking).
static bool isMultipleOf(Value v, int64_t n) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return *c % n == 0;
  auto mul = v.getDefiningOp<arith::MulIOp>();
  return mul && llvm::any_of(mul->getOperands(), [&](Value x) {
           std::optional<int64_t> c = getConstantIntValue(x);
           return c && *c % n == 0;
         });
}

LogicalResult TileLowering::lowerSubView(memref::SubViewOp op) {
  auto index = [&](OpFoldResult v) -> Value {
    if (auto value = dyn_cast<Value>(v))
      return scalars.lookupOrNull(value);
    return e.c32(*getConstantIntValue(v));
  };
  for (OpFoldResult stride : op.getMixedStrides())
    if (!isConstantIntValue(stride, 1))
      return op.emitOpError("has a non-unit stride; the GPU lowering views "
                            "buffers with unit strides only");
  if (Global *src = globals.lookup(op.getSource())) {
    // A view of a kernel parameter: its pointer moves, its strides stay.
    if (op.getType().getRank() != op.getSourceType().getRank())
      return op.emitOpError("drops dimensions of a kernel parameter");
    auto g = std::make_unique<Global>(*src);
    Value off = e.c64(0);
    for (auto [offset, stride] : llvm::zip(op.getMixedOffsets(), src->strides)) {
      Value i = index(offset);
      if (!i)
        return op.emitOpError("has an offset the GPU lowering did not map");
      off = e.add(off, e.mul(e.toI64(i), stride));
    }
    g->ptr = e.gep(src->ptr, src->elementType, off);
    // Its rows stay 16-byte aligned where the first column is a multiple
    // of a chunk's elements: a constant, or a product with such a constant
    // (the tile form's value blocks, valueBlockProblem).
    int64_t chunk = 128 / src->elementType.getIntOrFloatBitWidth();
    OpFoldResult first = op.getMixedOffsets().back();
    std::optional<int64_t> c = getConstantIntValue(first);
    g->chunkRows = src->chunkRows && (c ? *c % chunk == 0
                                        : isMultipleOf(cast<Value>(first),
                                                       chunk));
    g->sizes.clear();
    for (OpFoldResult size : op.getMixedSizes()) {
      Value s = index(size);
      if (!s)
        return op.emitOpError("has a size the GPU lowering did not map");
      g->sizes.push_back(s);
    }
    globals[op.getResult()] = g.get();
    globalStorage.push_back(std::move(g));
    return success();
  }
  auto it = shared.find(op.getSource());
  if (it == shared.end())
    return op.emitOpError("views a buffer that is not a shared-memory tile");
  SharedTile src = it->second;
  int64_t rank = src.shape.size();
  Value off = src.offset;
  for (auto [d, offset] : llvm::enumerate(op.getMixedOffsets())) {
    if (isConstantIntValue(offset, 0))
      continue;
    if (src.swizzle && static_cast<int64_t>(d) == rank - 1) {
      // Whole column blocks of a swizzled tile: the view starts a block. Its
      // first column is a constant, or a product with a multiple of the
      // block's columns (a gradient's column blocks, gradBlockAlign).
      int64_t blockCols = src.swizzle / src.elementBytes();
      std::optional<int64_t> col = getConstantIntValue(offset);
      if (col && *col % blockCols == 0) {
        off =
            e.add(off, e.c32(*col / blockCols * src.blockRows * src.swizzle));
        continue;
      }
      Value i = col ? Value() : index(offset);
      if (!i || !isMultipleOf(cast<Value>(offset), blockCols))
        return op.emitOpError("views columns of a swizzled shared-memory "
                              "tile that do not start a column block of ")
               << blockCols;
      off = e.add(off, e.mul(e.udiv(i, e.c32(blockCols)),
                             e.c32(src.blockRows * src.swizzle)));
      continue;
    }
    if (src.swizzle && static_cast<int64_t>(d) >= rank - 2)
      return op.emitOpError("views part of the rows of a swizzled "
                            "shared-memory tile");
    // Elements per step of dimension d: the padded rows below it.
    int64_t step = 1;
    if (static_cast<int64_t>(d) < rank - 1) {
      step = src.pitch;
      for (int64_t k = d + 1; k < rank - 1; ++k)
        step *= src.shape[k];
    }
    Value i = index(offset);
    if (!i)
      return op.emitOpError("has an offset the GPU lowering did not map");
    off = e.add(off, e.mul(i, e.c32(step * src.elementBytes())));
  }
  SharedTile t = src;
  t.offset = off;
  // The rows keep their pitch (and a swizzled tile its blocks' rows): a
  // view of some columns is the same rows, narrower.
  t.shape = llvm::to_vector(op.getType().getShape());
  shared[op.getResult()] = t;
  return success();
}

LogicalResult TileLowering::lowerGlobalLoad(Operation *op) {
  SmallVector<Value> idx;
  for (Value i : op->getOperands().drop_front()) {
    Value v = scalars.lookupOrNull(i);
    if (!v)
      return op->emitOpError("has an index the GPU lowering did not map");
    idx.push_back(v);
  }
  Value result = op->getResult(0);
  Type t = result.getType();
  if (auto it = shared.find(op->getOperand(0)); it != shared.end()) {
    // An element of a rank-2 memory tile (a ring stage of the backward's
    // row statistics), after the copies into it were waited for.
    const SharedTile &tile = it->second;
    if (idx.size() != 2 || tile.swizzle || !t.isF32())
      return op->emitOpError("reads a shared-memory tile the GPU lowering "
                             "maps only as rank-2 unswizzled f32 rows");
    scalars.map(result, LLVM::LoadOp::create(
                            b, e.loc, t,
                            sharedAt(tileOffset(tile, idx[0], idx[1])), 4));
    return success();
  }
  Global *g = globals.lookup(op->getOperand(0));
  if (!g)
    return op->emitOpError("loads from a buffer that is neither a kernel "
                           "parameter nor a shared-memory tile");
  Value ptr = globalAddress(*g, idx);
  if (t.isInteger(1)) {
    // Boolean memrefs hold a byte per element.
    Value byte = LLVM::LoadOp::create(b, e.loc, b.getI8Type(), ptr, 1);
    scalars.map(result, e.ne(byte, arith::ConstantOp::create(
                                       b, e.loc, b.getI8IntegerAttr(0))));
    return success();
  }
  scalars.map(result, LLVM::LoadOp::create(
                                  b, e.loc, t, ptr,
                                  t.getIntOrFloatBitWidth() / 8));
  return success();
}

Value TileLowering::globalAddress(const Global &g, ArrayRef<Value> indices) {
  // Every index scaled by its stride, the innermost one too: a broadcast
  // mask passes stride 0 there, and so may a tensor a modification reads.
  Value off = e.toI64(e.c32(0));
  for (auto [index, stride] : llvm::zip_equal(indices, g.strides))
    off = e.add(off, e.mul(e.toI64(index), stride));
  return e.gep(g.ptr, g.elementType, off);
}

LogicalResult TileLowering::lowerGlobalStore(memref::StoreOp op) {
  Global *g = globals.lookup(op.getMemRef());
  Value value = scalars.lookupOrNull(op.getValueToStore());
  if (!g || !value || !value.getType().isIntOrFloat() ||
      value.getType().isInteger(1))
    return op.emitOpError("stores into a buffer or a value the GPU lowering "
                          "does not map (scalars of kernel parameters)");
  SmallVector<Value> idx;
  for (Value i : op.getIndices()) {
    Value v = scalars.lookupOrNull(i);
    if (!v)
      return op.emitOpError("has an index the GPU lowering did not map");
    idx.push_back(v);
  }
  LLVM::StoreOp::create(b, e.loc, value, globalAddress(*g, idx),
                        value.getType().getIntOrFloatBitWidth() / 8);
  return success();
}

Global *TileLowering::sourceOf(TileLoadOp load) const {
  Value src = load.getSource();
  while (Operation *def = src.getDefiningOp()) {
    if (!isa<ViewLikeOpInterface>(def) || def->getNumOperands() == 0)
      break;
    src = def->getOperand(0);
  }
  return globals.lookup(src);
}

LogicalResult TileLowering::lowerLoad(TileLoadOp op) {
  Global *g = globals.lookup(op.getSource());
  auto it = shared.find(op.getTile());
  if (!g || it == shared.end() || it->second.shape.size() != 2)
    return op.emitOpError("copies between buffers the GPU lowering cannot "
                          "map (a kernel parameter into a rank-2 shared "
                          "tile)");
  const SharedTile &t = it->second;
  if (tma && g->tensorMap)
    return lowerLoadTma(op, *g, t);
  if (role == Role::Producer)
    return lowerLoadByProducer(op, *g, t);
  if (tma && (role != Role::All || op->getParentOfType<scf::IfOp>()))
    return op.emitOpError("copies from a kernel parameter without a tensor "
                          "map in a kernel that copies by TMA; only loads "
                          "outside any scf.if of a kernel without a producer "
                          "warpgroup may use cp.async there");
  cpAsyncPending = tma;
  if (failed(copyRows(op, *g, t)))
    return failure();
  uncommittedLoads = true;
  return success();
}

LogicalResult TileLowering::lowerLoadByProducer(TileLoadOp op, const Global &g,
                                                const SharedTile &t) {
  if (persistent)
    return op.emitOpError("copies by cp.async in the producer warpgroup of "
                          "a persistent kernel; only TMA copies run there");
  // The group's full barrier once the stage is free, or that of the loads
  // outside any scf.if.
  Value barrier =
      groupIndex ? armGroup(setOf(op)) : barrierAt(e.c32(stages));
  if (failed(copyRows(op, g, t)))
    return failure();
  // Hand-written where upstream's nvgpu has no op: each thread's copies
  // arrive on the barrier when they land, with no arrival of their own
  // before (noinc: the barrier counts one per producer thread and load).
  NVVM::CpAsyncMBarrierArriveOp::create(b, e.loc, barrier, /*noinc=*/true);
  return success();
}

/// cp.async copies of rows found through memory: threads a row (at least,
/// where the rounds tile the rows) in the producer warpgroup and where every
/// thread copies, and a producer's rounds a loop step (at most). H200,
/// D = 128: the producer's chunked prefill ran 1.07x to 1.16x faster with 4
/// than with 8; the paged decode of every thread 1.01x to 1.04x faster than
/// with 16 (one chunk a row a thread) with 8, and 0.83x to 0.99x with 4.
static constexpr int64_t kProducerRowThreads = 4, kGatherRowThreads = 8,
                         kProducerUnroll = 4;

LogicalResult TileLowering::copyRows(TileLoadOp op, const Global &g,
                                     const SharedTile &t) {
  int64_t eb = t.elementBytes(), chunk = 16 / eb;
  // The source's rows (static, tile.load's verifier): the tile's columns
  // past them are padding, zero-filled.
  int64_t length = op.getSource().getType().getShape().back();
  if (t.shape[1] % chunk)
    return op.emitOpError("copies into tile rows of ")
           << t.shape[1] << " elements, not whole 16-byte chunks";
  Value rows = scalars.lookup(op.getRows());
  Value last = e.max(e.sub(rows, e.c32(1)), e.c32(0));
  if (length % chunk || !g.chunkRows) {
    // Rows that are not whole 16-byte chunks have no 16-byte alignment
    // either (the runtime asks only for the element's, docs/KernelABI.md):
    // element by element, synchronously. Warp w copies rows w, w + warps,
    // ..., lane l the row's columns l, l + 32, ... (a warp's loads are
    // consecutive elements), `unroll` rows a step, the loads issued before
    // the stores so that they are in flight together. The ring's commit
    // groups stay as they are (empty ones complete at once).
    if (tma)
      return op.emitOpError("copies rows of ")
             << length << " elements, not whole 16-byte chunks, in a "
             << "kernel that copies by TMA";
    int64_t tileRows = t.shape[0], cols = t.shape[1];
    if (tileRows % warps)
      return op.emitOpError("copies ")
             << tileRows << " rows element by element, not a multiple of "
             << warps << " warps";
    // About 16 loads of a thread in flight: rows of up to 64 columns 8 a
    // step, of up to 128 columns 4 (H200, D = 59 and 111: 1.5x to 1.8x a
    // loop over elements 16 a step).
    int64_t passes = tileRows / warps;
    int64_t perRow = llvm::divideCeil(cols, 32), unroll = 1;
    while (2 * unroll * perRow <= 16 && passes % (2 * unroll) == 0)
      unroll *= 2;
    auto loop = scf::ForOp::create(b, e.loc, warp, e.c32(tileRows),
                                   e.c32(warps * unroll));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Type elt = t.elementType;
    Value zero = arith::ConstantOp::create(b, e.loc, b.getZeroAttr(elt));
    // (element, shared offset, column in the tile) of each load.
    SmallVector<std::tuple<Value, Value, Value>> values;
    for (int64_t u = 0; u < unroll; ++u) {
      Value r = e.add(loop.getInductionVar(), e.c32(u * warps));
      FailureOr<SmallVector<Value>> idx =
          rowIndices(op.getIndices(), e.min(r, last));
      if (failed(idx))
        return failure();
      Value rowValid = e.lt(r, rows);
      for (int64_t c0 = 0; c0 < cols; c0 += 32) {
        Value col = e.add(lane, e.c32(c0));
        Value valid = c0 + 32 <= length
                          ? rowValid
                          : e.band(rowValid, e.lt(col, e.c32(length)));
        Value src =
            e.gep(g.ptr, g.elementType,
                  globalOffset(g, *idx, e.select(valid, col, e.c32(0))));
        Value v = LLVM::LoadOp::create(b, e.loc, elt, src, eb);
        values.push_back({e.select(valid, v, zero), tileOffset(t, r, col),
                          c0 + 32 <= cols ? Value() : e.lt(col, e.c32(cols))});
      }
    }
    for (auto [v, at, inTile] : values) {
      OpBuilder::InsertionGuard storeGuard(b);
      if (inTile) {
        auto ifIn = scf::IfOp::create(b, e.loc, inTile, false);
        b.setInsertionPointToStart(ifIn.thenBlock());
      }
      LLVM::StoreOp::create(b, e.loc, v, sharedAt(at), eb);
    }
    return success();
  }
  int64_t perRow = t.shape[1] / chunk, total = t.shape[0] * perRow;
  int64_t threads = copyThreads ? copyThreads : warps * 32;
  Value copier = copyTid ? copyTid : tid;
  if (t.shape[1] > kMaxValueBlockCols && threads % perRow && perRow % threads)
    return lowerLoadByRows(op, g, t, rows, last, length);
  // Rounds of `threads` chunks, thread c copying chunk c % perRow of row
  // c / perRow: unrolled where every thread copies; the producer warpgroup,
  // whose few registers would not hold the unrolled rounds' addresses and
  // block-table rows, loops over them (the D = 128 paged kernel's producer
  // spilled 748 bytes at 40 registers).
  auto round = [&](Value k, bool partial) -> LogicalResult {
    OpBuilder::InsertionGuard guard(b);
    Value c = e.add(copier, k);
    // The last round may have fewer chunks than threads.
    if (partial) {
      auto inTile = scf::IfOp::create(b, e.loc, e.lt(c, e.c32(total)), false);
      b.setInsertionPointToStart(inTile.thenBlock());
    }
    Value r = e.div(c, e.c32(perRow));
    Value col = e.mul(e.rem(c, e.c32(perRow)), e.c32(chunk));
    // Rows past `rows` read row `rows - 1`, in bounds, and zero-fill; so
    // do the padding columns past the source's rows, from column 0.
    FailureOr<SmallVector<Value>> idx =
        rowIndices(op.getIndices(), e.min(r, last));
    if (failed(idx))
      return failure();
    cpAsyncChunk(g, t, *idx, r, col, e.lt(r, rows), length);
    return success();
  };
  // Where a row's source is found through memory (a paged cache's block
  // table: a read and a division by the page size), `rowThreads` threads
  // share a row instead, each copying every rowThreads-th chunk of it: it
  // finds the row once for several chunks, and a warp's chunks of a row
  // stay consecutive. The rows of all the rounds are found first, so that
  // their reads are in flight together; the producer loops, `unroll`
  // rounds a step. (Its first version, one chunk a row a thread and one
  // round a step, took 46 instructions a chunk, and its D = 128 kernel ran
  // at 0.67x the copies from every thread, H200.)
  bool gathered = op.getIndices()
                      .walk([](Operation *read) {
                        return isa<memref::LoadOp, tensor::ExtractOp>(read)
                                   ? WalkResult::interrupt()
                                   : WalkResult::advance();
                      })
                      .wasInterrupted();
  int64_t tileRows = t.shape[0],
          rowThreads = copyTid ? kProducerRowThreads : kGatherRowThreads;
  while (perRow % rowThreads)
    rowThreads /= 2;
  // More threads a row where the rounds would not tile the rows (in the
  // producer, in an even count, so that a step issues two rounds at least:
  // at 80 keys, D = 256, 5 rounds of 16 rows were all unrolled by LLVM and
  // the kernel spilled 92 bytes; it takes 10 rounds of 8).
  auto tiles = [&](int64_t threadsPerRow) {
    int64_t rowsPerRound = threads / threadsPerRow;
    return tileRows % rowsPerRound == 0 &&
           (!copyTid || (tileRows / rowsPerRound) % 2 == 0);
  };
  while (!tiles(rowThreads) && perRow % (2 * rowThreads) == 0 &&
         2 * rowThreads <= threads)
    rowThreads *= 2;
  int64_t rowsPerRound = threads / rowThreads;
  bool shared = (gathered || copyTid) && threads % rowThreads == 0 &&
                tileRows % rowsPerRound == 0;
  if (copyTid && !shared) {
    auto loop = scf::ForOp::create(b, e.loc, e.c32(0), e.c32(total),
                                   e.c32(threads));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    return round(loop.getInductionVar(), total % threads != 0);
  }
  if (shared) {
    int64_t rounds = tileRows / rowsPerRound, unroll = rounds;
    if (copyTid) {
      unroll = 1;
      while (2 * unroll <= kProducerUnroll && rounds % (2 * unroll) == 0)
        unroll *= 2;
    }
    Value rowInRound = e.div(copier, e.c32(rowThreads));
    Value firstChunk = e.rem(copier, e.c32(rowThreads));
    OpBuilder::InsertionGuard guard(b);
    Value first = e.c32(0);
    if (copyTid) {
      auto loop = scf::ForOp::create(b, e.loc, e.c32(0), e.c32(tileRows),
                                     e.c32(rowsPerRound * unroll));
      b.setInsertionPoint(loop.getBody()->getTerminator());
      first = loop.getInductionVar();
    }
    SmallVector<std::pair<SmallVector<Value>, Value>> sources;
    for (int64_t u = 0; u < unroll; ++u) {
      Value r = e.add(rowInRound, e.add(first, e.c32(u * rowsPerRound)));
      FailureOr<SmallVector<Value>> idx =
          rowIndices(op.getIndices(), e.min(r, last));
      if (failed(idx))
        return failure();
      sources.push_back({*idx, r});
    }
    for (auto &[idx, r] : sources) {
      Value valid = e.lt(r, rows);
      for (int64_t j = 0; j < perRow; j += rowThreads)
        cpAsyncChunk(g, t, idx, r,
                     e.mul(e.add(firstChunk, e.c32(j)), e.c32(chunk)), valid,
                     length);
    }
    return success();
  }
  // A split-KV decode kernel of 4 warps (they split the keys) and head dims
  // up to 256 whose rows take more than 8 rounds loops over them: unrolled,
  // LLVM kept each round's address offset in a register across the key
  // loop, and beside O's Dv / 2 registers a thread sm_80's D = 184 and 200
  // kernels spilled 60 and 64 bytes; with the loop none, and D = 136 to
  // 200 ran 0.99x to 1.02x as fast (H200). The 2-warp kernels of D = 216
  // to 240 spill 8 to 180 bytes unrolled but ran 0.70x to 0.86x as fast
  // with this loop of one round a step (below: steps of 4); sm_90a's copy
  // by TMA up to D = 256, and the kernels past it (value blocks) spill
  // nothing.
  if (keySlices > 1 && threads >= 128 && total > 8 * threads &&
      widestSourceRow <= kMaxValueBlockCols) {
    auto loop = scf::ForOp::create(b, e.loc, e.c32(0), e.c32(total),
                                   e.c32(threads));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    return round(loop.getInductionVar(), total % threads != 0);
  }
  // The 2-warp kernels (D = 216 to 256 on sm_80) loop over steps of 4
  // rounds, the rounds past the last whole step unrolled after it.
  // Unrolled, D = 216 to 240 spilled 100, 8, 180 and 64 bytes; with the
  // loop none, and with the runtime's split count for them (two CTAs an
  // SM) they ran 1.01x to 1.06x as fast on an H200 (docs/GPU.md). With one
  // CTA an SM the unrolled rounds' deeper copies had mattered (D = 224:
  // 0.48x with the loop).
  int64_t looped = 0;
  if (keySlices > 1 && threads < 128 && total > 8 * threads &&
      widestSourceRow <= kMaxValueBlockCols) {
    int64_t step = 4 * threads;
    looped = total / step * step;
    auto loop = scf::ForOp::create(b, e.loc, e.c32(0), e.c32(looped),
                                   e.c32(step));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    for (int64_t u = 0; u < 4; ++u)
      if (failed(round(e.add(loop.getInductionVar(), e.c32(u * threads)),
                       false)))
        return failure();
  }
  for (int64_t k = looped; k < total; k += threads)
    if (failed(round(e.c32(k), k + threads > total)))
      return failure();
  return success();
}

void TileLowering::cpAsyncChunk(const Global &g, const SharedTile &t,
                                ArrayRef<Value> idx, Value r, Value col,
                                Value valid, int64_t length) {
  Value srcCol = col;
  if (length < t.shape[1]) {
    Value inRow = e.lt(col, e.c32(length));
    valid = e.band(valid, inRow);
    srcCol = e.select(inRow, col, e.c32(0));
  }
  Value src = e.gep(g.ptr, g.elementType, globalOffset(g, idx, srcCol));
  Value dst = sharedAt(tileOffset(t, r, col));
  NVVM::CpAsyncOp::create(b, e.loc, dst, src, 16,
                          NVVM::LoadCacheModifierKind::CG,
                          e.select(valid, e.c32(16), e.c32(0)));
}

LogicalResult TileLowering::lowerLoadByRows(TileLoadOp op, const Global &g,
                                            const SharedTile &t, Value rows,
                                            Value last, int64_t length) {
  // Rows past 256 columns of a number of chunks that neither divides the
  // threads nor is a multiple of them (D = 264 to 576 but 512: 34 to 72
  // chunks): chunk c of the tile in order would be row c / perRow, column
  // c mod perRow, a division per chunk, and LLVM kept every chunk's offset
  // in a register across the loop that streams the tile (the D = 320,
  // 384, 448 and 576 backward kernels spilled 148 to 816 bytes). Instead
  // thread t copies column chunks t mod perRow (+ threads, ...) of row
  // t / perRow of each round of `threads / perRow` rows (or one): the same
  // two values in every round. (Narrower rows keep the order above, whose
  // kernels did not spill.)
  int64_t eb = t.elementBytes(), chunk = 16 / eb;
  int64_t perRow = t.shape[1] / chunk, tileRows = t.shape[0];
  int64_t threads = copyThreads ? copyThreads : warps * 32;
  Value copier = copyTid ? copyTid : tid;
  int64_t rowsPerRound = std::max<int64_t>(1, threads / perRow);
  int64_t columnSteps = llvm::divideCeil(perRow, threads);
  Value rowInRound = e.div(copier, e.c32(perRow));
  Value firstChunk = e.rem(copier, e.c32(perRow));
  OpBuilder::InsertionGuard guard(b);
  // Threads past the rounds' chunks copy nothing.
  if (rowsPerRound * perRow < threads) {
    auto active = scf::IfOp::create(
        b, e.loc, e.lt(copier, e.c32(rowsPerRound * perRow)), false);
    b.setInsertionPointToStart(active.thenBlock());
  }
  for (int64_t r0 = 0; r0 < tileRows; r0 += rowsPerRound) {
    Value r = e.add(rowInRound, e.c32(r0));
    FailureOr<SmallVector<Value>> idx =
        rowIndices(op.getIndices(), e.min(r, last));
    if (failed(idx))
      return failure();
    Value rowValid = e.lt(r, rows);
    for (int64_t step = 0; step < columnSteps; ++step) {
      OpBuilder::InsertionGuard chunkGuard(b);
      // The last round may end past the tile, the last step past the row.
      Value inTile = r0 + rowsPerRound > tileRows
                         ? e.lt(r, e.c32(tileRows))
                         : Value();
      if (step * threads + threads > perRow) {
        Value inRow = e.lt(firstChunk, e.c32(perRow - step * threads));
        inTile = inTile ? e.band(inTile, inRow) : inRow;
      }
      if (inTile) {
        auto ifIn = scf::IfOp::create(b, e.loc, inTile, false);
        b.setInsertionPointToStart(ifIn.thenBlock());
      }
      Value col = e.mul(e.add(firstChunk, e.c32(step * threads)), e.c32(chunk));
      cpAsyncChunk(g, t, *idx, r, col, rowValid, length);
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

Value TileLowering::sharedBase() {
  if (smem)
    return smem;
  OpBuilder atEntry = OpBuilder::atBlockBegin(entry);
  Value dyn = gpu::DynamicSharedMemoryOp::create(
      atEntry, e.loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface{},
                      gpu::AddressSpaceAttr::get(
                          b.getContext(), gpu::AddressSpace::Workgroup)));
  Value index =
      memref::ExtractAlignedPointerAsIndexOp::create(atEntry, e.loc, dyn);
  smem = LLVM::IntToPtrOp::create(
      atEntry, e.loc, ptr3(),
      Value(arith::IndexCastOp::create(atEntry, e.loc, e.i64(), index)));
  return smem;
}

FailureOr<int64_t> TileLowering::run(func::FuncOp source,
                                     gpu::GPUFuncOp kernel,
                                     ArrayRef<KernelParam> params) {
  entry = &kernel.getBody().front();
  b.setInsertionPointToStart(entry);
  tid = e.toI32(gpu::ThreadIdOp::create(b, e.loc, gpu::Dimension::x));
  warp = e.div(tid, e.c32(32));
  lane = e.rem(tid, e.c32(32));
  frag.emplace(e, lane);

  llvm::StringMap<Global *> byName;
  for (auto [param, arg, from] : llvm::zip_equal(
           params, kernel.getArguments(), source.getArguments())) {
    if (param.type == "tmap") {
      // The tensor map of the memref parameter it is named after.
      StringRef mapped = param.name;
      Global *g =
          mapped.consume_back("_tmap") ? byName.lookup(mapped) : nullptr;
      if (!g || !hopper)
        return source.emitError("kernel parameter '")
               << param.name << "' is a tensor map of no memref parameter "
               << "of an sm_90a kernel";
      g->tensorMap = arg;
      tma = true;
      continue;
    }
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (!type) {
      paramArgs[param.name] = arg;
      continue;
    }
    auto g = std::make_unique<Global>();
    g->name = param.name;
    // Boolean memrefs hold a byte per element.
    g->elementType = type.getElementType().isInteger(1)
                         ? b.getI8Type()
                         : type.getElementType();
    g->ptr = e.globalBase(arg, g->elementType);
    int64_t row = type.getRank() ? type.getShape().back() : 1;
    g->chunkRows = !ShapedType::isDynamic(row) &&
                   row * g->elementType.getIntOrFloatBitWidth() / 8 % 16 == 0;
    e.metadata(arg, g->sizes, g->strides);
    globals[from] = g.get();
    byName[param.name] = g.get();
    globalStorage.push_back(std::move(g));
  }
  // A producer warpgroup copies every tile: by TMA from a parameter with a
  // tensor map, else by cp.async from all its threads; either completes on
  // mbarriers.
  source.walk([&](TileLoadOp load) {
    Global *g = sourceOf(load);
    producerCopies |= specialized && g && !g->tensorMap;
    widestSourceRow = std::max(
        widestSourceRow, load.getSource().getType().getShape().back());
  });
  tma |= specialized;
  // The loads outside any scf.if that complete on an mbarrier: by TMA, or
  // by the producer's cp.async.
  source.walk([&](TileLoadOp load) {
    Global *g = sourceOf(load);
    if (!g || load->getParentOfType<scf::IfOp>() ||
        !(g->tensorMap || specialized))
      return;
    ++topLevelLoads;
    topLevelArrivals += g->tensorMap ? 1 : kWarpgroupThreads;
    topLevelCopiesRows |= !g->tensorMap;
  });
  if (failed(lowerBlock(source.front(), nullptr)))
    return failure();
  // The scratch of the cross-warp merge reuses the tiles, not the barriers
  // after them.
  if (scratchBytes > tileBytes)
    return source.emitError("the cross-warp merge needs ")
           << scratchBytes << " bytes of shared memory, more than the "
           << tileBytes << " of the tiles it reuses; use fewer warps";
  // Every bulk reduction has completed when the CTA exits.
  if (bulkReduces)
    NVVM::CpAsyncBulkWaitGroupOp::create(b, e.loc, 0, /*read=*/nullptr);
  if (tma) {
    // No copy may still be landing when the CTA exits.
    awaitTopLevelLoads();
    barrierOffset.setValueAttr(b.getI32IntegerAttr(tileBytes));
    // The mbarriers, then the anchor slot (anchorSlot).
    tileBytes += llvm::alignTo(8 * (barrierCount() + 1), 16);
  }
  gpu::ReturnOp::create(b, e.loc);
  return tileBytes;
}

FailureOr<int64_t> attn::lowerTileFormToNVVM(func::FuncOp source,
                                             gpu::GPUFuncOp kernel,
                                             ArrayRef<KernelParam> params,
                                             TileTarget target, bool producer,
                                             bool persistent, bool tf32) {
  OpBuilder b(kernel.getContext());
  return TileLowering(b, source.getLoc(), target, producer, persistent, tf32)
      .run(source, kernel, params);
}
