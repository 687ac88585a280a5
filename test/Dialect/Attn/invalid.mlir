// RUN: attn-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Operands shared by attention, attention_partial and attention_grad
//===----------------------------------------------------------------------===//

func.func @query_rank(%q: tensor<8x128x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op 'query' must have rank 4, got rank 3}}
  %o = attn.attention %q, %k, %v : tensor<8x128x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

func.func @key_rank(%q: tensor<1x8x128x64xf32>, %k: tensor<1x1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op 'key' must have rank 4, got rank 5}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf32>, tensor<1x1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

func.func @value_rank(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op 'value' must have rank 4, got rank 2}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>, tensor<128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

func.func @query_element_type(%q: tensor<1x8x128x64xf64>, %k: tensor<1x8x128x64xf64>, %v: tensor<1x8x128x64xf64>) {
  // expected-error @+1 {{'attn.attention' op 'query' element type must be f16, bf16 or f32, got 'f64'}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf64>, tensor<1x8x128x64xf64>, tensor<1x8x128x64xf64> -> tensor<1x8x128x64xf64>
  return
}

// -----

func.func @key_element_type(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xi8>, %v: tensor<1x8x128x64xf16>) {
  // expected-error @+1 {{'attn.attention' op 'key' element type must be f16, bf16 or f32, got 'i8'}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xi8>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return
}

// -----

func.func @value_element_type(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf8E4M3FN>) {
  // expected-error @+1 {{'attn.attention' op 'value' element type must be f16, bf16 or f32, got 'f8E4M3FN'}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf8E4M3FN> -> tensor<1x8x128x64xf16>
  return
}

// -----

func.func @mixed_element_types(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xf16>) {
  // expected-error @+1 {{'attn.attention' op 'query', 'key' and 'value' must share one element type, got 'f16', 'bf16' and 'f16'}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return
}

// -----

func.func @dynamic_query_heads(%q: tensor<1x?x128x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op 'query' must have a static head count and head dim (layout [B, H, S, X] (bhsd)), got shape [1, ?, 128, 64]}}
  %o = attn.attention %q, %k, %v : tensor<1x?x128x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

func.func @dynamic_key_head_dim(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x?xf32>, %v: tensor<1x8x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op 'key' must have a static head count and head dim (layout [B, H, S, X] (bhsd)), got shape [1, 8, 128, ?]}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf32>, tensor<1x8x128x?xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

// In bshd the heads are dimension 2: a dynamic dimension 1 is a dynamic
// sequence length and fine, a dynamic dimension 2 is not.
func.func @dynamic_value_heads_bshd(%q: tensor<1x?x8x64xf32>, %k: tensor<1x?x8x64xf32>, %v: tensor<1x?x?x64xf32>) {
  // expected-error @+1 {{'attn.attention' op 'value' must have a static head count and head dim (layout [B, S, H, X] (bshd)), got shape [1, ?, ?, 64]}}
  %o = attn.attention %q, %k, %v {layout = #attn.layout<bshd>} : tensor<1x?x8x64xf32>, tensor<1x?x8x64xf32>, tensor<1x?x?x64xf32> -> tensor<1x?x8x64xf32>
  return
}

// -----

func.func @batch_mismatch(%q: tensor<2x8x128x64xf32>, %k: tensor<?x8x128x64xf32>, %v: tensor<3x8x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op batch mismatch: 'query', 'key' and 'value' have B = [2, ?, 3]}}
  %o = attn.attention %q, %k, %v : tensor<2x8x128x64xf32>, tensor<?x8x128x64xf32>, tensor<3x8x128x64xf32> -> tensor<2x8x128x64xf32>
  return
}

// -----

func.func @head_dim_mismatch(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x32xf32>, %v: tensor<1x8x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op head dim mismatch: 'query' has D = 64 but 'key' has D = 32}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf32>, tensor<1x8x128x32xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

func.func @kv_heads_mismatch(%q: tensor<1x8x128x64xf32>, %k: tensor<1x2x128x64xf32>, %v: tensor<1x4x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op 'key' and 'value' must have the same number of heads, got 2 and 4}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

func.func @key_length_mismatch(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x129x64xf32>, %v: tensor<1x8x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op key length mismatch: 'key' has Sk = [129] but 'value' has Sk = [128]}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf32>, tensor<1x8x129x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

func.func @key_length_mismatch_bshd(%q: tensor<1x128x8x64xf32>, %k: tensor<1x129x8x64xf32>, %v: tensor<1x128x8x64xf32>) {
  // expected-error @+1 {{'attn.attention' op key length mismatch: 'key' has Sk = [129] but 'value' has Sk = [128]}}
  %o = attn.attention %q, %k, %v {layout = #attn.layout<bshd>} : tensor<1x128x8x64xf32>, tensor<1x129x8x64xf32>, tensor<1x128x8x64xf32> -> tensor<1x128x8x64xf32>
  return
}

// -----

func.func @zero_query_heads(%q: tensor<1x0x128x64xf32>, %k: tensor<1x2x128x64xf32>, %v: tensor<1x2x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op head counts must be non-zero, got Hq = 0 and Hkv = 2}}
  %o = attn.attention %q, %k, %v : tensor<1x0x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32> -> tensor<1x0x128x64xf32>
  return
}

// -----

func.func @zero_kv_heads(%q: tensor<1x8x128x64xf32>, %k: tensor<1x0x128x64xf32>, %v: tensor<1x0x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op head counts must be non-zero, got Hq = 8 and Hkv = 0}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf32>, tensor<1x0x128x64xf32>, tensor<1x0x128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

func.func @gqa_not_multiple(%q: tensor<1x8x128x64xf32>, %k: tensor<1x3x128x64xf32>, %v: tensor<1x3x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op query heads (Hq = 8) must be a multiple of key/value heads (Hkv = 3)}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf32>, tensor<1x3x128x64xf32>, tensor<1x3x128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

func.func @zero_head_dim(%q: tensor<1x8x128x0xf32>, %k: tensor<1x8x128x0xf32>, %v: tensor<1x8x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op head dims must be non-zero, got D = 0 and Dv = 64}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x0xf32>, tensor<1x8x128x0xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

func.func @zero_value_dim(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x0xf32>) {
  // expected-error @+1 {{'attn.attention' op head dims must be non-zero, got D = 64 and Dv = 0}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x0xf32> -> tensor<1x8x128x0xf32>
  return
}

// -----

// Head dims are bounded (2^16): the lowerings multiply them by tile sizes
// and element sizes in int64.
func.func @head_dim_too_large(%q: tensor<1x1x4x9223372036854775807xf32>, %k: tensor<1x1x4x9223372036854775807xf32>, %v: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention' op head dims must be at most 65536, got D = 9223372036854775807 and Dv = 8}}
  %o = attn.attention %q, %k, %v : tensor<1x1x4x9223372036854775807xf32>, tensor<1x1x4x9223372036854775807xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return
}

// -----

func.func @value_dim_too_large(%q: tensor<1x1x4x8xf16>, %k: tensor<1x1x4x8xf16>, %v: tensor<1x1x4x65537xf16>) {
  // expected-error @+1 {{'attn.attention_grad' op head dims must be at most 65536, got D = 8 and Dv = 65537}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %v, %v, %v : tensor<1x1x4x8xf16>, tensor<1x1x4x8xf16>, tensor<1x1x4x65537xf16>, tensor<1x1x4x65537xf16>, tensor<1x1x4x65537xf16>, tensor<1x1x4x65537xf16> -> tensor<1x1x4x8xf16>, tensor<1x1x4x8xf16>, tensor<1x1x4x65537xf16>
  return
}

// -----

// Operands and results hold at most 2^48 elements (their static dims), so
// that every index and size the lowerings derive from them fits int64.
func.func @too_many_elements(%q: tensor<1x1x1099511627776x1024xf16>, %k: tensor<1x1x8x1024xf16>, %v: tensor<1x1x8x1024xf16>) {
  // expected-error @+1 {{'attn.attention' op operand #0 of type 'tensor<1x1x1099511627776x1024xf16>' holds more than 2^48 = 281474976710656 elements (its static dims), the most an attn op takes}}
  %o = attn.attention %q, %k, %v : tensor<1x1x1099511627776x1024xf16>, tensor<1x1x8x1024xf16>, tensor<1x1x8x1024xf16> -> tensor<1x1x1099511627776x1024xf16>
  return
}

// -----

// 2^17 x 2^47 x 16 wraps around to 0 in int64: the count is checked as it
// is multiplied.
func.func @element_count_wraps(%q: tensor<131072x1x140737488355328x16xf16>, %k: tensor<131072x1x8x16xf16>, %v: tensor<131072x1x8x16xf16>) {
  // expected-error @+1 {{'attn.attention' op operand #0 of type 'tensor<131072x1x140737488355328x16xf16>' holds more than 2^48}}
  %o = attn.attention %q, %k, %v : tensor<131072x1x140737488355328x16xf16>, tensor<131072x1x8x16xf16>, tensor<131072x1x8x16xf16> -> tensor<131072x1x140737488355328x16xf16>
  return
}

// -----

func.func @too_many_result_elements(%q: tensor<?x1x?x1024xf16>, %k: tensor<?x1x?x1024xf16>, %v: tensor<?x1x?x1024xf16>) {
  // expected-error @+1 {{'attn.attention' op result #0 of type 'tensor<9223372036854775807x1x9223372036854775807x1024xf16>' holds more than 2^48}}
  %o = attn.attention %q, %k, %v : tensor<?x1x?x1024xf16>, tensor<?x1x?x1024xf16>, tensor<?x1x?x1024xf16> -> tensor<9223372036854775807x1x9223372036854775807x1024xf16>
  return
}

// -----

func.func @mask_element_type(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>, %m: tensor<128x128xi8>) {
  // expected-error @+1 {{'attn.attention' op 'mask' element type must be f16, bf16, f32 (additive) or i1 (keep where true), got 'i8'}}
  %o = attn.attention %q, %k, %v mask(%m : tensor<128x128xi8>) : tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

func.func @mask_not_broadcastable(%q: tensor<2x8x77x64xf32>, %k: tensor<2x8x129x64xf32>, %v: tensor<2x8x129x64xf32>, %m: tensor<8x129x77xi1>) {
  // expected-error @+1 {{'attn.attention' op 'mask' of shape [8, 129, 77] is not broadcastable to [B, Hq, Sq, Sk] = [2, 8, 77, 129]}}
  %o = attn.attention %q, %k, %v mask(%m : tensor<8x129x77xi1>) : tensor<2x8x77x64xf32>, tensor<2x8x129x64xf32>, tensor<2x8x129x64xf32> -> tensor<2x8x77x64xf32>
  return
}

// -----

// The mask is broadcast to the logical [B, Hq, Sq, Sk], whatever the layout:
// here it is given in the stored (bshd) order by mistake.
func.func @mask_in_stored_order(%q: tensor<2x77x8x64xf32>, %k: tensor<2x129x8x64xf32>, %v: tensor<2x129x8x64xf32>, %m: tensor<2x77x8x129xf32>) {
  // expected-error @+1 {{'attn.attention' op 'mask' of shape [2, 77, 8, 129] is not broadcastable to [B, Hq, Sq, Sk] = [2, 8, 77, 129]}}
  %o = attn.attention %q, %k, %v mask(%m : tensor<2x77x8x129xf32>) {layout = #attn.layout<bshd>} : tensor<2x77x8x64xf32>, tensor<2x129x8x64xf32>, tensor<2x129x8x64xf32> -> tensor<2x77x8x64xf32>
  return
}

// -----

func.func @mask_rank_too_high(%q: tensor<?x8x?x64xf32>, %k: tensor<?x8x?x64xf32>, %v: tensor<?x8x?x64xf32>, %m: tensor<1x1x1x1x1xf16>) {
  // expected-error @+1 {{'attn.attention' op 'mask' of shape [1, 1, 1, 1, 1] is not broadcastable to [B, Hq, Sq, Sk] = [?, 8, ?, ?]}}
  %o = attn.attention %q, %k, %v mask(%m : tensor<1x1x1x1x1xf16>) : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32> -> tensor<?x8x?x64xf32>
  return
}

// -----

func.func @scale_negative(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op 'scale' must be a finite positive number, got -1.250000e-01}}
  %o = attn.attention %q, %k, %v {scale = -0.125 : f32} : tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

func.func @scale_zero(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op 'scale' must be a finite positive number, got 0.000000e+00}}
  %o = attn.attention %q, %k, %v {scale = 0.0 : f32} : tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

func.func @scale_tiny(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op 'scale' must lie in [2^-64, 2^64], got 1.000000e-30}}
  %o = attn.attention %q, %k, %v {scale = 1.0e-30 : f32} : tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

func.func @scale_infinite(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op 'scale' must be a finite positive number, got INF}}
  %o = attn.attention %q, %k, %v {scale = 0x7F800000 : f32} : tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

func.func @window_negative(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op 'window' must be non-negative, got -1}}
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>, window = -1 : i64} : tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

func.func @window_without_causal(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op 'window' needs a causal kind (top_left or bottom_right): the window is counted back from the causal diagonal}}
  %o = attn.attention %q, %k, %v {window = 16 : i64} : tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention results
//===----------------------------------------------------------------------===//

func.func @output_shape(%q: tensor<2x8x128x64xf32>, %k: tensor<2x2x256x64xf32>, %v: tensor<2x2x256x32xf32>) {
  // expected-error @+1 {{'attn.attention' op 'output' must have shape [2, 8, 128, 32] ([B, Hq, Sq, Dv] in the op's layout, query's element type), got [2, 8, 128, 64]}}
  %o = attn.attention %q, %k, %v : tensor<2x8x128x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x32xf32> -> tensor<2x8x128x64xf32>
  return
}

// -----

func.func @output_shape_bshd(%q: tensor<2x128x8x64xf32>, %k: tensor<2x256x2x64xf32>, %v: tensor<2x256x2x64xf32>) {
  // expected-error @+1 {{'attn.attention' op 'output' must have shape [2, 128, 8, 64] ([B, Hq, Sq, Dv] in the op's layout, query's element type), got [2, 8, 128, 64]}}
  %o = attn.attention %q, %k, %v {layout = #attn.layout<bshd>} : tensor<2x128x8x64xf32>, tensor<2x256x2x64xf32>, tensor<2x256x2x64xf32> -> tensor<2x8x128x64xf32>
  return
}

// -----

func.func @output_element_type(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op 'output' must have element type 'bf16', got 'f32'}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xf32>
  return
}

// -----

func.func @lse_shape(%q: tensor<?x8x128x64xf16>, %k: tensor<?x8x128x64xf16>, %v: tensor<?x8x128x64xf16>) {
  // expected-error @+1 {{'attn.attention' op 'lse' must have shape [?, 8, 128] ([B, Hq, Sq], f32), got [1, 8, 128, 1]}}
  %o, %lse = attn.attention %q, %k, %v : tensor<?x8x128x64xf16>, tensor<?x8x128x64xf16>, tensor<?x8x128x64xf16> -> tensor<?x8x128x64xf16>, tensor<1x8x128x1xf32>
  return
}

// -----

func.func @lse_element_type(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) {
  // expected-error @+1 {{'attn.attention' op 'lse' must have element type 'f32', got 'f16'}}
  %o, %lse = attn.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>, tensor<1x8x128xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention_partial
//===----------------------------------------------------------------------===//

// The shared operand checks apply to every attention op.
func.func @partial_operands(%q: tensor<8x32x1x128xbf16>, %k: tensor<8x8x4096x128xbf16>, %v: tensor<8x8x4096x128xf16>) {
  // expected-error @+1 {{'attn.attention_partial' op 'query', 'key' and 'value' must share one element type, got 'bf16', 'bf16' and 'f16'}}
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 4 : i64} : tensor<8x32x1x128xbf16>, tensor<8x8x4096x128xbf16>, tensor<8x8x4096x128xf16> -> tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32>
  return
}

// -----

func.func @partial_num_splits(%q: tensor<8x32x1x128xbf16>, %k: tensor<8x8x4096x128xbf16>, %v: tensor<8x8x4096x128xbf16>) {
  // expected-error @+1 {{'attn.attention_partial' op 'num_splits' must be at least 1, got 0}}
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 0 : i64} : tensor<8x32x1x128xbf16>, tensor<8x8x4096x128xbf16>, tensor<8x8x4096x128xbf16> -> tensor<0x8x32x1x128xf32>, tensor<0x8x32x1xf32>
  return
}

// -----

func.func @partial_output_shape(%q: tensor<8x32x1x128xbf16>, %k: tensor<8x8x4096x128xbf16>, %v: tensor<8x8x4096x128xbf16>) {
  // expected-error @+1 {{'attn.attention_partial' op 'partial_output' must have shape [4, 8, 32, 1, 128] ([num_splits, B, Hq, Sq, Dv], f32), got [2, 8, 32, 1, 128]}}
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 4 : i64} : tensor<8x32x1x128xbf16>, tensor<8x8x4096x128xbf16>, tensor<8x8x4096x128xbf16> -> tensor<2x8x32x1x128xf32>, tensor<4x8x32x1xf32>
  return
}

// -----

// Partial results are [num_splits, B, Hq, Sq, ...] whatever the layout.
func.func @partial_output_shape_bshd(%q: tensor<8x1x32x128xbf16>, %k: tensor<8x4096x8x128xbf16>, %v: tensor<8x4096x8x128xbf16>) {
  // expected-error @+1 {{'attn.attention_partial' op 'partial_output' must have shape [4, 8, 32, 1, 128] ([num_splits, B, Hq, Sq, Dv], f32), got [4, 8, 1, 32, 128]}}
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 4 : i64, layout = #attn.layout<bshd>} : tensor<8x1x32x128xbf16>, tensor<8x4096x8x128xbf16>, tensor<8x4096x8x128xbf16> -> tensor<4x8x1x32x128xf32>, tensor<4x8x32x1xf32>
  return
}

// -----

func.func @partial_output_element_type(%q: tensor<8x32x1x128xbf16>, %k: tensor<8x8x4096x128xbf16>, %v: tensor<8x8x4096x128xbf16>) {
  // expected-error @+1 {{'attn.attention_partial' op 'partial_output' must have element type 'f32', got 'bf16'}}
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 4 : i64} : tensor<8x32x1x128xbf16>, tensor<8x8x4096x128xbf16>, tensor<8x8x4096x128xbf16> -> tensor<4x8x32x1x128xbf16>, tensor<4x8x32x1xf32>
  return
}

// -----

func.func @partial_lse_shape(%q: tensor<8x32x1x128xbf16>, %k: tensor<8x8x4096x128xbf16>, %v: tensor<8x8x4096x128xbf16>) {
  // expected-error @+1 {{'attn.attention_partial' op 'partial_lse' must have shape [4, 8, 32, 1] ([num_splits, B, Hq, Sq], f32), got [8, 32, 1]}}
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 4 : i64} : tensor<8x32x1x128xbf16>, tensor<8x8x4096x128xbf16>, tensor<8x8x4096x128xbf16> -> tensor<4x8x32x1x128xf32>, tensor<8x32x1xf32>
  return
}

// -----

func.func @partial_lse_element_type(%q: tensor<8x32x1x128xbf16>, %k: tensor<8x8x4096x128xbf16>, %v: tensor<8x8x4096x128xbf16>) {
  // expected-error @+1 {{'attn.attention_partial' op 'partial_lse' must have element type 'f32', got 'bf16'}}
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 4 : i64} : tensor<8x32x1x128xbf16>, tensor<8x8x4096x128xbf16>, tensor<8x8x4096x128xbf16> -> tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.combine
//===----------------------------------------------------------------------===//

func.func @combine_partial_output_rank(%po: tensor<8x32x1x128xf32>, %pl: tensor<8x32x1xf32>) {
  // expected-error @+1 {{'attn.combine' op 'partial_output' must be a rank-5 f32 tensor [N, B, Hq, Sq, Dv], got 'tensor<8x32x1x128xf32>'}}
  %o = attn.combine %po, %pl : tensor<8x32x1x128xf32>, tensor<8x32x1xf32> -> tensor<8x32x1x128xf32>
  return
}

// -----

func.func @combine_partial_output_element_type(%po: tensor<4x8x32x1x128xbf16>, %pl: tensor<4x8x32x1xf32>) {
  // expected-error @+1 {{'attn.combine' op 'partial_output' must be a rank-5 f32 tensor [N, B, Hq, Sq, Dv], got 'tensor<4x8x32x1x128xbf16>'}}
  %o = attn.combine %po, %pl : tensor<4x8x32x1x128xbf16>, tensor<4x8x32x1xf32> -> tensor<8x32x1x128xbf16>
  return
}

// -----

func.func @combine_dynamic_heads(%po: tensor<4x8x?x1x128xf32>, %pl: tensor<4x8x?x1xf32>) {
  // expected-error @+1 {{'attn.combine' op 'partial_output' must have a static head count and head dim, got shape [4, 8, ?, 1, 128]}}
  %o = attn.combine %po, %pl : tensor<4x8x?x1x128xf32>, tensor<4x8x?x1xf32> -> tensor<8x?x1x128xf32>
  return
}

// -----

func.func @combine_dynamic_head_dim(%po: tensor<4x8x32x1x?xf32>, %pl: tensor<4x8x32x1xf32>) {
  // expected-error @+1 {{'attn.combine' op 'partial_output' must have a static head count and head dim, got shape [4, 8, 32, 1, ?]}}
  %o = attn.combine %po, %pl : tensor<4x8x32x1x?xf32>, tensor<4x8x32x1xf32> -> tensor<8x32x1x?xf32>
  return
}

// -----

// Zero heads or a zero value dim: nothing to combine (attn-tile would tile
// a value dim of 0 in 8-column tiles).
func.func @combine_zero_value_dim(%po: tensor<2x1x4x1x0xf32>, %pl: tensor<2x1x4x1xf32>) {
  // expected-error @+1 {{'attn.combine' op 'partial_output' must have a non-zero head count and value dim, got Hq = 4 and Dv = 0}}
  %o = attn.combine %po, %pl : tensor<2x1x4x1x0xf32>, tensor<2x1x4x1xf32> -> tensor<1x4x1x0xf16>
  return
}

// -----

func.func @combine_zero_heads(%po: tensor<2x1x0x1x8xf32>, %pl: tensor<2x1x0x1xf32>) {
  // expected-error @+1 {{'attn.combine' op 'partial_output' must have a non-zero head count and value dim, got Hq = 0 and Dv = 8}}
  %o = attn.combine %po, %pl : tensor<2x1x0x1x8xf32>, tensor<2x1x0x1xf32> -> tensor<1x0x1x8xf16>
  return
}

// -----

func.func @combine_value_dim_too_large(%po: tensor<2x1x4x1x70000xf32>, %pl: tensor<2x1x4x1xf32>) {
  // expected-error @+1 {{'attn.combine' op 'partial_output' value dim must be at most 65536, got Dv = 70000}}
  %o = attn.combine %po, %pl : tensor<2x1x4x1x70000xf32>, tensor<2x1x4x1xf32> -> tensor<1x4x1x70000xf16>
  return
}

// -----

func.func @combine_partial_lse_shape(%po: tensor<4x8x32x1x128xf32>, %pl: tensor<2x8x32x1xf32>) {
  // expected-error @+1 {{'attn.combine' op 'partial_lse' must have shape [4, 8, 32, 1] (the leading dims of 'partial_output', f32), got [2, 8, 32, 1]}}
  %o = attn.combine %po, %pl : tensor<4x8x32x1x128xf32>, tensor<2x8x32x1xf32> -> tensor<8x32x1x128xf32>
  return
}

// -----

func.func @combine_partial_lse_element_type(%po: tensor<4x8x32x1x128xf32>, %pl: tensor<4x8x32x1xf16>) {
  // expected-error @+1 {{'attn.combine' op 'partial_lse' must have element type 'f32', got 'f16'}}
  %o = attn.combine %po, %pl : tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf16> -> tensor<8x32x1x128xf32>
  return
}

// -----

func.func @combine_output_element_type(%po: tensor<4x8x32x1x128xf32>, %pl: tensor<4x8x32x1xf32>) {
  // expected-error @+1 {{'attn.combine' op 'output' element type must be f16, bf16 or f32, got 'i8'}}
  %o = attn.combine %po, %pl : tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32> -> tensor<8x32x1x128xi8>
  return
}

// -----

func.func @combine_output_shape(%po: tensor<4x8x32x1x128xf32>, %pl: tensor<4x8x32x1xf32>) {
  // expected-error @+1 {{'attn.combine' op 'output' must have shape [8, 1, 32, 128] ([B, Hq, Sq, Dv] in the op's layout), got [8, 32, 1, 128]}}
  %o = attn.combine %po, %pl {layout = #attn.layout<bshd>} : tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32> -> tensor<8x32x1x128xbf16>
  return
}

// -----

func.func @combine_lse_shape(%po: tensor<4x8x32x1x128xf32>, %pl: tensor<4x8x32x1xf32>) {
  // expected-error @+1 {{'attn.combine' op 'lse' must have shape [8, 32, 1] ([B, Hq, Sq], f32), got [4, 8, 32, 1]}}
  %o, %lse = attn.combine %po, %pl : tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32> -> tensor<8x32x1x128xf32>, tensor<4x8x32x1xf32>
  return
}

// -----

func.func @combine_lse_element_type(%po: tensor<4x8x32x1x128xf32>, %pl: tensor<4x8x32x1xf32>) {
  // expected-error @+1 {{'attn.combine' op 'lse' must have element type 'f32', got 'bf16'}}
  %o, %lse = attn.combine %po, %pl : tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32> -> tensor<8x32x1x128xbf16>, tensor<8x32x1xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention_grad
//===----------------------------------------------------------------------===//

func.func @grad_operands(%q: tensor<2x8x128x64xbf16>, %k: tensor<2x3x128x64xbf16>, %v: tensor<2x3x128x32xbf16>, %o: tensor<2x8x128x32xbf16>, %do: tensor<2x8x128x32xbf16>, %lse: tensor<2x8x128xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op query heads (Hq = 8) must be a multiple of key/value heads (Hkv = 3)}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<2x8x128x64xbf16>, tensor<2x3x128x64xbf16>, tensor<2x3x128x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128xf32>
      -> tensor<2x8x128x64xbf16>, tensor<2x3x128x64xbf16>, tensor<2x3x128x32xbf16>
  return
}

// -----

func.func @grad_output_shape(%q: tensor<2x8x128x64xbf16>, %k: tensor<2x2x128x64xbf16>, %v: tensor<2x2x128x32xbf16>, %o: tensor<2x8x128x64xbf16>, %do: tensor<2x8x128x32xbf16>, %lse: tensor<2x8x128xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op 'output' must have shape [2, 8, 128, 32] ([B, Hq, Sq, Dv] in the op's layout, query's element type), got [2, 8, 128, 64]}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>, tensor<2x8x128x64xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128xf32>
      -> tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>
  return
}

// -----

func.func @grad_output_element_type(%q: tensor<2x8x128x64xbf16>, %k: tensor<2x2x128x64xbf16>, %v: tensor<2x2x128x32xbf16>, %o: tensor<2x8x128x32xf32>, %do: tensor<2x8x128x32xbf16>, %lse: tensor<2x8x128xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op 'output' must have element type 'bf16', got 'f32'}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>, tensor<2x8x128x32xf32>, tensor<2x8x128x32xbf16>, tensor<2x8x128xf32>
      -> tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>
  return
}

// -----

func.func @grad_grad_output_shape(%q: tensor<2x128x8x64xbf16>, %k: tensor<2x128x2x64xbf16>, %v: tensor<2x128x2x32xbf16>, %o: tensor<2x128x8x32xbf16>, %do: tensor<2x8x128x32xbf16>, %lse: tensor<2x8x128xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op 'grad_output' must have shape [2, 128, 8, 32] ([B, Hq, Sq, Dv] in the op's layout, query's element type), got [2, 8, 128, 32]}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {layout = #attn.layout<bshd>}
      : tensor<2x128x8x64xbf16>, tensor<2x128x2x64xbf16>, tensor<2x128x2x32xbf16>, tensor<2x128x8x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128xf32>
      -> tensor<2x128x8x64xbf16>, tensor<2x128x2x64xbf16>, tensor<2x128x2x32xbf16>
  return
}

// -----

func.func @grad_grad_output_element_type(%q: tensor<2x8x128x64xbf16>, %k: tensor<2x2x128x64xbf16>, %v: tensor<2x2x128x32xbf16>, %o: tensor<2x8x128x32xbf16>, %do: tensor<2x8x128x32xf16>, %lse: tensor<2x8x128xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op 'grad_output' must have element type 'bf16', got 'f16'}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128x32xf16>, tensor<2x8x128xf32>
      -> tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>
  return
}

// -----

func.func @grad_lse_shape(%q: tensor<2x8x128x64xbf16>, %k: tensor<2x2x128x64xbf16>, %v: tensor<2x2x128x32xbf16>, %o: tensor<2x8x128x32xbf16>, %do: tensor<2x8x128x32xbf16>, %lse: tensor<2x2x128xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op 'lse' must have shape [2, 8, 128] ([B, Hq, Sq], f32), got [2, 2, 128]}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x2x128xf32>
      -> tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>
  return
}

// -----

func.func @grad_lse_element_type(%q: tensor<2x8x128x64xbf16>, %k: tensor<2x2x128x64xbf16>, %v: tensor<2x2x128x32xbf16>, %o: tensor<2x8x128x32xbf16>, %do: tensor<2x8x128x32xbf16>, %lse: tensor<2x8x128xbf16>) {
  // expected-error @+1 {{'attn.attention_grad' op 'lse' must have element type 'f32', got 'bf16'}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128xbf16>
      -> tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>
  return
}

// -----

func.func @grad_query_shape(%q: tensor<2x8x128x64xbf16>, %k: tensor<2x2x128x64xbf16>, %v: tensor<2x2x128x32xbf16>, %o: tensor<2x8x128x32xbf16>, %do: tensor<2x8x128x32xbf16>, %lse: tensor<2x8x128xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op 'grad_query' must have shape [2, 8, 128, 64] (the shape and element type of its operand), got [2, 8, 128, 32]}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128xf32>
      -> tensor<2x8x128x32xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>
  return
}

// -----

// dK has K's shape: the gradients of the query heads of one group are summed.
func.func @grad_key_shape(%q: tensor<2x8x128x64xbf16>, %k: tensor<2x2x128x64xbf16>, %v: tensor<2x2x128x32xbf16>, %o: tensor<2x8x128x32xbf16>, %do: tensor<2x8x128x32xbf16>, %lse: tensor<2x8x128xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op 'grad_key' must have shape [2, 2, 128, 64] (the shape and element type of its operand), got [2, 8, 128, 64]}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128xf32>
      -> tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>, tensor<2x2x128x32xbf16>
  return
}

// -----

func.func @grad_value_element_type(%q: tensor<2x8x128x64xbf16>, %k: tensor<2x2x128x64xbf16>, %v: tensor<2x2x128x32xbf16>, %o: tensor<2x8x128x32xbf16>, %do: tensor<2x8x128x32xbf16>, %lse: tensor<2x8x128xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op 'grad_value' must have element type 'bf16', got 'f32'}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128xf32>
      -> tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xf32>
  return
}

//===----------------------------------------------------------------------===//
// kv_lens and block_table
//===----------------------------------------------------------------------===//

// -----

func.func @table_without_lens(%q: tensor<2x8x1x64xf16>, %pool: tensor<9x2x16x64xf16>, %t: tensor<2x4xi32>) {
  // expected-error @+1 {{'attn.attention' op has a 'block_table' but no 'kv_lens': a paged cache needs the key count of every sequence}}
  %o = attn.attention %q, %pool, %pool block_table(%t : tensor<2x4xi32>)
      : tensor<2x8x1x64xf16>, tensor<9x2x16x64xf16>, tensor<9x2x16x64xf16> -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @lens_batch(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x16x64xf16>, %l: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op 'kv_lens' must have shape [2] ([B], one key count per sequence), got [3]}}
  %o = attn.attention %q, %k, %k kv_lens(%l : tensor<3xi32>)
      : tensor<2x8x1x64xf16>, tensor<2x2x16x64xf16>, tensor<2x2x16x64xf16> -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @lens_rank(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x16x64xf16>, %l: tensor<2x1xi32>) {
  // expected-error @+1 {{'attn.attention' op 'kv_lens' must have shape [2] ([B], one key count per sequence), got [2, 1]}}
  %o = attn.attention %q, %k, %k kv_lens(%l : tensor<2x1xi32>)
      : tensor<2x8x1x64xf16>, tensor<2x2x16x64xf16>, tensor<2x2x16x64xf16> -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @lens_type(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x16x64xf16>, %l: tensor<2xi64>) {
  // expected-error @+1 {{operand #3 must be ranked tensor of 32-bit signless integer values}}
  %o = attn.attention %q, %k, %k kv_lens(%l : tensor<2xi64>)
      : tensor<2x8x1x64xf16>, tensor<2x2x16x64xf16>, tensor<2x2x16x64xf16> -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @table_batch(%q: tensor<2x8x1x64xf16>, %pool: tensor<9x2x16x64xf16>, %l: tensor<2xi32>, %t: tensor<4x4xi32>) {
  // expected-error @+1 {{'attn.attention_partial' op 'block_table' must have shape [2, ?] ([B, max_pages]), got [4, 4]}}
  %po, %pl = attn.attention_partial %q, %pool, %pool kv_lens(%l : tensor<2xi32>) block_table(%t : tensor<4x4xi32>) {num_splits = 2 : i64}
      : tensor<2x8x1x64xf16>, tensor<9x2x16x64xf16>, tensor<9x2x16x64xf16> -> tensor<2x2x8x1x64xf32>, tensor<2x2x8x1xf32>
  return
}

// -----

func.func @table_empty(%q: tensor<2x1x8x64xf16>, %pool: tensor<9x16x2x64xf16>, %l: tensor<2xi32>, %t: tensor<2x0xi32>) {
  // expected-error @+1 {{'attn.attention' op a paged cache needs at least one page per sequence and one row per page, got max_pages = 0 and page_size = 16 ('key' is the page pool [P, page_size, Hkv, D])}}
  %o = attn.attention %q, %pool, %pool kv_lens(%l : tensor<2xi32>) block_table(%t : tensor<2x0xi32>) {layout = #attn.layout<bshd>}
      : tensor<2x1x8x64xf16>, tensor<9x16x2x64xf16>, tensor<9x16x2x64xf16> -> tensor<2x1x8x64xf16>
  return
}

// -----

func.func @pool_pages(%q: tensor<2x8x1x64xf16>, %k: tensor<9x2x16x64xf16>, %v: tensor<8x2x16x64xf16>, %l: tensor<2xi32>, %t: tensor<2x4xi32>) {
  // expected-error @+1 {{'attn.attention' op page count mismatch: the pools 'key' and 'value' have P = [9, 8]}}
  %o = attn.attention %q, %k, %v kv_lens(%l : tensor<2xi32>) block_table(%t : tensor<2x4xi32>)
      : tensor<2x8x1x64xf16>, tensor<9x2x16x64xf16>, tensor<8x2x16x64xf16> -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @pool_page_size(%q: tensor<2x8x1x64xf16>, %k: tensor<9x2x16x64xf16>, %v: tensor<9x2x32x64xf16>, %l: tensor<2xi32>, %t: tensor<2x4xi32>) {
  // expected-error @+1 {{'attn.attention' op page size mismatch: 'key' has page_size = [16] but 'value' has page_size = [32]}}
  %o = attn.attention %q, %k, %v kv_lens(%l : tensor<2xi32>) block_table(%t : tensor<2x4xi32>)
      : tensor<2x8x1x64xf16>, tensor<9x2x16x64xf16>, tensor<9x2x32x64xf16> -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @paged_mask_capacity(%q: tensor<2x8x1x64xf16>, %pool: tensor<9x2x16x64xf16>, %l: tensor<2xi32>, %t: tensor<2x4xi32>, %m: tensor<1x16xf16>) {
  // expected-error @+1 {{'attn.attention' op 'mask' of shape [1, 16] is not broadcastable to [B, Hq, Sq, Sk] = [2, 8, 1, 64]}}
  %o = attn.attention %q, %pool, %pool kv_lens(%l : tensor<2xi32>) block_table(%t : tensor<2x4xi32>) mask(%m : tensor<1x16xf16>)
      : tensor<2x8x1x64xf16>, tensor<9x2x16x64xf16>, tensor<9x2x16x64xf16> -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @paged_capacity_overflow(%q: tensor<2x8x1x64xf16>, %pool: tensor<?x2x1048576x64xf16>, %l: tensor<2xi32>, %t: tensor<2x1099511627776xi32>) {
  // expected-error @+1 {{'attn.attention' op a paged cache of max_pages x page_size = 1099511627776 x 1048576 keys holds more than 2^48 keys}}
  %o = attn.attention %q, %pool, %pool kv_lens(%l : tensor<2xi32>) block_table(%t : tensor<2x1099511627776xi32>)
      : tensor<2x8x1x64xf16>, tensor<?x2x1048576x64xf16>, tensor<?x2x1048576x64xf16> -> tensor<2x8x1x64xf16>
  return
}

//===----------------------------------------------------------------------===//
// query_offsets and key_offsets
//===----------------------------------------------------------------------===//

// -----

func.func @key_offsets_alone(%q: tensor<2x8x4x64xf16>, %k: tensor<1x2x16x64xf16>, %o: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op has 'key_offsets' but no 'query_offsets': packed keys come with packed queries}}
  %r = attn.attention %q, %k, %k key_offsets(%o : tensor<3xi32>)
      : tensor<2x8x4x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16> -> tensor<2x8x4x64xf16>
  return
}

// -----

func.func @packed_query_batch(%q: tensor<2x8x4x64xf16>, %k: tensor<2x2x16x64xf16>, %o: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op 'query' of a packed batch must have a leading size of 1 (the sequences lie back to back in one), got shape [2, 8, 4, 64]}}
  %r = attn.attention %q, %k, %k query_offsets(%o : tensor<3xi32>)
      : tensor<2x8x4x64xf16>, tensor<2x2x16x64xf16>, tensor<2x2x16x64xf16> -> tensor<2x8x4x64xf16>
  return
}

// -----

func.func @packed_offsets_rank(%q: tensor<1x8x40x64xf16>, %k: tensor<1x2x16x64xf16>, %o: tensor<3x1xi32>) {
  // expected-error @+1 {{'attn.attention' op 'query_offsets' must have shape [B + 1] (the first row of every sequence and the end of the last), got shape [3, 1]}}
  %r = attn.attention %q, %k, %k query_offsets(%o : tensor<3x1xi32>)
      : tensor<1x8x40x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16> -> tensor<1x8x40x64xf16>
  return
}

// -----

func.func @packed_offsets_empty(%q: tensor<1x8x40x64xf16>, %k: tensor<1x2x16x64xf16>, %o: tensor<0xi32>) {
  // expected-error @+1 {{'attn.attention' op 'query_offsets' must have shape [B + 1] (the first row of every sequence and the end of the last), got shape [0]}}
  %r = attn.attention %q, %k, %k query_offsets(%o : tensor<0xi32>)
      : tensor<1x8x40x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16> -> tensor<1x8x40x64xf16>
  return
}

// -----

func.func @packed_key_count(%q: tensor<1x8x40x64xf16>, %k: tensor<1x2x16x64xf16>, %qo: tensor<3xi32>, %ko: tensor<4xi32>) {
  // expected-error @+1 {{'attn.attention' op 'query_offsets' and 'key_offsets' must give the same number of sequences, got 3 and 4 offsets}}
  %r = attn.attention %q, %k, %k query_offsets(%qo : tensor<3xi32>) key_offsets(%ko : tensor<4xi32>)
      : tensor<1x8x40x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16> -> tensor<1x8x40x64xf16>
  return
}

// -----

func.func @packed_key_batch(%q: tensor<1x8x40x64xf16>, %k: tensor<2x2x16x64xf16>, %qo: tensor<3xi32>, %ko: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op 'key' of a packed batch must have a leading size of 1 (the sequences lie back to back in one), got shape [2, 2, 16, 64]}}
  %r = attn.attention %q, %k, %k query_offsets(%qo : tensor<3xi32>) key_offsets(%ko : tensor<3xi32>)
      : tensor<1x8x40x64xf16>, tensor<2x2x16x64xf16>, tensor<2x2x16x64xf16> -> tensor<1x8x40x64xf16>
  return
}

// -----

func.func @packed_keys_and_lens(%q: tensor<1x8x40x64xf16>, %k: tensor<1x2x16x64xf16>, %qo: tensor<3xi32>, %ko: tensor<3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{'attn.attention' op has both 'key_offsets' and 'kv_lens': packed keys give each sequence's keys by their offsets}}
  %r = attn.attention %q, %k, %k query_offsets(%qo : tensor<3xi32>) key_offsets(%ko : tensor<3xi32>) kv_lens(%l : tensor<2xi32>)
      : tensor<1x8x40x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16> -> tensor<1x8x40x64xf16>
  return
}

// -----

func.func @packed_mask(%q: tensor<1x8x40x64xf16>, %k: tensor<1x2x16x64xf16>, %qo: tensor<3xi32>, %ko: tensor<3xi32>, %m: tensor<40x16xi1>) {
  // expected-error @+1 {{'attn.attention' op has a mask operand and packed sequences; a packed batch takes no mask}}
  %r = attn.attention %q, %k, %k query_offsets(%qo : tensor<3xi32>) key_offsets(%ko : tensor<3xi32>) mask(%m : tensor<40x16xi1>)
      : tensor<1x8x40x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16> -> tensor<1x8x40x64xf16>
  return
}

// -----

func.func @packed_lens_batch(%q: tensor<1x8x40x64xf16>, %k: tensor<2x2x16x64xf16>, %qo: tensor<3xi32>, %l: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op 'kv_lens' must have shape [2] ([B], one key count per sequence), got [3]}}
  %r = attn.attention %q, %k, %k query_offsets(%qo : tensor<3xi32>) kv_lens(%l : tensor<3xi32>)
      : tensor<1x8x40x64xf16>, tensor<2x2x16x64xf16>, tensor<2x2x16x64xf16> -> tensor<1x8x40x64xf16>
  return
}

// -----

func.func @packed_output(%q: tensor<1x8x40x64xf16>, %k: tensor<1x2x16x64xf16>, %qo: tensor<3xi32>, %ko: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op 'output' must have shape [1, 8, 40, 64] ([B, Hq, Sq, Dv] in the op's layout, query's element type), got [2, 8, 40, 64]}}
  %r = attn.attention %q, %k, %k query_offsets(%qo : tensor<3xi32>) key_offsets(%ko : tensor<3xi32>)
      : tensor<1x8x40x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16> -> tensor<2x8x40x64xf16>
  return
}

// -----

func.func @balanced_without_lens(%q: tensor<8x32x1x128xbf16>, %k: tensor<8x8x4096x128xbf16>, %v: tensor<8x8x4096x128xbf16>) {
  // expected-error @+1 {{'attn.attention_partial' op is 'balanced' but has no 'kv_lens': the work is balanced by the sequences' key counts}}
  %po, %pl, %off = attn.attention_partial %q, %k, %v {num_splits = 4 : i64, balanced} : tensor<8x32x1x128xbf16>, tensor<8x8x4096x128xbf16>, tensor<8x8x4096x128xbf16> -> tensor<32x1x32x1x128xf32>, tensor<32x1x32x1xf32>, tensor<9xi32>
  return
}

// -----

func.func @balanced_without_offsets(%q: tensor<8x32x1x128xbf16>, %k: tensor<8x8x4096x128xbf16>, %v: tensor<8x8x4096x128xbf16>, %lens: tensor<8xi32>) {
  // expected-error @+1 {{'attn.attention_partial' op is 'balanced' but has no 'split_offsets' result (i32 [B + 1], each sequence's first work item)}}
  %po, %pl = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<8xi32>) {num_splits = 4 : i64, balanced} : tensor<8x32x1x128xbf16>, tensor<8x8x4096x128xbf16>, tensor<8x8x4096x128xbf16> -> tensor<32x1x32x1x128xf32>, tensor<32x1x32x1xf32>
  return
}

// -----

func.func @offsets_without_balanced(%q: tensor<8x32x1x128xbf16>, %k: tensor<8x8x4096x128xbf16>, %v: tensor<8x8x4096x128xbf16>, %lens: tensor<8xi32>) {
  // expected-error @+1 {{'attn.attention_partial' op has a 'split_offsets' result but is not 'balanced'}}
  %po, %pl, %off = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<8xi32>) {num_splits = 4 : i64} : tensor<8x32x1x128xbf16>, tensor<8x8x4096x128xbf16>, tensor<8x8x4096x128xbf16> -> tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32>, tensor<9xi32>
  return
}

// -----

func.func @balanced_items(%q: tensor<8x32x1x128xbf16>, %k: tensor<8x8x4096x128xbf16>, %v: tensor<8x8x4096x128xbf16>, %lens: tensor<8xi32>) {
  // expected-error @+1 {{'attn.attention_partial' op 'partial_output' must have shape [32, 1, 32, 1, 128] ([num_splits * B, 1, Hq, Sq, Dv], f32: balanced work items), got [4, 8, 32, 1, 128]}}
  %po, %pl, %off = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<8xi32>) {num_splits = 4 : i64, balanced} : tensor<8x32x1x128xbf16>, tensor<8x8x4096x128xbf16>, tensor<8x8x4096x128xbf16> -> tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32>, tensor<9xi32>
  return
}

// -----

// num_splits * B wraps around int64 here (2^48 * 2^16 = 2^64): checked, it
// is not taken for zero work items.
func.func @balanced_items_overflow(%q: tensor<65536x1x1x8xf16>, %k: tensor<65536x1x16x8xf16>, %lens: tensor<65536xi32>) {
  // expected-error @+1 {{'attn.attention_partial' op has num_splits * B = 281474976710656 * 65536 work items, more than 2^48 = 281474976710656}}
  %po, %pl, %off = attn.attention_partial %q, %k, %k kv_lens(%lens : tensor<65536xi32>) {num_splits = 281474976710656 : i64, balanced} : tensor<65536x1x1x8xf16>, tensor<65536x1x16x8xf16>, tensor<65536x1x16x8xf16> -> tensor<0x1x1x1x8xf32>, tensor<0x1x1x1xf32>, tensor<65537xi32>
  return
}

// -----

func.func @num_splits_huge(%q: tensor<?x1x1x8xf16>, %k: tensor<?x1x16x8xf16>, %lens: tensor<?xi32>) {
  // expected-error @+1 {{'attn.attention_partial' op 'num_splits' must be at most 2^48 = 281474976710656, got 4611686018427387904}}
  %po, %pl, %off = attn.attention_partial %q, %k, %k kv_lens(%lens : tensor<?xi32>) {num_splits = 4611686018427387904 : i64, balanced} : tensor<?x1x1x8xf16>, tensor<?x1x16x8xf16>, tensor<?x1x16x8xf16> -> tensor<?x1x1x1x8xf32>, tensor<?x1x1x1xf32>, tensor<?xi32>
  return
}

// -----

func.func @balanced_offsets_shape(%q: tensor<8x32x1x128xbf16>, %k: tensor<8x8x4096x128xbf16>, %v: tensor<8x8x4096x128xbf16>, %lens: tensor<8xi32>) {
  // expected-error @+1 {{'attn.attention_partial' op 'split_offsets' must have shape [9] ([B + 1], i32), got [8]}}
  %po, %pl, %off = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<8xi32>) {num_splits = 4 : i64, balanced} : tensor<8x32x1x128xbf16>, tensor<8x8x4096x128xbf16>, tensor<8x8x4096x128xbf16> -> tensor<32x1x32x1x128xf32>, tensor<32x1x32x1xf32>, tensor<8xi32>
  return
}

// -----

func.func @combine_items_batch(%po: tensor<32x8x32x1x128xf32>, %pl: tensor<32x8x32x1xf32>, %off: tensor<9xi32>) {
  // expected-error @+1 {{'attn.combine' op 'partial_output' must be [W, 1, Hq, Sq, Dv] work items with 'split_offsets', got shape [32, 8, 32, 1, 128]}}
  %o = attn.combine %po, %pl split_offsets(%off : tensor<9xi32>) : tensor<32x8x32x1x128xf32>, tensor<32x8x32x1xf32> -> tensor<8x32x1x128xbf16>
  return
}

// -----

func.func @combine_offsets_batch(%po: tensor<32x1x32x1x128xf32>, %pl: tensor<32x1x32x1xf32>, %off: tensor<5xi32>) {
  // expected-error @+1 {{'attn.combine' op 'output' must have shape [4, 32, 1, 128] ([B, Hq, Sq, Dv] in the op's layout), got [8, 32, 1, 128]}}
  %o = attn.combine %po, %pl split_offsets(%off : tensor<5xi32>) : tensor<32x1x32x1x128xf32>, tensor<32x1x32x1xf32> -> tensor<8x32x1x128xbf16>
  return
}
