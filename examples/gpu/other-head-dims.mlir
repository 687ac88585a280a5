// Kernels for head dims other than the standard 64 and 128 (bf16): forward
// D = 32, 80, 96, 256 (causal none and bottom-right) and decode D = 32, 80,
// 96. scripts/gpu_round.sh runs attn_example on each kernel of a manifest.

func.func @fwd_d32_none(%q: tensor<?x16x?x32xbf16>, %k: tensor<?x16x?x32xbf16>, %v: tensor<?x16x?x32xbf16>) -> (tensor<?x16x?x32xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x32xbf16>, tensor<?x16x?x32xbf16>, tensor<?x16x?x32xbf16> -> tensor<?x16x?x32xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x32xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_d32_bottom_right(%q: tensor<?x16x?x32xbf16>, %k: tensor<?x16x?x32xbf16>, %v: tensor<?x16x?x32xbf16>) -> (tensor<?x16x?x32xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x32xbf16>, tensor<?x16x?x32xbf16>, tensor<?x16x?x32xbf16> -> tensor<?x16x?x32xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x32xbf16>, tensor<?x16x?xf32>
}
func.func @decode_d32(%q: tensor<?x32x?x32xbf16>, %k: tensor<?x8x?x32xbf16>, %v: tensor<?x8x?x32xbf16>) -> tensor<?x32x?x32xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x32xbf16>, tensor<?x8x?x32xbf16>, tensor<?x8x?x32xbf16> -> tensor<8x?x32x?x32xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x32xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x32xbf16>
  return %o : tensor<?x32x?x32xbf16>
}
func.func @fwd_d80_none(%q: tensor<?x16x?x80xbf16>, %k: tensor<?x16x?x80xbf16>, %v: tensor<?x16x?x80xbf16>) -> (tensor<?x16x?x80xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x80xbf16>, tensor<?x16x?x80xbf16>, tensor<?x16x?x80xbf16> -> tensor<?x16x?x80xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x80xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_d80_bottom_right(%q: tensor<?x16x?x80xbf16>, %k: tensor<?x16x?x80xbf16>, %v: tensor<?x16x?x80xbf16>) -> (tensor<?x16x?x80xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x80xbf16>, tensor<?x16x?x80xbf16>, tensor<?x16x?x80xbf16> -> tensor<?x16x?x80xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x80xbf16>, tensor<?x16x?xf32>
}
func.func @decode_d80(%q: tensor<?x32x?x80xbf16>, %k: tensor<?x8x?x80xbf16>, %v: tensor<?x8x?x80xbf16>) -> tensor<?x32x?x80xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x80xbf16>, tensor<?x8x?x80xbf16>, tensor<?x8x?x80xbf16> -> tensor<8x?x32x?x80xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x80xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x80xbf16>
  return %o : tensor<?x32x?x80xbf16>
}
func.func @fwd_d96_none(%q: tensor<?x16x?x96xbf16>, %k: tensor<?x16x?x96xbf16>, %v: tensor<?x16x?x96xbf16>) -> (tensor<?x16x?x96xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x96xbf16>, tensor<?x16x?x96xbf16>, tensor<?x16x?x96xbf16> -> tensor<?x16x?x96xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x96xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_d96_bottom_right(%q: tensor<?x16x?x96xbf16>, %k: tensor<?x16x?x96xbf16>, %v: tensor<?x16x?x96xbf16>) -> (tensor<?x16x?x96xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x96xbf16>, tensor<?x16x?x96xbf16>, tensor<?x16x?x96xbf16> -> tensor<?x16x?x96xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x96xbf16>, tensor<?x16x?xf32>
}
func.func @decode_d96(%q: tensor<?x32x?x96xbf16>, %k: tensor<?x8x?x96xbf16>, %v: tensor<?x8x?x96xbf16>) -> tensor<?x32x?x96xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x96xbf16>, tensor<?x8x?x96xbf16>, tensor<?x8x?x96xbf16> -> tensor<8x?x32x?x96xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x96xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x96xbf16>
  return %o : tensor<?x32x?x96xbf16>
}
func.func @fwd_d256_none(%q: tensor<?x16x?x256xbf16>, %k: tensor<?x16x?x256xbf16>, %v: tensor<?x16x?x256xbf16>) -> (tensor<?x16x?x256xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16> -> tensor<?x16x?x256xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x256xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_d256_bottom_right(%q: tensor<?x16x?x256xbf16>, %k: tensor<?x16x?x256xbf16>, %v: tensor<?x16x?x256xbf16>) -> (tensor<?x16x?x256xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16> -> tensor<?x16x?x256xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x256xbf16>, tensor<?x16x?xf32>
}
