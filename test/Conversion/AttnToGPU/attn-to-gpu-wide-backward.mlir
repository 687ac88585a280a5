// RUN: attn-opt %s -split-input-file -attn-to-gpu -verify-diagnostics | FileCheck %s
// RUN: not attn-opt %s -split-input-file -attn-to-gpu="chip=sm_90a deterministic=false" 2>&1 | FileCheck %s --check-prefix=ATOMIC

// Past D = 256 the backward's dK/dV and dQ kernels hold their accumulators
// in column blocks of whole 16-column steps, a CTA each (manifest
// value_blocks; AttnTileSizes::valueBlocks): at D = 320 three blocks of
// 112 columns of dK and dV (224 of the two together), two of 160 of dQ,
// each recomputing S and dP from whole tiles; the dot kernel has none.
// Rows of 40 chunks are copied a round of rows at a time (thread t: chunk
// t mod 40 of row t / 40), on sm_80's mapping on every chip.
// CHECK: attn.manifest = ["kernel attn_bwd_dot_f16_d320_dv320_none kind=backward_dot {{[^"]*}} block_q=64 block_kv=64 threads=128
// CHECK-SAME: "kernel attn_bwd_kv_f16_d320_dv320_none kind=backward_kv {{[^"]*}} block_q=32 block_kv=32 value_blocks=3 threads=64
// CHECK-SAME: "kernel attn_bwd_q_f16_d320_dv320_none kind=backward_q {{[^"]*}} block_q=32 block_kv=32 value_blocks=2 threads=64
// CHECK-LABEL: gpu.func @attn_bwd_kv_f16_d320_dv320_none
// CHECK: nvvm.cp.async.shared.global
// CHECK: nvvm.mma.sync
// CHECK-LABEL: gpu.func @attn_bwd_q_f16_d320_dv320_none
// ATOMIC: error: 'attn.attention_grad' op cannot be lowered to a GPU kernel: head dim D of the kernels that accumulate dQ (atomic, ordered) must be in [1, 256], got 320
func.func @wide_head_dim_grad(%q: tensor<1x1x8x320xf16>, %k: tensor<1x1x8x320xf16>, %v: tensor<1x1x8x320xf16>, %o: tensor<1x1x8x320xf16>, %do: tensor<1x1x8x320xf16>, %lse: tensor<1x1x8xf32>) -> tensor<1x1x8x320xf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<1x1x8x320xf16>, tensor<1x1x8x320xf16>, tensor<1x1x8x320xf16>, tensor<1x1x8x320xf16>, tensor<1x1x8x320xf16>, tensor<1x1x8xf32> -> tensor<1x1x8x320xf16>, tensor<1x1x8x320xf16>, tensor<1x1x8x320xf16>
  return %dq : tensor<1x1x8x320xf16>
}

// -----

// The kernels' head dims end at MLA's D = 576, the backward's too.
func.func @too_wide_grad(%q: tensor<1x1x8x584xf16>, %k: tensor<1x1x8x584xf16>, %v: tensor<1x1x8x64xf16>, %o: tensor<1x1x8x64xf16>, %do: tensor<1x1x8x64xf16>, %lse: tensor<1x1x8xf32>) -> tensor<1x1x8x584xf16> {
  // expected-error @+1 {{'attn.attention_grad' op cannot be lowered to a GPU kernel: head dim D must be in [1, 576], got 584}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<1x1x8x584xf16>, tensor<1x1x8x584xf16>, tensor<1x1x8x64xf16>, tensor<1x1x8x64xf16>, tensor<1x1x8x64xf16>, tensor<1x1x8xf32> -> tensor<1x1x8x584xf16>, tensor<1x1x8x584xf16>, tensor<1x1x8x64xf16>
  return %dq : tensor<1x1x8x584xf16>
}

// -----

// Column blocks cut D and Dv alike: MLA-sized keys with 32 value columns
// cannot be cut into blocks that each hold a 16-column step of Dv.
func.func @unblockable_grad(%q: tensor<1x4x8x576xbf16>, %k: tensor<1x4x8x576xbf16>, %v: tensor<1x4x8x32xbf16>, %o: tensor<1x4x8x32xbf16>, %do: tensor<1x4x8x32xbf16>, %lse: tensor<1x4x8xf32>) -> tensor<1x4x8x576xbf16> {
  // expected-error @+1 {{no column blocks of D = 576 and Dv = 32 fit the backward's accumulators: every block takes whole 16-column steps of both, dK's and dV's together at most 256 columns, dQ's at most 256}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<1x4x8x576xbf16>, tensor<1x4x8x576xbf16>, tensor<1x4x8x32xbf16>, tensor<1x4x8x32xbf16>, tensor<1x4x8x32xbf16>, tensor<1x4x8xf32> -> tensor<1x4x8x576xbf16>, tensor<1x4x8x576xbf16>, tensor<1x4x8x32xbf16>
  return %dq : tensor<1x4x8x576xbf16>
}
