// RUN: attn-opt %s -split-input-file -attn-to-gpu -verify-diagnostics | FileCheck %s

// A score and a mask modification go into the kernel where its scores are
// computed: the soft-cap's tanh on the scaled score (times scale, the
// region, times 1 / scale: the tile form's scores are unscaled) and the
// mask's predicate. tanh is the SFU's (llvm.tanh with afn: tanh.approx.f32)
// and the division div.full, so that no libdevice call is left. The kernel's name and manifest line carry the op's
// mod_name and the regions' hash, so that the runtime never runs it for a
// plain call; without a mod_name the hash names it.

// CHECK: attn.manifest = ["kernel attn_fwd_bf16_d64_dv64_bottom_right_mod_softcap kind=forward dtype=bf16 head_dim=64 value_dim=64 causal=bottom_right mod=softcap mod_hash=[[HASH:[0-9a-f]{16}]] block_q=128
// CHECK-SAME: "kernel attn_fwd_bf16_d64_dv64_bottom_right_mod_h[[HASH]] kind=forward {{.*}} mod=h[[HASH]] mod_hash=[[HASH]] block_q=128
// CHECK-LABEL: gpu.func @attn_fwd_bf16_d64_dv64_bottom_right_mod_softcap
// CHECK-NOT: math.
// CHECK: llvm.call_intrinsic "llvm.nvvm.div.full"
// CHECK: llvm.call_intrinsic "llvm.tanh"({{.*}}) {fastmathFlags = #llvm.fastmath<afn>}
// CHECK: arith.remui
// CHECK-NOT: math.
// CHECK: gpu.return
func.func @softcap(%q: tensor<2x8x512x64xbf16>, %k: tensor<2x8x512x64xbf16>, %v: tensor<2x8x512x64xbf16>) -> (tensor<2x8x512x64xbf16>, tensor<2x8x512x64xbf16>) {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>, mod_name = "softcap"} : tensor<2x8x512x64xbf16>, tensor<2x8x512x64xbf16>, tensor<2x8x512x64xbf16> -> tensor<2x8x512x64xbf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      %c = arith.constant 30.0 : f32
      %x = arith.divf %s, %c : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %t, %c : f32
      attn.yield %y : f32
    } mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c3 = arith.constant 3 : index
      %r = arith.remui %j, %c3 : index
      %c0 = arith.constant 0 : index
      %keep = arith.cmpi ne, %r, %c0 : index
      attn.yield %keep : i1
    }
  %o2 = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<2x8x512x64xbf16>, tensor<2x8x512x64xbf16>, tensor<2x8x512x64xbf16> -> tensor<2x8x512x64xbf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      %c = arith.constant 30.0 : f32
      %x = arith.divf %s, %c : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %t, %c : f32
      attn.yield %y : f32
    } mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c3 = arith.constant 3 : index
      %r = arith.remui %j, %c3 : index
      %c0 = arith.constant 0 : index
      %keep = arith.cmpi ne, %r, %c0 : index
      attn.yield %keep : i1
    }
  return %o, %o2 : tensor<2x8x512x64xbf16>, tensor<2x8x512x64xbf16>
}

// -----

// The tensors a modification reads (mod_operands) are kernel parameters
// after the ABI's, mod0, mod1..., with dynamic sizes; the manifest's
// mod_operands= gives their element types and ranks (a rank-0 tensor
// too). The regions read them with global loads.
// CHECK: mod=docs mod_hash={{[0-9a-f]+}} mod_operands=f32:1,i64:1,f32:0 block_q=
// CHECK-SAME: params=q:memref4,k:memref4,v:memref4,o:memref4,lse:memref3,scale_log2:f32,window:i64,mod0:memref1,mod1:memref1,mod2:memref0"
// CHECK-LABEL: gpu.func @attn_fwd_bf16_d64_dv64_none_mod_docs(
// CHECK-SAME: %{{.*}}: f32, %{{.*}}: i64, %{{.*}}: memref<?xf32, strided<[?], offset: ?>>, %{{.*}}: memref<?xi64, strided<[?], offset: ?>>, %{{.*}}: memref<f32, strided<[], offset: ?>>)
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: gpu.return
func.func @operands(%q: tensor<2x8x512x64xbf16>, %slopes: tensor<8xf32>, %doc: tensor<512xi64>, %cap: tensor<f32>) -> tensor<2x8x512x64xbf16> {
  %o = attn.attention %q, %q, %q mod_operands(%slopes, %doc, %cap : tensor<8xf32>, tensor<512xi64>, tensor<f32>) {mod_name = "docs"} : tensor<2x8x512x64xbf16>, tensor<2x8x512x64xbf16>, tensor<2x8x512x64xbf16> -> tensor<2x8x512x64xbf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %sl: tensor<8xf32>, %d: tensor<512xi64>, %c: tensor<f32>):
      %x = tensor.extract %sl[%h] : tensor<8xf32>
      %ij = arith.subi %i, %j : index
      %iji = arith.index_cast %ij : index to i64
      %ijf = arith.sitofp %iji : i64 to f32
      %bias = arith.mulf %x, %ijf : f32
      %y = arith.subf %s, %bias : f32
      %cv = tensor.extract %c[] : tensor<f32>
      %z = arith.minimumf %y, %cv : f32
      attn.yield %z : f32
    } mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %sl: tensor<8xf32>, %d: tensor<512xi64>, %c: tensor<f32>):
      %di = tensor.extract %d[%i] : tensor<512xi64>
      %dj = tensor.extract %d[%j] : tensor<512xi64>
      %keep = arith.cmpi eq, %di, %dj : i64
      attn.yield %keep : i1
    }
  return %o : tensor<2x8x512x64xbf16>
}

// -----

// A boolean tensor is read a byte per element (nonzero keeps), in the
// decode kernels as in the others.
// CHECK: kind=decode_partial {{.*}} mod=keys mod_hash={{[0-9a-f]+}} mod_operands=bool:2 rows=
// CHECK-SAME: mod0:memref2"
// CHECK-LABEL: gpu.func @attn_dec_bf16_d64_dv64_none_mod_keys(
// CHECK: llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr<1> -> i8
// CHECK: gpu.return
func.func @bool_operand(%q: tensor<2x8x1x64xbf16>, %k: tensor<2x2x512x64xbf16>, %keep: tensor<2x512xi1>) -> (tensor<4x2x8x1x64xf32>, tensor<4x2x8x1xf32>) {
  %po, %pl = attn.attention_partial %q, %k, %k mod_operands(%keep : tensor<2x512xi1>) {num_splits = 4 : i64, mod_name = "keys"} : tensor<2x8x1x64xbf16>, tensor<2x2x512x64xbf16>, tensor<2x2x512x64xbf16> -> tensor<4x2x8x1x64xf32>, tensor<4x2x8x1xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %t: tensor<2x512xi1>):
      %x = tensor.extract %t[%b, %j] : tensor<2x512xi1>
      attn.yield %x : i1
    }
  return %po, %pl : tensor<4x2x8x1x64xf32>, tensor<4x2x8x1xf32>
}

// -----

// Element types the kernels do not read, and ranks past the runtime's
// four dims, are errors.
func.func @f64_operand(%q: tensor<2x8x512x64xbf16>, %t: tensor<8xf64>) -> tensor<2x8x512x64xbf16> {
  // expected-error @+1 {{has mod operand 0 of element type 'f64'; the GPU kernels read f32, f16, bf16, i1, i32 or i64}}
  %o = attn.attention %q, %q, %q mod_operands(%t : tensor<8xf64>) : tensor<2x8x512x64xbf16>, tensor<2x8x512x64xbf16>, tensor<2x8x512x64xbf16> -> tensor<2x8x512x64xbf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %x: tensor<8xf64>):
      %e = tensor.extract %x[%h] : tensor<8xf64>
      %f = arith.truncf %e : f64 to f32
      %y = arith.addf %s, %f : f32
      attn.yield %y : f32
    }
  return %o : tensor<2x8x512x64xbf16>
}

// -----

func.func @rank5_operand(%q: tensor<2x8x512x64xbf16>, %t: tensor<1x1x1x1x8xf32>) -> tensor<2x8x512x64xbf16> {
  // expected-error @+1 {{has mod operand 0 of rank 5; the GPU kernels read tensors of rank 0 to 4}}
  %o = attn.attention %q, %q, %q mod_operands(%t : tensor<1x1x1x1x8xf32>) : tensor<2x8x512x64xbf16>, tensor<2x8x512x64xbf16>, tensor<2x8x512x64xbf16> -> tensor<2x8x512x64xbf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %x: tensor<1x1x1x1x8xf32>):
      %c0 = arith.constant 0 : index
      %e = tensor.extract %x[%c0, %c0, %c0, %c0, %h] : tensor<1x1x1x1x8xf32>
      %y = arith.addf %s, %e : f32
      attn.yield %y : f32
    }
  return %o : tensor<2x8x512x64xbf16>
}

// -----

// f16 math in a region goes through f32 (upstream's expansions and
// approximations, then TileToNVVM's instructions): no math op is left.
// CHECK-LABEL: gpu.func @attn_fwd_f16_d64_dv64_none_mod_h
// CHECK-NOT: math.
// CHECK: gpu.return
func.func @narrow_math(%q: tensor<2x8x512x64xf16>) -> tensor<2x8x512x64xf16> {
  %o = attn.attention %q, %q, %q : tensor<2x8x512x64xf16>, tensor<2x8x512x64xf16>, tensor<2x8x512x64xf16> -> tensor<2x8x512x64xf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      %x = arith.truncf %s : f32 to f16
      %t = math.tanh %x : f16
      %e = math.erf %t : f16
      %p = math.powf %e, %e : f16
      %c = math.ceil %p : f16
      %y = arith.extf %c : f16 to f32
      %z = math.atan %y : f32
      attn.yield %z : f32
    }
  return %o : tensor<2x8x512x64xf16>
}

// -----

// A math op with no lowering in the kernels is an error that names it.
func.func @no_lowering(%q: tensor<2x8x512x64xf16>) -> tensor<2x8x512x64xf16> {
  %o = attn.attention %q, %q, %q : tensor<2x8x512x64xf16>, tensor<2x8x512x64xf16>, tensor<2x8x512x64xf16> -> tensor<2x8x512x64xf16>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %x = arith.index_cast %j : index to i32
      // expected-error @+1 {{'math.ctlz' op has no lowering in the GPU kernels}}
      %c = math.ctlz %x : i32
      %z = arith.constant 20 : i32
      %k = arith.cmpi ugt, %c, %z : i32
      attn.yield %k : i1
    }
  return %o : tensor<2x8x512x64xf16>
}
