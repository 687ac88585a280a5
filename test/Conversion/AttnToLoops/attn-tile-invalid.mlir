// RUN: attn-opt %s -split-input-file --attn-tile="block-q=128 block-kv=128" -verify-diagnostics
// RUN: not attn-opt %s -split-input-file --attn-tile="smem-budget=4096" 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: not attn-opt %s --attn-tile="memory-space=workgroup" 2>&1 | FileCheck %s --check-prefix=SPACE
// RUN: not attn-opt %s --attn-tile="memory-space=\"shared\"" 2>&1 | FileCheck %s --check-prefix=SPACE-STRING
// RUN: not attn-opt %s --attn-tile="block-q=-16" 2>&1 | FileCheck %s --check-prefix=NEGATIVE

// Explicit tiles that exceed smem-budget (48 KiB by default) are an error on
// the op, not silently shrunk.

// AUTO: error: tiles of block-q = 16 and block-kv = 16 need 12288 bytes of workgroup memory (Q, K, V tiles, D = 64, Dv = 64, 4-byte elements), more than smem-budget = 4096; no smaller automatic tile fits: raise smem-budget
// SPACE: error: attn-tile: memory-space must be a memref memory space attribute (e.g. #gpu.address_space<workgroup> or 3) or 'default', got 'workgroup'
// SPACE-STRING: error: attn-tile: memory-space must be a memref memory space attribute
// NEGATIVE: error: attn-tile: block-q and block-kv must be >= 0 (0: automatic) and smem-budget > 0, got block-q = -16, block-kv = 0, smem-budget = 49152
func.func @forward(%q: tensor<2x4x77x64xf32>, %k: tensor<2x4x129x64xf32>, %v: tensor<2x4x129x64xf32>) -> tensor<2x4x77x64xf32> {
  // expected-error @below {{tiles of block-q = 128 and block-kv = 128 need 98304 bytes of workgroup memory (Q, K, V tiles, D = 64, Dv = 64, 4-byte elements), more than smem-budget = 49152; choose smaller block-q/block-kv or raise smem-budget}}
  %o = attn.attention %q, %k, %v : tensor<2x4x77x64xf32>, tensor<2x4x129x64xf32>, tensor<2x4x129x64xf32> -> tensor<2x4x77x64xf32>
  return %o : tensor<2x4x77x64xf32>
}

// -----

// AUTO: error: tiles of block-q = 16 and block-kv = 16 need 8192 bytes of workgroup memory (Q, dO, K, V tiles, D = 64, Dv = 64, 2-byte elements), more than smem-budget = 4096
func.func @grad(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>, %o: tensor<1x2x64x64xf16>, %do: tensor<1x2x64x64xf16>, %lse: tensor<1x2x64xf32>) -> (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) {
  // expected-error @below {{tiles of block-q = 128 and block-kv = 128 need 65536 bytes of workgroup memory (Q, dO, K, V tiles, D = 64, Dv = 64, 2-byte elements), more than smem-budget = 49152}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64xf32>
      -> tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
  return %dq, %dk, %dv : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
}
