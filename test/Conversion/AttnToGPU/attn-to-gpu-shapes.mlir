// RUN: attn-opt %s -split-input-file -attn-to-gpu | FileCheck %s
//
// Shapes beyond the shipped kernels, each lowered from the tile form without
// an error: head dims 16, 48 and 256, Dv != D, GQA, f16 and bf16, a broadcast
// additive mask and a 2-D boolean mask, decode with D = 16, 48, 256 and 2-5
// splits, and the combine at each of their Dv.

// CHECK-LABEL: module attributes {attn.manifest = ["kernel attn_fwd_bf16_d16_dv16_none kind=
// CHECK: func.func @d16(
// CHECK: gpu.func @attn_fwd_bf16_d16_dv16_none(
// CHECK: gpu.return
func.func @d16(%q: tensor<?x4x?x16xbf16>, %k: tensor<?x4x?x16xbf16>, %v: tensor<?x4x?x16xbf16>) -> tensor<?x4x?x16xbf16> {
  %o = attn.attention %q, %k, %v : tensor<?x4x?x16xbf16>, tensor<?x4x?x16xbf16>, tensor<?x4x?x16xbf16> -> tensor<?x4x?x16xbf16>
  return %o : tensor<?x4x?x16xbf16>
}

// -----

// CHECK-LABEL: module attributes {attn.manifest = ["kernel attn_fwd_bf16_d64_dv32_top_left kind=
// CHECK: func.func @d64dv32(
// CHECK: gpu.func @attn_fwd_bf16_d64_dv32_top_left(
// CHECK: gpu.return
func.func @d64dv32(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x32xbf16>) -> tensor<?x8x?x32xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x32xbf16> -> tensor<?x8x?x32xbf16>
  return %o : tensor<?x8x?x32xbf16>
}

// -----

// CHECK-LABEL: module attributes {attn.manifest = ["kernel attn_fwd_f16_d32_dv128_none kind=
// CHECK: func.func @d32dv128(
// CHECK: gpu.func @attn_fwd_f16_d32_dv128_none(
// CHECK: gpu.return
func.func @d32dv128(%q: tensor<?x8x?x32xf16>, %k: tensor<?x8x?x32xf16>, %v: tensor<?x8x?x128xf16>) -> tensor<?x8x?x128xf16> {
  %o = attn.attention %q, %k, %v : tensor<?x8x?x32xf16>, tensor<?x8x?x32xf16>, tensor<?x8x?x128xf16> -> tensor<?x8x?x128xf16>
  return %o : tensor<?x8x?x128xf16>
}

// -----

// CHECK-LABEL: module attributes {attn.manifest = ["kernel attn_fwd_bf16_d256_dv256_bottom_right kind=
// CHECK: func.func @d256(
// CHECK: gpu.func @attn_fwd_bf16_d256_dv256_bottom_right(
// CHECK: gpu.return
func.func @d256(%q: tensor<?x2x?x256xbf16>, %k: tensor<?x2x?x256xbf16>, %v: tensor<?x2x?x256xbf16>) -> tensor<?x2x?x256xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x2x?x256xbf16>, tensor<?x2x?x256xbf16>, tensor<?x2x?x256xbf16> -> tensor<?x2x?x256xbf16>
  return %o : tensor<?x2x?x256xbf16>
}

// -----

// CHECK-LABEL: module attributes {attn.manifest = ["kernel attn_fwd_bf16_d48_dv48_none kind=
// CHECK: func.func @d48(
// CHECK: gpu.func @attn_fwd_bf16_d48_dv48_none(
// CHECK: gpu.return
func.func @d48(%q: tensor<?x4x?x48xbf16>, %k: tensor<?x1x?x48xbf16>, %v: tensor<?x1x?x48xbf16>) -> tensor<?x4x?x48xbf16> {
  %o = attn.attention %q, %k, %v : tensor<?x4x?x48xbf16>, tensor<?x1x?x48xbf16>, tensor<?x1x?x48xbf16> -> tensor<?x4x?x48xbf16>
  return %o : tensor<?x4x?x48xbf16>
}

// -----

// CHECK-LABEL: module attributes {attn.manifest = ["kernel attn_fwd_f16_d64_dv64_none_addmask kind=
// CHECK: func.func @mask_add_bcast(
// CHECK: gpu.func @attn_fwd_f16_d64_dv64_none_addmask(
// CHECK: gpu.return
func.func @mask_add_bcast(%q: tensor<?x4x?x64xf16>, %k: tensor<?x4x?x64xf16>, %v: tensor<?x4x?x64xf16>, %m: tensor<1x1x?x?xf16>) -> tensor<?x4x?x64xf16> {
  %o = attn.attention %q, %k, %v mask(%m : tensor<1x1x?x?xf16>) : tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16> -> tensor<?x4x?x64xf16>
  return %o : tensor<?x4x?x64xf16>
}

// -----

// CHECK-LABEL: module attributes {attn.manifest = ["kernel attn_fwd_bf16_d128_dv128_bottom_right_boolmask kind=
// CHECK: func.func @mask_bool_2d(
// CHECK: gpu.func @attn_fwd_bf16_d128_dv128_bottom_right_boolmask(
// CHECK: gpu.return
func.func @mask_bool_2d(%q: tensor<?x4x?x128xbf16>, %k: tensor<?x4x?x128xbf16>, %v: tensor<?x4x?x128xbf16>, %m: tensor<?x?xi1>) -> tensor<?x4x?x128xbf16> {
  %o = attn.attention %q, %k, %v mask(%m : tensor<?x?xi1>) {causal = #attn.causal<bottom_right>} : tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16> -> tensor<?x4x?x128xbf16>
  return %o : tensor<?x4x?x128xbf16>
}

// -----

// CHECK-LABEL: module attributes {attn.manifest = ["kernel attn_dec_f16_d16_dv16_none kind=
// CHECK: func.func @dec16(
// CHECK: gpu.func @attn_dec_f16_d16_dv16_none(
// CHECK: gpu.return
// CHECK: gpu.func @attn_comb_f16_dv16(
// CHECK: gpu.return
func.func @dec16(%q: tensor<?x8x?x16xf16>, %k: tensor<?x8x?x16xf16>, %v: tensor<?x8x?x16xf16>) -> tensor<?x8x?x16xf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 4 : i64} : tensor<?x8x?x16xf16>, tensor<?x8x?x16xf16>, tensor<?x8x?x16xf16> -> tensor<4x?x8x?x16xf32>, tensor<4x?x8x?xf32>
  %o = attn.combine %po, %pl : tensor<4x?x8x?x16xf32>, tensor<4x?x8x?xf32> -> tensor<?x8x?x16xf16>
  return %o : tensor<?x8x?x16xf16>
}

// -----

// CHECK-LABEL: module attributes {attn.manifest = ["kernel attn_dec_f16_d64_dv32_top_left kind=
// CHECK: func.func @dec64dv32(
// CHECK: gpu.func @attn_dec_f16_d64_dv32_top_left(
// CHECK: gpu.return
// CHECK: gpu.func @attn_comb_f16_dv32(
// CHECK: gpu.return
func.func @dec64dv32(%q: tensor<?x32x?x64xf16>, %k: tensor<?x8x?x64xf16>, %v: tensor<?x8x?x32xf16>) -> tensor<?x32x?x32xf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 3 : i64, causal = #attn.causal<top_left>} : tensor<?x32x?x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?x32xf16> -> tensor<3x?x32x?x32xf32>, tensor<3x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<3x?x32x?x32xf32>, tensor<3x?x32x?xf32> -> tensor<?x32x?x32xf16>
  return %o : tensor<?x32x?x32xf16>
}

// -----

// CHECK-LABEL: module attributes {attn.manifest = ["kernel attn_dec_bf16_d256_dv256_none kind=
// CHECK: func.func @dec256(
// CHECK: gpu.func @attn_dec_bf16_d256_dv256_none(
// CHECK: gpu.return
// CHECK: gpu.func @attn_comb_bf16_dv256(
// CHECK: gpu.return
func.func @dec256(%q: tensor<?x4x?x256xbf16>, %k: tensor<?x1x?x256xbf16>, %v: tensor<?x1x?x256xbf16>) -> tensor<?x4x?x256xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 2 : i64} : tensor<?x4x?x256xbf16>, tensor<?x1x?x256xbf16>, tensor<?x1x?x256xbf16> -> tensor<2x?x4x?x256xf32>, tensor<2x?x4x?xf32>
  %o = attn.combine %po, %pl : tensor<2x?x4x?x256xf32>, tensor<2x?x4x?xf32> -> tensor<?x4x?x256xbf16>
  return %o : tensor<?x4x?x256xbf16>
}

// -----

// CHECK-LABEL: module attributes {attn.manifest = ["kernel attn_dec_f16_d48_dv48_none kind=
// CHECK: func.func @dec48(
// CHECK: gpu.func @attn_dec_f16_d48_dv48_none(
// CHECK: gpu.return
// CHECK: gpu.func @attn_comb_f16_dv48(
// CHECK: gpu.return
func.func @dec48(%q: tensor<?x8x?x48xf16>, %k: tensor<?x2x?x48xf16>, %v: tensor<?x2x?x48xf16>) -> tensor<?x8x?x48xf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 5 : i64} : tensor<?x8x?x48xf16>, tensor<?x2x?x48xf16>, tensor<?x2x?x48xf16> -> tensor<5x?x8x?x48xf32>, tensor<5x?x8x?xf32>
  %o = attn.combine %po, %pl : tensor<5x?x8x?x48xf32>, tensor<5x?x8x?xf32> -> tensor<?x8x?x48xf16>
  return %o : tensor<?x8x?x48xf16>
}
