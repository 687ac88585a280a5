// Block-sparse attention on the GPU (the score-mod issue's block masks,
// FlexAttention's BlockMask of 128 x 128 blocks): forward and backward,
// bf16, D = 64 and 128, with the block mask alone (every listed block
// visible, the full lists; the partial ones for blocks the caller wants
// masked elementwise, here none), with a causal kind, and with the
// document mask modification of examples/gpu/mods.mlir (its blocks from
// the documents: full inside one, none across). For
// `attn-compile examples/gpu/blocks.mlir -o DIR --chip=sm_90a,sm_80`,
// test/GPU/blocks_tests.py and bench/bench_blocks.py. The kernels serve
// every shape; the static ones here only make the ops well formed.

func.func @sparse_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %bc: tensor<2x16x8xi32>, %bi: tensor<2x16x8x8xi32>, %bfc: tensor<2x16x8xi32>, %bfi: tensor<2x16x8x8xi32>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v block_mask(%bc, %bi, %bfc, %bfi : tensor<2x16x8xi32>, tensor<2x16x8x8xi32>, tensor<2x16x8xi32>, tensor<2x16x8x8xi32>) {block_size = array<i64: 128, 128>} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
  return %o, %lse : tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
}

func.func @sparse_grad_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %o: tensor<2x16x1024x64xbf16>, %do: tensor<2x16x1024x64xbf16>, %lse: tensor<2x16x1024xf32>, %bc: tensor<2x16x8xi32>, %bi: tensor<2x16x8x8xi32>, %bfc: tensor<2x16x8xi32>, %bfi: tensor<2x16x8x8xi32>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse block_mask(%bc, %bi, %bfc, %bfi : tensor<2x16x8xi32>, tensor<2x16x8x8xi32>, tensor<2x16x8xi32>, tensor<2x16x8x8xi32>) q_block_mask(%bc, %bi, %bfc, %bfi : tensor<2x16x8xi32>, tensor<2x16x8x8xi32>, tensor<2x16x8xi32>, tensor<2x16x8x8xi32>) {block_size = array<i64: 128, 128>} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
  return %dq, %dk, %dv : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
}

func.func @causal_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %bc: tensor<2x16x8xi32>, %bi: tensor<2x16x8x8xi32>, %bfc: tensor<2x16x8xi32>, %bfi: tensor<2x16x8x8xi32>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v block_mask(%bc, %bi, %bfc, %bfi : tensor<2x16x8xi32>, tensor<2x16x8x8xi32>, tensor<2x16x8xi32>, tensor<2x16x8x8xi32>) {block_size = array<i64: 128, 128>, causal = #attn.causal<bottom_right>} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
  return %o, %lse : tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
}

func.func @causal_grad_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %o: tensor<2x16x1024x64xbf16>, %do: tensor<2x16x1024x64xbf16>, %lse: tensor<2x16x1024xf32>, %bc: tensor<2x16x8xi32>, %bi: tensor<2x16x8x8xi32>, %bfc: tensor<2x16x8xi32>, %bfi: tensor<2x16x8x8xi32>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse block_mask(%bc, %bi, %bfc, %bfi : tensor<2x16x8xi32>, tensor<2x16x8x8xi32>, tensor<2x16x8xi32>, tensor<2x16x8x8xi32>) q_block_mask(%bc, %bi, %bfc, %bfi : tensor<2x16x8xi32>, tensor<2x16x8x8xi32>, tensor<2x16x8xi32>, tensor<2x16x8x8xi32>) {block_size = array<i64: 128, 128>, causal = #attn.causal<bottom_right>} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
  return %dq, %dk, %dv : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
}

func.func @document_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %bc: tensor<2x16x8xi32>, %bi: tensor<2x16x8x8xi32>, %bfc: tensor<2x16x8xi32>, %bfi: tensor<2x16x8x8xi32>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v block_mask(%bc, %bi, %bfc, %bfi : tensor<2x16x8xi32>, tensor<2x16x8x8xi32>, tensor<2x16x8xi32>, tensor<2x16x8x8xi32>) {block_size = array<i64: 128, 128>, mod_name = "document512"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      // Documents of 512 tokens, each attending only within itself.
      %n = arith.constant 512 : index
      %di = arith.divui %i, %n : index
      %dj = arith.divui %j, %n : index
      %keep = arith.cmpi eq, %di, %dj : index
      attn.yield %keep : i1
    }
  return %o, %lse : tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
}

func.func @document_grad_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %o: tensor<2x16x1024x64xbf16>, %do: tensor<2x16x1024x64xbf16>, %lse: tensor<2x16x1024xf32>, %bc: tensor<2x16x8xi32>, %bi: tensor<2x16x8x8xi32>, %bfc: tensor<2x16x8xi32>, %bfi: tensor<2x16x8x8xi32>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse block_mask(%bc, %bi, %bfc, %bfi : tensor<2x16x8xi32>, tensor<2x16x8x8xi32>, tensor<2x16x8xi32>, tensor<2x16x8x8xi32>) q_block_mask(%bc, %bi, %bfc, %bfi : tensor<2x16x8xi32>, tensor<2x16x8x8xi32>, tensor<2x16x8xi32>, tensor<2x16x8x8xi32>) {block_size = array<i64: 128, 128>, mod_name = "document512"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      // Documents of 512 tokens, each attending only within itself.
      %n = arith.constant 512 : index
      %di = arith.divui %i, %n : index
      %dj = arith.divui %j, %n : index
      %keep = arith.cmpi eq, %di, %dj : index
      attn.yield %keep : i1
    }
  return %dq, %dk, %dv : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
}

func.func @sparse_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %bc: tensor<2x16x8xi32>, %bi: tensor<2x16x8x8xi32>, %bfc: tensor<2x16x8xi32>, %bfi: tensor<2x16x8x8xi32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v block_mask(%bc, %bi, %bfc, %bfi : tensor<2x16x8xi32>, tensor<2x16x8x8xi32>, tensor<2x16x8xi32>, tensor<2x16x8x8xi32>) {block_size = array<i64: 128, 128>} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
  return %o, %lse : tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
}

func.func @sparse_grad_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>, %do: tensor<2x16x1024x128xbf16>, %lse: tensor<2x16x1024xf32>, %bc: tensor<2x16x8xi32>, %bi: tensor<2x16x8x8xi32>, %bfc: tensor<2x16x8xi32>, %bfi: tensor<2x16x8x8xi32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse block_mask(%bc, %bi, %bfc, %bfi : tensor<2x16x8xi32>, tensor<2x16x8x8xi32>, tensor<2x16x8xi32>, tensor<2x16x8x8xi32>) q_block_mask(%bc, %bi, %bfc, %bfi : tensor<2x16x8xi32>, tensor<2x16x8x8xi32>, tensor<2x16x8xi32>, tensor<2x16x8x8xi32>) {block_size = array<i64: 128, 128>} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
  return %dq, %dk, %dv : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
}

func.func @causal_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %bc: tensor<2x16x8xi32>, %bi: tensor<2x16x8x8xi32>, %bfc: tensor<2x16x8xi32>, %bfi: tensor<2x16x8x8xi32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v block_mask(%bc, %bi, %bfc, %bfi : tensor<2x16x8xi32>, tensor<2x16x8x8xi32>, tensor<2x16x8xi32>, tensor<2x16x8x8xi32>) {block_size = array<i64: 128, 128>, causal = #attn.causal<bottom_right>} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
  return %o, %lse : tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
}

func.func @causal_grad_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>, %do: tensor<2x16x1024x128xbf16>, %lse: tensor<2x16x1024xf32>, %bc: tensor<2x16x8xi32>, %bi: tensor<2x16x8x8xi32>, %bfc: tensor<2x16x8xi32>, %bfi: tensor<2x16x8x8xi32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse block_mask(%bc, %bi, %bfc, %bfi : tensor<2x16x8xi32>, tensor<2x16x8x8xi32>, tensor<2x16x8xi32>, tensor<2x16x8x8xi32>) q_block_mask(%bc, %bi, %bfc, %bfi : tensor<2x16x8xi32>, tensor<2x16x8x8xi32>, tensor<2x16x8xi32>, tensor<2x16x8x8xi32>) {block_size = array<i64: 128, 128>, causal = #attn.causal<bottom_right>} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
  return %dq, %dk, %dv : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
}

func.func @document_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %bc: tensor<2x16x8xi32>, %bi: tensor<2x16x8x8xi32>, %bfc: tensor<2x16x8xi32>, %bfi: tensor<2x16x8x8xi32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v block_mask(%bc, %bi, %bfc, %bfi : tensor<2x16x8xi32>, tensor<2x16x8x8xi32>, tensor<2x16x8xi32>, tensor<2x16x8x8xi32>) {block_size = array<i64: 128, 128>, mod_name = "document512"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      // Documents of 512 tokens, each attending only within itself.
      %n = arith.constant 512 : index
      %di = arith.divui %i, %n : index
      %dj = arith.divui %j, %n : index
      %keep = arith.cmpi eq, %di, %dj : index
      attn.yield %keep : i1
    }
  return %o, %lse : tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
}

func.func @document_grad_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>, %do: tensor<2x16x1024x128xbf16>, %lse: tensor<2x16x1024xf32>, %bc: tensor<2x16x8xi32>, %bi: tensor<2x16x8x8xi32>, %bfc: tensor<2x16x8xi32>, %bfi: tensor<2x16x8x8xi32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse block_mask(%bc, %bi, %bfc, %bfi : tensor<2x16x8xi32>, tensor<2x16x8x8xi32>, tensor<2x16x8xi32>, tensor<2x16x8x8xi32>) q_block_mask(%bc, %bi, %bfc, %bfi : tensor<2x16x8xi32>, tensor<2x16x8x8xi32>, tensor<2x16x8xi32>, tensor<2x16x8x8xi32>) {block_size = array<i64: 128, 128>, mod_name = "document512"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      // Documents of 512 tokens, each attending only within itself.
      %n = arith.constant 512 : index
      %di = arith.divui %i, %n : index
      %dj = arith.divui %j, %n : index
      %keep = arith.cmpi eq, %di, %dj : index
      attn.yield %keep : i1
    }
  return %dq, %dk, %dv : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
}
