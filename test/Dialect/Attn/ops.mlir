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

// Per-sequence key counts, and a paged cache: K and V are page pools
// [P, page_size, Hkv, D] in bshd, the block table [B, max_pages].
// CHECK-LABEL: func @kv_cache
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} kv_lens(%{{.*}} : tensor<?xi32>) {causal = #attn.causal<bottom_right>}
// CHECK: attn.attention_partial %{{.*}}, %{{.*}}, %{{.*}} kv_lens(%{{.*}} : tensor<8xi32>) block_table(%{{.*}} : tensor<8x?xi32>) {layout = #attn.layout<bshd>, num_splits = 4 : i64}
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} kv_lens(%{{.*}} : tensor<2xi32>) block_table(%{{.*}} : tensor<2x3xi32>) mask(%{{.*}} : tensor<2x1x5x48xi1>)
func.func @kv_cache(%q: tensor<?x8x5x64xf16>, %k: tensor<?x2x40x64xf16>, %lens: tensor<?xi32>,
                    %dq: tensor<8x1x32x128xbf16>, %pool: tensor<?x16x8x128xbf16>, %table: tensor<8x?xi32>, %lens8: tensor<8xi32>,
                    %q2: tensor<2x8x5x64xf32>, %pool2: tensor<100x2x16x64xf32>, %table2: tensor<2x3xi32>, %lens2: tensor<2xi32>, %m: tensor<2x1x5x48xi1>) {
  %o = attn.attention %q, %k, %k kv_lens(%lens : tensor<?xi32>) {causal = #attn.causal<bottom_right>}
      : tensor<?x8x5x64xf16>, tensor<?x2x40x64xf16>, tensor<?x2x40x64xf16> -> tensor<?x8x5x64xf16>
  %po, %pl = attn.attention_partial %dq, %pool, %pool kv_lens(%lens8 : tensor<8xi32>) block_table(%table : tensor<8x?xi32>) {num_splits = 4 : i64, layout = #attn.layout<bshd>}
      : tensor<8x1x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16> -> tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32>
  %o2, %l2 = attn.attention %q2, %pool2, %pool2 kv_lens(%lens2 : tensor<2xi32>) block_table(%table2 : tensor<2x3xi32>) mask(%m : tensor<2x1x5x48xi1>)
      : tensor<2x8x5x64xf32>, tensor<100x2x16x64xf32>, tensor<100x2x16x64xf32> -> tensor<2x8x5x64xf32>, tensor<2x8x5xf32>
  return
}

// Packed batches: the sequences back to back in Q (and K, V), with their
// offsets; against a paged cache for chunked prefill.
// CHECK-LABEL: func @packed
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} query_offsets(%{{.*}} : tensor<?xi32>) key_offsets(%{{.*}} : tensor<?xi32>) {causal = #attn.causal<bottom_right>, layout = #attn.layout<bshd>}
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} query_offsets(%{{.*}} : tensor<3xi32>) kv_lens(%{{.*}} : tensor<2xi32>) block_table(%{{.*}} : tensor<2x4xi32>)
func.func @packed(%q: tensor<1x?x8x64xbf16>, %k: tensor<1x?x2x64xbf16>, %qo: tensor<?xi32>, %ko: tensor<?xi32>,
                  %q2: tensor<1x8x40x64xbf16>, %pool: tensor<9x2x16x64xbf16>, %qo2: tensor<3xi32>, %lens: tensor<2xi32>, %table: tensor<2x4xi32>) {
  %o, %l = attn.attention %q, %k, %k query_offsets(%qo : tensor<?xi32>) key_offsets(%ko : tensor<?xi32>) {causal = #attn.causal<bottom_right>, layout = #attn.layout<bshd>}
      : tensor<1x?x8x64xbf16>, tensor<1x?x2x64xbf16>, tensor<1x?x2x64xbf16> -> tensor<1x?x8x64xbf16>, tensor<1x8x?xf32>
  %o2 = attn.attention %q2, %pool, %pool query_offsets(%qo2 : tensor<3xi32>) kv_lens(%lens : tensor<2xi32>) block_table(%table : tensor<2x4xi32>)
      : tensor<1x8x40x64xbf16>, tensor<9x2x16x64xbf16>, tensor<9x2x16x64xbf16> -> tensor<1x8x40x64xbf16>
  return
}

// Balanced split-KV (FlashInfer's plan): N * B work items and the first
// item of each sequence, which the combine reads.
// CHECK-LABEL: func @balanced
// CHECK: %[[PO:.+]], %[[PL:.+]], %[[OFF:.+]] = attn.attention_partial %{{.*}}, %{{.*}}, %{{.*}} kv_lens(%{{.*}} : tensor<8xi32>) block_table(%{{.*}} : tensor<8x?xi32>) {balanced, layout = #attn.layout<bshd>, num_splits = 4 : i64} : {{.*}} -> tensor<32x1x32x1x128xf32>, tensor<32x1x32x1xf32>, tensor<9xi32>
// CHECK: attn.combine %[[PO]], %[[PL]] split_offsets(%[[OFF]] : tensor<9xi32>) {layout = #attn.layout<bshd>} : tensor<32x1x32x1x128xf32>, tensor<32x1x32x1xf32> -> tensor<8x1x32x128xbf16>, tensor<8x32x1xf32>
// CHECK: attn.attention_partial {{.*}} {balanced, num_splits = 2 : i64} : {{.*}} -> tensor<?x1x8x1x64xf32>, tensor<?x1x8x1xf32>, tensor<?xi32>
func.func @balanced(%q: tensor<8x1x32x128xbf16>, %k: tensor<100x16x8x128xbf16>, %v: tensor<100x16x8x128xbf16>, %lens: tensor<8xi32>, %table: tensor<8x?xi32>, %q2: tensor<?x8x1x64xf16>, %k2: tensor<?x2x512x64xf16>, %lens2: tensor<?xi32>) -> (tensor<8x1x32x128xbf16>, tensor<8x32x1xf32>, tensor<?xi32>) {
  %po, %pl, %offsets = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<8xi32>) block_table(%table : tensor<8x?xi32>) {num_splits = 4 : i64, balanced, layout = #attn.layout<bshd>}
      : tensor<8x1x32x128xbf16>, tensor<100x16x8x128xbf16>, tensor<100x16x8x128xbf16>
      -> tensor<32x1x32x1x128xf32>, tensor<32x1x32x1xf32>, tensor<9xi32>
  %o, %lse = attn.combine %po, %pl split_offsets(%offsets : tensor<9xi32>) {layout = #attn.layout<bshd>} : tensor<32x1x32x1x128xf32>, tensor<32x1x32x1xf32> -> tensor<8x1x32x128xbf16>, tensor<8x32x1xf32>
  %po2, %pl2, %offsets2 = attn.attention_partial %q2, %k2, %k2 kv_lens(%lens2 : tensor<?xi32>) {num_splits = 2 : i64, balanced}
      : tensor<?x8x1x64xf16>, tensor<?x2x512x64xf16>, tensor<?x2x512x64xf16>
      -> tensor<?x1x8x1x64xf32>, tensor<?x1x8x1xf32>, tensor<?xi32>
  return %o, %lse, %offsets2 : tensor<8x1x32x128xbf16>, tensor<8x32x1xf32>, tensor<?xi32>
}
