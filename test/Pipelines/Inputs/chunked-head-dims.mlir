// Chunked prefill kernels (q=packed kv=paged) at head dims beside
// examples/gpu/varlen.mlir's 64 and 128, for attn-to-ptx-chunked-head-dims.test
// (and the GPU tests' varlen cases at D = 96, 112, 160 and 256).
func.func @c96(%q: tensor<1x?x32x96xbf16>, %k: tensor<?x?x8x96xbf16>, %v: tensor<?x?x8x96xbf16>, %qoff: tensor<?xi32>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x32x96xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<1x?x32x96xbf16>, tensor<?x?x8x96xbf16>, tensor<?x?x8x96xbf16> -> tensor<1x?x32x96xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x96xbf16>, tensor<1x32x?xf32>
}
func.func @c160(%q: tensor<1x?x32x160xf16>, %k: tensor<?x?x8x160xf16>, %v: tensor<?x?x8x160xf16>, %qoff: tensor<?xi32>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x32x160xf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<1x?x32x160xf16>, tensor<?x?x8x160xf16>, tensor<?x?x8x160xf16> -> tensor<1x?x32x160xf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x160xf16>, tensor<1x32x?xf32>
}
func.func @c256(%q: tensor<1x?x32x256xbf16>, %k: tensor<?x?x8x256xbf16>, %v: tensor<?x?x8x256xbf16>, %qoff: tensor<?xi32>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x32x256xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<top_left>} : tensor<1x?x32x256xbf16>, tensor<?x?x8x256xbf16>, tensor<?x?x8x256xbf16> -> tensor<1x?x32x256xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x256xbf16>, tensor<1x32x?xf32>
}
func.func @c192(%q: tensor<1x?x32x192xbf16>, %k: tensor<?x?x8x192xbf16>, %v: tensor<?x?x8x128xbf16>, %qoff: tensor<?xi32>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>} : tensor<1x?x32x192xbf16>, tensor<?x?x8x192xbf16>, tensor<?x?x8x128xbf16> -> tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>
}
func.func @c112(%q: tensor<1x?x32x112xf16>, %k: tensor<?x?x8x112xf16>, %v: tensor<?x?x8x112xf16>, %qoff: tensor<?xi32>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x32x112xf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<top_left>} : tensor<1x?x32x112xf16>, tensor<?x?x8x112xf16>, tensor<?x?x8x112xf16> -> tensor<1x?x32x112xf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x112xf16>, tensor<1x32x?xf32>
}
func.func @c111(%q: tensor<1x?x32x111xf16>, %k: tensor<?x?x8x111xf16>, %v: tensor<?x?x8x111xf16>, %qoff: tensor<?xi32>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x32x111xf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>} : tensor<1x?x32x111xf16>, tensor<?x?x8x111xf16>, tensor<?x?x8x111xf16> -> tensor<1x?x32x111xf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x111xf16>, tensor<1x32x?xf32>
}
