// RUN: attn-opt %s -split-input-file -attn-to-gpu=chip=sm_80 -verify-diagnostics | FileCheck %s

// attn-to-gpu puts its kernels in gpu.module @attn_kernels under names
// fixed by their specialisation (the manifest and the runtime use them). It
// never renames around a user's symbol: a symbol that takes one of those
// names is an error, where the pass used to define @attn_kernels twice or
// keep a user's kernel in place of its own, with no manifest line. A kernel
// it generated before (same manifest line, e.g. a second run) is kept.

// expected-error @below {{'func.func' op is named @attn_kernels, the gpu.module attn-to-gpu puts its kernels in: rename it}}
func.func private @attn_kernels()

func.func @f(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  %o = attn.attention %q, %k, %v : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x64x64xf16>
  return %o : tensor<1x2x64x64xf16>
}

// -----

module attributes {gpu.container_module} {
  gpu.module @attn_kernels {
    gpu.func @attn_fwd_f16_d64_dv64_none() kernel {
      gpu.return
    }
  }
  func.func @user_kernel(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
    // expected-error @below {{'attn.attention' op needs the kernel @attn_kernels::@attn_fwd_f16_d64_dv64_none, but gpu.module @attn_kernels already holds a 'gpu.func' of that name that attn-to-gpu did not generate: rename it}}
    %o = attn.attention %q, %k, %v : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x64x64xf16>
    return %o : tensor<1x2x64x64xf16>
  }
}

// -----

// A kernel of the same name generated for another schedule (here 8 warps)
// cannot stand for this one either.
module attributes {gpu.container_module} {
  gpu.module @attn_kernels {
    gpu.func @attn_fwd_f16_d64_dv64_none() kernel attributes {attn.manifest = "kernel attn_fwd_f16_d64_dv64_none kind=forward dtype=f16 head_dim=64 value_dim=64 causal=none block_q=256 block_kv=64 threads=256 smem=73728"} {
      gpu.return
    }
  }
  func.func @other_schedule(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
    // expected-error @below {{already holds a kernel of that name with another schedule ("kernel attn_fwd_f16_d64_dv64_none kind=forward dtype=f16 head_dim=64 value_dim=64 causal=none block_q=256 block_kv=64 threads=256 smem=73728"): generate both with the same options}}
    %o = attn.attention %q, %k, %v : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x64x64xf16>
    return %o : tensor<1x2x64x64xf16>
  }
}

// -----

// The kernel this op needs, as an earlier run generated it (its body left
// out here): kept, not generated again, and its manifest line restored.

// CHECK-LABEL: module attributes
// CHECK-SAME:    attn.manifest = ["kernel attn_fwd_f16_d64_dv64_none kind=forward dtype=f16 head_dim=64 value_dim=64 causal=none block_q=128 block_kv=64 threads=128 smem=73728 params=q:memref4,k:memref4,v:memref4,o:memref4,lse:memref3,scale_log2:f32,window:i64"]
// CHECK:         gpu.module @attn_kernels {
// CHECK-NEXT:      gpu.func @attn_fwd_f16_d64_dv64_none() kernel
// CHECK-NEXT:        gpu.return
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK:         attn.attention {{.*}}attn.kernel = @attn_kernels::@attn_fwd_f16_d64_dv64_none
module attributes {gpu.container_module} {
  gpu.module @attn_kernels {
    gpu.func @attn_fwd_f16_d64_dv64_none() kernel attributes {attn.manifest = "kernel attn_fwd_f16_d64_dv64_none kind=forward dtype=f16 head_dim=64 value_dim=64 causal=none block_q=128 block_kv=64 threads=128 smem=73728 params=q:memref4,k:memref4,v:memref4,o:memref4,lse:memref3,scale_log2:f32,window:i64"} {
      gpu.return
    }
  }
  func.func @generated_before(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
    %o = attn.attention %q, %k, %v : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x64x64xf16>
    return %o : tensor<1x2x64x64xf16>
  }
}

// -----

// attn.manifest, where the module has one, is the array of manifest lines
// that earlier runs wrote; anything else is an error, not overwritten.

// expected-error @below {{attn-to-gpu: the module's attn.manifest must be an array of manifest lines (strings), got "kernel x"}}
module attributes {attn.manifest = "kernel x"} {
  func.func @manifest_string(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
    %o = attn.attention %q, %k, %v : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x64x64xf16>
    return %o : tensor<1x2x64x64xf16>
  }
}

// -----

// expected-error @below {{attn-to-gpu: the module's attn.manifest must be an array of manifest lines (strings), got [1, "kernel x"]}}
module attributes {attn.manifest = [1 : i64, "kernel x"]} {
  func.func @manifest_not_strings(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
    %o = attn.attention %q, %k, %v : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x64x64xf16>
    return %o : tensor<1x2x64x64xf16>
  }
}

// -----

// attn-to-ptx's own output (its gpu.binary, the host code's attn ops kept
// for the runtime) is compiled already: a second run says so.
module attributes {gpu.container_module} {
  // expected-error @below {{'gpu.binary' op @attn_kernels holds the kernels of an earlier attn-to-ptx (attn-to-gpu) run: this module's attn ops are compiled already; run the pipeline once, on the module before it}}
  gpu.binary @attn_kernels [#gpu.object<#nvvm.target<chip = "sm_80">, "">]
  func.func @compiled(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
    %o = attn.attention %q, %k, %v : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x64x64xf16>
    return %o : tensor<1x2x64x64xf16>
  }
}
