// Score and mask modifications on the GPU (the score-mod issue's kernels):
// soft-capping (Gemma 2's 30 * tanh(s / 30)), ALiBi with the slopes of 16
// heads computed from the head index, a prefix-LM mask and a document mask
// of 512-token documents; forward, split-KV decode and backward, bf16, for
// `attn-compile examples/gpu/mods.mlir -o DIR --chip=sm_90a,sm_80` and
// test/GPU/mods_tests.py, bench/bench_mods.py. Each op's `mod_name` is the
// name the runtime's callers pick its kernels by (attn_options.mod). The
// prefix-LM and document masks at D = 128 also have kernels with a block
// mask of 128 x 128 blocks (attn_options.block_mask: FlexAttention's
// BlockMask, e.g. from create_block_mask), which visit only the blocks the
// mask keeps and skip the mask in the blocks it keeps whole.

func.func @softcap_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>, mod_name = "softcap"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      %cap = arith.constant 30.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %t, %cap : f32
      attn.yield %y : f32
    }
  return %o, %lse : tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
}

func.func @softcap_full_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v {mod_name = "softcap"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      %cap = arith.constant 30.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %t, %cap : f32
      attn.yield %y : f32
    }
  return %o, %lse : tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
}

func.func @softcap_grad_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %o: tensor<2x16x1024x64xbf16>, %do: tensor<2x16x1024x64xbf16>, %lse: tensor<2x16x1024xf32>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>, mod_name = "softcap"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      %cap = arith.constant 30.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %t, %cap : f32
      attn.yield %y : f32
    }
  return %dq, %dk, %dv : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
}

func.func @softcap_full_grad_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %o: tensor<2x16x1024x64xbf16>, %do: tensor<2x16x1024x64xbf16>, %lse: tensor<2x16x1024xf32>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {mod_name = "softcap"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      %cap = arith.constant 30.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %t, %cap : f32
      attn.yield %y : f32
    }
  return %dq, %dk, %dv : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
}

func.func @alibi_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>, mod_name = "alibi16"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      // slope(h) = 2^(-8 (h + 1) / 16) for 16 heads; bias -slope |i - j|.
      %h64 = arith.index_cast %h : index to i64
      %hf = arith.sitofp %h64 : i64 to f32
      %one = arith.constant 1.0 : f32
      %m = arith.constant -0.5 : f32
      %h1 = arith.addf %hf, %one : f32
      %e = arith.mulf %h1, %m : f32
      %slope = math.exp2 %e : f32
      %d = arith.subi %i, %j : index
      %d64 = arith.index_cast %d : index to i64
      %df = arith.sitofp %d64 : i64 to f32
      %ad = math.absf %df : f32
      %bias = arith.mulf %slope, %ad : f32
      %r = arith.subf %s, %bias : f32
      attn.yield %r : f32
    }
  return %o, %lse : tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
}

func.func @alibi_grad_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %o: tensor<2x16x1024x64xbf16>, %do: tensor<2x16x1024x64xbf16>, %lse: tensor<2x16x1024xf32>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>, mod_name = "alibi16"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      // slope(h) = 2^(-8 (h + 1) / 16) for 16 heads; bias -slope |i - j|.
      %h64 = arith.index_cast %h : index to i64
      %hf = arith.sitofp %h64 : i64 to f32
      %one = arith.constant 1.0 : f32
      %m = arith.constant -0.5 : f32
      %h1 = arith.addf %hf, %one : f32
      %e = arith.mulf %h1, %m : f32
      %slope = math.exp2 %e : f32
      %d = arith.subi %i, %j : index
      %d64 = arith.index_cast %d : index to i64
      %df = arith.sitofp %d64 : i64 to f32
      %ad = math.absf %df : f32
      %bias = arith.mulf %slope, %ad : f32
      %r = arith.subf %s, %bias : f32
      attn.yield %r : f32
    }
  return %dq, %dk, %dv : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
}

func.func @prefix_lm_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v {mod_name = "prefix_lm256"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      // Prefix-LM: the first 256 keys are seen by every query, the rest
      // causally.
      %p = arith.constant 256 : index
      %inPrefix = arith.cmpi ult, %j, %p : index
      %causal = arith.cmpi ule, %j, %i : index
      %keep = arith.ori %inPrefix, %causal : i1
      attn.yield %keep : i1
    }
  return %o, %lse : tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
}

func.func @prefix_lm_grad_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %o: tensor<2x16x1024x64xbf16>, %do: tensor<2x16x1024x64xbf16>, %lse: tensor<2x16x1024xf32>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {mod_name = "prefix_lm256"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      // Prefix-LM: the first 256 keys are seen by every query, the rest
      // causally.
      %p = arith.constant 256 : index
      %inPrefix = arith.cmpi ult, %j, %p : index
      %causal = arith.cmpi ule, %j, %i : index
      %keep = arith.ori %inPrefix, %causal : i1
      attn.yield %keep : i1
    }
  return %dq, %dk, %dv : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
}

func.func @document_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v {mod_name = "document512"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
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

func.func @document_grad_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %o: tensor<2x16x1024x64xbf16>, %do: tensor<2x16x1024x64xbf16>, %lse: tensor<2x16x1024xf32>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {mod_name = "document512"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
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

func.func @softcap_decode_d64(%q: tensor<8x32x1x64xbf16>, %k: tensor<8x8x4096x64xbf16>, %v: tensor<8x8x4096x64xbf16>) -> tensor<8x32x1x64xbf16> {
  %po, %plse = attn.attention_partial %q, %k, %v {num_splits = 4 : i64, mod_name = "softcap"} : tensor<8x32x1x64xbf16>, tensor<8x8x4096x64xbf16>, tensor<8x8x4096x64xbf16> -> tensor<4x8x32x1x64xf32>, tensor<4x8x32x1xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      %cap = arith.constant 30.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %t, %cap : f32
      attn.yield %y : f32
    }
  %o = attn.combine %po, %plse : tensor<4x8x32x1x64xf32>, tensor<4x8x32x1xf32> -> tensor<8x32x1x64xbf16>
  return %o : tensor<8x32x1x64xbf16>
}

func.func @softcap_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>, mod_name = "softcap"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      %cap = arith.constant 30.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %t, %cap : f32
      attn.yield %y : f32
    }
  return %o, %lse : tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
}

func.func @softcap_full_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v {mod_name = "softcap"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      %cap = arith.constant 30.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %t, %cap : f32
      attn.yield %y : f32
    }
  return %o, %lse : tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
}

func.func @softcap_grad_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>, %do: tensor<2x16x1024x128xbf16>, %lse: tensor<2x16x1024xf32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>, mod_name = "softcap"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      %cap = arith.constant 30.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %t, %cap : f32
      attn.yield %y : f32
    }
  return %dq, %dk, %dv : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
}

func.func @softcap_full_grad_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>, %do: tensor<2x16x1024x128xbf16>, %lse: tensor<2x16x1024xf32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {mod_name = "softcap"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      %cap = arith.constant 30.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %t, %cap : f32
      attn.yield %y : f32
    }
  return %dq, %dk, %dv : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
}

func.func @alibi_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>, mod_name = "alibi16"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      // slope(h) = 2^(-8 (h + 1) / 16) for 16 heads; bias -slope |i - j|.
      %h64 = arith.index_cast %h : index to i64
      %hf = arith.sitofp %h64 : i64 to f32
      %one = arith.constant 1.0 : f32
      %m = arith.constant -0.5 : f32
      %h1 = arith.addf %hf, %one : f32
      %e = arith.mulf %h1, %m : f32
      %slope = math.exp2 %e : f32
      %d = arith.subi %i, %j : index
      %d64 = arith.index_cast %d : index to i64
      %df = arith.sitofp %d64 : i64 to f32
      %ad = math.absf %df : f32
      %bias = arith.mulf %slope, %ad : f32
      %r = arith.subf %s, %bias : f32
      attn.yield %r : f32
    }
  return %o, %lse : tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
}

func.func @alibi_grad_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>, %do: tensor<2x16x1024x128xbf16>, %lse: tensor<2x16x1024xf32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>, mod_name = "alibi16"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      // slope(h) = 2^(-8 (h + 1) / 16) for 16 heads; bias -slope |i - j|.
      %h64 = arith.index_cast %h : index to i64
      %hf = arith.sitofp %h64 : i64 to f32
      %one = arith.constant 1.0 : f32
      %m = arith.constant -0.5 : f32
      %h1 = arith.addf %hf, %one : f32
      %e = arith.mulf %h1, %m : f32
      %slope = math.exp2 %e : f32
      %d = arith.subi %i, %j : index
      %d64 = arith.index_cast %d : index to i64
      %df = arith.sitofp %d64 : i64 to f32
      %ad = math.absf %df : f32
      %bias = arith.mulf %slope, %ad : f32
      %r = arith.subf %s, %bias : f32
      attn.yield %r : f32
    }
  return %dq, %dk, %dv : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
}

func.func @prefix_lm_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v {mod_name = "prefix_lm256"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      // Prefix-LM: the first 256 keys are seen by every query, the rest
      // causally.
      %p = arith.constant 256 : index
      %inPrefix = arith.cmpi ult, %j, %p : index
      %causal = arith.cmpi ule, %j, %i : index
      %keep = arith.ori %inPrefix, %causal : i1
      attn.yield %keep : i1
    }
  return %o, %lse : tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
}

func.func @prefix_lm_grad_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>, %do: tensor<2x16x1024x128xbf16>, %lse: tensor<2x16x1024xf32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {mod_name = "prefix_lm256"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      // Prefix-LM: the first 256 keys are seen by every query, the rest
      // causally.
      %p = arith.constant 256 : index
      %inPrefix = arith.cmpi ult, %j, %p : index
      %causal = arith.cmpi ule, %j, %i : index
      %keep = arith.ori %inPrefix, %causal : i1
      attn.yield %keep : i1
    }
  return %dq, %dk, %dv : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
}

func.func @document_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v {mod_name = "document512"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
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

func.func @document_grad_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>, %do: tensor<2x16x1024x128xbf16>, %lse: tensor<2x16x1024xf32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {mod_name = "document512"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
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

func.func @prefix_lm_blocks_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %bc: tensor<2x1x8xi32>, %bi: tensor<2x1x8x8xi32>, %bfc: tensor<2x1x8xi32>, %bfi: tensor<2x1x8x8xi32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) {block_size = array<i64: 128, 128>, mod_name = "prefix_lm256"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      // Prefix-LM: the first 256 keys are seen by every query, the rest
      // causally.
      %p = arith.constant 256 : index
      %inPrefix = arith.cmpi ult, %j, %p : index
      %causal = arith.cmpi ule, %j, %i : index
      %keep = arith.ori %inPrefix, %causal : i1
      attn.yield %keep : i1
    }
  return %o, %lse : tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
}

func.func @prefix_lm_grad_blocks_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>, %do: tensor<2x16x1024x128xbf16>, %lse: tensor<2x16x1024xf32>, %bc: tensor<2x1x8xi32>, %bi: tensor<2x1x8x8xi32>, %bfc: tensor<2x1x8xi32>, %bfi: tensor<2x1x8x8xi32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) q_block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) {block_size = array<i64: 128, 128>, mod_name = "prefix_lm256"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      // Prefix-LM: the first 256 keys are seen by every query, the rest
      // causally.
      %p = arith.constant 256 : index
      %inPrefix = arith.cmpi ult, %j, %p : index
      %causal = arith.cmpi ule, %j, %i : index
      %keep = arith.ori %inPrefix, %causal : i1
      attn.yield %keep : i1
    }
  return %dq, %dk, %dv : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
}

func.func @document_blocks_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %bc: tensor<2x1x8xi32>, %bi: tensor<2x1x8x8xi32>, %bfc: tensor<2x1x8xi32>, %bfi: tensor<2x1x8x8xi32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) {block_size = array<i64: 128, 128>, mod_name = "document512"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
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

func.func @document_grad_blocks_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>, %do: tensor<2x16x1024x128xbf16>, %lse: tensor<2x16x1024xf32>, %bc: tensor<2x1x8xi32>, %bi: tensor<2x1x8x8xi32>, %bfc: tensor<2x1x8xi32>, %bfi: tensor<2x1x8x8xi32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) q_block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) {block_size = array<i64: 128, 128>, mod_name = "document512"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
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

func.func @softcap_decode_d128(%q: tensor<8x32x1x128xbf16>, %k: tensor<8x8x4096x128xbf16>, %v: tensor<8x8x4096x128xbf16>) -> tensor<8x32x1x128xbf16> {
  %po, %plse = attn.attention_partial %q, %k, %v {num_splits = 4 : i64, mod_name = "softcap"} : tensor<8x32x1x128xbf16>, tensor<8x8x4096x128xbf16>, tensor<8x8x4096x128xbf16> -> tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      %cap = arith.constant 30.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %t, %cap : f32
      attn.yield %y : f32
    }
  %o = attn.combine %po, %plse : tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32> -> tensor<8x32x1x128xbf16>
  return %o : tensor<8x32x1x128xbf16>
}
