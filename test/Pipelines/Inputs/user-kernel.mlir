// A module that already holds a kernel of the name attn-to-gpu gives the
// kernel of its attention op.
module attributes {gpu.container_module} {
  gpu.module @attn_kernels {
    gpu.func @attn_fwd_f16_d64_dv64_none() kernel {
      gpu.return
    }
  }
  func.func @f(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
    %o = attn.attention %q, %k, %v : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x64x64xf16>
    return %o : tensor<1x2x64x64xf16>
  }
}
