//===- Pipelines.h - attn end-to-end pipelines ------------------*- C++ -*-===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

namespace mlir {
class OpPassManager;
namespace attn {

/// attn ops together with what front ends emit around them (linalg on
/// tensors, linalg.softmax, tosa, tensor, arith, math, bufferization, func)
/// down to LLVM-dialect IR that mlir-runner executes on the CPU.
void buildAttnToLLVMPipeline(OpPassManager &pm);

/// Registers the attn pipelines with the global pass registry.
void registerAttnPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
