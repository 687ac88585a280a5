// RUN: attn-opt %s -split-input-file -attn-to-gpu -verify-diagnostics | FileCheck %s
// RUN: attn-opt %s -split-input-file -attn-to-gpu="chip=sm_90a" -verify-diagnostics | FileCheck %s --check-prefix=SM90A
// RUN: not attn-opt %s -split-input-file -attn-to-gpu="block-kv=32" 2>&1 | FileCheck %s --check-prefix=NARROW

// attn.attention_grad becomes three kernels, one per loop nest of its tile
// form, in launch order: the row statistics (no shared memory), dK/dV per
// key/value tile (grid x walks the key tiles, y the key/value heads),
// dQ per query tile. They take the same parameters; the row statistics
// (LSE log2(e) and D, a 16-byte record per query row) live in `row_stats`.
// Both tiled nests stream their operands through two cp.async stages and
// multiply on mma.sync; the dQ is deterministic (no atomics). On sm_90a
// the products are wgmma on warpgroups from swizzled, unpadded tiles
// (smaller: 51200 bytes), still copied by cp.async (no TMA so far).

// CHECK: module attributes {attn.manifest = [
// CHECK-SAME: "kernel attn_bwd_dot_f16_d64_dv64_top_left kind=backward_dot dtype=f16 head_dim=64 value_dim=64 causal=top_left block_q=64 block_kv=64 threads=128 smem=0 params=q:memref4,k:memref4,v:memref4,o:memref4,dout:memref4,lse:memref3,dq:memref4,dk:memref4,dv:memref4,row_stats:memref4,scale_log2:f32,window:i64"
// CHECK-SAME: "kernel attn_bwd_kv_f16_d64_dv64_top_left kind=backward_kv dtype=f16 head_dim=64 value_dim=64 causal=top_left block_q=64 block_kv=64 threads=128 smem=59392 params=
// CHECK-SAME: "kernel attn_bwd_q_f16_d64_dv64_top_left kind=backward_q dtype=f16 head_dim=64 value_dim=64 causal=top_left block_q=64 block_kv=64 threads=128 smem=55296 params=
// CHECK-LABEL: func @gradient
// CHECK: attn.attention_grad {{.*}}attn.kernel = [@attn_kernels::@attn_bwd_dot_f16_d64_dv64_top_left, @attn_kernels::@attn_bwd_kv_f16_d64_dv64_top_left, @attn_kernels::@attn_bwd_q_f16_d64_dv64_top_left]
// CHECK: gpu.func @attn_bwd_dot_f16_d64_dv64_top_left(
// CHECK-SAME: %{{.*}}: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, %{{.*}}: f32, %{{.*}}: i64) kernel
// CHECK-NOT: gpu.dynamic_shared_memory
// CHECK-NOT: nvvm.mma.sync
// CHECK: gpu.return
// CHECK: gpu.func @attn_bwd_kv_f16_d64_dv64_top_left(
// CHECK: gpu.dynamic_shared_memory
// CHECK: nvvm.cp.async.shared.global
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group
// CHECK: nvvm.mma.sync
// CHECK: gpu.return
// CHECK: gpu.func @attn_bwd_q_f16_d64_dv64_top_left(
// CHECK: nvvm.mma.sync
// CHECK-NOT: llvm.atomicrmw
// CHECK: gpu.return
// On sm_90a the dK/dV and dQ kernels take tensor maps and copy by TMA on
// mbarriers; the dot kernel copies nothing.
// SM90A: kernel attn_bwd_dot_f16_d64_dv64_top_left kind=backward_dot {{[^"]*}} smem=0 params={{[^"]*}},window:i64"
// SM90A-SAME: kernel attn_bwd_kv_f16_d64_dv64_top_left kind=backward_kv {{.*}} threads=128 smem=51232 tma=q:64x64:128,k:64x64:128,v:64x64:128,dout:64x64:128,row_stats:64x4:0 params=
// SM90A: gpu.func @attn_bwd_kv_f16_d64_dv64_top_left({{.*}}: !llvm.ptr, {{.*}}: !llvm.ptr, {{.*}}: !llvm.ptr, {{.*}}: !llvm.ptr, {{.*}}: !llvm.ptr) kernel
// SM90A-NOT: nvvm.mma.sync
// SM90A-NOT: nvvm.cp.async.shared.global
// SM90A: nvvm.mbarrier.init
// SM90A: nvvm.cp.async.bulk.tensor.shared.cluster.global
// SM90A: llvm.inline_asm has_side_effects {{.*}}mbarrier.try_wait.parity.shared::cta.b64{{.*}}vote.sync.all.pred
// SM90A: nvvm.wgmma.mma_async
// SM90A: llvm.inline_asm {{.*}}wgmma.mma_async
// SM90A: gpu.func @attn_bwd_q_f16_d64_dv64_top_left(
// SM90A-NOT: nvvm.mma.sync
// SM90A-NOT: nvvm.cp.async.shared.global
// SM90A: nvvm.cp.async.bulk.tensor.shared.cluster.global
// SM90A: nvvm.wgmma.mma_async
// SM90A-NOT: llvm.atomicrmw
// SM90A: gpu.return
// NARROW: error: 'attn.attention_grad' op cannot be lowered to a GPU kernel: the backward kernels give every warp one or two 16-row tiles of their rows, keys in this kernel: block-kv must be 64 or 128 and block-q a multiple of 16 up to 128; got 4 warps, block-q = 64, block-kv = 32
func.func @gradient(%q: tensor<1x4x100x64xf16>, %k: tensor<1x2x70x64xf16>, %v: tensor<1x2x70x64xf16>, %o: tensor<1x4x100x64xf16>, %do: tensor<1x4x100x64xf16>, %lse: tensor<1x4x100xf32>) -> (tensor<1x4x100x64xf16>, tensor<1x2x70x64xf16>, tensor<1x2x70x64xf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<top_left>}
      : tensor<1x4x100x64xf16>, tensor<1x2x70x64xf16>, tensor<1x2x70x64xf16>, tensor<1x4x100x64xf16>, tensor<1x4x100x64xf16>, tensor<1x4x100xf32>
      -> tensor<1x4x100x64xf16>, tensor<1x2x70x64xf16>, tensor<1x2x70x64xf16>
  return %dq, %dk, %dv : tensor<1x4x100x64xf16>, tensor<1x2x70x64xf16>, tensor<1x2x70x64xf16>
}

// -----

// A mask operand: the kernels take it after row_stats.
// CHECK: kernel attn_bwd_kv_bf16_d64_dv64_none_boolmask kind=backward_kv dtype=bf16 head_dim=64 value_dim=64 causal=none mask=bool {{.*}} params={{.*}},row_stats:memref4,mask:memref4,scale_log2:f32,window:i64"
// CHECK-LABEL: func @masked
func.func @masked(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x2x64x64xbf16>, %v: tensor<1x2x64x64xbf16>, %o: tensor<1x2x64x64xbf16>, %do: tensor<1x2x64x64xbf16>, %lse: tensor<1x2x64xf32>, %m: tensor<64x64xi1>) -> tensor<1x2x64x64xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mask(%m : tensor<64x64xi1>)
      : tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64xf32>
      -> tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>
  return %dq : tensor<1x2x64x64xbf16>
}

// -----

// Static shapes smaller than a tile keep the kernel's tiles (one kernel
// serves every shape; the CPU's tiling would shrink them to 16).
// CHECK: kernel attn_bwd_kv_f16_d16_dv16_none kind=backward_kv dtype=f16 head_dim=16 value_dim=16 causal=none block_q=64 block_kv=64 threads=128 smem=22528
// CHECK-LABEL: func @small
func.func @small(%q: tensor<2x9x4x16xf16>, %k: tensor<2x5x4x16xf16>, %v: tensor<2x5x4x16xf16>, %o: tensor<2x9x4x16xf16>, %do: tensor<2x9x4x16xf16>, %lse: tensor<2x4x9xf32>) -> tensor<2x9x4x16xf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {layout = #attn.layout<bshd>}
      : tensor<2x9x4x16xf16>, tensor<2x5x4x16xf16>, tensor<2x5x4x16xf16>, tensor<2x9x4x16xf16>, tensor<2x9x4x16xf16>, tensor<2x4x9xf32>
      -> tensor<2x9x4x16xf16>, tensor<2x5x4x16xf16>, tensor<2x5x4x16xf16>
  return %dq : tensor<2x9x4x16xf16>
}

// -----

// f32 gradients: the same three kernels, products on TF32 parts.
// CHECK-LABEL: gpu.func @attn_bwd_dot_f32_d64_dv64_none
// CHECK-LABEL: gpu.func @attn_bwd_kv_f32_d64_dv64_none
// CHECK: nvvm.mma.sync {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 8>
// CHECK-LABEL: gpu.func @attn_bwd_q_f32_d64_dv64_none
// CHECK: nvvm.mma.sync {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 8>
func.func @gradient_f32(%q: tensor<1x2x64x64xf32>, %k: tensor<1x2x64x64xf32>, %v: tensor<1x2x64x64xf32>, %o: tensor<1x2x64x64xf32>, %do: tensor<1x2x64x64xf32>, %lse: tensor<1x2x64xf32>) -> tensor<1x2x64x64xf32> {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64xf32>
      -> tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>
  return %dq : tensor<1x2x64x64xf32>
}

// -----

// On sm_90a past D = 64 each nest has its own schedule: two warpgroups of
// 128 keys (dK/dV) or 128 queries (dQ) against tiles of 64 of the other;
// the dot kernel keeps 4 warps. A static shape smaller than a tile keeps it.
// SM90A: kernel attn_bwd_dot_bf16_d128_dv128_none kind=backward_dot {{[^"]*}} block_q=64 block_kv=64 threads=128 smem=0
// SM90A-SAME: kernel attn_bwd_kv_bf16_d128_dv128_none kind=backward_kv {{[^"]*}} block_q=64 block_kv=128 threads=256 smem=133152
// SM90A-SAME: kernel attn_bwd_q_bf16_d128_dv128_none kind=backward_q {{[^"]*}} block_q=128 block_kv=64 threads=256 smem=131104
// SM90A-LABEL: func @wide
func.func @wide(%q: tensor<1x2x100x128xbf16>, %k: tensor<1x2x70x128xbf16>, %v: tensor<1x2x70x128xbf16>, %o: tensor<1x2x100x128xbf16>, %do: tensor<1x2x100x128xbf16>, %lse: tensor<1x2x100xf32>) -> tensor<1x2x100x128xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x2x100x128xbf16>, tensor<1x2x70x128xbf16>, tensor<1x2x70x128xbf16>, tensor<1x2x100x128xbf16>, tensor<1x2x100x128xbf16>, tensor<1x2x100xf32>
      -> tensor<1x2x100x128xbf16>, tensor<1x2x70x128xbf16>, tensor<1x2x70x128xbf16>
  return %dq : tensor<1x2x100x128xbf16>
}

// -----

// Blocks of a block mask that 128 does not divide keep one warpgroup of 64
// rows in both nests.
// SM90A: kernel attn_bwd_kv_bf16_d128_dv128_none_blocks64x64 kind=backward_kv {{[^"]*}} block_q=64 block_kv=64 threads=128
// SM90A-SAME: kernel attn_bwd_q_bf16_d128_dv128_none_blocks64x64 kind=backward_q {{[^"]*}} block_q=64 block_kv=64 threads=128
// SM90A-LABEL: func @blocks64
func.func @blocks64(%q: tensor<1x2x100x128xbf16>, %k: tensor<1x2x70x128xbf16>, %v: tensor<1x2x70x128xbf16>, %o: tensor<1x2x100x128xbf16>, %do: tensor<1x2x100x128xbf16>, %lse: tensor<1x2x100xf32>, %c: tensor<1x1x2xi32>, %i: tensor<1x1x2x2xi32>) -> tensor<1x2x100x128xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse block_mask(%c, %i : tensor<1x1x2xi32>, tensor<1x1x2x2xi32>) q_block_mask(%c, %i : tensor<1x1x2xi32>, tensor<1x1x2x2xi32>) {block_size = array<i64: 64, 64>}
      : tensor<1x2x100x128xbf16>, tensor<1x2x70x128xbf16>, tensor<1x2x70x128xbf16>, tensor<1x2x100x128xbf16>, tensor<1x2x100x128xbf16>, tensor<1x2x100xf32>
      -> tensor<1x2x100x128xbf16>, tensor<1x2x70x128xbf16>, tensor<1x2x70x128xbf16>
  return %dq : tensor<1x2x100x128xbf16>
}
