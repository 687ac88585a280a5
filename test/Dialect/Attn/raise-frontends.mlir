// RUN: attn-opt %s -split-input-file --attn-raise=report-unfused -verify-diagnostics | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-raise="report-unfused strict-softmax" 2>&1 | FileCheck %s --check-prefix=STRICT

// attn-raise on the spellings real front ends emit (issue 12): leftovers a
// front end does not clean up, keep-dim reductions, the log-sum-exp
// softmax, upstream's softmax decomposition, masks computed from constants
// and casts, windows from indices, and the softmaxes whose fusion is more
// exact than the chain (fused with a remark; strict-softmax keeps them).
// Each fused chain is also run before and after attn-raise on the same
// random inputs (see raise.mlir for the tolerances).
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=tosa_leftovers | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=tosa_cast_bool_mask | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=tosa_cast_float_mask | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=tosa_log_sum_exp | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=rank0_f64_scale | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=causal_from_constant_iotas | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=constant_dense_mask | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=torch_keepdim_softmax | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=upstream_softmax_decomposition | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=f16_softmax | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=sliding_window_from_indices | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=no_max_subtraction | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=gqa_repeat_kv | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=tosa_gqa_tile_decode | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=tosa_log_sum_exp_returns_lse | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=causal_constant_mask | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=tosa_causal_constant_keep_mask | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=tosa_onnx_softmax_without_max | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=math_log_sum_exp | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=bf16_written_softmax --rtol=0.03125 --atol=0.03125 | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=max_with_argmax | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=tosa_rsqrt_scale_identity | FileCheck %s --check-prefix=NUM
// NUM: PASS

// STRICT: remark: attn-raise: not fused: strict-softmax: the softmax is computed in f16
// STRICT: remark: attn-raise: not fused: strict-softmax: the softmax does not subtract the row max
// STRICT: remark: attn-raise: not fused: strict-softmax: the softmax does not subtract the row max
// STRICT: remark: attn-raise: not fused: strict-softmax: the softmax is computed in bf16

// Buddy-style leftovers: a zero added on V and after the softmax, the scale
// as a multiply by tosa.reciprocal of a constant.
// CHECK-LABEL: func.func @tosa_leftovers
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 2.500000e-01 : f32}
// CHECK-NOT:     tosa.add
// CHECK:         return
func.func @tosa_leftovers(%q: tensor<6x6x16xf32>, %k: tensor<6x10x16xf32>, %v: tensor<6x10x12xf32>) -> tensor<6x6x12xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zero = "tosa.const"() <{values = dense<0.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %sqrtd = "tosa.const"() <{values = dense<4.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %c = tosa.reciprocal %sqrtd : (tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<6x10x16xf32>) -> tensor<6x16x10xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<6x6x16xf32>, tensor<6x16x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x10xf32>
  %ss = tosa.mul %s, %c, %shift : (tensor<6x6x10xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  %m = tosa.reduce_max %ss {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %d = tosa.sub %ss, %m : (tensor<6x6x10xf32>, tensor<6x6x1xf32>) -> tensor<6x6x10xf32>
  %e = tosa.exp %d : (tensor<6x6x10xf32>) -> tensor<6x6x10xf32>
  %l = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %r = tosa.reciprocal %l : (tensor<6x6x1xf32>) -> tensor<6x6x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<6x6x10xf32>, tensor<6x6x1xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  %p0 = tosa.add %p, %zero : (tensor<6x6x10xf32>, tensor<1x1x1xf32>) -> tensor<6x6x10xf32>
  %v0 = tosa.add %v, %zero : (tensor<6x10x12xf32>, tensor<1x1x1xf32>) -> tensor<6x10x12xf32>
  %o = tosa.matmul %p0, %v0, %zp, %zp : (tensor<6x6x10xf32>, tensor<6x10x12xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x12xf32>
  return %o : tensor<6x6x12xf32>
}

// -----

// TensorFlow's BERT mask: (1 - cast(mask)) * -10000 added to the scaled
// scores, the boolean mask cast to f32 with tosa.cast.
// CHECK-LABEL: func.func @tosa_cast_bool_mask
// CHECK:         %[[MASK:.+]] = tosa.mul
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[MASK]] : tensor<6x1x10xf32>) {scale = 2.500000e-01 : f32}
// CHECK-NOT:     tosa.exp
// CHECK:         return
func.func @tosa_cast_bool_mask(%q: tensor<6x6x16xf32>, %k: tensor<6x10x16xf32>, %v: tensor<6x10x12xf32>, %mask: tensor<6x1x10xi1>) -> tensor<6x6x12xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %one = "tosa.const"() <{values = dense<1.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %big = "tosa.const"() <{values = dense<-10000.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %c = "tosa.const"() <{values = dense<0.25> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %mf = tosa.cast %mask : (tensor<6x1x10xi1>) -> tensor<6x1x10xf32>
  %inv = tosa.sub %one, %mf : (tensor<1x1x1xf32>, tensor<6x1x10xf32>) -> tensor<6x1x10xf32>
  %adder = tosa.mul %inv, %big, %shift : (tensor<6x1x10xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x1x10xf32>
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<6x10x16xf32>) -> tensor<6x16x10xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<6x6x16xf32>, tensor<6x16x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x10xf32>
  %ss = tosa.mul %s, %c, %shift : (tensor<6x6x10xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  %sm = tosa.add %ss, %adder : (tensor<6x6x10xf32>, tensor<6x1x10xf32>) -> tensor<6x6x10xf32>
  %m = tosa.reduce_max %sm {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %d = tosa.sub %sm, %m : (tensor<6x6x10xf32>, tensor<6x6x1xf32>) -> tensor<6x6x10xf32>
  %e = tosa.exp %d : (tensor<6x6x10xf32>) -> tensor<6x6x10xf32>
  %l = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %r = tosa.reciprocal %l : (tensor<6x6x1xf32>) -> tensor<6x6x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<6x6x10xf32>, tensor<6x6x1xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x6x10xf32>, tensor<6x10x12xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x12xf32>
  return %o : tensor<6x6x12xf32>
}

// -----

// A float 0/1 mask cast to i1 with tosa.cast and selected against -inf.
// CHECK-LABEL: func.func @tosa_cast_float_mask
// CHECK:         %[[COND:.+]] = tosa.cast %{{.+}} : (tensor<1x6x10xf32>) -> tensor<1x6x10xi1>
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}} : tensor<6x10xi1>) {scale = 2.500000e-01 : f32}
// CHECK-NOT:     tosa.exp
// CHECK:         return
func.func @tosa_cast_float_mask(%q: tensor<6x6x16xf32>, %k: tensor<6x10x16xf32>, %v: tensor<6x10x12xf32>, %keep: tensor<1x6x10xf32>) -> tensor<6x6x12xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %ninf = "tosa.const"() <{values = dense<0xFF800000> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %c = "tosa.const"() <{values = dense<0.25> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %cond = tosa.cast %keep : (tensor<1x6x10xf32>) -> tensor<1x6x10xi1>
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<6x10x16xf32>) -> tensor<6x16x10xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<6x6x16xf32>, tensor<6x16x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x10xf32>
  %ss = tosa.mul %s, %c, %shift : (tensor<6x6x10xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  %sm = tosa.select %cond, %ss, %ninf : (tensor<1x6x10xi1>, tensor<6x6x10xf32>, tensor<1x1x1xf32>) -> tensor<6x6x10xf32>
  %m = tosa.reduce_max %sm {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %d = tosa.sub %sm, %m : (tensor<6x6x10xf32>, tensor<6x6x1xf32>) -> tensor<6x6x10xf32>
  %e = tosa.exp %d : (tensor<6x6x10xf32>) -> tensor<6x6x10xf32>
  %l = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %r = tosa.reciprocal %l : (tensor<6x6x1xf32>) -> tensor<6x6x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<6x6x10xf32>, tensor<6x6x1xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x6x10xf32>, tensor<6x10x12xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x12xf32>
  return %o : tensor<6x6x12xf32>
}

// -----

// Buddy's lowering of PyTorch's CPU flash-attention op: the log-sum-exp
// softmax exp(x - (max + log(sum(exp(x - max))))), as in buddy-mlir's
// examples/BuddyNext/next-gqa-attention-fusion.mlir.
// CHECK-LABEL: func.func @tosa_log_sum_exp
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}} : tensor<6x10xf32>) {scale = 2.500000e-01 : f32}
// CHECK-NOT:     tosa.log
// CHECK:         return
func.func @tosa_log_sum_exp(%q: tensor<1x12x6x16xf32>, %kt: tensor<1x12x16x10xf32>, %v: tensor<1x12x10x16xf32>, %mask: tensor<1x1x6x10xf32>) -> tensor<1x12x6x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c = "tosa.const"() <{values = dense<0.25> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %s3q = tosa.const_shape {values = dense<[12, 6, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s3k = tosa.const_shape {values = dense<[12, 16, 10]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s3v = tosa.const_shape {values = dense<[12, 10, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4s = tosa.const_shape {values = dense<[1, 12, 6, 10]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3s = tosa.const_shape {values = dense<[12, 6, 10]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4o = tosa.const_shape {values = dense<[1, 12, 6, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %q3 = tosa.reshape %q, %s3q : (tensor<1x12x6x16xf32>, !tosa.shape<3>) -> tensor<12x6x16xf32>
  %k3 = tosa.reshape %kt, %s3k : (tensor<1x12x16x10xf32>, !tosa.shape<3>) -> tensor<12x16x10xf32>
  %v3 = tosa.reshape %v, %s3v : (tensor<1x12x10x16xf32>, !tosa.shape<3>) -> tensor<12x10x16xf32>
  %s = tosa.matmul %q3, %k3, %zp, %zp : (tensor<12x6x16xf32>, tensor<12x16x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<12x6x10xf32>
  %s4 = tosa.reshape %s, %s4s : (tensor<12x6x10xf32>, !tosa.shape<4>) -> tensor<1x12x6x10xf32>
  %ss = tosa.mul %s4, %c, %shift : (tensor<1x12x6x10xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<1x12x6x10xf32>
  %x = tosa.add %ss, %mask : (tensor<1x12x6x10xf32>, tensor<1x1x6x10xf32>) -> tensor<1x12x6x10xf32>
  %max = tosa.reduce_max %x {axis = 3 : i32} : (tensor<1x12x6x10xf32>) -> tensor<1x12x6x1xf32>
  %shifted = tosa.sub %x, %max : (tensor<1x12x6x10xf32>, tensor<1x12x6x1xf32>) -> tensor<1x12x6x10xf32>
  %exp = tosa.exp %shifted : (tensor<1x12x6x10xf32>) -> tensor<1x12x6x10xf32>
  %sum = tosa.reduce_sum %exp {axis = 3 : i32} : (tensor<1x12x6x10xf32>) -> tensor<1x12x6x1xf32>
  %logsum = tosa.log %sum : (tensor<1x12x6x1xf32>) -> tensor<1x12x6x1xf32>
  %norm = tosa.add %max, %logsum : (tensor<1x12x6x1xf32>, tensor<1x12x6x1xf32>) -> tensor<1x12x6x1xf32>
  %lsm = tosa.sub %x, %norm : (tensor<1x12x6x10xf32>, tensor<1x12x6x1xf32>) -> tensor<1x12x6x10xf32>
  %prob = tosa.exp %lsm : (tensor<1x12x6x10xf32>) -> tensor<1x12x6x10xf32>
  %p3 = tosa.reshape %prob, %s3s : (tensor<1x12x6x10xf32>, !tosa.shape<3>) -> tensor<12x6x10xf32>
  %o = tosa.matmul %p3, %v3, %zp, %zp : (tensor<12x6x10xf32>, tensor<12x10x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<12x6x16xf32>
  %o4 = tosa.reshape %o, %s4o : (tensor<12x6x16xf32>, !tosa.shape<4>) -> tensor<1x12x6x16xf32>
  return %o4 : tensor<1x12x6x16xf32>
}

// -----

#id3_0 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3_0 = affine_map<(d0, d1, d2) -> (d0, d1)>
#scalar3_0 = affine_map<(d0, d1, d2) -> ()>
// The scale read from a rank-0 f64 constant truncated to f32, as
// torch-mlir's TorchToLinalg writes a Python float operand.
// CHECK-LABEL: func.func @rank0_f64_scale
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 0.353553385 : f32}
// CHECK-NOT:     linalg.softmax
// CHECK:         return
func.func @rank0_f64_scale(%q: tensor<4x6x8xf32>, %k: tensor<4x10x8xf32>, %v: tensor<4x10x12xf32>) -> tensor<4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %c64 = arith.constant dense<0.35355339059327373> : tensor<f64>
  %c = arith.truncf %c64 : tensor<f64> to tensor<f32>
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xf32>, tensor<4x10x8xf32>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %ss = linalg.generic {indexing_maps = [#id3_0, #scalar3_0, #id3_0], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %c : tensor<4x6x10xf32>, tensor<f32>) outs(%es : tensor<4x6x10xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.mulf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x6x10xf32>
  %p = linalg.softmax dimension(2) ins(%ss : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x10xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  return %o : tensor<4x6x12xf32>
}

// -----

#id3_1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#qi_1 = affine_map<(d0, d1, d2) -> (d1)>
#kj_1 = affine_map<(d0, d1, d2) -> (d2)>
// A causal mask built from constant index vectors (torch.arange folded to
// constants): keys j > i get -inf.
// CHECK-LABEL: func.func @causal_from_constant_iotas
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = #attn.causal<top_left>, scale = 1.000000e+00 : f32}
// CHECK-NOT:     arith.cmpi
// CHECK:         return
func.func @causal_from_constant_iotas(%q: tensor<4x6x8xf32>, %k: tensor<4x6x8xf32>, %v: tensor<4x6x12xf32>) -> tensor<4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %ai = arith.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi64>
  %aj = arith.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi64>
  %es = tensor.empty() : tensor<4x6x6xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x6xf32>) -> tensor<4x6x6xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xf32>, tensor<4x6x8xf32>) outs(%fs : tensor<4x6x6xf32>) -> tensor<4x6x6xf32>
  %sm = linalg.generic {indexing_maps = [#id3_1, #qi_1, #kj_1, #id3_1], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %ai, %aj : tensor<4x6x6xf32>, tensor<6xi64>, tensor<6xi64>) outs(%es : tensor<4x6x6xf32>) {
  ^bb0(%x: f32, %i: i64, %j: i64, %o: f32):
    %c = arith.cmpi sgt, %j, %i : i64
    %r = arith.select %c, %ninf, %x : f32
    linalg.yield %r : f32
  } -> tensor<4x6x6xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<4x6x6xf32>) outs(%es : tensor<4x6x6xf32>) -> tensor<4x6x6xf32>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x6xf32>, tensor<4x6x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  return %o : tensor<4x6x12xf32>
}

// -----

// A constant dense additive mask (a fixed pattern the front end folded).
// CHECK-LABEL: func.func @constant_dense_mask
// CHECK:         %[[MASK:.+]] = arith.constant dense<{{.+}}> : tensor<2x3xf32>
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[MASK]] : tensor<2x3xf32>) {scale = 1.000000e+00 : f32}
// CHECK-NOT:     linalg.softmax
// CHECK:         return
func.func @constant_dense_mask(%q: tensor<4x2x8xf32>, %k: tensor<4x3x8xf32>, %v: tensor<4x3x12xf32>) -> tensor<4x2x12xf32> {
  %zero = arith.constant 0.0 : f32
  %mask = arith.constant dense<[[0.0, 0xFF800000, 0.0], [0.0, 0.0, 0xFF800000]]> : tensor<2x3xf32>
  %es = tensor.empty() : tensor<4x2x3xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x2x3xf32>) -> tensor<4x2x3xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x2x8xf32>, tensor<4x3x8xf32>) outs(%fs : tensor<4x2x3xf32>) -> tensor<4x2x3xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<4x2x3xf32>, tensor<2x3xf32>) outs(%es : tensor<4x2x3xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %r = arith.addf %x, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x2x3xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<4x2x3xf32>) outs(%es : tensor<4x2x3xf32>) -> tensor<4x2x3xf32>
  %eo = tensor.empty() : tensor<4x2x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x2x12xf32>) -> tensor<4x2x12xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x2x3xf32>, tensor<4x3x12xf32>) outs(%fo : tensor<4x2x12xf32>) -> tensor<4x2x12xf32>
  return %o : tensor<4x2x12xf32>
}

// -----

#map_3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#keep_3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#mask1_3 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#mask1r_3 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// torch-mlir's TorchToLinalg softmax: keep-dim max and sum written with a
// constant 0 in their output maps (affine_map<(d0, d1) -> (d0, 0)> in its
// softmax and log_softmax lowerings); a [B, 1, 1, Sk] mask summed over a unit
// dimension marked "reduction".
// CHECK-LABEL: func.func @torch_keepdim_softmax
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}} : tensor<2x1x1x10xf32>) {scale = 1.000000e+00 : f32}
// CHECK-NOT:     math.exp
// CHECK:         return
func.func @torch_keepdim_softmax(%q: tensor<2x3x6x8xf32>, %k: tensor<2x3x10x8xf32>, %v: tensor<2x3x10x12xf32>, %mask: tensor<2x1x1x1x10xf32>) -> tensor<2x3x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %es = tensor.empty() : tensor<2x3x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x3x6x10xf32>) -> tensor<2x3x6x10xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x3x6x8xf32>, tensor<2x3x10x8xf32>) outs(%fs : tensor<2x3x6x10xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x10xf32>
  %em = tensor.empty() : tensor<2x1x1x10xf32>
  %fm = linalg.fill ins(%zero : f32) outs(%em : tensor<2x1x1x10xf32>) -> tensor<2x1x1x10xf32>
  %m4 = linalg.generic {indexing_maps = [#mask1_3, #mask1r_3], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%mask : tensor<2x1x1x1x10xf32>) outs(%fm : tensor<2x1x1x10xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x1x1x10xf32>
  %sm = linalg.generic {indexing_maps = [#map_3, affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>, #map_3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %m4 : tensor<2x3x6x10xf32>, tensor<2x1x1x10xf32>) outs(%es : tensor<2x3x6x10xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %r = arith.addf %x, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x10xf32>
  %e1 = tensor.empty() : tensor<2x3x6x1xf32>
  %f1 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<2x3x6x1xf32>) -> tensor<2x3x6x1xf32>
  %max = linalg.generic {indexing_maps = [#map_3, #keep_3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%sm : tensor<2x3x6x10xf32>) outs(%f1 : tensor<2x3x6x1xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x1xf32>
  %ex = linalg.generic {indexing_maps = [#map_3, #keep_3, #map_3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%sm, %max : tensor<2x3x6x10xf32>, tensor<2x3x6x1xf32>) outs(%es : tensor<2x3x6x10xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x10xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x3x6x1xf32>) -> tensor<2x3x6x1xf32>
  %sum = linalg.generic {indexing_maps = [#map_3, #keep_3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x3x6x10xf32>) outs(%f0 : tensor<2x3x6x1xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x1xf32>
  %p = linalg.generic {indexing_maps = [#map_3, #keep_3, #map_3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x3x6x10xf32>, tensor<2x3x6x1xf32>) outs(%es : tensor<2x3x6x10xf32>) {
  ^bb0(%x: f32, %l: f32, %o: f32):
    %r = arith.divf %x, %l : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x10xf32>
  %eo = tensor.empty() : tensor<2x3x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x3x6x12xf32>) -> tensor<2x3x6x12xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x3x6x10xf32>, tensor<2x3x10x12xf32>) outs(%fo : tensor<2x3x6x12xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x12xf32>
  return %o : tensor<2x3x6x12xf32>
}

// -----

// Upstream MLIR's decomposition of linalg.softmax (its AggregatedOpInterface,
// as `transform.structured.decompose_interface` writes it; upstream's
// mlir/test/Dialect/Linalg/transform-op-decompose.mlir): the max starts
// from a NaN fill and combines with arith.maxnumf.
// CHECK-LABEL: func.func @upstream_softmax_decomposition
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.000000e+00 : f32}
// CHECK-NOT:     arith.maxnumf
// CHECK:         return
func.func @upstream_softmax_decomposition(%q: tensor<2x16x8xf32>, %k: tensor<2x32x8xf32>, %v: tensor<2x32x12xf32>) -> tensor<2x16x12xf32> {
  %zero = arith.constant 0.0 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %es = tensor.empty() : tensor<2x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<2x16x8xf32>, tensor<2x32x8xf32>) outs(%fs : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  %0 = tensor.empty() : tensor<2x16xf32>
  %1 = linalg.fill ins(%nan : f32) outs(%0 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s : tensor<2x16x32xf32>) outs(%1 : tensor<2x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.maxnumf %in, %out : f32
    linalg.yield %7 : f32
  } -> tensor<2x16xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %2 : tensor<2x16x32xf32>, tensor<2x16xf32>) outs(%es : tensor<2x16x32xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %7 = arith.subf %in, %in_1 : f32
    %8 = math.exp %7 : f32
    linalg.yield %8 : f32
  } -> tensor<2x16x32xf32>
  %4 = linalg.fill ins(%zero : f32) outs(%0 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%3 : tensor<2x16x32xf32>) outs(%4 : tensor<2x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.addf %in, %out : f32
    linalg.yield %7 : f32
  } -> tensor<2x16xf32>
  %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%3, %5 : tensor<2x16x32xf32>, tensor<2x16xf32>) outs(%es : tensor<2x16x32xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %7 = arith.divf %in, %in_1 : f32
    linalg.yield %7 : f32
  } -> tensor<2x16x32xf32>
  %eo = tensor.empty() : tensor<2x16x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x16x12xf32>) -> tensor<2x16x12xf32>
  %o = linalg.batch_matmul ins(%6, %v : tensor<2x16x32xf32>, tensor<2x32x12xf32>) outs(%fo : tensor<2x16x12xf32>) -> tensor<2x16x12xf32>
  return %o : tensor<2x16x12xf32>
}

// -----

// torch-mlir / IREE f16 models: f16 contractions accumulating in f32, the
// scores truncated to f16 and the softmax computed in f16.
// CHECK-LABEL: func.func @f16_softmax
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 0.353515625 : f32} : tensor<1x4x6x8xf16>, tensor<1x4x10x8xf16>, tensor<1x4x10x12xf16> -> tensor<1x4x6x12xf16>
// CHECK-NOT:     linalg.softmax
// CHECK:         return
func.func @f16_softmax(%q: tensor<4x6x8xf16>, %k: tensor<4x10x8xf16>, %v: tensor<4x10x12xf16>) -> tensor<4x6x12xf16> {
  %zero = arith.constant 0.0 : f32
  %es32 = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es32 : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xf16>, tensor<4x10x8xf16>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %es = tensor.empty() : tensor<4x6x10xf16>
  %s16 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf16>) {
  ^bb0(%x: f32, %o: f16):
    %t = arith.truncf %x : f32 to f16
    %c = arith.constant 0.3535 : f16
    %r = arith.mulf %t, %c : f16
    linalg.yield %r : f16
  } -> tensor<4x6x10xf16>
  %p = linalg.softmax dimension(2) ins(%s16 : tensor<4x6x10xf16>) outs(%es : tensor<4x6x10xf16>) -> tensor<4x6x10xf16>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  // expected-remark @below {{attn-raise: fused; the softmax is computed in f16; attn.attention computes it in f32}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x10xf16>, tensor<4x10x12xf16>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  %eh = tensor.empty() : tensor<4x6x12xf16>
  %oh = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%o : tensor<4x6x12xf32>) outs(%eh : tensor<4x6x12xf16>) {
  ^bb0(%x: f32, %y: f16):
    %t = arith.truncf %x : f32 to f16
    linalg.yield %t : f16
  } -> tensor<4x6x12xf16>
  return %oh : tensor<4x6x12xf16>
}

// -----

// A sliding window written with indices: key j is visible from query i when
// i - 3 <= j <= i (causal, top-left, window 3).
// CHECK-LABEL: func.func @sliding_window_from_indices
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = #attn.causal<top_left>, scale = 1.000000e+00 : f32, window = 3 : i64}
// CHECK-NOT:     arith.cmpi
// CHECK:         return
func.func @sliding_window_from_indices(%q: tensor<2x12x8xf32>, %k: tensor<2x12x8xf32>, %v: tensor<2x12x12xf32>) -> tensor<2x12x12xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %es = tensor.empty() : tensor<2x12x12xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<2x12x8xf32>, tensor<2x12x8xf32>) outs(%fs : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x12x12xf32>) outs(%es : tensor<2x12x12xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %c3 = arith.constant 3 : index
    %lo = arith.subi %i, %c3 : index
    %after = arith.cmpi sgt, %j, %i : index
    %before = arith.cmpi slt, %j, %lo : index
    %hide = arith.ori %after, %before : i1
    %r = arith.select %hide, %ninf, %x : f32
    linalg.yield %r : f32
  } -> tensor<2x12x12xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x12x12xf32>) outs(%es : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %eo = tensor.empty() : tensor<2x12x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x12x12xf32>, tensor<2x12x12xf32>) outs(%fo : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  return %o : tensor<2x12x12xf32>
}

// -----

// onnx-mlir's Krnl-free lowering: exp(s) / sum(exp(s)) without the row max.
// CHECK-LABEL: func.func @no_max_subtraction
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.000000e+00 : f32}
// CHECK-NOT:     linalg.reduce
// CHECK:         return
func.func @no_max_subtraction(%q: tensor<4x6x8xf32>, %k: tensor<4x10x8xf32>, %v: tensor<4x10x12xf32>) -> tensor<4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xf32>, tensor<4x10x8xf32>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %e = linalg.exp ins(%s : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %er = tensor.empty() : tensor<4x6xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%er : tensor<4x6xf32>) -> tensor<4x6xf32>
  %l = linalg.reduce ins(%e : tensor<4x6x10xf32>) outs(%fz : tensor<4x6xf32>) dimensions = [2]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  %p = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %l : tensor<4x6x10xf32>, tensor<4x6xf32>) outs(%es : tensor<4x6x10xf32>) {
  ^bb0(%x: f32, %sum: f32, %o: f32):
    %r = arith.divf %x, %sum : f32
    linalg.yield %r : f32
  } -> tensor<4x6x10xf32>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  // expected-remark @below {{attn-raise: fused; the softmax does not subtract the row max; attn.attention does, so rows whose exp overflowed now give finite results}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x10xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  return %o : tensor<4x6x12xf32>
}

// -----

// Left alone: log_softmax(x) V, the log-sum-exp form without its final exp,
// is not attention.
// CHECK-LABEL: func.func @log_softmax_times_v
// CHECK:         tosa.log
// CHECK-NOT:     attn.attention
// CHECK:         return
func.func @log_softmax_times_v(%q: tensor<6x6x16xf32>, %k: tensor<6x16x10xf32>, %v: tensor<6x10x12xf32>) -> tensor<6x6x12xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %x = tosa.matmul %q, %k, %zp, %zp : (tensor<6x6x16xf32>, tensor<6x16x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x10xf32>
  %max = tosa.reduce_max %x {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %shifted = tosa.sub %x, %max : (tensor<6x6x10xf32>, tensor<6x6x1xf32>) -> tensor<6x6x10xf32>
  %exp = tosa.exp %shifted : (tensor<6x6x10xf32>) -> tensor<6x6x10xf32>
  %sum = tosa.reduce_sum %exp {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %logsum = tosa.log %sum : (tensor<6x6x1xf32>) -> tensor<6x6x1xf32>
  %lsm = tosa.sub %shifted, %logsum : (tensor<6x6x10xf32>, tensor<6x6x1xf32>) -> tensor<6x6x10xf32>
  // expected-remark @below {{attn-raise: not fused: the probabilities are not exp(x) divided by its sum over the key axis}}
  %o = tosa.matmul %lsm, %v, %zp, %zp : (tensor<6x6x10xf32>, tensor<6x10x12xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x12xf32>
  return %o : tensor<6x6x12xf32>
}

// -----

// Left alone: the log-sum-exp of other values than the exponent's (a sum
// over exp(2 x)).
// CHECK-LABEL: func.func @log_sum_exp_of_other_values
// CHECK-NOT:     attn.attention
// CHECK:         return
func.func @log_sum_exp_of_other_values(%q: tensor<6x6x16xf32>, %k: tensor<6x16x10xf32>, %v: tensor<6x10x12xf32>) -> tensor<6x6x12xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %two = "tosa.const"() <{values = dense<2.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %x = tosa.matmul %q, %k, %zp, %zp : (tensor<6x6x16xf32>, tensor<6x16x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x10xf32>
  %x2 = tosa.mul %x, %two, %shift : (tensor<6x6x10xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  %max = tosa.reduce_max %x {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %shifted2 = tosa.sub %x2, %max : (tensor<6x6x10xf32>, tensor<6x6x1xf32>) -> tensor<6x6x10xf32>
  %exp2 = tosa.exp %shifted2 : (tensor<6x6x10xf32>) -> tensor<6x6x10xf32>
  %sum = tosa.reduce_sum %exp2 {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %logsum = tosa.log %sum : (tensor<6x6x1xf32>) -> tensor<6x6x1xf32>
  %norm = tosa.add %max, %logsum : (tensor<6x6x1xf32>, tensor<6x6x1xf32>) -> tensor<6x6x1xf32>
  %lsm = tosa.sub %x, %norm : (tensor<6x6x10xf32>, tensor<6x6x1xf32>) -> tensor<6x6x10xf32>
  %p = tosa.exp %lsm : (tensor<6x6x10xf32>) -> tensor<6x6x10xf32>
  // expected-remark @below {{attn-raise: not fused: the probabilities are exp(x) without a division by its sum or a subtraction of its log-sum-exp}}
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x6x10xf32>, tensor<6x10x12xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x12xf32>
  return %o : tensor<6x6x12xf32>
}

// -----

// Hugging Face's repeat_kv as torch-mlir lowers it: K and V [B, Hkv, S, D]
// expanded to [B, Hkv, 1, S, D], broadcast to [B, Hkv, G, S, D] and
// collapsed to [B, Hq, S, D].
// CHECK-LABEL: func.func @gqa_repeat_kv
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x6x5x8xf32>, %[[K:.+]]: tensor<2x2x7x8xf32>, %[[V:.+]]: tensor<2x2x7x4xf32>)
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.000000e+00 : f32} : tensor<2x6x5x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x4xf32> -> tensor<2x6x5x4xf32>
// CHECK-NOT:     linalg.softmax
// CHECK:         return
func.func @gqa_repeat_kv(%q: tensor<2x6x5x8xf32>, %k: tensor<2x2x7x8xf32>, %v: tensor<2x2x7x4xf32>) -> tensor<2x6x5x4xf32> {
  %zero = arith.constant 0.0 : f32
  %k5 = tensor.expand_shape %k [[0], [1, 2], [3], [4]] output_shape [2, 2, 1, 7, 8] : tensor<2x2x7x8xf32> into tensor<2x2x1x7x8xf32>
  %v5 = tensor.expand_shape %v [[0], [1, 2], [3], [4]] output_shape [2, 2, 1, 7, 4] : tensor<2x2x7x4xf32> into tensor<2x2x1x7x4xf32>
  %ek = tensor.empty() : tensor<2x2x3x7x8xf32>
  %kb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%k5 : tensor<2x2x1x7x8xf32>) outs(%ek : tensor<2x2x3x7x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<2x2x3x7x8xf32>
  %ev = tensor.empty() : tensor<2x2x3x7x4xf32>
  %vb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%v5 : tensor<2x2x1x7x4xf32>) outs(%ev : tensor<2x2x3x7x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<2x2x3x7x4xf32>
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<2x2x3x7x8xf32> into tensor<2x6x7x8xf32>
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<2x2x3x7x4xf32> into tensor<2x6x7x4xf32>
  %es = tensor.empty() : tensor<2x6x5x7xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x6x5x7xf32>) -> tensor<2x6x5x7xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kr : tensor<2x6x5x8xf32>, tensor<2x6x7x8xf32>) outs(%fs : tensor<2x6x5x7xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x6x5x7xf32>
  %p = linalg.softmax dimension(3) ins(%s : tensor<2x6x5x7xf32>) outs(%es : tensor<2x6x5x7xf32>) -> tensor<2x6x5x7xf32>
  %eo = tensor.empty() : tensor<2x6x5x4xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x6x5x4xf32>) -> tensor<2x6x5x4xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %vr : tensor<2x6x5x7xf32>, tensor<2x6x7x4xf32>) outs(%fo : tensor<2x6x5x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x6x5x4xf32>
  return %o : tensor<2x6x5x4xf32>
}

// -----

// Buddy's TOSA GQA: K and V reshaped to [B, Hkv, 1, S, D], tosa.tile'd
// along the new dim and reshaped to [B * Hq, S, D] for tosa.matmul; the
// log-sum-exp softmax; decode (Sq = 1).
// CHECK-LABEL: func.func @tosa_gqa_tile_decode
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 0.353553385 : f32} : tensor<2x3x1x8xf32>, tensor<2x1x9x8xf32>, tensor<2x1x9x8xf32> -> tensor<2x3x1x8xf32>
// CHECK-NOT:     tosa.tile
// CHECK:         return
func.func @tosa_gqa_tile_decode(%q: tensor<1x6x1x8xf32>, %k: tensor<1x2x9x8xf32>, %v: tensor<1x2x9x8xf32>) -> tensor<1x6x1x8xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c = "tosa.const"() <{values = dense<0.35355339> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %s5 = tosa.const_shape {values = dense<[1, 2, 1, 9, 8]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %mult = tosa.const_shape {values = dense<[1, 1, 3, 1, 1]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %s3kv = tosa.const_shape {values = dense<[6, 9, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s3q = tosa.const_shape {values = dense<[6, 1, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4o = tosa.const_shape {values = dense<[1, 6, 1, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %k5 = tosa.reshape %k, %s5 : (tensor<1x2x9x8xf32>, !tosa.shape<5>) -> tensor<1x2x1x9x8xf32>
  %v5 = tosa.reshape %v, %s5 : (tensor<1x2x9x8xf32>, !tosa.shape<5>) -> tensor<1x2x1x9x8xf32>
  %kt5 = tosa.tile %k5, %mult : (tensor<1x2x1x9x8xf32>, !tosa.shape<5>) -> tensor<1x2x3x9x8xf32>
  %vt5 = tosa.tile %v5, %mult : (tensor<1x2x1x9x8xf32>, !tosa.shape<5>) -> tensor<1x2x3x9x8xf32>
  %k3 = tosa.reshape %kt5, %s3kv : (tensor<1x2x3x9x8xf32>, !tosa.shape<3>) -> tensor<6x9x8xf32>
  %v3 = tosa.reshape %vt5, %s3kv : (tensor<1x2x3x9x8xf32>, !tosa.shape<3>) -> tensor<6x9x8xf32>
  %q3 = tosa.reshape %q, %s3q : (tensor<1x6x1x8xf32>, !tosa.shape<3>) -> tensor<6x1x8xf32>
  %kt = tosa.transpose %k3 {perms = array<i32: 0, 2, 1>} : (tensor<6x9x8xf32>) -> tensor<6x8x9xf32>
  %s = tosa.matmul %q3, %kt, %zp, %zp : (tensor<6x1x8xf32>, tensor<6x8x9xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x1x9xf32>
  %x = tosa.mul %s, %c, %shift : (tensor<6x1x9xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x1x9xf32>
  %max = tosa.reduce_max %x {axis = 2 : i32} : (tensor<6x1x9xf32>) -> tensor<6x1x1xf32>
  %shifted = tosa.sub %x, %max : (tensor<6x1x9xf32>, tensor<6x1x1xf32>) -> tensor<6x1x9xf32>
  %exp = tosa.exp %shifted : (tensor<6x1x9xf32>) -> tensor<6x1x9xf32>
  %sum = tosa.reduce_sum %exp {axis = 2 : i32} : (tensor<6x1x9xf32>) -> tensor<6x1x1xf32>
  %logsum = tosa.log %sum : (tensor<6x1x1xf32>) -> tensor<6x1x1xf32>
  %norm = tosa.add %max, %logsum : (tensor<6x1x1xf32>, tensor<6x1x1xf32>) -> tensor<6x1x1xf32>
  %lsm = tosa.sub %x, %norm : (tensor<6x1x9xf32>, tensor<6x1x1xf32>) -> tensor<6x1x9xf32>
  %p = tosa.exp %lsm : (tensor<6x1x9xf32>) -> tensor<6x1x9xf32>
  %o = tosa.matmul %p, %v3, %zp, %zp : (tensor<6x1x9xf32>, tensor<6x9x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x1x8xf32>
  %o4 = tosa.reshape %o, %s4o : (tensor<6x1x8xf32>, !tosa.shape<4>) -> tensor<1x6x1x8xf32>
  return %o4 : tensor<1x6x1x8xf32>
}

// -----

// Left alone: K and V repeated as torch's repeat(1, G, 1, 1) does, query
// head h reading key/value head h % Hkv, which is not attn.attention's
// grouping.
// CHECK-LABEL: func.func @repeat_not_grouped
// CHECK-NOT:     attn.attention
// CHECK:         return
func.func @repeat_not_grouped(%q: tensor<2x6x5x8xf32>, %k: tensor<2x2x7x8xf32>, %v: tensor<2x2x7x4xf32>) -> tensor<2x6x5x4xf32> {
  %zero = arith.constant 0.0 : f32
  %k5 = tensor.expand_shape %k [[0], [1, 2], [3], [4]] output_shape [2, 1, 2, 7, 8] : tensor<2x2x7x8xf32> into tensor<2x1x2x7x8xf32>
  %v5 = tensor.expand_shape %v [[0], [1, 2], [3], [4]] output_shape [2, 1, 2, 7, 4] : tensor<2x2x7x4xf32> into tensor<2x1x2x7x4xf32>
  %ek = tensor.empty() : tensor<2x3x2x7x8xf32>
  %kb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%k5 : tensor<2x1x2x7x8xf32>) outs(%ek : tensor<2x3x2x7x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<2x3x2x7x8xf32>
  %ev = tensor.empty() : tensor<2x3x2x7x4xf32>
  %vb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%v5 : tensor<2x1x2x7x4xf32>) outs(%ev : tensor<2x3x2x7x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<2x3x2x7x4xf32>
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<2x3x2x7x8xf32> into tensor<2x6x7x8xf32>
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<2x3x2x7x4xf32> into tensor<2x6x7x4xf32>
  %es = tensor.empty() : tensor<2x6x5x7xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x6x5x7xf32>) -> tensor<2x6x5x7xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kr : tensor<2x6x5x8xf32>, tensor<2x6x7x8xf32>) outs(%fs : tensor<2x6x5x7xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x6x5x7xf32>
  %p = linalg.softmax dimension(3) ins(%s : tensor<2x6x5x7xf32>) outs(%es : tensor<2x6x5x7xf32>) -> tensor<2x6x5x7xf32>
  %eo = tensor.empty() : tensor<2x6x5x4xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x6x5x4xf32>) -> tensor<2x6x5x4xf32>
  // expected-remark @below {{attn-raise: not fused: the keys and values are repeated across the query heads in another order than attn.attention's groups (query head h reads key/value head h / (Hq / Hkv))}}
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %vr : tensor<2x6x5x7xf32>, tensor<2x6x7x4xf32>) outs(%fo : tensor<2x6x5x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x6x5x4xf32>
  return %o : tensor<2x6x5x4xf32>
}

// -----

// The same, returning the log-sum-exp as PyTorch's CPU flash-attention op
// does: attn.attention's LSE replaces it.
// CHECK-LABEL: func.func @tosa_log_sum_exp_returns_lse
// CHECK:         %[[O:.+]], %[[LSE:.+]] = attn.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}} : tensor<6x10xf32>) {scale = 2.500000e-01 : f32} : {{.+}} -> tensor<1x12x6x16xf32>, tensor<1x12x6xf32>
// CHECK-NOT:     tosa.log
// CHECK:         return
func.func @tosa_log_sum_exp_returns_lse(%q: tensor<1x12x6x16xf32>, %kt: tensor<1x12x16x10xf32>, %v: tensor<1x12x10x16xf32>, %mask: tensor<1x1x6x10xf32>) -> (tensor<1x12x6x16xf32>, tensor<1x12x6xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c = "tosa.const"() <{values = dense<0.25> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %s3q = tosa.const_shape {values = dense<[12, 6, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s3k = tosa.const_shape {values = dense<[12, 16, 10]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s3v = tosa.const_shape {values = dense<[12, 10, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4s = tosa.const_shape {values = dense<[1, 12, 6, 10]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3s = tosa.const_shape {values = dense<[12, 6, 10]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4o = tosa.const_shape {values = dense<[1, 12, 6, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %q3 = tosa.reshape %q, %s3q : (tensor<1x12x6x16xf32>, !tosa.shape<3>) -> tensor<12x6x16xf32>
  %k3 = tosa.reshape %kt, %s3k : (tensor<1x12x16x10xf32>, !tosa.shape<3>) -> tensor<12x16x10xf32>
  %v3 = tosa.reshape %v, %s3v : (tensor<1x12x10x16xf32>, !tosa.shape<3>) -> tensor<12x10x16xf32>
  %s = tosa.matmul %q3, %k3, %zp, %zp : (tensor<12x6x16xf32>, tensor<12x16x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<12x6x10xf32>
  %s4 = tosa.reshape %s, %s4s : (tensor<12x6x10xf32>, !tosa.shape<4>) -> tensor<1x12x6x10xf32>
  %ss = tosa.mul %s4, %c, %shift : (tensor<1x12x6x10xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<1x12x6x10xf32>
  %x = tosa.add %ss, %mask : (tensor<1x12x6x10xf32>, tensor<1x1x6x10xf32>) -> tensor<1x12x6x10xf32>
  %max = tosa.reduce_max %x {axis = 3 : i32} : (tensor<1x12x6x10xf32>) -> tensor<1x12x6x1xf32>
  %shifted = tosa.sub %x, %max : (tensor<1x12x6x10xf32>, tensor<1x12x6x1xf32>) -> tensor<1x12x6x10xf32>
  %exp = tosa.exp %shifted : (tensor<1x12x6x10xf32>) -> tensor<1x12x6x10xf32>
  %sum = tosa.reduce_sum %exp {axis = 3 : i32} : (tensor<1x12x6x10xf32>) -> tensor<1x12x6x1xf32>
  %logsum = tosa.log %sum : (tensor<1x12x6x1xf32>) -> tensor<1x12x6x1xf32>
  %norm = tosa.add %max, %logsum : (tensor<1x12x6x1xf32>, tensor<1x12x6x1xf32>) -> tensor<1x12x6x1xf32>
  %lsm = tosa.sub %x, %norm : (tensor<1x12x6x10xf32>, tensor<1x12x6x1xf32>) -> tensor<1x12x6x10xf32>
  %prob = tosa.exp %lsm : (tensor<1x12x6x10xf32>) -> tensor<1x12x6x10xf32>
  %p3 = tosa.reshape %prob, %s3s : (tensor<1x12x6x10xf32>, !tosa.shape<3>) -> tensor<12x6x10xf32>
  %o = tosa.matmul %p3, %v3, %zp, %zp : (tensor<12x6x10xf32>, tensor<12x10x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<12x6x16xf32>
  %o4 = tosa.reshape %o, %s4o : (tensor<12x6x16xf32>, !tosa.shape<4>) -> tensor<1x12x6x16xf32>
  %s3l = tosa.const_shape {values = dense<[1, 12, 6]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %lse = tosa.reshape %norm, %s3l : (tensor<1x12x6x1xf32>, !tosa.shape<3>) -> tensor<1x12x6xf32>
  return %o4, %lse : tensor<1x12x6x16xf32>, tensor<1x12x6xf32>
}

// -----

// The causal mask as a constant, the way a front end folds
// torch.triu(full(-inf), 1): recognised as top-left causal.
// CHECK-LABEL: func.func @causal_constant_mask
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = #attn.causal<top_left>, scale = 1.000000e+00 : f32}
// CHECK-NOT:     arith.constant dense<{{\[}}
// CHECK:         return
func.func @causal_constant_mask(%q: tensor<4x6x8xf32>, %k: tensor<4x6x8xf32>, %v: tensor<4x6x12xf32>) -> tensor<4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %mask = arith.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<6x6xf32>
  %es = tensor.empty() : tensor<4x6x6xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x6xf32>) -> tensor<4x6x6xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xf32>, tensor<4x6x8xf32>) outs(%fs : tensor<4x6x6xf32>) -> tensor<4x6x6xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<4x6x6xf32>, tensor<6x6xf32>) outs(%es : tensor<4x6x6xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %r = arith.addf %x, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x6x6xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<4x6x6xf32>) outs(%es : tensor<4x6x6xf32>) -> tensor<4x6x6xf32>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x6xf32>, tensor<4x6x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  return %o : tensor<4x6x12xf32>
}

// -----

// A constant boolean keep-mask (true: visible) of bottom-right causality,
// selected against -inf with tosa.select.
// CHECK-LABEL: func.func @tosa_causal_constant_keep_mask
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = #attn.causal<bottom_right>, scale = 1.000000e+00 : f32}
// CHECK-NOT:     tosa.select
// CHECK:         return
func.func @tosa_causal_constant_keep_mask(%q: tensor<3x4x16xf32>, %k: tensor<3x6x16xf32>, %v: tensor<3x6x12xf32>) -> tensor<3x4x12xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %ninf = "tosa.const"() <{values = dense<0xFF800000> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %keep = "tosa.const"() <{values = dense<[[[true, true, true, false, false, false], [true, true, true, true, false, false], [true, true, true, true, true, false], [true, true, true, true, true, true]]]> : tensor<1x4x6xi1>}> : () -> tensor<1x4x6xi1>
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<3x6x16xf32>) -> tensor<3x16x6xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<3x4x16xf32>, tensor<3x16x6xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<3x4x6xf32>
  %sm = tosa.select %keep, %s, %ninf : (tensor<1x4x6xi1>, tensor<3x4x6xf32>, tensor<1x1x1xf32>) -> tensor<3x4x6xf32>
  %m = tosa.reduce_max %sm {axis = 2 : i32} : (tensor<3x4x6xf32>) -> tensor<3x4x1xf32>
  %d = tosa.sub %sm, %m : (tensor<3x4x6xf32>, tensor<3x4x1xf32>) -> tensor<3x4x6xf32>
  %e = tosa.exp %d : (tensor<3x4x6xf32>) -> tensor<3x4x6xf32>
  %l = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<3x4x6xf32>) -> tensor<3x4x1xf32>
  %r = tosa.reciprocal %l : (tensor<3x4x1xf32>) -> tensor<3x4x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<3x4x6xf32>, tensor<3x4x1xf32>, tensor<1xi8>) -> tensor<3x4x6xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<3x4x6xf32>, tensor<3x6x12xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<3x4x12xf32>
  return %o : tensor<3x4x12xf32>
}

// -----

// onnx-mlir's ONNX-to-TOSA softmax (its
// test/mlir/conversion/onnx_to_tosa/Math/Softmax.mlir): exp, reduce_sum,
// reciprocal, mul, without the row max.
// CHECK-LABEL: func.func @tosa_onnx_softmax_without_max
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 2.500000e-01 : f32}
// CHECK-NOT:     tosa.exp
// CHECK:         return
func.func @tosa_onnx_softmax_without_max(%q: tensor<6x6x16xf32>, %k: tensor<6x16x10xf32>, %v: tensor<6x10x12xf32>) -> tensor<6x6x12xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c = "tosa.const"() <{values = dense<0.25> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %s = tosa.matmul %q, %k, %zp, %zp : (tensor<6x6x16xf32>, tensor<6x16x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x10xf32>
  %ss = tosa.mul %s, %c, %shift : (tensor<6x6x10xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  %e = tosa.exp %ss : (tensor<6x6x10xf32>) -> tensor<6x6x10xf32>
  %l = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %r = tosa.reciprocal %l : (tensor<6x6x1xf32>) -> tensor<6x6x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<6x6x10xf32>, tensor<6x6x1xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  // expected-remark @below {{attn-raise: fused; the softmax does not subtract the row max; attn.attention does, so rows whose exp overflowed now give finite results}}
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x6x10xf32>, tensor<6x10x12xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x12xf32>
  return %o : tensor<6x6x12xf32>
}

// -----

// The log-sum-exp softmax with math.log and math.exp applied to whole
// tensors and linalg.reduce (the arith/math-on-tensors style of Buddy's
// linalg path), the row statistics kept as [B, Sq] tensors and broadcast.
// CHECK-LABEL: func.func @math_log_sum_exp
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.000000e+00 : f32}
// CHECK-NOT:     math.log
// CHECK:         return
func.func @math_log_sum_exp(%q: tensor<4x6x8xf32>, %k: tensor<4x10x8xf32>, %v: tensor<4x10x12xf32>) -> tensor<4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xf32>, tensor<4x10x8xf32>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %er = tensor.empty() : tensor<4x6xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<4x6xf32>) -> tensor<4x6xf32>
  %max = linalg.reduce ins(%s : tensor<4x6x10xf32>) outs(%fm : tensor<4x6xf32>) dimensions = [2]
    (%x: f32, %acc: f32) {
      %r = arith.maximumf %x, %acc : f32
      linalg.yield %r : f32
    }
  %maxb = linalg.broadcast ins(%max : tensor<4x6xf32>) outs(%es : tensor<4x6x10xf32>) dimensions = [2]
  %d = arith.subf %s, %maxb : tensor<4x6x10xf32>
  %e = math.exp %d : tensor<4x6x10xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%er : tensor<4x6xf32>) -> tensor<4x6xf32>
  %sum = linalg.reduce ins(%e : tensor<4x6x10xf32>) outs(%fz : tensor<4x6xf32>) dimensions = [2]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  %log = math.log %sum : tensor<4x6xf32>
  %lse = arith.addf %max, %log : tensor<4x6xf32>
  %lseb = linalg.broadcast ins(%lse : tensor<4x6xf32>) outs(%es : tensor<4x6x10xf32>) dimensions = [2]
  %lsm = arith.subf %s, %lseb : tensor<4x6x10xf32>
  %p = math.exp %lsm : tensor<4x6x10xf32>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x10xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  return %o : tensor<4x6x12xf32>
}

// -----

#bid = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#brow = affine_map<(d0, d1, d2) -> (d0, d1)>
// The softmax written out in bf16 generics between f32-accumulating
// contractions, its max starting from the lowest finite bf16.
// CHECK-LABEL: func.func @bf16_written_softmax
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.000000e+00 : f32} : tensor<1x4x6x8xbf16>, tensor<1x4x10x8xbf16>, tensor<1x4x10x12xbf16> -> tensor<1x4x6x12xbf16>
// CHECK-NOT:     math.exp
// CHECK:         return
func.func @bf16_written_softmax(%q: tensor<4x6x8xbf16>, %k: tensor<4x10x8xbf16>, %v: tensor<4x10x12xbf16>) -> tensor<4x6x12xbf16> {
  %zero = arith.constant 0.0 : f32
  %zero16 = arith.constant 0.0 : bf16
  %lowest = arith.constant -3.38953139E+38 : bf16
  %es32 = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es32 : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xbf16>, tensor<4x10x8xbf16>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %es = tensor.empty() : tensor<4x6x10xbf16>
  %x = linalg.generic {indexing_maps = [#bid, #bid], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x6x10xbf16>
  %er = tensor.empty() : tensor<4x6xbf16>
  %fm = linalg.fill ins(%lowest : bf16) outs(%er : tensor<4x6xbf16>) -> tensor<4x6xbf16>
  %max = linalg.generic {indexing_maps = [#bid, #brow], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x6x10xbf16>) outs(%fm : tensor<4x6xbf16>) {
  ^bb0(%a: bf16, %acc: bf16):
    %r = arith.maximumf %a, %acc : bf16
    linalg.yield %r : bf16
  } -> tensor<4x6xbf16>
  %e = linalg.generic {indexing_maps = [#bid, #brow, #bid], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %max : tensor<4x6x10xbf16>, tensor<4x6xbf16>) outs(%es : tensor<4x6x10xbf16>) {
  ^bb0(%a: bf16, %m: bf16, %o: bf16):
    %d = arith.subf %a, %m : bf16
    %r = math.exp %d : bf16
    linalg.yield %r : bf16
  } -> tensor<4x6x10xbf16>
  %fz = linalg.fill ins(%zero16 : bf16) outs(%er : tensor<4x6xbf16>) -> tensor<4x6xbf16>
  %sum = linalg.generic {indexing_maps = [#bid, #brow], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e : tensor<4x6x10xbf16>) outs(%fz : tensor<4x6xbf16>) {
  ^bb0(%a: bf16, %acc: bf16):
    %r = arith.addf %a, %acc : bf16
    linalg.yield %r : bf16
  } -> tensor<4x6xbf16>
  %p = linalg.generic {indexing_maps = [#bid, #brow, #bid], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %sum : tensor<4x6x10xbf16>, tensor<4x6xbf16>) outs(%es : tensor<4x6x10xbf16>) {
  ^bb0(%a: bf16, %l: bf16, %o: bf16):
    %r = arith.divf %a, %l : bf16
    linalg.yield %r : bf16
  } -> tensor<4x6x10xbf16>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  // expected-remark @below {{attn-raise: fused; the softmax is computed in bf16; attn.attention computes it in f32}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x10xbf16>, tensor<4x10x12xbf16>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  %eh = tensor.empty() : tensor<4x6x12xbf16>
  %oh = linalg.generic {indexing_maps = [#bid, #bid], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%o : tensor<4x6x12xf32>) outs(%eh : tensor<4x6x12xbf16>) {
  ^bb0(%a: f32, %b: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x6x12xbf16>
  return %oh : tensor<4x6x12xbf16>
}

// -----

#amap = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#amap1 = affine_map<(d0, d1, d2) -> (d0, d1)>
// torch-mlir's lowering of aten.max.dim: the row max computed together with
// its argmax in one two-result generic (see torch-mlir's TorchToLinalg
// reductions); the argmax is unused.
// CHECK-LABEL: func.func @max_with_argmax
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.000000e+00 : f32}
// CHECK-NOT:     arith.maximumf
// CHECK:         return
func.func @max_with_argmax(%q: tensor<4x6x8xf32>, %k: tensor<4x10x8xf32>, %v: tensor<4x10x12xf32>) -> tensor<4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c0_i64 = arith.constant 0 : i64
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xf32>, tensor<4x10x8xf32>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %ei = tensor.empty() : tensor<4x6xi64>
  %fi = linalg.fill ins(%c0_i64 : i64) outs(%ei : tensor<4x6xi64>) -> tensor<4x6xi64>
  %er = tensor.empty() : tensor<4x6xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<4x6xf32>) -> tensor<4x6xf32>
  %mx:2 = linalg.generic {indexing_maps = [#amap, #amap1, #amap1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s : tensor<4x6x10xf32>) outs(%fm, %fi : tensor<4x6xf32>, tensor<4x6xi64>) {
  ^bb0(%in: f32, %out: f32, %out_2: i64):
    %13 = linalg.index 2 : index
    %14 = arith.index_cast %13 : index to i64
    %15 = arith.maximumf %in, %out : f32
    %16 = arith.cmpf ogt, %in, %out : f32
    %17 = arith.select %16, %14, %out_2 : i64
    linalg.yield %15, %17 : f32, i64
  } -> (tensor<4x6xf32>, tensor<4x6xi64>)
  %e = linalg.generic {indexing_maps = [#amap, #amap1, #amap], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mx#0 : tensor<4x6x10xf32>, tensor<4x6xf32>) outs(%es : tensor<4x6x10xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<4x6x10xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%er : tensor<4x6xf32>) -> tensor<4x6xf32>
  %sum = linalg.generic {indexing_maps = [#amap, #amap1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%e : tensor<4x6x10xf32>) outs(%fz : tensor<4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = arith.addf %in, %out : f32
    linalg.yield %x : f32
  } -> tensor<4x6xf32>
  %p = linalg.generic {indexing_maps = [#amap, #amap1, #amap], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e, %sum : tensor<4x6x10xf32>, tensor<4x6xf32>) outs(%es : tensor<4x6x10xf32>) {
  ^bb0(%in: f32, %l: f32, %out: f32):
    %x = arith.divf %in, %l : f32
    linalg.yield %x : f32
  } -> tensor<4x6x10xf32>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x10xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  return %o : tensor<4x6x12xf32>
}

// -----

// TensorFlow's TOSA legalisation style: the scale as tosa.rsqrt of the head
// dim, V passed through tosa.identity.
// CHECK-LABEL: func.func @tosa_rsqrt_scale_identity
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 2.500000e-01 : f32}
// CHECK-NOT:     tosa.identity
// CHECK:         return
func.func @tosa_rsqrt_scale_identity(%q: tensor<6x6x16xf32>, %k: tensor<6x16x10xf32>, %v: tensor<6x10x12xf32>) -> tensor<6x6x12xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %d = "tosa.const"() <{values = dense<16.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %c = tosa.rsqrt %d : (tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %vi = tosa.identity %v : (tensor<6x10x12xf32>) -> tensor<6x10x12xf32>
  %s = tosa.matmul %q, %k, %zp, %zp : (tensor<6x6x16xf32>, tensor<6x16x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x10xf32>
  %ss = tosa.mul %s, %c, %shift : (tensor<6x6x10xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  %m = tosa.reduce_max %ss {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %sub = tosa.sub %ss, %m : (tensor<6x6x10xf32>, tensor<6x6x1xf32>) -> tensor<6x6x10xf32>
  %e = tosa.exp %sub : (tensor<6x6x10xf32>) -> tensor<6x6x10xf32>
  %l = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %r = tosa.reciprocal %l : (tensor<6x6x1xf32>) -> tensor<6x6x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<6x6x10xf32>, tensor<6x6x1xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  %o = tosa.matmul %p, %vi, %zp, %zp : (tensor<6x6x10xf32>, tensor<6x10x12xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x12xf32>
  return %o : tensor<6x6x12xf32>
}

// -----

// Left alone: a folded scale below attn's range (the lowerings divide the
// mask by the scale).
// CHECK-LABEL: func.func @scale_out_of_range
// CHECK-NOT:     attn.attention
// CHECK:         return
func.func @scale_out_of_range(%q: tensor<6x6x16xf32>, %k: tensor<6x16x10xf32>, %v: tensor<6x10x12xf32>) -> tensor<6x6x12xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c = "tosa.const"() <{values = dense<1.0e-40> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %s = tosa.matmul %q, %k, %zp, %zp : (tensor<6x6x16xf32>, tensor<6x16x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x10xf32>
  %ss = tosa.mul %s, %c, %shift : (tensor<6x6x10xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  %m = tosa.reduce_max %ss {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %d = tosa.sub %ss, %m : (tensor<6x6x10xf32>, tensor<6x6x1xf32>) -> tensor<6x6x10xf32>
  %e = tosa.exp %d : (tensor<6x6x10xf32>) -> tensor<6x6x10xf32>
  %l = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %r = tosa.reciprocal %l : (tensor<6x6x1xf32>) -> tensor<6x6x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<6x6x10xf32>, tensor<6x6x1xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  // expected-remark @below {{attn-raise: not fused: the folded scale 9.999946e-41 lies outside attn's range [2^-64, 2^64]}}
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x6x10xf32>, tensor<6x10x12xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x12xf32>
  return %o : tensor<6x6x12xf32>
}
