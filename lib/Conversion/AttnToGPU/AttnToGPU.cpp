//===- AttnToGPU.cpp - attn ops to tensor-core GPU kernels ----------------===//

#include "TileToNVVM.h"

#include "attn/Conversion/AttnToGPU/KernelSpec.h"
#include "attn/Conversion/AttnToLoops/AttnToLoops.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/BlockMask.h"
#include "attn/Dialect/Attn/IR/ModRegions.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNTOGPUPASS
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr StringLiteral kKernelModule = "attn_kernels";

/// The tile-form nest a backward kernel runs.
GradNest gradNestOf(KernelKind kind) {
  switch (kind) {
  case KernelKind::BackwardKeyValue:
    return GradNest::KeyValue;
  case KernelKind::BackwardQuery:
    return GradNest::Query;
  default:
    return GradNest::RowStats;
  }
}

/// The columns of dK and dV that each column block of a dK/dV kernel
/// holds (defaultGradBlocks), or nullopt where the kernel takes one block.
std::optional<int64_t> keyValueBlockCols(const KernelSpec &spec,
                                         int64_t bytes) {
  int64_t headCols = tileColumns(spec.headDim, spec.target, bytes);
  int64_t valueCols = tileColumns(spec.valueDim, spec.target, bytes);
  int64_t count =
      defaultGradBlocks(spec.headDim, headCols, spec.valueDim, valueCols,
                        bytes, spec.target, /*queryNest=*/false);
  if (count < 2)
    return std::nullopt;
  return gradBlocking(spec.headDim, headCols, count,
                      gradBlockAlign(headCols, bytes, spec.target))
             .step +
         gradBlocking(spec.valueDim, valueCols, count,
                      gradBlockAlign(valueCols, bytes, spec.target))
             .step;
}

/// The tile a backward kernel on `warps` warps streams past its own rows:
/// the query tile of the dK/dV kernel, the key tile of the dQ kernel. By
/// default 16 x warps, a 16-row MMA tile per warp, but smaller where the
/// kernel's accumulators leave too few registers for the products beside
/// them (the tile is their n: S^T and dP^T, or S and dP, take 32 f32
/// registers a thread at 64 and 16 at 32):
///  - sm_90a dK/dV kernels whose one column block holds more than 256
///    columns of dK and dV (D = 136 to 192) stream 32 queries. H200, bf16,
///    against 64-query tiles (docs/GPU.md): D = 192, whose dK/dV kernel
///    spilled 108 to 128 bytes and now none, the whole backward 1.12x to
///    1.14x; D = 160 1.08x to 1.09x; but D = 64 0.89x to 0.94x, and the two
///    column blocks of D = 224 and 256 0.74x to 0.76x, which keep 64.
///  - sm_80's mapping, 16-bit operands. With 64 queries ptxas spilled 12
///    to 780 bytes in the dK/dV kernels from D = 104 to 256 (one block or
///    two), with 64 keys 8 to 164 in the dQ kernels from D = 184. So:
///    dK/dV kernels of 4 warps whose dK and dV take more than 192 tile
///    columns stream 32 queries, but D = Dv = 128 tiles 64 (no spill there
///    without a mask operand or a modification, and 1.07x to 1.09x faster
///    than 32); head dims that are no multiple of 16 (a partial last
///    k-step), where one block holds more than 256 columns or a column
///    block 256 (D = 136, 152, 232, 248), 16; dQ kernels whose dQ takes
///    more than 128 columns stream half their rows of keys (32 on 4 warps;
///    16 on the 2 of D = 512 where the scores are masked, below). None of
///    these spills from D = 8 to 256 nor in wide-head-dims.mlir
///    (test/Pipelines/attn-to-ptx-sm80-backward.test). H200, sm_80's
///    kernels, against the spilling ones (docs/GPU.md): the whole backward
///    0.99x at D = 104, 1.13x to 1.21x at D = 136 and 160, 1.09x to 1.11x
///    at D = 192, 1.18x to 1.65x from D = 224 to 256, 1.73x at D = 320;
///    32 keys in the dQ kernels of D = 136 to 176, which did not spill,
///    1.01x to 1.05x (at D = 128 0.97x to 1.00x, which keeps 64).
int64_t defaultStreamTile(const KernelSpec &spec, int64_t warps) {
  int64_t rows = 16 * warps;
  if (!spec.isBackward() || spec.accumulatesDq() || !spec.elementType)
    return rows;
  int64_t bytes = spec.elementType.getIntOrFloatBitWidth() / 8;
  int64_t headCols = tileColumns(spec.headDim, spec.target, bytes);
  int64_t cols = headCols + tileColumns(spec.valueDim, spec.target, bytes);
  if (bytes == 4) {
    // f32 takes sm_80's mapping on every chip, each product's operands as
    // two TF32 parts. On 4 warps (sm_90a's shared memory; sm_80 fits 2)
    // the D = 128 dK/dV kernels spilled 12 to 32 bytes with 64 queries and
    // spill none with 32.
    return spec.kind == KernelKind::BackwardKeyValue && warps == 4 &&
                   cols > 128
               ? rows / 2
               : rows;
  }
  if (spec.target == TileTarget::Sm90a) {
    if (warps != 4)
      return rows;
    bool oneBlock = cols <= gradOneBlockKeyValueCols(spec.target) &&
                    std::max(spec.headDim, spec.valueDim) <= kMaxValueBlockCols;
    return spec.kind == KernelKind::BackwardKeyValue && oneBlock &&
                   cols > kMaxGradKeyValueCols
               ? 32
               : rows;
  }
  if (bytes != 2)
    return rows;
  // Masked scores take registers too: the 2 warps of D = 512 fit 32 keys
  // without them, not with them (8 to 12 bytes spilled). 16 keys cost the
  // dQ kernel 1.39x its time (H200: the causal backward 0.89x the speed of
  // the spilling kernels), which only the masked ones pay.
  bool plain = spec.causal == CausalKind::None &&
               spec.mask == MaskOperand::None && spec.modName.empty();
  // Rows that are no whole 16-byte chunks (D = 59: 118 bytes) are copied
  // element by element, their loads held in registers (TileToNVVM.cpp's
  // copyRows): beside them the masked D = 59 dQ kernel spilled 172 bytes
  // with 64 keys and spills none with 32.
  bool elementRows = spec.headDim * bytes % 16 || spec.valueDim * bytes % 16;
  if (spec.kind == KernelKind::BackwardQuery)
    return (headCols > 128 && (warps == 4 || (warps == 2 && !plain))) ||
                   (elementRows && !plain && warps == 4)
               ? rows / 2
               : rows;
  if (spec.kind == KernelKind::BackwardKeyValue && warps == 4) {
    // Whole 128-column dK and dV (D = 120, 128) fit with 64 queries, which
    // ran their kernel 1.07x to 1.09x faster than 32, unless a mask operand
    // or a modification takes registers too (8 bytes spilled).
    bool unmasked = spec.mask == MaskOperand::None && spec.modName.empty();
    if (cols <= 192 || (unmasked && headCols == 128 && cols == 256))
      return rows;
    bool partialStep = spec.headDim % kTileColumnStep ||
                       spec.valueDim % kTileColumnStep;
    std::optional<int64_t> block = keyValueBlockCols(spec, bytes);
    bool full = block ? *block >= kMaxGradKeyValueCols
                      : cols > kMaxGradKeyValueCols;
    return partialStep && full ? 16 : 32;
  }
  return rows;
}

/// Copies the schedule `sizes` into `spec` and returns it.
AttnTileSizes setTiling(KernelSpec &spec, const AttnTileSizes &sizes) {
  spec.warps = sizes.warps;
  spec.blockQ = sizes.blockQ;
  spec.blockKV = sizes.blockKV;
  spec.keySlices = sizes.keySlices;
  spec.valueBlocks = sizes.valueBlocks;
  spec.sharedBytes = sizes.workgroupBytes;
  spec.producer = sizes.producer;
  spec.persistent = sizes.persistent;
  return sizes;
}

/// Fills the tiling of `spec` from attn-tile's cost model (the options, 0
/// meaning "choose", are its requests), so that the kernel runs the
/// schedule that `attn-tile` reports.
FailureOr<AttnTileSizes> chooseTiling(Operation *op, KernelSpec &spec,
                                      int64_t warps, int64_t mTiles,
                                      int64_t blockKV, bool persistent) {
  AttnTileRequest request;
  request.blockKV = blockKV;
  request.warps = warps;
  request.persistent = persistent;
  request.deterministic = spec.dq != DqMode::Atomic;
  request.orderedDq = spec.dq == DqMode::Ordered;
  request.smemBudget = spec.sharedMemoryLimit;
  request.target = spec.target;
  request.gpuKernel = true;
  if (spec.isBackward()) {
    // Each kernel the schedule of its own nest (dK/dV: key rows, the dot
    // and dQ: query rows).
    request.gradNest = gradNestOf(spec.kind);
    // The model's two-warpgroup schedule where it has one for the nest
    // (sm_90a), with nothing requested; it does not depend on the shape.
    if (!warps && !mTiles && !blockKV) {
      FailureOr<AttnTileSizes> wide = chooseAttnTileSizes(op, request);
      if (failed(wide))
        return failure();
      if (wide->warps != 4)
        return setTiling(spec, *wide);
    }
    // Otherwise one kernel serves every shape: the tiles are the warps'
    // 16-row MMA tiles (m-tiles of them), never shrunk to a static shape's
    // rows or keys as the CPU's are.
    // Where 4 warps' tiles exceed the chip's shared memory (sm_86 and
    // sm_89: 99 KiB; f32 on sm_80), 2 warps', then 1's, unless the warps
    // were asked for; the last try reports why none fits.
    int64_t requestedKV = request.blockKV;
    for (int64_t w : {4, 2, 1}) {
      if (warps && w != warps)
        continue;
      request.warps = w;
      int64_t stream = defaultStreamTile(spec, w);
      bool keyRows = spec.kind == KernelKind::BackwardKeyValue;
      request.blockQ = mTiles ? 16 * w * mTiles : keyRows ? stream : 16 * w;
      request.blockKV = requestedKV ? requestedKV : keyRows ? 16 * w : stream;
      bool last = warps || w == 1;
      std::optional<ScopedDiagnosticHandler> quiet;
      if (!last)
        quiet.emplace(op->getContext(), [](Diagnostic &) { return success(); });
      FailureOr<AttnTileSizes> sizes = chooseAttnTileSizes(op, request);
      if (succeeded(sizes))
        return setTiling(spec, *sizes);
      if (last)
        return failure();
    }
  } else if (mTiles && spec.kind == KernelKind::Forward) {
    // The query tile follows from the warps the model picks.
    FailureOr<AttnTileSizes> first = chooseAttnTileSizes(op, request);
    if (failed(first))
      return failure();
    request.blockQ = mTiles * 16 * first->warps;
  }
  FailureOr<AttnTileSizes> sizes = chooseAttnTileSizes(op, request);
  if (failed(sizes))
    return failure();
  return setTiling(spec, *sizes);
}

/// The tensor-core mapping for `chip`: wgmma on sm_90a, whose instructions
/// no other chip has; mma.sync on sm_80 to sm_90. The kernels are PTX 8.0,
/// which names no chip past sm_90a.
std::optional<TileTarget> parseChip(StringRef chip) {
  if (chip == "sm_90a")
    return TileTarget::Sm90a;
  if (llvm::is_contained({"sm_80", "sm_86", "sm_87", "sm_89", "sm_90"},
                         chip))
    return TileTarget::Sm80;
  return std::nullopt;
}

/// The dynamic shared memory a CTA may have on `chip` (the CUDA
/// programming guide's table of compute capabilities): 163 KiB on sm_80
/// and sm_87 (A100, Orin), 99 KiB on sm_86 and sm_89 (the GeForce and
/// workstation chips), 227 KiB on sm_90. Each chip's kernels are scheduled
/// within its own, so that they load on it; a chip of a larger budget runs
/// them too.
int64_t chipSharedMemory(StringRef chip) {
  if (chip == "sm_80" || chip == "sm_87")
    return 163 * 1024;
  if (chip == "sm_86" || chip == "sm_89")
    return 99 * 1024;
  return kMaxSharedMemory;
}

/// Why `kv_lens` without a block table has no kernel of its own.
constexpr StringLiteral kLensWithoutPages =
    "has per-sequence key counts without a block table; the GPU kernels "
    "take them with a paged cache only: pass the cache as one page per "
    "sequence (block_table[b] = [b], page_size = Sk)";

LogicalResult tileSpec(Operation *op, KernelSpec &spec, int64_t warps,
                       int64_t mTiles, int64_t blockKV, bool report,
                       bool persistent, AttnTileSizes &tiling);

/// The kernel spec of an attn op, or an error on the op. With `report`,
/// attn-tile's account of the schedule, the one the kernel runs, as a
/// remark on the op.
FailureOr<KernelSpec> specFor(Operation *op, TileTarget target,
                              int64_t sharedMemory, int64_t warps,
                              int64_t mTiles, int64_t blockKV, bool report,
                              bool persistent, DqMode dq, bool tf32,
                              AttnTileSizes &tiling) {
  KernelSpec spec;
  spec.sharedMemoryLimit = sharedMemory;
  Value mask;
  if (auto a = dyn_cast<AttentionOp>(op)) {
    AttentionDims dims = getAttentionDims(a.getLayout(), a.getQuery().getType(),
                                          a.getKey().getType(),
                                          a.getValue().getType());
    spec.kind = KernelKind::Forward;
    spec.target = target;
    spec.elementType = a.getQuery().getType().getElementType();
    spec.headDim = dims.headDim;
    spec.valueDim = dims.valueDim;
    spec.causal = a.getCausal();
    spec.paged = static_cast<bool>(a.getBlockTable());
    spec.packedQueries = static_cast<bool>(a.getQueryOffsets());
    spec.packedKeys = static_cast<bool>(a.getKeyOffsets());
    if (a.getKvLens() && !spec.paged)
      return op->emitOpError(kLensWithoutPages);
    // K/V rows copied one by one through a block table, which no tensor
    // map describes: cp.async from every thread (no producer warpgroup),
    // into the chip's tiles (wgmma on sm_90a). A packed batch's sequences
    // are consecutive rows: TMA boxes at any row without a block table.
    mask = a.getMask();
  } else if (auto p = dyn_cast<AttentionPartialOp>(op)) {
    AttentionDims dims = getAttentionDims(p.getLayout(), p.getQuery().getType(),
                                          p.getKey().getType(),
                                          p.getValue().getType());
    spec.kind = KernelKind::DecodePartial;
    // On sm_90a: TMA copies, and mma.sync on the swizzled tiles, since its
    // few rows fill no 64-row warpgroup (each warp takes a key slice). A
    // paged cache is copied row by row through its block table, which no
    // tensor map describes: cp.async from every thread, into the same
    // swizzled tiles.
    spec.paged = static_cast<bool>(p.getBlockTable());
    if (p.getKvLens() && !spec.paged)
      return op->emitOpError(kLensWithoutPages);
    spec.balanced = p.getBalanced();
    spec.target = target;
    spec.elementType = p.getQuery().getType().getElementType();
    spec.headDim = dims.headDim;
    spec.valueDim = dims.valueDim;
    spec.causal = p.getCausal();
    mask = p.getMask();
  } else if (auto c = dyn_cast<CombineOp>(op)) {
    spec.kind = KernelKind::DecodeCombine;
    spec.balanced = static_cast<bool>(c.getSplitOffsets());
    spec.elementType = c.getOutput().getType().getElementType();
    spec.valueDim = c.getPartialOutput().getType().getDimSize(4);
  } else if (auto g = dyn_cast<AttentionGradOp>(op)) {
    AttentionDims dims =
        getAttentionDims(g.getLayout(), g.getQuery().getType(),
                         g.getKey().getType(), g.getValue().getType());
    // The first of the three; specsFor adds the other two.
    spec.kind = KernelKind::BackwardDot;
    spec.target = target;
    spec.elementType = g.getQuery().getType().getElementType();
    spec.headDim = dims.headDim;
    spec.valueDim = dims.valueDim;
    spec.causal = g.getCausal();
    spec.dq = dq;
    mask = g.getMask();
  } else {
    return op->emitOpError("has no GPU kernel");
  }
  if (BlockMask blocks = getBlockMask(op)) {
    spec.blockMaskQ = blocks.blockQ;
    spec.blockMaskK = blocks.blockK;
  }
  // The ordered dQ mode is the deterministic mode's choice where its
  // kernels exist (sm_90a, no block mask, whole tensor-map boxes of dQ's
  // columns: KernelSpec::operandsReason) and do not spill (up to D = 128:
  // past it their dK/dV kernels spill 80 to 2192 bytes, as the atomic
  // mode's do); elsewhere dQ is recomputed.
  if (spec.dq == DqMode::Ordered &&
      (target != TileTarget::Sm90a || spec.blockMaskQ ||
       spec.headDim % kDqAccumBoxCols || spec.headDim > kMaxOrderedHeadDim))
    spec.dq = DqMode::Recompute;
  if (spec.kind != KernelKind::DecodeCombine) {
    spec.modName = getModName(op);
    spec.modHash = getModHash(op);
    ValueRange modOperands =
        TypeSwitch<Operation *, ValueRange>(op)
            .Case<AttentionOp, AttentionPartialOp, AttentionGradOp>(
                [](auto op) { return op.getModOperands(); })
            .Default([](Operation *) { return ValueRange(); });
    if (static_cast<int64_t>(modOperands.size()) > kMaxModOperands)
      return op->emitOpError("has ")
             << modOperands.size() << " mod_operands; the GPU kernels take "
             << "at most " << kMaxModOperands;
    for (auto [i, operand] : llvm::enumerate(modOperands)) {
      auto type = cast<RankedTensorType>(operand.getType());
      Type elt = type.getElementType();
      if (!(elt.isF32() || elt.isF16() || elt.isBF16() ||
            elt.isSignlessInteger(1) || elt.isSignlessInteger(32) ||
            elt.isSignlessInteger(64)))
        return op->emitOpError("has mod operand ")
               << i << " of element type " << elt
               << "; the GPU kernels read f32, f16, bf16, i1, i32 or i64";
      if (type.getRank() > kMaxModOperandRank)
        return op->emitOpError("has mod operand ")
               << i << " of rank " << type.getRank()
               << "; the GPU kernels read tensors of rank 0 to "
               << kMaxModOperandRank;
      spec.modOperands.push_back({elt, type.getRank()});
    }
  }
  if (mask) {
    Type maskElt = getElementTypeOrSelf(mask.getType());
    if (spec.kind != KernelKind::Forward && !spec.isBackward())
      return op->emitOpError("has a mask operand; the GPU decode kernels "
                             "generate causal and window masks only");
    if (maskElt.isInteger(1))
      spec.mask = MaskOperand::Boolean;
    else if (maskElt == spec.elementType)
      spec.mask = MaskOperand::Additive;
    else
      return op->emitOpError("has an additive mask of element type ")
             << maskElt << "; the GPU kernels read additive masks in the "
             << "operands' element type " << spec.elementType;
  }
  // Rows that are not whole 16-byte chunks are copied element by element,
  // which no tensor map and so no warp-specialised sm_90a kernel does:
  // sm_80's mapping (mma.sync, copies from every thread), on every chip.
  // So are f32 operands: wgmma takes TF32 only K-major, and P V reads V
  // MN-major (rows of keys); mma.sync m16n8k8 reads any tile by lane.
  // So are head dims past 256: Q and a ring of wide K tiles leave no room
  // for wgmma's 64-row warpgroups and their stages, and V and O are
  // computed in value blocks (AttnTileSizes::valueBlocks).
  bool f32 = spec.elementType && spec.elementType.isF32();
  bool wide = std::max(spec.headDim, spec.valueDim) > kMaxValueBlockCols;
  if (spec.kind != KernelKind::DecodeCombine &&
      (!spec.wholeChunkRows() || f32 || wide))
    spec.target = TileTarget::Sm80;
  spec.tf32 = tf32 && f32 && spec.kind != KernelKind::DecodeCombine;
  if (failed(tileSpec(op, spec, warps, mTiles, blockKV, report, persistent,
                      tiling)))
    return failure();
  return spec;
}

/// Gives `spec` its schedule (`tiling`) and checks it against the kernels'
/// limits; with `report`, attn-tile's account of it as a remark on `op`.
LogicalResult tileSpec(Operation *op, KernelSpec &spec, int64_t warps,
                       int64_t mTiles, int64_t blockKV, bool report,
                       bool persistent, AttnTileSizes &tiling) {
  // The operands first: the schedule of a head dim without kernels would
  // only fail less clearly.
  if (std::string why = spec.operandsReason(); !why.empty())
    return op->emitOpError("cannot be lowered to a GPU kernel: ") << why;
  // A packed batch's grid is its sequences' query tiles (the runtime sizes
  // it from max_seqlen_q), never a persistent one.
  FailureOr<AttnTileSizes> sizes = chooseTiling(
      op, spec, warps, mTiles, blockKV, persistent && !spec.packedQueries);
  if (failed(sizes))
    return failure();
  tiling = *sizes;
  // The warps first: the spec's threads, rows and checks multiply them.
  if (spec.warps < 1 || spec.warps > 8)
    return op->emitOpError("'warps' must be in [1, 8], got ") << spec.warps;
  if (std::string why = spec.unsupportedReason(); !why.empty())
    return op->emitOpError("cannot be lowered to a GPU kernel: ") << why;
  if (spec.kind != KernelKind::DecodeCombine &&
      (spec.blockKV % 16 || spec.blockKV < 16))
    return op->emitOpError("'block-kv' must be a positive multiple of 16, got ")
           << spec.blockKV;
  if (spec.kind == KernelKind::Forward && spec.target == TileTarget::Sm80 &&
      (spec.blockQ % (16 * spec.warps) || spec.blockQ / (16 * spec.warps) > 2))
    return op->emitOpError("'m-tiles' must be 1 or 2, got block-q = ")
           << spec.blockQ << " for " << spec.warps << " warps";
  if (report) {
    AttnTileConfig config;
    config.sizes = *sizes;
    config.memorySpace = gpu::AddressSpaceAttr::get(
        op->getContext(), gpu::AddressSpace::Workgroup);
    config.deterministic = spec.dq != DqMode::Atomic;
    config.orderedDq = spec.dq == DqMode::Ordered;
    op->emitRemark() << describeAttnTiling(op, config) << "; kernel "
                     << spec.name();
  }
  return success();
}

/// The kernels of an attn op, in launch order, each with its schedule in
/// `tilings`: one, or the backward's three (one per loop nest of its tile
/// form, each nest's schedule; the dot kernel, and the atomic dQ mode's dQ
/// kernel, which converts the accumulator, have no tiles in shared
/// memory).
FailureOr<SmallVector<KernelSpec, 3>>
specsFor(Operation *op, TileTarget target, int64_t sharedMemory, int64_t warps,
         int64_t mTiles, int64_t blockKV, bool report, bool persistent,
         DqMode dq, bool tf32, SmallVector<AttnTileSizes> &tilings) {
  tilings.assign(1, AttnTileSizes());
  FailureOr<KernelSpec> spec =
      specFor(op, target, sharedMemory, warps, mTiles, blockKV, report,
              persistent, dq, tf32, tilings[0]);
  if (failed(spec))
    return failure();
  SmallVector<KernelSpec, 3> specs = {*spec};
  if (!spec->isBackward())
    return specs;
  specs[0].sharedBytes = 0;
  for (KernelKind kind :
       {KernelKind::BackwardKeyValue, KernelKind::BackwardQuery}) {
    specs.push_back(*spec);
    specs.back().kind = kind;
    tilings.emplace_back();
    if (failed(tileSpec(op, specs.back(), warps, mTiles, blockKV, report,
                        persistent, tilings.back())))
      return failure();
  }
  if (spec->accumulatesDq())
    specs.back().sharedBytes = 0;
  return specs;
}

/// Gives `rebuilt` copies of the score and mask modifications of `op`
/// (regions 0 and 1 of the forward, split-KV and gradient ops).
void copyModRegions(Operation *op, Operation *rebuilt) {
  for (unsigned i = 0; i < 2; ++i) {
    IRMapping map;
    op->getRegion(i).cloneInto(&rebuilt->getRegion(i), map);
  }
}

/// The attn op a kernel runs, rebuilt on the kernel's parameters at `b`'s
/// insertion point: its operands are the `q`, `k`, `v` (a backward's `o`,
/// `dout`, `lse`; and `mask`), or `partial_o` and `partial_lse`,
/// parameters, its attributes the ones the
/// kernel is specialised for (causal kind; the scale and window come from
/// launch parameters, the layout from the strides). Returns the op and
/// the parameters its results are written to. Its head counts are the
/// kernel's dynamic ones, outside the ops' contract (static head counts):
/// it is tiled at once and never verified (docs/TileToGPU.md).
std::pair<Operation *, SmallVector<Value>>
rebuildOnParams(OpBuilder &b, Operation *op, const KernelSpec &spec,
                const llvm::StringMap<Value> &params) {
  Location loc = op->getLoc();
  auto tensor = [&](StringRef name) -> Value {
    Value buffer = params.lookup(name);
    auto type = cast<MemRefType>(buffer.getType());
    return bufferization::ToTensorOp::create(
        b, loc, RankedTensorType::get(type.getShape(), type.getElementType()),
        buffer, /*restrict=*/true);
  };
  auto resultType = [&](StringRef name) -> Type {
    auto type = cast<MemRefType>(params.lookup(name).getType());
    return RankedTensorType::get(type.getShape(), type.getElementType());
  };
  if (spec.kind == KernelKind::DecodeCombine) {
    SmallVector<Value> operands = {tensor("partial_o"), tensor("partial_lse")};
    if (spec.balanced)
      operands.push_back(tensor("split_offsets"));
    Operation *rebuilt = CombineOp::create(
        b, loc, TypeRange{resultType("o"), resultType("lse")}, operands);
    return {rebuilt, {params.lookup("o"), params.lookup("lse")}};
  }
  Value mask = spec.mask != MaskOperand::None ? tensor("mask") : Value();
  // The tensors the modifications read: the last parameters.
  SmallVector<KernelParam> kernelParams = spec.params();
  SmallVector<Value> modOperands;
  for (const KernelParam &p :
       ArrayRef(kernelParams).take_back(spec.modOperands.size()))
    modOperands.push_back(tensor(p.name));
  // A block mask's lists: the kernel always takes the full ones (counts of
  // zero where the op has none).
  auto blockLists = [&](StringRef prefix) -> SmallVector<Value> {
    if (!spec.blockMaskQ)
      return {};
    SmallVector<Value> lists;
    for (StringRef part : {"", "full_"})
      for (StringRef what : {"counts", "indices"})
        lists.push_back(tensor((part + prefix + "_block_" + what).str()));
    return lists;
  };
  DenseI64ArrayAttr blockSize;
  if (spec.blockMaskQ)
    blockSize = b.getDenseI64ArrayAttr({spec.blockMaskQ, spec.blockMaskK});
  auto causal = CausalKindAttr::get(b.getContext(), spec.causal);
  auto layout = LayoutAttr::get(b.getContext(), Layout::BHSD);
  if (spec.isBackward()) {
    Operation *rebuilt = AttentionGradOp::create(
        b, loc, resultType("dq"), resultType("dk"), resultType("dv"),
        tensor("q"), tensor("k"), tensor("v"), tensor("o"), tensor("dout"),
        tensor("lse"), mask, blockLists("kv"), blockLists("q"), modOperands,
        FloatAttr(), causal, IntegerAttr(), layout, /*mod_name=*/StringAttr(),
        blockSize);
    copyModRegions(op, rebuilt);
    return {rebuilt,
            {params.lookup("dq"), params.lookup("dk"), params.lookup("dv")}};
  }
  Value kvLens = spec.paged ? tensor("kv_lens") : Value();
  Value blockTable = spec.paged ? tensor("block_table") : Value();
  if (spec.kind == KernelKind::Forward) {
    Value queryOffsets = spec.packedQueries ? tensor("query_offsets") : Value();
    Value keyOffsets = spec.packedKeys ? tensor("key_offsets") : Value();
    Operation *rebuilt = AttentionOp::create(
        b, loc, resultType("o"), resultType("lse"), tensor("q"), tensor("k"),
        tensor("v"), queryOffsets, keyOffsets, kvLens, blockTable, mask,
        blockLists("kv"), modOperands, FloatAttr(), causal, IntegerAttr(),
        layout, /*mod_name=*/StringAttr(), blockSize);
    copyModRegions(op, rebuilt);
    return {rebuilt, {params.lookup("o"), params.lookup("lse")}};
  }
  // Any split count: the kernel reads it from partial_o. The op's own
  // result types just have to be well formed.
  int64_t splits = cast<AttentionPartialOp>(op).getNumSplits();
  auto withSplits = [&](StringRef name) -> Type {
    auto type = cast<RankedTensorType>(resultType(name));
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = splits;
    return RankedTensorType::get(shape, type.getElementType());
  };
  SmallVector<Value> outputs = {params.lookup("partial_o"),
                                params.lookup("partial_lse")};
  Type offsetsType;
  if (spec.balanced) {
    offsetsType = resultType("split_offsets");
    outputs.push_back(params.lookup("split_offsets"));
  }
  Operation *rebuilt = AttentionPartialOp::create(
      b, loc, withSplits("partial_o"), withSplits("partial_lse"), offsetsType,
      tensor("q"), tensor("k"), tensor("v"), kvLens, blockTable, mask,
      modOperands, b.getI64IntegerAttr(splits), FloatAttr(), causal,
      IntegerAttr(), layout, /*mod_name=*/StringAttr(),
      spec.balanced ? b.getUnitAttr() : UnitAttr());
  copyModRegions(op, rebuilt);
  return {rebuilt, outputs};
}

/// Rewrites the math functions of a score or mask modification (exp, log,
/// erf, sin, atan...) in the tile form `source` into arithmetic with
/// upstream's polynomial approximations (f16 and bf16 through f32; powf,
/// rsqrt, the hyperbolic and rounding functions by their expansions
/// first). What is left, absf, copysign, floor, sqrt and fma, the GPU
/// lowering maps onto PTX instructions (TileToNVVM.cpp), so no kernel calls
/// libdevice: the PTX is the same whether or not the compiling machine has
/// a CUDA toolkit to link it from. exp2, log2 and tanh stay: they are the
/// SFU's.
LogicalResult approximateMath(func::FuncOp source) {
  bool any = false;
  source.walk([&](Operation *op) {
    any |= isa<math::MathDialect>(op->getDialect()) &&
           !isa<math::Exp2Op, math::Log2Op, math::FmaOp, math::TanhOp>(op);
  });
  if (!any)
    return success();
  RewritePatternSet patterns(source.getContext());
  math::populateExpansionPatterns(
      patterns, {"powf", "fpowi", "rsqrt", "sinh", "cosh", "asinh", "acosh",
                 "atanh", "tan", "ceil", "round", "roundeven"});
  // f16 and bf16 functions through f32, every one; of the f32 ones, tanh
  // stays: the SFU has it (TileToNVVM.cpp).
  populateMathF32ExpansionPatterns(patterns, [](StringRef) { return true; });
  populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
    return name != math::TanhOp::getOperationName() && name != "tanh";
  });
  return applyPatternsGreedily(source, std::move(patterns));
}

struct AttnToGPUPass : public attn::impl::AttnToGPUPassBase<AttnToGPUPass> {
  using Base::Base;

  /// The gradient kernels' dQ mode the options ask for.
  DqMode dqMode() const {
    if (!deterministic)
      return DqMode::Atomic;
    return orderedDq ? DqMode::Ordered : DqMode::Recompute;
  }

  /// The kernel of `spec` from attn-tile's tile form: the op rebuilt on the
  /// kernel's parameters in a scratch function, its results materialized in
  /// the output parameters, tiled by attn-tile with the schedule `sizes`
  /// (a backward kernel: its one nest, the row statistics in the
  /// `row_stats` parameter), then canonicalize and CSE, and the tile form
  /// mapped onto the CTA (TileToNVVM.cpp). The scratch function is erased.
  FailureOr<gpu::GPUFuncOp> buildTiledKernel(OpBuilder &b, Operation *op,
                                             const KernelSpec &spec,
                                             const AttnTileSizes &sizes) {
    Location loc = op->getLoc();
    gpu::GPUFuncOp kernel = createKernelFunc(b, loc, spec);
    auto source = func::FuncOp::create(
        b, loc, spec.name() + "_tile_form",
        b.getFunctionType(kernel.getArgumentTypes(), {}));
    llvm::scope_exit eraseSource([&] { source.erase(); });
    Block *entry = source.addEntryBlock();
    llvm::StringMap<Value> params;
    for (auto [p, arg] : llvm::zip_equal(spec.params(), entry->getArguments()))
      params[p.name] = arg;
    OpBuilder body = OpBuilder::atBlockBegin(entry);
    auto [rebuilt, outputs] = rebuildOnParams(body, op, spec, params);
    for (auto [result, output] : llvm::zip_equal(rebuilt->getResults(), outputs))
      bufferization::MaterializeInDestinationOp::create(
          body, loc, /*result=*/Type(), result, output, /*restrict=*/true,
          /*writable=*/true);
    func::ReturnOp::create(body, loc);

    AttnTileConfig config;
    config.sizes = sizes;
    config.memorySpace = gpu::AddressSpaceAttr::get(
        b.getContext(), gpu::AddressSpace::Workgroup);
    if (spec.isBackward()) {
      config.gradNest = gradNestOf(spec.kind);
      config.rowStats = params.lookup("row_stats");
      config.deterministic = spec.dq != DqMode::Atomic;
      config.orderedDq = spec.dq == DqMode::Ordered;
      config.dqAccum = params.lookup("dq_accum");
      config.dqTurns = params.lookup("dq_turns");
    }
    IRRewriter rewriter(b.getContext());
    rewriter.setInsertionPoint(rebuilt);
    if (failed(tileAttnOp(rewriter, rebuilt, config)) ||
        failed(approximateMath(source)))
      return failure();
    OpPassManager pipeline(func::FuncOp::getOperationName());
    pipeline.addPass(createCanonicalizerPass());
    pipeline.addPass(createCSEPass());
    if (failed(runPipeline(pipeline, source)))
      return failure();
    FailureOr<int64_t> bytes =
        lowerTileFormToNVVM(source, kernel, spec.params(), spec.target,
                            spec.producer, spec.persistent, spec.tf32);
    if (failed(bytes))
      return failure();
    if (*bytes != spec.sharedBytes)
      return op->emitOpError("GPU kernel " + spec.name() + " uses ")
             << *bytes << " bytes of shared memory, the schedule says "
             << spec.sharedBytes;
    return kernel;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The options are requests to attn-tile's cost model, checked here
    // against the kernels' own limits so that nothing computed from them
    // (block-q = m-tiles x 16 x warps, threads, shared memory) overflows.
    bool badOption = false;
    auto checkRange = [&](StringRef name, int64_t value, int64_t hi,
                          StringRef meaning) {
      if (value >= 0 && value <= hi)
        return;
      module.emitError() << "attn-to-gpu: " << name << " = " << value
                         << " is out of range [0, " << hi << "] (" << meaning
                         << "; 0: automatic)";
      badOption = true;
    };
    checkRange("block-kv", blockKV, kMaxTileBlock, "keys per K/V tile");
    checkRange("warps", warps, 8, "warps per CTA");
    checkRange("m-tiles", mTiles, 2, "16-row MMA tiles per warp");
    if (badOption)
      return signalPassFailure();
    std::optional<TileTarget> target = parseChip(chip);
    if (!target) {
      module.emitError("attn-to-gpu: chip must be one of sm_80, sm_86, "
                       "sm_87, sm_89, sm_90, sm_90a (the kernels are PTX "
                       "8.0), got '")
          << chip << "'";
      return signalPassFailure();
    }
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionPartialOp, CombineOp, AttentionGradOp>(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return;

    // The names the pass generates are fixed (the kernel module's, each
    // kernel's from its specialisation: the runtime and the manifest use
    // them), so a symbol of the user's that takes one is an error rather
    // than renamed around.
    OpBuilder b(module.getContext());
    Operation *existing = module.lookupSymbol(kKernelModule);
    auto kernels = dyn_cast_or_null<gpu::GPUModuleOp>(existing);
    if (isa_and_nonnull<gpu::BinaryOp>(existing)) {
      // attn-to-ptx's own output: the kernels are compiled and serialised
      // already, and the host code keeps its attn ops (the runtime runs
      // them), so a second run would compile them again.
      existing->emitOpError()
          << "@" << kKernelModule
          << " holds the kernels of an earlier attn-to-ptx (attn-to-gpu) "
             "run: this module's attn ops are compiled already; run the "
             "pipeline once, on the module before it";
      return signalPassFailure();
    }
    if (existing && !kernels) {
      existing->emitOpError()
          << "is named @" << kKernelModule
          << ", the gpu.module attn-to-gpu puts its kernels in: rename it";
      return signalPassFailure();
    }
    SmallVector<Attribute> manifest;
    if (Attribute lines = module->getAttr("attn.manifest")) {
      auto array = dyn_cast<ArrayAttr>(lines);
      if (!array || !llvm::all_of(array, llvm::IsaPred<StringAttr>)) {
        module.emitError() << "attn-to-gpu: the module's attn.manifest must "
                              "be an array of manifest lines (strings), got "
                           << lines;
        return signalPassFailure();
      }
      manifest.append(array.begin(), array.end());
    }
    if (!kernels) {
      b.setInsertionPointToEnd(module.getBody());
      kernels = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModule);
    }
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());

    SymbolTable symbols(kernels);
    for (Operation *op : ops) {
      SmallVector<AttnTileSizes> tilings;
      FailureOr<SmallVector<KernelSpec, 3>> specs =
          specsFor(op, *target, chipSharedMemory(chip), warps, mTiles, blockKV,
                   report, persistent, dqMode(), tf32, tilings);
      if (failed(specs))
        return signalPassFailure();
      SmallVector<Attribute> refs;
      for (auto [spec, tiling] : llvm::zip_equal(*specs, tilings)) {
        FailureOr<SymbolRefAttr> ref =
            addKernel(b, op, spec, tiling, kernels, symbols, manifest);
        if (failed(ref))
          return signalPassFailure();
        refs.push_back(*ref);
      }
      // The backward's kernels, in launch order.
      op->setAttr("attn.kernel",
                  refs.size() == 1 ? refs[0] : b.getArrayAttr(refs));
    }
    module->setAttr("attn.manifest", b.getArrayAttr(manifest));
  }

  /// The kernel of `spec` in `kernels`: generated, or one of an earlier
  /// run with the same manifest line; `manifest` gains its line.
  FailureOr<SymbolRefAttr>
  addKernel(OpBuilder &b, Operation *op, const KernelSpec &spec,
            const AttnTileSizes &sizes, gpu::GPUModuleOp kernels,
            SymbolTable &symbols, SmallVector<Attribute> &manifest) {
    std::string name = spec.name();
    StringAttr line = b.getStringAttr(spec.manifestLine());
    if (Operation *symbol = symbols.lookup(name)) {
      // A kernel of an earlier run (or another op) carries the manifest
      // line it was generated with; anything else of that name is not
      // this op's kernel.
      Attribute other = symbol->getAttr("attn.manifest");
      if (other != line) {
        InFlightDiagnostic diag = op->emitOpError("needs the kernel @")
                                  << kKernelModule << "::@" << name
                                  << ", but gpu.module @" << kKernelModule
                                  << " already holds ";
        if (other)
          diag << "a kernel of that name with another schedule (" << other
               << "): generate both with the same options";
        else
          diag << "a '" << symbol->getName()
               << "' of that name that attn-to-gpu did not generate: "
                  "rename it";
        return failure();
      }
      if (!llvm::is_contained(manifest, line))
        manifest.push_back(line);
    } else {
      b.setInsertionPointToEnd(kernels.getBody());
      FailureOr<gpu::GPUFuncOp> kernel = buildTiledKernel(b, op, spec, sizes);
      if (failed(kernel))
        return failure();
      symbols.insert(*kernel);
      manifest.push_back(line);
      ++numKernels;
    }
    return SymbolRefAttr::get(b.getStringAttr(kKernelModule),
                              {FlatSymbolRefAttr::get(b.getContext(), name)});
  }
};

} // namespace
