// Backward ops at head dims whose sm_80 dK/dV and dQ kernels stream
// smaller tiles past their accumulators (attn-to-ptx-sm80-backward.test).
func.func @d104(%q: tensor<?x8x?x104xbf16>, %k: tensor<?x8x?x104xbf16>, %v: tensor<?x8x?x104xbf16>, %o: tensor<?x8x?x104xbf16>, %do: tensor<?x8x?x104xbf16>, %lse: tensor<?x8x?xf32>) -> (tensor<?x8x?x104xbf16>, tensor<?x8x?x104xbf16>, tensor<?x8x?x104xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x8x?x104xbf16>, tensor<?x8x?x104xbf16>, tensor<?x8x?x104xbf16>, tensor<?x8x?x104xbf16>, tensor<?x8x?x104xbf16>, tensor<?x8x?xf32> -> tensor<?x8x?x104xbf16>, tensor<?x8x?x104xbf16>, tensor<?x8x?x104xbf16>
  return %dq, %dk, %dv : tensor<?x8x?x104xbf16>, tensor<?x8x?x104xbf16>, tensor<?x8x?x104xbf16>
}
func.func @d128(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>, %o: tensor<?x8x?x128xbf16>, %do: tensor<?x8x?x128xbf16>, %lse: tensor<?x8x?xf32>) -> (tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?xf32> -> tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>
}
func.func @d128_mask(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>, %o: tensor<?x8x?x128xbf16>, %do: tensor<?x8x?x128xbf16>, %lse: tensor<?x8x?xf32>, %m: tensor<?x?xbf16>) -> (tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mask(%m : tensor<?x?xbf16>) : tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?xf32> -> tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>
}
func.func @d136(%q: tensor<?x8x?x136xbf16>, %k: tensor<?x8x?x136xbf16>, %v: tensor<?x8x?x136xbf16>, %o: tensor<?x8x?x136xbf16>, %do: tensor<?x8x?x136xbf16>, %lse: tensor<?x8x?xf32>) -> (tensor<?x8x?x136xbf16>, tensor<?x8x?x136xbf16>, tensor<?x8x?x136xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x8x?x136xbf16>, tensor<?x8x?x136xbf16>, tensor<?x8x?x136xbf16>, tensor<?x8x?x136xbf16>, tensor<?x8x?x136xbf16>, tensor<?x8x?xf32> -> tensor<?x8x?x136xbf16>, tensor<?x8x?x136xbf16>, tensor<?x8x?x136xbf16>
  return %dq, %dk, %dv : tensor<?x8x?x136xbf16>, tensor<?x8x?x136xbf16>, tensor<?x8x?x136xbf16>
}
func.func @d160(%q: tensor<?x8x?x160xbf16>, %k: tensor<?x8x?x160xbf16>, %v: tensor<?x8x?x160xbf16>, %o: tensor<?x8x?x160xbf16>, %do: tensor<?x8x?x160xbf16>, %lse: tensor<?x8x?xf32>) -> (tensor<?x8x?x160xbf16>, tensor<?x8x?x160xbf16>, tensor<?x8x?x160xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<top_left>} : tensor<?x8x?x160xbf16>, tensor<?x8x?x160xbf16>, tensor<?x8x?x160xbf16>, tensor<?x8x?x160xbf16>, tensor<?x8x?x160xbf16>, tensor<?x8x?xf32> -> tensor<?x8x?x160xbf16>, tensor<?x8x?x160xbf16>, tensor<?x8x?x160xbf16>
  return %dq, %dk, %dv : tensor<?x8x?x160xbf16>, tensor<?x8x?x160xbf16>, tensor<?x8x?x160xbf16>
}
func.func @d192(%q: tensor<?x8x?x192xbf16>, %k: tensor<?x8x?x192xbf16>, %v: tensor<?x8x?x192xbf16>, %o: tensor<?x8x?x192xbf16>, %do: tensor<?x8x?x192xbf16>, %lse: tensor<?x8x?xf32>) -> (tensor<?x8x?x192xbf16>, tensor<?x8x?x192xbf16>, tensor<?x8x?x192xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<top_left>} : tensor<?x8x?x192xbf16>, tensor<?x8x?x192xbf16>, tensor<?x8x?x192xbf16>, tensor<?x8x?x192xbf16>, tensor<?x8x?x192xbf16>, tensor<?x8x?xf32> -> tensor<?x8x?x192xbf16>, tensor<?x8x?x192xbf16>, tensor<?x8x?x192xbf16>
  return %dq, %dk, %dv : tensor<?x8x?x192xbf16>, tensor<?x8x?x192xbf16>, tensor<?x8x?x192xbf16>
}
func.func @d224(%q: tensor<?x8x?x224xf16>, %k: tensor<?x8x?x224xf16>, %v: tensor<?x8x?x224xf16>, %o: tensor<?x8x?x224xf16>, %do: tensor<?x8x?x224xf16>, %lse: tensor<?x8x?xf32>) -> (tensor<?x8x?x224xf16>, tensor<?x8x?x224xf16>, tensor<?x8x?x224xf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x8x?x224xf16>, tensor<?x8x?x224xf16>, tensor<?x8x?x224xf16>, tensor<?x8x?x224xf16>, tensor<?x8x?x224xf16>, tensor<?x8x?xf32> -> tensor<?x8x?x224xf16>, tensor<?x8x?x224xf16>, tensor<?x8x?x224xf16>
  return %dq, %dk, %dv : tensor<?x8x?x224xf16>, tensor<?x8x?x224xf16>, tensor<?x8x?x224xf16>
}
func.func @d232(%q: tensor<?x8x?x232xbf16>, %k: tensor<?x8x?x232xbf16>, %v: tensor<?x8x?x232xbf16>, %o: tensor<?x8x?x232xbf16>, %do: tensor<?x8x?x232xbf16>, %lse: tensor<?x8x?xf32>) -> (tensor<?x8x?x232xbf16>, tensor<?x8x?x232xbf16>, tensor<?x8x?x232xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x8x?x232xbf16>, tensor<?x8x?x232xbf16>, tensor<?x8x?x232xbf16>, tensor<?x8x?x232xbf16>, tensor<?x8x?x232xbf16>, tensor<?x8x?xf32> -> tensor<?x8x?x232xbf16>, tensor<?x8x?x232xbf16>, tensor<?x8x?x232xbf16>
  return %dq, %dk, %dv : tensor<?x8x?x232xbf16>, tensor<?x8x?x232xbf16>, tensor<?x8x?x232xbf16>
}
func.func @d256(%q: tensor<?x8x?x256xbf16>, %k: tensor<?x8x?x256xbf16>, %v: tensor<?x8x?x256xbf16>, %o: tensor<?x8x?x256xbf16>, %do: tensor<?x8x?x256xbf16>, %lse: tensor<?x8x?xf32>) -> (tensor<?x8x?x256xbf16>, tensor<?x8x?x256xbf16>, tensor<?x8x?x256xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>} : tensor<?x8x?x256xbf16>, tensor<?x8x?x256xbf16>, tensor<?x8x?x256xbf16>, tensor<?x8x?x256xbf16>, tensor<?x8x?x256xbf16>, tensor<?x8x?xf32> -> tensor<?x8x?x256xbf16>, tensor<?x8x?x256xbf16>, tensor<?x8x?x256xbf16>
  return %dq, %dk, %dv : tensor<?x8x?x256xbf16>, tensor<?x8x?x256xbf16>, tensor<?x8x?x256xbf16>
}
func.func @d59(%q: tensor<?x8x?x59xbf16>, %k: tensor<?x8x?x59xbf16>, %v: tensor<?x8x?x59xbf16>, %o: tensor<?x8x?x59xbf16>, %do: tensor<?x8x?x59xbf16>, %lse: tensor<?x8x?xf32>) -> (tensor<?x8x?x59xbf16>, tensor<?x8x?x59xbf16>, tensor<?x8x?x59xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>} : tensor<?x8x?x59xbf16>, tensor<?x8x?x59xbf16>, tensor<?x8x?x59xbf16>, tensor<?x8x?x59xbf16>, tensor<?x8x?x59xbf16>, tensor<?x8x?xf32> -> tensor<?x8x?x59xbf16>, tensor<?x8x?x59xbf16>, tensor<?x8x?x59xbf16>
  return %dq, %dk, %dv : tensor<?x8x?x59xbf16>, tensor<?x8x?x59xbf16>, tensor<?x8x?x59xbf16>
}
