//===- Passes.td - passes that leave the attn dialect ------*- tablegen -*-===//

#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnTilePass : Pass<"attn-tile"> {
  let summary = "Lower attn ops to tiled online-softmax loops (FlashAttention-2)";
  let description = [{
    Rewrites every attn op into explicit tiled loops on buffers, the form
    that both the GPU lowering and the CPU path consume. Tensor operands are
    read through `bufferization.to_buffer ... read_only`; results are fresh
    `memref.alloc`s handed back with `bufferization.to_tensor ... restrict`,
    so that one-shot-bufferize still runs on what surrounds the ops.

    - `attn.attention`: `scf.forall` over (batch, query head, query tile)
      around an `scf.for` over key/value tiles. The Q, K and V tiles are
      copied into buffers in `memory-space` (GPU workgroup memory by
      default). The running max m, running sum l and the unnormalised f32
      accumulator are carried from one key/value tile to the next in
      buffers allocated once per query tile; the score tile S/P is one
      `block-q x block-kv` f32 buffer. Each step rescales by
      exp(m_old - m_new); O = acc / l once after the loop and
      LSE = m + log l. Key/value tiles that no query of the tile can see
      (causal diagonal, sliding window) are outside the loop bounds; only
      tiles that cross a boundary (or the ragged end) evaluate the mask.
    - `attn.attention_partial`: `scf.forall` over (split, batch, key/value
      head, row tile), where a row tile packs the `Hq / Hkv` query heads of
      one key/value head (times Sq) so that they share the K/V tiles; the
      key loop is clipped to the split's chunk of `ceil(Sk / num_splits)`
      keys. An empty or fully masked split writes O = 0 and LSE = -inf.
    - `attn.combine`: `scf.forall` over (batch, head, query) merging the
      splits by their LSE.
    - `attn.attention_grad`: an `scf.forall` over query rows computing
      D = rowsum(dO * O); an `scf.forall` over (batch, key/value head,
      key/value tile) whose loops over the query heads of the group and
      the query tiles recompute S and P = exp(S - LSE) and accumulate the
      tile's dK and dV on chip; and, with `deterministic` (the default), an
      `scf.forall` over (batch, head, query tile) that recomputes P and dS
      for dQ, so every sum has a fixed order. Without it, the second loop
      nest adds dQ into an f32 buffer with `memref.atomic_rmw`.

    No buffer of `Sq x Sk` elements exists in the output.

    `block-q` and `block-kv` of 0 pick the tile sizes from the head dim,
    the element type and `smem-budget`, the bytes of workgroup memory the
    Q/K/V (and, for gradients, dO) tiles of one loop nest may take; the
    default query tile is also shrunk to the query rows of a static shape.
    Explicit sizes that exceed the budget are an error. `report` attaches a
    remark to every op with the chosen tile sizes, the workgroup memory
    they need and, for static shapes, the HBM bytes and matmul FLOPs of the
    tiling next to those of standard attention, which materialises S and P
    (in the element type) in HBM.

    `memory-space` is the memory space attribute of the tile buffers, in
    MLIR syntax (`#gpu.address_space<workgroup>`, `3`); `default` (or an
    empty string) uses the default memory space, which the CPU pipeline
    does.

    Example: `attn-opt --attn-tile="block-q=64 block-kv=32 report" in.mlir`.
  }];
  let options = [
    Option<"blockQ", "block-q", "int64_t", /*default=*/"0",
           "Query rows per tile (0: chosen from the head dim and smem-budget)">,
    Option<"blockKV", "block-kv", "int64_t", /*default=*/"0",
           "Keys per tile (0: chosen from the head dim and smem-budget)">,
    Option<"smemBudget", "smem-budget", "int64_t", /*default=*/"49152",
           "Bytes of workgroup memory the tiles of one loop nest may use">,
    Option<"memorySpace", "memory-space", "std::string",
           /*default=*/"\"#gpu.address_space<workgroup>\"",
           "Memory space of the Q/K/V/dO tile buffers (an attribute, or "
           "'default')">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark per op with the tiling and its HBM traffic and "
           "FLOPs next to standard attention's">,
    Option<"deterministic", "deterministic", "bool", /*default=*/"true",
           "Compute dQ in its own loop nest (fixed summation order) instead "
           "of with atomic adds">,
  ];
  let dependentDialects = [
    "arith::ArithDialect", "bufferization::BufferizationDialect",
    "gpu::GPUDialect", "linalg::LinalgDialect", "math::MathDialect",
    "memref::MemRefDialect", "scf::SCFDialect"
  ];
  let statistics = [
    Statistic<"numTiled", "num-tiled", "Number of attn ops lowered to tiled loops">,
    Statistic<"maxBlockQ", "block-q", "Largest query tile chosen">,
    Statistic<"maxBlockKV", "block-kv", "Largest key/value tile chosen">,
    Statistic<"maxWorkgroupBytes", "workgroup-bytes",
              "Largest workgroup memory footprint of one loop nest, in bytes">
  ];
}

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
    Option<"warps", "warps", "int64_t", /*default=*/"0",
           "Warps per CTA; 0 picks 8 for causal forward kernels with D > 64 "
           "and no mask operand, else 4">,
    Option<"mTiles", "m-tiles", "int64_t", /*default=*/"0",
           "16-row MMA tiles per warp in forward kernels; 0 picks 1 for "
           "causal kernels with D > 64, else 2 (decode, and forward with a "
           "mask operand, always use 1)">
  ];
  let statistics = [
    Statistic<"numKernels", "num-kernels", "Number of kernels emitted">
  ];
}

#endif // ATTN_CONVERSION_PASSES_TD
