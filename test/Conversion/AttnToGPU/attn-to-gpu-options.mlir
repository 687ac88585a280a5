// RUN: attn-opt %s -split-input-file -attn-to-gpu="block-kv=128" -verify-diagnostics
// RUN: not attn-opt %s -attn-to-gpu="block-kv=24" 2>&1 | FileCheck %s --check-prefix=ODD

// ODD: 'block-kv' must be a positive multiple of 16, got 24

func.func @too_much_smem(%q: tensor<1x1x8x256xf16>, %k: tensor<1x1x8x256xf16>, %v: tensor<1x1x8x256xf16>) -> tensor<1x1x8x256xf16> {
  // expected-error @+1 {{'attn.attention' op cannot be lowered to a GPU kernel: the tiles need 337920 bytes of shared memory, more than the 227 KiB a CTA can have}}
  %o = attn.attention %q, %k, %v : tensor<1x1x8x256xf16>, tensor<1x1x8x256xf16>, tensor<1x1x8x256xf16> -> tensor<1x1x8x256xf16>
  return %o : tensor<1x1x8x256xf16>
}
