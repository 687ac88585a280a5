// A causal GQA attention with a sliding window, f16, FlashAttention's BSHD
// layout, returning the log-sum-exp too.
func.func @attention(%q: tensor<2x77x8x64xf16>, %k: tensor<2x129x2x64xf16>,
                     %v: tensor<2x129x2x32xf16>)
    -> (tensor<2x77x8x32xf16>, tensor<2x8x77xf32>) {
  %o, %lse = attn.attention %q, %k, %v
      {causal = #attn.causal<bottom_right>, window = 48 : i64,
       layout = #attn.layout<bshd>}
      : tensor<2x77x8x64xf16>, tensor<2x129x2x64xf16>, tensor<2x129x2x32xf16>
      -> tensor<2x77x8x32xf16>, tensor<2x8x77xf32>
  return %o, %lse : tensor<2x77x8x32xf16>, tensor<2x8x77xf32>
}
