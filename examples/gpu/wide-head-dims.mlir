// Kernels for head dims past 256 (sm_80's mapping on every chip): the
// forward computes O in value blocks of at most 256 columns, one CTA each,
// and the split-KV decode likewise (AttnTileSizes::valueBlocks; D itself
// goes whole into S = Q K^T). Forward D = 264, 320, 384, 512 and D = 300
// (rows that are not whole 16-byte chunks), Dv != D both ways, MLA's
// D = 576 with Dv = 512 (prefill, and decode with one KV head shared by
// every query head, from contiguous K/V or a paged cache of [P, page, 1,
// D] pools); test/GPU/gpu_tests.py runs every kernel it finds
// (head_dim_cases). The backward kernels (attn.attention_grad) compute dK
// and dV, and dQ, in column blocks of whole 16-column steps, a CTA each
// (value_blocks in the manifest; each block recomputes S and dP): D = 320,
// 512 with every causal kind, f16, D = 300 (rows copied element by
// element, the last block storing fewer columns) and Dv != D. (D = 264
// and MLA's D = 576 with Dv = 512 compile too, but spill 8 to 28 bytes on
// sm_80, and D = 576 does not fit sm_86's shared memory:
// docs/Limits.md.)

func.func @fwd_bf16_d264_dv264_none(%q: tensor<?x16x?x264xbf16>, %k: tensor<?x16x?x264xbf16>, %v: tensor<?x16x?x264xbf16>) -> (tensor<?x16x?x264xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x264xbf16>, tensor<?x16x?x264xbf16>, tensor<?x16x?x264xbf16> -> tensor<?x16x?x264xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x264xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d320_dv320_none(%q: tensor<?x16x?x320xbf16>, %k: tensor<?x16x?x320xbf16>, %v: tensor<?x16x?x320xbf16>) -> (tensor<?x16x?x320xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x320xbf16>, tensor<?x16x?x320xbf16>, tensor<?x16x?x320xbf16> -> tensor<?x16x?x320xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x320xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d384_dv384_none(%q: tensor<?x16x?x384xbf16>, %k: tensor<?x16x?x384xbf16>, %v: tensor<?x16x?x384xbf16>) -> (tensor<?x16x?x384xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x384xbf16>, tensor<?x16x?x384xbf16>, tensor<?x16x?x384xbf16> -> tensor<?x16x?x384xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x384xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d512_dv512_none(%q: tensor<?x16x?x512xbf16>, %k: tensor<?x16x?x512xbf16>, %v: tensor<?x16x?x512xbf16>) -> (tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16> -> tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d320_dv320_bottom_right(%q: tensor<?x16x?x320xbf16>, %k: tensor<?x16x?x320xbf16>, %v: tensor<?x16x?x320xbf16>) -> (tensor<?x16x?x320xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x320xbf16>, tensor<?x16x?x320xbf16>, tensor<?x16x?x320xbf16> -> tensor<?x16x?x320xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x320xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d512_dv512_bottom_right(%q: tensor<?x16x?x512xbf16>, %k: tensor<?x16x?x512xbf16>, %v: tensor<?x16x?x512xbf16>) -> (tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16> -> tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d512_dv512_top_left(%q: tensor<?x16x?x512xbf16>, %k: tensor<?x16x?x512xbf16>, %v: tensor<?x16x?x512xbf16>) -> (tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16> -> tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_f16_d512_dv512_none(%q: tensor<?x16x?x512xf16>, %k: tensor<?x16x?x512xf16>, %v: tensor<?x16x?x512xf16>) -> (tensor<?x16x?x512xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x512xf16>, tensor<?x16x?x512xf16>, tensor<?x16x?x512xf16> -> tensor<?x16x?x512xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x512xf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d300_dv300_none(%q: tensor<?x16x?x300xbf16>, %k: tensor<?x16x?x300xbf16>, %v: tensor<?x16x?x300xbf16>) -> (tensor<?x16x?x300xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x300xbf16>, tensor<?x16x?x300xbf16>, tensor<?x16x?x300xbf16> -> tensor<?x16x?x300xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x300xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d512_dv128_none(%q: tensor<?x16x?x512xbf16>, %k: tensor<?x16x?x512xbf16>, %v: tensor<?x16x?x128xbf16>) -> (tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x128xbf16> -> tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d128_dv512_none(%q: tensor<?x16x?x128xbf16>, %k: tensor<?x16x?x128xbf16>, %v: tensor<?x16x?x512xbf16>) -> (tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x512xbf16> -> tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d576_dv512_none(%q: tensor<?x16x?x576xbf16>, %k: tensor<?x1x?x576xbf16>, %v: tensor<?x1x?x512xbf16>) -> (tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x576xbf16>, tensor<?x1x?x576xbf16>, tensor<?x1x?x512xbf16> -> tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d576_dv512_bottom_right(%q: tensor<?x16x?x576xbf16>, %k: tensor<?x1x?x576xbf16>, %v: tensor<?x1x?x512xbf16>) -> (tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x576xbf16>, tensor<?x1x?x576xbf16>, tensor<?x1x?x512xbf16> -> tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>
}
func.func @decode_bf16_d320_dv320_none(%q: tensor<?x32x?x320xbf16>, %k: tensor<?x8x?x320xbf16>, %v: tensor<?x8x?x320xbf16>) -> tensor<?x32x?x320xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x320xbf16>, tensor<?x8x?x320xbf16>, tensor<?x8x?x320xbf16> -> tensor<8x?x32x?x320xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x320xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x320xbf16>
  return %o : tensor<?x32x?x320xbf16>
}
func.func @decode_bf16_d512_dv512_none(%q: tensor<?x32x?x512xbf16>, %k: tensor<?x8x?x512xbf16>, %v: tensor<?x8x?x512xbf16>) -> tensor<?x32x?x512xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x512xbf16>, tensor<?x8x?x512xbf16>, tensor<?x8x?x512xbf16> -> tensor<8x?x32x?x512xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x512xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x512xbf16>
  return %o : tensor<?x32x?x512xbf16>
}
func.func @decode_bf16_d512_dv512_bottom_right(%q: tensor<?x32x?x512xbf16>, %k: tensor<?x8x?x512xbf16>, %v: tensor<?x8x?x512xbf16>) -> tensor<?x32x?x512xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64, causal = #attn.causal<bottom_right>} : tensor<?x32x?x512xbf16>, tensor<?x8x?x512xbf16>, tensor<?x8x?x512xbf16> -> tensor<8x?x32x?x512xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x512xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x512xbf16>
  return %o : tensor<?x32x?x512xbf16>
}
func.func @decode_f16_d512_dv512_none(%q: tensor<?x32x?x512xf16>, %k: tensor<?x8x?x512xf16>, %v: tensor<?x8x?x512xf16>) -> tensor<?x32x?x512xf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x512xf16>, tensor<?x8x?x512xf16>, tensor<?x8x?x512xf16> -> tensor<8x?x32x?x512xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x512xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x512xf16>
  return %o : tensor<?x32x?x512xf16>
}
func.func @decode_bf16_d576_dv512_none(%q: tensor<?x128x?x576xbf16>, %k: tensor<?x1x?x576xbf16>, %v: tensor<?x1x?x512xbf16>) -> tensor<?x128x?x512xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x128x?x576xbf16>, tensor<?x1x?x576xbf16>, tensor<?x1x?x512xbf16> -> tensor<8x?x128x?x512xf32>, tensor<8x?x128x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x128x?x512xf32>, tensor<8x?x128x?xf32> -> tensor<?x128x?x512xbf16>
  return %o : tensor<?x128x?x512xbf16>
}
func.func @decode_bf16_d576_dv512_bottom_right(%q: tensor<?x128x?x576xbf16>, %k: tensor<?x1x?x576xbf16>, %v: tensor<?x1x?x512xbf16>) -> tensor<?x128x?x512xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64, causal = #attn.causal<bottom_right>} : tensor<?x128x?x576xbf16>, tensor<?x1x?x576xbf16>, tensor<?x1x?x512xbf16> -> tensor<8x?x128x?x512xf32>, tensor<8x?x128x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x128x?x512xf32>, tensor<8x?x128x?xf32> -> tensor<?x128x?x512xbf16>
  return %o : tensor<?x128x?x512xbf16>
}
func.func @paged_bf16_d576_dv512_none(%q: tensor<?x?x128x576xbf16>, %k: tensor<?x?x1x576xbf16>, %v: tensor<?x?x1x512xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x128x512xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, layout = #attn.layout<bshd>} : tensor<?x?x128x576xbf16>, tensor<?x?x1x576xbf16>, tensor<?x?x1x512xbf16> -> tensor<8x?x128x?x512xf32>, tensor<8x?x128x?xf32>
  %o = attn.combine %po, %pl {layout = #attn.layout<bshd>} : tensor<8x?x128x?x512xf32>, tensor<8x?x128x?xf32> -> tensor<?x?x128x512xbf16>
  return %o : tensor<?x?x128x512xbf16>
}
func.func @paged_bf16_d576_dv512_bottom_right(%q: tensor<?x?x128x576xbf16>, %k: tensor<?x?x1x576xbf16>, %v: tensor<?x?x1x512xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x128x512xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<?x?x128x576xbf16>, tensor<?x?x1x576xbf16>, tensor<?x?x1x512xbf16> -> tensor<8x?x128x?x512xf32>, tensor<8x?x128x?xf32>
  %o = attn.combine %po, %pl {layout = #attn.layout<bshd>} : tensor<8x?x128x?x512xf32>, tensor<8x?x128x?xf32> -> tensor<?x?x128x512xbf16>
  return %o : tensor<?x?x128x512xbf16>
}

func.func @bwd_bf16_d320_dv320_none(%q: tensor<?x16x?x320xbf16>, %k: tensor<?x16x?x320xbf16>, %v: tensor<?x16x?x320xbf16>, %o: tensor<?x16x?x320xbf16>, %do: tensor<?x16x?x320xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x320xbf16>, tensor<?x16x?x320xbf16>, tensor<?x16x?x320xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<?x16x?x320xbf16>, tensor<?x16x?x320xbf16>, tensor<?x16x?x320xbf16>, tensor<?x16x?x320xbf16>, tensor<?x16x?x320xbf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x320xbf16>, tensor<?x16x?x320xbf16>, tensor<?x16x?x320xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x320xbf16>, tensor<?x16x?x320xbf16>, tensor<?x16x?x320xbf16>
}

func.func @bwd_bf16_d512_dv512_none(%q: tensor<?x16x?x512xbf16>, %k: tensor<?x16x?x512xbf16>, %v: tensor<?x16x?x512xbf16>, %o: tensor<?x16x?x512xbf16>, %do: tensor<?x16x?x512xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>
}

func.func @bwd_bf16_d512_dv512_bottom_right(%q: tensor<?x16x?x512xbf16>, %k: tensor<?x16x?x512xbf16>, %v: tensor<?x16x?x512xbf16>, %o: tensor<?x16x?x512xbf16>, %do: tensor<?x16x?x512xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>}
      : tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>
}

func.func @bwd_f16_d512_dv512_top_left(%q: tensor<?x16x?x512xf16>, %k: tensor<?x16x?x512xf16>, %v: tensor<?x16x?x512xf16>, %o: tensor<?x16x?x512xf16>, %do: tensor<?x16x?x512xf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x512xf16>, tensor<?x16x?x512xf16>, tensor<?x16x?x512xf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<top_left>}
      : tensor<?x16x?x512xf16>, tensor<?x16x?x512xf16>, tensor<?x16x?x512xf16>, tensor<?x16x?x512xf16>, tensor<?x16x?x512xf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x512xf16>, tensor<?x16x?x512xf16>, tensor<?x16x?x512xf16>
  return %dq, %dk, %dv : tensor<?x16x?x512xf16>, tensor<?x16x?x512xf16>, tensor<?x16x?x512xf16>
}

func.func @bwd_bf16_d300_dv300_none(%q: tensor<?x16x?x300xbf16>, %k: tensor<?x16x?x300xbf16>, %v: tensor<?x16x?x300xbf16>, %o: tensor<?x16x?x300xbf16>, %do: tensor<?x16x?x300xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x300xbf16>, tensor<?x16x?x300xbf16>, tensor<?x16x?x300xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<?x16x?x300xbf16>, tensor<?x16x?x300xbf16>, tensor<?x16x?x300xbf16>, tensor<?x16x?x300xbf16>, tensor<?x16x?x300xbf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x300xbf16>, tensor<?x16x?x300xbf16>, tensor<?x16x?x300xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x300xbf16>, tensor<?x16x?x300xbf16>, tensor<?x16x?x300xbf16>
}

func.func @bwd_bf16_d512_dv128_none(%q: tensor<?x16x?x512xbf16>, %k: tensor<?x16x?x512xbf16>, %v: tensor<?x16x?x128xbf16>, %o: tensor<?x16x?x128xbf16>, %do: tensor<?x16x?x128xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x512xbf16>, tensor<?x16x?x512xbf16>, tensor<?x16x?x128xbf16>
}
