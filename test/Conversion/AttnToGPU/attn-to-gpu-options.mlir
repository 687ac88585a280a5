// RUN: attn-opt %s -split-input-file -attn-to-gpu="block-kv=128" -verify-diagnostics
// RUN: not attn-opt %s -attn-to-gpu="block-kv=24" 2>&1 | FileCheck %s --check-prefix=ODD

// RUN: not attn-opt %s -attn-to-gpu="block-kv=4611686018427387904 warps=9" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not attn-opt %s --attn-to-ptx="m-tiles=4611686018427387904 warps=-1" 2>&1 | FileCheck %s --check-prefix=RANGE-PTX

// ODD: 'block-kv' must be a positive multiple of 16, got 24
// The options are checked where they enter, before block-q = m-tiles x 16
// x warps and the shared memory are computed from them.
// RANGE: error: attn-to-gpu: block-kv = 4611686018427387904 is out of range [0, 1024] (keys per K/V tile; 0: automatic)
// RANGE: error: attn-to-gpu: warps = 9 is out of range [0, 8] (warps per CTA; 0: automatic)
// RANGE-PTX: error: attn-to-gpu: warps = -1 is out of range [0, 8] (warps per CTA; 0: automatic)
// RANGE-PTX: error: attn-to-gpu: m-tiles = 4611686018427387904 is out of range [0, 2] (16-row MMA tiles per warp; 0: automatic)

func.func @too_much_smem(%q: tensor<1x1x8x256xf16>, %k: tensor<1x1x8x256xf16>, %v: tensor<1x1x8x256xf16>) -> tensor<1x1x8x256xf16> {
  // The kernel's tiling comes from attn-tile's cost model, which checks it
  // against the chip's shared memory (sm_80, the default chip: 163 KiB).
  // expected-error @+1 {{tiles of block-q = 128 and block-kv = 128 in 3 stages need 473088 bytes of workgroup memory (Q, K, V tiles, rows padded by 16 bytes, D = 256, Dv = 256, 2-byte elements), more than smem-budget = 166912; choose smaller block-q/block-kv or raise smem-budget}}
  %o = attn.attention %q, %k, %v : tensor<1x1x8x256xf16>, tensor<1x1x8x256xf16>, tensor<1x1x8x256xf16> -> tensor<1x1x8x256xf16>
  return %o : tensor<1x1x8x256xf16>
}
