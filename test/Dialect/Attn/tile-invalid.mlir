// RUN: attn-opt %s -split-input-file -verify-diagnostics

// Every verifier message of the tile form's ops.

func.func @load_type(%src: memref<?x?x?x64xf32>, %t: memref<32x64xf16>, %n: index) {
  // expected-error @+1 {{'attn.tile.load' op source and tile must have one element type, got 'f32' and 'f16'}}
  attn.tile.load %src into %t rows %n : memref<?x?x?x64xf32> into memref<32x64xf16> {
  ^bb0(%r: index):
    attn.tile.yield %r, %r, %r : index, index, index
  }
  return
}

// -----

func.func @load_row(%src: memref<?x?x?x64xf16>, %t: memref<32x48xf16>, %n: index) {
  // expected-error @+1 {{'attn.tile.load' op tile rows hold 48 elements but the source's rows hold 64; a tile row holds a whole static source row}}
  attn.tile.load %src into %t rows %n : memref<?x?x?x64xf16> into memref<32x48xf16> {
  ^bb0(%r: index):
    attn.tile.yield %r, %r, %r : index, index, index
  }
  return
}

// -----

func.func @load_dynamic_row(%src: memref<?x?x?x?xf16>, %t: memref<32x64xf16>, %n: index) {
  // expected-error @+1 {{'attn.tile.load' op tile rows hold 64 elements but the source's rows hold a dynamic count}}
  attn.tile.load %src into %t rows %n : memref<?x?x?x?xf16> into memref<32x64xf16> {
  ^bb0(%r: index):
    attn.tile.yield %r, %r, %r : index, index, index
  }
  return
}

// -----

func.func @load_yield(%src: memref<?x?x?x64xf16>, %t: memref<32x64xf16>, %n: index) {
  // expected-error @+1 {{'attn.tile.load' op region must yield 3 indices (every source dimension but the last), got 2 values}}
  attn.tile.load %src into %t rows %n : memref<?x?x?x64xf16> into memref<32x64xf16> {
  ^bb0(%r: index):
    attn.tile.yield %r, %r : index, index
  }
  return
}

// -----

func.func @load_arg(%src: memref<?x?x?x64xf16>, %t: memref<32x64xf16>, %n: index) {
  // expected-error @+1 {{'attn.tile.load' op region must take one index argument (the tile row), got 2 arguments}}
  attn.tile.load %src into %t rows %n : memref<?x?x?x64xf16> into memref<32x64xf16> {
  ^bb0(%r: index, %s: index):
    attn.tile.yield %r, %r, %r : index, index, index
  }
  return
}

// -----

func.func @matmul_k(%a: memref<32x64xf16>, %b: memref<16x32xf16>, %acc: tensor<32x16xf32>) {
  // expected-error @+1 {{'attn.tile.matmul' op lhs has 64 columns but rhs^T has 32 rows}}
  %s = attn.tile.matmul %a, %b, %acc {transpose_rhs} : memref<32x64xf16>, memref<16x32xf16>, tensor<32x16xf32>
  return
}

// -----

func.func @matmul_acc(%a: memref<32x64xf16>, %b: memref<16x64xf16>, %acc: tensor<16x16xf32>) {
  // expected-error @+1 {{'attn.tile.matmul' op acc must be [32, 16], got 'tensor<16x16xf32>'}}
  %s = attn.tile.matmul %a, %b, %acc {transpose_rhs} : memref<32x64xf16>, memref<16x64xf16>, tensor<16x16xf32>
  return
}

// -----

func.func @matmul_f16_acc(%a: memref<32x64xf16>, %b: memref<16x64xf16>, %acc: tensor<32x16xf16>) {
  // expected-error @+1 {{'attn.tile.matmul' op acc and result must be one f32 tile of rank 2}}
  %s = attn.tile.matmul %a, %b, %acc {transpose_rhs} : memref<32x64xf16>, memref<16x64xf16>, tensor<32x16xf16>
  return
}

// -----

func.func @matmul_types(%a: memref<32x64xf16>, %b: memref<16x64xbf16>, %acc: tensor<32x16xf32>) {
  // expected-error @+1 {{'attn.tile.matmul' op lhs and rhs must have one element type, got 'f16' and 'bf16'}}
  %s = attn.tile.matmul %a, %b, %acc {transpose_rhs} : memref<32x64xf16>, memref<16x64xbf16>, tensor<32x16xf32>
  return
}

// -----

func.func @matmul_lhs(%a: tensor<64xf16>, %b: memref<64x16xf16>, %acc: tensor<32x16xf32>) {
  // expected-error @+1 {{'attn.tile.matmul' op lhs must be a static tile of rank 2}}
  %s = attn.tile.matmul %a, %b, %acc : tensor<64xf16>, memref<64x16xf16>, tensor<32x16xf32>
  return
}

// -----

func.func @dynamic_tile(%a: memref<?x64xf16>, %b: memref<64x16xf16>, %acc: tensor<32x16xf32>) {
  // expected-error @+1 {{'attn.tile.matmul' op operand #0 must be statically shaped tensor of floating-point values or static-shaped 2D or 3D memref of floats, but got 'memref<?x64xf16>'}}
  %s = attn.tile.matmul %a, %b, %acc : memref<?x64xf16>, memref<64x16xf16>, tensor<32x16xf32>
  return
}

// -----

func.func @map_terminator(%x: tensor<32xf32>) {
  // expected-error @+1 {{'attn.tile.map' op region must end with attn.tile.yield}}
  %r = "attn.tile.map"(%x) ({
  ^bb0(%i: index, %a: f32):
    func.return
  }) : (tensor<32xf32>) -> tensor<32xf32>
  return
}

// -----

func.func @map_input(%x: tensor<32x16xf32>, %y: tensor<16xf32>) {
  // expected-error @+1 {{'attn.tile.map' op input 1 of type 'tensor<16xf32>' does not match the result's dimensions through its map}}
  %r = attn.tile.map ins(%x, %y : tensor<32x16xf32>, tensor<16xf32>) -> tensor<32x16xf32> {
  ^bb0(%i: index, %j: index, %a: f32, %b: f32):
    attn.tile.yield %a : f32
  }
  return
}

// -----

func.func @map_args(%x: tensor<32x16xf32>) {
  // expected-error @+1 {{'attn.tile.map' op region must take 2 indices and one element per input, got 2 arguments}}
  %r = attn.tile.map ins(%x : tensor<32x16xf32>) -> tensor<32x16xf32> {
  ^bb0(%i: index, %a: f32):
    attn.tile.yield %a : f32
  }
  return
}

// -----

func.func @map_index(%x: tensor<32xf32>) {
  // expected-error @+1 {{'attn.tile.map' op region argument 0 must be an index}}
  %r = attn.tile.map ins(%x : tensor<32xf32>) -> tensor<32xf32> {
  ^bb0(%i: i32, %a: f32):
    attn.tile.yield %a : f32
  }
  return
}

// -----

func.func @map_element(%x: tensor<32xf32>) {
  // expected-error @+1 {{'attn.tile.map' op region argument 1 must have input 0's element type}}
  %r = attn.tile.map ins(%x : tensor<32xf32>) -> tensor<32xf32> {
  ^bb0(%i: index, %a: f16):
    %e = arith.extf %a : f16 to f32
    attn.tile.yield %e : f32
  }
  return
}

// -----

func.func @map_yield(%x: tensor<32xf32>) {
  // expected-error @+1 {{'attn.tile.map' op region must yield one 'f16' element}}
  %r = attn.tile.map ins(%x : tensor<32xf32>) -> tensor<32xf16> {
  ^bb0(%i: index, %a: f32):
    attn.tile.yield %a : f32
  }
  return
}

// -----

// A rank-0 input broadcasts: its map has no results.
func.func @map_scalar_yield(%x: tensor<f32>) {
  // expected-error @+1 {{'attn.tile.map' op region must yield one 'f16' element}}
  %r = attn.tile.map ins(%x : tensor<f32>) -> tensor<32xf16> {
  ^bb0(%i: index, %a: f32):
    attn.tile.yield %a : f32
  }
  return
}

// -----

func.func @map_rank(%x: tensor<2x2x32x16xf32>) {
  // expected-error @+1 {{'attn.tile.map' op result must be a tile of rank 1 to 3}}
  %r = attn.tile.map ins(%x : tensor<2x2x32x16xf32>) -> tensor<2x2x32x16xf32> {
  ^bb0(%i: index, %j: index, %k: index, %l: index, %a: f32):
    attn.tile.yield %a : f32
  }
  return
}

// -----

func.func @map_count(%x: tensor<4x32xf32>, %y: tensor<32xf32>) {
  // expected-error @+1 {{'attn.tile.map' op has 1 indexing maps for 2 inputs}}
  %r = attn.tile.map ins(%x, %y : tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32> {
  ^bb0(%i: index, %j: index, %a: f32, %b: f32):
    attn.tile.yield %a : f32
  } {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>]}
  return
}

// -----

func.func @map_permutation(%x: tensor<4x32xf32>, %y: tensor<32xf32>) {
  // expected-error @+1 {{'attn.tile.map' op indexing map of input 1 must be a projected permutation from the 2 result dimensions to the input's 1}}
  %r = attn.tile.map ins(%x, %y : tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32> {
  ^bb0(%i: index, %j: index, %a: f32, %b: f32):
    attn.tile.yield %a : f32
  } {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0 + d1)>]}
  return
}

// -----

func.func @map_higher_rank(%x: tensor<4x32x8xf32>) {
  // expected-error @+1 {{'attn.tile.map' op input 0 has a higher rank than the result}}
  %r = attn.tile.map ins(%x : tensor<4x32x8xf32>) -> tensor<4x32xf32> {
  ^bb0(%i: index, %j: index, %a: f32):
    attn.tile.yield %a : f32
  }
  return
}

// -----

func.func @reduce_shape(%x: tensor<32x16xf32>, %init: tensor<16xf32>) {
  // expected-error @+1 {{'attn.tile.reduce' op reduces dimension 1 of 'tensor<32x16xf32>' into its init and result of that shape without it and the same element type, got 'tensor<16xf32>'}}
  %r = attn.tile.reduce <add> %x, %init : tensor<32x16xf32> -> tensor<16xf32>
  return
}

// -----

func.func @store_type(%t: tensor<32x64xf32>, %o: memref<?x?x?x64xf16>, %n: index) {
  // expected-error @+1 {{'attn.tile.store' op tile and dest must have one element type, got 'f32' and 'f16'}}
  attn.tile.store %t into %o rows %n : tensor<32x64xf32> into memref<?x?x?x64xf16> {
  ^bb0(%r: index):
    attn.tile.yield %r, %r, %r : index, index, index
  }
  return
}

// -----

func.func @store_row(%t: tensor<32x48xf16>, %o: memref<?x?x?x64xf16>, %n: index) {
  // expected-error @+1 {{'attn.tile.store' op tile rows hold 48 elements; dest's last dimension must be static and at most that}}
  attn.tile.store %t into %o rows %n : tensor<32x48xf16> into memref<?x?x?x64xf16> {
  ^bb0(%r: index):
    attn.tile.yield %r, %r, %r : index, index, index
  }
  return
}

// -----

func.func @store_transposed_row(%t: tensor<48x32xf32>, %o: memref<?x?x?x64xf32>, %n: index) {
  // expected-error @+1 {{'attn.tile.store' op tile columns hold 48 elements; dest's last dimension must be static and at most that}}
  attn.tile.store %t into %o rows %n : tensor<48x32xf32> into memref<?x?x?x64xf32> {
  ^bb0(%r: index):
    attn.tile.yield %r, %r, %r : index, index, index
  } {transpose}
  return
}

// -----

func.func @store_transposed_rank(%t: tensor<32xf32>, %o: memref<?x?x?xf32>, %n: index) {
  // expected-error @+1 {{'attn.tile.store' op transpose writes the columns of a rank-2 tile, got rank 1}}
  attn.tile.store %t into %o rows %n : tensor<32xf32> into memref<?x?x?xf32> {
  ^bb0(%r: index):
    attn.tile.yield %r, %r, %r : index, index, index
  } {transpose}
  return
}

// -----

func.func @store_rows_yield(%t: tensor<32xf32>, %o: memref<?x?x?xf32>, %n: index) {
  // expected-error @+1 {{'attn.tile.store' op region must yield 3 indices (every dest dimension), got 2 values}}
  attn.tile.store %t into %o rows %n : tensor<32xf32> into memref<?x?x?xf32> {
  ^bb0(%r: index):
    attn.tile.yield %r, %r : index, index
  }
  return
}

// -----

func.func @store_rank(%t: tensor<2x32x64xf32>, %o: memref<?x?x?x64xf32>, %n: index) {
  // expected-error @+1 {{'attn.tile.store' op tile must have rank 1 or 2}}
  attn.tile.store %t into %o rows %n : tensor<2x32x64xf32> into memref<?x?x?x64xf32> {
  ^bb0(%r: index):
    attn.tile.yield %r, %r, %r : index, index, index
  }
  return
}

// -----

func.func @param_name() {
  // expected-error @+1 {{'attn.tile.param' op names a kernel parameter that is not a tile-form scalar: 'chunk' (scale_log2, window)}}
  %c = attn.tile.param "chunk" = 16 : index
  return
}

// -----

func.func @reduce_dim(%x: tensor<32x16xf32>, %init: tensor<32xf32>) {
  // expected-error @+1 {{'attn.tile.reduce' op reduces dimension 2 of a tile of rank 2 or 3, got 'tensor<32x16xf32>'}}
  %r = attn.tile.reduce <add> %x, %init {dim = 2 : i64} : tensor<32x16xf32> -> tensor<32xf32>
  return
}

// -----

func.func @matmul_slices(%a: memref<2x32x64xf16>, %b: memref<4x16x64xf16>, %acc: tensor<4x32x16xf32>) {
  // expected-error @+1 {{'attn.tile.matmul' op lhs has 2 slices but rhs has 4}}
  %s = attn.tile.matmul %a, %b, %acc {transpose_rhs} : memref<2x32x64xf16>, memref<4x16x64xf16>, tensor<4x32x16xf32>
  return
}

// -----

func.func @matmul_rhs_rank(%a: memref<32x64xf16>, %b: memref<16x64xf16>, %acc: tensor<4x32x16xf32>) {
  // expected-error @+1 {{'attn.tile.matmul' op rhs must have acc's rank 3}}
  %s = attn.tile.matmul %a, %b, %acc {transpose_rhs} : memref<32x64xf16>, memref<16x64xf16>, tensor<4x32x16xf32>
  return
}

// -----

func.func @load_tile_rank(%src: memref<?x?x?x64xf16>, %t: memref<2x32x64xf16>, %n: index) {
  // expected-error @+1 {{'attn.tile.load' op tile must have rank 2, got 3}}
  attn.tile.load %src into %t rows %n : memref<?x?x?x64xf16> into memref<2x32x64xf16> {
  ^bb0(%r: index):
    attn.tile.yield %r, %r, %r : index, index, index
  }
  return
}

// -----

func.func @matmul_transpose_register_lhs(%a: tensor<32x16xf16>, %b: memref<32x64xf16>, %acc: tensor<16x64xf32>) {
  // expected-error @+1 {{'attn.tile.matmul' op transpose_lhs needs a rank-2 memory tile lhs}}
  %s = attn.tile.matmul %a, %b, %acc {transpose_lhs} : tensor<32x16xf16>, memref<32x64xf16>, tensor<16x64xf32>
  return
}

// -----

func.func @matmul_transpose_lhs_k(%a: memref<16x32xf16>, %b: memref<32x64xf16>, %acc: tensor<32x64xf32>) {
  // expected-error @+1 {{'attn.tile.matmul' op lhs^T has 16 columns but rhs has 32 rows}}
  %s = attn.tile.matmul %a, %b, %acc {transpose_lhs} : memref<16x32xf16>, memref<32x64xf16>, tensor<32x64xf32>
  return
}

// -----

func.func @store_accumulate_f16(%t: tensor<32x64xf16>, %o: memref<?x?x?x64xf16>, %n: index) {
  // expected-error @+1 {{'attn.tile.store' op accumulate adds f32 tiles only, got 'f16'}}
  attn.tile.store %t into %o rows %n : tensor<32x64xf16> into memref<?x?x?x64xf16> {
  ^bb0(%r: index):
    attn.tile.yield %r, %r, %r : index, index, index
  } {accumulate}
  return
}

// -----

func.func @work_item_arguments(%item: index, %b: index) {
  // expected-error @+1 {{'attn.tile.work_item' op region must take one index argument (the sequence), got 2 arguments}}
  %s:3 = attn.tile.work_item %item of %b over %b capacity %b {
  ^bb0(%x: index, %y: index):
    attn.tile.yield %x : index
  }
  return
}

// -----

func.func @work_item_yield(%item: index, %b: index) {
  // expected-error @+1 {{'attn.tile.work_item' op region must yield one index (the sequence's key count)}}
  %s:3 = attn.tile.work_item %item of %b over %b capacity %b {
  ^bb0(%x: index):
    %c = arith.index_cast %x : index to i32
    attn.tile.yield %c : i32
  }
  return
}

// -----

func.func @await_turn_indices(%turns: memref<?x?x?xi32>, %b: index) {
  // expected-error @+1 {{'attn.tile.await_turn' op takes one index per dimension of turns (3), got 2}}
  attn.tile.await_turn %turns[%b, %b] for %b : memref<?x?x?xi32>
  return
}

// -----

func.func @pass_turn_indices(%turns: memref<?xi32>, %b: index) {
  // expected-error @+1 {{'attn.tile.pass_turn' op takes one index per dimension of turns (1), got 2}}
  attn.tile.pass_turn %turns[%b, %b] = %b : memref<?xi32>
  return
}

// -----

func.func @turn_type(%turns: memref<?xf32>, %b: index) {
  // expected-error @+1 {{'attn.tile.pass_turn' op operand #0 must be memref of 32-bit signless integer values}}
  attn.tile.pass_turn %turns[%b] = %b : memref<?xf32>
  return
}
