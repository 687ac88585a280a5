// RUN: attn-cpu-runner %s --entry=libm --compare-pass=attn-decompose | FileCheck %s
// RUN: attn-cpu-runner %s --entry=narrow --compare-pass=attn-decompose | FileCheck %s

// Math functions in a modification run on the CPU whether or not LLVM has
// an intrinsic for them: erf and cbrt go to libm (convert-math-to-libm),
// which the JIT resolves; f16 math through the same path. The tiled loops
// (attn-to-llvm) agree with attn-decompose's reference semantics.
// CHECK: PASS

func.func @libm(%q: tensor<1x2x37x16xf32>, %k: tensor<1x2x50x16xf32>, %v: tensor<1x2x50x16xf32>) -> tensor<1x2x37x16xf32> {
  %o = attn.attention %q, %k, %v : tensor<1x2x37x16xf32>, tensor<1x2x50x16xf32>, tensor<1x2x50x16xf32> -> tensor<1x2x37x16xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      %e = math.erf %s : f32
      %c = math.cbrt %e : f32
      %t = math.tanh %c : f32
      attn.yield %t : f32
    }
  return %o : tensor<1x2x37x16xf32>
}

func.func @narrow(%q: tensor<1x2x37x16xf16>, %k: tensor<1x2x50x16xf16>, %v: tensor<1x2x50x16xf16>) -> tensor<1x2x37x16xf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<1x2x37x16xf16>, tensor<1x2x50x16xf16>, tensor<1x2x50x16xf16> -> tensor<1x2x37x16xf16>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      %x = arith.truncf %s : f32 to f16
      %t = math.tanh %x : f16
      %c = math.ceil %t : f16
      %y = arith.extf %c : f16 to f32
      %r = arith.addf %y, %s : f32
      attn.yield %r : f32
    }
  return %o : tensor<1x2x37x16xf16>
}
