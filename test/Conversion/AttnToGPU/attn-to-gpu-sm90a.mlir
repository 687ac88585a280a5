// RUN: attn-opt %s -split-input-file -attn-to-gpu=chip=sm_90a | FileCheck %s
// RUN: attn-opt %s -split-input-file -attn-to-gpu="chip=sm_90a persistent=true" | FileCheck %s --check-prefix=PERSIST
// RUN: not attn-opt %s -attn-to-gpu=chip=sm_75 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt %s -attn-to-gpu=chip=gfx90a 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt %s -attn-to-gpu=chip=sm_100 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt %s --attn-to-ptx=chip=sm_120 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt %s -attn-to-gpu=chip= 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt %s --attn-to-ptx="chip=" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt %s --attn-to-ptx=chip=sm_75 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt %s -split-input-file -attn-to-gpu="chip=sm_90a m-tiles=2" 2>&1 | FileCheck %s --check-prefix=MTILES
// RUN: not attn-opt %s -split-input-file -attn-to-gpu="chip=sm_90a warps=6" 2>&1 | FileCheck %s --check-prefix=WARPS
// RUN: attn-opt %s -split-input-file -attn-to-gpu=chip=sm_90 | FileCheck %s --check-prefix=SM90

// CHIP: attn-to-gpu: chip must be one of sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a (the kernels are PTX 8.0), got
// MTILES: the sm_90a kernels run warpgroups of 4 warps with 16 query rows per warp (m-tiles = 1)
// WARPS: the sm_90a kernels run warpgroups of 4 warps with 16 query rows per warp (m-tiles = 1) and tiles of a multiple of 16 keys, at most 256; got 6 warps
// SM90-NOT: wgmma

// On sm_90a the forward kernel is the same tile form on two warpgroups:
// 128 query rows, 128-key tiles in 2 stages, unpadded swizzled tiles
// (Q 16 KiB, K and V rings 32 KiB each) and 3 mbarriers (32 bytes with
// padding). The tensor maps of q, k, v follow the ABI's parameters as
// pointers; attn-grid-constants makes them by-value after the NVVM
// conversion, at their positions among the llvm.func's arguments (each
// memref 3 + 2 x rank of them). Thread 0 initialises the barriers: one
// arrival for each K/V group, one for the load of Q. It copies Q (one
// 128-byte column block, box coordinates innermost first: column, row,
// head, batch) on the last barrier, and the first K/V tile as one group
// on barrier 0, armed with its 32 KiB. Before the loop the CTA waits for
// Q; at the top of iteration j for group j (slot j % 2, parity (j / 2) %
// 2), then a CTA barrier frees the stage the prefetch reuses, whose group
// j + 1 arms slot (j + 1) % 2.
// CHECK: kernel attn_fwd_bf16_d64_dv64_none kind=forward {{.*}} block_q=128 block_kv=128 threads=256 smem=81952 tma=q:128x64:128,k:128x64:128,v:128x64:128 params={{.*}},window:i64,q_tmap:tmap4,k_tmap:tmap4,v_tmap:tmap4
// CHECK-LABEL: gpu.func @attn_fwd_bf16_d64_dv64_none(
// CHECK-SAME: %[[QMAP:[a-z0-9]+]]: !llvm.ptr, %[[KMAP:[a-z0-9]+]]: !llvm.ptr, %[[VMAP:[a-z0-9]+]]: !llvm.ptr) kernel
// CHECK-SAME: attn.grid_constants = array<i64: 55, 56, 57>
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK: %[[BARRIERS:.*]] = arith.constant 81920 : i32
// CHECK: scf.if
// CHECK-COUNT-3: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[QBAR:.*]], %c16384_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[QMAP]], %[[QBAR]], box[%c0_i32{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK: scf.if
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[B0:.*]], %c32768_i32 : !llvm.ptr<3>, i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP]], %[[B0]], box
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VMAP]], %[[B0]], box
// CHECK: llvm.inline_asm has_side_effects {{.*}}mbarrier.try_wait.parity.shared::cta.b64{{.*}}vote.sync.all.pred{{.*}}"r,r,n" %{{.*}}, %c0_i32{{.*}}, %c10000000_i32
// CHECK: scf.for %[[J:.*]] = %[[LB:[a-z0-9_]+]] to
// CHECK: %[[ITER:.*]] = arith.divsi
// CHECK: arith.remui %[[ITER]], %c2_i32
// CHECK: llvm.inline_asm has_side_effects {{.*}}mbarrier.try_wait.parity.shared::cta.b64{{.*}}vote.sync.all.pred
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK: arith.addi %[[ITER]], %c1_i32
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// S = Q K^T: 4 k-steps, Q and K from shared-memory descriptors (K K-major:
// B layout col), the first step not reading the zero accumulator. P V: P
// packed from the S accumulators in registers, V MN-major (the trailing 1
// in the PTX). Each product is waited for where its result is first read,
// and its registers are taken out of the wgmma's struct only then. No
// cp.async: every copy is a TMA box. A descriptor's start address is the
// shared base's field (its 18 bits of the shared window, >> 4) plus the
// tile offset >> 4, in 32 bits, then the constant fields.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[SBASE:.*]] = llvm.ptrtoint %{{.*}} : !llvm.ptr<3> to i32
// CHECK-NEXT: %[[MASKED:.*]] = arith.andi %[[SBASE]], %c262143_i32{{.*}} : i32
// CHECK-NEXT: %[[FIELD:.*]] = arith.shrui %[[MASKED]], %{{.*}} : i32
// CHECK: %[[START:.*]] = arith.addi %[[FIELD]], %{{.*}} : i32
// CHECK: %[[WIDE:.*]] = llvm.zext %[[START]] : i32 to i64
// CHECK-NEXT: arith.ori %[[WIDE]], %c4611686293305360384_i64{{.*}} : i64
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: llvm.extractvalue
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: llvm.extractvalue
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;
// CHECK-COUNT-7: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.mma.sync
// CHECK-NOT: nvvm.ldmatrix
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: gpu.return
func.func @forward(%q: tensor<2x4x100x64xbf16>, %k: tensor<2x4x130x64xbf16>, %v: tensor<2x4x130x64xbf16>) -> tensor<2x4x100x64xbf16> {
  %o = attn.attention %q, %k, %v : tensor<2x4x100x64xbf16>, tensor<2x4x130x64xbf16>, tensor<2x4x130x64xbf16> -> tensor<2x4x100x64xbf16>
  return %o : tensor<2x4x100x64xbf16>
}

// -----

// Rows of 80 f16 (160 bytes) take the 32-byte swizzle, V of Dv = 48 too;
// D = 256 keeps 64-key tiles; causal and a boolean mask map as on sm_80.
// CHECK: kernel attn_fwd_f16_d80_dv48_top_left_boolmask kind=forward {{.*}} block_q=128 block_kv=128 threads=256
// CHECK-LABEL: gpu.func @attn_fwd_f16_d80_dv48_top_left_boolmask(
// The K-major descriptors' constant fields: 32-byte swizzle (mode 3 in
// bits 62-63), 8 rows of 32 bytes between 8-row groups (256 >> 4 in bits
// 32-45), leading offset 1.
// CHECK: arith.constant -4611685949707845632 : i64
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK: wgmma.mma_async.sync.aligned.m64n48k16.f32.f16.f16
func.func @odd_dims(%q: tensor<1x2x33x80xf16>, %k: tensor<1x2x47x80xf16>, %v: tensor<1x2x47x48xf16>, %m: tensor<33x47xi1>) -> tensor<1x2x33x48xf16> {
  %o = attn.attention %q, %k, %v mask(%m : tensor<33x47xi1>) {causal = #attn.causal<top_left>} : tensor<1x2x33x80xf16>, tensor<1x2x47x80xf16>, tensor<1x2x47x48xf16> -> tensor<1x2x33x48xf16>
  return %o : tensor<1x2x33x48xf16>
}

// -----

// Past D = 64 (and without a mask operand) the kernel is warp-specialised:
// a producer warpgroup after the 8 consumer warps (384 threads, a register
// cap at entry: minctasm 1), 2 stages of 80-key tiles (the widest whose
// two stages fit next to Q, as 3 stages of 64 do not), and the rotated
// loop: iteration j issues S of tile j and P V of tile j - 1. Per stage a
// full and an empty barrier (one arrival per consumer warpgroup) for the K
// tiles, and the same for the V tiles (the V loads' attn.ring_lag = 1).
// The producer gives registers away and one of its threads (tid 256)
// issues every copy: Q (4 column blocks of 128 bytes) and, in a loop that
// carries nothing, each K tile and then each V tile after waiting for its
// stage's empty barrier. The consumers take the registers, wait for Q,
// then in iteration j for K tile j and V tile max(j - 1, 0); P V is in
// flight while the softmax waits for S alone; at the end of the iteration
// the first thread of each warpgroup frees K tile j's stage and, from
// j = 1, V tile j - 1's. After the loop they wait for the last V tile, for
// the last P V.
// CHECK: kernel attn_fwd_bf16_d256_dv256_bottom_right kind=forward {{.*}} block_q=128 block_kv=80 threads=384 smem=229456 tma=q:128x64:128,k:80x64:128,v:80x64:128
// CHECK-LABEL: gpu.func @attn_fwd_bf16_d256_dv256_bottom_right(
// CHECK-SAME: nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32
// CHECK-COUNT-3: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK-COUNT-2: nvvm.mbarrier.init %{{.*}}, %c2_i32
// CHECK-COUNT-2: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK-COUNT-2: nvvm.mbarrier.init %{{.*}}, %c2_i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// CHECK: %[[PRODUCER:.*]] = arith.cmpi sge, %{{.*}}, %c256_i32
// CHECK: scf.if %[[PRODUCER]] {
// CHECK-NEXT: nvvm.setmaxregister decrease 24
// CHECK: arith.cmpi eq, %{{.*}}, %c256_i32
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c65536_i32
// CHECK-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i32 {
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c40960_i32
// CHECK-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c40960_i32
// CHECK-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: } else {
// CHECK-NEXT: nvvm.setmaxregister increase 240
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: llvm.inline_asm has_side_effects {{.*}}mbarrier.try_wait.parity.shared::cta.b64{{.*}}vote.sync.all.pred
// CHECK: scf.for %[[J:[a-z0-9]+]] =
// CHECK: %[[ITER:.*]] = arith.divsi
// CHECK: llvm.inline_asm has_side_effects {{.*}}mbarrier.try_wait.parity.shared::cta.b64{{.*}}vote.sync.all.pred
// CHECK: %[[BACK:.*]] = arith.subi %[[ITER]], %c1_i32
// CHECK: arith.maxsi %[[BACK]], %c0_i32
// CHECK: llvm.inline_asm has_side_effects {{.*}}mbarrier.try_wait.parity.shared::cta.b64{{.*}}vote.sync.all.pred
// CHECK-NOT: gpu.barrier
// CHECK: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: %[[WG:.*]] = arith.remui %{{.*}}, %c128_i32
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[WG]], %c0_i32
// CHECK: scf.if %[[FIRST]] {
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK: %[[LAGGED:.*]] = arith.cmpi sge, %[[ITER]], %c1_i32
// CHECK: scf.if %[[LAGGED]] {
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK: scf.yield
// CHECK: scf.if
// CHECK: arith.subi %{{.*}}, %c1_i32
// CHECK: llvm.inline_asm has_side_effects {{.*}}mbarrier.try_wait.parity.shared::cta.b64{{.*}}vote.sync.all.pred
// CHECK: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: gpu.return

// With persistent=true the same kernel is persistent (the producer at 40
// registers, the consumers at 232), with a third empty barrier, Q's. The
// producer's thread walks the tiles grid-stride (the manifest's
// grid=persistent), carrying the barriers' phases (bit s: stage s's fills
// so far, mod 2; bit 16: Q's, one a tile), which flip by the tile's fills
// after its loop: per tile it waits until Q is free, loads Q and the
// prologue group and, in its loop, each group after waiting for its
// stage's empty barrier. The consumers walk the same tiles: they wait for
// Q and each group, release each stage at the end of an iteration, and Q
// after the loop (its last read). Its loop is not rotated (with 232
// registers a consumer spilled rotated at D = 256), so one barrier set.
// PERSIST: kernel attn_fwd_bf16_d256_dv256_bottom_right kind=forward {{.*}} block_q=128 block_kv=80 threads=384 smem=229440 grid=persistent tma=q:128x64:128,k:80x64:128,v:80x64:128
// PERSIST-LABEL: gpu.func @attn_fwd_bf16_d256_dv256_bottom_right(
// PERSIST-SAME: nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32
// PERSIST-COUNT-3: nvvm.mbarrier.init %{{.*}}, %c1_i32
// PERSIST-COUNT-3: nvvm.mbarrier.init %{{.*}}, %c2_i32
// PERSIST-NEXT: nvvm.fence.mbarrier.init
// PERSIST: gpu.barrier
// PERSIST: %[[PRODUCER:.*]] = arith.cmpi sge, %{{.*}}, %c256_i32
// PERSIST: scf.if %[[PRODUCER]] {
// PERSIST-NEXT: nvvm.setmaxregister decrease 40
// PERSIST: arith.cmpi eq, %{{.*}}, %c256_i32
// PERSIST: gpu.block_id x
// PERSIST: gpu.grid_dim x
// PERSIST: %[[TILES:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[STATE:.*]] = %{{.*}}) -> (i32) : i32 {
// PERSIST: %[[QPHASE:.*]] = arith.shrui %[[STATE]], %c16_i32
// PERSIST: %[[PARITY:.*]] = arith.andi %[[QPHASE]], %c1_i32
// PERSIST: %[[FREE:.*]] = arith.xori %[[PARITY]], %c1_i32
// PERSIST: nvvm.mbarrier.try_wait.parity %{{.*}}, %[[FREE]], %{{.*}}
// PERSIST: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c65536_i32
// PERSIST-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global
// PERSIST: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i32 {
// PERSIST: nvvm.mbarrier.try_wait.parity
// PERSIST: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c81920_i32
// PERSIST-COUNT-8: nvvm.cp.async.bulk.tensor.shared.cluster.global
// PERSIST: %[[NEXT:.*]] = arith.xori %[[STATE]], %{{.*}} : i32
// PERSIST: scf.yield %[[NEXT]] : i32
// PERSIST: } else {
// PERSIST-NEXT: nvvm.setmaxregister increase 232
// PERSIST-NOT: nvvm.cp.async.bulk.tensor
// PERSIST: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (i32) : i32 {
// PERSIST: llvm.inline_asm has_side_effects {{.*}}mbarrier.try_wait.parity.shared::cta.b64{{.*}}vote.sync.all.pred
// PERSIST: scf.for
// PERSIST: llvm.inline_asm has_side_effects {{.*}}mbarrier.try_wait.parity.shared::cta.b64{{.*}}vote.sync.all.pred
// PERSIST-NOT: gpu.barrier
// PERSIST: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// PERSIST: %[[WG:.*]] = arith.remui %{{.*}}, %c128_i32
// PERSIST: %[[FIRST:.*]] = arith.cmpi eq, %[[WG]], %c0_i32
// PERSIST: scf.if %[[FIRST]] {
// PERSIST: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// PERSIST: scf.yield
// PERSIST: %[[QWG:.*]] = arith.remui %{{.*}}, %c128_i32
// PERSIST: %[[QFIRST:.*]] = arith.cmpi eq, %[[QWG]], %c0_i32
// PERSIST: scf.if %[[QFIRST]] {
// PERSIST: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// PERSIST: scf.yield %{{.*}} : i32
// PERSIST-NOT: nvvm.cp.async.bulk.tensor
// PERSIST: gpu.return
func.func @wide(%q: tensor<1x2x64x256xbf16>, %k: tensor<1x2x64x256xbf16>, %v: tensor<1x2x64x256xbf16>) -> tensor<1x2x64x256xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<1x2x64x256xbf16>, tensor<1x2x64x256xbf16>, tensor<1x2x64x256xbf16> -> tensor<1x2x64x256xbf16>
  return %o : tensor<1x2x64x256xbf16>
}

// -----

// Split-KV decode keeps the warp mapping: its 16 packed rows fill no
// 64-row warpgroup.
// CHECK-LABEL: gpu.func @attn_dec_bf16_d128_dv128_none(
// CHECK-NOT: wgmma
// CHECK: nvvm.mma.sync
// CHECK: gpu.return
func.func @decode(%q: tensor<1x32x1x128xbf16>, %k: tensor<1x8x4096x128xbf16>, %v: tensor<1x8x4096x128xbf16>) -> tensor<1x32x1x128xbf16> {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 4 : i64} : tensor<1x32x1x128xbf16>, tensor<1x8x4096x128xbf16>, tensor<1x8x4096x128xbf16> -> tensor<4x1x32x1x128xf32>, tensor<4x1x32x1xf32>
  %o = attn.combine %po, %pl : tensor<4x1x32x1x128xf32>, tensor<4x1x32x1xf32> -> tensor<1x32x1x128xbf16>
  return %o : tensor<1x32x1x128xbf16>
}
