// Backward ops of the atomic dQ mode at head dims whose f32 dQ stage is not
// whole 128-byte blocks of the accumulator's rows
// (attn-to-ptx-backward-atomic-head-dims.test).
func.func @d16(%q: tensor<?x8x?x16xbf16>, %k: tensor<?x8x?x16xbf16>, %v: tensor<?x8x?x16xbf16>, %o: tensor<?x8x?x16xbf16>, %do: tensor<?x8x?x16xbf16>, %lse: tensor<?x8x?xf32>) -> (tensor<?x8x?x16xbf16>, tensor<?x8x?x16xbf16>, tensor<?x8x?x16xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x8x?x16xbf16>, tensor<?x8x?x16xbf16>, tensor<?x8x?x16xbf16>, tensor<?x8x?x16xbf16>, tensor<?x8x?x16xbf16>, tensor<?x8x?xf32> -> tensor<?x8x?x16xbf16>, tensor<?x8x?x16xbf16>, tensor<?x8x?x16xbf16>
  return %dq, %dk, %dv : tensor<?x8x?x16xbf16>, tensor<?x8x?x16xbf16>, tensor<?x8x?x16xbf16>
}
func.func @d40(%q: tensor<?x8x?x40xbf16>, %k: tensor<?x8x?x40xbf16>, %v: tensor<?x8x?x40xbf16>, %o: tensor<?x8x?x40xbf16>, %do: tensor<?x8x?x40xbf16>, %lse: tensor<?x8x?xf32>) -> (tensor<?x8x?x40xbf16>, tensor<?x8x?x40xbf16>, tensor<?x8x?x40xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x8x?x40xbf16>, tensor<?x8x?x40xbf16>, tensor<?x8x?x40xbf16>, tensor<?x8x?x40xbf16>, tensor<?x8x?x40xbf16>, tensor<?x8x?xf32> -> tensor<?x8x?x40xbf16>, tensor<?x8x?x40xbf16>, tensor<?x8x?x40xbf16>
  return %dq, %dk, %dv : tensor<?x8x?x40xbf16>, tensor<?x8x?x40xbf16>, tensor<?x8x?x40xbf16>
}
func.func @d80(%q: tensor<?x8x?x80xbf16>, %k: tensor<?x8x?x80xbf16>, %v: tensor<?x8x?x80xbf16>, %o: tensor<?x8x?x80xbf16>, %do: tensor<?x8x?x80xbf16>, %lse: tensor<?x8x?xf32>) -> (tensor<?x8x?x80xbf16>, tensor<?x8x?x80xbf16>, tensor<?x8x?x80xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x8x?x80xbf16>, tensor<?x8x?x80xbf16>, tensor<?x8x?x80xbf16>, tensor<?x8x?x80xbf16>, tensor<?x8x?x80xbf16>, tensor<?x8x?xf32> -> tensor<?x8x?x80xbf16>, tensor<?x8x?x80xbf16>, tensor<?x8x?x80xbf16>
  return %dq, %dk, %dv : tensor<?x8x?x80xbf16>, tensor<?x8x?x80xbf16>, tensor<?x8x?x80xbf16>
}
