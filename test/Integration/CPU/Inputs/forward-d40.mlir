// A forward with head dims 40 and 24, which the tiles pad to 48 and 32.
func.func @f(%q: tensor<1x2x64x40xbf16>, %k: tensor<1x2x64x40xbf16>, %v: tensor<1x2x64x24xbf16>) -> tensor<1x2x64x24xbf16> {
  %o = attn.attention %q, %k, %v {scale = 0.125 : f32} : tensor<1x2x64x40xbf16>, tensor<1x2x64x40xbf16>, tensor<1x2x64x24xbf16> -> tensor<1x2x64x24xbf16>
  return %o : tensor<1x2x64x24xbf16>
}
