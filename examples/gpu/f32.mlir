// f32 kernels (sm_80's mapping on every chip: mma.sync m16n8k8 on TF32
// parts, 3xTF32 by default, one TF32 product with `attn-compile --tf32`):
// forward at D = 64, 128 and 256, every causal kind; split-KV decode and
// its combine at the same head dims; the backward at D = 64 and 128. The
// GPU tests' f32 cases and bench/bench_f32.py use them.
// `attn-compile examples/gpu/f32.mlir -o DIR` writes DIR/attn.manifest and
// DIR/attn_kernels.ptx.

func.func @fwd_f32_d64_none(%q: tensor<?x16x?x64xf32>, %k: tensor<?x16x?x64xf32>, %v: tensor<?x16x?x64xf32>) -> (tensor<?x16x?x64xf32>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32> -> tensor<?x16x?x64xf32>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xf32>, tensor<?x16x?xf32>
}

func.func @fwd_f32_d64_top_left(%q: tensor<?x16x?x64xf32>, %k: tensor<?x16x?x64xf32>, %v: tensor<?x16x?x64xf32>) -> (tensor<?x16x?x64xf32>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32> -> tensor<?x16x?x64xf32>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xf32>, tensor<?x16x?xf32>
}

func.func @fwd_f32_d64_bottom_right(%q: tensor<?x16x?x64xf32>, %k: tensor<?x16x?x64xf32>, %v: tensor<?x16x?x64xf32>) -> (tensor<?x16x?x64xf32>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32> -> tensor<?x16x?x64xf32>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xf32>, tensor<?x16x?xf32>
}

func.func @decode_f32_d64_none(%q: tensor<?x32x?x64xf32>, %k: tensor<?x8x?x64xf32>, %v: tensor<?x8x?x64xf32>) -> tensor<?x32x?x64xf32> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32> -> tensor<8x?x32x?x64xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x64xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x64xf32>
  return %o : tensor<?x32x?x64xf32>
}

func.func @fwd_f32_d128_none(%q: tensor<?x16x?x128xf32>, %k: tensor<?x16x?x128xf32>, %v: tensor<?x16x?x128xf32>) -> (tensor<?x16x?x128xf32>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32> -> tensor<?x16x?x128xf32>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xf32>, tensor<?x16x?xf32>
}

func.func @fwd_f32_d128_top_left(%q: tensor<?x16x?x128xf32>, %k: tensor<?x16x?x128xf32>, %v: tensor<?x16x?x128xf32>) -> (tensor<?x16x?x128xf32>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32> -> tensor<?x16x?x128xf32>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xf32>, tensor<?x16x?xf32>
}

func.func @fwd_f32_d128_bottom_right(%q: tensor<?x16x?x128xf32>, %k: tensor<?x16x?x128xf32>, %v: tensor<?x16x?x128xf32>) -> (tensor<?x16x?x128xf32>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32> -> tensor<?x16x?x128xf32>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xf32>, tensor<?x16x?xf32>
}

func.func @decode_f32_d128_none(%q: tensor<?x32x?x128xf32>, %k: tensor<?x8x?x128xf32>, %v: tensor<?x8x?x128xf32>) -> tensor<?x32x?x128xf32> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x128xf32>, tensor<?x8x?x128xf32>, tensor<?x8x?x128xf32> -> tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x128xf32>
  return %o : tensor<?x32x?x128xf32>
}

func.func @fwd_f32_d256_none(%q: tensor<?x16x?x256xf32>, %k: tensor<?x16x?x256xf32>, %v: tensor<?x16x?x256xf32>) -> (tensor<?x16x?x256xf32>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x256xf32>, tensor<?x16x?x256xf32>, tensor<?x16x?x256xf32> -> tensor<?x16x?x256xf32>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x256xf32>, tensor<?x16x?xf32>
}

func.func @fwd_f32_d256_top_left(%q: tensor<?x16x?x256xf32>, %k: tensor<?x16x?x256xf32>, %v: tensor<?x16x?x256xf32>) -> (tensor<?x16x?x256xf32>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x16x?x256xf32>, tensor<?x16x?x256xf32>, tensor<?x16x?x256xf32> -> tensor<?x16x?x256xf32>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x256xf32>, tensor<?x16x?xf32>
}

func.func @fwd_f32_d256_bottom_right(%q: tensor<?x16x?x256xf32>, %k: tensor<?x16x?x256xf32>, %v: tensor<?x16x?x256xf32>) -> (tensor<?x16x?x256xf32>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x256xf32>, tensor<?x16x?x256xf32>, tensor<?x16x?x256xf32> -> tensor<?x16x?x256xf32>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x256xf32>, tensor<?x16x?xf32>
}

func.func @decode_f32_d256_none(%q: tensor<?x32x?x256xf32>, %k: tensor<?x8x?x256xf32>, %v: tensor<?x8x?x256xf32>) -> tensor<?x32x?x256xf32> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x256xf32>, tensor<?x8x?x256xf32>, tensor<?x8x?x256xf32> -> tensor<8x?x32x?x256xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x256xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x256xf32>
  return %o : tensor<?x32x?x256xf32>
}

func.func @bwd_f32_d64_none(%q: tensor<?x16x?x64xf32>, %k: tensor<?x16x?x64xf32>, %v: tensor<?x16x?x64xf32>, %o: tensor<?x16x?x64xf32>, %do: tensor<?x16x?x64xf32>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?xf32>
      -> tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>
  return %dq, %dk, %dv : tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>
}

func.func @bwd_f32_d64_top_left(%q: tensor<?x16x?x64xf32>, %k: tensor<?x16x?x64xf32>, %v: tensor<?x16x?x64xf32>, %o: tensor<?x16x?x64xf32>, %do: tensor<?x16x?x64xf32>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<top_left>}
      : tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?xf32>
      -> tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>
  return %dq, %dk, %dv : tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>
}

func.func @bwd_f32_d64_bottom_right(%q: tensor<?x16x?x64xf32>, %k: tensor<?x16x?x64xf32>, %v: tensor<?x16x?x64xf32>, %o: tensor<?x16x?x64xf32>, %do: tensor<?x16x?x64xf32>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>}
      : tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?xf32>
      -> tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>
  return %dq, %dk, %dv : tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>
}

func.func @bwd_f32_d128_none(%q: tensor<?x16x?x128xf32>, %k: tensor<?x16x?x128xf32>, %v: tensor<?x16x?x128xf32>, %o: tensor<?x16x?x128xf32>, %do: tensor<?x16x?x128xf32>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?xf32>
      -> tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>
  return %dq, %dk, %dv : tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>
}

func.func @bwd_f32_d128_top_left(%q: tensor<?x16x?x128xf32>, %k: tensor<?x16x?x128xf32>, %v: tensor<?x16x?x128xf32>, %o: tensor<?x16x?x128xf32>, %do: tensor<?x16x?x128xf32>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<top_left>}
      : tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?xf32>
      -> tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>
  return %dq, %dk, %dv : tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>
}

func.func @bwd_f32_d128_bottom_right(%q: tensor<?x16x?x128xf32>, %k: tensor<?x16x?x128xf32>, %v: tensor<?x16x?x128xf32>, %o: tensor<?x16x?x128xf32>, %do: tensor<?x16x?x128xf32>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>}
      : tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?xf32>
      -> tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>
  return %dq, %dk, %dv : tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>, tensor<?x16x?x128xf32>
}
