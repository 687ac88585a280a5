//===- AttnToGPU.cpp - attn ops to tensor-core GPU kernels ----------------===//

#include "attn/Conversion/AttnToGPU/KernelSpec.h"
#include "attn/Conversion/AttnToLoops/AttnToLoops.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

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

/// Fills the tiling of `spec` from attn-tile's cost model (the options, 0
/// meaning "choose", are its requests), so that the kernel runs the
/// schedule that `attn-tile` reports.
FailureOr<AttnTileSizes> chooseTiling(Operation *op, KernelSpec &spec,
                                      int64_t warps, int64_t mTiles,
                                      int64_t blockKV) {
  if (spec.kind == KernelKind::DecodeCombine) {
    // No tiles: a thread per four output columns.
    spec.warps = warps ? warps : 4;
    spec.blockKV = blockKV ? blockKV : 64;
    return AttnTileSizes();
  }
  AttnTileRequest request;
  request.blockKV = blockKV;
  request.warps = warps;
  request.smemBudget = kMaxSharedMemory;
  if (mTiles && spec.kind == KernelKind::Forward) {
    // The query tile follows from the warps the model picks.
    FailureOr<AttnTileSizes> first = chooseAttnTileSizes(op, request);
    if (failed(first))
      return failure();
    request.blockQ = mTiles * 16 * first->warps;
  }
  FailureOr<AttnTileSizes> sizes = chooseAttnTileSizes(op, request);
  if (failed(sizes))
    return failure();
  spec.warps = sizes->warps;
  spec.blockKV = sizes->blockKV;
  spec.keySlices = sizes->keySlices;
  spec.mTiles = spec.kind == KernelKind::Forward
                    ? sizes->blockQ / (16 * sizes->warps)
                    : 1;
  return sizes;
}

/// The kernel spec of an attn op, or an error on the op. With `report`,
/// attn-tile's account of the schedule, the one the kernel runs, as a
/// remark on the op.
FailureOr<KernelSpec> specFor(Operation *op, int64_t warps, int64_t mTiles,
                              int64_t blockKV, bool report) {
  KernelSpec spec;
  Value mask;
  if (auto a = dyn_cast<AttentionOp>(op)) {
    AttentionDims dims = getAttentionDims(a.getLayout(), a.getQuery().getType(),
                                          a.getKey().getType(),
                                          a.getValue().getType());
    spec.kind = KernelKind::Forward;
    spec.elementType = a.getQuery().getType().getElementType();
    spec.headDim = dims.headDim;
    spec.valueDim = dims.valueDim;
    spec.causal = a.getCausal();
    mask = a.getMask();
  } else if (auto p = dyn_cast<AttentionPartialOp>(op)) {
    AttentionDims dims = getAttentionDims(p.getLayout(), p.getQuery().getType(),
                                          p.getKey().getType(),
                                          p.getValue().getType());
    spec.kind = KernelKind::DecodePartial;
    spec.elementType = p.getQuery().getType().getElementType();
    spec.headDim = dims.headDim;
    spec.valueDim = dims.valueDim;
    spec.causal = p.getCausal();
    mask = p.getMask();
  } else if (auto c = dyn_cast<CombineOp>(op)) {
    spec.kind = KernelKind::DecodeCombine;
    spec.elementType = c.getOutput().getType().getElementType();
    spec.valueDim = c.getPartialOutput().getType().getDimSize(4);
  } else if (isa<AttentionGradOp>(op)) {
    return op->emitOpError("has no GPU kernel yet: the backward runs on the "
                           "CPU only (attn-to-llvm)");
  } else {
    return op->emitOpError("has no GPU kernel");
  }
  if (mask) {
    Type maskElt = getElementTypeOrSelf(mask.getType());
    if (spec.kind != KernelKind::Forward)
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
  if (auto p = dyn_cast<AttentionPartialOp>(op)) {
    // The decode kernel holds the packed rows of one key/value head in one
    // MMA tile.
    AttentionConfig c = getAttentionConfig(p);
    int64_t rows = c.dims.groupSize() * c.dims.querySeq;
    if (!ShapedType::isDynamic(c.dims.querySeq) && rows > 16)
      return op->emitOpError("packs ")
             << c.dims.groupSize() << " query heads x Sq = " << c.dims.querySeq
             << " = " << rows
             << " rows per key/value head; the GPU decode kernel holds 16";
  }
  FailureOr<AttnTileSizes> sizes =
      chooseTiling(op, spec, warps, mTiles, blockKV);
  if (failed(sizes))
    return failure();
  if (std::string why = spec.unsupportedReason(); !why.empty())
    return op->emitOpError("cannot be lowered to a GPU kernel: ") << why;
  if (spec.blockKV % 16 || spec.blockKV < 16)
    return op->emitOpError("'block-kv' must be a positive multiple of 16, got ")
           << spec.blockKV;
  if (spec.warps < 1 || spec.warps > 8)
    return op->emitOpError("'warps' must be in [1, 8], got ") << spec.warps;
  if (spec.mTiles < 1 || spec.mTiles > 2)
    return op->emitOpError("'m-tiles' must be 1 or 2, got ") << spec.mTiles;
  if (report) {
    AttnTileConfig config;
    config.sizes = *sizes;
    config.memorySpace = gpu::AddressSpaceAttr::get(
        op->getContext(), gpu::AddressSpace::Workgroup);
    op->emitRemark() << describeAttnTiling(op, config) << "; kernel "
                     << spec.name();
  }
  return spec;
}

struct AttnToGPUPass : public attn::impl::AttnToGPUPassBase<AttnToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionPartialOp, CombineOp, AttentionGradOp>(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return;

    OpBuilder b(module.getContext());
    auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModule);
    if (!kernels) {
      b.setInsertionPointToEnd(module.getBody());
      kernels = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModule);
    }
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());

    SymbolTable symbols(kernels);
    SmallVector<Attribute> manifest;
    if (auto existing = module->getAttrOfType<ArrayAttr>("attn.manifest"))
      manifest.append(existing.begin(), existing.end());
    for (Operation *op : ops) {
      FailureOr<KernelSpec> spec = specFor(op, warps, mTiles, blockKV, report);
      if (failed(spec))
        return signalPassFailure();
      std::string name = spec->name();
      if (!symbols.lookup(name)) {
        b.setInsertionPointToEnd(kernels.getBody());
        symbols.insert(buildAttentionKernel(b, op->getLoc(), *spec));
        manifest.push_back(b.getStringAttr(spec->manifestLine()));
        ++numKernels;
      }
      op->setAttr("attn.kernel",
                  SymbolRefAttr::get(b.getStringAttr(kKernelModule),
                                     {FlatSymbolRefAttr::get(b.getContext(),
                                                             name)}));
    }
    module->setAttr("attn.manifest", b.getArrayAttr(manifest));
  }
};

} // namespace
