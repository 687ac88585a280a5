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
