//===- Passes.td - passes that leave the attn dialect ------*- tablegen -*-===//

#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnTilePass : Pass<"attn-tile"> {
  let summary = "Lower attn ops to tiled online-softmax loops (FlashAttention-2)";
  let description = [{
    Writes the FlashAttention algorithm for every attn op, once for every
    target: the tile form (docs/Overview.md). Tensor operands are read
    through `bufferization.to_buffer ... read_only`; results are fresh
    `memref.alloc`s handed back with `bufferization.to_tensor ... restrict`,
    so that one-shot-bufferize still runs on what surrounds the ops. An op
    whose every result is used once, by a
    `bufferization.materialize_in_destination` into a memref, stores into
    those memrefs instead (how attn-to-gpu hands a kernel's outputs over).
    Every loop nest is an `scf.forall` with a `#gpu.block` mapping, the
    grid dimensions a GPU launches it on.

    - `attn.attention`: `scf.forall` over (batch, query head, query tile),
      carrying the op's `#attn.schedule`, around an `scf.for` over the
      key/value tiles that the tile's queries can see (causal diagonal,
      sliding window). The Q tile and a ring of `stages` K and V tiles are
      memory tiles in `memory-space` (GPU workgroup memory by default),
      filled by `attn.tile.load`; tile `t + stages - 1` is loaded while tile
      `t` is used. The scores, the running max m and sum l and the
      unnormalised accumulator are register tiles (tensors) carried by the
      loop and computed by `attn.tile.matmul`, `attn.tile.reduce` and
      `attn.tile.map`: S = Q K^T unscaled, m in log2 units of the scaled
      scores (m_new = max(m, scale log2(e) rowmax S)), P = exp2(scale
      log2(e) S - m_new), rescale by exp2(m - m_new), O = acc (1 / l) once
      after the loop (`attn.tile.store`), LSE = ln(2) (m + log2 l). Only
      tiles that cross the causal diagonal, the window edge or the key end
      evaluate the index masks (every tile, with a mask operand, which is
      read in the score map). Causal query tiles go last first.
    - `attn.attention_partial`: the same loop nest per (split, batch,
      key/value head x row tile), a row tile packing the `Hq / Hkv` query
      heads of one key/value head (times Sq) so that they share the K/V
      tiles; the key loop is clipped to the split's chunk of
      `ceil(Sk / N)` keys, N the partial results' first size. Each K/V tile
      is cut into `key_slices` parts with a softmax state each, merged after
      the loop. An empty or fully masked split writes O = 0 and LSE = -inf.
    - `attn.combine`: `scf.forall` over tiles of output rows (B x Hq x Sq)
      by columns, one online pass over the splits merging them by their
      LSE, the inputs read by maps that load.
    - `attn.attention_grad`: an `scf.forall` over query tiles computing
      D = rowsum(dO * O); an `scf.forall` over (batch, key/value head,
      key/value tile) whose loop streams the Q and dO tiles of the group's
      query heads past the K and V tiles, recomputes S^T and
      P^T = exp(S^T - LSE) and accumulates the tile's dK and dV on chip;
      and, with `deterministic` (the default), an `scf.forall` over
      (batch, head, query tile) that recomputes P and dS for dQ, so every
      sum has a fixed order. Without it, the second nest adds dQ into an
      f32 buffer (a `transpose_lhs` product and an accumulating
      `attn.tile.store`) and a last nest converts it.

    No buffer of `Sq x Sk` elements exists in the output.

    The schedule comes from one cost model (TileSchedule.cpp), the defaults
    of the GPU kernels: `block-q`, `block-kv`, `stages` and `warps` of 0
    choose; explicit values win. `smem-budget` is the shared memory the
    tiles of one loop nest may take (227 KiB, a CTA's limit on sm_90, by
    default; the GPU kernels take their chip's, docs/TileToGPU.md);
    automatic tiles shrink to fit it (keys per tile, then stages, a
    forward's second m-tile and warps), explicit tiles that exceed it are
    an error. The options are checked as the pass
    starts: `block-q` and `block-kv` at most 1024, `stages` at most 16,
    `warps` at most 32, `smem-budget` from 1 to 2^30 bytes,
    `value-blocks` at most 64 (docs/Limits.md). `value-blocks` splits the
    columns of V and O of the forward and split-KV ops into blocks, each a
    pass of its own over the keys (S and the softmax recomputed): what a GPU
    kernel does past Dv = 256, where O's accumulator would not fit in
    registers. On `attn.attention_grad` it splits the columns of dK and dV
    (the dK/dV nest) and of dQ (the dQ nest) into blocks of whole 16-column
    steps, each a pass of its own that recomputes S and dP (the
    deterministic mode only): what the GPU kernels do past D = 256. `report` attaches a remark to every
    op with its schedule, the shared memory it takes and, for static
    shapes, the HBM bytes and matmul FLOPs of the tiling next to those of
    standard attention, which materialises S and P (in the element type) in
    HBM.

    `memory-space` is the memory space attribute of the memory tiles, in
    MLIR syntax (`#gpu.address_space<workgroup>`, `3`); `default` (or an
    empty string) uses the default memory space, which the CPU pipeline
    does.

    Example: `attn-opt --attn-tile="block-q=64 block-kv=32 report" in.mlir`.
  }];
  let options = [
    Option<"blockQ", "block-q", "int64_t", /*default=*/"0",
           "Query rows per tile, at most 1024 (0: the cost model's "
           "choice)">,
    Option<"blockKV", "block-kv", "int64_t", /*default=*/"0",
           "Keys per tile, at most 1024 (0: the cost model's choice)">,
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "Key/value tiles in flight, at most 16 (0: the cost model's "
           "choice, 3)">,
    Option<"warps", "warps", "int64_t", /*default=*/"0",
           "Warps of one CTA on a GPU, at most 32 (0: the cost model's "
           "choice)">,
    Option<"smemBudget", "smem-budget", "int64_t", /*default=*/"232448",
           "Bytes of workgroup memory the tiles of one loop nest may use, "
           "1 to 2^30">,
    Option<"valueBlocks", "value-blocks", "int64_t", /*default=*/"0",
           "Forward and split-KV: column blocks of V and O, each computed "
           "with its own pass over the keys, at most 64 and Dv / 8; "
           "gradients: column blocks of dQ, dK and dV, each recomputing S "
           "and dP (0: the cost model's choice)">,
    Option<"memorySpace", "memory-space", "std::string",
           /*default=*/"\"#gpu.address_space<workgroup>\"",
           "Memory space of the Q/K/V/dO tile buffers (an attribute, or "
           "'default')">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark per op with the tiling and its HBM traffic and "
           "FLOPs next to standard attention's">,
    Option<"sparsity", "sparsity", "double", /*default=*/"0.0",
           "With report: the fraction of the key blocks (of the query "
           "blocks, for the backward's dK/dV) that an op's block mask "
           "leaves out, in [0, 1), for its HBM traffic and FLOPs (the lists "
           "are device data)">,
    Option<"deterministic", "deterministic", "bool", /*default=*/"true",
           "Compute dQ in its own loop nest (fixed summation order) instead "
           "of with atomic adds">,
    Option<"orderedDq", "ordered-dq", "bool", /*default=*/"false",
           "With deterministic: add dQ to an f32 accumulator in the dK/dV "
           "nest as the atomic mode does, the key tiles taking turns in a "
           "fixed order, instead of in a loop nest of its own">,
    Option<"target", "target", "std::string", /*default=*/"\"sm_80\"",
           "The GPU mapping whose schedule and shared-memory layout the cost "
           "model uses: sm_80 (warps, rows padded by 16 bytes) or sm_90a "
           "(warpgroups, swizzled tiles, TMA barriers)">,
  ];
  let dependentDialects = [
    "arith::ArithDialect", "bufferization::BufferizationDialect",
    "gpu::GPUDialect", "linalg::LinalgDialect", "math::MathDialect",
    "memref::MemRefDialect", "scf::SCFDialect", "tensor::TensorDialect"
  ];
  let statistics = [
    Statistic<"numTiled", "num-tiled", "Number of attn ops lowered to tiled loops">,
    Statistic<"maxBlockQ", "block-q", "Largest query tile chosen">,
    Statistic<"maxBlockKV", "block-kv", "Largest key/value tile chosen">,
    Statistic<"maxWorkgroupBytes", "workgroup-bytes",
              "Largest workgroup memory footprint of one loop nest, in bytes">
  ];
}

def AttnLowerTilesPass : Pass<"attn-lower-tiles"> {
  let summary = "Lower attn-tile's tile ops to linalg on tensors and loops (CPU)";
  let description = [{
    The CPU lowering of the tile form: `attn.tile.matmul`, `attn.tile.map`
    and `attn.tile.reduce` become `linalg.generic`s on tensors (memory tiles
    read through `bufferization.to_tensor ... restrict`), `attn.tile.load`
    and `attn.tile.store` loops over the rows with the row region inlined.
    `attn-to-llvm` runs it after `attn-tile`; one-shot-bufferize then turns
    the register tiles into buffers.
  }];
  let dependentDialects = [
    "arith::ArithDialect", "bufferization::BufferizationDialect",
    "linalg::LinalgDialect", "memref::MemRefDialect", "scf::SCFDialect",
    "tensor::TensorDialect"
  ];
}

def AttnToGPUPass : Pass<"attn-to-gpu", "ModuleOp"> {
  let summary = "Emit tensor-core GPU kernels for the attn ops of a module";
  let description = [{
    For every `attn.attention`, `attn.attention_partial` and `attn.combine`
    op, emits the kernel that computes it (forward, split-KV partial and
    combine), and for every `attn.attention_grad` three (D, dK/dV, dQ, one
    per loop nest of its tile form), as `gpu.func`s in
    `gpu.module @attn_kernels`, deduplicated by specialisation (element
    type, head dims, causal kind, mask kind). Each op gets an `attn.kernel`
    attribute naming its kernel (a gradient op: its three, in launch
    order), and the module gets `attn.manifest`, the manifest lines of
    docs/KernelABI.md that the runtime reads. Ops the kernels do not cover
    (f32 operands, a mask operand on decode, head dims that are not
    multiples of 16) are errors that say so. The generated names are never changed to make
    room: a symbol `@attn_kernels` that is not a gpu.module, or one in it
    that takes a kernel's name without being that kernel (a gpu.func with
    the same `attn.manifest` line, from an earlier run, is reused), is an
    error; so is an `attn.manifest` that is not an array of strings.

    Each kernel is attn-tile's tile form of the op, rebuilt on the kernel's
    parameters, mapped onto one CTA (docs/TileToGPU.md): ldmatrix +
    mma.sync.m16n8k16 (f32 accumulate), cp.async into a ring of K/V tiles
    in shared memory, ex2.approx with log2(e) folded into the scale; they
    assemble for sm_80 and later. With `chip=sm_90a` the forward kernels
    are mapped onto warpgroups instead: wgmma for both products (Q and K
    from shared-memory descriptors, P from registers), tiles copied by TMA
    into 128-byte-swizzled shared memory; the split-KV partial kernels
    copy K and V by TMA too and keep mma.sync (their 16 rows fill no
    warpgroup). Their schedule (warps, query rows, keys
    per tile, stages, shared memory) is the one attn-tile's cost model
    picks for the op; the options are requests to it, and `report` prints
    attn-tile's account of it per op.
  }];
  let dependentDialects = ["arith::ArithDialect",
                           "bufferization::BufferizationDialect",
                           "func::FuncDialect", "gpu::GPUDialect",
                           "LLVM::LLVMDialect", "math::MathDialect",
                           "memref::MemRefDialect", "NVVM::NVVMDialect",
                           "scf::SCFDialect", "tensor::TensorDialect",
                           "vector::VectorDialect"];
  let options = [
    Option<"blockKV", "block-kv", "int64_t", /*default=*/"0",
           "Keys per K/V tile, a multiple of 16 up to 1024; 0 picks 32 for "
           "forward kernels with two m-tiles and D > 64 (register budget), "
           "else 64">,
    Option<"warps", "warps", "int64_t", /*default=*/"0",
           "Warps per CTA, at most 8; 0 picks 8 for causal forward kernels "
           "with D > 64 and no mask operand, else 4">,
    Option<"mTiles", "m-tiles", "int64_t", /*default=*/"0",
           "16-row MMA tiles per warp in forward kernels, 1 or 2; 0 picks 1 "
           "for causal kernels with D > 64, else 2 (decode, and forward with "
           "a mask operand, always use 1)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit attn-tile's report (schedule, shared memory, HBM bytes and "
           "FLOPs) for the kernel of every op, as a remark">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "The GPU the kernels are for: sm_80, sm_86, sm_87, sm_89, sm_90 "
           "or sm_90a (PTX 8.0); sm_90a maps forward and backward kernels "
           "onto wgmma warpgroups and copies by TMA (all but paged ones)">,
    Option<"persistent", "persistent", "bool", /*default=*/"false",
           "sm_90a: make the warp-specialised forward kernels persistent "
           "(one CTA per SM walks the query tiles grid-stride; manifest "
           "grid=persistent). Off by default: measured slower on an H200 "
           "(docs/GPU.md)">,
    Option<"deterministic", "deterministic", "bool", /*default=*/"true",
           "Gradient kernels: dQ from its own kernel, every sum in a fixed "
           "order (bitwise reproducible); false: sm_90a only, the dK/dV "
           "kernel adds each tile's dQ to an f32 accumulator with atomic "
           "adds (manifest dq=atomic, the runtime's options.atomic_dq)">,
    Option<"orderedDq", "ordered-dq", "bool", /*default=*/"false",
           "With deterministic, on sm_90a: the dK/dV kernel adds dQ to an "
           "f32 accumulator in a fixed order, its CTAs taking turns "
           "(manifest dq=ordered; bitwise reproducible), where the head dim "
           "is a multiple of 32 and there is no block mask; elsewhere dQ "
           "has its own kernel">,
    Option<"tf32", "tf32", "bool", /*default=*/"false",
           "f32 operands: one TF32 product per tensor-core step (10-bit "
           "mantissas; manifest f32=tf32, the runtime's options.allow_tf32) "
           "instead of three (3xTF32), which keep f32's accuracy">
  ];
  let statistics = [
    Statistic<"numKernels", "num-kernels", "Number of kernels emitted">
  ];
}

def AttnGridConstantsPass : Pass<"attn-grid-constants", "gpu::GPUModuleOp"> {
  let summary = "Pass the CUDA tensor maps of attn's kernels by value";
  let description = [{
    Runs after `convert-gpu-to-nvvm`, which drops argument attributes of
    a `gpu.func` that the NVVM target reads. On every `llvm.func` with
    `attn.grid_constants` (the positions of the kernel's tensor maps,
    `!llvm.ptr` arguments, among the llvm.func's arguments, where each
    memref is its descriptor's 3 + 2 x rank fields), marks those arguments
    `llvm.byval = !llvm.array<16 x i64>`, `llvm.align = 64` and
    `nvvm.grid_constant`: in PTX a 128-byte `.param` whose address the
    kernel hands to `cp.async.bulk.tensor`, as CUDA C++ does with a
    `const __grid_constant__ CUtensorMap`. Removes the attribute.
  }];
  let dependentDialects = ["LLVM::LLVMDialect", "NVVM::NVVMDialect"];
}

def AttnNestedModulesPass : Pass<"attn-nested-modules", "ModuleOp"> {
  let summary = "Run a pipeline on every builtin.module nested in a module";
  let description = [{
    Runs `pipeline`, `builtin.module` pipelines in order (usually one), on
    each `builtin.module` nested in the module the pass runs on, the
    innermost first, each on its own. `attn-to-llvm` starts with it (then runs on the outer module):
    module passes such as one-shot bufferization with function boundaries,
    and the function passes nested under a module, see only the functions
    of the module they run on, so a pipeline run on the outer module alone
    leaves the functions of nested modules as they were.

    Example: `attn-opt --pass-pipeline="builtin.module(attn-nested-modules{pipeline=builtin.module(canonicalize)})"`.
  }];
  let options = [
    ListOption<"pipeline", "pipeline", "OpPassManager",
               "The builtin.module pipelines to run, in order, on each "
               "nested module">
  ];
}

#endif // ATTN_CONVERSION_PASSES_TD
