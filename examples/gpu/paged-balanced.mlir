// Paged split-KV decode kernels with the work balanced across the batch
// (`balanced`, FlashInfer's plan: chunks of one size for every sequence,
// each taking as many as its length needs; docs/KernelABI.md), in place of
// examples/gpu/paged.mlir's per-sequence splits. The runtime prefers them
// where a module has both. Measured on an H200 (docs/GPU.md, lengths
// spread over 10x): 1.03x to 1.06x the per-sequence kernels at B = 8,
// 0.96x to 0.99x at B = 64, where every CTA's search of the work list
// (2 us, on a warp) and the serial merge of a long sequence's items cost
// more than the balance gains. The pools are
// written [P, page_size, Hkv, D] here (bshd), the cache layout of vLLM and
// FlashInfer; the kernels take any strides.
// `cat examples/gpu/kernels.mlir examples/gpu/paged-balanced.mlir |
// attn-compile -` adds them to the shipped set.

func.func @paged_bf16_d64_none(%q: tensor<?x?x32x64xbf16>, %k: tensor<?x?x8x64xbf16>, %v: tensor<?x?x8x64xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x64xbf16> {
  %po, %pl, %offs = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, balanced, layout = #attn.layout<bshd>} : tensor<?x?x32x64xbf16>, tensor<?x?x8x64xbf16>, tensor<?x?x8x64xbf16> -> tensor<?x1x32x?x64xf32>, tensor<?x1x32x?xf32>, tensor<?xi32>
  %o = attn.combine %po, %pl split_offsets(%offs : tensor<?xi32>) {layout = #attn.layout<bshd>} : tensor<?x1x32x?x64xf32>, tensor<?x1x32x?xf32> -> tensor<?x?x32x64xbf16>
  return %o : tensor<?x?x32x64xbf16>
}

func.func @paged_bf16_d64_top_left(%q: tensor<?x?x32x64xbf16>, %k: tensor<?x?x8x64xbf16>, %v: tensor<?x?x8x64xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x64xbf16> {
  %po, %pl, %offs = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, balanced, layout = #attn.layout<bshd>, causal = #attn.causal<top_left>} : tensor<?x?x32x64xbf16>, tensor<?x?x8x64xbf16>, tensor<?x?x8x64xbf16> -> tensor<?x1x32x?x64xf32>, tensor<?x1x32x?xf32>, tensor<?xi32>
  %o = attn.combine %po, %pl split_offsets(%offs : tensor<?xi32>) {layout = #attn.layout<bshd>} : tensor<?x1x32x?x64xf32>, tensor<?x1x32x?xf32> -> tensor<?x?x32x64xbf16>
  return %o : tensor<?x?x32x64xbf16>
}

func.func @paged_bf16_d64_bottom_right(%q: tensor<?x?x32x64xbf16>, %k: tensor<?x?x8x64xbf16>, %v: tensor<?x?x8x64xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x64xbf16> {
  %po, %pl, %offs = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, balanced, layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<?x?x32x64xbf16>, tensor<?x?x8x64xbf16>, tensor<?x?x8x64xbf16> -> tensor<?x1x32x?x64xf32>, tensor<?x1x32x?xf32>, tensor<?xi32>
  %o = attn.combine %po, %pl split_offsets(%offs : tensor<?xi32>) {layout = #attn.layout<bshd>} : tensor<?x1x32x?x64xf32>, tensor<?x1x32x?xf32> -> tensor<?x?x32x64xbf16>
  return %o : tensor<?x?x32x64xbf16>
}

func.func @paged_bf16_d128_none(%q: tensor<?x?x32x128xbf16>, %k: tensor<?x?x8x128xbf16>, %v: tensor<?x?x8x128xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x128xbf16> {
  %po, %pl, %offs = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, balanced, layout = #attn.layout<bshd>} : tensor<?x?x32x128xbf16>, tensor<?x?x8x128xbf16>, tensor<?x?x8x128xbf16> -> tensor<?x1x32x?x128xf32>, tensor<?x1x32x?xf32>, tensor<?xi32>
  %o = attn.combine %po, %pl split_offsets(%offs : tensor<?xi32>) {layout = #attn.layout<bshd>} : tensor<?x1x32x?x128xf32>, tensor<?x1x32x?xf32> -> tensor<?x?x32x128xbf16>
  return %o : tensor<?x?x32x128xbf16>
}

func.func @paged_bf16_d128_top_left(%q: tensor<?x?x32x128xbf16>, %k: tensor<?x?x8x128xbf16>, %v: tensor<?x?x8x128xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x128xbf16> {
  %po, %pl, %offs = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, balanced, layout = #attn.layout<bshd>, causal = #attn.causal<top_left>} : tensor<?x?x32x128xbf16>, tensor<?x?x8x128xbf16>, tensor<?x?x8x128xbf16> -> tensor<?x1x32x?x128xf32>, tensor<?x1x32x?xf32>, tensor<?xi32>
  %o = attn.combine %po, %pl split_offsets(%offs : tensor<?xi32>) {layout = #attn.layout<bshd>} : tensor<?x1x32x?x128xf32>, tensor<?x1x32x?xf32> -> tensor<?x?x32x128xbf16>
  return %o : tensor<?x?x32x128xbf16>
}

func.func @paged_bf16_d128_bottom_right(%q: tensor<?x?x32x128xbf16>, %k: tensor<?x?x8x128xbf16>, %v: tensor<?x?x8x128xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x128xbf16> {
  %po, %pl, %offs = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, balanced, layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<?x?x32x128xbf16>, tensor<?x?x8x128xbf16>, tensor<?x?x8x128xbf16> -> tensor<?x1x32x?x128xf32>, tensor<?x1x32x?xf32>, tensor<?xi32>
  %o = attn.combine %po, %pl split_offsets(%offs : tensor<?xi32>) {layout = #attn.layout<bshd>} : tensor<?x1x32x?x128xf32>, tensor<?x1x32x?xf32> -> tensor<?x?x32x128xbf16>
  return %o : tensor<?x?x32x128xbf16>
}

func.func @paged_f16_d64_none(%q: tensor<?x?x32x64xf16>, %k: tensor<?x?x8x64xf16>, %v: tensor<?x?x8x64xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x64xf16> {
  %po, %pl, %offs = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, balanced, layout = #attn.layout<bshd>} : tensor<?x?x32x64xf16>, tensor<?x?x8x64xf16>, tensor<?x?x8x64xf16> -> tensor<?x1x32x?x64xf32>, tensor<?x1x32x?xf32>, tensor<?xi32>
  %o = attn.combine %po, %pl split_offsets(%offs : tensor<?xi32>) {layout = #attn.layout<bshd>} : tensor<?x1x32x?x64xf32>, tensor<?x1x32x?xf32> -> tensor<?x?x32x64xf16>
  return %o : tensor<?x?x32x64xf16>
}

func.func @paged_f16_d64_top_left(%q: tensor<?x?x32x64xf16>, %k: tensor<?x?x8x64xf16>, %v: tensor<?x?x8x64xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x64xf16> {
  %po, %pl, %offs = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, balanced, layout = #attn.layout<bshd>, causal = #attn.causal<top_left>} : tensor<?x?x32x64xf16>, tensor<?x?x8x64xf16>, tensor<?x?x8x64xf16> -> tensor<?x1x32x?x64xf32>, tensor<?x1x32x?xf32>, tensor<?xi32>
  %o = attn.combine %po, %pl split_offsets(%offs : tensor<?xi32>) {layout = #attn.layout<bshd>} : tensor<?x1x32x?x64xf32>, tensor<?x1x32x?xf32> -> tensor<?x?x32x64xf16>
  return %o : tensor<?x?x32x64xf16>
}

func.func @paged_f16_d64_bottom_right(%q: tensor<?x?x32x64xf16>, %k: tensor<?x?x8x64xf16>, %v: tensor<?x?x8x64xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x64xf16> {
  %po, %pl, %offs = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, balanced, layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<?x?x32x64xf16>, tensor<?x?x8x64xf16>, tensor<?x?x8x64xf16> -> tensor<?x1x32x?x64xf32>, tensor<?x1x32x?xf32>, tensor<?xi32>
  %o = attn.combine %po, %pl split_offsets(%offs : tensor<?xi32>) {layout = #attn.layout<bshd>} : tensor<?x1x32x?x64xf32>, tensor<?x1x32x?xf32> -> tensor<?x?x32x64xf16>
  return %o : tensor<?x?x32x64xf16>
}

func.func @paged_f16_d128_none(%q: tensor<?x?x32x128xf16>, %k: tensor<?x?x8x128xf16>, %v: tensor<?x?x8x128xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x128xf16> {
  %po, %pl, %offs = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, balanced, layout = #attn.layout<bshd>} : tensor<?x?x32x128xf16>, tensor<?x?x8x128xf16>, tensor<?x?x8x128xf16> -> tensor<?x1x32x?x128xf32>, tensor<?x1x32x?xf32>, tensor<?xi32>
  %o = attn.combine %po, %pl split_offsets(%offs : tensor<?xi32>) {layout = #attn.layout<bshd>} : tensor<?x1x32x?x128xf32>, tensor<?x1x32x?xf32> -> tensor<?x?x32x128xf16>
  return %o : tensor<?x?x32x128xf16>
}

func.func @paged_f16_d128_top_left(%q: tensor<?x?x32x128xf16>, %k: tensor<?x?x8x128xf16>, %v: tensor<?x?x8x128xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x128xf16> {
  %po, %pl, %offs = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, balanced, layout = #attn.layout<bshd>, causal = #attn.causal<top_left>} : tensor<?x?x32x128xf16>, tensor<?x?x8x128xf16>, tensor<?x?x8x128xf16> -> tensor<?x1x32x?x128xf32>, tensor<?x1x32x?xf32>, tensor<?xi32>
  %o = attn.combine %po, %pl split_offsets(%offs : tensor<?xi32>) {layout = #attn.layout<bshd>} : tensor<?x1x32x?x128xf32>, tensor<?x1x32x?xf32> -> tensor<?x?x32x128xf16>
  return %o : tensor<?x?x32x128xf16>
}

func.func @paged_f16_d128_bottom_right(%q: tensor<?x?x32x128xf16>, %k: tensor<?x?x8x128xf16>, %v: tensor<?x?x8x128xf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<?x?x32x128xf16> {
  %po, %pl, %offs = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 8 : i64, balanced, layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<?x?x32x128xf16>, tensor<?x?x8x128xf16>, tensor<?x?x8x128xf16> -> tensor<?x1x32x?x128xf32>, tensor<?x1x32x?xf32>, tensor<?xi32>
  %o = attn.combine %po, %pl split_offsets(%offs : tensor<?xi32>) {layout = #attn.layout<bshd>} : tensor<?x1x32x?x128xf32>, tensor<?x1x32x?xf32> -> tensor<?x?x32x128xf16>
  return %o : tensor<?x?x32x128xf16>
}
