// RUN: attn-opt %s -split-input-file --attn-lower-tiles | FileCheck %s

// The CPU lowering of the tile form maps each tile op onto upstream IR and
// decides nothing: launch parameters become the op's values, row loads and
// stores loops over the rows with the row region inlined (rows past `rows`
// zero-filled), products, maps and reductions linalg.generics on tensors
// (memory tiles read in place through bufferization.to_tensor restrict).

// CHECK-LABEL: func.func @tile_step(
// CHECK-SAME:    %[[Q:[^:]+]]: memref<?x?x?x64xf16, {{.*}}>, %[[QS:[^:]+]]: memref<32x64xf16, 3>, %[[KS:[^:]+]]: memref<16x64xf16, 3>, %[[VS:[^:]+]]: memref<16x64xf16, 3>, %[[LSE:[^:]+]]: memref<?x?x?xf32>, %[[N:[^:]+]]: index, %[[B:[^:]+]]: index, %[[H:[^:]+]]: index
// CHECK-NOT:     attn.tile
// CHECK-DAG:     %[[W:.+]] = arith.constant 16 : index
// CHECK-DAG:     %[[SL2:.+]] = arith.constant 1.800000e-01 : f32
// CHECK:         scf.for %[[R:.+]] = %{{.+}} to %[[N]]
// CHECK-NEXT:      %[[I:.+]] = arith.addi %[[R]], %[[W]]
// CHECK-NEXT:      %[[DST:.+]] = memref.subview %[[QS]][%[[R]], 0] [1, 64]
// CHECK-NEXT:      %[[SRC:.+]] = memref.subview %[[Q]][%[[B]], %[[H]], %[[I]], 0] [1, 1, 1, 64]
// CHECK-NEXT:      linalg.copy ins(%[[SRC]] : {{.*}}) outs(%[[DST]] :
// CHECK:         scf.for %[[R:.+]] = %[[N]] to %{{.+}}
// CHECK:           linalg.fill
// CHECK:         %[[QT:.+]] = bufferization.to_tensor %[[QS]] restrict
// CHECK:         %[[KT:.+]] = bufferization.to_tensor %[[KS]] restrict
// CHECK:         %[[S:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[QT]], %[[KT]] :
// CHECK:           arith.extf
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         %[[M:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[S]] :
// CHECK:           arith.maximumf
// CHECK:         %[[P:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[S]], %[[M]] :
// CHECK:           linalg.index 0
// CHECK:           linalg.index 1
// CHECK:           arith.mulf %{{.+}}, %[[SL2]]
// CHECK:           math.exp2
// CHECK:           arith.truncf
// CHECK:         %[[VT:.+]] = bufferization.to_tensor %[[VS]] restrict
// CHECK:         %[[ACC:.+]] = linalg.generic {{.*}} ins(%[[P]], %[[VT]] :
// CHECK:         %[[MB:.+]] = bufferization.to_buffer %[[M]] read_only
// CHECK:         scf.for %[[R:.+]] = %{{.+}} to %[[N]]
// CHECK-NEXT:      %[[V:.+]] = memref.load %[[MB]][%[[R]]]
// CHECK-NEXT:      memref.store %[[V]], %[[LSE]][%[[B]], %[[H]], %[[R]]]
// CHECK:         return %[[ACC]]
func.func @tile_step(%q: memref<?x?x?x64xf16, strided<[?, ?, ?, ?], offset: ?>>, %qs: memref<32x64xf16, 3>,
                     %ks: memref<16x64xf16, 3>, %vs: memref<16x64xf16, 3>, %lse: memref<?x?x?xf32>,
                     %n: index, %b: index, %h: index) -> tensor<32x64xf32> {
  %w = attn.tile.param "window" = 16 : index
  %sl2 = attn.tile.param "scale_log2" = 0.18 : f32
  attn.tile.load %q into %qs rows %n : memref<?x?x?x64xf16, strided<[?, ?, ?, ?], offset: ?>> into memref<32x64xf16, 3> {
  ^bb0(%r: index):
    %i = arith.addi %r, %w : index
    attn.tile.yield %b, %h, %i : index, index, index
  }
  %zero = arith.constant dense<0.0> : tensor<32x16xf32>
  %s = attn.tile.matmul %qs, %ks, %zero {transpose_rhs} : memref<32x64xf16, 3>, memref<16x64xf16, 3>, tensor<32x16xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<32xf32>
  %m = attn.tile.reduce <max> %s, %ninf : tensor<32x16xf32> -> tensor<32xf32>
  %p = attn.tile.map ins(%s, %m : tensor<32x16xf32>, tensor<32xf32>) -> tensor<32x16xf16> {
  ^bb0(%r: index, %c: index, %x: f32, %mx: f32):
    %d = arith.subf %x, %mx : f32
    %y = arith.mulf %d, %sl2 : f32
    %e = math.exp2 %y : f32
    %t = arith.truncf %e : f32 to f16
    attn.tile.yield %t : f16
  }
  %acc0 = arith.constant dense<0.0> : tensor<32x64xf32>
  %acc = attn.tile.matmul %p, %vs, %acc0 : tensor<32x16xf16>, memref<16x64xf16, 3>, tensor<32x64xf32>
  attn.tile.store %m into %lse rows %n : tensor<32xf32> into memref<?x?x?xf32> {
  ^bb0(%r: index):
    attn.tile.yield %b, %h, %r : index, index, index
  }
  return %acc : tensor<32x64xf32>
}

// -----

// Key slices: the product batched over the slices with the lhs shared, a
// reduction over the last dimension and one over the slices, and a map's
// explicit broadcast become the generics' indexing maps.

// CHECK-DAG: #[[LHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[RHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[ACC:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROWS:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @key_slices(
// CHECK:         linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[ACC]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.+}}, %{{.+}} : tensor<16x64xf16>, tensor<4x16x64xf16>) outs(%{{.+}} : tensor<4x16x16xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.+}} : tensor<4x16x16xf32>) outs(%{{.+}} : tensor<4x16xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%{{.+}} : tensor<4x16xf32>) outs(%{{.+}} : tensor<16xf32>)
// CHECK:         linalg.generic {indexing_maps = [#{{.+}}, #[[ROWS]], #{{.+}}], iterator_types = ["parallel", "parallel"]} ins(%{{.+}}, %{{.+}} : tensor<4x16xf32>, tensor<16xf32>)
func.func @key_slices(%qs: memref<16x64xf16, 3>, %ks: memref<4x16x64xf16, 3>) -> tensor<4x16xf32> {
  %zero = arith.constant dense<0.0> : tensor<4x16x16xf32>
  %s = attn.tile.matmul %qs, %ks, %zero {transpose_rhs} : memref<16x64xf16, 3>, memref<4x16x64xf16, 3>, tensor<4x16x16xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<4x16xf32>
  %m = attn.tile.reduce <max> %s, %ninf {dim = 2 : i64} : tensor<4x16x16xf32> -> tensor<4x16xf32>
  %ninf1 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %mm = attn.tile.reduce <max> %m, %ninf1 {dim = 0 : i64} : tensor<4x16xf32> -> tensor<16xf32>
  %w = attn.tile.map ins(%m, %mm : tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> {
  ^bb0(%i: index, %j: index, %a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    attn.tile.yield %d : f32
  } {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>]}
  return %w : tensor<4x16xf32>
}

// -----

// A transposed lhs reads the memory tile as [K, M]; an accumulating store
// adds element by element with atomic adds.

// CHECK-DAG:   #[[TL:.+]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-LABEL: func.func @dq_accumulate(
// CHECK:         linalg.generic {indexing_maps = [#[[TL]], #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.+}}, %{{.+}} : tensor<64x32xf16>, tensor<64x16xf16>) outs(%{{.+}} : tensor<32x16xf32>)
// CHECK:         scf.for %[[R:.+]] =
// CHECK:           scf.for %[[C:.+]] =
// CHECK:             %[[V:.+]] = memref.load %{{.+}}[%[[R]], %[[C]]]
// CHECK:             memref.atomic_rmw addf %[[V]], %{{.+}}[%{{.+}}, %{{.+}}, %[[R]], %[[C]]]
func.func @dq_accumulate(%dss: memref<64x32xf16, 3>, %ks: memref<64x16xf16, 3>,
                         %acc: memref<?x?x?x16xf32>, %n: index, %b: index, %h: index) {
  %zero = arith.constant dense<0.0> : tensor<32x16xf32>
  %part = attn.tile.matmul %dss, %ks, %zero {transpose_lhs} : memref<64x32xf16, 3>, memref<64x16xf16, 3>, tensor<32x16xf32>
  attn.tile.store %part into %acc rows %n : tensor<32x16xf32> into memref<?x?x?x16xf32> {
  ^bb0(%r: index):
    attn.tile.yield %b, %h, %r : index, index, index
  } {accumulate}
  return
}

// -----

// A transposed store writes the tile's columns as rows: element (c, r)
// lands in column c of row r (the dQ^T product, added to dQ); without
// accumulate, as plain stores.

// CHECK-LABEL: func.func @dq_transposed(
// CHECK:         scf.for %[[R:.+]] =
// CHECK:           scf.for %[[C:.+]] =
// CHECK:             %[[V:.+]] = memref.load %{{.+}}[%[[C]], %[[R]]]
// CHECK:             memref.atomic_rmw addf %[[V]], %{{.+}}[%{{.+}}, %{{.+}}, %[[R]], %[[C]]]
// CHECK:         scf.for %[[R2:.+]] =
// CHECK:           scf.for %[[C2:.+]] =
// CHECK:             %[[W:.+]] = memref.load %{{.+}}[%[[C2]], %[[R2]]]
// CHECK:             memref.store %[[W]], %{{.+}}[%{{.+}}, %{{.+}}, %[[R2]], %[[C2]]]
func.func @dq_transposed(%t: tensor<16x32xf32>, %acc: memref<?x?x?x12xf32>,
                         %n: index, %b: index, %h: index) {
  attn.tile.store %t into %acc rows %n : tensor<16x32xf32> into memref<?x?x?x12xf32> {
  ^bb0(%r: index):
    attn.tile.yield %b, %h, %r : index, index, index
  } {accumulate, transpose}
  attn.tile.store %t into %acc rows %n : tensor<16x32xf32> into memref<?x?x?x12xf32> {
  ^bb0(%r: index):
    attn.tile.yield %b, %h, %r : index, index, index
  } {transpose}
  return
}

// -----

// A balanced split-KV work item: SplitWork's scalar loops over the
// sequences (the lengths summed in 64 bits for the chunk, then the search),
// the region inlined in each; the one that holds the item gives its
// sequence and key range.
// CHECK-LABEL: func.func @work_item(
// CHECK-NOT:     attn.tile
// CHECK:         scf.for {{.*}} iter_args(%{{.+}} = %{{.+}}) -> (i64)
// CHECK:           memref.load
// CHECK:         arith.ceildivui {{.*}} : i64
// CHECK:         %[[FOUND:.+]]:4 = scf.for {{.*}} -> (index, index, i1, index)
// CHECK:           memref.load
// CHECK:           arith.ceildivui {{.*}} : index
// CHECK:         memref.load %{{.+}}[%[[FOUND]]#0]
// CHECK:         arith.minui
// CHECK:         return %[[FOUND]]#0
func.func @work_item(%lens: memref<?xi32>, %item: index, %items: index, %b: index, %sk: index) -> (index, index, index) {
  %s, %begin, %end = attn.tile.work_item %item of %items over %b capacity %sk {
  ^bb0(%seq: index):
    %n = memref.load %lens[%seq] : memref<?xi32>
    %l = arith.index_cast %n : i32 to index
    attn.tile.yield %l : index
  }
  return %s, %begin, %end : index, index, index
}
