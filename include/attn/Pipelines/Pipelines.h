//===- Pipelines.h - attn end-to-end pipelines ------------------*- C++ -*-===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace attn {

/// Options of `attn-to-ptx`.
struct AttnToPTXPipelineOptions
    : public PassPipelineOptions<AttnToPTXPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target GPU: sm_80, sm_90 or sm_90a"),
      llvm::cl::init("sm_90a")};
  PassOptions::Option<int64_t> blockKV{
      *this, "block-kv",
      llvm::cl::desc("Keys per K/V tile, a multiple of 16 up to 1024 (0: "
                     "chosen from the head dim)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> warps{
      *this, "warps",
      llvm::cl::desc("Warps per CTA, at most 8 (0: chosen per kernel)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> mTiles{
      *this, "m-tiles",
      llvm::cl::desc("16-row MMA tiles per warp, forward kernels, 1 or 2 (0: "
                     "chosen per kernel)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> report{
      *this, "report",
      llvm::cl::desc("Print attn-tile's report (schedule, shared memory, HBM "
                     "bytes, FLOPs) for the kernel of every op"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> persistent{
      *this, "persistent",
      llvm::cl::desc("sm_90a: persistent warp-specialised forward kernels "
                     "(off by default: measured slower, docs/GPU.md)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> deterministic{
      *this, "deterministic",
      llvm::cl::desc("Gradient kernels with a fixed order of every sum "
                     "(default); false: sm_90a's atomic dQ mode"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> orderedDq{
      *this, "ordered-dq",
      llvm::cl::desc("With deterministic, sm_90a: the dK/dV kernel adds dQ "
                     "in a fixed order (manifest dq=ordered)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> tf32{
      *this, "tf32",
      llvm::cl::desc("f32 operands: one TF32 product per tensor-core step "
                     "(manifest f32=tf32) instead of 3xTF32"),
      llvm::cl::init(false)};
};

/// attn ops to tensor-core kernels in `gpu.module @attn_kernels`, lowered to
/// NVVM and serialised as PTX text in a `gpu.binary`. Host code is left as
/// it is: applications launch the kernels through attn's runtime, guided by
/// the module's `attn.manifest`.
void buildAttnToPTXPipeline(OpPassManager &pm,
                            const AttnToPTXPipelineOptions &options);

/// Options of `attn-to-llvm`.
struct AttnToLLVMPipelineOptions
    : public PassPipelineOptions<AttnToLLVMPipelineOptions> {
  PassOptions::Option<int64_t> blockQ{
      *this, "block-q",
      llvm::cl::desc("attn-tile query tile, at most 1024 (0: automatic)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> blockKV{
      *this, "block-kv",
      llvm::cl::desc("attn-tile key/value tile, at most 1024 (0: automatic)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> valueBlocks{
      *this, "value-blocks",
      llvm::cl::desc("attn-tile: column blocks of V and O of the forward and "
                     "split-KV ops, each a pass over the keys, and of dQ, dK "
                     "and dV of the gradient (0: the cost model's choice)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> smemBudget{
      *this, "smem-budget",
      llvm::cl::desc("attn-tile workgroup memory budget in bytes, 1 to 2^30; "
                     "it picks the automatic tiles as on a GPU"),
      llvm::cl::init(232448)};
  PassOptions::Option<std::string> tileTarget{
      *this, "tile-target",
      llvm::cl::desc("attn-tile's target: the schedule and loop form of the "
                     "sm_80 or the sm_90a kernels (sm_90a rotates the "
                     "forward loop past D = 64), run here on the CPU"),
      llvm::cl::init("sm_80")};
  PassOptions::Option<bool> decompose{
      *this, "decompose",
      llvm::cl::desc("Lower attn ops with attn-decompose (the naive "
                     "reference semantics) instead of attn-tile"),
      llvm::cl::init(false)};
};

/// attn ops together with what front ends emit around them (linalg on
/// tensors, linalg.softmax, tosa, tensor, arith, math, bufferization, func)
/// down to LLVM-dialect IR that mlir-runner executes on the CPU. attn ops
/// go through attn-tile's tiled loops, with the tile buffers in ordinary
/// memory. Nested builtin.modules are lowered too, each on its own, before
/// the module that holds them (attn-nested-modules).
void buildAttnToLLVMPipeline(OpPassManager &pm,
                             const AttnToLLVMPipelineOptions &options);
void buildAttnToLLVMPipeline(OpPassManager &pm);

/// Registers the attn pipelines with the global pass registry.
void registerAttnPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
