// Kernels for head dims other than the standard 64 and 128 (bf16): forward
// D = 32, 80, 96, 256 (causal none and bottom-right), decode D = 32, 80,
// 96, and the backward (attn.attention_grad, three kernels each) at D = 160,
// 192, 224 and 256, none and bottom-right. On sm_90a the dK/dV kernels of
// D = 160 and 192 stream 32-query tiles (block_q=32), and those of D = 224
// and 256 hold dK and dV in two column blocks (value_blocks=2, a CTA each,
// both recomputing S and dP: AttnTileSizes::valueBlocks): each runs faster
// than the 64-query tiles of one block, which spill from D = 192
// (docs/GPU.md). sm_80's mapping streams 32 queries in every dK/dV kernel
// here, in two blocks from D = 192, and 32 keys in every dQ kernel: none
// spills. scripts/gpu_round.sh runs
// attn_example on each kernel of a manifest, test/GPU/gpu_tests.py every
// kernel it finds (head_dim_cases).

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
func.func @bwd_d160_none(%q: tensor<?x16x?x160xbf16>, %k: tensor<?x16x?x160xbf16>, %v: tensor<?x16x?x160xbf16>, %o: tensor<?x16x?x160xbf16>, %do: tensor<?x16x?x160xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>
}
func.func @bwd_d160_bottom_right(%q: tensor<?x16x?x160xbf16>, %k: tensor<?x16x?x160xbf16>, %v: tensor<?x16x?x160xbf16>, %o: tensor<?x16x?x160xbf16>, %do: tensor<?x16x?x160xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>} : tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>, tensor<?x16x?x160xbf16>
}
func.func @bwd_d192_none(%q: tensor<?x16x?x192xbf16>, %k: tensor<?x16x?x192xbf16>, %v: tensor<?x16x?x192xbf16>, %o: tensor<?x16x?x192xbf16>, %do: tensor<?x16x?x192xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>
}
func.func @bwd_d192_bottom_right(%q: tensor<?x16x?x192xbf16>, %k: tensor<?x16x?x192xbf16>, %v: tensor<?x16x?x192xbf16>, %o: tensor<?x16x?x192xbf16>, %do: tensor<?x16x?x192xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>} : tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>, tensor<?x16x?x192xbf16>
}
func.func @bwd_d224_none(%q: tensor<?x16x?x224xbf16>, %k: tensor<?x16x?x224xbf16>, %v: tensor<?x16x?x224xbf16>, %o: tensor<?x16x?x224xbf16>, %do: tensor<?x16x?x224xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>
}
func.func @bwd_d224_bottom_right(%q: tensor<?x16x?x224xbf16>, %k: tensor<?x16x?x224xbf16>, %v: tensor<?x16x?x224xbf16>, %o: tensor<?x16x?x224xbf16>, %do: tensor<?x16x?x224xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>} : tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>, tensor<?x16x?x224xbf16>
}
func.func @bwd_d256_none(%q: tensor<?x16x?x256xbf16>, %k: tensor<?x16x?x256xbf16>, %v: tensor<?x16x?x256xbf16>, %o: tensor<?x16x?x256xbf16>, %do: tensor<?x16x?x256xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>
}
func.func @bwd_d256_bottom_right(%q: tensor<?x16x?x256xbf16>, %k: tensor<?x16x?x256xbf16>, %v: tensor<?x16x?x256xbf16>, %o: tensor<?x16x?x256xbf16>, %do: tensor<?x16x?x256xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>} : tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>, tensor<?x16x?x256xbf16>
}
