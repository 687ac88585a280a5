// RUN: attn-opt %s -split-input-file --attn-decompose | FileCheck %s

// Multi-head attention in bhsd, f32, default scale 1/sqrt(16), no LSE: the
// scores, a safe softmax over the (single) split and the second contraction.

// CHECK-DAG: #[[$Q:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$K:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG: #[[$BHIJ:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$ROW_S:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d3, d4)>
// CHECK-DAG: #[[$PV_S:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d3, d5)>
// CHECK-DAG: #[[$PV_M:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$PV_V:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d5, d4)>
// CHECK-DAG: #[[$PV_O:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[$ID5:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>

// CHECK-LABEL: func @attention_bhsd
// CHECK-SAME: (%[[Q:[a-zA-Z0-9_]+]]: tensor<1x2x4x16xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<1x2x6x16xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<1x2x6x8xf32>)
// CHECK-DAG: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 2.500000e-01 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C6:.+]] = arith.constant 6 : index
// CHECK-NOT: attn.
//
// S = Q K^T, accumulated in f32:
// CHECK: %[[QK_INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<1x2x4x6xf32>)
// CHECK: %[[QK:.+]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$K]], #[[$BHIJ]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[Q]], %[[K]] : tensor<1x2x4x16xf32>, tensor<1x2x6x16xf32>) outs(%[[QK_INIT]] : tensor<1x2x4x6xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
//
// Scaled; no mask, so no index arithmetic:
// CHECK: %[[S:.+]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[QK]] : tensor<1x2x4x6xf32>)
// CHECK-NEXT: ^bb0(%[[SIN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[SIN]], %[[SCALE]] : f32
// CHECK-NEXT: linalg.yield %[[SCALED]] : f32
//
// Row max over keys j in [0, Sk) of the one split:
// CHECK: %[[M_INIT:.+]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.+}} : tensor<1x1x2x4xf32>)
// CHECK: %[[M:.+]] = linalg.generic {indexing_maps = [#[[$ROW_S]], #[[$BHIJ]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[S]] : tensor<1x2x4x6xf32>) outs(%[[M_INIT]] : tensor<1x1x2x4xf32>)
// CHECK: arith.maximumf
// CHECK: arith.cmpi slt, %{{.+}}, %[[C6]] : index
//
// Row sum of exp(s - m), with m = -inf replaced by 0 so that a fully masked
// row sums to 0 instead of NaN:
// CHECK: %[[L:.+]] = linalg.generic {indexing_maps = [#[[$ROW_S]], #[[$BHIJ]], #[[$BHIJ]]]
// CHECK-SAME: ins(%[[S]], %[[M]] : tensor<1x2x4x6xf32>, tensor<1x1x2x4xf32>)
// CHECK-NEXT: ^bb0(%[[LS:.+]]: f32, %[[LM:.+]]: f32, %[[LACC:.+]]: f32):
// CHECK-NEXT: %[[DEAD:.+]] = arith.cmpf oeq, %[[LM]], %[[NINF]] : f32
// CHECK-NEXT: %[[SAFE:.+]] = arith.select %[[DEAD]], %[[ZERO]], %[[LM]] : f32
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.subf %[[LS]], %[[SAFE]] : f32
// CHECK-NEXT: math.exp %[[SHIFTED]] : f32
//
// Unnormalised P V:
// CHECK: %[[ACC:.+]] = linalg.generic {indexing_maps = [#[[$PV_S]], #[[$PV_M]], #[[$PV_V]], #[[$PV_O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[S]], %[[M]], %[[V]] : tensor<1x2x4x6xf32>, tensor<1x1x2x4xf32>, tensor<1x2x6x8xf32>)
// CHECK: math.exp
//
// Divided by l once, 0 where l = 0:
// CHECK: %[[O:.+]] = linalg.generic {indexing_maps = [#[[$ID5]], #[[$BHIJ]], #[[$ID5]]]
// CHECK-SAME: ins(%[[ACC]], %[[L]] : tensor<1x1x2x4x8xf32>, tensor<1x1x2x4xf32>)
// CHECK-NEXT: ^bb0(%[[OA:.+]]: f32, %[[OL:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[EMPTY:.+]] = arith.cmpf oeq, %[[OL]], %[[ZERO]] : f32
// CHECK-NEXT: %[[DIV:.+]] = arith.divf %[[OA]], %[[OL]] : f32
// CHECK-NEXT: arith.select %[[EMPTY]], %[[ZERO]], %[[DIV]] : f32
//
// CHECK: %[[O4:.+]] = tensor.collapse_shape %[[O]] {{\[}}[0, 1], [2], [3], [4]] : tensor<1x1x2x4x8xf32> into tensor<1x2x4x8xf32>
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[O4]] : tensor<1x2x4x8xf32>)
// CHECK-NOT: math.log
// CHECK: return %[[R]] : tensor<1x2x4x8xf32>
func.func @attention_bhsd(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32> {
  %o = attn.attention %q, %k, %v : tensor<1x2x4x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// GQA (8 query heads over 2 KV heads) in bshd: K and V are read at head
// `h floordiv 4` through the stored [B, S, H, D] layout, and the output is
// written back in bshd; no transpose is materialised. bottom_right with
// Sq = 7, Sk = 9 puts the diagonal at i + 2; the window hides keys before
// diag - 3. f16 in, f32 inside, f16 out, LSE f32.

// CHECK-DAG: #[[$Q:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>
// CHECK-DAG: #[[$K:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1 floordiv 4, d4)>
// CHECK-DAG: #[[$V:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d5, d2 floordiv 4, d4)>
// CHECK-DAG: #[[$ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$BSHD:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>

// CHECK-LABEL: func @attention_gqa_bshd_bottom_right_window
// CHECK-SAME: (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x7x8x16xf16>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x9x2x16xf16>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x9x2x32xf16>)
// CHECK-DAG: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[OFFSET:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[WINDOW:.+]] = arith.constant 3 : index
// CHECK: %[[QK:.+]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$K]], #{{.+}}]
// CHECK-SAME: ins(%[[Q]], %[[K]] : tensor<2x7x8x16xf16>, tensor<2x9x2x16xf16>) outs(%{{.+}} : tensor<2x8x7x9xf32>)
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.extf %{{.+}} : f16 to f32
//
// CHECK: %[[S:.+]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ID4]]]
// CHECK-SAME: ins(%[[QK]] : tensor<2x8x7x9xf32>)
// CHECK: %[[SCALED:.+]] = arith.mulf
// CHECK: %[[I:.+]] = linalg.index 2 : index
// CHECK: %[[J:.+]] = linalg.index 3 : index
// CHECK: %[[DIAG:.+]] = arith.addi %[[I]], %[[OFFSET]] : index
// CHECK: %[[AFTER:.+]] = arith.cmpi sgt, %[[J]], %[[DIAG]] : index
// CHECK: %[[FIRST:.+]] = arith.subi %[[DIAG]], %[[WINDOW]] : index
// CHECK: %[[BEFORE:.+]] = arith.cmpi slt, %[[J]], %[[FIRST]] : index
// CHECK: %[[HIDDEN:.+]] = arith.ori %[[AFTER]], %[[BEFORE]] : i1
// CHECK: %[[MASKED:.+]] = arith.select %[[HIDDEN]], %[[NINF]], %[[SCALED]] : f32
// CHECK: linalg.yield %[[MASKED]] : f32
//
// CHECK: %[[M:.+]] = linalg.generic {{.*}} ins(%[[S]] : tensor<2x8x7x9xf32>) outs(%{{.+}} : tensor<1x2x8x7xf32>)
// CHECK: %[[L:.+]] = linalg.generic {{.*}} ins(%[[S]], %[[M]] : tensor<2x8x7x9xf32>, tensor<1x2x8x7xf32>)
// CHECK: %[[ACC:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #[[$V]], #{{.+}}]
// CHECK-SAME: ins(%[[S]], %[[M]], %[[V]] : tensor<2x8x7x9xf32>, tensor<1x2x8x7xf32>, tensor<2x9x2x32xf16>)
// CHECK: %[[O:.+]] = linalg.generic {{.*}} ins(%[[ACC]], %[[L]] :
//
// LSE = max + log(sum), with the max of a fully masked row taken as 0:
// CHECK: %[[LSE:.+]] = linalg.generic {{.*}} ins(%[[M]], %[[L]] : tensor<1x2x8x7xf32>, tensor<1x2x8x7xf32>)
// CHECK: %[[LOG:.+]] = math.log
// CHECK: %[[SAFE:.+]] = arith.select
// CHECK: arith.addf %[[SAFE]], %[[LOG]] : f32
//
// CHECK: %[[O4:.+]] = tensor.collapse_shape %[[O]] {{\[}}[0, 1], [2], [3], [4]] : tensor<1x2x8x7x32xf32> into tensor<2x8x7x32xf32>
// CHECK: %[[OUT:.+]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$BSHD]]]
// CHECK-SAME: ins(%[[O4]] : tensor<2x8x7x32xf32>) outs(%{{.+}} : tensor<2x7x8x32xf16>)
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK: %[[LSE3:.+]] = tensor.collapse_shape %[[LSE]] {{\[}}[0, 1], [2], [3]] : tensor<1x2x8x7xf32> into tensor<2x8x7xf32>
// CHECK: return %[[OUT]], %[[LSE3]] : tensor<2x7x8x32xf16>, tensor<2x8x7xf32>
func.func @attention_gqa_bshd_bottom_right_window(%q: tensor<2x7x8x16xf16>, %k: tensor<2x9x2x16xf16>, %v: tensor<2x9x2x32xf16>) -> (tensor<2x7x8x32xf16>, tensor<2x8x7xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>, window = 3 : i64, layout = #attn.layout<bshd>}
      : tensor<2x7x8x16xf16>, tensor<2x9x2x16xf16>, tensor<2x9x2x32xf16> -> tensor<2x7x8x32xf16>, tensor<2x8x7xf32>
  return %o, %lse : tensor<2x7x8x32xf16>, tensor<2x8x7xf32>
}

// -----

// With dynamic sequence lengths the bottom_right offset is Sk - Sq at run
// time; an explicit scale replaces 1/sqrt(D).

// CHECK-LABEL: func @attention_bottom_right_dynamic
// CHECK-SAME: (%[[Q:[a-zA-Z0-9_]+]]: tensor<?x2x?x16xbf16>, %[[K:[a-zA-Z0-9_]+]]: tensor<?x2x?x16xbf16>, %[[V:[a-zA-Z0-9_]+]]: tensor<?x2x?x16xbf16>)
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[SQ:.+]] = tensor.dim %[[Q]], %[[C2]] : tensor<?x2x?x16xbf16>
// CHECK-DAG: %[[SK:.+]] = tensor.dim %[[K]], %[[C2]] : tensor<?x2x?x16xbf16>
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: %[[OFFSET:.+]] = arith.subi %[[SK]], %[[SQ]] : index
// CHECK: linalg.generic
// CHECK: arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK: %[[I:.+]] = linalg.index 2 : index
// CHECK: %[[J:.+]] = linalg.index 3 : index
// CHECK: %[[DIAG:.+]] = arith.addi %[[I]], %[[OFFSET]] : index
// CHECK: arith.cmpi sgt, %[[J]], %[[DIAG]] : index
// CHECK-NOT: arith.ori
// CHECK: linalg.yield
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: return %{{.+}} : tensor<?x2x?x16xbf16>
func.func @attention_bottom_right_dynamic(%q: tensor<?x2x?x16xbf16>, %k: tensor<?x2x?x16xbf16>, %v: tensor<?x2x?x16xbf16>) -> tensor<?x2x?x16xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>, scale = 0.5 : f32}
      : tensor<?x2x?x16xbf16>, tensor<?x2x?x16xbf16>, tensor<?x2x?x16xbf16> -> tensor<?x2x?x16xbf16>
  return %o : tensor<?x2x?x16xbf16>
}

// -----

// top_left: query i sees keys j <= i, whatever Sq and Sk.

// CHECK-LABEL: func @attention_top_left
// CHECK-DAG: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 2.500000e-01 : f32
// CHECK: %[[SCALED:.+]] = arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK-NEXT: %[[I:.+]] = linalg.index 2 : index
// CHECK-NEXT: %[[J:.+]] = linalg.index 3 : index
// CHECK-NEXT: %[[AFTER:.+]] = arith.cmpi sgt, %[[J]], %[[I]] : index
// CHECK-NEXT: %[[MASKED:.+]] = arith.select %[[AFTER]], %[[NINF]], %[[SCALED]] : f32
// CHECK-NEXT: linalg.yield %[[MASKED]] : f32
func.func @attention_top_left(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>}
      : tensor<1x2x4x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A rank-2 boolean mask [Sq, Sk] broadcast over batch and heads: it keeps a
// score where true and sets it to -inf where false.

// CHECK-DAG: #[[$ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$MASK_MAP:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>

// CHECK-LABEL: func @attention_bool_mask
// CHECK-SAME: %[[MASK:[a-zA-Z0-9_]+]]: tensor<7x9xi1>
// CHECK-DAG: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 2.500000e-01 : f32
// CHECK: %[[QK:.+]] = linalg.generic
// CHECK: linalg.generic {indexing_maps = [#[[$ID4]], #[[$MASK_MAP]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[QK]], %[[MASK]] : tensor<1x2x7x9xf32>, tensor<7x9xi1>)
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %[[KEEP:.+]]: i1, %{{.+}}: f32):
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[S]], %[[SCALE]] : f32
// CHECK-NEXT: %[[MASKED:.+]] = arith.select %[[KEEP]], %[[SCALED]], %[[NINF]] : f32
// CHECK-NEXT: linalg.yield %[[MASKED]] : f32
func.func @attention_bool_mask(%q: tensor<1x2x7x16xf32>, %k: tensor<1x2x9x16xf32>, %v: tensor<1x2x9x16xf32>, %m: tensor<7x9xi1>) -> tensor<1x2x7x16xf32> {
  %o = attn.attention %q, %k, %v mask(%m : tensor<7x9xi1>)
      : tensor<1x2x7x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32> -> tensor<1x2x7x16xf32>
  return %o : tensor<1x2x7x16xf32>
}

// -----

// An additive f16 mask [B, 1, 1, Sk] (a padding mask): unit dims are read at
// index 0, values are extended to f32 and added to the scaled scores.

// CHECK-DAG: #[[$ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$MASK_MAP:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>

// CHECK-LABEL: func @attention_additive_mask
// CHECK-SAME: %[[MASK:[a-zA-Z0-9_]+]]: tensor<2x1x1x9xf16>
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 2.500000e-01 : f32
// CHECK: %[[QK:.+]] = linalg.generic
// CHECK: linalg.generic {indexing_maps = [#[[$ID4]], #[[$MASK_MAP]], #[[$ID4]]]
// CHECK-SAME: ins(%[[QK]], %[[MASK]] : tensor<2x2x7x9xf32>, tensor<2x1x1x9xf16>)
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %[[BIAS:.+]]: f16, %{{.+}}: f32):
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[S]], %[[SCALE]] : f32
// CHECK-NEXT: %[[BIAS32:.+]] = arith.extf %[[BIAS]] : f16 to f32
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[SCALED]], %[[BIAS32]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]] : f32
func.func @attention_additive_mask(%q: tensor<2x2x7x16xf32>, %k: tensor<2x2x9x16xf32>, %v: tensor<2x2x9x16xf32>, %m: tensor<2x1x1x9xf16>) -> tensor<2x2x7x16xf32> {
  %o = attn.attention %q, %k, %v mask(%m : tensor<2x1x1x9xf16>)
      : tensor<2x2x7x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32> -> tensor<2x2x7x16xf32>
  return %o : tensor<2x2x7x16xf32>
}

// -----

// Split-KV: 3 splits of ceil(8 / 3) = 3 keys. Key j belongs to split n iff
// 3n <= j < 3n + 3; the last split holds only 2 keys. Results keep the split
// dimension and stay f32.

// CHECK-DAG: #[[$K:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d3, d4)>

// CHECK-LABEL: func @attention_partial
// CHECK-SAME: (%[[Q:[a-zA-Z0-9_]+]]: tensor<1x4x1x16xf16>, %[[K:[a-zA-Z0-9_]+]]: tensor<1x2x8x16xf16>, %[[V:[a-zA-Z0-9_]+]]: tensor<1x2x8x16xf16>)
// CHECK-DAG: %[[CHUNK:.+]] = arith.constant 3 : index
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[$K]], #{{.+}}]
// CHECK-SAME: ins(%[[Q]], %[[K]] :
// CHECK: %[[S:.+]] = linalg.generic
// CHECK: %[[M:.+]] = linalg.generic {{.*}} ins(%[[S]] : tensor<1x4x1x8xf32>) outs(%{{.+}} : tensor<3x1x4x1xf32>)
// CHECK-NEXT: ^bb0(%[[MS:.+]]: f32, %[[MACC:.+]]: f32):
// CHECK-NEXT: %[[MAX:.+]] = arith.maximumf %[[MACC]], %[[MS]] : f32
// CHECK-NEXT: %[[N:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[J:.+]] = linalg.index 4 : index
// CHECK-NEXT: %[[LO:.+]] = arith.muli %[[N]], %[[CHUNK]] : index
// CHECK-NEXT: %[[HI:.+]] = arith.addi %[[LO]], %[[CHUNK]] : index
// CHECK-NEXT: %[[GE:.+]] = arith.cmpi sge, %[[J]], %[[LO]] : index
// CHECK-NEXT: %[[LT:.+]] = arith.cmpi slt, %[[J]], %[[HI]] : index
// CHECK-NEXT: %[[IN:.+]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK-NEXT: %[[NEW:.+]] = arith.select %[[IN]], %[[MAX]], %[[MACC]] : f32
// CHECK-NEXT: linalg.yield %[[NEW]] : f32
// CHECK: %[[L:.+]] = linalg.generic {{.*}} ins(%[[S]], %[[M]] :
// CHECK: %[[ACC:.+]] = linalg.generic {{.*}} ins(%[[S]], %[[M]], %[[V]] :
// CHECK: %[[PO:.+]] = linalg.generic {{.*}} ins(%[[ACC]], %[[L]] : tensor<3x1x4x1x16xf32>, tensor<3x1x4x1xf32>)
// CHECK: %[[PL:.+]] = linalg.generic {{.*}} ins(%[[M]], %[[L]] : tensor<3x1x4x1xf32>, tensor<3x1x4x1xf32>)
// CHECK: math.log
// CHECK-NOT: tensor.collapse_shape
// CHECK: return %[[PO]], %[[PL]] : tensor<3x1x4x1x16xf32>, tensor<3x1x4x1xf32>
func.func @attention_partial(%q: tensor<1x4x1x16xf16>, %k: tensor<1x2x8x16xf16>, %v: tensor<1x2x8x16xf16>) -> (tensor<3x1x4x1x16xf32>, tensor<3x1x4x1xf32>) {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 3 : i64}
      : tensor<1x4x1x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16> -> tensor<3x1x4x1x16xf32>, tensor<3x1x4x1xf32>
  return %po, %pl : tensor<3x1x4x1x16xf32>, tensor<3x1x4x1xf32>
}

// -----

// combine: m = max_s LSE_s, w_s = exp(LSE_s - m) / sum_s exp(LSE_s - m),
// O = sum_s w_s O_s (written in bshd as bf16), LSE = m + log(sum).

// CHECK-DAG: #[[$LSE_N:.+]] = affine_map<(d0, d1, d2, d3) -> (d3, d0, d1, d2)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[$PO_N:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d4, d0, d1, d2, d3)>
// CHECK-DAG: #[[$PL_N:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d4, d0, d1, d2)>
// CHECK-DAG: #[[$ROW5:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
// CHECK-DAG: #[[$OUT5:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$BSHD:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>

// CHECK-LABEL: func @combine
// CHECK-SAME: (%[[PO:[a-zA-Z0-9_]+]]: tensor<3x1x4x1x16xf32>, %[[PL:[a-zA-Z0-9_]+]]: tensor<3x1x4x1xf32>)
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[M_INIT:.+]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.+}} : tensor<1x4x1xf32>)
// CHECK: %[[M:.+]] = linalg.generic {indexing_maps = [#[[$LSE_N]], #[[$ROW]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[PL]] : tensor<3x1x4x1xf32>) outs(%[[M_INIT]] : tensor<1x4x1xf32>)
// CHECK: arith.maximumf
// CHECK: %[[L:.+]] = linalg.generic {indexing_maps = [#[[$LSE_N]], #[[$ROW]], #[[$ROW]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[PL]], %[[M]] : tensor<3x1x4x1xf32>, tensor<1x4x1xf32>)
// CHECK: math.exp
// CHECK: %[[ACC:.+]] = linalg.generic {indexing_maps = [#[[$PO_N]], #[[$PL_N]], #[[$ROW5]], #[[$ROW5]], #[[$OUT5]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[PO]], %[[PL]], %[[M]], %[[L]] :
// CHECK-NEXT: ^bb0(%[[O_S:.+]]: f32, %[[LSE_S:.+]]: f32, %{{.+}}: f32, %[[SUM:.+]]: f32, %[[OUT:.+]]: f32):
// CHECK: %[[ALL_EMPTY:.+]] = arith.cmpf oeq, %[[SUM]], %[[ZERO]] : f32
// CHECK: %[[E:.+]] = math.exp
// CHECK: %[[W:.+]] = arith.divf %[[E]], %[[SUM]] : f32
// CHECK: %[[W0:.+]] = arith.select %[[ALL_EMPTY]], %[[ZERO]], %[[W]] : f32
// CHECK: %[[C:.+]] = arith.mulf %[[W0]], %[[O_S]] : f32
// CHECK: arith.addf %[[OUT]], %[[C]] : f32
// CHECK: %[[O:.+]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$BSHD]]]
// CHECK-SAME: ins(%[[ACC]] : tensor<1x4x1x16xf32>) outs(%{{.+}} : tensor<1x1x4x16xbf16>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: %[[LSE:.+]] = linalg.generic {{.*}} ins(%[[M]], %[[L]] : tensor<1x4x1xf32>, tensor<1x4x1xf32>)
// CHECK: math.log
// CHECK: return %[[O]], %[[LSE]] : tensor<1x1x4x16xbf16>, tensor<1x4x1xf32>
func.func @combine(%po: tensor<3x1x4x1x16xf32>, %pl: tensor<3x1x4x1xf32>) -> (tensor<1x1x4x16xbf16>, tensor<1x4x1xf32>) {
  %o, %lse = attn.combine %po, %pl {layout = #attn.layout<bshd>}
      : tensor<3x1x4x1x16xf32>, tensor<3x1x4x1xf32> -> tensor<1x1x4x16xbf16>, tensor<1x4x1xf32>
  return %o, %lse : tensor<1x1x4x16xbf16>, tensor<1x4x1xf32>
}

// -----

// The gradient by recomputation, GQA with groups of 2: P = exp(S - LSE)
// (0 on rows with LSE = -inf), Di = rowsum(dO * O), dS = P * (dO V^T - Di),
// dQ = scale dS K, and per query head dK = scale dS^T Q, dV = P^T dO, then
// summed over the 2 query heads of each KV head.

// CHECK-DAG: #[[$ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[$Q:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$KV:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d3, d4)>
// CHECK-DAG: #[[$BHIJ:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$K_DQ:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d4, d3)>
// CHECK-DAG: #[[$ST:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d2)>
// CHECK-DAG: #[[$QT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-DAG: #[[$GROUP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d2, d3)>

// CHECK-LABEL: func @attention_grad
// CHECK-SAME: (%[[Q:[a-zA-Z0-9_]+]]: tensor<1x4x3x16xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<1x2x5x16xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<1x2x5x8xf32>,
// CHECK-SAME: %[[O:[a-zA-Z0-9_]+]]: tensor<1x4x3x8xf32>, %[[DO:[a-zA-Z0-9_]+]]: tensor<1x4x3x8xf32>, %[[LSE:[a-zA-Z0-9_]+]]: tensor<1x4x3xf32>)
// CHECK-DAG: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 2.500000e-01 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[QK:.+]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$KV]], #[[$BHIJ]]]
// CHECK-SAME: ins(%[[Q]], %[[K]] :
// CHECK: %[[S:.+]] = linalg.generic {{.*}} ins(%[[QK]] :
//
// CHECK: %[[P:.+]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ROW]], #[[$ID4]]]
// CHECK-SAME: ins(%[[S]], %[[LSE]] : tensor<1x4x3x5xf32>, tensor<1x4x3xf32>)
// CHECK: math.exp
// CHECK: %[[DEAD:.+]] = arith.cmpf oeq, %{{.+}}, %[[NINF]] : f32
// CHECK: arith.select %[[DEAD]], %[[ZERO]], %{{.+}} : f32
//
// CHECK: %[[DI:.+]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ID4]], #[[$ROW]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[DO]], %[[O]] : tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>)
// CHECK: %[[DP:.+]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$KV]], #[[$BHIJ]]]
// CHECK-SAME: ins(%[[DO]], %[[V]] : tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>)
// CHECK: %[[DS:.+]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ID4]], #[[$ROW]], #[[$ID4]]]
// CHECK-SAME: ins(%[[P]], %[[DP]], %[[DI]] :
// CHECK-NEXT: ^bb0(%[[P_IJ:.+]]: f32, %[[DP_IJ:.+]]: f32, %[[D_I:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[DIFF:.+]] = arith.subf %[[DP_IJ]], %[[D_I]] : f32
// CHECK-NEXT: arith.mulf %[[P_IJ]], %[[DIFF]] : f32
//
// CHECK: %[[DQ:.+]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$K_DQ]], #[[$BHIJ]]]
// CHECK-SAME: ins(%[[DS]], %[[K]] : tensor<1x4x3x5xf32>, tensor<1x2x5x16xf32>) outs(%{{.+}} : tensor<1x4x3x16xf32>)
// CHECK: arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK: %[[DK_H:.+]] = linalg.generic {indexing_maps = [#[[$ST]], #[[$QT]], #[[$BHIJ]]]
// CHECK-SAME: ins(%[[DS]], %[[Q]] : tensor<1x4x3x5xf32>, tensor<1x4x3x16xf32>) outs(%{{.+}} : tensor<1x4x5x16xf32>)
// CHECK: arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK: %[[DV_H:.+]] = linalg.generic {indexing_maps = [#[[$ST]], #[[$QT]], #[[$BHIJ]]]
// CHECK-SAME: ins(%[[P]], %[[DO]] : tensor<1x4x3x5xf32>, tensor<1x4x3x8xf32>) outs(%{{.+}} : tensor<1x4x5x8xf32>)
//
// CHECK: %[[DQ_OUT:.+]] = linalg.generic {{.*}} ins(%[[DQ]] :
// CHECK: %[[DK_G:.+]] = tensor.expand_shape %[[DK_H]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 5, 16] : tensor<1x4x5x16xf32> into tensor<1x2x2x5x16xf32>
// CHECK: %[[DK:.+]] = linalg.generic {indexing_maps = [#[[$GROUP]], #[[$BHIJ]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[DK_G]] : tensor<1x2x2x5x16xf32>) outs(%{{.+}} : tensor<1x2x5x16xf32>)
// CHECK: %[[DK_OUT:.+]] = linalg.generic {{.*}} ins(%[[DK]] :
// CHECK: %[[DV_G:.+]] = tensor.expand_shape %[[DV_H]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 5, 8] : tensor<1x4x5x8xf32> into tensor<1x2x2x5x8xf32>
// CHECK: %[[DV:.+]] = linalg.generic {indexing_maps = [#[[$GROUP]], #[[$BHIJ]]]
// CHECK-SAME: ins(%[[DV_G]] : tensor<1x2x2x5x8xf32>) outs(%{{.+}} : tensor<1x2x5x8xf32>)
// CHECK: %[[DV_OUT:.+]] = linalg.generic {{.*}} ins(%[[DV]] :
// CHECK: return %[[DQ_OUT]], %[[DK_OUT]], %[[DV_OUT]] : tensor<1x4x3x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x8xf32>
func.func @attention_grad(%q: tensor<1x4x3x16xf32>, %k: tensor<1x2x5x16xf32>, %v: tensor<1x2x5x8xf32>, %o: tensor<1x4x3x8xf32>, %do: tensor<1x4x3x8xf32>, %lse: tensor<1x4x3xf32>) -> (tensor<1x4x3x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x8xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x3x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x8xf32>, tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>, tensor<1x4x3xf32>
      -> tensor<1x4x3x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x8xf32>
  return %dq, %dk, %dv : tensor<1x4x3x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x8xf32>
}

// -----

// The pass leaves everything that is not an attn op alone, including a
// hand-written matmul-softmax-matmul chain.

// CHECK-LABEL: func @not_attn
// CHECK-SAME: (%[[A:[a-zA-Z0-9_]+]]: tensor<2x4x8xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<2x8x6xf32>, %[[C:[a-zA-Z0-9_]+]]: tensor<2x6x8xf32>)
// CHECK: %[[E0:.+]] = tensor.empty() : tensor<2x4x6xf32>
// CHECK: %[[S:.+]] = linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%[[E0]] : tensor<2x4x6xf32>)
// CHECK: %[[P:.+]] = linalg.softmax dimension(2) ins(%[[S]] : tensor<2x4x6xf32>) outs(%[[E0]] : tensor<2x4x6xf32>)
// CHECK: %[[E1:.+]] = tensor.empty() : tensor<2x4x8xf32>
// CHECK: %[[O:.+]] = linalg.batch_matmul ins(%[[P]], %[[C]] : tensor<2x4x6xf32>, tensor<2x6x8xf32>) outs(%[[E1]] : tensor<2x4x8xf32>)
// CHECK: return %[[O]]
// CHECK-NOT: linalg.generic
func.func @not_attn(%a: tensor<2x4x8xf32>, %b: tensor<2x8x6xf32>, %c: tensor<2x6x8xf32>) -> tensor<2x4x8xf32> {
  %e0 = tensor.empty() : tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%e0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<2x4x6xf32>) outs(%e0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %e1 = tensor.empty() : tensor<2x4x8xf32>
  %o = linalg.batch_matmul ins(%p, %c : tensor<2x4x6xf32>, tensor<2x6x8xf32>) outs(%e1 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Only the attn op is rewritten; the ops around it stay as they are.

// CHECK-LABEL: func @mixed
// CHECK: %[[X:.+]] = arith.addf %{{.+}}, %{{.+}} : tensor<1x1x2x4xf32>
// CHECK-NOT: attn.attention
// CHECK: linalg.generic {{.*}} ins(%[[X]], %{{.+}} :
// CHECK: %[[O4:.+]] = tensor.collapse_shape
// CHECK: %[[R:.+]] = linalg.generic {{.*}} ins(%[[O4]] :
// CHECK: %[[Y:.+]] = arith.mulf %[[R]], %[[R]] : tensor<1x1x2x4xf32>
// CHECK: return %[[Y]]
func.func @mixed(%q: tensor<1x1x2x4xf32>, %k: tensor<1x1x3x4xf32>, %v: tensor<1x1x3x4xf32>) -> tensor<1x1x2x4xf32> {
  %x = arith.addf %q, %q : tensor<1x1x2x4xf32>
  %o = attn.attention %x, %k, %v : tensor<1x1x2x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32> -> tensor<1x1x2x4xf32>
  %y = arith.mulf %o, %o : tensor<1x1x2x4xf32>
  return %y : tensor<1x1x2x4xf32>
}

// -----

// A result more or less static than the operands it follows from (the
// verifier allows either): the computed tensor is cast to the declared type.

// CHECK-LABEL: func @result_types
// CHECK: %[[L:.+]] = tensor.collapse_shape {{.*}} into tensor<1x4x7xf32>
// CHECK: %[[OC:.+]] = tensor.cast %{{.+}} : tensor<1x4x7x8xf16> to tensor<?x4x?x8xf16>
// CHECK: %[[LC:.+]] = tensor.cast %[[L]] : tensor<1x4x7xf32> to tensor<1x4x?xf32>
// CHECK: return %[[OC]], %[[LC]] : tensor<?x4x?x8xf16>, tensor<1x4x?xf32>
func.func @result_types(%q: tensor<1x4x7x8xf16>, %k: tensor<1x4x9x8xf16>, %v: tensor<1x4x9x8xf16>) -> (tensor<?x4x?x8xf16>, tensor<1x4x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<1x4x7x8xf16>, tensor<1x4x9x8xf16>, tensor<1x4x9x8xf16> -> tensor<?x4x?x8xf16>, tensor<1x4x?xf32>
  return %o, %lse : tensor<?x4x?x8xf16>, tensor<1x4x?xf32>
}

// -----

// CHECK-LABEL: func @result_types_static
// CHECK: %[[DQ:.+]] = tensor.cast %{{.+}} : tensor<?x2x?x8xf32> to tensor<1x2x5x8xf32>
// CHECK: %[[DK:.+]] = tensor.cast %{{.+}} : tensor<?x2x?x8xf32> to tensor<1x2x5x8xf32>
// CHECK: %[[DV:.+]] = tensor.cast %{{.+}} : tensor<?x2x?x8xf32> to tensor<1x2x5x8xf32>
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
func.func @result_types_static(%q: tensor<?x2x?x8xf32>, %k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x8xf32>, %o: tensor<?x2x?x8xf32>, %do: tensor<?x2x?x8xf32>, %lse: tensor<?x2x?xf32>) -> (tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?xf32>
      -> tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>
  return %dq, %dk, %dv : tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>
}

// -----

// CHECK-LABEL: func @result_types_split
// CHECK: %[[PO:.+]] = tensor.cast %{{.+}} : tensor<2x1x4x1x8xf32> to tensor<2x?x4x1x8xf32>
// CHECK: %[[PL:.+]] = tensor.cast %{{.+}} : tensor<2x1x4x1xf32> to tensor<2x1x4x?xf32>
// CHECK: %[[O:.+]] = tensor.cast %{{.+}} : tensor<?x4x1x8xf16> to tensor<1x4x1x8xf16>
// CHECK: return %[[PO]], %[[PL]], %[[O]]
func.func @result_types_split(%q: tensor<1x4x1x8xf16>, %k: tensor<1x2x9x8xf16>, %v: tensor<1x2x9x8xf16>) -> (tensor<2x?x4x1x8xf32>, tensor<2x1x4x?xf32>, tensor<1x4x1x8xf16>) {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 2 : i64} : tensor<1x4x1x8xf16>, tensor<1x2x9x8xf16>, tensor<1x2x9x8xf16> -> tensor<2x?x4x1x8xf32>, tensor<2x1x4x?xf32>
  %o = attn.combine %po, %pl : tensor<2x?x4x1x8xf32>, tensor<2x1x4x?xf32> -> tensor<1x4x1x8xf16>
  return %po, %pl, %o : tensor<2x?x4x1x8xf32>, tensor<2x1x4x?xf32>, tensor<1x4x1x8xf16>
}

// -----

// A paged cache is gathered into dense K and V first, reading page
// table[b, j / page_size] only for keys inside the sequence; keys past
// kv_lens[b] (clamped to [0, Sk]) are hidden and the bottom-right diagonal
// and the split chunks follow each sequence's count.

// CHECK-LABEL: func @paged_partial
// CHECK-SAME: (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x1x4x16xf32>, %[[POOL:[a-zA-Z0-9_]+]]: tensor<5x8x2x16xf32>, %[[TABLE:[a-zA-Z0-9_]+]]: tensor<2x3xi32>, %[[LENS:[a-zA-Z0-9_]+]]: tensor<2xi32>)
// CHECK: %[[DENSE:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<2x24x2x16xf32>)
// CHECK: %[[LEN:.+]] = tensor.extract %[[LENS]]
// CHECK: arith.index_cast %[[LEN]] : i32 to index
// CHECK: scf.if
// CHECK: %[[PAGE:.+]] = tensor.extract %[[TABLE]]
// CHECK: arith.index_cast %[[PAGE]] : i32 to index
// CHECK: tensor.extract %[[POOL]]
// CHECK: } else {
// CHECK: linalg.generic {{.*}} ins(%[[Q]], %[[DENSE]] : tensor<2x1x4x16xf32>, tensor<2x24x2x16xf32>)
// CHECK: tensor.extract %[[LENS]]
// CHECK: arith.cmpi slt
// CHECK: arith.subi
func.func @paged_partial(%q: tensor<2x1x4x16xf32>, %pool: tensor<5x8x2x16xf32>, %table: tensor<2x3xi32>, %lens: tensor<2xi32>) -> tensor<3x2x4x1x16xf32> {
  %po, %pl = attn.attention_partial %q, %pool, %pool kv_lens(%lens : tensor<2xi32>) block_table(%table : tensor<2x3xi32>) {num_splits = 3 : i64, layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>}
      : tensor<2x1x4x16xf32>, tensor<5x8x2x16xf32>, tensor<5x8x2x16xf32> -> tensor<3x2x4x1x16xf32>, tensor<3x2x4x1xf32>
  return %po : tensor<3x2x4x1x16xf32>
}
