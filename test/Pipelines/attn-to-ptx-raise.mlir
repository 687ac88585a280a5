// RUN: attn-opt %s --attn-raise --attn-to-ptx="chip=sm_80" | FileCheck %s

// A front-end chain (f16 operands, f32 contractions and softmax, f16 result)
// raised to attn.attention and compiled to a GPU kernel in one pipeline; the
// same path as `attn-compile --raise`.
// CHECK: attn.manifest = ["kernel attn_fwd_f16_d64_dv64_none kind=forward dtype=f16 head_dim=64 value_dim=64 causal=none
// CHECK-LABEL: func.func @front_end_f16
// CHECK: attn.attention {{.*}}attn.kernel = @attn_kernels::@attn_fwd_f16_d64_dv64_none
// CHECK: gpu.binary @attn_kernels
// CHECK-SAME: chip = "sm_80"
func.func @front_end_f16(%q: tensor<4x6x64xf16>, %k: tensor<4x10x64xf16>, %v: tensor<4x10x64xf16>) -> tensor<4x6x64xf16> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.125 : f32
  %eq = tensor.empty() : tensor<4x6x64xf32>
  %q32 = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q : tensor<4x6x64xf16>) outs(%eq : tensor<4x6x64xf32>) {
  ^bb0(%x: f16, %o: f32):
    %e = arith.extf %x : f16 to f32
    %r = arith.mulf %e, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x6x64xf32>
  %ek = tensor.empty() : tensor<4x10x64xf32>
  %k32 = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k : tensor<4x10x64xf16>) outs(%ek : tensor<4x10x64xf32>) {
  ^bb0(%x: f16, %o: f32):
    %e = arith.extf %x : f16 to f32
    linalg.yield %e : f32
  } -> tensor<4x10x64xf32>
  %ev = tensor.empty() : tensor<4x10x64xf32>
  %v32 = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v : tensor<4x10x64xf16>) outs(%ev : tensor<4x10x64xf32>) {
  ^bb0(%x: f16, %o: f32):
    %e = arith.extf %x : f16 to f32
    linalg.yield %e : f32
  } -> tensor<4x10x64xf32>
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q32, %k32 : tensor<4x6x64xf32>, tensor<4x10x64xf32>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %er = tensor.empty() : tensor<4x6xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<4x6xf32>) -> tensor<4x6xf32>
  %m = linalg.reduce ins(%s : tensor<4x6x10xf32>) outs(%fm : tensor<4x6xf32>) dimensions = [2]
    (%x: f32, %acc: f32) {
      %r = arith.maximumf %x, %acc : f32
      linalg.yield %r : f32
    }
  %mb = linalg.broadcast ins(%m : tensor<4x6xf32>) outs(%es : tensor<4x6x10xf32>) dimensions = [2]
  %d = linalg.sub ins(%s, %mb : tensor<4x6x10xf32>, tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %e = linalg.exp ins(%d : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%er : tensor<4x6xf32>) -> tensor<4x6xf32>
  %l = linalg.reduce ins(%e : tensor<4x6x10xf32>) outs(%fz : tensor<4x6xf32>) dimensions = [2]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  %lb = linalg.broadcast ins(%l : tensor<4x6xf32>) outs(%es : tensor<4x6x10xf32>) dimensions = [2]
  %p = linalg.div ins(%e, %lb : tensor<4x6x10xf32>, tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %eo = tensor.empty() : tensor<4x6x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x64xf32>) -> tensor<4x6x64xf32>
  %o = linalg.batch_matmul ins(%p, %v32 : tensor<4x6x10xf32>, tensor<4x10x64xf32>) outs(%fo : tensor<4x6x64xf32>) -> tensor<4x6x64xf32>
  %eh = tensor.empty() : tensor<4x6x64xf16>
  %oh = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%o : tensor<4x6x64xf32>) outs(%eh : tensor<4x6x64xf16>) {
  ^bb0(%x: f32, %out: f16):
    %t = arith.truncf %x : f32 to f16
    linalg.yield %t : f16
  } -> tensor<4x6x64xf16>
  return %oh : tensor<4x6x64xf16>
}
