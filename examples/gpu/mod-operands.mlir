// Score and mask modifications that read tensors (`mod_operands`) on the
// GPU: a document mask from per-token document ids (i64 [B, S]), a key
// padding mask (bool [B, Sk]), a relative-position bias from a table (bf16
// [Hq, 8191], offset j - i + 4095: sequences of up to 4096) and ALiBi with
// per-head slopes from a tensor (f32 [Hq]); forward, split-KV decode and
// backward, bf16, for `attn-compile examples/gpu/mod-operands.mlir -o DIR
// --chip=sm_90a,sm_80` and test/GPU/mod_operands_tests.py. The kernels take
// the tensors with dynamic sizes (any B, S); each op's `mod_name` is the
// name the runtime's callers pick its kernels by (attn_options.mod), the
// tensors go in attn_options.mod_operands. The masks also have kernels
// with a block mask of 128 x 128 blocks (attn_options.block_mask), which
// visit only the blocks the mask keeps and skip the modification on the
// full ones.

func.func @docmask_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %t: tensor<2x1024xi64>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v mod_operands(%t : tensor<2x1024xi64>) {mod_name = "docmask"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %doc: tensor<2x1024xi64>):
      %di = tensor.extract %doc[%b, %i] : tensor<2x1024xi64>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x1024xi64>
      %keep = arith.cmpi eq, %di, %dj : i64
      attn.yield %keep : i1
    }
  return %o, %lse : tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
}

func.func @docmask_causal_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %t: tensor<2x1024xi64>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v mod_operands(%t : tensor<2x1024xi64>) {causal = #attn.causal<top_left>, mod_name = "docmask"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %doc: tensor<2x1024xi64>):
      %di = tensor.extract %doc[%b, %i] : tensor<2x1024xi64>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x1024xi64>
      %keep = arith.cmpi eq, %di, %dj : i64
      attn.yield %keep : i1
    }
  return %o, %lse : tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
}

func.func @docmask_grad_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %o: tensor<2x16x1024x64xbf16>, %do: tensor<2x16x1024x64xbf16>, %lse: tensor<2x16x1024xf32>, %t: tensor<2x1024xi64>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mod_operands(%t : tensor<2x1024xi64>) {mod_name = "docmask"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %doc: tensor<2x1024xi64>):
      %di = tensor.extract %doc[%b, %i] : tensor<2x1024xi64>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x1024xi64>
      %keep = arith.cmpi eq, %di, %dj : i64
      attn.yield %keep : i1
    }
  return %dq, %dk, %dv : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
}

func.func @docmask_causal_grad_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %o: tensor<2x16x1024x64xbf16>, %do: tensor<2x16x1024x64xbf16>, %lse: tensor<2x16x1024xf32>, %t: tensor<2x1024xi64>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mod_operands(%t : tensor<2x1024xi64>) {causal = #attn.causal<top_left>, mod_name = "docmask"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %doc: tensor<2x1024xi64>):
      %di = tensor.extract %doc[%b, %i] : tensor<2x1024xi64>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x1024xi64>
      %keep = arith.cmpi eq, %di, %dj : i64
      attn.yield %keep : i1
    }
  return %dq, %dk, %dv : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
}

func.func @relbias_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %t: tensor<16x8191xbf16>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v mod_operands(%t : tensor<16x8191xbf16>) {mod_name = "relbias"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %table: tensor<16x8191xbf16>):
      %c = arith.constant 4095 : index
      %ji = arith.subi %j, %i : index
      %at = arith.addi %ji, %c : index
      %x = tensor.extract %table[%h, %at] : tensor<16x8191xbf16>
      %xf = arith.extf %x : bf16 to f32
      %y = arith.addf %s, %xf : f32
      attn.yield %y : f32
    }
  return %o, %lse : tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
}

func.func @relbias_grad_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %o: tensor<2x16x1024x64xbf16>, %do: tensor<2x16x1024x64xbf16>, %lse: tensor<2x16x1024xf32>, %t: tensor<16x8191xbf16>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mod_operands(%t : tensor<16x8191xbf16>) {mod_name = "relbias"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %table: tensor<16x8191xbf16>):
      %c = arith.constant 4095 : index
      %ji = arith.subi %j, %i : index
      %at = arith.addi %ji, %c : index
      %x = tensor.extract %table[%h, %at] : tensor<16x8191xbf16>
      %xf = arith.extf %x : bf16 to f32
      %y = arith.addf %s, %xf : f32
      attn.yield %y : f32
    }
  return %dq, %dk, %dv : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
}

func.func @alibi_slopes_causal_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %t: tensor<16xf32>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v mod_operands(%t : tensor<16xf32>) {causal = #attn.causal<bottom_right>, mod_name = "alibi_slopes"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %slopes: tensor<16xf32>):
      %m = tensor.extract %slopes[%h] : tensor<16xf32>
      %ij = arith.subi %i, %j : index
      %iji = arith.index_cast %ij : index to i64
      %d = arith.sitofp %iji : i64 to f32
      %ad = math.absf %d : f32
      %bias = arith.mulf %m, %ad : f32
      %y = arith.subf %s, %bias : f32
      attn.yield %y : f32
    }
  return %o, %lse : tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
}

func.func @alibi_slopes_causal_grad_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %o: tensor<2x16x1024x64xbf16>, %do: tensor<2x16x1024x64xbf16>, %lse: tensor<2x16x1024xf32>, %t: tensor<16xf32>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mod_operands(%t : tensor<16xf32>) {causal = #attn.causal<bottom_right>, mod_name = "alibi_slopes"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %slopes: tensor<16xf32>):
      %m = tensor.extract %slopes[%h] : tensor<16xf32>
      %ij = arith.subi %i, %j : index
      %iji = arith.index_cast %ij : index to i64
      %d = arith.sitofp %iji : i64 to f32
      %ad = math.absf %d : f32
      %bias = arith.mulf %m, %ad : f32
      %y = arith.subf %s, %bias : f32
      attn.yield %y : f32
    }
  return %dq, %dk, %dv : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
}

func.func @docmask_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %t: tensor<2x1024xi64>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v mod_operands(%t : tensor<2x1024xi64>) {mod_name = "docmask"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %doc: tensor<2x1024xi64>):
      %di = tensor.extract %doc[%b, %i] : tensor<2x1024xi64>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x1024xi64>
      %keep = arith.cmpi eq, %di, %dj : i64
      attn.yield %keep : i1
    }
  return %o, %lse : tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
}

func.func @docmask_causal_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %t: tensor<2x1024xi64>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v mod_operands(%t : tensor<2x1024xi64>) {causal = #attn.causal<top_left>, mod_name = "docmask"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %doc: tensor<2x1024xi64>):
      %di = tensor.extract %doc[%b, %i] : tensor<2x1024xi64>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x1024xi64>
      %keep = arith.cmpi eq, %di, %dj : i64
      attn.yield %keep : i1
    }
  return %o, %lse : tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
}

func.func @docmask_grad_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>, %do: tensor<2x16x1024x128xbf16>, %lse: tensor<2x16x1024xf32>, %t: tensor<2x1024xi64>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mod_operands(%t : tensor<2x1024xi64>) {mod_name = "docmask"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %doc: tensor<2x1024xi64>):
      %di = tensor.extract %doc[%b, %i] : tensor<2x1024xi64>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x1024xi64>
      %keep = arith.cmpi eq, %di, %dj : i64
      attn.yield %keep : i1
    }
  return %dq, %dk, %dv : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
}

func.func @docmask_causal_grad_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>, %do: tensor<2x16x1024x128xbf16>, %lse: tensor<2x16x1024xf32>, %t: tensor<2x1024xi64>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mod_operands(%t : tensor<2x1024xi64>) {causal = #attn.causal<top_left>, mod_name = "docmask"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %doc: tensor<2x1024xi64>):
      %di = tensor.extract %doc[%b, %i] : tensor<2x1024xi64>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x1024xi64>
      %keep = arith.cmpi eq, %di, %dj : i64
      attn.yield %keep : i1
    }
  return %dq, %dk, %dv : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
}

func.func @relbias_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %t: tensor<16x8191xbf16>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v mod_operands(%t : tensor<16x8191xbf16>) {mod_name = "relbias"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %table: tensor<16x8191xbf16>):
      %c = arith.constant 4095 : index
      %ji = arith.subi %j, %i : index
      %at = arith.addi %ji, %c : index
      %x = tensor.extract %table[%h, %at] : tensor<16x8191xbf16>
      %xf = arith.extf %x : bf16 to f32
      %y = arith.addf %s, %xf : f32
      attn.yield %y : f32
    }
  return %o, %lse : tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
}

func.func @relbias_grad_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>, %do: tensor<2x16x1024x128xbf16>, %lse: tensor<2x16x1024xf32>, %t: tensor<16x8191xbf16>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mod_operands(%t : tensor<16x8191xbf16>) {mod_name = "relbias"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %table: tensor<16x8191xbf16>):
      %c = arith.constant 4095 : index
      %ji = arith.subi %j, %i : index
      %at = arith.addi %ji, %c : index
      %x = tensor.extract %table[%h, %at] : tensor<16x8191xbf16>
      %xf = arith.extf %x : bf16 to f32
      %y = arith.addf %s, %xf : f32
      attn.yield %y : f32
    }
  return %dq, %dk, %dv : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
}

func.func @alibi_slopes_causal_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %t: tensor<16xf32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v mod_operands(%t : tensor<16xf32>) {causal = #attn.causal<bottom_right>, mod_name = "alibi_slopes"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %slopes: tensor<16xf32>):
      %m = tensor.extract %slopes[%h] : tensor<16xf32>
      %ij = arith.subi %i, %j : index
      %iji = arith.index_cast %ij : index to i64
      %d = arith.sitofp %iji : i64 to f32
      %ad = math.absf %d : f32
      %bias = arith.mulf %m, %ad : f32
      %y = arith.subf %s, %bias : f32
      attn.yield %y : f32
    }
  return %o, %lse : tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
}

func.func @alibi_slopes_causal_grad_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>, %do: tensor<2x16x1024x128xbf16>, %lse: tensor<2x16x1024xf32>, %t: tensor<16xf32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mod_operands(%t : tensor<16xf32>) {causal = #attn.causal<bottom_right>, mod_name = "alibi_slopes"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %slopes: tensor<16xf32>):
      %m = tensor.extract %slopes[%h] : tensor<16xf32>
      %ij = arith.subi %i, %j : index
      %iji = arith.index_cast %ij : index to i64
      %d = arith.sitofp %iji : i64 to f32
      %ad = math.absf %d : f32
      %bias = arith.mulf %m, %ad : f32
      %y = arith.subf %s, %bias : f32
      attn.yield %y : f32
    }
  return %dq, %dk, %dv : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
}

func.func @padmask_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %t: tensor<2x1024xi1>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v mod_operands(%t : tensor<2x1024xi1>) {mod_name = "padmask"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %pad: tensor<2x1024xi1>):
      %keep = tensor.extract %pad[%b, %j] : tensor<2x1024xi1>
      attn.yield %keep : i1
    }
  return %o, %lse : tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
}

func.func @padmask_grad_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>, %do: tensor<2x16x1024x128xbf16>, %lse: tensor<2x16x1024xf32>, %t: tensor<2x1024xi1>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mod_operands(%t : tensor<2x1024xi1>) {mod_name = "padmask"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %pad: tensor<2x1024xi1>):
      %keep = tensor.extract %pad[%b, %j] : tensor<2x1024xi1>
      attn.yield %keep : i1
    }
  return %dq, %dk, %dv : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
}

func.func @padmask_decode_d128(%q: tensor<8x32x1x128xbf16>, %k: tensor<8x8x4096x128xbf16>, %v: tensor<8x8x4096x128xbf16>, %t: tensor<8x4096xi1>) -> tensor<8x32x1x128xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v mod_operands(%t : tensor<8x4096xi1>) {num_splits = 4 : i64, mod_name = "padmask"} : tensor<8x32x1x128xbf16>, tensor<8x8x4096x128xbf16>, tensor<8x8x4096x128xbf16> -> tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %pad: tensor<8x4096xi1>):
      %keep = tensor.extract %pad[%b, %j] : tensor<8x4096xi1>
      attn.yield %keep : i1
    }
  %o = attn.combine %po, %pl : tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32> -> tensor<8x32x1x128xbf16>
  return %o : tensor<8x32x1x128xbf16>
}

func.func @alibi_slopes_decode_d128(%q: tensor<8x32x1x128xbf16>, %k: tensor<8x8x4096x128xbf16>, %v: tensor<8x8x4096x128xbf16>, %t: tensor<32xf32>) -> tensor<8x32x1x128xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v mod_operands(%t : tensor<32xf32>) {num_splits = 4 : i64, mod_name = "alibi_slopes"} : tensor<8x32x1x128xbf16>, tensor<8x8x4096x128xbf16>, tensor<8x8x4096x128xbf16> -> tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %slopes: tensor<32xf32>):
      %m = tensor.extract %slopes[%h] : tensor<32xf32>
      %ij = arith.subi %i, %j : index
      %iji = arith.index_cast %ij : index to i64
      %d = arith.sitofp %iji : i64 to f32
      %ad = math.absf %d : f32
      %bias = arith.mulf %m, %ad : f32
      %y = arith.subf %s, %bias : f32
      attn.yield %y : f32
    }
  %o = attn.combine %po, %pl : tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32> -> tensor<8x32x1x128xbf16>
  return %o : tensor<8x32x1x128xbf16>
}

func.func @docmask_blocks_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %t: tensor<2x1024xi64>, %bc: tensor<2x1x8xi32>, %bi: tensor<2x1x8x8xi32>, %bfc: tensor<2x1x8xi32>, %bfi: tensor<2x1x8x8xi32>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) mod_operands(%t : tensor<2x1024xi64>) {block_size = array<i64: 128, 128>, mod_name = "docmask"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %doc: tensor<2x1024xi64>):
      %di = tensor.extract %doc[%b, %i] : tensor<2x1024xi64>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x1024xi64>
      %keep = arith.cmpi eq, %di, %dj : i64
      attn.yield %keep : i1
    }
  return %o, %lse : tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
}

func.func @docmask_blocks_grad_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %o: tensor<2x16x1024x64xbf16>, %do: tensor<2x16x1024x64xbf16>, %lse: tensor<2x16x1024xf32>, %t: tensor<2x1024xi64>, %bc: tensor<2x1x8xi32>, %bi: tensor<2x1x8x8xi32>, %bfc: tensor<2x1x8xi32>, %bfi: tensor<2x1x8x8xi32>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) q_block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) mod_operands(%t : tensor<2x1024xi64>) {block_size = array<i64: 128, 128>, mod_name = "docmask"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %doc: tensor<2x1024xi64>):
      %di = tensor.extract %doc[%b, %i] : tensor<2x1024xi64>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x1024xi64>
      %keep = arith.cmpi eq, %di, %dj : i64
      attn.yield %keep : i1
    }
  return %dq, %dk, %dv : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
}

func.func @docmask_causal_blocks_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %t: tensor<2x1024xi64>, %bc: tensor<2x1x8xi32>, %bi: tensor<2x1x8x8xi32>, %bfc: tensor<2x1x8xi32>, %bfi: tensor<2x1x8x8xi32>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) mod_operands(%t : tensor<2x1024xi64>) {block_size = array<i64: 128, 128>, causal = #attn.causal<top_left>, mod_name = "docmask"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %doc: tensor<2x1024xi64>):
      %di = tensor.extract %doc[%b, %i] : tensor<2x1024xi64>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x1024xi64>
      %keep = arith.cmpi eq, %di, %dj : i64
      attn.yield %keep : i1
    }
  return %o, %lse : tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32>
}

func.func @docmask_causal_blocks_grad_d64(%q: tensor<2x16x1024x64xbf16>, %k: tensor<2x16x1024x64xbf16>, %v: tensor<2x16x1024x64xbf16>, %o: tensor<2x16x1024x64xbf16>, %do: tensor<2x16x1024x64xbf16>, %lse: tensor<2x16x1024xf32>, %t: tensor<2x1024xi64>, %bc: tensor<2x1x8xi32>, %bi: tensor<2x1x8x8xi32>, %bfc: tensor<2x1x8xi32>, %bfi: tensor<2x1x8x8xi32>) -> (tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) q_block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) mod_operands(%t : tensor<2x1024xi64>) {block_size = array<i64: 128, 128>, causal = #attn.causal<top_left>, mod_name = "docmask"} : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %doc: tensor<2x1024xi64>):
      %di = tensor.extract %doc[%b, %i] : tensor<2x1024xi64>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x1024xi64>
      %keep = arith.cmpi eq, %di, %dj : i64
      attn.yield %keep : i1
    }
  return %dq, %dk, %dv : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>
}

func.func @docmask_blocks_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %t: tensor<2x1024xi64>, %bc: tensor<2x1x8xi32>, %bi: tensor<2x1x8x8xi32>, %bfc: tensor<2x1x8xi32>, %bfi: tensor<2x1x8x8xi32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) mod_operands(%t : tensor<2x1024xi64>) {block_size = array<i64: 128, 128>, mod_name = "docmask"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %doc: tensor<2x1024xi64>):
      %di = tensor.extract %doc[%b, %i] : tensor<2x1024xi64>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x1024xi64>
      %keep = arith.cmpi eq, %di, %dj : i64
      attn.yield %keep : i1
    }
  return %o, %lse : tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
}

func.func @docmask_blocks_grad_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>, %do: tensor<2x16x1024x128xbf16>, %lse: tensor<2x16x1024xf32>, %t: tensor<2x1024xi64>, %bc: tensor<2x1x8xi32>, %bi: tensor<2x1x8x8xi32>, %bfc: tensor<2x1x8xi32>, %bfi: tensor<2x1x8x8xi32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) q_block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) mod_operands(%t : tensor<2x1024xi64>) {block_size = array<i64: 128, 128>, mod_name = "docmask"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %doc: tensor<2x1024xi64>):
      %di = tensor.extract %doc[%b, %i] : tensor<2x1024xi64>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x1024xi64>
      %keep = arith.cmpi eq, %di, %dj : i64
      attn.yield %keep : i1
    }
  return %dq, %dk, %dv : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
}

func.func @docmask_causal_blocks_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %t: tensor<2x1024xi64>, %bc: tensor<2x1x8xi32>, %bi: tensor<2x1x8x8xi32>, %bfc: tensor<2x1x8xi32>, %bfi: tensor<2x1x8x8xi32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) mod_operands(%t : tensor<2x1024xi64>) {block_size = array<i64: 128, 128>, causal = #attn.causal<top_left>, mod_name = "docmask"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %doc: tensor<2x1024xi64>):
      %di = tensor.extract %doc[%b, %i] : tensor<2x1024xi64>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x1024xi64>
      %keep = arith.cmpi eq, %di, %dj : i64
      attn.yield %keep : i1
    }
  return %o, %lse : tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
}

func.func @docmask_causal_blocks_grad_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>, %do: tensor<2x16x1024x128xbf16>, %lse: tensor<2x16x1024xf32>, %t: tensor<2x1024xi64>, %bc: tensor<2x1x8xi32>, %bi: tensor<2x1x8x8xi32>, %bfc: tensor<2x1x8xi32>, %bfi: tensor<2x1x8x8xi32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) q_block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) mod_operands(%t : tensor<2x1024xi64>) {block_size = array<i64: 128, 128>, causal = #attn.causal<top_left>, mod_name = "docmask"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %doc: tensor<2x1024xi64>):
      %di = tensor.extract %doc[%b, %i] : tensor<2x1024xi64>
      %dj = tensor.extract %doc[%b, %j] : tensor<2x1024xi64>
      %keep = arith.cmpi eq, %di, %dj : i64
      attn.yield %keep : i1
    }
  return %dq, %dk, %dv : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
}

func.func @padmask_blocks_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %t: tensor<2x1024xi1>, %bc: tensor<2x1x8xi32>, %bi: tensor<2x1x8x8xi32>, %bfc: tensor<2x1x8xi32>, %bfi: tensor<2x1x8x8xi32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>) {
  %o, %lse = attn.attention %q, %k, %v block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) mod_operands(%t : tensor<2x1024xi1>) {block_size = array<i64: 128, 128>, mod_name = "padmask"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %pad: tensor<2x1024xi1>):
      %keep = tensor.extract %pad[%b, %j] : tensor<2x1024xi1>
      attn.yield %keep : i1
    }
  return %o, %lse : tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32>
}

func.func @padmask_blocks_grad_d128(%q: tensor<2x16x1024x128xbf16>, %k: tensor<2x16x1024x128xbf16>, %v: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>, %do: tensor<2x16x1024x128xbf16>, %lse: tensor<2x16x1024xf32>, %t: tensor<2x1024xi1>, %bc: tensor<2x1x8xi32>, %bi: tensor<2x1x8x8xi32>, %bfc: tensor<2x1x8xi32>, %bfi: tensor<2x1x8x8xi32>) -> (tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) q_block_mask(%bc, %bi, %bfc, %bfi : tensor<2x1x8xi32>, tensor<2x1x8x8xi32>, tensor<2x1x8xi32>, tensor<2x1x8x8xi32>) mod_operands(%t : tensor<2x1024xi1>) {block_size = array<i64: 128, 128>, mod_name = "padmask"} : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024xf32> -> tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %pad: tensor<2x1024xi1>):
      %keep = tensor.extract %pad[%b, %j] : tensor<2x1024xi1>
      attn.yield %keep : i1
    }
  return %dq, %dk, %dv : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>
}
