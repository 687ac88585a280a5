// RUN: attn-opt %s --attn-tile="report" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SLICES
// RUN: attn-opt %s --attn-tile="report warps=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: attn-opt %s --attn-to-ptx="chip=sm_80 warps=1" -o /dev/null
// RUN: attn-opt %s --attn-to-ptx="chip=sm_80" -o /dev/null

// Split-KV decode tiles on the sm_80 mapping: with key slices (a warp per
// slice of every key/value tile) unpadded swizzled rows, 16 x 128 x 2 +
// 3 x 64 x 256 x 2 = 102400 bytes, since cp.async into rows padded by 16
// bytes asks L2 for 1.5x the sectors it copies; one warp has no slices and
// keeps the padded rows, 16 x 136 x 2 + 3 x 64 x 272 x 2 = 108800 bytes.
// The cost model and the GPU lowering agree on both (attn-to-ptx checks
// the kernel's bytes against the schedule's).
// SLICES: remark: attn-tile: block-q = 16, block-kv = 64, 3 stages, 4 warps, 4 key slices, 102400 bytes of tiles
// ONE: remark: attn-tile: block-q = 16, block-kv = 64, 3 stages, 1 warps, 108800 bytes of tiles
func.func @decode(%q: tensor<4x32x1x128xbf16>, %k: tensor<4x8x8192x128xbf16>, %v: tensor<4x8x8192x128xbf16>) -> (tensor<16x4x32x1x128xf32>, tensor<16x4x32x1xf32>) {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 16 : i64} : tensor<4x32x1x128xbf16>, tensor<4x8x8192x128xbf16>, tensor<4x8x8192x128xbf16> -> tensor<16x4x32x1x128xf32>, tensor<16x4x32x1xf32>
  return %po, %pl : tensor<16x4x32x1x128xf32>, tensor<16x4x32x1xf32>
}
