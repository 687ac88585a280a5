// Split-KV decode kernels past D = 128 on sm_80 whose K/V rows take more
// than 8 copy rounds a thread: 4 warps (D = 136 to 200) and 2 warps
// (D = 216 to 240) (attn-to-ptx-sm80-decode-head-dims.test).
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
func.func @decode_d216(%q: tensor<?x32x?x216xbf16>, %k: tensor<?x8x?x216xbf16>, %v: tensor<?x8x?x216xbf16>) -> tensor<?x32x?x216xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x216xbf16>, tensor<?x8x?x216xbf16>, tensor<?x8x?x216xbf16> -> tensor<8x?x32x?x216xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x216xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x216xbf16>
  return %o : tensor<?x32x?x216xbf16>
}
func.func @decode_d224(%q: tensor<?x32x?x224xbf16>, %k: tensor<?x8x?x224xbf16>, %v: tensor<?x8x?x224xbf16>) -> tensor<?x32x?x224xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x224xbf16>, tensor<?x8x?x224xbf16>, tensor<?x8x?x224xbf16> -> tensor<8x?x32x?x224xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x224xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x224xbf16>
  return %o : tensor<?x32x?x224xbf16>
}
func.func @decode_d232(%q: tensor<?x32x?x232xbf16>, %k: tensor<?x8x?x232xbf16>, %v: tensor<?x8x?x232xbf16>) -> tensor<?x32x?x232xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x232xbf16>, tensor<?x8x?x232xbf16>, tensor<?x8x?x232xbf16> -> tensor<8x?x32x?x232xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x232xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x232xbf16>
  return %o : tensor<?x32x?x232xbf16>
}
func.func @decode_d240(%q: tensor<?x32x?x240xbf16>, %k: tensor<?x8x?x240xbf16>, %v: tensor<?x8x?x240xbf16>) -> tensor<?x32x?x240xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x240xbf16>, tensor<?x8x?x240xbf16>, tensor<?x8x?x240xbf16> -> tensor<8x?x32x?x240xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x240xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x240xbf16>
  return %o : tensor<?x32x?x240xbf16>
}
