// RUN: attn-opt %s -split-input-file -verify-diagnostics

// Every way a block mask can be malformed gets an error that names the
// operand and what it must be.

func.func @no_block_size(%q: tensor<1x2x64x16xf32>, %c: tensor<1x2x2xi32>, %i: tensor<1x2x2x2xi32>) {
  // expected-error @+1 {{has a 'block_mask' but no 'block_size'}}
  %o = attn.attention %q, %q, %q block_mask(%c, %i : tensor<1x2x2xi32>, tensor<1x2x2x2xi32>) : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return
}

// -----

func.func @no_lists(%q: tensor<1x2x64x16xf32>) {
  // expected-error @+1 {{has a 'block_size' but no 'block_mask'}}
  %o = attn.attention %q, %q, %q {block_size = array<i64: 32, 32>} : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return
}

// -----

func.func @three_lists(%q: tensor<1x2x64x16xf32>, %c: tensor<1x2x2xi32>, %i: tensor<1x2x2x2xi32>) {
  // expected-error @+1 {{'block_mask' must have 2 operands (counts, indices) or 4 (and the full blocks' counts, indices), got 3}}
  %o = attn.attention %q, %q, %q block_mask(%c, %i, %c : tensor<1x2x2xi32>, tensor<1x2x2x2xi32>, tensor<1x2x2xi32>) {block_size = array<i64: 32, 32>} : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return
}

// -----

func.func @bad_block_size(%q: tensor<1x2x64x16xf32>, %c: tensor<1x2x2xi32>, %i: tensor<1x2x2x2xi32>) {
  // expected-error @+1 {{'block_size' must be [BQ, BK], each in [1, 65536], got [0, 32]}}
  %o = attn.attention %q, %q, %q block_mask(%c, %i : tensor<1x2x2xi32>, tensor<1x2x2x2xi32>) {block_size = array<i64: 0, 32>} : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return
}

// -----

func.func @wrong_block_count(%q: tensor<1x2x64x16xf32>, %c: tensor<1x2x3xi32>, %i: tensor<1x2x3x2xi32>) {
  // expected-error @+1 {{'block_mask' operand #0 (counts) must have shape [1, 2, 2] ([B, Hq, ceil(Sq / BQ)]; B and Hq may be 1), got [1, 2, 3]}}
  %o = attn.attention %q, %q, %q block_mask(%c, %i : tensor<1x2x3xi32>, tensor<1x2x3x2xi32>) {block_size = array<i64: 32, 32>} : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return
}

// -----

func.func @empty_list(%q: tensor<1x2x64x16xf32>, %c: tensor<1x2x2xi32>, %i: tensor<1x2x2x0xi32>) {
  // expected-error @+1 {{'block_mask' operand #1 (indices) must have shape [1, 2, 2, ?] ([B, Hq, ceil(Sq / BQ)], a non-zero list; B and Hq may be 1), got [1, 2, 2, 0]}}
  %o = attn.attention %q, %q, %q block_mask(%c, %i : tensor<1x2x2xi32>, tensor<1x2x2x0xi32>) {block_size = array<i64: 32, 32>} : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return
}

// -----

func.func @heads_mismatch(%q: tensor<1x2x64x16xf32>, %c: tensor<1x2x2xi32>, %i: tensor<1x1x2x2xi32>) {
  // expected-error @+1 {{'block_mask' operand #1 must have the leading dims of its counts (operand #0), got [1, 1, 2, 2] and [1, 2, 2]}}
  %o = attn.attention %q, %q, %q block_mask(%c, %i : tensor<1x2x2xi32>, tensor<1x1x2x2xi32>) {block_size = array<i64: 32, 32>} : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return
}

// -----

func.func @full_counts_shape(%q: tensor<1x2x64x16xf32>, %c: tensor<1x2x2xi32>, %i: tensor<1x2x2x2xi32>, %f: tensor<1x2x2x2xi32>) {
  // expected-error @+1 {{'block_mask' operand #2 (full blocks' counts) must have shape [1, 2, 2] ([B, Hq, ceil(Sq / BQ)]; B and Hq may be 1), got [1, 2, 2, 2]}}
  %o = attn.attention %q, %q, %q block_mask(%c, %i, %f, %i : tensor<1x2x2xi32>, tensor<1x2x2x2xi32>, tensor<1x2x2x2xi32>, tensor<1x2x2x2xi32>) {block_size = array<i64: 32, 32>} : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return
}

// -----

func.func @paged(%q: tensor<2x2x1x16xf32>, %kv: tensor<8x2x16x16xf32>, %lens: tensor<2xi32>, %table: tensor<2x4xi32>, %c: tensor<1x1x1xi32>, %i: tensor<1x1x1x1xi32>) {
  // expected-error @+1 {{has a 'block_mask' and a packed batch or KV cache; block masks take dense operands}}
  %o = attn.attention %q, %kv, %kv kv_lens(%lens : tensor<2xi32>) block_table(%table : tensor<2x4xi32>) block_mask(%c, %i : tensor<1x1x1xi32>, tensor<1x1x1x1xi32>) {block_size = array<i64: 16, 16>} : tensor<2x2x1x16xf32>, tensor<8x2x16x16xf32>, tensor<8x2x16x16xf32> -> tensor<2x2x1x16xf32>
  return
}

// -----

func.func @grad_q_lists(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x96x16xf32>, %lse: tensor<1x2x64xf32>, %c: tensor<1x2x2xi32>, %i: tensor<1x2x2x3xi32>, %qc: tensor<1x2x3xi32>, %qi: tensor<1x2x3x2xi32>) {
  // expected-error @+1 {{'q_block_mask' must have as many operands as 'block_mask' (2, the same lists transposed), got 0}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %k, %q, %q, %lse block_mask(%c, %i : tensor<1x2x2xi32>, tensor<1x2x2x3xi32>) {block_size = array<i64: 32, 32>} : tensor<1x2x64x16xf32>, tensor<1x2x96x16xf32>, tensor<1x2x96x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64xf32> -> tensor<1x2x64x16xf32>, tensor<1x2x96x16xf32>, tensor<1x2x96x16xf32>
  return
}

// -----

func.func @grad_q_shape(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x96x16xf32>, %lse: tensor<1x2x64xf32>, %c: tensor<1x2x2xi32>, %i: tensor<1x2x2x3xi32>, %qc: tensor<1x2x2xi32>, %qi: tensor<1x2x2x2xi32>) {
  // expected-error @+1 {{'q_block_mask' operand #0 (counts) must have shape [1, 2, 3] ([B, Hq, ceil(Sk / BK)]; B and Hq may be 1), got [1, 2, 2]}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %k, %q, %q, %lse block_mask(%c, %i : tensor<1x2x2xi32>, tensor<1x2x2x3xi32>) q_block_mask(%qc, %qi : tensor<1x2x2xi32>, tensor<1x2x2x2xi32>) {block_size = array<i64: 32, 32>} : tensor<1x2x64x16xf32>, tensor<1x2x96x16xf32>, tensor<1x2x96x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64xf32> -> tensor<1x2x64x16xf32>, tensor<1x2x96x16xf32>, tensor<1x2x96x16xf32>
  return
}
