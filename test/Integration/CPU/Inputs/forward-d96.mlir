func.func @forward(%q: tensor<1x2x300x96xbf16>, %k: tensor<1x2x500x96xbf16>, %v: tensor<1x2x500x96xbf16>) -> tensor<1x2x300x96xbf16> {
  %o = attn.attention %q, %k, %v : tensor<1x2x300x96xbf16>, tensor<1x2x500x96xbf16>, tensor<1x2x500x96xbf16> -> tensor<1x2x300x96xbf16>
  return %o : tensor<1x2x300x96xbf16>
}
