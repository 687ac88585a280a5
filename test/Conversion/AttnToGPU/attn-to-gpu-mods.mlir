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

// The tensors a modification reads have no kernel parameters yet.
func.func @operands(%q: tensor<2x8x512x64xbf16>, %slopes: tensor<8xf32>) -> tensor<2x8x512x64xbf16> {
  // expected-error @+1 {{has mod_operands; the GPU kernels do not take the tensors a score or mask modification reads yet (modifications computed from the indices and the score only)}}
  %o = attn.attention %q, %q, %q mod_operands(%slopes : tensor<8xf32>) : tensor<2x8x512x64xbf16>, tensor<2x8x512x64xbf16>, tensor<2x8x512x64xbf16> -> tensor<2x8x512x64xbf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %sl: tensor<8xf32>):
      %x = tensor.extract %sl[%h] : tensor<8xf32>
      %y = arith.addf %s, %x : f32
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
