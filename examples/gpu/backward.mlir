// The backward kernels the GPU tests and the benchmark use: attention
// gradients (attn.attention_grad, three kernels each) in bf16 and f16 at
// D = 64 and 128, every causal kind, and with mask operands (bf16, D = 64
// and 128). As in
// kernels.mlir the sizes only fix what a kernel is specialised for.
// `attn-compile examples/gpu/backward.mlir -o DIR` writes DIR/attn.manifest
// and DIR/attn_kernels.ptx; concatenated with kernels.mlir it gives one
// module with the forward kernels too.

func.func @bwd_bf16_d64_none(%q: tensor<?x16x?x64xbf16>, %k: tensor<?x16x?x64xbf16>, %v: tensor<?x16x?x64xbf16>, %o: tensor<?x16x?x64xbf16>, %do: tensor<?x16x?x64xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>
}

func.func @bwd_bf16_d64_top_left(%q: tensor<?x16x?x64xbf16>, %k: tensor<?x16x?x64xbf16>, %v: tensor<?x16x?x64xbf16>, %o: tensor<?x16x?x64xbf16>, %do: tensor<?x16x?x64xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<top_left>}
      : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>
}

func.func @bwd_bf16_d64_bottom_right(%q: tensor<?x16x?x64xbf16>, %k: tensor<?x16x?x64xbf16>, %v: tensor<?x16x?x64xbf16>, %o: tensor<?x16x?x64xbf16>, %do: tensor<?x16x?x64xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>}
      : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>
}

func.func @bwd_bf16_d128_none(%q: tensor<?x16x?x128xbf16>, %k: tensor<?x16x?x128xbf16>, %v: tensor<?x16x?x128xbf16>, %o: tensor<?x16x?x128xbf16>, %do: tensor<?x16x?x128xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>
}

func.func @bwd_bf16_d128_top_left(%q: tensor<?x16x?x128xbf16>, %k: tensor<?x16x?x128xbf16>, %v: tensor<?x16x?x128xbf16>, %o: tensor<?x16x?x128xbf16>, %do: tensor<?x16x?x128xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<top_left>}
      : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>
}

func.func @bwd_bf16_d128_bottom_right(%q: tensor<?x16x?x128xbf16>, %k: tensor<?x16x?x128xbf16>, %v: tensor<?x16x?x128xbf16>, %o: tensor<?x16x?x128xbf16>, %do: tensor<?x16x?x128xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>}
      : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>
}

func.func @bwd_f16_d64_none(%q: tensor<?x16x?x64xf16>, %k: tensor<?x16x?x64xf16>, %v: tensor<?x16x?x64xf16>, %o: tensor<?x16x?x64xf16>, %do: tensor<?x16x?x64xf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>
  return %dq, %dk, %dv : tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>
}

func.func @bwd_f16_d64_top_left(%q: tensor<?x16x?x64xf16>, %k: tensor<?x16x?x64xf16>, %v: tensor<?x16x?x64xf16>, %o: tensor<?x16x?x64xf16>, %do: tensor<?x16x?x64xf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<top_left>}
      : tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>
  return %dq, %dk, %dv : tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>
}

func.func @bwd_f16_d64_bottom_right(%q: tensor<?x16x?x64xf16>, %k: tensor<?x16x?x64xf16>, %v: tensor<?x16x?x64xf16>, %o: tensor<?x16x?x64xf16>, %do: tensor<?x16x?x64xf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>}
      : tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>
  return %dq, %dk, %dv : tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>
}

func.func @bwd_f16_d128_none(%q: tensor<?x16x?x128xf16>, %k: tensor<?x16x?x128xf16>, %v: tensor<?x16x?x128xf16>, %o: tensor<?x16x?x128xf16>, %do: tensor<?x16x?x128xf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>
  return %dq, %dk, %dv : tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>
}

func.func @bwd_f16_d128_top_left(%q: tensor<?x16x?x128xf16>, %k: tensor<?x16x?x128xf16>, %v: tensor<?x16x?x128xf16>, %o: tensor<?x16x?x128xf16>, %do: tensor<?x16x?x128xf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<top_left>}
      : tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>
  return %dq, %dk, %dv : tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>
}

func.func @bwd_f16_d128_bottom_right(%q: tensor<?x16x?x128xf16>, %k: tensor<?x16x?x128xf16>, %v: tensor<?x16x?x128xf16>, %o: tensor<?x16x?x128xf16>, %do: tensor<?x16x?x128xf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>}
      : tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>
  return %dq, %dk, %dv : tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>
}

func.func @bwd_bf16_d64_none_addmask(%q: tensor<?x16x?x64xbf16>, %k: tensor<?x16x?x64xbf16>, %v: tensor<?x16x?x64xbf16>, %o: tensor<?x16x?x64xbf16>, %do: tensor<?x16x?x64xbf16>, %lse: tensor<?x16x?xf32>, %m: tensor<?x?xbf16>) -> (tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mask(%m : tensor<?x?xbf16>)
      : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>
}

func.func @bwd_bf16_d64_none_boolmask(%q: tensor<?x16x?x64xbf16>, %k: tensor<?x16x?x64xbf16>, %v: tensor<?x16x?x64xbf16>, %o: tensor<?x16x?x64xbf16>, %do: tensor<?x16x?x64xbf16>, %lse: tensor<?x16x?xf32>, %m: tensor<?x?xi1>) -> (tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mask(%m : tensor<?x?xi1>)
      : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>
}

func.func @bwd_bf16_d128_none_addmask(%q: tensor<?x16x?x128xbf16>, %k: tensor<?x16x?x128xbf16>, %v: tensor<?x16x?x128xbf16>, %o: tensor<?x16x?x128xbf16>, %do: tensor<?x16x?x128xbf16>, %lse: tensor<?x16x?xf32>, %m: tensor<?x?xbf16>) -> (tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mask(%m : tensor<?x?xbf16>)
      : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>
}

func.func @bwd_bf16_d128_none_boolmask(%q: tensor<?x16x?x128xbf16>, %k: tensor<?x16x?x128xbf16>, %v: tensor<?x16x?x128xbf16>, %o: tensor<?x16x?x128xbf16>, %do: tensor<?x16x?x128xbf16>, %lse: tensor<?x16x?xf32>, %m: tensor<?x?xi1>) -> (tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mask(%m : tensor<?x?xi1>)
      : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
      -> tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>
}
