// RUN: attn-opt %s -split-input-file --attn-raise=report-unfused -verify-diagnostics | FileCheck %s

// Numerical equivalence: attn-cpu-runner runs each fused function as written
// and after attn-raise, both through attn-to-llvm, on the same random inputs,
// within the tolerance of the result type (f32: 1e-5 * max(1, max|ref|) +
// 1e-5 |ref|; f16 / bf16: 4 ulp of the type, i.e. 3.9e-3 and 3.1e-2).
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=matmul_2d | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=batch_matmul_softmax | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=generic_bhsd | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=generic3d_transposing_generic | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=bshd_exp2_scale_k | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=f16_named_elementwise | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=bf16_named_f32_result --rtol=0.03125 --atol=0.03125 | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=additive_mask | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=mask_before_scale | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=masked_value_not_inf | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=causal_index_bottom_right | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=causal_iota_mask_top_left | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=bool_mask_keep | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=bool_mask_masked_fill | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=torch_reshapes | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=mqa_shared_kv | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=rank3_chain_4d_output | FileCheck %s --check-prefix=NUM
// RUN: attn-cpu-runner %s --compare-pass=attn-raise --entry=transposed_scores | FileCheck %s --check-prefix=NUM
// NUM: PASS

// linalg.matmul with K^T folded into its indexing maps; the softmax written out
// with generics: max from -inf, implicit broadcast, exp, sum from 0, divf.
// Rank 2: the op gets unit batch and head dims.
// CHECK-LABEL: func.func @matmul_2d
// CHECK-SAME:    (%[[Q:.+]]: tensor<6x8xf32>, %[[K:.+]]: tensor<10x8xf32>, %[[V:.+]]: tensor<10x12xf32>)
// CHECK-DAG:     %[[Q4:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 6, 8]
// CHECK-DAG:     %[[K4:.+]] = tensor.expand_shape %[[K]] {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 10, 8]
// CHECK-DAG:     %[[V4:.+]] = tensor.expand_shape %[[V]] {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 10, 12]
// CHECK:         %[[O:.+]] = attn.attention %[[Q4]], %[[K4]], %[[V4]] {scale = 1.000000e+00 : f32}
// CHECK-SAME:      -> tensor<1x1x6x12xf32>
// CHECK:         %[[R:.+]] = tensor.collapse_shape %[[O]] {{\[}}[0, 1, 2], [3]] : tensor<1x1x6x12xf32> into tensor<6x12xf32>
// CHECK-NOT:     linalg
// CHECK:         return %[[R]]
func.func @matmul_2d(%q: tensor<6x8xf32>, %k: tensor<10x8xf32>, %v: tensor<10x12xf32>) -> tensor<6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %es = tensor.empty() : tensor<6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<6x10xf32>) -> tensor<6x10xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%q, %k : tensor<6x8xf32>, tensor<10x8xf32>) outs(%fs : tensor<6x10xf32>) -> tensor<6x10xf32>
  %er = tensor.empty() : tensor<6xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<6xf32>) -> tensor<6xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<6x10xf32>) outs(%fm : tensor<6xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<6xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %m : tensor<6x10xf32>, tensor<6xf32>) outs(%es : tensor<6x10xf32>) {
  ^bb0(%x: f32, %mx: f32, %o: f32):
    %d = arith.subf %x, %mx : f32
    %ex = math.exp %d : f32
    linalg.yield %ex : f32
  } -> tensor<6x10xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%er : tensor<6xf32>) -> tensor<6xf32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<6x10xf32>) outs(%fz : tensor<6xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<6xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%e, %l : tensor<6x10xf32>, tensor<6xf32>) outs(%es : tensor<6x10xf32>) {
  ^bb0(%x: f32, %sum: f32, %o: f32):
    %r = arith.divf %x, %sum : f32
    linalg.yield %r : f32
  } -> tensor<6x10xf32>
  %eo = tensor.empty() : tensor<6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<6x12xf32>) -> tensor<6x12xf32>
  %o = linalg.matmul ins(%p, %v : tensor<6x10xf32>, tensor<10x12xf32>) outs(%fo : tensor<6x12xf32>) -> tensor<6x12xf32>
  return %o : tensor<6x12xf32>
}

// -----

// linalg.batch_matmul on [B*H, S, D] with K^T from linalg.transpose, the
// scores scaled in a generic, the named linalg.softmax.
// CHECK-LABEL: func.func @batch_matmul_softmax
// CHECK-SAME:    (%[[Q:.+]]: tensor<4x6x8xf32>, %[[K:.+]]: tensor<4x10x8xf32>, %[[V:.+]]: tensor<4x10x12xf32>)
// CHECK-DAG:     %[[Q4:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0, 1], [2], [3]] output_shape [1, 4, 6, 8]
// CHECK-DAG:     %[[K4:.+]] = tensor.expand_shape %[[K]] {{\[}}[0, 1], [2], [3]] output_shape [1, 4, 10, 8]
// CHECK-DAG:     %[[V4:.+]] = tensor.expand_shape %[[V]] {{\[}}[0, 1], [2], [3]] output_shape [1, 4, 10, 12]
// CHECK:         %[[O:.+]] = attn.attention %[[Q4]], %[[K4]], %[[V4]] {scale = 0.353553385 : f32}
// CHECK:         %[[R:.+]] = tensor.collapse_shape %[[O]] {{\[}}[0, 1], [2], [3]] : tensor<1x4x6x12xf32> into tensor<4x6x12xf32>
// CHECK-NOT:     linalg
// CHECK:         return %[[R]]
func.func @batch_matmul_softmax(%q: tensor<4x6x8xf32>, %k: tensor<4x10x8xf32>, %v: tensor<4x10x12xf32>) -> tensor<4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.353553385 : f32
  %ekt = tensor.empty() : tensor<4x8x10xf32>
  %kt = linalg.transpose ins(%k : tensor<4x10x8xf32>) outs(%ekt : tensor<4x8x10xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x6x8xf32>, tensor<4x8x10xf32>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.mulf %x, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x6x10xf32>
  %p = linalg.softmax dimension(2) ins(%ss : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x10xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  return %o : tensor<4x6x12xf32>
}

// -----

// Rank-4 contraction generics on [B, H, S, D] with K^T folded into the maps;
// maxnumf from the lowest finite value, sum from -0.0, reciprocal (divf 1, x)
// then mulf, the scores divided by sqrt(D) = 4.
// CHECK-LABEL: func.func @generic_bhsd
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x3x6x16xf32>, %[[K:.+]]: tensor<2x3x10x16xf32>, %[[V:.+]]: tensor<2x3x10x12xf32>)
// CHECK-NEXT:    %[[O:.+]] = attn.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f32}
// CHECK-SAME:      : tensor<2x3x6x16xf32>, tensor<2x3x10x16xf32>, tensor<2x3x10x12xf32> -> tensor<2x3x6x12xf32>
// CHECK-NEXT:    return %[[O]]
func.func @generic_bhsd(%q: tensor<2x3x6x16xf32>, %k: tensor<2x3x10x16xf32>, %v: tensor<2x3x10x12xf32>) -> tensor<2x3x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %nzero = arith.constant -0.0 : f32
  %lowest = arith.constant -3.40282347E+38 : f32
  %one = arith.constant 1.0 : f32
  %sqrtd = arith.constant 4.0 : f32
  %es = tensor.empty() : tensor<2x3x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x3x6x10xf32>) -> tensor<2x3x6x10xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x3x6x16xf32>, tensor<2x3x10x16xf32>) outs(%fs : tensor<2x3x6x10xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %ab = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %ab : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x10xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x3x6x10xf32>) outs(%es : tensor<2x3x6x10xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.divf %x, %sqrtd : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x10xf32>
  %er = tensor.empty() : tensor<2x3x6xf32>
  %fm = linalg.fill ins(%lowest : f32) outs(%er : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ss : tensor<2x3x6x10xf32>) outs(%fm : tensor<2x3x6xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maxnumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6xf32>
  %fz = linalg.fill ins(%nzero : f32) outs(%er : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  %l = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ss, %m : tensor<2x3x6x10xf32>, tensor<2x3x6xf32>) outs(%fz : tensor<2x3x6xf32>) {
  ^bb0(%x: f32, %mx: f32, %acc: f32):
    %d = arith.subf %x, %mx : f32
    %e = math.exp %d : f32
    %r = arith.addf %acc, %e : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6xf32>
  %rl = linalg.generic {indexing_maps = [affine_map<(b, h, i) -> (b, h, i)>, affine_map<(b, h, i) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%l : tensor<2x3x6xf32>) outs(%er : tensor<2x3x6xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.divf %one, %x : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ss, %m, %rl : tensor<2x3x6x10xf32>, tensor<2x3x6xf32>, tensor<2x3x6xf32>) outs(%es : tensor<2x3x6x10xf32>) {
  ^bb0(%x: f32, %mx: f32, %rcp: f32, %o: f32):
    %d = arith.subf %x, %mx : f32
    %e = math.exp %d : f32
    %r = arith.mulf %e, %rcp : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x10xf32>
  %eo = tensor.empty() : tensor<2x3x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x3x6x12xf32>) -> tensor<2x3x6x12xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x3x6x10xf32>, tensor<2x3x10x12xf32>) outs(%fo : tensor<2x3x6x12xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %ab = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %ab : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x12xf32>
  return %o : tensor<2x3x6x12xf32>
}

// -----

// Rank-3 contraction generics; K^T from a transposing linalg.generic; the
// scores divided by sqrt(D) with arith.divf on tensors.
// CHECK-LABEL: func.func @generic3d_transposing_generic
// CHECK-SAME:    (%[[Q:.+]]: tensor<4x6x8xf32>, %[[K:.+]]: tensor<4x10x8xf32>, %[[V:.+]]: tensor<4x10x12xf32>)
// CHECK-DAG:     %[[Q4:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0, 1], [2], [3]] output_shape [1, 4, 6, 8]
// CHECK-DAG:     %[[K4:.+]] = tensor.expand_shape %[[K]] {{\[}}[0, 1], [2], [3]] output_shape [1, 4, 10, 8]
// CHECK-DAG:     %[[V4:.+]] = tensor.expand_shape %[[V]] {{\[}}[0, 1], [2], [3]] output_shape [1, 4, 10, 12]
// CHECK:         %[[O:.+]] = attn.attention %[[Q4]], %[[K4]], %[[V4]] {scale = 0.353553385 : f32}
// CHECK:         %[[R:.+]] = tensor.collapse_shape %[[O]]
// CHECK-NOT:     linalg
// CHECK:         return %[[R]]
func.func @generic3d_transposing_generic(%q: tensor<4x6x8xf32>, %k: tensor<4x10x8xf32>, %v: tensor<4x10x12xf32>) -> tensor<4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %sqrtd = arith.constant dense<2.82842708> : tensor<4x6x10xf32>
  %ekt = tensor.empty() : tensor<4x8x10xf32>
  %kt = linalg.generic {indexing_maps = [affine_map<(b, d, j) -> (b, j, d)>, affine_map<(b, d, j) -> (b, d, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k : tensor<4x10x8xf32>) outs(%ekt : tensor<4x8x10xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x8x10xf32>
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, d, j)>, affine_map<(b, i, j, d) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kt : tensor<4x6x8xf32>, tensor<4x8x10xf32>) outs(%fs : tensor<4x6x10xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %ab = arith.mulf %a, %b : f32
    %r = arith.addf %ab, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4x6x10xf32>
  %x = arith.divf %s, %sqrtd : tensor<4x6x10xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, i, e, j) -> (b, i, j)>, affine_map<(b, i, e, j) -> (b, j, e)>, affine_map<(b, i, e, j) -> (b, i, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<4x6x10xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x6x12xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %ab = arith.mulf %b, %a : f32
    %r = arith.addf %acc, %ab : f32
    linalg.yield %r : f32
  } -> tensor<4x6x12xf32>
  return %o : tensor<4x6x12xf32>
}

// -----

// Q, K, V and O stored [B, S, H, D]: the op takes them as they are, in the
// bshd layout. K is scaled before the contraction; the softmax uses exp2 with
// log2(e) folded into its argument.
// CHECK-LABEL: func.func @bshd_exp2_scale_k
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x6x3x16xf32>, %[[K:.+]]: tensor<2x10x3x16xf32>, %[[V:.+]]: tensor<2x10x3x12xf32>)
// CHECK-NEXT:    %[[O:.+]] = attn.attention %[[Q]], %[[K]], %[[V]] {layout = #attn.layout<bshd>, scale = 2.500000e-01 : f32}
// CHECK-SAME:      -> tensor<2x6x3x12xf32>
// CHECK-NEXT:    return %[[O]]
func.func @bshd_exp2_scale_k(%q: tensor<2x6x3x16xf32>, %k: tensor<2x10x3x16xf32>, %v: tensor<2x10x3x12xf32>) -> tensor<2x6x3x12xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %log2e = arith.constant 1.44269502 : f32
  %ek = tensor.empty() : tensor<2x10x3x16xf32>
  %ks = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<2x10x3x16xf32>) outs(%ek : tensor<2x10x3x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.mulf %c, %x : f32
    linalg.yield %r : f32
  } -> tensor<2x10x3x16xf32>
  %es = tensor.empty() : tensor<2x3x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x3x6x10xf32>) -> tensor<2x3x6x10xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, i, h, d)>, affine_map<(b, h, i, j, d) -> (b, j, h, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %ks : tensor<2x6x3x16xf32>, tensor<2x10x3x16xf32>) outs(%fs : tensor<2x3x6x10xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %ab = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %ab : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x10xf32>
  %er = tensor.empty() : tensor<2x3x6xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s : tensor<2x3x6x10xf32>) outs(%fm : tensor<2x3x6xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %m : tensor<2x3x6x10xf32>, tensor<2x3x6xf32>) outs(%es : tensor<2x3x6x10xf32>) {
  ^bb0(%x: f32, %mx: f32, %o: f32):
    %d = arith.subf %x, %mx : f32
    %t = arith.mulf %d, %log2e : f32
    %r = math.exp2 %t : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x10xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%er : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  %l = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e : tensor<2x3x6x10xf32>) outs(%fz : tensor<2x3x6xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6xf32>
  %pr = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%e, %l : tensor<2x3x6x10xf32>, tensor<2x3x6xf32>) outs(%es : tensor<2x3x6x10xf32>) {
  ^bb0(%x: f32, %sum: f32, %o: f32):
    %r = arith.divf %x, %sum : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x10xf32>
  %eo = tensor.empty() : tensor<2x6x3x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x6x3x12xf32>) -> tensor<2x6x3x12xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, j, h, e)>, affine_map<(b, h, i, e, j) -> (b, i, h, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%pr, %v : tensor<2x3x6x10xf32>, tensor<2x10x3x12xf32>) outs(%fo : tensor<2x6x3x12xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %ab = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %ab : f32
    linalg.yield %r : f32
  } -> tensor<2x6x3x12xf32>
  return %o : tensor<2x6x3x12xf32>
}

// -----

// f16 operands extended by generics, an f32 chain, the output truncated back
// to f16: the op works on the f16 operands. Q is scaled after its extension;
// the softmax is spelt with linalg.reduce, linalg.broadcast, linalg.sub,
// linalg.exp and linalg.div; K^T is in batch_matmul's indexing maps.
// CHECK-LABEL: func.func @f16_named_elementwise
// CHECK-SAME:    (%[[Q:.+]]: tensor<4x6x8xf16>, %[[K:.+]]: tensor<4x10x8xf16>, %[[V:.+]]: tensor<4x10x12xf16>)
// CHECK-DAG:     %[[Q4:.+]] = tensor.expand_shape %[[Q]] {{.*}} into tensor<1x4x6x8xf16>
// CHECK-DAG:     %[[K4:.+]] = tensor.expand_shape %[[K]] {{.*}} into tensor<1x4x10x8xf16>
// CHECK-DAG:     %[[V4:.+]] = tensor.expand_shape %[[V]] {{.*}} into tensor<1x4x10x12xf16>
// CHECK:         %[[O:.+]] = attn.attention %[[Q4]], %[[K4]], %[[V4]] {scale = 0.353553385 : f32}
// CHECK-SAME:      -> tensor<1x4x6x12xf16>
// CHECK:         %[[R:.+]] = tensor.collapse_shape %[[O]] {{.*}} into tensor<4x6x12xf16>
// CHECK-NOT:     linalg
// CHECK:         return %[[R]]
func.func @f16_named_elementwise(%q: tensor<4x6x8xf16>, %k: tensor<4x10x8xf16>, %v: tensor<4x10x12xf16>) -> tensor<4x6x12xf16> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.353553385 : f32
  %eq = tensor.empty() : tensor<4x6x8xf32>
  %q32 = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q : tensor<4x6x8xf16>) outs(%eq : tensor<4x6x8xf32>) {
  ^bb0(%x: f16, %o: f32):
    %e = arith.extf %x : f16 to f32
    %r = arith.mulf %e, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x6x8xf32>
  %ek = tensor.empty() : tensor<4x10x8xf32>
  %k32 = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k : tensor<4x10x8xf16>) outs(%ek : tensor<4x10x8xf32>) {
  ^bb0(%x: f16, %o: f32):
    %e = arith.extf %x : f16 to f32
    linalg.yield %e : f32
  } -> tensor<4x10x8xf32>
  %ev = tensor.empty() : tensor<4x10x12xf32>
  %v32 = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v : tensor<4x10x12xf16>) outs(%ev : tensor<4x10x12xf32>) {
  ^bb0(%x: f16, %o: f32):
    %e = arith.extf %x : f16 to f32
    linalg.yield %e : f32
  } -> tensor<4x10x12xf32>
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q32, %k32 : tensor<4x6x8xf32>, tensor<4x10x8xf32>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
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
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  %o = linalg.batch_matmul ins(%p, %v32 : tensor<4x6x10xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  %eh = tensor.empty() : tensor<4x6x12xf16>
  %oh = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%o : tensor<4x6x12xf32>) outs(%eh : tensor<4x6x12xf16>) {
  ^bb0(%x: f32, %out: f16):
    %t = arith.truncf %x : f32 to f16
    linalg.yield %t : f16
  } -> tensor<4x6x12xf16>
  return %oh : tensor<4x6x12xf16>
}

// -----

// bf16 operands extended inside the named contractions (bf16 x bf16 -> f32),
// the probabilities rounded to bf16 for the second one, and an f32 result: the
// op works in f32 on extended operands so that O is not rounded to bf16. K is
// stored [B, D, Sk] and needs a transpose. Numerically within bf16's
// tolerance: the chain rounds P to bf16, the op does not.
// CHECK-LABEL: func.func @bf16_named_f32_result
// CHECK-SAME:    (%[[Q:.+]]: tensor<4x6x8xbf16>, %[[K:.+]]: tensor<4x8x10xbf16>, %[[V:.+]]: tensor<4x10x12xbf16>)
// CHECK:         %[[Q32:.+]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<4x6x8xbf16>)
// CHECK:           arith.extf
// CHECK:         %[[Q4:.+]] = tensor.expand_shape %[[Q32]]
// CHECK:         %[[K32:.+]] = linalg.generic {{.*}} ins(%[[K]] : tensor<4x8x10xbf16>)
// CHECK:         %[[KT:.+]] = linalg.transpose ins(%[[K32]] : tensor<4x8x10xf32>) {{.*}} permutation = [0, 2, 1]
// CHECK:         %[[K4:.+]] = tensor.expand_shape %[[KT]]
// CHECK:         %[[V32:.+]] = linalg.generic {{.*}} ins(%[[V]] : tensor<4x10x12xbf16>)
// CHECK:         %[[V4:.+]] = tensor.expand_shape %[[V32]]
// CHECK:         %[[O:.+]] = attn.attention %[[Q4]], %[[K4]], %[[V4]] {scale = 1.000000e+00 : f32}
// CHECK-SAME:      : tensor<1x4x6x8xf32>, tensor<1x4x10x8xf32>, tensor<1x4x10x12xf32> -> tensor<1x4x6x12xf32>
// CHECK:         %[[R:.+]] = tensor.collapse_shape %[[O]]
// CHECK-NOT:     linalg.softmax
// CHECK:         return %[[R]]
func.func @bf16_named_f32_result(%q: tensor<4x6x8xbf16>, %k: tensor<4x8x10xbf16>, %v: tensor<4x10x12xbf16>) -> tensor<4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul ins(%q, %k : tensor<4x6x8xbf16>, tensor<4x8x10xbf16>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %eb = tensor.empty() : tensor<4x6x10xbf16>
  %pb = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p : tensor<4x6x10xf32>) outs(%eb : tensor<4x6x10xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x6x10xbf16>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  %o = linalg.batch_matmul ins(%pb, %v : tensor<4x6x10xbf16>, tensor<4x10x12xbf16>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  return %o : tensor<4x6x12xf32>
}

// -----

// An f16 additive mask [B, 1, Sq, Sk], extended and added to the scaled
// scores, becomes the op's mask operand as it is.
// CHECK-LABEL: func.func @additive_mask
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x3x6x16xf32>, %[[K:.+]]: tensor<2x3x10x16xf32>, %[[V:.+]]: tensor<2x3x10x12xf32>, %[[M:.+]]: tensor<2x1x6x10xf16>)
// CHECK-NEXT:    %[[O:.+]] = attn.attention %[[Q]], %[[K]], %[[V]] mask(%[[M]] : tensor<2x1x6x10xf16>) {scale = 2.500000e-01 : f32}
// CHECK-NEXT:    return %[[O]]
func.func @additive_mask(%q: tensor<2x3x6x16xf32>, %k: tensor<2x3x10x16xf32>, %v: tensor<2x3x10x12xf32>, %mask: tensor<2x1x6x10xf16>) -> tensor<2x3x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x3x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x3x6x10xf32>) -> tensor<2x3x6x10xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x3x6x16xf32>, tensor<2x3x10x16xf32>) outs(%fs : tensor<2x3x6x10xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %ab = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %ab : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x10xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, 0, i, j)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x3x6x10xf32>, tensor<2x1x6x10xf16>) outs(%es : tensor<2x3x6x10xf32>) {
  ^bb0(%a: f32, %mk: f16, %o: f32):
    %sc = arith.mulf %a, %c : f32
    %m32 = arith.extf %mk : f16 to f32
    %r = arith.addf %sc, %m32 : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x10xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<2x3x6x10xf32>) outs(%es : tensor<2x3x6x10xf32>) -> tensor<2x3x6x10xf32>
  %eo = tensor.empty() : tensor<2x3x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x3x6x12xf32>) -> tensor<2x3x6x12xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x3x6x10xf32>, tensor<2x3x10x12xf32>) outs(%fo : tensor<2x3x6x12xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %ab = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %ab : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x12xf32>
  return %o : tensor<2x3x6x12xf32>
}

// -----

// A causal mask computed in the scores' generic from linalg.index (key j
// hidden when j > i + Sk - Sq, an unsigned compare) becomes bottom-right
// causality; nothing Sq x Sk is materialised.
// CHECK-LABEL: func.func @causal_index_bottom_right
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x3x6x16xf32>, %[[K:.+]]: tensor<2x3x10x16xf32>, %[[V:.+]]: tensor<2x3x10x12xf32>)
// CHECK-NEXT:    %[[O:.+]] = attn.attention %[[Q]], %[[K]], %[[V]] {causal = #attn.causal<bottom_right>, scale = 2.500000e-01 : f32}
// CHECK-NEXT:    return %[[O]]
func.func @causal_index_bottom_right(%q: tensor<2x3x6x16xf32>, %k: tensor<2x3x10x16xf32>, %v: tensor<2x3x10x12xf32>) -> tensor<2x3x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %off = arith.constant 4 : index
  %es = tensor.empty() : tensor<2x3x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x3x6x10xf32>) -> tensor<2x3x6x10xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x3x6x16xf32>, tensor<2x3x10x16xf32>) outs(%fs : tensor<2x3x6x10xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %ab = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %ab : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x10xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x3x6x10xf32>) outs(%es : tensor<2x3x6x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %diag = arith.addi %i, %off : index
    %hide = arith.cmpi ugt, %j, %diag : index
    %sc = arith.mulf %a, %c : f32
    %r = arith.select %hide, %ninf, %sc : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x10xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<2x3x6x10xf32>) outs(%es : tensor<2x3x6x10xf32>) -> tensor<2x3x6x10xf32>
  %eo = tensor.empty() : tensor<2x3x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x3x6x12xf32>) -> tensor<2x3x6x12xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x3x6x10xf32>, tensor<2x3x10x12xf32>) outs(%fo : tensor<2x3x6x12xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %ab = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %ab : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x12xf32>
  return %o : tensor<2x3x6x12xf32>
}

// -----

// The causal mask as a separate [Sq, Sk] tensor of 0 / -inf computed from
// indices (iota, index_cast, compare, select), added to the scores: top-left
// causality, the mask tensor is dropped.
// CHECK-LABEL: func.func @causal_iota_mask_top_left
// CHECK:         %[[O:.+]] = attn.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = #attn.causal<top_left>, scale = 1.000000e+00 : f32}
// CHECK-SAME:      -> tensor<1x3x8x12xf32>
// CHECK-NOT:     linalg
// CHECK:         return
func.func @causal_iota_mask_top_left(%q: tensor<3x8x16xf32>, %k: tensor<3x8x16xf32>, %v: tensor<3x8x12xf32>) -> tensor<3x8x12xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %em = tensor.empty() : tensor<8x8xf32>
  %cm = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%em : tensor<8x8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %keep = arith.cmpi sle, %jj, %ii : i64
    %r = arith.select %keep, %zero, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %es = tensor.empty() : tensor<3x8x8xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<3x8x8xf32>) -> tensor<3x8x8xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<3x8x16xf32>, tensor<3x8x16xf32>) outs(%fs : tensor<3x8x8xf32>) -> tensor<3x8x8xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %cm : tensor<3x8x8xf32>, tensor<8x8xf32>) outs(%es : tensor<3x8x8xf32>) {
  ^bb0(%a: f32, %mk: f32, %o: f32):
    %r = arith.addf %a, %mk : f32
    linalg.yield %r : f32
  } -> tensor<3x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<3x8x8xf32>) outs(%es : tensor<3x8x8xf32>) -> tensor<3x8x8xf32>
  %eo = tensor.empty() : tensor<3x8x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<3x8x12xf32>) -> tensor<3x8x12xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<3x8x8xf32>, tensor<3x8x12xf32>) outs(%fo : tensor<3x8x12xf32>) -> tensor<3x8x12xf32>
  return %o : tensor<3x8x12xf32>
}

// -----

// A boolean mask [Sq, Sk] selecting the scores where true, -inf elsewhere:
// the op's i1 mask operand, as it is.
// CHECK-LABEL: func.func @bool_mask_keep
// CHECK-SAME:    %[[M:[^:]+]]: tensor<6x10xi1>)
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[M]] : tensor<6x10xi1>) {scale = 1.000000e+00 : f32}
// CHECK-NOT:     linalg
// CHECK:         return
func.func @bool_mask_keep(%q: tensor<3x6x16xf32>, %k: tensor<3x10x16xf32>, %v: tensor<3x10x12xf32>, %m: tensor<6x10xi1>) -> tensor<3x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %es = tensor.empty() : tensor<3x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<3x6x10xf32>) -> tensor<3x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<3x6x16xf32>, tensor<3x10x16xf32>) outs(%fs : tensor<3x6x10xf32>) -> tensor<3x6x10xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %m : tensor<3x6x10xf32>, tensor<6x10xi1>) outs(%es : tensor<3x6x10xf32>) {
  ^bb0(%a: f32, %keep: i1, %o: f32):
    %r = arith.select %keep, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<3x6x10xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<3x6x10xf32>) outs(%es : tensor<3x6x10xf32>) -> tensor<3x6x10xf32>
  %eo = tensor.empty() : tensor<3x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<3x6x12xf32>) -> tensor<3x6x12xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<3x6x10xf32>, tensor<3x10x12xf32>) outs(%fo : tensor<3x6x12xf32>) -> tensor<3x6x12xf32>
  return %o : tensor<3x6x12xf32>
}

// -----

// masked_fill: -inf where the boolean mask is true. The op keeps where its
// mask is true, so the mask is inverted. Sk is large enough that the random
// inputs of the numerical check leave no row fully masked (where the chain
// gives NaN and the op 0).
// CHECK-LABEL: func.func @bool_mask_masked_fill
// CHECK-SAME:    %[[M:[^:]+]]: tensor<3x6x48xi1>)
// CHECK:         %[[KEEP:.+]] = linalg.generic {{.*}} ins(%[[M]] : tensor<3x6x48xi1>)
// CHECK:           %[[T:.+]] = arith.constant true
// CHECK:           arith.xori %{{.+}}, %[[T]] : i1
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%[[KEEP]] : tensor<3x6x48xi1>) {scale = 1.000000e+00 : f32}
// CHECK-NOT:     linalg.softmax
// CHECK:         return
func.func @bool_mask_masked_fill(%q: tensor<3x6x16xf32>, %k: tensor<3x48x16xf32>, %v: tensor<3x48x12xf32>, %m: tensor<3x6x48xi1>) -> tensor<3x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %es = tensor.empty() : tensor<3x6x48xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<3x6x48xf32>) -> tensor<3x6x48xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<3x6x16xf32>, tensor<3x48x16xf32>) outs(%fs : tensor<3x6x48xf32>) -> tensor<3x6x48xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %m : tensor<3x6x48xf32>, tensor<3x6x48xi1>) outs(%es : tensor<3x6x48xf32>) {
  ^bb0(%a: f32, %hide: i1, %o: f32):
    %r = arith.select %hide, %ninf, %a : f32
    linalg.yield %r : f32
  } -> tensor<3x6x48xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<3x6x48xf32>) outs(%es : tensor<3x6x48xf32>) -> tensor<3x6x48xf32>
  %eo = tensor.empty() : tensor<3x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<3x6x12xf32>) -> tensor<3x6x12xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<3x6x48xf32>, tensor<3x48x12xf32>) outs(%fo : tensor<3x6x12xf32>) -> tensor<3x6x12xf32>
  return %o : tensor<3x6x12xf32>
}

// -----

// torch-mlir style: batch and heads merged by tensor.collapse_shape for
// batch_matmul and split again by tensor.expand_shape for the 4-D softmax; K^T
// is a 4-D linalg.transpose; a mask per batch, shared by heads. The op reads
// the 4-D tensors directly.
// CHECK-LABEL: func.func @torch_reshapes
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x3x6x16xf32>, %[[K:.+]]: tensor<2x3x10x16xf32>, %[[V:.+]]: tensor<2x3x10x12xf32>, %[[M:.+]]: tensor<2x1x6x10xf32>)
// CHECK-NEXT:    %[[O:.+]] = attn.attention %[[Q]], %[[K]], %[[V]] mask(%[[M]] : tensor<2x1x6x10xf32>) {scale = 2.500000e-01 : f32}
// CHECK-NEXT:    return %[[O]]
func.func @torch_reshapes(%q: tensor<2x3x6x16xf32>, %k: tensor<2x3x10x16xf32>, %v: tensor<2x3x10x12xf32>, %mask: tensor<2x1x6x10xf32>) -> tensor<2x3x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.25 : f32
  %ekt = tensor.empty() : tensor<2x3x16x10xf32>
  %kt = linalg.transpose ins(%k : tensor<2x3x10x16xf32>) outs(%ekt : tensor<2x3x16x10xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x3x6x16xf32> into tensor<6x6x16xf32>
  %kt3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x3x16x10xf32> into tensor<6x16x10xf32>
  %es3 = tensor.empty() : tensor<6x6x10xf32>
  %fs3 = linalg.fill ins(%zero : f32) outs(%es3 : tensor<6x6x10xf32>) -> tensor<6x6x10xf32>
  %s3 = linalg.batch_matmul ins(%q3, %kt3 : tensor<6x6x16xf32>, tensor<6x16x10xf32>) outs(%fs3 : tensor<6x6x10xf32>) -> tensor<6x6x10xf32>
  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [2, 3, 6, 10] : tensor<6x6x10xf32> into tensor<2x3x6x10xf32>
  %es = tensor.empty() : tensor<2x3x6x10xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, 0, i, j)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x3x6x10xf32>, tensor<2x1x6x10xf32>) outs(%es : tensor<2x3x6x10xf32>) {
  ^bb0(%a: f32, %mk: f32, %o: f32):
    %sc = arith.mulf %a, %c : f32
    %r = arith.addf %sc, %mk : f32
    linalg.yield %r : f32
  } -> tensor<2x3x6x10xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<2x3x6x10xf32>) outs(%es : tensor<2x3x6x10xf32>) -> tensor<2x3x6x10xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<2x3x6x10xf32> into tensor<6x6x10xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x3x10x12xf32> into tensor<6x10x12xf32>
  %eo3 = tensor.empty() : tensor<6x6x12xf32>
  %fo3 = linalg.fill ins(%zero : f32) outs(%eo3 : tensor<6x6x12xf32>) -> tensor<6x6x12xf32>
  %o3 = linalg.batch_matmul ins(%p3, %v3 : tensor<6x6x10xf32>, tensor<6x10x12xf32>) outs(%fo3 : tensor<6x6x12xf32>) -> tensor<6x6x12xf32>
  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 3, 6, 12] : tensor<6x6x12xf32> into tensor<2x3x6x12xf32>
  return %o : tensor<2x3x6x12xf32>
}

// -----

// Multi-query attention: one K/V head [B, Sk, D] read by every query head
// becomes Hkv = 1.
// CHECK-LABEL: func.func @mqa_shared_kv
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x4x6x16xf32>, %[[K:.+]]: tensor<2x10x16xf32>, %[[V:.+]]: tensor<2x10x12xf32>)
// CHECK-DAG:     %[[K4:.+]] = tensor.expand_shape %[[K]] {{\[}}[0], [1, 2], [3]] output_shape [2, 1, 10, 16]
// CHECK-DAG:     %[[V4:.+]] = tensor.expand_shape %[[V]] {{\[}}[0], [1, 2], [3]] output_shape [2, 1, 10, 12]
// CHECK:         %[[O:.+]] = attn.attention %[[Q]], %[[K4]], %[[V4]] {scale = 1.000000e+00 : f32}
// CHECK-SAME:      : tensor<2x4x6x16xf32>, tensor<2x1x10x16xf32>, tensor<2x1x10x12xf32> -> tensor<2x4x6x12xf32>
// CHECK-NEXT:    return %[[O]]
func.func @mqa_shared_kv(%q: tensor<2x4x6x16xf32>, %k: tensor<2x10x16xf32>, %v: tensor<2x10x12xf32>) -> tensor<2x4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<2x4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x6x10xf32>) -> tensor<2x4x6x10xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x6x16xf32>, tensor<2x10x16xf32>) outs(%fs : tensor<2x4x6x10xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %ab = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %ab : f32
    linalg.yield %r : f32
  } -> tensor<2x4x6x10xf32>
  %p = linalg.softmax dimension(3) ins(%s : tensor<2x4x6x10xf32>) outs(%es : tensor<2x4x6x10xf32>) -> tensor<2x4x6x10xf32>
  %eo = tensor.empty() : tensor<2x4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x6x12xf32>) -> tensor<2x4x6x12xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x6x10xf32>, tensor<2x10x12xf32>) outs(%fo : tensor<2x4x6x12xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %ab = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %ab : f32
    linalg.yield %r : f32
  } -> tensor<2x4x6x12xf32>
  return %o : tensor<2x4x6x12xf32>
}

// A rank-3 chain whose result is split into [B, H, S, Dv] by
// tensor.expand_shape: the op works on [B, H] and the operands are split.
// CHECK-LABEL: func.func @rank3_chain_4d_output
// CHECK-SAME:    (%[[Q:.+]]: tensor<6x6x8xf32>, %[[K:.+]]: tensor<6x10x8xf32>, %[[V:.+]]: tensor<6x10x12xf32>)
// CHECK-DAG:     %[[Q4:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 6, 8]
// CHECK-DAG:     %[[K4:.+]] = tensor.expand_shape %[[K]] {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 10, 8]
// CHECK-DAG:     %[[V4:.+]] = tensor.expand_shape %[[V]] {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 10, 12]
// CHECK:         %[[O:.+]] = attn.attention %[[Q4]], %[[K4]], %[[V4]] {scale = 1.000000e+00 : f32}
// CHECK-SAME:      -> tensor<2x3x6x12xf32>
// CHECK-NEXT:    return %[[O]]
func.func @rank3_chain_4d_output(%q: tensor<6x6x8xf32>, %k: tensor<6x10x8xf32>, %v: tensor<6x10x12xf32>) -> tensor<2x3x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<6x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<6x6x10xf32>) -> tensor<6x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<6x6x8xf32>, tensor<6x10x8xf32>) outs(%fs : tensor<6x6x10xf32>) -> tensor<6x6x10xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<6x6x10xf32>) outs(%es : tensor<6x6x10xf32>) -> tensor<6x6x10xf32>
  %eo = tensor.empty() : tensor<6x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<6x6x12xf32>) -> tensor<6x6x12xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<6x6x10xf32>, tensor<6x10x12xf32>) outs(%fo : tensor<6x6x12xf32>) -> tensor<6x6x12xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [2, 3, 6, 12] : tensor<6x6x12xf32> into tensor<2x3x6x12xf32>
  return %o4 : tensor<2x3x6x12xf32>
}

// -----

// The scores computed as K Q^T ([B, Sk, Sq]) and normalised over dim 1; the
// second contraction reads P transposed through its indexing maps.
// CHECK-LABEL: func.func @transposed_scores
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.000000e+00 : f32}
// CHECK-SAME:      : tensor<1x4x6x8xf32>, tensor<1x4x10x8xf32>, tensor<1x4x10x12xf32> -> tensor<1x4x6x12xf32>
// CHECK-NOT:     linalg
// CHECK:         return
func.func @transposed_scores(%q: tensor<4x6x8xf32>, %k: tensor<4x10x8xf32>, %v: tensor<4x10x12xf32>) -> tensor<4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<4x10x6xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x10x6xf32>) -> tensor<4x10x6xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%k, %q : tensor<4x10x8xf32>, tensor<4x6x8xf32>) outs(%fs : tensor<4x10x6xf32>) -> tensor<4x10x6xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x10x6xf32>) outs(%es : tensor<4x10x6xf32>) -> tensor<4x10x6xf32>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  %o = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, k, m)>,
      affine_map<(b, m, n, k) -> (b, k, n)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%p, %v : tensor<4x10x6xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  return %o : tensor<4x6x12xf32>
}

// -----

// Left alone: the softmax normalises over the queries (dim 1), not over
// the keys the second contraction sums over.
// CHECK-LABEL: func.func @softmax_over_query_axis
// CHECK:         linalg.batch_matmul
// CHECK:         linalg.softmax
// CHECK:         linalg.batch_matmul
// CHECK-NOT:     attn.attention
// CHECK:         return
func.func @softmax_over_query_axis(%q: tensor<4x6x8xf32>, %k: tensor<4x10x8xf32>, %v: tensor<4x10x12xf32>) -> tensor<4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xf32>, tensor<4x10x8xf32>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  // expected-remark @below {{attn-raise: not fused: the softmax reduces over a dimension other than the key axis the second contraction sums over}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x10xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  return %o : tensor<4x6x12xf32>
}

// -----

// Left alone: O[b, j, e] = sum_i P[b, i, j] V[b, i, e], the second
// contraction sums over the query axis.
// CHECK-LABEL: func.func @second_contraction_over_query_axis
// CHECK:         linalg.batch_matmul
// CHECK:         linalg.softmax
// CHECK:         linalg.batch_matmul
// CHECK-NOT:     attn.attention
// CHECK:         return
func.func @second_contraction_over_query_axis(%q: tensor<4x6x8xf32>, %k: tensor<4x10x8xf32>, %v: tensor<4x6x12xf32>) -> tensor<4x10x12xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xf32>, tensor<4x10x8xf32>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %eo = tensor.empty() : tensor<4x10x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x10x12xf32>) -> tensor<4x10x12xf32>
  // expected-remark @below {{attn-raise: not fused: the softmax reduces over a dimension other than the key axis the second contraction sums over}}
  %o = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, k, m)>,
      affine_map<(b, m, n, k) -> (b, k, n)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%p, %v : tensor<4x6x10xf32>, tensor<4x6x12xf32>) outs(%fo : tensor<4x10x12xf32>) -> tensor<4x10x12xf32>
  return %o : tensor<4x10x12xf32>
}

// -----

// Left alone: the probabilities are also returned.
// CHECK-LABEL: func.func @probs_other_use
// CHECK:         linalg.batch_matmul
// CHECK:         linalg.softmax
// CHECK:         linalg.batch_matmul
// CHECK-NOT:     attn.attention
// CHECK:         return
func.func @probs_other_use(%q: tensor<4x6x8xf32>, %k: tensor<4x10x8xf32>, %v: tensor<4x10x12xf32>) -> (tensor<4x6x12xf32>, tensor<4x6x10xf32>) {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xf32>, tensor<4x10x8xf32>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  // expected-remark @below {{attn-raise: not fused: the result of 'linalg.softmax' in the chain is also used by 'func.return' outside it}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x10xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  return %o, %p : tensor<4x6x12xf32>, tensor<4x6x10xf32>
}

// -----

// Left alone: the scores are also returned.
// CHECK-LABEL: func.func @scores_other_use
// CHECK:         linalg.batch_matmul
// CHECK:         linalg.softmax
// CHECK:         linalg.batch_matmul
// CHECK-NOT:     attn.attention
// CHECK:         return
func.func @scores_other_use(%q: tensor<4x6x8xf32>, %k: tensor<4x10x8xf32>, %v: tensor<4x10x12xf32>) -> (tensor<4x6x12xf32>, tensor<4x6x10xf32>) {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xf32>, tensor<4x10x8xf32>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  // expected-remark @below {{attn-raise: not fused: the result of 'linalg.batch_matmul' in the chain is also used by 'func.return' outside it}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x10xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  return %o, %s : tensor<4x6x12xf32>, tensor<4x6x10xf32>
}

// -----

// Left alone: dynamic batch.
// CHECK-LABEL: func.func @dynamic_shapes
// CHECK:         linalg.batch_matmul
// CHECK:         linalg.softmax
// CHECK:         linalg.batch_matmul
// CHECK-NOT:     attn.attention
// CHECK:         return
func.func @dynamic_shapes(%q: tensor<?x6x8xf32>, %k: tensor<?x10x8xf32>, %v: tensor<?x10x12xf32>) -> tensor<?x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %b = tensor.dim %q, %c0 : tensor<?x6x8xf32>
  %es = tensor.empty(%b) : tensor<?x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<?x6x10xf32>) -> tensor<?x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<?x6x8xf32>, tensor<?x10x8xf32>) outs(%fs : tensor<?x6x10xf32>) -> tensor<?x6x10xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<?x6x10xf32>) outs(%es : tensor<?x6x10xf32>) -> tensor<?x6x10xf32>
  %eo = tensor.empty(%b) : tensor<?x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<?x6x12xf32>) -> tensor<?x6x12xf32>
  // expected-remark @below {{attn-raise: not fused: dynamic shapes are not supported}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<?x6x10xf32>, tensor<?x10x12xf32>) outs(%fo : tensor<?x6x12xf32>) -> tensor<?x6x12xf32>
  return %o : tensor<?x6x12xf32>
}

// -----

// Left alone: Sq = 0.
// CHECK-LABEL: func.func @zero_sized
// CHECK:         linalg.batch_matmul
// CHECK:         linalg.softmax
// CHECK:         linalg.batch_matmul
// CHECK-NOT:     attn.attention
// CHECK:         return
func.func @zero_sized(%q: tensor<4x0x8xf32>, %k: tensor<4x10x8xf32>, %v: tensor<4x10x12xf32>) -> tensor<4x0x12xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<4x0x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x0x10xf32>) -> tensor<4x0x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x0x8xf32>, tensor<4x10x8xf32>) outs(%fs : tensor<4x0x10xf32>) -> tensor<4x0x10xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x0x10xf32>) outs(%es : tensor<4x0x10xf32>) -> tensor<4x0x10xf32>
  %eo = tensor.empty() : tensor<4x0x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x0x12xf32>) -> tensor<4x0x12xf32>
  // expected-remark @below {{attn-raise: not fused: a tensor in the chain has a zero-sized dimension}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x0x10xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x0x12xf32>) -> tensor<4x0x12xf32>
  return %o : tensor<4x0x12xf32>
}

// -----

// Left alone: a head dim past attn.attention's limit (2^16) would make an op
// that fails to verify.
// CHECK-LABEL: func.func @head_dim_too_large
// CHECK:         linalg.softmax
// CHECK-NOT:     attn.attention
// CHECK:         return
func.func @head_dim_too_large(%q: tensor<4x6x70000xf32>, %k: tensor<4x10x70000xf32>, %v: tensor<4x10x12xf32>) -> tensor<4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x70000xf32>, tensor<4x10x70000xf32>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  // expected-remark @below {{attn-raise: not fused: head dims D = 70000 and Dv = 12 exceed attn's limit of 65536}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x10xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  return %o : tensor<4x6x12xf32>
}

// -----

// Left alone: more than 2^48 elements in a tensor of the chain, past what
// attn ops take.
// CHECK-LABEL: func.func @too_many_elements
// CHECK:         linalg.softmax
// CHECK-NOT:     attn.attention
// CHECK:         return
func.func @too_many_elements(%q: tensor<10000000000000x6x8xf32>, %k: tensor<10000000000000x10x8xf32>, %v: tensor<10000000000000x10x12xf32>) -> tensor<10000000000000x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<10000000000000x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<10000000000000x6x10xf32>) -> tensor<10000000000000x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<10000000000000x6x8xf32>, tensor<10000000000000x10x8xf32>) outs(%fs : tensor<10000000000000x6x10xf32>) -> tensor<10000000000000x6x10xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<10000000000000x6x10xf32>) outs(%es : tensor<10000000000000x6x10xf32>) -> tensor<10000000000000x6x10xf32>
  %eo = tensor.empty() : tensor<10000000000000x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<10000000000000x6x12xf32>) -> tensor<10000000000000x6x12xf32>
  // expected-remark @below {{attn-raise: not fused: a tensor in the chain holds more than 2^48 elements, the most an attn op takes}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<10000000000000x6x10xf32>, tensor<10000000000000x10x12xf32>) outs(%fo : tensor<10000000000000x6x12xf32>) -> tensor<10000000000000x6x12xf32>
  return %o : tensor<10000000000000x6x12xf32>
}

// -----

// Left alone: the softmax in one function, the contractions around it in
// another.
// CHECK-LABEL: func.func @split_softmax
// CHECK:         linalg.softmax
// CHECK-LABEL: func.func @split_across_functions
// CHECK:         linalg.batch_matmul
// CHECK:         call @split_softmax
// CHECK:         linalg.batch_matmul
// CHECK-NOT:     attn.attention
func.func @split_softmax(%s: tensor<4x6x10xf32>) -> tensor<4x6x10xf32> {
  %es = tensor.empty() : tensor<4x6x10xf32>
  // expected-remark @below {{attn-raise: not fused: no contraction in the same block reads the softmax}}
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  return %p : tensor<4x6x10xf32>
}
func.func @split_across_functions(%q: tensor<4x6x8xf32>, %k: tensor<4x10x8xf32>, %v: tensor<4x10x12xf32>) -> tensor<4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xf32>, tensor<4x10x8xf32>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %p = func.call @split_softmax(%s) : (tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x10xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  return %o : tensor<4x6x12xf32>
}

// -----

// Left alone: the second contraction sits in an scf.if region.
// CHECK-LABEL: func.func @split_across_blocks
// CHECK:         linalg.softmax
// CHECK:         scf.if
// CHECK:           linalg.batch_matmul
// CHECK-NOT:     attn.attention
func.func @split_across_blocks(%q: tensor<4x6x8xf32>, %k: tensor<4x10x8xf32>, %v: tensor<4x10x12xf32>, %c: i1) -> tensor<4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xf32>, tensor<4x10x8xf32>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %r = scf.if %c -> tensor<4x6x12xf32> {
    %eo = tensor.empty() : tensor<4x6x12xf32>
    %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
    // expected-remark @below {{attn-raise: not fused: the chain spans several blocks}}
    %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x10xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
    scf.yield %o : tensor<4x6x12xf32>
  } else {
    %eo = tensor.empty() : tensor<4x6x12xf32>
    %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
    scf.yield %fo : tensor<4x6x12xf32>
  }
  return %r : tensor<4x6x12xf32>
}

// -----

// A mask added before the scale, (S + M) * c, is no mask operand (that is
// added to the scaled scores): a score modification reading M.
// CHECK-LABEL: func.func @mask_before_scale
// CHECK:         attn.attention {{.+}} mod_operands(%{{.+}} : tensor<4x6x10xf32>) {scale = 1.000000e+00 : f32}
// CHECK-SAME:      score_mod {
// CHECK:           tensor.extract
// CHECK:           arith.addf
// CHECK:           arith.mulf
// CHECK-NOT:     linalg.softmax
// CHECK:         return
func.func @mask_before_scale(%q: tensor<4x6x8xf32>, %k: tensor<4x10x8xf32>, %v: tensor<4x10x12xf32>, %m: tensor<4x6x10xf32>) -> tensor<4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.5 : f32
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xf32>, tensor<4x10x8xf32>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %m : tensor<4x6x10xf32>, tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) {
  ^bb0(%a: f32, %mk: f32, %o: f32):
    %t = arith.addf %a, %mk : f32
    %r = arith.mulf %t, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x6x10xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x10xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  return %o : tensor<4x6x12xf32>
}

// -----

// Left alone: f16 contractions accumulating in f16.
// CHECK-LABEL: func.func @f16_accumulation
// CHECK:         linalg.batch_matmul
// CHECK:         linalg.softmax
// CHECK:         linalg.batch_matmul
// CHECK-NOT:     attn.attention
// CHECK:         return
func.func @f16_accumulation(%q: tensor<4x6x8xf16>, %k: tensor<4x10x8xf16>, %v: tensor<4x10x12xf16>) -> tensor<4x6x12xf16> {
  %zero = arith.constant 0.0 : f16
  %es = tensor.empty() : tensor<4x6x10xf16>
  %fs = linalg.fill ins(%zero : f16) outs(%es : tensor<4x6x10xf16>) -> tensor<4x6x10xf16>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xf16>, tensor<4x10x8xf16>) outs(%fs : tensor<4x6x10xf16>) -> tensor<4x6x10xf16>
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x6x10xf16>) outs(%es : tensor<4x6x10xf16>) -> tensor<4x6x10xf16>
  %eo = tensor.empty() : tensor<4x6x12xf16>
  %fo = linalg.fill ins(%zero : f16) outs(%eo : tensor<4x6x12xf16>) -> tensor<4x6x12xf16>
  // expected-remark @below {{attn-raise: not fused: the second contraction accumulates in f16, not f32}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x10xf16>, tensor<4x10x12xf16>) outs(%fo : tensor<4x6x12xf16>) -> tensor<4x6x12xf16>
  return %o : tensor<4x6x12xf16>
}

// -----

// Left alone: an index mask hiding keys j > i + 2, neither top-left nor
// bottom-right causal.
// CHECK-LABEL: func.func @index_mask_not_causal
// CHECK:         linalg.batch_matmul
// CHECK:         linalg.softmax
// CHECK:         linalg.batch_matmul
// CHECK-NOT:     attn.attention
// CHECK:         return
func.func @index_mask_not_causal(%q: tensor<4x6x8xf32>, %k: tensor<4x10x8xf32>, %v: tensor<4x10x12xf32>) -> tensor<4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %two = arith.constant 2 : index
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xf32>, tensor<4x10x8xf32>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %d = arith.addi %i, %two : index
    %hide = arith.cmpi sgt, %j, %d : index
    %r = arith.select %hide, %ninf, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x6x10xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  // expected-remark @below {{attn-raise: not fused: the index mask hides keys after diagonal i + 2, neither top-left (0) nor bottom-right (4)}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x10xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  return %o : tensor<4x6x12xf32>
}

// -----

// Left alone: bottom-right causal with Sq > Sk hides every key from the
// first rows: the chain gives NaN there, attn.attention 0.
// CHECK-LABEL: func.func @bottom_right_rows_fully_masked
// CHECK:         linalg.batch_matmul
// CHECK:         linalg.softmax
// CHECK:         linalg.batch_matmul
// CHECK-NOT:     attn.attention
// CHECK:         return
func.func @bottom_right_rows_fully_masked(%q: tensor<4x10x8xf32>, %k: tensor<4x6x8xf32>, %v: tensor<4x6x12xf32>) -> tensor<4x10x12xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %off = arith.constant 4 : index
  %es = tensor.empty() : tensor<4x10x6xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x10x6xf32>) -> tensor<4x10x6xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x10x8xf32>, tensor<4x6x8xf32>) outs(%fs : tensor<4x10x6xf32>) -> tensor<4x10x6xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<4x10x6xf32>) outs(%es : tensor<4x10x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %j2 = arith.addi %j, %off : index
    %hide = arith.cmpi sgt, %j2, %i : index
    %r = arith.select %hide, %ninf, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x10x6xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<4x10x6xf32>) outs(%es : tensor<4x10x6xf32>) -> tensor<4x10x6xf32>
  %eo = tensor.empty() : tensor<4x10x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x10x12xf32>) -> tensor<4x10x12xf32>
  // expected-remark @below {{attn-raise: not fused: a bottom-right causal mask with Sq > Sk hides whole rows, which attn.attention sets to 0}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x10x6xf32>, tensor<4x6x12xf32>) outs(%fo : tensor<4x10x12xf32>) -> tensor<4x10x12xf32>
  return %o : tensor<4x10x12xf32>
}

// -----

// masked_fill with -1e9 instead of -inf is no mask (a row with every key
// masked averages them all): a score modification that selects -1e9 where
// the boolean tensor says so, which keeps that meaning.
// CHECK-LABEL: func.func @masked_value_not_inf
// CHECK:         attn.attention {{.+}} mod_operands(%{{.+}} : tensor<4x6x10xi1>) {scale = 1.000000e+00 : f32}
// CHECK-SAME:      score_mod {
// CHECK:           %[[HIDE:.+]] = tensor.extract
// CHECK-NEXT:      arith.select %[[HIDE]], %{{.+}}, %{{.+}} : f32
// CHECK-NOT:     linalg.softmax
// CHECK:         return
func.func @masked_value_not_inf(%q: tensor<4x6x8xf32>, %k: tensor<4x10x8xf32>, %v: tensor<4x10x12xf32>, %m: tensor<4x6x10xi1>) -> tensor<4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %big = arith.constant -1.0e+09 : f32
  %es = tensor.empty() : tensor<4x6x10xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xf32>, tensor<4x10x8xf32>) outs(%fs : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %m : tensor<4x6x10xf32>, tensor<4x6x10xi1>) outs(%es : tensor<4x6x10xf32>) {
  ^bb0(%a: f32, %hide: i1, %o: f32):
    %r = arith.select %hide, %big, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x6x10xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x10xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  return %o : tensor<4x6x12xf32>
}

// -----

// Left alone: the first contraction accumulates into a bias.
// CHECK-LABEL: func.func @nonzero_accumulator
// CHECK:         linalg.batch_matmul
// CHECK:         linalg.softmax
// CHECK:         linalg.batch_matmul
// CHECK-NOT:     attn.attention
// CHECK:         return
func.func @nonzero_accumulator(%q: tensor<4x6x8xf32>, %k: tensor<4x10x8xf32>, %v: tensor<4x10x12xf32>, %bias: tensor<4x6x10xf32>) -> tensor<4x6x12xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<4x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x6x8xf32>, tensor<4x10x8xf32>) outs(%bias : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x6x10xf32>) outs(%es : tensor<4x6x10xf32>) -> tensor<4x6x10xf32>
  %eo = tensor.empty() : tensor<4x6x12xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  // expected-remark @below {{attn-raise: not fused: the first contraction accumulates into a non-zero tensor}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x6x10xf32>, tensor<4x10x12xf32>) outs(%fo : tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
  return %o : tensor<4x6x12xf32>
}

// -----

// Left alone: the probabilities are also the values (O = P P).
// CHECK-LABEL: func.func @probs_used_as_values
// CHECK:         linalg.softmax
// CHECK:         linalg.batch_matmul
// CHECK-NOT:     attn.attention
func.func @probs_used_as_values(%q: tensor<4x6x8xf32>) -> tensor<4x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<4x6x6xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x6xf32>) -> tensor<4x6x6xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %q : tensor<4x6x8xf32>, tensor<4x6x8xf32>) outs(%fs : tensor<4x6x6xf32>) -> tensor<4x6x6xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x6x6xf32>) outs(%es : tensor<4x6x6xf32>) -> tensor<4x6x6xf32>
  // expected-remark @below {{attn-raise: not fused: the value is computed from the scores}}
  %o = linalg.batch_matmul ins(%p, %p : tensor<4x6x6xf32>, tensor<4x6x6xf32>) outs(%fs : tensor<4x6x6xf32>) -> tensor<4x6x6xf32>
  return %o : tensor<4x6x6xf32>
}
