// RUN: attn-opt %s -split-input-file --attn-tile=report -o /dev/null 2>&1 | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-tile="report smem-budget=65536" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUDGET64K
// RUN: attn-opt %s -split-input-file --attn-tile="report block-q=32 block-kv=64 deterministic=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FIXED
// RUN: attn-opt %s -split-input-file --attn-tile="report sparsity=0.9" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPARSE

// `report` states the schedule (tile sizes, stages, warps), its workgroup
// memory, and the HBM bytes and matmul FLOPs of the tiled loops next to
// standard attention's (S and P written to and read back from HBM).
// Automatic forward and split-KV sizes are the GPU kernels' schedules; the
// shared memory holds the Q tile and 3 stages of K and V tiles, each row
// padded by 16 bytes, within smem-budget (227 KiB = 232448 bytes by
// default). A smaller budget halves the automatic key/value tile until the
// tiles fit.

// Causal prefill, GQA 32/8, D = 128, f16: causal at D > 64 takes 8 warps x
// one 16-row MMA tile = block-q 128, with 64-key tiles in 3 stages:
// 128 x 136 x 2 + 3 x 64 x (136 + 136) x 2 = 139264 bytes. Query tile t
// sees keys [0, 128 (t + 1)), 2 (t + 1) key tiles, so the tiled loops skip
// the tiles above the diagonal (0.52x the FLOPs, the diagonal tiles in
// full) and read 1056 K/V tiles per head: 32 heads x (4096 x (2 x 128 x 2
// + 4) + 1056 x 64 x 256 x 2) = 1174929408 bytes.
// With 64 KiB, 32-key tiles would still take 87040 bytes: 16-key tiles,
// 34816 + 3 x 16 x 272 x 2 = 60928 bytes.
// Explicit 32 x 64 tiles: 32 x 136 x 2 + 3 x 64 x 272 x 2 = 113152 bytes.
// CHECK: remark: attn-tile: block-q = 128, block-kv = 64, 3 stages, 8 warps, 139264 bytes of tiles in memory space #gpu.address_space<workgroup>; HBM traffic 1174929408 bytes tiled vs 4379377664 standard (0.27x); matmul FLOPs 141733920768 tiled vs 274877906944 standard (0.52x)
// BUDGET64K: remark: attn-tile: block-q = 128, block-kv = 16, 3 stages, 8 warps, 60928 bytes of tiles in memory space #gpu.address_space<workgroup>; HBM traffic 1174929408 bytes tiled
// FIXED: remark: attn-tile: block-q = 32, block-kv = 64, 3 stages, 8 warps, 113152 bytes
func.func @prefill(%q: tensor<1x32x4096x128xf16>, %k: tensor<1x8x4096x128xf16>, %v: tensor<1x8x4096x128xf16>) -> (tensor<1x32x4096x128xf16>, tensor<1x32x4096xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<1x32x4096x128xf16>, tensor<1x8x4096x128xf16>, tensor<1x8x4096x128xf16> -> tensor<1x32x4096x128xf16>, tensor<1x32x4096xf32>
  return %o, %lse : tensor<1x32x4096x128xf16>, tensor<1x32x4096xf32>
}

// -----

// No mask, D = 64: 4 warps x two 16-row MMA tiles = block-q 128, 64-key
// tiles at D <= 64: 128 x 72 x 2 + 3 x 64 x (72 + 72) x 2 = 73728 bytes.
// Q read once, K and V once per query tile: 553648128 = 16 heads x
// (2 x 4096 x 64 x 2 + 32 x 4096 x 128 x 2) bytes, against 2181038080 with
// S and P in HBM. 64 KiB halves the key tile to 32: 18432 + 3 x 32 x 144 x 2
// = 46080 bytes.
// CHECK: remark: attn-tile: block-q = 128, block-kv = 64, 3 stages, 4 warps, 73728 bytes of tiles in memory space #gpu.address_space<workgroup>; HBM traffic 553648128 bytes tiled vs 2181038080 standard (0.25x); matmul FLOPs 68719476736 tiled vs 68719476736 standard (1.00x)
// BUDGET64K: remark: attn-tile: block-q = 128, block-kv = 32, 3 stages, 4 warps, 46080 bytes
// FIXED: remark: attn-tile: block-q = 32, block-kv = 64, 3 stages, 4 warps, 59904 bytes
func.func @plain(%q: tensor<1x16x4096x64xf16>, %k: tensor<1x16x4096x64xf16>, %v: tensor<1x16x4096x64xf16>) -> tensor<1x16x4096x64xf16> {
  %o = attn.attention %q, %k, %v : tensor<1x16x4096x64xf16>, tensor<1x16x4096x64xf16>, tensor<1x16x4096x64xf16> -> tensor<1x16x4096x64xf16>
  return %o : tensor<1x16x4096x64xf16>
}

// -----

// Decode: the 4 query heads of a key/value head share one 16-row tile, and
// the 4 warps each take a quarter of every key/value tile (key slices), so
// K and V are read once per split (4 x 8 x 8192 x 256 x 2 = 134217728 of
// the 135798784 bytes); the 12 padding rows cost FLOPs (4x), not bytes.
// Swizzled, unpadded rows: 16 x 128 x 2 + 3 x 64 x 256 x 2 = 102400 bytes;
// 64 KiB: 32-key tiles, 4096 + 3 x 32 x 256 x 2 = 53248 bytes.
// CHECK: remark: attn-tile: block-q = 16, block-kv = 64, 3 stages, 4 warps, 4 key slices, 102400 bytes of tiles in memory space #gpu.address_space<workgroup>, 16 splits; HBM traffic 135798784 bytes tiled vs 142672384 standard (0.95x); matmul FLOPs 2147483648 tiled vs 536870912 standard (4.00x)
// CHECK: remark: attn-tile: combine, block-q = 16 rows by block-kv = 8 columns per tile, warps = 1, no shared memory; HBM traffic 1090048 bytes
// BUDGET64K: remark: attn-tile: block-q = 16, block-kv = 32, 3 stages, 4 warps, 4 key slices, 53248 bytes of tiles in memory space #gpu.address_space<workgroup>, 16 splits
func.func @decode(%q: tensor<4x32x1x128xbf16>, %k: tensor<4x8x8192x128xbf16>, %v: tensor<4x8x8192x128xbf16>) -> (tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>) {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 16 : i64} : tensor<4x32x1x128xbf16>, tensor<4x8x8192x128xbf16>, tensor<4x8x8192x128xbf16> -> tensor<16x4x32x1x128xf32>, tensor<16x4x32x1xf32>
  %o, %lse = attn.combine %po, %pl : tensor<16x4x32x1x128xf32>, tensor<16x4x32x1xf32> -> tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>
  return %o, %lse : tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>
}

// -----

// Gradients: 64 x 64 tiles for D = 64, two stages; the larger nest's tiles
// (K, V and two stages of Q, dO and their rows' 16-byte records, or Q, dO
// and two K, V stages), rows padded by 16 bytes:
// (64 + 2 x 64) x (64 + 64 + 16) x 2 + 2 x 64 x 32 = 59392 bytes.
// CHECK: remark: attn-tile: block-q = 64, block-kv = 64, 2 stages, 4 warps, 59392 bytes of tiles in memory space #gpu.address_space<workgroup>; HBM traffic 324403200 bytes tiled vs 973209600 standard (0.33x); matmul FLOPs 31004295168 tiled vs 34359738368 standard (0.90x)
// BUDGET64K: remark: attn-tile: block-q = 64, block-kv = 64, 2 stages, 4 warps, 59392 bytes
// FIXED: remark: attn-tile: block-q = 32, block-kv = 64, 2 stages, 4 warps, 46080 bytes
func.func @grad(%q: tensor<1x16x2048x64xbf16>, %k: tensor<1x16x2048x64xbf16>, %v: tensor<1x16x2048x64xbf16>, %o: tensor<1x16x2048x64xbf16>, %do: tensor<1x16x2048x64xbf16>, %lse: tensor<1x16x2048xf32>) -> (tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<top_left>}
      : tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>, tensor<1x16x2048xf32>
      -> tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>
  return %dq, %dk, %dv : tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>
}

// -----

// The forward tile describes the GPU kernel, whatever the shape: 7 query
// rows and 5 keys still take the kernel's 128 x 64 tile (4 warps x two MMA
// tiles, 64 keys at D <= 64), f32 rows padded by 4 elements:
// 128 x 20 x 4 + 3 x 64 x (20 + 20) x 4 = 40960 bytes. The padding shows
// in the FLOPs, not in the bytes.
// CHECK: remark: attn-tile: block-q = 128, block-kv = 64, 3 stages, 4 warps, 40960 bytes of tiles in memory space #gpu.address_space<workgroup>; HBM traffic 1536 bytes tiled vs 2096 standard (0.73x); matmul FLOPs 524288 tiled vs 2240 standard (234.06x)
// BUDGET64K: remark: attn-tile: block-q = 128, block-kv = 64, 3 stages, 4 warps, 40960 bytes
func.func @tiny(%q: tensor<1x1x7x16xf32>, %k: tensor<1x1x5x16xf32>, %v: tensor<1x1x5x16xf32>) -> tensor<1x1x7x16xf32> {
  %o = attn.attention %q, %k, %v : tensor<1x1x7x16xf32>, tensor<1x1x5x16xf32>, tensor<1x1x5x16xf32> -> tensor<1x1x7x16xf32>
  return %o : tensor<1x1x7x16xf32>
}

// -----

// Dynamic shapes take the same schedule (D = 32, f16:
// 128 x 40 x 2 + 3 x 64 x (40 + 40) x 2 = 40960 bytes); the counts need
// static shapes.
// CHECK: remark: attn-tile: block-q = 128, block-kv = 64, 3 stages, 4 warps, 40960 bytes of tiles in memory space #gpu.address_space<workgroup>; HBM traffic and FLOPs need static batch and sequence lengths
func.func @dynamic(%q: tensor<?x4x?x32xf16>, %k: tensor<?x4x?x32xf16>, %v: tensor<?x4x?x32xf16>) -> tensor<?x4x?x32xf16> {
  %o = attn.attention %q, %k, %v : tensor<?x4x?x32xf16>, tensor<?x4x?x32xf16>, tensor<?x4x?x32xf16> -> tensor<?x4x?x32xf16>
  return %o : tensor<?x4x?x32xf16>
}

// -----

// A long static sequence (2^32 queries and keys, within the 2^48 elements
// an operand may hold): the report counts the tiled loops' traffic tile by
// tile, and past 2^20 tiles says so instead of walking 2^25 query tiles.
// The standard counts would not fit int64 (2^64 scores): they are doubles
// from the first product on.
// CHECK: remark: attn-tile: block-q = 128, block-kv = 64, 3 stages, 4 warps, 24576 bytes of tiles in memory space #gpu.address_space<workgroup>; HBM traffic and FLOPs not counted: the tiled loops visit more than 1048576 tiles
func.func @long(%q: tensor<1x1x4294967296x16xf16>, %k: tensor<1x1x4294967296x16xf16>, %v: tensor<1x1x4294967296x16xf16>) -> tensor<1x1x4294967296x16xf16> {
  %o = attn.attention %q, %k, %v : tensor<1x1x4294967296x16xf16>, tensor<1x1x4294967296x16xf16>, tensor<1x1x4294967296x16xf16> -> tensor<1x1x4294967296x16xf16>
  return %o : tensor<1x1x4294967296x16xf16>
}

// -----

// A block mask's lists are device data: the report counts the tiles as if
// it kept a fraction 1 - sparsity of the blocks, and reads a count and an
// index per visit for each of its two lists. D = 64, bf16, 64 x 128 key
// tiles (block-q 128): 0.1 of the FLOPs and of the K/V traffic at
// sparsity = 0.9 (the backward: 0.1 of its recomputing 7 products against
// standard's 4); without the option the op counts every tile, as one
// without a block mask.
// CHECK: HBM traffic 1107566592 bytes tiled vs 4362076160 standard (0.25x); matmul FLOPs 137438953472 tiled vs 137438953472 standard (1.00x) (with the block mask leaving out a fraction 0.00 of the blocks: option sparsity)
// SPARSE: HBM traffic 140963021 bytes tiled vs 4362076160 standard (0.03x); matmul FLOPs 13743895347 tiled vs 137438953472 standard (0.10x) (with the block mask leaving out a fraction 0.90 of the blocks: option sparsity)
// SPARSE: HBM traffic 598769664 bytes tiled vs 7650934784 standard (0.08x); matmul FLOPs 48103633715 tiled vs 274877906944 standard (0.17x) (with the block mask leaving out a fraction 0.90 of the blocks: option sparsity)
func.func @block_mask(%q: tensor<2x16x4096x64xbf16>, %o: tensor<2x16x4096x64xbf16>, %do: tensor<2x16x4096x64xbf16>, %lse: tensor<2x16x4096xf32>, %bc: tensor<2x16x32xi32>, %bi: tensor<2x16x32x32xi32>) -> (tensor<2x16x4096x64xbf16>, tensor<2x16x4096x64xbf16>) {
  %out = attn.attention %q, %q, %q block_mask(%bc, %bi, %bc, %bi : tensor<2x16x32xi32>, tensor<2x16x32x32xi32>, tensor<2x16x32xi32>, tensor<2x16x32x32xi32>) {block_size = array<i64: 128, 128>} : tensor<2x16x4096x64xbf16>, tensor<2x16x4096x64xbf16>, tensor<2x16x4096x64xbf16> -> tensor<2x16x4096x64xbf16>
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %o, %do, %lse block_mask(%bc, %bi, %bc, %bi : tensor<2x16x32xi32>, tensor<2x16x32x32xi32>, tensor<2x16x32xi32>, tensor<2x16x32x32xi32>) q_block_mask(%bc, %bi, %bc, %bi : tensor<2x16x32xi32>, tensor<2x16x32x32xi32>, tensor<2x16x32xi32>, tensor<2x16x32x32xi32>) {block_size = array<i64: 128, 128>} : tensor<2x16x4096x64xbf16>, tensor<2x16x4096x64xbf16>, tensor<2x16x4096x64xbf16>, tensor<2x16x4096x64xbf16>, tensor<2x16x4096x64xbf16>, tensor<2x16x4096xf32> -> tensor<2x16x4096x64xbf16>, tensor<2x16x4096x64xbf16>, tensor<2x16x4096x64xbf16>
  return %out, %dq : tensor<2x16x4096x64xbf16>, tensor<2x16x4096x64xbf16>
}
