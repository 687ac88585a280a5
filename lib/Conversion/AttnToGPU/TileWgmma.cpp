//===- TileWgmma.cpp - tile.matmul on sm_90a warpgroups -------------------===//
//
// The sm_90a half of the register-tile mapping (TileLowering.h): memory
// tiles in the swizzled layout that wgmma's shared-memory descriptors
// describe, and tile.matmul as one wgmma.mma_async per k-step and
// warpgroup (4 warps, 64 rows). wgmma's accumulator holds, per warp, the
// rows and columns that mma.sync.m16n8k16's accumulators hold for one
// 16-row tile, repeated over the 8-column blocks, and its register A
// operand the A layout of m16n8k16: every other op on register tiles maps
// as on sm_80 (TileFragments.cpp).
//
// Upstream MLIR's nvvm.wgmma.mma_async takes A from shared memory only;
// the register-A form (P for O = P V, as FlashAttention-3 does it) is
// written here as inline PTX, as upstream writes its own op. nvgpu's
// descriptor op wants a TMA tensor-map type, so the descriptors are built
// here from the PTX ISA's bit layout.
//
//===----------------------------------------------------------------------===//

#include "TileLowering.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::tile_lowering;

/// Rows of one wgmma: a warpgroup's.
static constexpr int64_t kWarpgroupRows = 64;
/// Elements of the reduction per wgmma for 16-bit operands.
static constexpr int64_t kWgmmaK = 16;

Value TileLowering::tileOffset(const SharedTile &t, Value row, Value col) {
  int64_t eb = t.elementBytes();
  if (!t.swizzle)
    return e.add(t.offset,
                 e.mul(e.add(e.mul(row, e.c32(t.pitch)), col), e.c32(eb)));
  // Column block, then the byte in the block's row; its 16-byte chunk is
  // XORed with bits 7.. of the linear offset (the row within the 8-row
  // period): the pattern of CU_TENSOR_MAP_SWIZZLE_{32,64,128}B.
  int64_t s = t.swizzle, rows = t.blockRows;
  Value block = e.udiv(col, e.c32(s / eb));
  Value lin =
      e.add(e.mul(row, e.c32(s)), e.mul(e.urem(col, e.c32(s / eb)), e.c32(eb)));
  lin = e.bxor(lin, e.band(e.shr(lin, e.c32(3)), e.c32((s / 16 - 1) << 4)));
  return e.add(t.offset, e.add(e.mul(block, e.c32(rows * s)), lin));
}

Value TileLowering::wgmmaDescriptor(const SharedTile &t, Value byteOffset,
                                    bool kMajor) {
  // PTX ISA, "Matrix Descriptor Format": start address, leading and stride
  // byte offsets (all >> 4) and the swizzle mode. Both layouts step 8 rows
  // by 8 swizzled rows (the stride offset); MN-major ones step the N
  // dimension from one column block to the next (the leading offset),
  // which K-major swizzled ones do not use.
  int64_t s = t.swizzle, rows = t.shape[t.shape.size() - 2];
  int64_t mode = s == 128 ? 1 : s == 64 ? 2 : 3;
  int64_t lbo = kMajor ? 16 : rows * s, sbo = 8 * s;
  uint64_t fields = static_cast<uint64_t>(lbo >> 4) << 16 |
                    static_cast<uint64_t>(sbo >> 4) << 32 |
                    static_cast<uint64_t>(mode) << 62;
  // The start address is the shared base's field plus the offset's: both
  // are multiples of 16 bytes and the window is below 256 KiB, so the sum
  // is the field of their sum, and each descriptor is one add to a value
  // made once per kernel (the base masked to its 18 bits of the shared
  // window, above which it holds the CTA's rank in its cluster). Folded in
  // 64 bits, the masked sum cost a 64-bit add, shift and mask each.
  Value base =
      e.shr(e.band(LLVM::PtrToIntOp::create(b, e.loc, e.i32(), sharedBase()),
                   e.c32(0x3FFFF)),
            e.c32(4));
  Value start = e.add(base, e.shr(byteOffset, e.c32(4)));
  return e.bor(LLVM::ZExtOp::create(b, e.loc, e.i64(), start),
               e.c64(static_cast<int64_t>(fields)));
}

/// The byte offset of k-step `kk` of the K-major tile `t` from row `row`:
/// 16 elements of a row, in the column block that holds them.
static Value kMajorStep(Emitter &e, const SharedTile &t, Value row,
                        int64_t kk) {
  int64_t s = t.swizzle, rows = t.shape[t.shape.size() - 2];
  int64_t byte = kk * kWgmmaK * t.elementBytes();
  return e.add(t.offset, e.add(e.mul(row, e.c32(s)),
                               e.c32(byte / s * rows * s + byte % s)));
}

/// `elems` packed into the literal struct the wgmma ops take and return.
static Value packStruct(Emitter &e, ArrayRef<Value> elems) {
  SmallVector<Type> types(elems.size(), e.f32());
  auto type = LLVM::LLVMStructType::getLiteral(e.b.getContext(), types);
  Value s = LLVM::UndefOp::create(e.b, e.loc, type);
  for (auto [i, v] : llvm::enumerate(elems))
    s = LLVM::InsertValueOp::create(e.b, e.loc, s, v, i);
  return s;
}

static SmallVector<Value> unpackStruct(Emitter &e, Value s, int64_t n) {
  SmallVector<Value> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(LLVM::ExtractValueOp::create(e.b, e.loc, s, i));
  return out;
}

/// wgmma.mma_async with A from registers: four packed pairs of the A
/// layout. `transposeB`: B is MN-major. Inline PTX: upstream's op has no
/// register-A form (see the file comment).
static Value wgmmaRegisterA(Emitter &e, Type elt, int64_t n, ArrayRef<Value> a,
                            Value descB, Value acc, bool scaleD,
                            bool transposeB) {
  int64_t outs = n / 2;
  std::string type = elt.isBF16() ? "bf16" : "f16";
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" +
                     std::to_string(2 * outs + 5) +
                     ", 0;\nwgmma.mma_async.sync.aligned.m64n" +
                     std::to_string(n) + "k16.f32." + type + "." + type + " {";
  std::string constraints;
  for (int64_t i = 0; i < outs; ++i) {
    text += (i ? ", $" : "$") + std::to_string(i);
    constraints += "=f,";
  }
  int64_t at = 2 * outs;
  text += "}, {$" + std::to_string(at) + ", $" + std::to_string(at + 1) +
          ", $" + std::to_string(at + 2) + ", $" + std::to_string(at + 3) +
          "}, $" + std::to_string(at + 4) + ", p, 1, 1, " +
          (transposeB ? "1" : "0") + ";\n}\n";
  SmallVector<Value> operands = unpackStruct(e, acc, outs);
  for (int64_t i = 0; i < outs; ++i)
    constraints += std::to_string(i) + ",";
  for (Value v : a) {
    operands.push_back(v);
    constraints += "r,";
  }
  operands.push_back(descB);
  operands.push_back(e.c32(scaleD ? 1 : 0));
  constraints += "l,n";
  return LLVM::InlineAsmOp::create(
             e.b, e.loc, acc.getType(), operands, text, constraints,
             /*has_side_effects=*/true, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None,
             LLVM::AsmDialectAttr::get(e.b.getContext(),
                                       LLVM::AsmDialect::AD_ATT),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

LogicalResult TileLowering::lowerMatmulWgmma(TileMatmulOp op,
                                             const Fragment &acc,
                                             const SharedTile &r) {
  const FragLayout &l = acc.layout;
  if (r.shape.size() != 2 || !r.swizzle || l.sliced || !l.warpRows ||
      l.mTiles != 1)
    return op.emitOpError("cannot be mapped onto wgmma: it needs a rank-2 "
                          "memory rhs and an accumulator of 16 rows per warp");
  bool transpose = op.getTransposeRhs();
  int64_t n = transpose ? r.shape[0] : r.shape[1];
  int64_t k = transpose ? r.shape[1] : r.shape[0];
  Type elt = r.elementType;
  if (!(elt.isBF16() || elt.isF16()) || n != l.cols || n % 8 || n > 256 ||
      k % kWgmmaK)
    return op.emitOpError("needs f16 or bf16 operands, N a multiple of 8 up "
                          "to 256 and K a multiple of 16 for wgmma m64nNk16");
  int64_t kSteps = k / kWgmmaK;

  std::optional<SharedTile> lhsTile;
  std::optional<Fragment> lhsFrag;
  bool transposeLhs = op.getTransposeLhs();
  if (failed(matmulLhs(op, l, k, lhsTile, lhsFrag)))
    return failure();
  // A transposed lhs is MN-major: [K, rows], each warpgroup's 64 rows
  // whole column blocks of it.
  if (lhsTile && (lhsTile->shape.size() != 2 || !lhsTile->swizzle ||
                  lhsTile->shape[transposeLhs ? 0 : 1] != k ||
                  lhsTile->shape[transposeLhs ? 1 : 0] != Mma::kM * warps ||
                  (transposeLhs && kWarpgroupRows * lhsTile->elementBytes() %
                                       lhsTile->swizzle)))
    return op.emitOpError("has a memory lhs that is not the CTA's ")
           << (transposeLhs ? "[K, rows]" : "[rows, K]") << " tile";

  MLIRContext *ctx = b.getContext();
  NVVM::WGMMATypes type =
      elt.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  // A zero accumulator is not read: the first k-step overwrites it.
  bool zeroAcc = matchPattern(op.getAcc(), m_AnyZeroFloat());
  Value rowBase = e.mul(e.div(warp, e.c32(4)), e.c32(kWarpgroupRows));
  Value c = packStruct(e, acc.elems);
  // Every register a wgmma reads is written before the fence: ptxas
  // otherwise fences again before each one.
  SmallVector<SmallVector<Value>> aRegs;
  if (lhsFrag)
    for (int64_t kk = 0; kk < kSteps; ++kk)
      aRegs.push_back(packA(*lhsFrag, 0, kk, elt));
  NVVM::WgmmaFenceAlignedOp::create(b, e.loc);
  for (int64_t kk = 0; kk < kSteps; ++kk) {
    bool scaleD = !(zeroAcc && kk == 0);
    // K for S = Q K^T is K-major ([N, K] rows); V for O = P V is MN-major.
    Value descB =
        transpose
            ? wgmmaDescriptor(r, kMajorStep(e, r, e.c32(0), kk), true)
            : wgmmaDescriptor(
                  r, e.add(r.offset, e.c32(kk * kWgmmaK * r.swizzle)), false);
    if (lhsFrag) {
      c = wgmmaRegisterA(e, elt, n, aRegs[kk], descB, c, scaleD, !transpose);
      continue;
    }
    Value descA;
    if (transposeLhs) {
      // The warpgroup's rows start a column block; k-step kk is 16 rows
      // down it.
      const SharedTile &t = *lhsTile;
      int64_t blockBytes = t.shape[0] * t.swizzle;
      Value block =
          e.udiv(e.mul(rowBase, e.c32(t.elementBytes())), e.c32(t.swizzle));
      descA = wgmmaDescriptor(
          t,
          e.add(t.offset, e.add(e.mul(block, e.c32(blockBytes)),
                                e.c32(kk * kWgmmaK * t.swizzle))),
          false);
    } else {
      descA =
          wgmmaDescriptor(*lhsTile, kMajorStep(e, *lhsTile, rowBase, kk), true);
    }
    c = NVVM::WgmmaMmaAsyncOp::create(
        b, e.loc, c.getType(), c, descA, descB,
        NVVM::MMAShapeAttr::get(ctx, kWarpgroupRows, n, kWgmmaK), type, type,
        NVVM::WGMMATypes::f32,
        scaleD ? NVVM::WGMMAScaleOut::one : NVVM::WGMMAScaleOut::zero,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
        transposeLhs ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        /*satfinite=*/nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, e.loc);
  // The product stays in flight until its result is first read
  // (awaitWgmma): the work between overlaps it. Its registers are taken
  // out of the struct only then: ptxas serialises the wgmmas of a kernel
  // that reads an accumulator before the wait (C7514).
  wgmmaPending[op.getResult()] = {wgmmaCommitted++, c, l,
                                  b.getInsertionBlock()};
  return success();
}

void TileLowering::completeWgmma(int64_t lastGroup) {
  // Only in the block that issued them, which dominates their uses (a
  // region that reads one awaits it before it starts: awaitWgmmaIn).
  SmallVector<Value> done;
  for (auto &[v, p] : wgmmaPending)
    if (p.group <= lastGroup && p.block == b.getInsertionBlock())
      done.push_back(v);
  for (Value v : done) {
    const PendingWgmma &p = wgmmaPending[v];
    int64_t n =
        cast<LLVM::LLVMStructType>(p.accumulators.getType()).getBody().size();
    regs[v] = Fragment{p.layout, unpackStruct(e, p.accumulators, n)};
    wgmmaPending.erase(v);
  }
}

void TileLowering::awaitWgmma(Value result) {
  auto it = wgmmaPending.find(result);
  if (it == wgmmaPending.end())
    return;
  // Groups complete in order: wait until at most the later ones are
  // pending.
  int64_t group = it->second.group;
  anchorWgmmaWait(group);
  NVVM::WgmmaWaitGroupSyncOp::create(b, e.loc, wgmmaCommitted - group - 1);
  completeWgmma(group);
}

void TileLowering::awaitWgmmaIn(Operation *op) {
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      awaitWgmma(v);
  });
}

void TileLowering::awaitAllWgmma(int64_t since) {
  bool any = llvm::any_of(wgmmaPending,
                          [&](auto &p) { return p.second.group >= since; });
  if (!any)
    return;
  anchorWgmmaWait(wgmmaCommitted - 1);
  NVVM::WgmmaWaitGroupSyncOp::create(b, e.loc, 0);
  completeWgmma(wgmmaCommitted);
}

void TileLowering::anchorWgmmaWait(int64_t group) {
  // ptxas schedules a `wgmma.wait_group` as if it cost nothing: it hoists
  // it above independent work that the PTX puts before it, and so
  // serialises what the wait was placed to overlap. In the rotated forward
  // loop the softmax of tile n (64 ex2 a thread) ran after the wait for
  // P V of tile n - 1 (SASS: WARPGROUP.DEPBAR before the first MUFU.EX2).
  // ptxas keeps a wait after a shared-memory store, so the row statistics
  // last reduced since `group` was issued (the row sums, which every ex2
  // feeds) are stored to a slot nothing reads, just before the wait.
  WaitAnchor &a = waitAnchor;
  if (a.block != b.getInsertionBlock() || a.committed <= group ||
      a.values.empty())
    return;
  Value slot = anchorSlot();
  for (auto [i, v] : llvm::enumerate(a.values))
    LLVM::StoreOp::create(
        b, e.loc, v,
        e.gep(slot, e.f32(), e.c32(static_cast<int64_t>(i % 2))), 4);
  a = WaitAnchor();
}
