//===- GridConstants.cpp - tensor maps passed by value --------------------===//
//
// attn-grid-constants: the kernels' CUtensorMap arguments as by-value
// `__grid_constant__` parameters (Passes.td). Upstream's gpu.func lowering
// keeps no argument attributes the NVVM target reads, so they are set on
// the llvm.func it makes.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/KernelSpec.h"
#include "attn/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNGRIDCONSTANTSPASS
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {
/// Bytes of a CUtensorMap, and its alignment.
constexpr int64_t kTensorMapWords = 16, kTensorMapAlign = 64;

struct AttnGridConstantsPass
    : public attn::impl::AttnGridConstantsPassBase<AttnGridConstantsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    auto byval =
        LLVM::LLVMArrayType::get(IntegerType::get(ctx, 64), kTensorMapWords);
    WalkResult result = getOperation().walk([&](LLVM::LLVMFuncOp func) {
      auto args = func->getAttrOfType<DenseI64ArrayAttr>(kGridConstantsAttr);
      if (!args)
        return WalkResult::advance();
      for (int64_t i : args.asArrayRef()) {
        if (i < 0 || i >= func.getNumArguments() ||
            !isa<LLVM::LLVMPointerType>(func.getArgument(i).getType())) {
          func.emitOpError("names argument ")
              << i << " as a tensor map; it is not a pointer argument";
          return WalkResult::interrupt();
        }
        func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                        TypeAttr::get(byval));
        func.setArgAttr(
            i, LLVM::LLVMDialect::getAlignAttrName(),
            IntegerAttr::get(IntegerType::get(ctx, 64), kTensorMapAlign));
        func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                        UnitAttr::get(ctx));
      }
      func->removeAttr(kGridConstantsAttr);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
