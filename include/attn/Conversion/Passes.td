//===- Passes.td - passes that leave the attn dialect ------*- tablegen -*-===//

#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnToGPUPass : Pass<"attn-to-gpu", "ModuleOp"> {
  let summary = "Emit tensor-core GPU kernels for the attn ops of a module";
  let description = [{
    For every `attn.attention`, `attn.attention_partial` and `attn.combine`
    op, emits the kernel that computes it (forward, split-KV partial and
    combine) as a `gpu.func` in `gpu.module @attn_kernels`, deduplicated by
    specialisation (element type, head dims, causal kind). Each op gets an
    `attn.kernel` attribute naming its kernel, and the module gets
    `attn.manifest`, the manifest lines of docs/KernelABI.md that the runtime
    reads. Ops the kernels do not cover (f32 operands, a mask operand, head
    dims that are not multiples of 16) are errors that say so.

    The kernels use ldmatrix + mma.sync.m16n8k16 (f32 accumulate), cp.async
    double-buffered K/V tiles in shared memory, and ex2.approx with log2(e)
    folded into the scale; they assemble for sm_80 and later.
  }];
  let dependentDialects = ["arith::ArithDialect", "gpu::GPUDialect",
                           "LLVM::LLVMDialect", "memref::MemRefDialect",
                           "NVVM::NVVMDialect", "scf::SCFDialect",
                           "vector::VectorDialect"];
  let options = [
    Option<"blockKV", "block-kv", "int64_t", /*default=*/"0",
           "Keys per K/V tile, a multiple of 16; 0 picks 32 for forward "
           "kernels with two m-tiles and D > 64 (register budget), else 64">,
    Option<"warps", "warps", "int64_t", /*default=*/"4",
           "Warps per CTA">,
    Option<"mTiles", "m-tiles", "int64_t", /*default=*/"2",
           "16-row MMA tiles per warp in the forward kernel (decode uses 1: "
           "its rows are the few query heads of one KV head)">
  ];
  let statistics = [
    Statistic<"numKernels", "num-kernels", "Number of kernels emitted">
  ];
}

#endif // ATTN_CONVERSION_PASSES_TD
