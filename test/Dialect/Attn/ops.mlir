// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// CHECK-LABEL: func @plain
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32> -> tensor<2x8x128x64xf32>
func.func @plain(%q: tensor<2x8x128x64xf32>, %k: tensor<2x8x128x64xf32>, %v: tensor<2x8x128x64xf32>) -> tensor<2x8x128x64xf32> {
  %o = attn.attention %q, %k, %v : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32> -> tensor<2x8x128x64xf32>
  return %o : tensor<2x8x128x64xf32>
}

// CHECK-LABEL: func @everything
// CHECK: %{{.*}}, %{{.*}} = attn.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<1x1x77x129xbf16>)
// CHECK-SAME: {causal = #attn.causal<bottom_right>, layout = #attn.layout<bshd>, scale = 5.000000e-01 : f32, window = 16 : i64}
// CHECK-SAME: -> tensor<?x77x8x32xbf16>, tensor<?x8x77xf32>
func.func @everything(%q: tensor<?x77x8x64xbf16>, %k: tensor<?x129x2x64xbf16>, %v: tensor<?x129x2x32xbf16>, %m: tensor<1x1x77x129xbf16>) -> (tensor<?x77x8x32xbf16>, tensor<?x8x77xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m : tensor<1x1x77x129xbf16>)
      {scale = 0.5 : f32, causal = #attn.causal<bottom_right>, window = 16 : i64, layout = #attn.layout<bshd>}
      : tensor<?x77x8x64xbf16>, tensor<?x129x2x64xbf16>, tensor<?x129x2x32xbf16> -> tensor<?x77x8x32xbf16>, tensor<?x8x77xf32>
  return %o, %lse : tensor<?x77x8x32xbf16>, tensor<?x8x77xf32>
}

// CHECK-LABEL: func @bool_mask_top_left
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<7x33xi1>) {causal = #attn.causal<top_left>}
func.func @bool_mask_top_left(%q: tensor<1x4x7x16xf16>, %k: tensor<1x4x33x16xf16>, %v: tensor<1x4x33x16xf16>, %m: tensor<7x33xi1>) -> tensor<1x4x7x16xf16> {
  %o = attn.attention %q, %k, %v mask(%m : tensor<7x33xi1>) {causal = #attn.causal<top_left>}
      : tensor<1x4x7x16xf16>, tensor<1x4x33x16xf16>, tensor<1x4x33x16xf16> -> tensor<1x4x7x16xf16>
  return %o : tensor<1x4x7x16xf16>
}

// CHECK-LABEL: func @split_kv
// CHECK: %[[PO:.+]], %[[PL:.+]] = attn.attention_partial %{{.*}}, %{{.*}}, %{{.*}} {num_splits = 4 : i64}
// CHECK: attn.combine %[[PO]], %[[PL]] {layout = #attn.layout<bshd>} : tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32> -> tensor<8x1x32x128xbf16>, tensor<8x32x1xf32>
func.func @split_kv(%q: tensor<8x32x1x128xbf16>, %k: tensor<8x8x4096x128xbf16>, %v: tensor<8x8x4096x128xbf16>) -> (tensor<8x1x32x128xbf16>, tensor<8x32x1xf32>) {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 4 : i64}
      : tensor<8x32x1x128xbf16>, tensor<8x8x4096x128xbf16>, tensor<8x8x4096x128xbf16> -> tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32>
  %o, %lse = attn.combine %po, %pl {layout = #attn.layout<bshd>} : tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32> -> tensor<8x1x32x128xbf16>, tensor<8x32x1xf32>
  return %o, %lse : tensor<8x1x32x128xbf16>, tensor<8x32x1xf32>
}

// CHECK-LABEL: func @grad
// CHECK: attn.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<top_left>}
// CHECK-SAME: -> tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>
func.func @grad(%q: tensor<2x8x128x64xbf16>, %k: tensor<2x2x128x64xbf16>, %v: tensor<2x2x128x32xbf16>, %o: tensor<2x8x128x32xbf16>, %do: tensor<2x8x128x32xbf16>, %lse: tensor<2x8x128xf32>) -> (tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<top_left>}
      : tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128xf32>
      -> tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>
  return %dq, %dk, %dv : tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x32xbf16>
}
