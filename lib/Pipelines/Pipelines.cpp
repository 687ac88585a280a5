//===- Pipelines.cpp - attn end-to-end pipelines --------------------------===//

#include "attn/Pipelines/Pipelines.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void attn::buildAttnToLLVMPipeline(OpPassManager &pm) {
  // attn ops and tosa down to linalg on tensors.
  pm.addPass(createAttnDecomposePass());
  tosa::addTosaToLinalgPasses(pm, TosaToLinalgOptions());
  pm.addPass(createAttnDecomposeAggregatesPass());
  pm.addPass(createCanonicalizerPass());

  // Tensors to buffers; functions take and return memrefs with identity
  // layouts so that C callers and mlir-runner can pass plain buffers.
  bufferization::OneShotBufferizePassOptions bufferizeOptions;
  bufferizeOptions.bufferizeFunctionBoundaries = true;
  bufferizeOptions.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferizeOptions));
  bufferization::buildBufferDeallocationPipeline(pm);

  // Loops, then LLVM. bf16 extf/truncf are expanded to integer ops: the CPU
  // has no bf16 conversions and the JIT no soft-float helpers for them.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  arith::ArithExpandOpsPassOptions expandOptions;
  expandOptions.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expandOptions));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void attn::registerAttnPipelines() {
  PassPipelineRegistration<>(
      "attn-to-llvm",
      "Lower attn ops and the linalg/tosa around them to LLVM-dialect IR for "
      "the CPU (mlir-runner)",
      [](OpPassManager &pm) { buildAttnToLLVMPipeline(pm); });
}
