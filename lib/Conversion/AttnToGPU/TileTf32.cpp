//===- TileTf32.cpp - f32 products on TF32 tensor cores -------------------===//
//
// tile.matmul of f32 tiles on sm_80's mapping (TileLowering.h): one
// mma.sync.aligned.m16n8k8 with TF32 operands per 16 x 8 x 8 step. TF32
// keeps 10 bits of an f32's 23-bit mantissa; by default each operand x is
// split into hi = tf32(x) and lo = tf32(x - hi), and a step adds
// lo(a) hi(b) + hi(a) lo(b) + hi(a) hi(b) (3xTF32, as CUTLASS's
// OpMultiplyAddFastF32 does): a product within a few f32 roundings, which
// f32's tolerance holds. With the lowering's `tf32` one product per step
// (hi(a) hi(b)) runs 3x fewer tensor-core instructions at TF32's accuracy.
//
// The accumulator layout is m16n8k16's (MmaLayout.h), so the softmax, the
// epilogue and every map and reduction on register tiles are the same as
// for 16-bit tiles. Only the operands differ: m16n8k8's A holds (row g,
// k t) and (row g, k t + 4) in registers 0 and 2 (1 and 3: row g + 8), B
// (k t, n g) and (k t + 4, n g). The sum runs over k in any order, so this
// mapping reads logical k t as column 2t of the 8-column step and t + 4 as
// column 2t + 1: a row-major tile's two elements of a lane are adjacent
// (one 8-byte load), and P's accumulator elements (g, 2t) and (g, 2t + 1)
// are its A operand as they are held, with no shuffle. V (rows of k) is
// read one element per register. ldmatrix moves 16-bit elements and its
// transposing form cannot move f32 ones; plain loads serve every tile.
//
//===----------------------------------------------------------------------===//

#include "TileLowering.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::tile_lowering;

namespace {
/// m16n8k8's k, and its A and B registers (per part).
constexpr int64_t kK8 = 8, kARegs = 4, kBRegs = 2;
} // namespace

SmallVector<Value> TileLowering::tf32Parts(ArrayRef<Value> values) {
  SmallVector<Value> hi, lo;
  for (Value x : values) {
    Value h = NVVM::ConvertFloatToTF32Op::create(
        b, e.loc, e.i32(), x, NVVM::FPRoundingMode::RNA,
        NVVM::SaturationMode::NONE, /*relu=*/false);
    hi.push_back(h);
    if (tf32)
      continue;
    Value rest = e.fsub(x, LLVM::BitcastOp::create(b, e.loc, e.f32(), h));
    lo.push_back(NVVM::ConvertFloatToTF32Op::create(
        b, e.loc, e.i32(), rest, NVVM::FPRoundingMode::RNA,
        NVVM::SaturationMode::NONE, /*relu=*/false));
  }
  llvm::append_range(hi, lo);
  return hi;
}

/// Two adjacent f32 of shared memory at `ptr` (8-byte aligned).
static std::pair<Value, Value> loadPair(Emitter &e, Value ptr) {
  auto v2 = VectorType::get({2}, e.f32());
  Value pair = LLVM::LoadOp::create(e.b, e.loc, v2, ptr, /*alignment=*/8);
  auto at = [&](int64_t i) {
    return Value(LLVM::ExtractElementOp::create(e.b, e.loc, pair,
                                                e.c32(i)));
  };
  return {at(0), at(1)};
}

SmallVector<Value> TileLowering::sharedATf32(const SharedTile &tile,
                                             Value rowBase, int64_t mt,
                                             int64_t kk) {
  Value row = e.add(rowBase, frag->g), col = e.mul(frag->t, e.c32(2));
  int64_t dRow = mt * Mma::kM, dCol = kk * kK8;
  auto [a0, a2] = loadPair(e, tileAddress(tile, row, col, dRow, dCol));
  auto [a1, a3] = loadPair(e, tileAddress(tile, row, col, dRow + 8, dCol));
  return tf32Parts({a0, a1, a2, a3});
}

LogicalResult TileLowering::lowerMatmulTf32(TileMatmulOp op,
                                            const Fragment &acc,
                                            const SharedTile &r) {
  const FragLayout &l = acc.layout;
  FailureOr<MmaRhs> rhs = mmaRhs(op, l, r);
  if (failed(rhs))
    return failure();
  auto [rhsRow, transpose, n, k] = *rhs;
  if (n != l.cols || n % Mma::kN || k % kK8)
    return op.emitOpError("needs N in multiples of 8 equal to the "
                          "accumulator's columns and K in multiples of 8 for "
                          "mma.sync.m16n8k8 on TF32 parts");
  int64_t kSteps = k / kK8, parts = tf32 ? 1 : 2;

  std::optional<SharedTile> lhsTile;
  std::optional<Fragment> lhsFrag;
  if (failed(matmulLhs(op, l, k, lhsTile, lhsFrag)))
    return failure();
  auto hoisted = hoistedA.find(op.getLhs());
  // The A parts of m-tile mt, k-step kk: hi registers, then lo ones.
  auto aOperand = [&](int64_t mt, int64_t kk) -> SmallVector<Value> {
    if (hoisted != hoistedA.end())
      return llvm::to_vector(ArrayRef(hoisted->second)
                                 .slice((mt * kSteps + kk) * kARegs * parts,
                                        kARegs * parts));
    if (lhsTile) {
      Value base =
          l.warpRows ? e.mul(warp, e.c32(l.mTiles * Mma::kM)) : e.c32(0);
      return sharedATf32(*lhsTile, base, mt, kk);
    }
    // P in the accumulator layout: 8-column block kk is the step's A.
    const Value *c = lhsFrag->elems.begin() + mt * lhsFrag->layout.perTile() +
                     kk * Mma::kAccElements;
    return tf32Parts({c[0], c[2], c[1], c[3]});
  };
  // The B parts of 8-column block nb, k-step kk.
  Value lane2t = e.mul(frag->t, e.c32(2));
  auto bOperand = [&](int64_t nb, int64_t kk) -> SmallVector<Value> {
    if (transpose) {
      // Rows of n (K for S = Q K^T): the lane's two k are adjacent.
      auto [b0, b1] =
          loadPair(e, tileAddress(r, e.add(rhsRow, frag->g), lane2t,
                                  nb * Mma::kN, kk * kK8));
      return tf32Parts({b0, b1});
    }
    // Rows of k (V for O = P V): one element from each of two rows.
    auto load = [&](int64_t dRow) {
      return Value(LLVM::LoadOp::create(
          b, e.loc, e.f32(),
          tileAddress(r, e.add(rhsRow, lane2t), frag->g, kk * kK8 + dRow,
                      nb * Mma::kN),
          /*alignment=*/4));
    };
    return tf32Parts({load(0), load(1)});
  };

  MLIRContext *ctx = b.getContext();
  Type f32 = e.f32();
  auto structTy = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
  auto mma = [&](ArrayRef<Value> a, ArrayRef<Value> bFrag,
                 MutableArrayRef<Value> c) {
    Value res = NVVM::MmaOp::create(
        b, e.loc, structTy, a, bFrag, c, {16, 8, 8}, std::nullopt,
        std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::tf32,
                                      NVVM::MMATypes::tf32},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    for (int64_t i = 0; i < Mma::kAccElements; ++i)
      c[i] = LLVM::ExtractValueOp::create(b, e.loc, res, i);
  };

  // A product into an accumulator that a loop carries (O += P V across
  // the key tiles, dQ across the key tiles, dK and dV across the query
  // tiles) runs its MMAs from zero and adds their result with f32 adds: the
  // tensor cores round their f32 sums toward zero, which biases a chain of
  // MMAs through every key tile, while f32 adds round to nearest. H100,
  // D = 128, 3xTF32, O against float64: the chain 2.9e-5 at 4k keys and
  // 1.2e-4 at 16k, the fresh sums 1.4e-6 at both (SDPA's f32 kernel
  // 8.9e-7), at 0.89x the speed (docs/GPU.md). In chunks of
  // kFreshSumBlocks 8-column blocks (32 registers a thread). Only where
  // the accumulator has at most 32 registers a thread (D = 64) or, with
  // 3xTF32 products, its loop carries at most 64 (O and dQ up to D = 128,
  // dK and dV up to D = 64): ptxas spilled beside larger ones; and with
  // TF32 products (--tf32) TF32's own rounding (4e-4) hides the chain's
  // bias, so D = 128 would lose 10% for nothing.
  constexpr int64_t kFreshSumAccRegs = 32, kFreshSumLoopRegs = 64,
                    kFreshSumBlocks = 8;
  SmallVector<Value> c = acc.elems;
  auto loop = op->getParentOfType<scf::ForOp>();
  bool running = loop &&
                 (static_cast<int64_t>(c.size()) <= kFreshSumAccRegs ||
                  (!tf32 && carriedRegisters(loop) <= kFreshSumLoopRegs)) &&
                 !llvm::all_of(c, [](Value v) {
                   return matchPattern(v, m_AnyZeroFloat());
                 });
  int64_t blocks = n / Mma::kN,
          chunk = running ? std::min(blocks, kFreshSumBlocks) : blocks;
  auto product = [&](ArrayRef<Value> a, ArrayRef<Value> bp,
                     MutableArrayRef<Value> out) {
    ArrayRef<Value> aHi = a.take_front(kARegs), bHi = bp.take_front(kBRegs);
    if (!tf32) {
      // The small terms first, then the large one.
      mma(a.drop_front(kARegs), bHi, out);
      mma(aHi, bp.drop_front(kBRegs), out);
    }
    mma(aHi, bHi, out);
  };
  for (int64_t nb0 = 0; nb0 < blocks; nb0 += chunk) {
    int64_t nb1 = std::min(blocks, nb0 + chunk);
    // The chunk's fresh sums [nb - nb0][mt], or the accumulator itself.
    SmallVector<Value> fresh;
    if (running)
      fresh.assign((nb1 - nb0) * l.mTiles * Mma::kAccElements, e.cf(0.0));
    auto out = [&](int64_t nb, int64_t mt) {
      if (running)
        return MutableArrayRef<Value>(
            fresh.data() + ((nb - nb0) * l.mTiles + mt) * Mma::kAccElements,
            Mma::kAccElements);
      return MutableArrayRef<Value>(c.data() + mt * l.perTile() +
                                        nb * Mma::kAccElements,
                                    Mma::kAccElements);
    };
    // k-steps outermost: one step's A parts live at a time.
    for (int64_t kk = 0; kk < kSteps; ++kk) {
      SmallVector<SmallVector<Value>> as;
      for (int64_t mt = 0; mt < l.mTiles; ++mt)
        as.push_back(aOperand(mt, kk));
      for (int64_t nb = nb0; nb < nb1; ++nb) {
        SmallVector<Value> bp = bOperand(nb, kk);
        for (int64_t mt = 0; mt < l.mTiles; ++mt)
          product(as[mt], bp, out(nb, mt));
      }
    }
    if (!running)
      continue;
    for (int64_t nb = nb0; nb < nb1; ++nb)
      for (int64_t mt = 0; mt < l.mTiles; ++mt)
        for (int64_t i = 0; i < Mma::kAccElements; ++i) {
          Value &sum = c[mt * l.perTile() + nb * Mma::kAccElements + i];
          sum = e.fadd(sum, out(nb, mt)[i]);
        }
  }
  regs[op.getResult()] = Fragment{l, c};
  return success();
}
