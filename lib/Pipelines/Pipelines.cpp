//===- Pipelines.cpp - attn end-to-end pipelines --------------------------===//

#include "attn/Pipelines/Pipelines.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

/// attn-to-llvm on the functions of the module it runs on.
static void
buildAttnToLLVMModulePipeline(OpPassManager &pm,
                              const attn::AttnToLLVMPipelineOptions &options) {
  using namespace mlir::attn;
  // attn ops to tiled loops on buffers (the CPU has no workgroup memory, so
  // the tiles go to ordinary memory), tosa down to linalg on tensors. Front
  // ends also apply arith/math ops to whole tensors (a scale, a dtype cast),
  // which one-shot bufferization cannot handle: they become linalg.generics
  // too.
  if (options.decompose) {
    pm.addPass(createAttnDecomposePass());
  } else {
    AttnTilePassOptions tileOptions;
    tileOptions.blockQ = options.blockQ;
    tileOptions.blockKV = options.blockKV;
    tileOptions.valueBlocks = options.valueBlocks;
    tileOptions.smemBudget = options.smemBudget;
    tileOptions.target = options.tileTarget;
    tileOptions.memorySpace = "default";
    pm.addPass(createAttnTilePass(tileOptions));
    pm.addPass(createAttnLowerTilesPass());
  }
  // Front ends emit tosa.cast between i1 and float (TensorFlow's masks),
  // which the TOSA profiles leave out but tosa-to-linalg lowers.
  tosa::TosaValidationOptions validation;
  validation.allowInvalidOpDatatypeCombinations = true;
  tosa::addTosaToLinalgPasses(pm, TosaToLinalgOptions(),
                              TosaToLinalgNamedOptions(), validation);
  // tosa-to-linalg leaves tosa.const and the data-movement ops (reshape,
  // slice, pad, concat) to these two.
  pm.addPass(createTosaToArithPass());
  pm.addPass(createTosaToTensorPass());
  pm.addPass(createAttnDecomposeAggregatesPass());
  pm.addPass(createConvertElementwiseToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  // The CPU runs the parallel loops of the tiled form one after another.
  pm.addPass(createForallToForLoopPass());

  // Tensors to buffers; functions take and return memrefs with identity
  // layouts so that C callers and mlir-runner can pass plain buffers.
  bufferization::OneShotBufferizePassOptions bufferizeOptions;
  bufferizeOptions.bufferizeFunctionBoundaries = true;
  // The tile form carries its register tiles (softmax state, accumulator)
  // through the key/value loop; each step computes new ones.
  bufferizeOptions.allowReturnAllocsFromLoops = true;
  bufferizeOptions.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferizeOptions));
  bufferization::buildBufferDeallocationPipeline(pm);
  // Deallocation clones buffers that a function returns without owning them
  // (a constant, an argument); clone has no LLVM lowering of its own.
  pm.addPass(createConvertBufferizationToMemRefPass());

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
  // What has no LLVM intrinsic (erf, cbrt... in a score modification)
  // calls libm, which the JIT resolves in the process.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void attn::buildAttnToLLVMPipeline(OpPassManager &pm,
                                   const AttnToLLVMPipelineOptions &options) {
  // Nested modules first, each on its own (attn-nested-modules says why).
  AttnNestedModulesPassOptions nested;
  nested.pipeline.emplace_back(ModuleOp::getOperationName());
  buildAttnToLLVMModulePipeline(nested.pipeline.back(), options);
  pm.addPass(createAttnNestedModulesPass(nested));
  buildAttnToLLVMModulePipeline(pm, options);
}

void attn::buildAttnToLLVMPipeline(OpPassManager &pm) {
  buildAttnToLLVMPipeline(pm, AttnToLLVMPipelineOptions());
}

void attn::buildAttnToPTXPipeline(OpPassManager &pm,
                                  const AttnToPTXPipelineOptions &options) {
  AttnToGPUPassOptions kernelOptions;
  kernelOptions.blockKV = options.blockKV;
  kernelOptions.warps = options.warps;
  kernelOptions.mTiles = options.mTiles;
  kernelOptions.report = options.report;
  kernelOptions.chip = options.chip;
  kernelOptions.persistent = options.persistent;
  kernelOptions.deterministic = options.deterministic;
  kernelOptions.orderedDq = options.orderedDq;
  kernelOptions.tf32 = options.tf32;
  pm.addPass(createAttnToGPUPass(kernelOptions));

  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = "+ptx80";
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));

  // The device half of upstream's gpu-lower-to-nvvm-pipeline; its host half
  // is not wanted: the runtime launches the kernels.
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createSCFToControlFlowPass());
  device.addPass(memref::createExpandStridedMetadataPass());
  device.addPass(createConvertGpuOpsToNVVMOps());
  device.addPass(createAttnGridConstantsPass());
  // nvvm ops that are written as inline PTX (wgmma).
  device.addPass(createConvertNVVMToLLVMPass());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());

  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

/// Registers a pipeline of passes that run on builtin.module, as
/// PassPipelineRegistration does, but refuses a pass manager anchored on
/// another op (`func.func(attn-to-llvm)`) with an error: adding a module pass
/// to it would abort.
template <typename Options>
static void registerModulePipeline(StringRef arg, StringRef description,
                                   void (*builder)(OpPassManager &,
                                                   const Options &)) {
  std::string name = arg.str();
  registerPassPipeline(
      arg, description,
      [name, builder](OpPassManager &pm, StringRef optionsStr,
                      function_ref<LogicalResult(const Twine &)> errorHandler)
          -> LogicalResult {
        StringRef anchor = pm.getOpAnchorName();
        if (anchor != ModuleOp::getOperationName() &&
            anchor != OpPassManager::getAnyOpAnchorName())
          return errorHandler("the '" + name +
                              "' pipeline runs on 'builtin.module', not "
                              "nested in '" +
                              anchor + "'");
        Options options;
        if (failed(options.parseFromString(optionsStr)))
          return failure();
        builder(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(Options());
      });
}

void attn::registerAttnPipelines() {
  registerModulePipeline<AttnToPTXPipelineOptions>(
      "attn-to-ptx",
      "Emit tensor-core kernels for the attn ops and serialise them as PTX "
      "(gpu.binary); the module's attn.manifest describes them",
      buildAttnToPTXPipeline);
  registerModulePipeline<AttnToLLVMPipelineOptions>(
      "attn-to-llvm",
      "Lower attn ops (through attn-tile) and the linalg/tosa around them to "
      "LLVM-dialect IR for the CPU (mlir-runner)",
      buildAttnToLLVMPipeline);
}
