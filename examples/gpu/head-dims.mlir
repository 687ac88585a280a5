// Kernels for head dims the tensor cores do not divide (bf16): the tiles
// pad D and Dv inside the kernel (to whole 16-column steps; on sm_90a to
// the cheapest of 16, 32 or 64 once the swizzle is counted), and rows that
// are not whole 16-byte chunks (59, 111) are copied element by element on
// sm_80's mapping. Forward (causal none and bottom-right, LSE), split-KV
// decode and, up to D = 128, the backward; test/GPU/gpu_tests.py runs every
// kernel it finds (head_dim_cases).

func.func @fwd_d8_none(%q: tensor<?x16x?x8xbf16>, %k: tensor<?x16x?x8xbf16>, %v: tensor<?x16x?x8xbf16>) -> (tensor<?x16x?x8xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16> -> tensor<?x16x?x8xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x8xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_d8_bottom_right(%q: tensor<?x16x?x8xbf16>, %k: tensor<?x16x?x8xbf16>, %v: tensor<?x16x?x8xbf16>) -> (tensor<?x16x?x8xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16> -> tensor<?x16x?x8xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x8xbf16>, tensor<?x16x?xf32>
}
func.func @decode_d8(%q: tensor<?x32x?x8xbf16>, %k: tensor<?x8x?x8xbf16>, %v: tensor<?x8x?x8xbf16>) -> tensor<?x32x?x8xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x8xbf16>, tensor<?x8x?x8xbf16>, tensor<?x8x?x8xbf16> -> tensor<8x?x32x?x8xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x8xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x8xbf16>
  return %o : tensor<?x32x?x8xbf16>
}
func.func @bwd_d8_none(%q: tensor<?x16x?x8xbf16>, %k: tensor<?x16x?x8xbf16>, %v: tensor<?x16x?x8xbf16>, %o: tensor<?x16x?x8xbf16>, %do: tensor<?x16x?x8xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>
}
func.func @bwd_d8_bottom_right(%q: tensor<?x16x?x8xbf16>, %k: tensor<?x16x?x8xbf16>, %v: tensor<?x16x?x8xbf16>, %o: tensor<?x16x?x8xbf16>, %do: tensor<?x16x?x8xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>} : tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>, tensor<?x16x?x8xbf16>
}
func.func @fwd_d24_none(%q: tensor<?x16x?x24xbf16>, %k: tensor<?x16x?x24xbf16>, %v: tensor<?x16x?x24xbf16>) -> (tensor<?x16x?x24xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16> -> tensor<?x16x?x24xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x24xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_d24_bottom_right(%q: tensor<?x16x?x24xbf16>, %k: tensor<?x16x?x24xbf16>, %v: tensor<?x16x?x24xbf16>) -> (tensor<?x16x?x24xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16> -> tensor<?x16x?x24xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x24xbf16>, tensor<?x16x?xf32>
}
func.func @decode_d24(%q: tensor<?x32x?x24xbf16>, %k: tensor<?x8x?x24xbf16>, %v: tensor<?x8x?x24xbf16>) -> tensor<?x32x?x24xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x24xbf16>, tensor<?x8x?x24xbf16>, tensor<?x8x?x24xbf16> -> tensor<8x?x32x?x24xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x24xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x24xbf16>
  return %o : tensor<?x32x?x24xbf16>
}
func.func @bwd_d24_none(%q: tensor<?x16x?x24xbf16>, %k: tensor<?x16x?x24xbf16>, %v: tensor<?x16x?x24xbf16>, %o: tensor<?x16x?x24xbf16>, %do: tensor<?x16x?x24xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>
}
func.func @bwd_d24_bottom_right(%q: tensor<?x16x?x24xbf16>, %k: tensor<?x16x?x24xbf16>, %v: tensor<?x16x?x24xbf16>, %o: tensor<?x16x?x24xbf16>, %do: tensor<?x16x?x24xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>} : tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>
}
func.func @fwd_d40_none(%q: tensor<?x16x?x40xbf16>, %k: tensor<?x16x?x40xbf16>, %v: tensor<?x16x?x40xbf16>) -> (tensor<?x16x?x40xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16> -> tensor<?x16x?x40xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x40xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_d40_bottom_right(%q: tensor<?x16x?x40xbf16>, %k: tensor<?x16x?x40xbf16>, %v: tensor<?x16x?x40xbf16>) -> (tensor<?x16x?x40xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16> -> tensor<?x16x?x40xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x40xbf16>, tensor<?x16x?xf32>
}
func.func @decode_d40(%q: tensor<?x32x?x40xbf16>, %k: tensor<?x8x?x40xbf16>, %v: tensor<?x8x?x40xbf16>) -> tensor<?x32x?x40xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x40xbf16>, tensor<?x8x?x40xbf16>, tensor<?x8x?x40xbf16> -> tensor<8x?x32x?x40xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x40xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x40xbf16>
  return %o : tensor<?x32x?x40xbf16>
}
func.func @bwd_d40_none(%q: tensor<?x16x?x40xbf16>, %k: tensor<?x16x?x40xbf16>, %v: tensor<?x16x?x40xbf16>, %o: tensor<?x16x?x40xbf16>, %do: tensor<?x16x?x40xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>
}
func.func @bwd_d40_bottom_right(%q: tensor<?x16x?x40xbf16>, %k: tensor<?x16x?x40xbf16>, %v: tensor<?x16x?x40xbf16>, %o: tensor<?x16x?x40xbf16>, %do: tensor<?x16x?x40xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>} : tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>
}
func.func @fwd_d59_none(%q: tensor<?x16x?x59xbf16>, %k: tensor<?x16x?x59xbf16>, %v: tensor<?x16x?x59xbf16>) -> (tensor<?x16x?x59xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16> -> tensor<?x16x?x59xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x59xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_d59_bottom_right(%q: tensor<?x16x?x59xbf16>, %k: tensor<?x16x?x59xbf16>, %v: tensor<?x16x?x59xbf16>) -> (tensor<?x16x?x59xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16> -> tensor<?x16x?x59xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x59xbf16>, tensor<?x16x?xf32>
}
func.func @decode_d59(%q: tensor<?x32x?x59xbf16>, %k: tensor<?x8x?x59xbf16>, %v: tensor<?x8x?x59xbf16>) -> tensor<?x32x?x59xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x59xbf16>, tensor<?x8x?x59xbf16>, tensor<?x8x?x59xbf16> -> tensor<8x?x32x?x59xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x59xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x59xbf16>
  return %o : tensor<?x32x?x59xbf16>
}
func.func @bwd_d59_none(%q: tensor<?x16x?x59xbf16>, %k: tensor<?x16x?x59xbf16>, %v: tensor<?x16x?x59xbf16>, %o: tensor<?x16x?x59xbf16>, %do: tensor<?x16x?x59xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>
}
func.func @bwd_d59_bottom_right(%q: tensor<?x16x?x59xbf16>, %k: tensor<?x16x?x59xbf16>, %v: tensor<?x16x?x59xbf16>, %o: tensor<?x16x?x59xbf16>, %do: tensor<?x16x?x59xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>} : tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>
}
func.func @fwd_d72_none(%q: tensor<?x16x?x72xbf16>, %k: tensor<?x16x?x72xbf16>, %v: tensor<?x16x?x72xbf16>) -> (tensor<?x16x?x72xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16> -> tensor<?x16x?x72xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x72xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_d72_bottom_right(%q: tensor<?x16x?x72xbf16>, %k: tensor<?x16x?x72xbf16>, %v: tensor<?x16x?x72xbf16>) -> (tensor<?x16x?x72xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16> -> tensor<?x16x?x72xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x72xbf16>, tensor<?x16x?xf32>
}
func.func @decode_d72(%q: tensor<?x32x?x72xbf16>, %k: tensor<?x8x?x72xbf16>, %v: tensor<?x8x?x72xbf16>) -> tensor<?x32x?x72xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x72xbf16>, tensor<?x8x?x72xbf16>, tensor<?x8x?x72xbf16> -> tensor<8x?x32x?x72xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x72xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x72xbf16>
  return %o : tensor<?x32x?x72xbf16>
}
func.func @bwd_d72_none(%q: tensor<?x16x?x72xbf16>, %k: tensor<?x16x?x72xbf16>, %v: tensor<?x16x?x72xbf16>, %o: tensor<?x16x?x72xbf16>, %do: tensor<?x16x?x72xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>
}
func.func @bwd_d72_bottom_right(%q: tensor<?x16x?x72xbf16>, %k: tensor<?x16x?x72xbf16>, %v: tensor<?x16x?x72xbf16>, %o: tensor<?x16x?x72xbf16>, %do: tensor<?x16x?x72xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>} : tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>, tensor<?x16x?x72xbf16>
}
func.func @fwd_d104_none(%q: tensor<?x16x?x104xbf16>, %k: tensor<?x16x?x104xbf16>, %v: tensor<?x16x?x104xbf16>) -> (tensor<?x16x?x104xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16> -> tensor<?x16x?x104xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x104xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_d104_bottom_right(%q: tensor<?x16x?x104xbf16>, %k: tensor<?x16x?x104xbf16>, %v: tensor<?x16x?x104xbf16>) -> (tensor<?x16x?x104xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16> -> tensor<?x16x?x104xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x104xbf16>, tensor<?x16x?xf32>
}
func.func @decode_d104(%q: tensor<?x32x?x104xbf16>, %k: tensor<?x8x?x104xbf16>, %v: tensor<?x8x?x104xbf16>) -> tensor<?x32x?x104xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x104xbf16>, tensor<?x8x?x104xbf16>, tensor<?x8x?x104xbf16> -> tensor<8x?x32x?x104xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x104xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x104xbf16>
  return %o : tensor<?x32x?x104xbf16>
}
func.func @bwd_d104_none(%q: tensor<?x16x?x104xbf16>, %k: tensor<?x16x?x104xbf16>, %v: tensor<?x16x?x104xbf16>, %o: tensor<?x16x?x104xbf16>, %do: tensor<?x16x?x104xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>
}
func.func @bwd_d104_bottom_right(%q: tensor<?x16x?x104xbf16>, %k: tensor<?x16x?x104xbf16>, %v: tensor<?x16x?x104xbf16>, %o: tensor<?x16x?x104xbf16>, %do: tensor<?x16x?x104xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>} : tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>, tensor<?x16x?x104xbf16>
}
func.func @fwd_d111_none(%q: tensor<?x16x?x111xbf16>, %k: tensor<?x16x?x111xbf16>, %v: tensor<?x16x?x111xbf16>) -> (tensor<?x16x?x111xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16> -> tensor<?x16x?x111xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x111xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_d111_bottom_right(%q: tensor<?x16x?x111xbf16>, %k: tensor<?x16x?x111xbf16>, %v: tensor<?x16x?x111xbf16>) -> (tensor<?x16x?x111xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16> -> tensor<?x16x?x111xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x111xbf16>, tensor<?x16x?xf32>
}
func.func @decode_d111(%q: tensor<?x32x?x111xbf16>, %k: tensor<?x8x?x111xbf16>, %v: tensor<?x8x?x111xbf16>) -> tensor<?x32x?x111xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x111xbf16>, tensor<?x8x?x111xbf16>, tensor<?x8x?x111xbf16> -> tensor<8x?x32x?x111xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x111xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x111xbf16>
  return %o : tensor<?x32x?x111xbf16>
}
func.func @bwd_d111_none(%q: tensor<?x16x?x111xbf16>, %k: tensor<?x16x?x111xbf16>, %v: tensor<?x16x?x111xbf16>, %o: tensor<?x16x?x111xbf16>, %do: tensor<?x16x?x111xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>
}
func.func @bwd_d111_bottom_right(%q: tensor<?x16x?x111xbf16>, %k: tensor<?x16x?x111xbf16>, %v: tensor<?x16x?x111xbf16>, %o: tensor<?x16x?x111xbf16>, %do: tensor<?x16x?x111xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>} : tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>, tensor<?x16x?x111xbf16>
}
func.func @fwd_d40_dv24_none(%q: tensor<?x16x?x40xbf16>, %k: tensor<?x16x?x40xbf16>, %v: tensor<?x16x?x24xbf16>) -> (tensor<?x16x?x24xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x24xbf16> -> tensor<?x16x?x24xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x24xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_d40_dv24_bottom_right(%q: tensor<?x16x?x40xbf16>, %k: tensor<?x16x?x40xbf16>, %v: tensor<?x16x?x24xbf16>) -> (tensor<?x16x?x24xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x24xbf16> -> tensor<?x16x?x24xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x24xbf16>, tensor<?x16x?xf32>
}
func.func @decode_d40_dv24(%q: tensor<?x32x?x40xbf16>, %k: tensor<?x8x?x40xbf16>, %v: tensor<?x8x?x24xbf16>) -> tensor<?x32x?x24xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x40xbf16>, tensor<?x8x?x40xbf16>, tensor<?x8x?x24xbf16> -> tensor<8x?x32x?x24xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x24xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x24xbf16>
  return %o : tensor<?x32x?x24xbf16>
}
func.func @bwd_d40_dv24_none(%q: tensor<?x16x?x40xbf16>, %k: tensor<?x16x?x40xbf16>, %v: tensor<?x16x?x24xbf16>, %o: tensor<?x16x?x24xbf16>, %do: tensor<?x16x?x24xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x24xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x24xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x24xbf16>
}
func.func @bwd_d40_dv24_bottom_right(%q: tensor<?x16x?x40xbf16>, %k: tensor<?x16x?x40xbf16>, %v: tensor<?x16x?x24xbf16>, %o: tensor<?x16x?x24xbf16>, %do: tensor<?x16x?x24xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x24xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>} : tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x24xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x40xbf16>, tensor<?x16x?x40xbf16>, tensor<?x16x?x24xbf16>
}
func.func @fwd_d59_dv24_none(%q: tensor<?x16x?x59xbf16>, %k: tensor<?x16x?x59xbf16>, %v: tensor<?x16x?x24xbf16>) -> (tensor<?x16x?x24xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x24xbf16> -> tensor<?x16x?x24xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x24xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_d59_dv24_bottom_right(%q: tensor<?x16x?x59xbf16>, %k: tensor<?x16x?x59xbf16>, %v: tensor<?x16x?x24xbf16>) -> (tensor<?x16x?x24xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x24xbf16> -> tensor<?x16x?x24xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x24xbf16>, tensor<?x16x?xf32>
}
func.func @decode_d59_dv24(%q: tensor<?x32x?x59xbf16>, %k: tensor<?x8x?x59xbf16>, %v: tensor<?x8x?x24xbf16>) -> tensor<?x32x?x24xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x59xbf16>, tensor<?x8x?x59xbf16>, tensor<?x8x?x24xbf16> -> tensor<8x?x32x?x24xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x24xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x24xbf16>
  return %o : tensor<?x32x?x24xbf16>
}
func.func @bwd_d59_dv24_none(%q: tensor<?x16x?x59xbf16>, %k: tensor<?x16x?x59xbf16>, %v: tensor<?x16x?x24xbf16>, %o: tensor<?x16x?x24xbf16>, %do: tensor<?x16x?x24xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x24xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x24xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x24xbf16>
}
func.func @bwd_d59_dv24_bottom_right(%q: tensor<?x16x?x59xbf16>, %k: tensor<?x16x?x59xbf16>, %v: tensor<?x16x?x24xbf16>, %o: tensor<?x16x?x24xbf16>, %do: tensor<?x16x?x24xbf16>, %lse: tensor<?x16x?xf32>) -> (tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x24xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>} : tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?x24xbf16>, tensor<?x16x?xf32> -> tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x24xbf16>
  return %dq, %dk, %dv : tensor<?x16x?x59xbf16>, tensor<?x16x?x59xbf16>, tensor<?x16x?x24xbf16>
}
func.func @fwd_d200_none(%q: tensor<?x16x?x200xbf16>, %k: tensor<?x16x?x200xbf16>, %v: tensor<?x16x?x200xbf16>) -> (tensor<?x16x?x200xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x200xbf16>, tensor<?x16x?x200xbf16>, tensor<?x16x?x200xbf16> -> tensor<?x16x?x200xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x200xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_d200_bottom_right(%q: tensor<?x16x?x200xbf16>, %k: tensor<?x16x?x200xbf16>, %v: tensor<?x16x?x200xbf16>) -> (tensor<?x16x?x200xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x200xbf16>, tensor<?x16x?x200xbf16>, tensor<?x16x?x200xbf16> -> tensor<?x16x?x200xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x200xbf16>, tensor<?x16x?xf32>
}
func.func @decode_d200(%q: tensor<?x32x?x200xbf16>, %k: tensor<?x8x?x200xbf16>, %v: tensor<?x8x?x200xbf16>) -> tensor<?x32x?x200xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x200xbf16>, tensor<?x8x?x200xbf16>, tensor<?x8x?x200xbf16> -> tensor<8x?x32x?x200xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x200xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x200xbf16>
  return %o : tensor<?x32x?x200xbf16>
}
func.func @fwd_d248_none(%q: tensor<?x16x?x248xbf16>, %k: tensor<?x16x?x248xbf16>, %v: tensor<?x16x?x248xbf16>) -> (tensor<?x16x?x248xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x248xbf16>, tensor<?x16x?x248xbf16>, tensor<?x16x?x248xbf16> -> tensor<?x16x?x248xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x248xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_d248_bottom_right(%q: tensor<?x16x?x248xbf16>, %k: tensor<?x16x?x248xbf16>, %v: tensor<?x16x?x248xbf16>) -> (tensor<?x16x?x248xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x248xbf16>, tensor<?x16x?x248xbf16>, tensor<?x16x?x248xbf16> -> tensor<?x16x?x248xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x248xbf16>, tensor<?x16x?xf32>
}
func.func @decode_d248(%q: tensor<?x32x?x248xbf16>, %k: tensor<?x8x?x248xbf16>, %v: tensor<?x8x?x248xbf16>) -> tensor<?x32x?x248xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x248xbf16>, tensor<?x8x?x248xbf16>, tensor<?x8x?x248xbf16> -> tensor<8x?x32x?x248xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x248xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x248xbf16>
  return %o : tensor<?x32x?x248xbf16>
}
