//===- MmaLayout.h - register layout of the tensor-core tiles ---*- C++ -*-===//
//
// The register (fragment) layout of mma.sync.aligned.m16n8k16 with 16-bit
// A and B and f32 C/D, declared once (PTX ISA, "Matrix Fragments for
// mma.m16n8k16"). Every step of the GPU lowering that touches fragments,
// the two products, the softmax on the accumulator, P as the A operand,
// the epilogue and the cross-warp merge, asks this struct where an element
// lives; nothing else encodes lane arithmetic. (Upstream's NVGPU
// MmaSyncBuilder declares the same layouts for its transform op.)
//
// Lane l = 4 g + t: g = l / 4 selects a row pair (g, g + 8) of a 16-row
// tile, t = l % 4 a column pair (2t, 2t + 1) of each 8-column block.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_MMALAYOUT_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_MMALAYOUT_H

#include "Emitter.h"

#include <utility>

namespace mlir {
namespace attn {

struct MmaM16N8K16 {
  static constexpr int64_t kM = 16, kN = 8, kK = 16;
  /// f32 accumulator elements of one 16 x 8 tile a thread holds.
  static constexpr int64_t kAccElements = 4;
  /// 32-bit registers (two 16-bit values each) of one 16 x 16 A tile.
  static constexpr int64_t kARegisters = 4;

  MmaM16N8K16(Emitter &e, Value lane)
      : lane(lane), g(e.div(lane, e.c32(4))), t(e.rem(lane, e.c32(4))) {}

  Value lane, g, t;

  /// Accumulator element `i` (0..3) of a 16 x 8 tile lies in row
  /// g + 8 rowHalf(i) and column 2t + colOffset(i).
  static constexpr int64_t rowHalf(int64_t i) { return i / 2; }
  static constexpr int64_t colOffset(int64_t i) { return i % 2; }

  /// Row of this thread's half `half` (0: g, 1: g + 8) of m-tile `mt` of a
  /// tile whose first row is `base` (null: 0).
  Value accRow(Emitter &e, Value base, int64_t mt, int64_t half) const {
    int64_t offset = mt * kM + half * 8;
    if (base)
      return e.add(e.add(base, g), e.c32(offset));
    return offset ? e.add(g, e.c32(offset)) : g;
  }

  /// Column of accumulator element `i` of 8-column block `nb`.
  Value accColumn(Emitter &e, int64_t nb, int64_t i) const {
    return e.add(e.c32(nb * kN + colOffset(i)), e.mul(t, e.c32(2)));
  }

  /// Whether this lane is the one of its row's four that writes per-row
  /// values (LSE, softmax statistics).
  Value firstOfRow(Emitter &e) const { return e.eq(t, e.c32(0)); }

  /// P (accumulator layout) as the A operand: register `reg` of k-step kk
  /// packs accumulator elements (first, first + 1) of 8-column block
  /// 2 kk + blockOffset. Returns {blockOffset, first}.
  static constexpr std::pair<int64_t, int64_t> aFromAccumulator(int64_t reg) {
    return {reg / 2, (reg % 2) * 2};
  }

  /// ldmatrix.x4 source row and column (within a 16 x 16 block) of this
  /// lane for the A operand of a row-major tile: registers a0..a3.
  std::pair<Value, Value> ldmatrixA(Emitter &e) const {
    return {e.rem(lane, e.c32(16)), e.mul(e.div(lane, e.c32(16)), e.c32(8))};
  }

  /// ldmatrix.x4 source row and column for B of two 8-column blocks stored
  /// as [n][k] rows (K for S = Q K^T): registers {b0, b1} of block nb, then
  /// of block nb + 1.
  std::pair<Value, Value> ldmatrixB(Emitter &e) const {
    return {e.add(e.mul(e.div(lane, e.c32(16)), e.c32(8)),
                  e.rem(lane, e.c32(8))),
            e.mul(e.rem(e.div(lane, e.c32(8)), e.c32(2)), e.c32(8))};
  }

  /// ldmatrix.x4.trans source row and column for B stored as [k][n] rows
  /// (V for O = P V); registers as in ldmatrixB.
  std::pair<Value, Value> ldmatrixBTransposed(Emitter &e) const {
    return {e.add(e.mul(e.rem(e.div(lane, e.c32(8)), e.c32(2)), e.c32(8)),
                  e.rem(lane, e.c32(8))),
            e.mul(e.div(lane, e.c32(16)), e.c32(8))};
  }

  /// Reduces `v` over the four lanes that hold one accumulator row.
  Value rowReduce(Emitter &e, Value v, bool isMax) const {
    for (int64_t offset : {1, 2}) {
      Value other = gpu::ShuffleOp::create(e.b, e.loc, v, offset, 32,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      v = isMax ? e.fmax(v, other) : e.fadd(v, other);
    }
    return v;
  }
};

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_MMALAYOUT_H
