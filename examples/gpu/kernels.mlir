// The kernels the GPU tests and the benchmark use: forward with and without
// mask operands, split-KV decode, in bf16 and f16. The kernels read batch,
// head counts and sequence lengths at run time, so the sizes here only fix
// what a kernel is specialised for: element type, head dims, causal kind.
// `attn-compile examples/gpu/kernels.mlir -o DIR` writes DIR/attn.manifest
// and DIR/attn_kernels.ptx.

func.func @fwd_bf16_d64_none(%q: tensor<?x16x?x64xbf16>, %k: tensor<?x16x?x64xbf16>, %v: tensor<?x16x?x64xbf16>) -> (tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16> -> tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
}

func.func @fwd_bf16_d64_top_left(%q: tensor<?x16x?x64xbf16>, %k: tensor<?x16x?x64xbf16>, %v: tensor<?x16x?x64xbf16>) -> (tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16> -> tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
}

func.func @fwd_bf16_d64_bottom_right(%q: tensor<?x16x?x64xbf16>, %k: tensor<?x16x?x64xbf16>, %v: tensor<?x16x?x64xbf16>) -> (tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16> -> tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
}

func.func @fwd_bf16_d128_none(%q: tensor<?x16x?x128xbf16>, %k: tensor<?x16x?x128xbf16>, %v: tensor<?x16x?x128xbf16>) -> (tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16> -> tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
}

func.func @fwd_bf16_d128_top_left(%q: tensor<?x16x?x128xbf16>, %k: tensor<?x16x?x128xbf16>, %v: tensor<?x16x?x128xbf16>) -> (tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16> -> tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
}

func.func @fwd_bf16_d128_bottom_right(%q: tensor<?x16x?x128xbf16>, %k: tensor<?x16x?x128xbf16>, %v: tensor<?x16x?x128xbf16>) -> (tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16> -> tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
}

func.func @decode_bf16_d128_none(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>) -> tensor<?x32x?x128xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x128xbf16>
  return %o : tensor<?x32x?x128xbf16>
}

func.func @decode_bf16_d128_bottom_right(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>) -> tensor<?x32x?x128xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64, causal = #attn.causal<bottom_right>} : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x128xbf16>
  return %o : tensor<?x32x?x128xbf16>
}

func.func @fwd_f16_d64_none(%q: tensor<?x16x?x64xf16>, %k: tensor<?x16x?x64xf16>, %v: tensor<?x16x?x64xf16>) -> (tensor<?x16x?x64xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16> -> tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
}

func.func @fwd_f16_d64_top_left(%q: tensor<?x16x?x64xf16>, %k: tensor<?x16x?x64xf16>, %v: tensor<?x16x?x64xf16>) -> (tensor<?x16x?x64xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16> -> tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
}

func.func @fwd_f16_d64_bottom_right(%q: tensor<?x16x?x64xf16>, %k: tensor<?x16x?x64xf16>, %v: tensor<?x16x?x64xf16>) -> (tensor<?x16x?x64xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16> -> tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
}

func.func @fwd_f16_d128_none(%q: tensor<?x16x?x128xf16>, %k: tensor<?x16x?x128xf16>, %v: tensor<?x16x?x128xf16>) -> (tensor<?x16x?x128xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16> -> tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
}

func.func @fwd_f16_d128_top_left(%q: tensor<?x16x?x128xf16>, %k: tensor<?x16x?x128xf16>, %v: tensor<?x16x?x128xf16>) -> (tensor<?x16x?x128xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16> -> tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
}

func.func @fwd_f16_d128_bottom_right(%q: tensor<?x16x?x128xf16>, %k: tensor<?x16x?x128xf16>, %v: tensor<?x16x?x128xf16>) -> (tensor<?x16x?x128xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16> -> tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
}

func.func @decode_f16_d128_none(%q: tensor<?x32x?x128xf16>, %k: tensor<?x8x?x128xf16>, %v: tensor<?x8x?x128xf16>) -> tensor<?x32x?x128xf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64} : tensor<?x32x?x128xf16>, tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16> -> tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x128xf16>
  return %o : tensor<?x32x?x128xf16>
}

func.func @decode_f16_d128_bottom_right(%q: tensor<?x32x?x128xf16>, %k: tensor<?x8x?x128xf16>, %v: tensor<?x8x?x128xf16>) -> tensor<?x32x?x128xf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64, causal = #attn.causal<bottom_right>} : tensor<?x32x?x128xf16>, tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16> -> tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x128xf16>
  return %o : tensor<?x32x?x128xf16>
}

func.func @fwd_bf16_d64_none_addmask(%q: tensor<?x16x?x64xbf16>, %k: tensor<?x16x?x64xbf16>, %v: tensor<?x16x?x64xbf16>, %m: tensor<?x16x?x?xbf16>) -> (tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xbf16>) : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16> -> tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d64_none_boolmask(%q: tensor<?x16x?x64xbf16>, %k: tensor<?x16x?x64xbf16>, %v: tensor<?x16x?x64xbf16>, %m: tensor<?x16x?x?xi1>) -> (tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xi1>) : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16> -> tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d64_top_left_addmask(%q: tensor<?x16x?x64xbf16>, %k: tensor<?x16x?x64xbf16>, %v: tensor<?x16x?x64xbf16>, %m: tensor<?x16x?x?xbf16>) -> (tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xbf16>) {causal = #attn.causal<top_left>} : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16> -> tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d64_top_left_boolmask(%q: tensor<?x16x?x64xbf16>, %k: tensor<?x16x?x64xbf16>, %v: tensor<?x16x?x64xbf16>, %m: tensor<?x16x?x?xi1>) -> (tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xi1>) {causal = #attn.causal<top_left>} : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16> -> tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d64_bottom_right_addmask(%q: tensor<?x16x?x64xbf16>, %k: tensor<?x16x?x64xbf16>, %v: tensor<?x16x?x64xbf16>, %m: tensor<?x16x?x?xbf16>) -> (tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xbf16>) {causal = #attn.causal<bottom_right>} : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16> -> tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d64_bottom_right_boolmask(%q: tensor<?x16x?x64xbf16>, %k: tensor<?x16x?x64xbf16>, %v: tensor<?x16x?x64xbf16>, %m: tensor<?x16x?x?xi1>) -> (tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xi1>) {causal = #attn.causal<bottom_right>} : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16> -> tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d128_none_addmask(%q: tensor<?x16x?x128xbf16>, %k: tensor<?x16x?x128xbf16>, %v: tensor<?x16x?x128xbf16>, %m: tensor<?x16x?x?xbf16>) -> (tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xbf16>) : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16> -> tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d128_none_boolmask(%q: tensor<?x16x?x128xbf16>, %k: tensor<?x16x?x128xbf16>, %v: tensor<?x16x?x128xbf16>, %m: tensor<?x16x?x?xi1>) -> (tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xi1>) : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16> -> tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d128_top_left_addmask(%q: tensor<?x16x?x128xbf16>, %k: tensor<?x16x?x128xbf16>, %v: tensor<?x16x?x128xbf16>, %m: tensor<?x16x?x?xbf16>) -> (tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xbf16>) {causal = #attn.causal<top_left>} : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16> -> tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d128_top_left_boolmask(%q: tensor<?x16x?x128xbf16>, %k: tensor<?x16x?x128xbf16>, %v: tensor<?x16x?x128xbf16>, %m: tensor<?x16x?x?xi1>) -> (tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xi1>) {causal = #attn.causal<top_left>} : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16> -> tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d128_bottom_right_addmask(%q: tensor<?x16x?x128xbf16>, %k: tensor<?x16x?x128xbf16>, %v: tensor<?x16x?x128xbf16>, %m: tensor<?x16x?x?xbf16>) -> (tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xbf16>) {causal = #attn.causal<bottom_right>} : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16> -> tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
}
func.func @fwd_bf16_d128_bottom_right_boolmask(%q: tensor<?x16x?x128xbf16>, %k: tensor<?x16x?x128xbf16>, %v: tensor<?x16x?x128xbf16>, %m: tensor<?x16x?x?xi1>) -> (tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xi1>) {causal = #attn.causal<bottom_right>} : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16> -> tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
}
func.func @decode_bf16_d128_top_left(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>) -> tensor<?x32x?x128xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64, causal = #attn.causal<top_left>} : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x128xbf16>
  return %o : tensor<?x32x?x128xbf16>
}
func.func @fwd_f16_d64_none_addmask(%q: tensor<?x16x?x64xf16>, %k: tensor<?x16x?x64xf16>, %v: tensor<?x16x?x64xf16>, %m: tensor<?x16x?x?xf16>) -> (tensor<?x16x?x64xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xf16>) : tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16> -> tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
}
func.func @fwd_f16_d64_none_boolmask(%q: tensor<?x16x?x64xf16>, %k: tensor<?x16x?x64xf16>, %v: tensor<?x16x?x64xf16>, %m: tensor<?x16x?x?xi1>) -> (tensor<?x16x?x64xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xi1>) : tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16> -> tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
}
func.func @fwd_f16_d64_top_left_addmask(%q: tensor<?x16x?x64xf16>, %k: tensor<?x16x?x64xf16>, %v: tensor<?x16x?x64xf16>, %m: tensor<?x16x?x?xf16>) -> (tensor<?x16x?x64xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xf16>) {causal = #attn.causal<top_left>} : tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16> -> tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
}
func.func @fwd_f16_d64_top_left_boolmask(%q: tensor<?x16x?x64xf16>, %k: tensor<?x16x?x64xf16>, %v: tensor<?x16x?x64xf16>, %m: tensor<?x16x?x?xi1>) -> (tensor<?x16x?x64xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xi1>) {causal = #attn.causal<top_left>} : tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16> -> tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
}
func.func @fwd_f16_d64_bottom_right_addmask(%q: tensor<?x16x?x64xf16>, %k: tensor<?x16x?x64xf16>, %v: tensor<?x16x?x64xf16>, %m: tensor<?x16x?x?xf16>) -> (tensor<?x16x?x64xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xf16>) {causal = #attn.causal<bottom_right>} : tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16> -> tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
}
func.func @fwd_f16_d64_bottom_right_boolmask(%q: tensor<?x16x?x64xf16>, %k: tensor<?x16x?x64xf16>, %v: tensor<?x16x?x64xf16>, %m: tensor<?x16x?x?xi1>) -> (tensor<?x16x?x64xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xi1>) {causal = #attn.causal<bottom_right>} : tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16> -> tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x64xf16>, tensor<?x16x?xf32>
}
func.func @fwd_f16_d128_none_addmask(%q: tensor<?x16x?x128xf16>, %k: tensor<?x16x?x128xf16>, %v: tensor<?x16x?x128xf16>, %m: tensor<?x16x?x?xf16>) -> (tensor<?x16x?x128xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xf16>) : tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16> -> tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
}
func.func @fwd_f16_d128_none_boolmask(%q: tensor<?x16x?x128xf16>, %k: tensor<?x16x?x128xf16>, %v: tensor<?x16x?x128xf16>, %m: tensor<?x16x?x?xi1>) -> (tensor<?x16x?x128xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xi1>) : tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16> -> tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
}
func.func @fwd_f16_d128_top_left_addmask(%q: tensor<?x16x?x128xf16>, %k: tensor<?x16x?x128xf16>, %v: tensor<?x16x?x128xf16>, %m: tensor<?x16x?x?xf16>) -> (tensor<?x16x?x128xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xf16>) {causal = #attn.causal<top_left>} : tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16> -> tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
}
func.func @fwd_f16_d128_top_left_boolmask(%q: tensor<?x16x?x128xf16>, %k: tensor<?x16x?x128xf16>, %v: tensor<?x16x?x128xf16>, %m: tensor<?x16x?x?xi1>) -> (tensor<?x16x?x128xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xi1>) {causal = #attn.causal<top_left>} : tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16> -> tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
}
func.func @fwd_f16_d128_bottom_right_addmask(%q: tensor<?x16x?x128xf16>, %k: tensor<?x16x?x128xf16>, %v: tensor<?x16x?x128xf16>, %m: tensor<?x16x?x?xf16>) -> (tensor<?x16x?x128xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xf16>) {causal = #attn.causal<bottom_right>} : tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16> -> tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
}
func.func @fwd_f16_d128_bottom_right_boolmask(%q: tensor<?x16x?x128xf16>, %k: tensor<?x16x?x128xf16>, %v: tensor<?x16x?x128xf16>, %m: tensor<?x16x?x?xi1>) -> (tensor<?x16x?x128xf16>, tensor<?x16x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<?x16x?x?xi1>) {causal = #attn.causal<bottom_right>} : tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16> -> tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
  return %o, %lse : tensor<?x16x?x128xf16>, tensor<?x16x?xf32>
}
func.func @decode_f16_d128_top_left(%q: tensor<?x32x?x128xf16>, %k: tensor<?x8x?x128xf16>, %v: tensor<?x8x?x128xf16>) -> tensor<?x32x?x128xf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 8 : i64, causal = #attn.causal<top_left>} : tensor<?x32x?x128xf16>, tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16> -> tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32>
  %o = attn.combine %po, %pl : tensor<8x?x32x?x128xf32>, tensor<8x?x32x?xf32> -> tensor<?x32x?x128xf16>
  return %o : tensor<?x32x?x128xf16>
}
