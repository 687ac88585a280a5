// RUN: attn-opt %s -split-input-file --attn-raise=report-unfused -verify-diagnostics | FileCheck %s

// Numerical equivalence (see raise.mlir for the tolerances).
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=tosa_chain | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=tosa_reshape_f16 | FileCheck %s --check-prefix=NUM
// NUM: PASS

// TOSA as producers emit it: transpose, matmul, mul by the scale, reduce_max,
// sub, exp, reduce_sum, reciprocal, mul, matmul; the zero points and shift
// constants go with the chain.
// CHECK-LABEL: func.func @tosa_chain
// CHECK-SAME:    (%[[Q:.+]]: tensor<6x6x16xf32>, %[[K:.+]]: tensor<6x10x16xf32>, %[[V:.+]]: tensor<6x10x12xf32>)
// CHECK-DAG:     %[[Q4:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0, 1], [2], [3]] output_shape [1, 6, 6, 16]
// CHECK-DAG:     %[[K4:.+]] = tensor.expand_shape %[[K]] {{\[}}[0, 1], [2], [3]] output_shape [1, 6, 10, 16]
// CHECK-DAG:     %[[V4:.+]] = tensor.expand_shape %[[V]] {{\[}}[0, 1], [2], [3]] output_shape [1, 6, 10, 12]
// CHECK:         %[[O:.+]] = attn.attention %[[Q4]], %[[K4]], %[[V4]] {scale = 2.500000e-01 : f32}
// CHECK:         %[[R:.+]] = tensor.collapse_shape %[[O]] {{\[}}[0, 1], [2], [3]] : tensor<1x6x6x12xf32> into tensor<6x6x12xf32>
// CHECK-NOT:     tosa
// CHECK:         return %[[R]]
func.func @tosa_chain(%q: tensor<6x6x16xf32>, %k: tensor<6x10x16xf32>, %v: tensor<6x10x12xf32>) -> tensor<6x6x12xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c = "tosa.const"() <{values = dense<0.25> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<6x10x16xf32>) -> tensor<6x16x10xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<6x6x16xf32>, tensor<6x16x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x10xf32>
  %ss = tosa.mul %s, %c, %shift : (tensor<6x6x10xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  %m = tosa.reduce_max %ss {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %d = tosa.sub %ss, %m : (tensor<6x6x10xf32>, tensor<6x6x1xf32>) -> tensor<6x6x10xf32>
  %e = tosa.exp %d : (tensor<6x6x10xf32>) -> tensor<6x6x10xf32>
  %l = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %r = tosa.reciprocal %l : (tensor<6x6x1xf32>) -> tensor<6x6x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<6x6x10xf32>, tensor<6x6x1xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x6x10xf32>, tensor<6x10x12xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x12xf32>
  return %o : tensor<6x6x12xf32>
}

// -----

// [B, H, S, D] f16 operands cast to f32 and reshaped to rank 3 for
// tosa.matmul; the result reshaped back and cast to f16: the op works on the
// f16 operands as they are.
// CHECK-LABEL: func.func @tosa_reshape_f16
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x3x6x16xf16>, %[[K:.+]]: tensor<2x3x10x16xf16>, %[[V:.+]]: tensor<2x3x10x12xf16>)
// CHECK-NEXT:    %[[O:.+]] = attn.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f32}
// CHECK-SAME:      : tensor<2x3x6x16xf16>, tensor<2x3x10x16xf16>, tensor<2x3x10x12xf16> -> tensor<2x3x6x12xf16>
// CHECK-NEXT:    return %[[O]]
func.func @tosa_reshape_f16(%q: tensor<2x3x6x16xf16>, %k: tensor<2x3x10x16xf16>, %v: tensor<2x3x10x12xf16>) -> tensor<2x3x6x12xf16> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c = "tosa.const"() <{values = dense<0.25> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %s3 = tosa.const_shape {values = dense<[6, 6, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %sk3 = tosa.const_shape {values = dense<[6, 10, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %sv3 = tosa.const_shape {values = dense<[6, 10, 12]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %so4 = tosa.const_shape {values = dense<[2, 3, 6, 12]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %q32 = tosa.cast %q : (tensor<2x3x6x16xf16>) -> tensor<2x3x6x16xf32>
  %k32 = tosa.cast %k : (tensor<2x3x10x16xf16>) -> tensor<2x3x10x16xf32>
  %v32 = tosa.cast %v : (tensor<2x3x10x12xf16>) -> tensor<2x3x10x12xf32>
  %q3 = tosa.reshape %q32, %s3 : (tensor<2x3x6x16xf32>, !tosa.shape<3>) -> tensor<6x6x16xf32>
  %k3 = tosa.reshape %k32, %sk3 : (tensor<2x3x10x16xf32>, !tosa.shape<3>) -> tensor<6x10x16xf32>
  %v3 = tosa.reshape %v32, %sv3 : (tensor<2x3x10x12xf32>, !tosa.shape<3>) -> tensor<6x10x12xf32>
  %kt = tosa.transpose %k3 {perms = array<i32: 0, 2, 1>} : (tensor<6x10x16xf32>) -> tensor<6x16x10xf32>
  %s = tosa.matmul %q3, %kt, %zp, %zp : (tensor<6x6x16xf32>, tensor<6x16x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x10xf32>
  %ss = tosa.mul %s, %c, %shift : (tensor<6x6x10xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  %m = tosa.reduce_max %ss {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %d = tosa.sub %ss, %m : (tensor<6x6x10xf32>, tensor<6x6x1xf32>) -> tensor<6x6x10xf32>
  %e = tosa.exp %d : (tensor<6x6x10xf32>) -> tensor<6x6x10xf32>
  %l = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<6x6x10xf32>) -> tensor<6x6x1xf32>
  %r = tosa.reciprocal %l : (tensor<6x6x1xf32>) -> tensor<6x6x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<6x6x10xf32>, tensor<6x6x1xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  %o = tosa.matmul %p, %v3, %zp, %zp : (tensor<6x6x10xf32>, tensor<6x10x12xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x12xf32>
  %o4 = tosa.reshape %o, %so4 : (tensor<6x6x12xf32>, !tosa.shape<4>) -> tensor<2x3x6x12xf32>
  %oh = tosa.cast %o4 : (tensor<2x3x6x12xf32>) -> tensor<2x3x6x12xf16>
  return %oh : tensor<2x3x6x12xf16>
}

// -----

// Left alone: the max and the sum reduce over the queries (axis 1).
// CHECK-LABEL: func.func @tosa_softmax_over_query_axis
// CHECK:         tosa.matmul
// CHECK:         tosa.reduce_max %{{.+}} {axis = 1 : i32}
// CHECK:         tosa.matmul
// CHECK-NOT:     attn.attention
func.func @tosa_softmax_over_query_axis(%q: tensor<6x6x16xf32>, %k: tensor<6x10x16xf32>, %v: tensor<6x10x12xf32>) -> tensor<6x6x12xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c = "tosa.const"() <{values = dense<0.25> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<6x10x16xf32>) -> tensor<6x16x10xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<6x6x16xf32>, tensor<6x16x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x10xf32>
  %ss = tosa.mul %s, %c, %shift : (tensor<6x6x10xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  %m = tosa.reduce_max %ss {axis = 1 : i32} : (tensor<6x6x10xf32>) -> tensor<6x1x10xf32>
  %d = tosa.sub %ss, %m : (tensor<6x6x10xf32>, tensor<6x1x10xf32>) -> tensor<6x6x10xf32>
  %e = tosa.exp %d : (tensor<6x6x10xf32>) -> tensor<6x6x10xf32>
  %l = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<6x6x10xf32>) -> tensor<6x1x10xf32>
  %r = tosa.reciprocal %l : (tensor<6x1x10xf32>) -> tensor<6x1x10xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<6x6x10xf32>, tensor<6x1x10xf32>, tensor<1xi8>) -> tensor<6x6x10xf32>
  // expected-remark @below {{attn-raise: not fused: the softmax reduces over a dimension other than the key axis the second contraction sums over}}
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x6x10xf32>, tensor<6x10x12xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x6x12xf32>
  return %o : tensor<6x6x12xf32>
}
