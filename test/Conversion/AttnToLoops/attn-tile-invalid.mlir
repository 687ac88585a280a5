// RUN: attn-opt %s -split-input-file --attn-tile="block-q=128 block-kv=128" -verify-diagnostics
// RUN: not attn-opt %s -split-input-file --attn-tile="smem-budget=4096" 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: not attn-opt %s --attn-tile="memory-space=workgroup" 2>&1 | FileCheck %s --check-prefix=SPACE
// RUN: not attn-opt %s --attn-tile="memory-space=\"shared\"" 2>&1 | FileCheck %s --check-prefix=SPACE-STRING
// RUN: not attn-opt %s --attn-tile="block-q=-16" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not attn-opt %s --attn-tile="stages=-1 warps=-2" 2>&1 | FileCheck %s --check-prefix=NEGATIVE-SCHEDULE
// RUN: not attn-opt %s --attn-tile="block-kv=4611686018427387904" 2>&1 | FileCheck %s --check-prefix=HUGE-KV
// RUN: not attn-opt %s --attn-tile="block-q=1025 stages=17 warps=33" 2>&1 | FileCheck %s --check-prefix=HUGE-SCHEDULE
// RUN: not attn-opt %s --attn-tile="smem-budget=0" 2>&1 | FileCheck %s --check-prefix=BUDGET-ZERO
// RUN: not attn-opt %s --attn-tile="smem-budget=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=BUDGET-HUGE
// RUN: not attn-opt %s --attn-to-llvm="block-kv=4611686018427387904" 2>&1 | FileCheck %s --check-prefix=HUGE-KV
// RUN: not attn-opt %s --attn-tile="report sparsity=1" 2>&1 | FileCheck %s --check-prefix=SPARSITY
// RUN: not attn-opt %s --attn-tile="report sparsity=-0.5" 2>&1 | FileCheck %s --check-prefix=SPARSITY-NEGATIVE
// RUN: not attn-opt %s --attn-tile="value-blocks=65" 2>&1 | FileCheck %s --check-prefix=VALUE-BLOCKS-HUGE
// RUN: not attn-opt %s -split-input-file --attn-tile="value-blocks=9" 2>&1 | FileCheck %s --check-prefix=VALUE-BLOCKS-DV
// RUN: not attn-opt %s -split-input-file --attn-tile="value-blocks=2 deterministic=false" 2>&1 | FileCheck %s --check-prefix=GRAD-BLOCKS-ATOMIC

// Explicit tiles that exceed smem-budget (227 KiB = 232448 bytes by
// default) are an error on the op, not silently shrunk: f32 rows padded by
// 4 elements, 128 x 68 x 4 + 3 x 128 x (68 + 68) x 4 = 243712 bytes.
// Automatic tiles halve the key/value tile down to 16 keys, then take 2
// stages, one m-tile and one warp, so 4096 bytes cannot be met:
// 16 x 68 x 4 + 2 x 16 x 136 x 4 = 21760 bytes.

// AUTO: error: tiles of block-q = 16 and block-kv = 16 in 2 stages need 21760 bytes of workgroup memory (Q, K, V tiles, rows padded by 16 bytes, D = 64, Dv = 64, 4-byte elements), more than smem-budget = 4096; no smaller automatic tile fits: raise smem-budget
// SPACE: error: attn-tile: memory-space must be a memref memory space attribute (e.g. #gpu.address_space<workgroup> or 3) or 'default', got 'workgroup'
// SPACE-STRING: error: attn-tile: memory-space must be a memref memory space attribute
// Options are checked where they enter, against explicit limits
// (docs/Limits.md): past them the tile sizes overflowed int64 (block-kv =
// 2^62 gave shared_bytes = 18432 and passed the budget).
// NEGATIVE: error: attn-tile: block-q = -16 is out of range [0, 1024] (rows; 0: automatic)
// NEGATIVE-SCHEDULE: error: attn-tile: stages = -1 is out of range [0, 16] (0: automatic)
// NEGATIVE-SCHEDULE: error: attn-tile: warps = -2 is out of range [0, 32] (0: automatic)
// HUGE-KV: error: attn-tile: block-kv = 4611686018427387904 is out of range [0, 1024] (keys; 0: automatic)
// HUGE-KV-NOT: attn.schedule
// HUGE-SCHEDULE: error: attn-tile: block-q = 1025 is out of range [0, 1024] (rows; 0: automatic)
// HUGE-SCHEDULE: error: attn-tile: stages = 17 is out of range [0, 16] (0: automatic)
// HUGE-SCHEDULE: error: attn-tile: warps = 33 is out of range [0, 32] (0: automatic)
// BUDGET-ZERO: error: attn-tile: smem-budget = 0 is out of range [1, 1073741824] (bytes)
// BUDGET-HUGE: error: attn-tile: smem-budget = 9223372036854775807 is out of range [1, 1073741824] (bytes)
// SPARSITY: error: attn-tile: sparsity = 1.000000e+00 is out of range [0, 1) (the fraction of the blocks a block mask leaves out)
// VALUE-BLOCKS-HUGE: error: attn-tile: value-blocks = 65 is out of range [0, 64] (column blocks of V and O, or of dQ, dK and dV; 0: automatic)
// VALUE-BLOCKS-DV: error: value-blocks = 9 needs a value head dim of at least 8 columns a block, got Dv = 64
// VALUE-BLOCKS-DV: error: value-blocks = 9 cannot cut D = 128 and Dv = 128 (tiles of 128 and 128 columns) into blocks of whole 16-column steps, each but the last inside the head dim
// GRAD-BLOCKS-ATOMIC: error: value-blocks = 2 needs the recomputed dQ: the dK/dV nest of the modes that accumulate dQ adds all of its columns
// SPARSITY-NEGATIVE: error: attn-tile: sparsity = -5.000000e-01 is out of range [0, 1)
func.func @forward(%q: tensor<2x4x77x64xf32>, %k: tensor<2x4x129x64xf32>, %v: tensor<2x4x129x64xf32>) -> tensor<2x4x77x64xf32> {
  // expected-error @below {{tiles of block-q = 128 and block-kv = 128 in 3 stages need 243712 bytes of workgroup memory (Q, K, V tiles, rows padded by 16 bytes, D = 64, Dv = 64, 4-byte elements), more than smem-budget = 232448; choose smaller block-q/block-kv or raise smem-budget}}
  %o = attn.attention %q, %k, %v : tensor<2x4x77x64xf32>, tensor<2x4x129x64xf32>, tensor<2x4x129x64xf32> -> tensor<2x4x77x64xf32>
  return %o : tensor<2x4x77x64xf32>
}

// -----

// Gradients: the larger nest's tiles, rows padded by 16 bytes (4 f32).
// Explicit 128 x 128 tiles at D = Dv = 128, f32, 2 stages:
// (128 + 2 x 128) x (128 + 128 + 8) x 4 = 405504 bytes; automatic tiles
// halve both sides down to 16 x 16, still (16 + 32) x 264 x 4 = 50688.

// AUTO: error: tiles of block-q = 16 and block-kv = 16 in 2 stages need 51712 bytes of workgroup memory (Q, dO, K, V tiles and 16-byte row records, rows padded by 16 bytes, D = 128, Dv = 128, 4-byte elements), more than smem-budget = 4096; no smaller automatic tile fits: raise smem-budget
func.func @grad(%q: tensor<1x2x64x128xf32>, %k: tensor<1x2x64x128xf32>, %v: tensor<1x2x64x128xf32>, %o: tensor<1x2x64x128xf32>, %do: tensor<1x2x64x128xf32>, %lse: tensor<1x2x64xf32>) -> (tensor<1x2x64x128xf32>, tensor<1x2x64x128xf32>, tensor<1x2x64x128xf32>) {
  // expected-error @below {{tiles of block-q = 128 and block-kv = 128 in 2 stages need 413696 bytes of workgroup memory (Q, dO, K, V tiles and 16-byte row records, rows padded by 16 bytes, D = 128, Dv = 128, 4-byte elements), more than smem-budget = 232448; choose smaller block-q/block-kv or raise smem-budget}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x2x64x128xf32>, tensor<1x2x64x128xf32>, tensor<1x2x64x128xf32>, tensor<1x2x64x128xf32>, tensor<1x2x64x128xf32>, tensor<1x2x64xf32>
      -> tensor<1x2x64x128xf32>, tensor<1x2x64x128xf32>, tensor<1x2x64x128xf32>
  return %dq, %dk, %dv : tensor<1x2x64x128xf32>, tensor<1x2x64x128xf32>, tensor<1x2x64x128xf32>
}

// -----

// A dim index outside the operand's shape, which tensor.dim's and
// memref.dim's verifiers accept and upstream canonicalization patterns
// after attn-tile crash on: refused where the IR enters.
func.func @dim_index_outside_shape(%q: tensor<?x6xf32>, %m: memref<?xf32>) -> (index, index) {
  %c = arith.constant -2147483648 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'tensor.dim' op has dimension index -2147483648, outside the rank 2 of its operand}}
  %b = tensor.dim %q, %c : tensor<?x6xf32>
  // expected-error @+1 {{'memref.dim' op has dimension index 1, outside the rank 1 of its operand}}
  %n = memref.dim %m, %c1 : memref<?xf32>
  return %b, %n : index, index
}
