// Paged split-KV decode kernels (serving): K and V in a page pool read
// through a block table, each sequence with its own key count. The sizes
// only fix what a kernel is specialised for (element type, head dims,
// causal kind); page size, pool size, batch, heads and lengths are read at
// run time. The pools are written [P, page_size, Hkv, D] here (bshd), the
// cache layout of vLLM and FlashInfer; the kernels take any strides.
// `cat examples/gpu/kernels.mlir examples/gpu/paged.mlir | attn-compile -`
// adds them to the shipped set (the combine kernels are shared).

func.func @paged_bf16_d64_none(%q: tensor<?x?x32x64xbf16>, %k: tensor<?x?x8x64xbf16>, %v: tensor<?x?x8x64xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x64xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, layout = #attn.layout<bshd>} : tensor<?x?x32x64xbf16>, tensor<?x?x8x64xbf16>, tensor<?x?x8x64xbf16> -> tensor<8x?x32x?x64xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl {layout = #attn.layout<bshd>} : tensor<8x?x32x?x64xf32>, tensor<8x?x32x?xf32> -> tensor<?x?x32x64xbf16>
  return %o : tensor<?x?x32x64xbf16>
}

func.func @paged_bf16_d64_top_left(%q: tensor<?x?x32x64xbf16>, %k: tensor<?x?x8x64xbf16>, %v: tensor<?x?x8x64xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x64xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, layout = #attn.layout<bshd>, causal = #attn.causal<top_left>} : tensor<?x?x32x64xbf16>, tensor<?x?x8x64xbf16>, tensor<?x?x8x64xbf16> -> tensor<8x?x32x?x64xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl {layout = #attn.layout<bshd>} : tensor<8x?x32x?x64xf32>, tensor<8x?x32x?xf32> -> tensor<?x?x32x64xbf16>
  return %o : tensor<?x?x32x64xbf16>
}

func.func @paged_bf16_d64_bottom_right(%q: tensor<?x?x32x64xbf16>, %k: tensor<?x?x8x64xbf16>, %v: tensor<?x?x8x64xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x64xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<?x?x32x64xbf16>, tensor<?x?x8x64xbf16>, tensor<?x?x8x64xbf16> -> tensor<8x?x32x?x64xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl {layout = #attn.layout<bshd>} : tensor<8x?x32x?x64xf32>, tensor<8x?x32x?xf32> -> tensor<?x?x32x64xbf16>
  return %o : tensor<?x?x32x64xbf16>
}

func.func @paged_bf16_d128_none(%q: tensor<?x?x32x128xbf16>, %k: tensor<?x?x8x128xbf16>, %v: tensor<?x?x8x128xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x128xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, layout = #attn.layout<bshd>} : tensor<?x?x32x128xbf16>, tensor<?x?x8x128xbf16>, tensor<?x?x8x128xbf16> -> tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl {layout = #attn.layout<bshd>} : tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32> -> tensor<?x?x32x128xbf16>
  return %o : tensor<?x?x32x128xbf16>
}

func.func @paged_bf16_d128_top_left(%q: tensor<?x?x32x128xbf16>, %k: tensor<?x?x8x128xbf16>, %v: tensor<?x?x8x128xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x128xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, layout = #attn.layout<bshd>, causal = #attn.causal<top_left>} : tensor<?x?x32x128xbf16>, tensor<?x?x8x128xbf16>, tensor<?x?x8x128xbf16> -> tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl {layout = #attn.layout<bshd>} : tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32> -> tensor<?x?x32x128xbf16>
  return %o : tensor<?x?x32x128xbf16>
}

func.func @paged_bf16_d128_bottom_right(%q: tensor<?x?x32x128xbf16>, %k: tensor<?x?x8x128xbf16>, %v: tensor<?x?x8x128xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x128xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<?x?x32x128xbf16>, tensor<?x?x8x128xbf16>, tensor<?x?x8x128xbf16> -> tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl {layout = #attn.layout<bshd>} : tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32> -> tensor<?x?x32x128xbf16>
  return %o : tensor<?x?x32x128xbf16>
}

func.func @paged_f16_d64_none(%q: tensor<?x?x32x64xf16>, %k: tensor<?x?x8x64xf16>, %v: tensor<?x?x8x64xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x64xf16> {
  %po, %pl = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, layout = #attn.layout<bshd>} : tensor<?x?x32x64xf16>, tensor<?x?x8x64xf16>, tensor<?x?x8x64xf16> -> tensor<8x?x32x?x64xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl {layout = #attn.layout<bshd>} : tensor<8x?x32x?x64xf32>, tensor<8x?x32x?xf32> -> tensor<?x?x32x64xf16>
  return %o : tensor<?x?x32x64xf16>
}

func.func @paged_f16_d64_top_left(%q: tensor<?x?x32x64xf16>, %k: tensor<?x?x8x64xf16>, %v: tensor<?x?x8x64xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x64xf16> {
  %po, %pl = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, layout = #attn.layout<bshd>, causal = #attn.causal<top_left>} : tensor<?x?x32x64xf16>, tensor<?x?x8x64xf16>, tensor<?x?x8x64xf16> -> tensor<8x?x32x?x64xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl {layout = #attn.layout<bshd>} : tensor<8x?x32x?x64xf32>, tensor<8x?x32x?xf32> -> tensor<?x?x32x64xf16>
  return %o : tensor<?x?x32x64xf16>
}

func.func @paged_f16_d64_bottom_right(%q: tensor<?x?x32x64xf16>, %k: tensor<?x?x8x64xf16>, %v: tensor<?x?x8x64xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x64xf16> {
  %po, %pl = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<?x?x32x64xf16>, tensor<?x?x8x64xf16>, tensor<?x?x8x64xf16> -> tensor<8x?x32x?x64xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl {layout = #attn.layout<bshd>} : tensor<8x?x32x?x64xf32>, tensor<8x?x32x?xf32> -> tensor<?x?x32x64xf16>
  return %o : tensor<?x?x32x64xf16>
}

func.func @paged_f16_d128_none(%q: tensor<?x?x32x128xf16>, %k: tensor<?x?x8x128xf16>, %v: tensor<?x?x8x128xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x128xf16> {
  %po, %pl = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, layout = #attn.layout<bshd>} : tensor<?x?x32x128xf16>, tensor<?x?x8x128xf16>, tensor<?x?x8x128xf16> -> tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl {layout = #attn.layout<bshd>} : tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32> -> tensor<?x?x32x128xf16>
  return %o : tensor<?x?x32x128xf16>
}

func.func @paged_f16_d128_top_left(%q: tensor<?x?x32x128xf16>, %k: tensor<?x?x8x128xf16>, %v: tensor<?x?x8x128xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x128xf16> {
  %po, %pl = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, layout = #attn.layout<bshd>, causal = #attn.causal<top_left>} : tensor<?x?x32x128xf16>, tensor<?x?x8x128xf16>, tensor<?x?x8x128xf16> -> tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl {layout = #attn.layout<bshd>} : tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32> -> tensor<?x?x32x128xf16>
  return %o : tensor<?x?x32x128xf16>
}

func.func @paged_f16_d128_bottom_right(%q: tensor<?x?x32x128xf16>, %k: tensor<?x?x8x128xf16>, %v: tensor<?x?x8x128xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x128xf16> {
  %po, %pl = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<?x?x32x128xf16>, tensor<?x?x8x128xf16>, tensor<?x?x8x128xf16> -> tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl {layout = #attn.layout<bshd>} : tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32> -> tensor<?x?x32x128xf16>
  return %o : tensor<?x?x32x128xf16>
}
