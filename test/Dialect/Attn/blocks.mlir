// RUN: attn-opt %s | attn-opt | FileCheck %s --check-prefix=ROUND
// RUN: attn-opt %s --attn-decompose | FileCheck %s --check-prefix=DECOMPOSE
// RUN: attn-opt %s --attn-tile="block-q=16 block-kv=16" | FileCheck %s --check-prefix=TILE

// Block masks (block-sparse attention): they print and parse back; the
// decomposition tests each score's key block against its query block's two
// lists (the reference semantics); attn-tile walks the listed key blocks.

// ROUND-LABEL: func.func @forward
// ROUND: attn.attention %{{.*}}, %{{.*}}, %{{.*}} block_mask(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x1x3xi32>, tensor<2x1x3x4xi32>, tensor<2x1x3xi32>, tensor<2x1x3x4xi32>) {block_size = array<i64: 32, 64>, causal = #attn.causal<bottom_right>}
// DECOMPOSE-LABEL: func.func @forward
// DECOMPOSE: linalg.generic
// DECOMPOSE: scf.for
// DECOMPOSE: arith.cmpi eq
// DECOMPOSE: arith.ori
// DECOMPOSE: scf.for
// DECOMPOSE-NOT: attn.attention
// TILE-LABEL: func.func @forward
// The walk: counts clamped into the lists, tiles = entries x (64 / 16).
// TILE: scf.forall
// TILE: memref.load %{{.*}} : memref<2x1x3xi32
// TILE: memref.dim %{{.*}}, %c3
// TILE: memref.load %{{.*}} : memref<2x1x3xi32
// TILE: arith.muli %{{.*}}, %c4
// TILE: scf.for
// TILE: memref.load %{{.*}} : memref<2x1x3x4xi32
// TILE: memref.load %{{.*}} : memref<2x1x3x4xi32
// TILE: arith.select
func.func @forward(%q: tensor<2x4x70x16xbf16>, %k: tensor<2x2x200x16xbf16>,
                   %cnt: tensor<2x1x3xi32>, %idx: tensor<2x1x3x4xi32>,
                   %fcnt: tensor<2x1x3xi32>, %fidx: tensor<2x1x3x4xi32>)
    -> tensor<2x4x70x16xbf16> {
  %o = attn.attention %q, %k, %k block_mask(%cnt, %idx, %fcnt, %fidx : tensor<2x1x3xi32>, tensor<2x1x3x4xi32>, tensor<2x1x3xi32>, tensor<2x1x3x4xi32>) {block_size = array<i64: 32, 64>, causal = #attn.causal<bottom_right>}
      : tensor<2x4x70x16xbf16>, tensor<2x2x200x16xbf16>, tensor<2x2x200x16xbf16> -> tensor<2x4x70x16xbf16>
  return %o : tensor<2x4x70x16xbf16>
}

// ROUND-LABEL: func.func @gradient
// ROUND: attn.attention_grad {{.*}} block_mask(%{{.*}}, %{{.*}} : tensor<1x1x2xi32>, tensor<1x1x2x2xi32>) q_block_mask(%{{.*}}, %{{.*}} : tensor<1x1x2xi32>, tensor<1x1x2x2xi32>) {block_size = array<i64: 32, 32>}
// TILE-LABEL: func.func @gradient
// The dK/dV nest: the longest list among the group's heads, before the loop.
// TILE: scf.forall
// TILE: scf.forall
// TILE: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (index)
// TILE: memref.load %{{.*}} : memref<1x1x2xi32
// TILE: arith.maxsi %arg
func.func @gradient(%q: tensor<1x2x64x16xf32>, %k: tensor<1x1x64x16xf32>,
                    %lse: tensor<1x2x64xf32>, %c: tensor<1x1x2xi32>,
                    %i: tensor<1x1x2x2xi32>)
    -> (tensor<1x2x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %k, %q, %q, %lse block_mask(%c, %i : tensor<1x1x2xi32>, tensor<1x1x2x2xi32>) q_block_mask(%c, %i : tensor<1x1x2xi32>, tensor<1x1x2x2xi32>) {block_size = array<i64: 32, 32>}
      : tensor<1x2x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64xf32>
      -> tensor<1x2x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>
  return %dq, %dk, %dv : tensor<1x2x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>
}
