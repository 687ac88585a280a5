// Split-KV decode kernels of 4 warps past D = 128 on sm_80, whose K/V
// rows take more than 8 copy rounds a thread
// (attn-to-ptx-sm80-decode-head-dims.test).
func.func @decode_d136(%q: tensor<?x32x?x136xbf16>, %k: tensor<?x8x?x136xbf16>, %v: tensor<?x8x?x136xbf16>) -> tensor<?x32x?x136xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x136xbf16>, tensor<?x8x?x136xbf16>, tensor<?x8x?x136xbf16> -> tensor<8x?x32x?x136xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x136xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x136xbf16>
  return %o : tensor<?x32x?x136xbf16>
}
func.func @decode_d184(%q: tensor<?x32x?x184xbf16>, %k: tensor<?x8x?x184xbf16>, %v: tensor<?x8x?x184xbf16>) -> tensor<?x32x?x184xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x184xbf16>, tensor<?x8x?x184xbf16>, tensor<?x8x?x184xbf16> -> tensor<8x?x32x?x184xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x184xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x184xbf16>
  return %o : tensor<?x32x?x184xbf16>
}
func.func @decode_d200(%q: tensor<?x32x?x200xbf16>, %k: tensor<?x8x?x200xbf16>, %v: tensor<?x8x?x200xbf16>) -> tensor<?x32x?x200xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x200xbf16>, tensor<?x8x?x200xbf16>, tensor<?x8x?x200xbf16> -> tensor<8x?x32x?x200xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x200xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x200xbf16>
  return %o : tensor<?x32x?x200xbf16>
}
