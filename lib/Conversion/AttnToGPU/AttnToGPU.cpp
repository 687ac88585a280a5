//===- AttnToGPU.cpp - attn ops to tensor-core GPU kernels ----------------===//

#include "attn/Conversion/AttnToGPU/KernelSpec.h"
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

/// Fills the tiling of `spec` from the options, 0 meaning "choose". The
/// defaults come from measurements on an H200 (bf16, D = 128, S = 16k):
/// non-causal, 4 warps x two 16-row m-tiles with 32-key tiles ran 290 TFLOP/s
/// against 280 for 8 warps x one m-tile with 64-key tiles; causal, the other
/// way round (256 against 279). Two m-tiles with 64-key tiles spill at
/// D = 128 (ptxas), hence 32 keys there.
void chooseTiling(KernelSpec &spec, int64_t warps, int64_t mTiles,
                  int64_t blockKV) {
  bool forward = spec.kind == KernelKind::Forward;
  bool wideCausal =
      forward && spec.causal != CausalKind::None && spec.headDim > 64;
  spec.mTiles = !forward ? 1 : mTiles ? mTiles : wideCausal ? 1 : 2;
  // Reading the mask operand in every tile needs registers that a second
  // m-tile per warp would take (ptxas spills at D = 128 with two).
  if (spec.mask != MaskOperand::None)
    spec.mTiles = 1;
  spec.warps = warps ? warps
               : wideCausal && spec.mask == MaskOperand::None ? 8
                                                              : 4;
  if (blockKV) {
    spec.blockKV = blockKV;
    return;
  }
  spec.blockKV = forward && spec.mTiles == 2 && spec.headDim > 64 ? 32 : 64;
  // Large head dims: smaller key tiles until the stages fit a CTA.
  while (spec.blockKV > 16 && spec.sharedMemoryBytes() > kMaxSharedMemory &&
         spec.kind != KernelKind::DecodePartial)
    spec.blockKV /= 2;
}

/// The kernel spec of an attn op, or an error on the op.
FailureOr<KernelSpec> specFor(Operation *op, int64_t warps, int64_t mTiles,
                              int64_t blockKV) {
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
  chooseTiling(spec, warps, mTiles, blockKV);
  if (std::string why = spec.unsupportedReason(); !why.empty())
    return op->emitOpError("cannot be lowered to a GPU kernel: ") << why;
  if (spec.blockKV % 16 || spec.blockKV < 16)
    return op->emitOpError("'block-kv' must be a positive multiple of 16, got ")
           << spec.blockKV;
  if (spec.warps < 1 || spec.warps > 8)
    return op->emitOpError("'warps' must be in [1, 8], got ") << spec.warps;
  if (spec.mTiles < 1 || spec.mTiles > 2)
    return op->emitOpError("'m-tiles' must be 1 or 2, got ") << spec.mTiles;
  return spec;
}

struct AttnToGPUPass : public attn::impl::AttnToGPUPassBase<AttnToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionPartialOp, CombineOp>(op))
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
      FailureOr<KernelSpec> spec = specFor(op, warps, mTiles, blockKV);
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
