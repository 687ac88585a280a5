// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// The tile form's ops, as attn-tile writes them, round trip.

// CHECK-LABEL: func @tile_step
// CHECK:       %[[W:.+]] = attn.tile.param "window" = 16 : index
// CHECK:       %[[SL2:.+]] = attn.tile.param "scale_log2" = 1.800000e-01 : f32
// CHECK:       attn.tile.load %{{.+}} into %{{.+}} rows %{{.+}} : memref<?x?x?x64xf16, strided<[?, ?, ?, ?], offset: ?>> into memref<32x64xf16, 3> {
// CHECK:         attn.tile.yield %{{.+}}, %{{.+}}, %{{.+}} : index, index, index
// CHECK:       attn.tile.matmul %{{.+}}, %{{.+}}, %{{.+}} {transpose_rhs} : memref<32x64xf16, 3>, memref<16x64xf16, 3>, tensor<32x16xf32>
// CHECK:       attn.tile.reduce <max> %{{.+}}, %{{.+}} : tensor<32x16xf32> -> tensor<32xf32>
// CHECK:       attn.tile.map ins(%{{.+}}, %{{.+}} : tensor<32x16xf32>, tensor<32xf32>) -> tensor<32x16xf16> {
// CHECK:       attn.tile.matmul %{{.+}}, %{{.+}}, %{{.+}} : tensor<32x16xf16>, memref<16x64xf16, 3>, tensor<32x64xf32>
// CHECK:       attn.tile.store %{{.+}} into %{{.+}} rows %{{.+}} : tensor<32xf32> into memref<?x?x?xf32> {
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

// Key slices: a batched product against a ring stage cut into slices, a
// reduction over the slices, a map with an explicit broadcast.
// CHECK-LABEL: func @key_slices
// CHECK:       attn.tile.matmul %{{.+}}, %{{.+}}, %{{.+}} {transpose_rhs} : memref<16x64xf16, 3>, memref<4x16x64xf16, 3>, tensor<4x16x16xf32>
// CHECK:       attn.tile.reduce <max> %{{.+}}, %{{.+}} {dim = 2 : i64} : tensor<4x16x16xf32> -> tensor<4x16xf32>
// CHECK:       attn.tile.reduce <max> %{{.+}}, %{{.+}} {dim = 0 : i64} : tensor<4x16xf32> -> tensor<16xf32>
// CHECK:       attn.tile.map ins(%{{.+}}, %{{.+}} : tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> {
// CHECK:       } {indexing_maps = [#{{.+}}, #{{.+}}]}
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

// The non-deterministic backward's dQ step: dS^T staged in a memory tile,
// multiplied transposed, added to the f32 accumulator.

// CHECK-LABEL: func @dq_accumulate
// CHECK:       attn.tile.store %{{.+}} into %{{.+}} rows %{{.+}} : tensor<64x32xf16> into memref<64x32xf16, 3> {
// CHECK:       attn.tile.matmul %{{.+}}, %{{.+}}, %{{.+}} {transpose_lhs} : memref<64x32xf16, 3>, memref<64x16xf16, 3>, tensor<32x16xf32>
// CHECK:       attn.tile.store %{{.+}} into %{{.+}} rows %{{.+}} : tensor<32x16xf32> into memref<?x?x?x16xf32> {
// CHECK:       } {accumulate}
func.func @dq_accumulate(%ds: tensor<64x32xf16>, %dss: memref<64x32xf16, 3>, %ks: memref<64x16xf16, 3>,
                         %acc: memref<?x?x?x16xf32>, %n: index, %b: index, %h: index) {
  %c64 = arith.constant 64 : index
  attn.tile.store %ds into %dss rows %c64 : tensor<64x32xf16> into memref<64x32xf16, 3> {
  ^bb0(%r: index):
    attn.tile.yield %r : index
  }
  %zero = arith.constant dense<0.0> : tensor<32x16xf32>
  %part = attn.tile.matmul %dss, %ks, %zero {transpose_lhs} : memref<64x32xf16, 3>, memref<64x16xf16, 3>, tensor<32x16xf32>
  attn.tile.store %part into %acc rows %n : tensor<32x16xf32> into memref<?x?x?x16xf32> {
  ^bb0(%r: index):
    attn.tile.yield %b, %h, %r : index, index, index
  } {accumulate}
  return
}

// A head dim padded to whole tensor-core steps: rows of 40 loaded into
// tiles of 48 columns (the rest zeros) and stored back as 40.

// CHECK-LABEL: func @padded_rows
// CHECK:       attn.tile.load %{{.+}} into %{{.+}} rows %{{.+}} : memref<?x?x?x40xbf16> into memref<32x48xbf16, 3> {
// CHECK:       attn.tile.store %{{.+}} into %{{.+}} rows %{{.+}} : tensor<32x48xbf16> into memref<?x?x?x40xbf16> {
func.func @padded_rows(%q: memref<?x?x?x40xbf16>, %qs: memref<32x48xbf16, 3>,
                       %t: tensor<32x48xbf16>, %o: memref<?x?x?x40xbf16>, %n: index) {
  attn.tile.load %q into %qs rows %n : memref<?x?x?x40xbf16> into memref<32x48xbf16, 3> {
  ^bb0(%r: index):
    attn.tile.yield %r, %r, %r : index, index, index
  }
  attn.tile.store %t into %o rows %n : tensor<32x48xbf16> into memref<?x?x?x40xbf16> {
  ^bb0(%r: index):
    attn.tile.yield %r, %r, %r : index, index, index
  }
  return
}

// A balanced split-KV work item: the region gives a sequence's key count.
// CHECK-LABEL: func @work_item
// CHECK:       %{{.+}}, %{{.+}}, %{{.+}} = attn.tile.work_item %{{.+}} of %{{.+}} over %{{.+}} capacity %{{.+}} {
// CHECK:         attn.tile.yield %{{.+}} : index
func.func @work_item(%lens: memref<?xi32>, %item: index, %items: index, %b: index, %sk: index) -> (index, index, index) {
  %s, %begin, %end = attn.tile.work_item %item of %items over %b capacity %sk {
  ^bb0(%seq: index):
    %n = memref.load %lens[%seq] : memref<?xi32>
    %l = arith.index_cast %n : i32 to index
    attn.tile.yield %l : index
  }
  return %s, %begin, %end : index, index, index
}

// The ordered dQ mode's turns: await a code, pass one on.
// CHECK-LABEL: func @turns
// CHECK:       attn.tile.await_turn %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] for %{{.+}} : memref<?x?x?xi32>
// CHECK:       attn.tile.pass_turn %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] = %{{.+}} : memref<?x?x?xi32>
func.func @turns(%turns: memref<?x?x?xi32>, %b: index, %h: index, %q0: index, %prev: index, %mine: index) {
  attn.tile.await_turn %turns[%b, %h, %q0] for %prev : memref<?x?x?xi32>
  attn.tile.pass_turn %turns[%b, %h, %q0] = %mine : memref<?x?x?xi32>
  return
}
