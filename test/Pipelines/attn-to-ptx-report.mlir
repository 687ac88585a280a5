// RUN: attn-opt %s -split-input-file --attn-to-ptx="chip=sm_80 report" -o %t 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: attn-opt %s -split-input-file --attn-tile=report -o /dev/null 2>&1 | FileCheck %s --check-prefix=TILE
// RUN: attn-opt %s -split-input-file --attn-to-gpu | FileCheck %s --check-prefix=MANIFEST

// attn-to-ptx's report is attn-tile's account of the schedule the kernel
// runs: the same block-q, block-kv, stages, warps and shared memory as the
// manifest line, and as attn-tile's own report for the op. D = 128 bf16,
// non-causal: 4 warps x two 16-row MMA tiles, 32-key tiles, three stages,
// 128 x 136 x 2 + 3 x 32 x (136 + 136) x 2 = 87040 bytes.

// REPORT: remark: attn-tile: block-q = 128, block-kv = 32, 3 stages, 4 warps, 87040 bytes of tiles in memory space #gpu.address_space<workgroup>; HBM traffic 2214592512 bytes tiled vs 4378853376 standard (0.51x); matmul FLOPs 274877906944 tiled vs 274877906944 standard (1.00x); kernel attn_fwd_bf16_d128_dv128_none
// TILE: remark: attn-tile: block-q = 128, block-kv = 32, 3 stages, 4 warps, 87040 bytes of tiles in memory space #gpu.address_space<workgroup>; HBM traffic 2214592512 bytes tiled vs 4378853376 standard (0.51x); matmul FLOPs 274877906944 tiled vs 274877906944 standard (1.00x)
// MANIFEST: kernel attn_fwd_bf16_d128_dv128_none kind=forward dtype=bf16 head_dim=128 value_dim=128 causal=none block_q=128 block_kv=32 threads=128 smem=87040
func.func @prefill(%q: tensor<1x32x4096x128xbf16>, %k: tensor<1x8x4096x128xbf16>, %v: tensor<1x8x4096x128xbf16>) -> tensor<1x32x4096x128xbf16> {
  %o = attn.attention %q, %k, %v : tensor<1x32x4096x128xbf16>, tensor<1x8x4096x128xbf16>, tensor<1x8x4096x128xbf16> -> tensor<1x32x4096x128xbf16>
  return %o : tensor<1x32x4096x128xbf16>
}

// -----

// Causal at D = 128: 8 warps x one MMA tile with 64-key tiles.
// REPORT: remark: attn-tile: block-q = 128, block-kv = 64, 3 stages, 8 warps, 139264 bytes of tiles {{.*}}; kernel attn_fwd_f16_d128_dv128_top_left
// TILE: remark: attn-tile: block-q = 128, block-kv = 64, 3 stages, 8 warps, 139264 bytes of tiles
// MANIFEST: kernel attn_fwd_f16_d128_dv128_top_left {{.*}} block_q=128 block_kv=64 threads=256 smem=139264
func.func @causal(%q: tensor<1x32x4096x128xf16>, %k: tensor<1x8x4096x128xf16>, %v: tensor<1x8x4096x128xf16>) -> tensor<1x32x4096x128xf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<1x32x4096x128xf16>, tensor<1x8x4096x128xf16>, tensor<1x8x4096x128xf16> -> tensor<1x32x4096x128xf16>
  return %o : tensor<1x32x4096x128xf16>
}

// -----

// Decode: the 4 query heads of a key/value head in one 16-row tile, every
// key/value tile split between the 4 warps.
// REPORT: remark: attn-tile: block-q = 16, block-kv = 64, 3 stages, 4 warps, 4 key slices, 102400 bytes of tiles {{.*}}, 16 splits; {{.*}}; kernel attn_dec_bf16_d128_dv128_none
// TILE: remark: attn-tile: block-q = 16, block-kv = 64, 3 stages, 4 warps, 4 key slices, 102400 bytes of tiles {{.*}}, 16 splits;
// MANIFEST: kernel attn_dec_bf16_d128_dv128_none {{.*}} rows=16 block_kv=64 threads=128 smem=102400
func.func @decode(%q: tensor<4x32x1x128xbf16>, %k: tensor<4x8x8192x128xbf16>, %v: tensor<4x8x8192x128xbf16>) -> tensor<16x4x32x1x128xf32> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 16 : i64} : tensor<4x32x1x128xbf16>, tensor<4x8x8192x128xbf16>, tensor<4x8x8192x128xbf16> -> tensor<16x4x32x1x128xf32>, tensor<16x4x32x1xf32>
  return %po : tensor<16x4x32x1x128xf32>
}
