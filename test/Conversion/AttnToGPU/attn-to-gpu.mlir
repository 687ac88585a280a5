// RUN: attn-opt %s -split-input-file -attn-to-gpu -verify-diagnostics | FileCheck %s

// The forward kernel, lowered from attn-tile's tile form: the forall's
// (batch, head, query tile) are the grid's (z, y, x); Q and the first two
// K/V tiles by cp.async into dynamic shared memory, one commit group per
// K/V tile; at the top of the loop a wait for the tile and one barrier,
// then the prefetch of tile n + 2. Both products on mma.sync m16n8k16 (two
// 16-row m-tiles per warp re-read Q by ldmatrix), the row max across the
// quad by shuffles, exp2 on ex2.approx; the row sums stay lane-partial in
// the loop and are summed across lanes once, after it.
// CHECK: module attributes {attn.manifest = ["kernel attn_fwd_bf16_d64_dv64_bottom_right kind=forward dtype=bf16 head_dim=64 value_dim=64 causal=bottom_right block_q=128 block_kv=64 threads=128 smem=73728 params=q:memref4,k:memref4,v:memref4,o:memref4,lse:memref3,scale_log2:f32,window:i64"], gpu.container_module}
// CHECK-LABEL: func @forward
// CHECK: attn.attention {{.*}}attn.kernel = @attn_kernels::@attn_fwd_bf16_d64_dv64_bottom_right
// CHECK: gpu.module @attn_kernels
// CHECK: gpu.func @attn_fwd_bf16_d64_dv64_bottom_right(%{{.*}}: memref<?x?x?x64xbf16, strided<[?, ?, ?, ?], offset: ?>>, {{.*}}, %{{.*}}: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, %{{.*}}: f32, %{{.*}}: i64) kernel
// CHECK-SAME: nvvm.maxntid = array<i32: 128, 1, 1>
// CHECK: gpu.dynamic_shared_memory
// CHECK: gpu.block_id z
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: gpu.block_id y
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: gpu.block_id x
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4
// CHECK: nvvm.mma.sync
// CHECK-SAME: multiplicandAPtxType = #nvvm.mma_type<bf16>
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK: gpu.shuffle  xor
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK-NOT: gpu.shuffle
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>
// CHECK-NOT: gpu.shuffle
// CHECK: nvvm.mma.sync
// CHECK-NOT: gpu.shuffle
// CHECK: scf.yield
// CHECK: gpu.shuffle  xor
// CHECK: llvm.store {{.*}} : i32, !llvm.ptr<1>
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<1>
// CHECK: gpu.return
func.func @forward(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>) -> tensor<?x8x?x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x8x?x64xbf16>
  return %o : tensor<?x8x?x64xbf16>
}

// -----

// Split-KV: a partial kernel and a combine kernel; two ops of one
// specialisation share one kernel.
// CHECK-LABEL: func @decode
// CHECK: attn.attention_partial {{.*}}attn.kernel = @attn_kernels::@attn_dec_f16_d128_dv128_none
// CHECK: attn.combine {{.*}}attn.kernel = @attn_kernels::@attn_comb_f16_dv128
// CHECK: attn.attention_partial {{.*}}attn.kernel = @attn_kernels::@attn_dec_f16_d128_dv128_none
// CHECK: gpu.func @attn_dec_f16_d128_dv128_none({{.*}}memref<?x?x?x?x128xf32, strided<[?, ?, ?, ?, ?], offset: ?>>, %{{.*}}: memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, %{{.*}}: f32, %{{.*}}: i64) kernel
// CHECK: gpu.block_id x
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: gpu.block_id z
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: gpu.block_id y
// CHECK: nvvm.mma.sync
// CHECK-SAME: (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// The key slices (one per warp) merge through shared memory once the K/V
// tiles are retired: the max of the slices' m, then their weighted sums.
// CHECK: scf.yield
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// The combine: one warp per 16 rows x 8 columns of the output (grid x, y);
// the loop over splits, unrolled by 4, reads each split's LSE and columns
// with global loads; a remainder loop takes the last splits.
// CHECK: gpu.func @attn_comb_f16_dv128(
// CHECK-SAME: nvvm.maxntid = array<i32: 32, 1, 1>
// CHECK-NOT: gpu.dynamic_shared_memory
// CHECK: gpu.block_id x
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: gpu.block_id y
// CHECK: scf.for
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: scf.yield
// CHECK: scf.for
// CHECK: llvm.load {{.*}} : !llvm.ptr<1> -> f32
// CHECK: scf.yield
// CHECK: llvm.store {{.*}} : i32, !llvm.ptr<1>
// CHECK-NOT: gpu.func
func.func @decode(%q: tensor<4x32x1x128xf16>, %k: tensor<4x8x4096x128xf16>, %v: tensor<4x8x4096x128xf16>) -> tensor<4x32x1x128xf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 16 : i64} : tensor<4x32x1x128xf16>, tensor<4x8x4096x128xf16>, tensor<4x8x4096x128xf16> -> tensor<16x4x32x1x128xf32>, tensor<16x4x32x1xf32>
  %o = attn.combine %po, %pl : tensor<16x4x32x1x128xf32>, tensor<16x4x32x1xf32> -> tensor<4x32x1x128xf16>
  %po2, %pl2 = attn.attention_partial %q, %k, %v {num_splits = 4 : i64} : tensor<4x32x1x128xf16>, tensor<4x8x4096x128xf16>, tensor<4x8x4096x128xf16> -> tensor<4x4x32x1x128xf32>, tensor<4x4x32x1xf32>
  return %o : tensor<4x32x1x128xf16>
}

// -----

// f32 operands: products on TF32 parts (TileTf32.cpp), 3xTF32: each
// operand rounded to TF32 (cvt.rna) and its remainder rounded again.
// CHECK-LABEL: gpu.func @attn_fwd_f32_d64_dv64_none
// CHECK: nvvm.convert.float.to.tf32 {{.*}}rna
// CHECK: arith.subf
// CHECK: nvvm.convert.float.to.tf32 {{.*}}rna
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 8>
// CHECK-NOT: nvvm.ldmatrix
// CHECK: gpu.return
func.func @f32_operands(%q: tensor<1x1x8x64xf32>, %k: tensor<1x1x8x64xf32>, %v: tensor<1x1x8x64xf32>) -> tensor<1x1x8x64xf32> {
  %o = attn.attention %q, %k, %v : tensor<1x1x8x64xf32>, tensor<1x1x8x64xf32>, tensor<1x1x8x64xf32> -> tensor<1x1x8x64xf32>
  return %o : tensor<1x1x8x64xf32>
}

// -----

func.func @wide_head_dim(%q: tensor<1x1x8x584xf16>, %k: tensor<1x1x8x584xf16>, %v: tensor<1x1x8x64xf16>) -> tensor<1x1x8x64xf16> {
  // expected-error @+1 {{'attn.attention' op cannot be lowered to a GPU kernel: head dim D must be in [1, 576], got 584}}
  %o = attn.attention %q, %k, %v : tensor<1x1x8x584xf16>, tensor<1x1x8x584xf16>, tensor<1x1x8x64xf16> -> tensor<1x1x8x64xf16>
  return %o : tensor<1x1x8x64xf16>
}

// -----

func.func @wide_value_dim(%q: tensor<1x1x8x64xf16>, %k: tensor<1x1x8x64xf16>, %v: tensor<1x1x8x1024xf16>) -> tensor<1x1x8x1024xf16> {
  // expected-error @+1 {{'attn.attention' op cannot be lowered to a GPU kernel: value head dim Dv must be in [1, 576], got 1024}}
  %o = attn.attention %q, %k, %v : tensor<1x1x8x64xf16>, tensor<1x1x8x64xf16>, tensor<1x1x8x1024xf16> -> tensor<1x1x8x1024xf16>
  return %o : tensor<1x1x8x1024xf16>
}

// -----

// Rows that are not whole 16-byte chunks (D = 59): copied element by
// element into tiles of 64 columns (a loop over the tile's elements with
// the threads' stride, zeros past column 59) and stored element by
// element, the columns past 59 not stored; sm_80's mapping on sm_90a too.
// CHECK-LABEL: func @unaligned_head_dim
// CHECK: gpu.func @attn_fwd_f16_d59_dv59_none({{.*}}memref<?x?x?x59xf16{{.*}}threads=128
// CHECK-NOT: tma=
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i32 {
// CHECK: %[[D:.*]] = arith.constant 59 : i32
// CHECK: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> f16
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 2 : i64} : f16, !llvm.ptr<3>
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 2 : i64} : f16, !llvm.ptr<1>
// CHECK-NOT: llvm.store {{.*}} : i32, !llvm.ptr<1>
// CHECK: gpu.return
func.func @unaligned_head_dim(%q: tensor<1x1x8x59xf16>, %k: tensor<1x1x8x59xf16>, %v: tensor<1x1x8x59xf16>) -> tensor<1x1x8x59xf16> {
  %o = attn.attention %q, %k, %v : tensor<1x1x8x59xf16>, tensor<1x1x8x59xf16>, tensor<1x1x8x59xf16> -> tensor<1x1x8x59xf16>
  return %o : tensor<1x1x8x59xf16>
}

// -----

// A head dim the tensor cores do not divide (40): tiles of 48 columns.
// Each row's 16-byte chunks past column 40 are zero-filled (cp.async with
// src-size 0, read from column 0), and O's stores stop at column 40 (five
// 8-column blocks per 16-row tile half).
// Shared memory: Q 128 x (48 + 8) and 3 stages of K and V 64 x (48 + 8).
// CHECK-LABEL: func @padded_head_dim
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_f16_d40_dv40_none
// CHECK: gpu.func @attn_fwd_f16_d40_dv40_none({{.*}}memref<?x?x?x40xf16{{.*}}smem=57344
// CHECK: %[[D:.*]] = arith.constant 40 : i32
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi slt, %{{.*}}, %[[D]] : i32
// CHECK: nvvm.cp.async.shared.global
// CHECK-COUNT-20: llvm.store {{.*}} : i32, !llvm.ptr<1>
// CHECK-NOT: llvm.store {{.*}} : i32, !llvm.ptr<1>
// CHECK: gpu.return
func.func @padded_head_dim(%q: tensor<1x1x8x40xf16>, %k: tensor<1x1x8x40xf16>, %v: tensor<1x1x8x40xf16>) -> tensor<1x1x8x40xf16> {
  %o = attn.attention %q, %k, %v : tensor<1x1x8x40xf16>, tensor<1x1x8x40xf16>, tensor<1x1x8x40xf16> -> tensor<1x1x8x40xf16>
  return %o : tensor<1x1x8x40xf16>
}

// -----

// A boolean mask operand: a sixth memref (i1, a byte per element) before
// the scalars, read in every tile; one m-tile per warp keeps the kernel
// inside its registers and holds Q in registers (read before the loop).
// CHECK-LABEL: func @bool_mask
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_f16_d64_dv64_none_boolmask
// CHECK: gpu.func @attn_fwd_f16_d64_dv64_none_boolmask({{.*}}, %{{.*}}: memref<?x?x?x?xi1, strided<[?, ?, ?, ?], offset: ?>>, %{{.*}}: f32, %{{.*}}: i64) kernel
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-4: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>
// CHECK-NEXT: llvm.extractvalue
// CHECK: scf.for
// CHECK: llvm.load {{.*}} : !llvm.ptr<1> -> i8
func.func @bool_mask(%q: tensor<1x1x8x64xf16>, %k: tensor<1x1x8x64xf16>, %v: tensor<1x1x8x64xf16>, %m: tensor<8x8xi1>) -> tensor<1x1x8x64xf16> {
  %o = attn.attention %q, %k, %v mask(%m : tensor<8x8xi1>) : tensor<1x1x8x64xf16>, tensor<1x1x8x64xf16>, tensor<1x1x8x64xf16> -> tensor<1x1x8x64xf16>
  return %o : tensor<1x1x8x64xf16>
}

// -----

func.func @mask_type(%q: tensor<1x1x8x64xf16>, %k: tensor<1x1x8x64xf16>, %v: tensor<1x1x8x64xf16>, %m: tensor<8x8xf32>) -> tensor<1x1x8x64xf16> {
  // expected-error @+1 {{'attn.attention' op has an additive mask of element type 'f32'; the GPU kernels read additive masks in the operands' element type 'f16'}}
  %o = attn.attention %q, %k, %v mask(%m : tensor<8x8xf32>) : tensor<1x1x8x64xf16>, tensor<1x1x8x64xf16>, tensor<1x1x8x64xf16> -> tensor<1x1x8x64xf16>
  return %o : tensor<1x1x8x64xf16>
}

// -----

func.func @decode_mask(%q: tensor<1x4x1x64xf16>, %k: tensor<1x1x8x64xf16>, %v: tensor<1x1x8x64xf16>, %m: tensor<1x8xi1>) -> tensor<2x1x4x1x64xf32> {
  // expected-error @+1 {{'attn.attention_partial' op has a mask operand; the GPU decode kernels generate causal and window masks only}}
  %po, %pl = attn.attention_partial %q, %k, %v mask(%m : tensor<1x8xi1>) {num_splits = 2 : i64} : tensor<1x4x1x64xf16>, tensor<1x1x8x64xf16>, tensor<1x1x8x64xf16> -> tensor<2x1x4x1x64xf32>, tensor<2x1x4x1xf32>
  return %po : tensor<2x1x4x1x64xf32>
}

// -----

// GQA 8 x Sq = 4: 32 packed rows per key/value head, two of the decode
// kernel's 16-row tiles: grid y walks the key/value heads and their row
// tiles, so one kernel serves any group size.
// CHECK-LABEL: func @decode_rows
// CHECK: gpu.func @attn_dec_f16_d64_dv64_none(
// CHECK: %[[Y:.+]] = gpu.block_id y
// CHECK: %[[YI:.+]] = arith.index_cast %[[Y]]
// CHECK-NEXT: arith.divui %[[YI]], %[[TILES:.+]] : i32
// CHECK-NEXT: arith.remui %[[YI]], %[[TILES]] : i32
func.func @decode_rows(%q: tensor<1x8x4x64xf16>, %k: tensor<1x1x128x64xf16>, %v: tensor<1x1x128x64xf16>) -> tensor<2x1x8x4x64xf32> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 2 : i64} : tensor<1x8x4x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16> -> tensor<2x1x8x4x64xf32>, tensor<2x1x8x4xf32>
  return %po : tensor<2x1x8x4x64xf32>
}

// -----

// A paged cache: the kernel takes kv_lens and block_table after v, copies
// K/V rows through the block table with cp.async (no tensor map describes
// a page walk, so sm_80's mapping on every chip) and reads its sequence's
// key count.
// CHECK-LABEL: func @decode_paged
// CHECK: gpu.func @attn_dec_bf16_d64_dv64_bottom_right_paged(%{{.*}}: memref<?x?x?x64xbf16, {{.*}}>, %{{.*}}: memref<?x?x?x64xbf16, {{.*}}>, %{{.*}}: memref<?x?x?x64xbf16, {{.*}}>, %{{.*}}: memref<?xi32, {{.*}}>, %{{.*}}: memref<?x?xi32, {{.*}}>,
// CHECK-SAME: attn.manifest = "kernel attn_dec_bf16_d64_dv64_bottom_right_paged kind=decode_partial dtype=bf16 head_dim=64 value_dim=64 causal=bottom_right kv=paged rows=16 {{.*}} params=q:memref4,k:memref4,v:memref4,kv_lens:memref1,block_table:memref2,partial_o:memref5,
// CHECK-NOT: tma=
// CHECK: llvm.load {{.*}} : !llvm.ptr<1> -> i32
// CHECK: nvvm.cp.async.shared.global
func.func @decode_paged(%q: tensor<?x?x8x64xbf16>, %k: tensor<?x?x2x64xbf16>, %v: tensor<?x?x2x64xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> tensor<4x?x8x?x64xf32> {
  %po, %pl = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {num_splits = 4 : i64, layout = #attn.layout<bshd>, causal = #attn.causal<bottom_right>} : tensor<?x?x8x64xbf16>, tensor<?x?x2x64xbf16>, tensor<?x?x2x64xbf16> -> tensor<4x?x8x?x64xf32>, tensor<4x?x8x?xf32>
  return %po : tensor<4x?x8x?x64xf32>
}

// -----

func.func @lens_without_table(%q: tensor<1x4x1x64xf16>, %k: tensor<1x1x8x64xf16>, %v: tensor<1x1x8x64xf16>, %l: tensor<1xi32>) -> tensor<2x1x4x1x64xf32> {
  // expected-error @+1 {{'attn.attention_partial' op has per-sequence key counts without a block table; the GPU kernels take them with a paged cache only: pass the cache as one page per sequence (block_table[b] = [b], page_size = Sk)}}
  %po, %pl = attn.attention_partial %q, %k, %v kv_lens(%l : tensor<1xi32>) {num_splits = 2 : i64} : tensor<1x4x1x64xf16>, tensor<1x1x8x64xf16>, tensor<1x1x8x64xf16> -> tensor<2x1x4x1x64xf32>, tensor<2x1x4x1xf32>
  return %po : tensor<2x1x4x1x64xf32>
}

// -----

func.func @paged_forward(%q: tensor<2x4x7x64xf16>, %pool: tensor<9x4x16x64xf16>, %l: tensor<2xi32>, %t: tensor<2x4xi32>) -> tensor<2x4x7x64xf16> {
  // expected-error @+1 {{'attn.attention' op cannot be lowered to a GPU kernel: a paged KV cache has GPU kernels for split-KV decode (attn.attention_partial) and packed batches (query_offsets), without a mask operand}}
  %o = attn.attention %q, %pool, %pool kv_lens(%l : tensor<2xi32>) block_table(%t : tensor<2x4xi32>) : tensor<2x4x7x64xf16>, tensor<9x4x16x64xf16>, tensor<9x4x16x64xf16> -> tensor<2x4x7x64xf16>
  return %o : tensor<2x4x7x64xf16>
}

// -----

// Packed batches: a forward kernel takes query_offsets (and key_offsets,
// or kv_lens and block_table) after v, on sm_80's cp.async mapping.
// CHECK-LABEL: func @varlen
// CHECK: gpu.func @attn_fwd_bf16_d64_dv64_bottom_right_varlen_packed(
// CHECK-SAME: attn.manifest = "kernel attn_fwd_bf16_d64_dv64_bottom_right_varlen_packed kind=forward dtype=bf16 head_dim=64 value_dim=64 causal=bottom_right q=packed kv=packed {{.*}} params=q:memref4,k:memref4,v:memref4,query_offsets:memref1,key_offsets:memref1,o:memref4,lse:memref3,scale_log2:f32,window:i64"
// CHECK: gpu.func @attn_fwd_bf16_d64_dv64_none_varlen_paged(
// CHECK-SAME: q=packed kv=paged {{.*}} params=q:memref4,k:memref4,v:memref4,query_offsets:memref1,kv_lens:memref1,block_table:memref2,o:memref4,
func.func @varlen(%q: tensor<1x?x8x64xbf16>, %k: tensor<1x?x2x64xbf16>, %qo: tensor<?xi32>, %ko: tensor<?xi32>, %pool: tensor<?x?x2x64xbf16>, %lens: tensor<?xi32>, %table: tensor<?x?xi32>) -> (tensor<1x?x8x64xbf16>, tensor<1x?x8x64xbf16>) {
  %o = attn.attention %q, %k, %k query_offsets(%qo : tensor<?xi32>) key_offsets(%ko : tensor<?xi32>) {causal = #attn.causal<bottom_right>, layout = #attn.layout<bshd>} : tensor<1x?x8x64xbf16>, tensor<1x?x2x64xbf16>, tensor<1x?x2x64xbf16> -> tensor<1x?x8x64xbf16>
  %o2 = attn.attention %q, %pool, %pool query_offsets(%qo : tensor<?xi32>) kv_lens(%lens : tensor<?xi32>) block_table(%table : tensor<?x?xi32>) {layout = #attn.layout<bshd>} : tensor<1x?x8x64xbf16>, tensor<?x?x2x64xbf16>, tensor<?x?x2x64xbf16> -> tensor<1x?x8x64xbf16>
  return %o, %o2 : tensor<1x?x8x64xbf16>, tensor<1x?x8x64xbf16>
}

// -----

func.func @packed_dense_keys(%q: tensor<1x?x8x64xbf16>, %k: tensor<2x?x2x64xbf16>, %qo: tensor<3xi32>) -> tensor<1x?x8x64xbf16> {
  // expected-error @+1 {{'attn.attention' op cannot be lowered to a GPU kernel: a packed batch's GPU kernels take packed keys (key_offsets) or a paged cache (kv_lens with block_table)}}
  %o = attn.attention %q, %k, %k query_offsets(%qo : tensor<3xi32>) {layout = #attn.layout<bshd>} : tensor<1x?x8x64xbf16>, tensor<2x?x2x64xbf16>, tensor<2x?x2x64xbf16> -> tensor<1x?x8x64xbf16>
  return %o : tensor<1x?x8x64xbf16>
}

// -----

// The combine at Dv = 59: 8-column tiles, the last one of 3 columns; the
// output's rows are not whole 16-byte chunks, so every tile, the full ones
// too, stores element by element (a pair at column 8 of row 1 would be
// misaligned).
// CHECK-LABEL: func @combine_unaligned_rows
// CHECK: gpu.func @attn_comb_f16_dv59(
// CHECK-NOT: llvm.store {{.*}} : i32, !llvm.ptr<1>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 2 : i64} : f16, !llvm.ptr<1>
// CHECK-NOT: llvm.store {{.*}} : i32, !llvm.ptr<1>
// CHECK: gpu.return
func.func @combine_unaligned_rows(%po: tensor<4x2x8x1x59xf32>, %pl: tensor<4x2x8x1xf32>) -> tensor<2x8x1x59xf16> {
  %o = attn.combine %po, %pl : tensor<4x2x8x1x59xf32>, tensor<4x2x8x1xf32> -> tensor<2x8x1x59xf16>
  return %o : tensor<2x8x1x59xf16>
}
