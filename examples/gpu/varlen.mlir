// Packed-batch (variable-length) forward kernels (serving): varlen
// prefill, the sequences' queries and keys back to back with their
// offsets, and chunked prefill, new queries packed against a paged cache
// (kv_lens and block_table). Sizes only fix what a kernel is specialised
// for (element type, head dims, causal kind); the rows, pages, batch and
// head counts are read at run time. Written in bshd (FlashAttention's
// [T, H, D] with a leading 1); the kernels take any strides.
// `cat examples/gpu/kernels.mlir examples/gpu/paged.mlir
// examples/gpu/varlen.mlir | attn-compile -` adds them to the shipped set.

func.func @varlen_bf16_d64_none(%q: tensor<1x?x32x64xbf16>, %k: tensor<1x?x8x64xbf16>, %v: tensor<1x?x8x64xbf16>, %qoff: tensor<?xi32>, %koff: tensor<?xi32>) -> (tensor<1x?x32x64xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) key_offsets(%koff : tensor<?xi32>) {layout = #attn.layout<bshd>} : tensor<1x?x32x64xbf16>, tensor<1x?x8x64xbf16>, tensor<1x?x8x64xbf16> -> tensor<1x?x32x64xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x64xbf16>, tensor<1x32x?xf32>
}

func.func @chunked_bf16_d64_none(%q: tensor<1x?x32x64xbf16>, %k: tensor<?x?x8x64xbf16>, %v: tensor<?x?x8x64xbf16>, %qoff: tensor<?xi32>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x32x64xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>} : tensor<1x?x32x64xbf16>, tensor<?x?x8x64xbf16>, tensor<?x?x8x64xbf16> -> tensor<1x?x32x64xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x64xbf16>, tensor<1x32x?xf32>
}

func.func @varlen_bf16_d64_top_left(%q: tensor<1x?x32x64xbf16>, %k: tensor<1x?x8x64xbf16>, %v: tensor<1x?x8x64xbf16>, %qoff: tensor<?xi32>, %koff: tensor<?xi32>) -> (tensor<1x?x32x64xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) key_offsets(%koff : tensor<?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<top_left>} : tensor<1x?x32x64xbf16>, tensor<1x?x8x64xbf16>, tensor<1x?x8x64xbf16> -> tensor<1x?x32x64xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x64xbf16>, tensor<1x32x?xf32>
}

func.func @chunked_bf16_d64_top_left(%q: tensor<1x?x32x64xbf16>, %k: tensor<?x?x8x64xbf16>, %v: tensor<?x?x8x64xbf16>, %qoff: tensor<?xi32>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x32x64xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<top_left>} : tensor<1x?x32x64xbf16>, tensor<?x?x8x64xbf16>, tensor<?x?x8x64xbf16> -> tensor<1x?x32x64xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x64xbf16>, tensor<1x32x?xf32>
}

func.func @varlen_bf16_d64_bottom_right(%q: tensor<1x?x32x64xbf16>, %k: tensor<1x?x8x64xbf16>, %v: tensor<1x?x8x64xbf16>, %qoff: tensor<?xi32>, %koff: tensor<?xi32>) -> (tensor<1x?x32x64xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) key_offsets(%koff : tensor<?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<1x?x32x64xbf16>, tensor<1x?x8x64xbf16>, tensor<1x?x8x64xbf16> -> tensor<1x?x32x64xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x64xbf16>, tensor<1x32x?xf32>
}

func.func @chunked_bf16_d64_bottom_right(%q: tensor<1x?x32x64xbf16>, %k: tensor<?x?x8x64xbf16>, %v: tensor<?x?x8x64xbf16>, %qoff: tensor<?xi32>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x32x64xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<1x?x32x64xbf16>, tensor<?x?x8x64xbf16>, tensor<?x?x8x64xbf16> -> tensor<1x?x32x64xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x64xbf16>, tensor<1x32x?xf32>
}

func.func @varlen_bf16_d128_none(%q: tensor<1x?x32x128xbf16>, %k: tensor<1x?x8x128xbf16>, %v: tensor<1x?x8x128xbf16>, %qoff: tensor<?xi32>, %koff: tensor<?xi32>) -> (tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) key_offsets(%koff : tensor<?xi32>) {layout = #attn.layout<bshd>} : tensor<1x?x32x128xbf16>, tensor<1x?x8x128xbf16>, tensor<1x?x8x128xbf16> -> tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>
}

func.func @chunked_bf16_d128_none(%q: tensor<1x?x32x128xbf16>, %k: tensor<?x?x8x128xbf16>, %v: tensor<?x?x8x128xbf16>, %qoff: tensor<?xi32>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>} : tensor<1x?x32x128xbf16>, tensor<?x?x8x128xbf16>, tensor<?x?x8x128xbf16> -> tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>
}

func.func @varlen_bf16_d128_top_left(%q: tensor<1x?x32x128xbf16>, %k: tensor<1x?x8x128xbf16>, %v: tensor<1x?x8x128xbf16>, %qoff: tensor<?xi32>, %koff: tensor<?xi32>) -> (tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) key_offsets(%koff : tensor<?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<top_left>} : tensor<1x?x32x128xbf16>, tensor<1x?x8x128xbf16>, tensor<1x?x8x128xbf16> -> tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>
}

func.func @chunked_bf16_d128_top_left(%q: tensor<1x?x32x128xbf16>, %k: tensor<?x?x8x128xbf16>, %v: tensor<?x?x8x128xbf16>, %qoff: tensor<?xi32>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<top_left>} : tensor<1x?x32x128xbf16>, tensor<?x?x8x128xbf16>, tensor<?x?x8x128xbf16> -> tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>
}

func.func @varlen_bf16_d128_bottom_right(%q: tensor<1x?x32x128xbf16>, %k: tensor<1x?x8x128xbf16>, %v: tensor<1x?x8x128xbf16>, %qoff: tensor<?xi32>, %koff: tensor<?xi32>) -> (tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) key_offsets(%koff : tensor<?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<1x?x32x128xbf16>, tensor<1x?x8x128xbf16>, tensor<1x?x8x128xbf16> -> tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>
}

func.func @chunked_bf16_d128_bottom_right(%q: tensor<1x?x32x128xbf16>, %k: tensor<?x?x8x128xbf16>, %v: tensor<?x?x8x128xbf16>, %qoff: tensor<?xi32>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<1x?x32x128xbf16>, tensor<?x?x8x128xbf16>, tensor<?x?x8x128xbf16> -> tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x128xbf16>, tensor<1x32x?xf32>
}

func.func @varlen_f16_d64_none(%q: tensor<1x?x32x64xf16>, %k: tensor<1x?x8x64xf16>, %v: tensor<1x?x8x64xf16>, %qoff: tensor<?xi32>, %koff: tensor<?xi32>) -> (tensor<1x?x32x64xf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) key_offsets(%koff : tensor<?xi32>) {layout = #attn.layout<bshd>} : tensor<1x?x32x64xf16>, tensor<1x?x8x64xf16>, tensor<1x?x8x64xf16> -> tensor<1x?x32x64xf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x64xf16>, tensor<1x32x?xf32>
}

func.func @chunked_f16_d64_none(%q: tensor<1x?x32x64xf16>, %k: tensor<?x?x8x64xf16>, %v: tensor<?x?x8x64xf16>, %qoff: tensor<?xi32>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x32x64xf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>} : tensor<1x?x32x64xf16>, tensor<?x?x8x64xf16>, tensor<?x?x8x64xf16> -> tensor<1x?x32x64xf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x64xf16>, tensor<1x32x?xf32>
}

func.func @varlen_f16_d64_top_left(%q: tensor<1x?x32x64xf16>, %k: tensor<1x?x8x64xf16>, %v: tensor<1x?x8x64xf16>, %qoff: tensor<?xi32>, %koff: tensor<?xi32>) -> (tensor<1x?x32x64xf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) key_offsets(%koff : tensor<?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<top_left>} : tensor<1x?x32x64xf16>, tensor<1x?x8x64xf16>, tensor<1x?x8x64xf16> -> tensor<1x?x32x64xf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x64xf16>, tensor<1x32x?xf32>
}

func.func @chunked_f16_d64_top_left(%q: tensor<1x?x32x64xf16>, %k: tensor<?x?x8x64xf16>, %v: tensor<?x?x8x64xf16>, %qoff: tensor<?xi32>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x32x64xf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<top_left>} : tensor<1x?x32x64xf16>, tensor<?x?x8x64xf16>, tensor<?x?x8x64xf16> -> tensor<1x?x32x64xf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x64xf16>, tensor<1x32x?xf32>
}

func.func @varlen_f16_d64_bottom_right(%q: tensor<1x?x32x64xf16>, %k: tensor<1x?x8x64xf16>, %v: tensor<1x?x8x64xf16>, %qoff: tensor<?xi32>, %koff: tensor<?xi32>) -> (tensor<1x?x32x64xf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) key_offsets(%koff : tensor<?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<1x?x32x64xf16>, tensor<1x?x8x64xf16>, tensor<1x?x8x64xf16> -> tensor<1x?x32x64xf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x64xf16>, tensor<1x32x?xf32>
}

func.func @chunked_f16_d64_bottom_right(%q: tensor<1x?x32x64xf16>, %k: tensor<?x?x8x64xf16>, %v: tensor<?x?x8x64xf16>, %qoff: tensor<?xi32>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x32x64xf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<1x?x32x64xf16>, tensor<?x?x8x64xf16>, tensor<?x?x8x64xf16> -> tensor<1x?x32x64xf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x64xf16>, tensor<1x32x?xf32>
}

func.func @varlen_f16_d128_none(%q: tensor<1x?x32x128xf16>, %k: tensor<1x?x8x128xf16>, %v: tensor<1x?x8x128xf16>, %qoff: tensor<?xi32>, %koff: tensor<?xi32>) -> (tensor<1x?x32x128xf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) key_offsets(%koff : tensor<?xi32>) {layout = #attn.layout<bshd>} : tensor<1x?x32x128xf16>, tensor<1x?x8x128xf16>, tensor<1x?x8x128xf16> -> tensor<1x?x32x128xf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x128xf16>, tensor<1x32x?xf32>
}

func.func @chunked_f16_d128_none(%q: tensor<1x?x32x128xf16>, %k: tensor<?x?x8x128xf16>, %v: tensor<?x?x8x128xf16>, %qoff: tensor<?xi32>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x32x128xf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>} : tensor<1x?x32x128xf16>, tensor<?x?x8x128xf16>, tensor<?x?x8x128xf16> -> tensor<1x?x32x128xf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x128xf16>, tensor<1x32x?xf32>
}

func.func @varlen_f16_d128_top_left(%q: tensor<1x?x32x128xf16>, %k: tensor<1x?x8x128xf16>, %v: tensor<1x?x8x128xf16>, %qoff: tensor<?xi32>, %koff: tensor<?xi32>) -> (tensor<1x?x32x128xf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) key_offsets(%koff : tensor<?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<top_left>} : tensor<1x?x32x128xf16>, tensor<1x?x8x128xf16>, tensor<1x?x8x128xf16> -> tensor<1x?x32x128xf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x128xf16>, tensor<1x32x?xf32>
}

func.func @chunked_f16_d128_top_left(%q: tensor<1x?x32x128xf16>, %k: tensor<?x?x8x128xf16>, %v: tensor<?x?x8x128xf16>, %qoff: tensor<?xi32>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x32x128xf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<top_left>} : tensor<1x?x32x128xf16>, tensor<?x?x8x128xf16>, tensor<?x?x8x128xf16> -> tensor<1x?x32x128xf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x128xf16>, tensor<1x32x?xf32>
}

func.func @varlen_f16_d128_bottom_right(%q: tensor<1x?x32x128xf16>, %k: tensor<1x?x8x128xf16>, %v: tensor<1x?x8x128xf16>, %qoff: tensor<?xi32>, %koff: tensor<?xi32>) -> (tensor<1x?x32x128xf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) key_offsets(%koff : tensor<?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<1x?x32x128xf16>, tensor<1x?x8x128xf16>, tensor<1x?x8x128xf16> -> tensor<1x?x32x128xf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x128xf16>, tensor<1x32x?xf32>
}

func.func @chunked_f16_d128_bottom_right(%q: tensor<1x?x32x128xf16>, %k: tensor<?x?x8x128xf16>, %v: tensor<?x?x8x128xf16>, %qoff: tensor<?xi32>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x32x128xf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v query_offsets(%qoff : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<1x?x32x128xf16>, tensor<?x?x8x128xf16>, tensor<?x?x8x128xf16> -> tensor<1x?x32x128xf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x?x32x128xf16>, tensor<1x32x?xf32>
}
