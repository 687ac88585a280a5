// RUN: attn-opt %s -split-input-file --attn-tile=report -o /dev/null 2>&1 | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-tile="report smem-budget=65536" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUDGET64K
// RUN: attn-opt %s -split-input-file --attn-tile="report block-q=32 block-kv=64 deterministic=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FIXED

// `report` states the tile sizes, their workgroup memory, and the HBM bytes
// and matmul FLOPs of the tiled loops next to standard attention's (S and P
// written to and read back from HBM). Automatic sizes follow the head dim
// and smem-budget (48 KiB by default).

// Causal prefill, GQA 32/8, d = 128: 64 x 64 tiles fill 48 KiB, 128 x 64
// with 64 KiB; the key/value tiles above the diagonal are skipped, so the
// tiled loops do about half the matmul work of standard attention.
// CHECK: remark: attn-tile: block-q = 64, block-kv = 64, 49152 bytes of tiles in memory space #gpu.address_space<workgroup>; HBM traffic 2248671232 bytes tiled vs 4379377664 standard (0.51x); matmul FLOPs 139586437120 tiled vs 274877906944 standard (0.51x)
// BUDGET64K: remark: attn-tile: block-q = 128, block-kv = 64, 65536 bytes of tiles in memory space #gpu.address_space<workgroup>; HBM traffic
// FIXED: remark: attn-tile: block-q = 32, block-kv = 64, 40960 bytes
func.func @prefill(%q: tensor<1x32x4096x128xf16>, %k: tensor<1x8x4096x128xf16>, %v: tensor<1x8x4096x128xf16>) -> (tensor<1x32x4096x128xf16>, tensor<1x32x4096xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<1x32x4096x128xf16>, tensor<1x8x4096x128xf16>, tensor<1x8x4096x128xf16> -> tensor<1x32x4096x128xf16>, tensor<1x32x4096xf32>
  return %o, %lse : tensor<1x32x4096x128xf16>, tensor<1x32x4096xf32>
}

// -----

// No mask, d = 64: 128 x 128 tiles; Q read once, K and V once per query
// tile: 553648128 = 16 heads x (2 x 4096 x 64 x 2 + 32 x 4096 x 128 x 2)
// bytes, against 2181038080 with S and P in HBM.
// CHECK: remark: attn-tile: block-q = 128, block-kv = 128, 49152 bytes of tiles in memory space #gpu.address_space<workgroup>; HBM traffic 553648128 bytes tiled vs 2181038080 standard (0.25x); matmul FLOPs 68719476736 tiled vs 68719476736 standard (1.00x)
func.func @plain(%q: tensor<1x16x4096x64xf16>, %k: tensor<1x16x4096x64xf16>, %v: tensor<1x16x4096x64xf16>) -> tensor<1x16x4096x64xf16> {
  %o = attn.attention %q, %k, %v : tensor<1x16x4096x64xf16>, tensor<1x16x4096x64xf16>, tensor<1x16x4096x64xf16> -> tensor<1x16x4096x64xf16>
  return %o : tensor<1x16x4096x64xf16>
}

// -----

// Decode: the 4 query heads of a key/value head share one 16-row tile, so
// K and V are read once per split; the padding rows cost FLOPs, not bytes.
// CHECK: remark: attn-tile: block-q = 16, block-kv = 64, 36864 bytes of tiles in memory space #gpu.address_space<workgroup>, 16 splits; HBM traffic 135798784 bytes tiled vs 142672384 standard (0.95x); matmul FLOPs 2147483648 tiled vs 536870912 standard (4.00x)
// CHECK: remark: attn-tile: combine, no tiles; HBM traffic 1090048 bytes
func.func @decode(%q: tensor<4x32x1x128xbf16>, %k: tensor<4x8x8192x128xbf16>, %v: tensor<4x8x8192x128xbf16>) -> (tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>) {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 16 : i64} : tensor<4x32x1x128xbf16>, tensor<4x8x8192x128xbf16>, tensor<4x8x8192x128xbf16> -> tensor<16x4x32x1x128xf32>, tensor<16x4x32x1xf32>
  %o, %lse = attn.combine %po, %pl : tensor<16x4x32x1x128xf32>, tensor<16x4x32x1xf32> -> tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>
  return %o, %lse : tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>
}

// -----

// Gradients hold Q, dO, K and V tiles: 64 x 128 for d = 64 in 48 KiB.
// CHECK: remark: attn-tile: block-q = 64, block-kv = 128, 49152 bytes of tiles in memory space #gpu.address_space<workgroup>; HBM traffic {{[0-9]+}} bytes tiled vs 973209600 standard
// FIXED: remark: attn-tile: block-q = 32, block-kv = 64, 24576 bytes
func.func @grad(%q: tensor<1x16x2048x64xbf16>, %k: tensor<1x16x2048x64xbf16>, %v: tensor<1x16x2048x64xbf16>, %o: tensor<1x16x2048x64xbf16>, %do: tensor<1x16x2048x64xbf16>, %lse: tensor<1x16x2048xf32>) -> (tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<top_left>}
      : tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>, tensor<1x16x2048xf32>
      -> tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>
  return %dq, %dk, %dv : tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>, tensor<1x16x2048x64xbf16>
}

// -----

// Small shapes shrink the automatic tiles: 7 query rows and 5 keys take
// 16 x 16 tiles, not 128 x 128.
// CHECK: remark: attn-tile: block-q = 16, block-kv = 16, 3072 bytes
func.func @tiny(%q: tensor<1x1x7x16xf32>, %k: tensor<1x1x5x16xf32>, %v: tensor<1x1x5x16xf32>) -> tensor<1x1x7x16xf32> {
  %o = attn.attention %q, %k, %v : tensor<1x1x7x16xf32>, tensor<1x1x5x16xf32>, tensor<1x1x5x16xf32> -> tensor<1x1x7x16xf32>
  return %o : tensor<1x1x7x16xf32>
}

// -----

// CHECK: remark: attn-tile: block-q = 128, block-kv = 128, {{[0-9]+}} bytes of tiles in memory space #gpu.address_space<workgroup>; HBM traffic and FLOPs need static batch and sequence lengths
func.func @dynamic(%q: tensor<?x4x?x32xf16>, %k: tensor<?x4x?x32xf16>, %v: tensor<?x4x?x32xf16>) -> tensor<?x4x?x32xf16> {
  %o = attn.attention %q, %k, %v : tensor<?x4x?x32xf16>, tensor<?x4x?x32xf16>, tensor<?x4x?x32xf16> -> tensor<?x4x?x32xf16>
  return %o : tensor<?x4x?x32xf16>
}
