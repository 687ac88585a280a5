//===- KernelBuilder.cpp - FlashAttention kernels as gpu.func -------------===//
//
// Emits the tensor-core kernels of attn's GPU lowering. Upstream MLIR has the
// nvgpu/nvvm ops for ldmatrix, mma.sync and cp.async but no pass that
// produces them from linalg, so these kernels are written here, op by op.
//
// Forward and decode-partial share one body (FlashAttention-2 order): a CTA
// owns up to 16 x warps query rows; each warp keeps its 16 rows of Q in
// registers as mma A fragments, streams K/V tiles through two shared-memory
// stages with cp.async, computes S = Q K^T and O += P V with
// mma.sync.m16n8k16 (f32 accumulate), and keeps the running max, sum and the
// unnormalised O in registers. Scores are scaled by scale * log2(e) and
// exponentiated with ex2.approx. Where each fragment element lives is
// MmaLayout.h's business alone.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/KernelSpec.h"
#include "Emitter.h"
#include "MmaLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <limits>
#include <sstream>

using namespace mlir;
using namespace mlir::attn;

/// K/V tiles in shared memory: the one in use, the next, and the one being
/// loaded.
static constexpr int64_t kStages = 3;

//===----------------------------------------------------------------------===//
// KernelSpec
//===----------------------------------------------------------------------===//

int64_t KernelSpec::sharedMemoryBytes() const {
  if (kind == KernelKind::DecodeCombine)
    return 0;
  int64_t q = rows() * (headDim + 8) * 2;
  int64_t k = kStages * blockKV * (headDim + 8) * 2;
  int64_t v = kStages * blockKV * (valueDim + 8) * 2;
  return q + k + v;
}

static std::string typeName(Type t) {
  if (t.isF16())
    return "f16";
  if (t.isBF16())
    return "bf16";
  if (t.isF32())
    return "f32";
  return "?";
}

std::string KernelSpec::name() const {
  std::ostringstream os;
  os << (kind == KernelKind::Forward         ? "attn_fwd"
         : kind == KernelKind::DecodePartial ? "attn_dec"
                                             : "attn_comb")
     << "_" << typeName(elementType);
  if (kind != KernelKind::DecodeCombine)
    os << "_d" << headDim;
  os << "_dv" << valueDim;
  if (kind != KernelKind::DecodeCombine)
    os << "_" << stringifyCausalKind(causal).str();
  if (mask != MaskOperand::None)
    os << (mask == MaskOperand::Additive ? "_addmask" : "_boolmask");
  return os.str();
}

StringRef KernelSpec::kindName() const {
  switch (kind) {
#define ATTN_KERNEL_KIND(ENUM, KIND)                                           \
  case KernelKind::ENUM:                                                       \
    return #KIND;
#include "attn-runtime/attn_kernel_abi.def"
  }
  return "";
}

SmallVector<KernelParam> KernelSpec::params() const {
  static constexpr struct {
    StringLiteral kind, name, type;
    int64_t rank;
    bool maskOnly;
  } abi[] = {
#define ATTN_KERNEL_PARAM(KIND, NAME, TYPE, RANK, WHEN)                        \
  {#KIND, #NAME, #TYPE, RANK, sizeof(#WHEN) == sizeof("mask")},
#include "attn-runtime/attn_kernel_abi.def"
  };
  SmallVector<KernelParam> params;
  for (const auto &p : abi)
    if (p.kind == kindName() && (!p.maskOnly || mask != MaskOperand::None))
      params.push_back({p.name, p.type, p.rank});
  return params;
}

std::string KernelSpec::manifestLine() const {
  std::ostringstream os;
  os << "kernel " << name() << " kind=" << kindName().str() << " dtype=" << typeName(elementType);
  if (kind != KernelKind::DecodeCombine)
    os << " head_dim=" << headDim;
  os << " value_dim=" << valueDim;
  if (kind != KernelKind::DecodeCombine)
    os << " causal=" << stringifyCausalKind(causal).str();
  if (mask != MaskOperand::None)
    os << " mask=" << (mask == MaskOperand::Additive ? "add" : "bool");
  if (kind == KernelKind::Forward)
    os << " block_q=" << rows();
  else
    os << " rows=" << rows();
  if (kind != KernelKind::DecodeCombine)
    os << " block_kv=" << blockKV;
  os << " threads=" << threads() << " smem=" << sharedMemoryBytes()
     << " params=";
  const char *separator = "";
  for (const KernelParam &p : params()) {
    os << separator << p.name.str() << ":" << p.type.str();
    if (p.type == "memref")
      os << p.rank;
    separator = ",";
  }
  return os.str();
}

std::string KernelSpec::unsupportedReason() const {
  if (!elementType || !(elementType.isF16() || elementType.isBF16()))
    return "the GPU kernels take f16 or bf16 operands (tensor cores); got " +
           (elementType ? typeName(elementType) : std::string("none"));
  if (kind != KernelKind::DecodeCombine &&
      (headDim % 16 || headDim < 16 || headDim > 256))
    return "head dim D must be a multiple of 16 in [16, 256], got " +
           std::to_string(headDim);
  if (valueDim % 16 || valueDim < 16 || valueDim > 256)
    return "value head dim Dv must be a multiple of 16 in [16, 256], got " +
           std::to_string(valueDim);
  if (kind == KernelKind::DecodePartial && blockKV % (16 * warps))
    return "decode kernels split each K/V tile between the warps: block-kv "
           "must be a multiple of 16 x warps (" +
           std::to_string(16 * warps) + "), got " + std::to_string(blockKV);
  if (kind == KernelKind::DecodePartial &&
      warps * 16 * valueDim * 4 + 2 * warps * 16 * 4 >
          kStages * blockKV * (headDim + 8) * 2 +
              kStages * blockKV * (valueDim + 8) * 2)
    return "the decode kernel's cross-warp merge does not fit in its K/V "
           "buffers; use fewer warps or a larger block-kv";
  if (kind != KernelKind::DecodeCombine && sharedMemoryBytes() > kMaxSharedMemory)
    return "the tiles need " + std::to_string(sharedMemoryBytes()) +
           " bytes of shared memory, more than the 227 KiB a CTA can have";
  return "";
}

//===----------------------------------------------------------------------===//
// Emission helpers
//===----------------------------------------------------------------------===//

namespace {



Type memrefType(MLIRContext *ctx, int64_t rank, Type elementType,
                int64_t lastDim) {
  SmallVector<int64_t> shape(rank, ShapedType::kDynamic);
  shape.back() = lastDim;
  SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
  return MemRefType::get(
      shape, elementType,
      StridedLayoutAttr::get(ctx, ShapedType::kDynamic, strides));
}

/// The kernel's arguments, by their names in attn_kernel_abi.def.
class KernelArgs {
public:
  KernelArgs(const KernelSpec &spec, gpu::GPUFuncOp func) {
    for (auto [param, arg] : llvm::zip_equal(spec.params(), func.getArguments()))
      byName[param.name] = arg;
  }
  Value operator[](StringRef name) const {
    Value v = byName.lookup(name);
    assert(v && "no such kernel parameter");
    return v;
  }

private:
  llvm::StringMap<Value> byName;
};

/// The element type of memref parameter `name`: the statistics and the
/// split-KV partial results are f32, a boolean mask is i1 (a byte per
/// element in memory), the rest has the operands' type.
Type paramElementType(Builder &b, const KernelSpec &spec, StringRef name) {
  if (name == "lse" || name == "partial_o" || name == "partial_lse")
    return b.getF32Type();
  if (name == "mask" && spec.mask == MaskOperand::Boolean)
    return b.getI1Type();
  return spec.elementType;
}

/// The static innermost size of memref parameter `name`, the head dim it
/// holds (dynamic for the statistics and the mask).
int64_t paramLastDim(const KernelSpec &spec, StringRef name) {
  if (name == "q" || name == "k")
    return spec.headDim;
  if (name == "v" || name == "o" || name == "partial_o")
    return spec.valueDim;
  return ShapedType::kDynamic;
}

} // namespace

gpu::GPUFuncOp attn::createKernelFunc(OpBuilder &b, Location loc,
                                      const KernelSpec &spec) {
  SmallVector<Type> args;
  for (const KernelParam &p : spec.params()) {
    if (p.type == "memref")
      args.push_back(memrefType(b.getContext(), p.rank,
                                paramElementType(b, spec, p.name),
                                paramLastDim(spec, p.name)));
    else if (p.type == "f32")
      args.push_back(b.getF32Type());
    else
      args.push_back(b.getI64Type());
  }
  auto func = gpu::GPUFuncOp::create(b, loc, spec.name(),
                                     b.getFunctionType(args, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func->setAttr("nvvm.maxntid",
                b.getDenseI32ArrayAttr({static_cast<int32_t>(spec.threads()), 1, 1}));
  func->setAttr("attn.manifest", b.getStringAttr(spec.manifestLine()));
  return func;
}

namespace {

//===----------------------------------------------------------------------===//
// Forward and decode-partial
//===----------------------------------------------------------------------===//

/// The state and code of one forward / decode-partial kernel.
class AttentionKernel {
public:
  AttentionKernel(OpBuilder &b, Location loc, const KernelSpec &spec)
      : e{b, loc}, spec(spec), decode(spec.kind == KernelKind::DecodePartial),
        d(spec.headDim), dv(spec.valueDim), bq(spec.rows()),
        bkv(spec.blockKV), mTiles(spec.mTiles),
        keySplit(spec.keySlices), keysPerWarp(bkv / keySplit),
        elt(spec.elementType) {}

  gpu::GPUFuncOp build();

private:
  Emitter e;
  const KernelSpec &spec;
  bool decode;
  int64_t d, dv, bq, bkv, mTiles;
  /// The schedule's key slices: decode splits each K/V tile between the
  /// warps (they share the few query rows); forward gives each warp its own
  /// rows and every key.
  int64_t keySplit, keysPerWarp;
  Type elt;

  // Values of the prologue.
  Value tid, lane, warp;
  /// The fragment layout of this thread's lane.
  std::optional<MmaM16N8K16> frag;
  Value qPtr, kPtr, vPtr, oPtr, lsePtr, maskPtr;
  SmallVector<Value> maskStrides;
  SmallVector<Value> qSizes, qStrides, kSizes, kStrides, vSizes, vStrides,
      oSizes, oStrides, lseSizes, lseStrides;
  Value batch, head, kvHead, split, q0, group, querySeq, keySeq, diagOffset;
  Value window, hasWindow, scaleLog2, kvStart, kvEnd, kvLo, kvHi, minI, maxI;
  Value smem;
  int64_t kStageBytes, vStageBytes, qBytes;

  Type ptr3() { return LLVM::LLVMPointerType::get(e.b.getContext(), 3); }
  Value smemAt(Value byteOffset) { return e.gep(smem, e.b.getI8Type(), byteOffset); }

  /// (query head, query index, valid) of CTA row `r`.
  std::tuple<Value, Value, Value> rowCoords(Value r);
  void loadQ();
  void loadKV(Value tile, Value stage);
  /// The A fragment of Q for m-tile `mt` of this warp and k-step `kk`.
  SmallVector<Value> qFragment(int64_t mt, int64_t kk);
  /// CTA row of this thread's accumulator row `half` (0: g, 1: g + 8) in
  /// m-tile `mt`.
  Value threadRow(int64_t mt, int64_t half);
  /// ldmatrix x4 at shared byte offset, as four i32.
  SmallVector<Value> ldmatrix4(Value byteOffset, bool transpose);
  /// One mma.sync m16n8k16: a (4 x i32), b (2 x i32), c (4 x f32).
  SmallVector<Value> mma(ArrayRef<Value> a, ArrayRef<Value> bFrag,
                         ArrayRef<Value> c);
  Value packPair(Value lo, Value hi);
  /// First query row of this warp's m-tiles in the CTA.
  Value warpRowBase() {
    return keySplit > 1 ? e.c32(0) : e.mul(warp, e.c32(16 * mTiles));
  }
  /// First key of this warp's share of a tile.
  Value warpKeyBase() {
    return keySplit > 1 ? e.mul(warp, e.c32(keysPerWarp)) : e.c32(0);
  }
  /// Writes O (or the partial O) and the LSE of m-tile `mt`; `l0`, `l1` are
  /// the full row sums (reduced over the quad).
  void emitEpilogue(int64_t mt, Value m0, Value m1, Value l0, Value l1,
                    ArrayRef<Value> acc);
  /// Decode: merges the warps' partial softmax states of the same rows
  /// through shared memory; warp 0 then holds the result. Returns
  /// {m0, m1, l0, l1, acc...} with l reduced over the quad.
  SmallVector<Value> mergeWarps(ValueRange state);
};

std::tuple<Value, Value, Value> AttentionKernel::rowCoords(Value r) {
  if (!decode) {
    Value i = e.add(q0, r);
    return {head, i, e.lt(i, querySeq)};
  }
  // Decode packs the query heads of one KV head: row r is query head
  // kvHead * G + r / Sq at position r % Sq.
  Value h = e.add(e.mul(kvHead, group), e.div(r, querySeq));
  Value i = e.rem(r, querySeq);
  return {h, i, e.lt(r, e.mul(group, querySeq))};
}

void AttentionKernel::loadQ() {
  int64_t chunksPerRow = d / 8;
  int64_t total = bq * chunksPerRow;
  for (int64_t k = 0; k < total; k += spec.threads()) {
    Value c = e.add(tid, e.c32(k));
    // A small Q tile (decode) may have fewer 16-byte chunks than threads.
    OpBuilder::InsertionGuard guard(e.b);
    if (k + spec.threads() > total) {
      auto inTile = scf::IfOp::create(e.b, e.loc, e.lt(c, e.c32(total)), false);
      e.b.setInsertionPointToStart(inTile.thenBlock());
    }
    Value r = e.div(c, e.c32(chunksPerRow));
    Value cc = e.rem(c, e.c32(chunksPerRow));
    auto [h, i, valid] = rowCoords(r);
    Value hc = e.select(valid, h, e.c32(0));
    Value ic = e.select(valid, i, e.c32(0));
    Value off = e.add(
        e.add(e.mul(e.toI64(batch), qStrides[0]), e.mul(e.toI64(hc), qStrides[1])),
        e.add(e.mul(e.toI64(ic), qStrides[2]), e.toI64(e.mul(cc, e.c32(8)))));
    Value src = e.gep(qPtr, elt, off);
    Value dst = smemAt(e.mul(e.add(e.mul(r, e.c32(d + 8)), e.mul(cc, e.c32(8))),
                             e.c32(2)));
    NVVM::CpAsyncOp::create(e.b, e.loc, dst, src, 16,
                            NVVM::LoadCacheModifierKind::CG,
                            e.select(valid, e.c32(16), e.c32(0)));
  }
}

void AttentionKernel::loadKV(Value tile, Value stage) {
  Value start = e.add(kvLo, e.mul(tile, e.c32(bkv)));
  auto loadTile = [&](Value base, ArrayRef<Value> strides, int64_t width,
                      Value stageBase) {
    int64_t chunksPerRow = width / 8;
    int64_t total = bkv * chunksPerRow;
    for (int64_t k = 0; k < total; k += spec.threads()) {
      Value c = e.add(tid, e.c32(k));
      // With head dims that are not multiples of 64 the tile may have fewer
      // 16-byte chunks than the last round of threads.
      OpBuilder::InsertionGuard guard(e.b);
      if (k + spec.threads() > total) {
        auto inTile =
            scf::IfOp::create(e.b, e.loc, e.lt(c, e.c32(total)), false);
        e.b.setInsertionPointToStart(inTile.thenBlock());
      }
      Value r = e.div(c, e.c32(chunksPerRow));
      Value cc = e.rem(c, e.c32(chunksPerRow));
      Value j = e.add(start, r);
      Value valid = e.lt(j, kvEnd);
      Value jc = e.select(valid, j, e.c32(0));
      Value off = e.add(
          e.add(e.mul(e.toI64(batch), strides[0]),
                e.mul(e.toI64(kvHead), strides[1])),
          e.add(e.mul(e.toI64(jc), strides[2]), e.toI64(e.mul(cc, e.c32(8)))));
      Value src = e.gep(base, elt, off);
      Value dst = smemAt(e.add(
          stageBase, e.mul(e.add(e.mul(r, e.c32(width + 8)), e.mul(cc, e.c32(8))),
                           e.c32(2))));
      NVVM::CpAsyncOp::create(e.b, e.loc, dst, src, 16,
                              NVVM::LoadCacheModifierKind::CG,
                              e.select(valid, e.c32(16), e.c32(0)));
    }
  };
  Value kBase = e.add(e.c32(qBytes), e.mul(stage, e.c32(kStageBytes)));
  Value vBase = e.add(e.c32(qBytes + kStages * kStageBytes),
                      e.mul(stage, e.c32(vStageBytes)));
  loadTile(kPtr, kStrides, d, kBase);
  loadTile(vPtr, vStrides, dv, vBase);
}

SmallVector<Value> AttentionKernel::ldmatrix4(Value byteOffset, bool transpose) {
  MLIRContext *ctx = e.b.getContext();
  Type i32 = e.i32();
  auto structTy = LLVM::LLVMStructType::getLiteral(ctx, {i32, i32, i32, i32});
  Value res = NVVM::LdMatrixOp::create(
      e.b, e.loc, structTy, smemAt(byteOffset), 4,
      transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8), NVVM::LdStMatrixEltType::B16);
  SmallVector<Value> out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(e.b, e.loc, res, i));
  return out;
}

SmallVector<Value> AttentionKernel::mma(ArrayRef<Value> a, ArrayRef<Value> bFrag,
                                        ArrayRef<Value> c) {
  MLIRContext *ctx = e.b.getContext();
  Type f32 = e.f32();
  auto structTy = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
  NVVM::MMATypes type =
      elt.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  // Fragments travel as i32 (two 16-bit values); the f16 form of the op
  // takes them as vector<2xf16>.
  SmallVector<Value> aOps(a), bOps(bFrag);
  if (elt.isF16()) {
    auto v2 = VectorType::get({2}, elt);
    for (Value &v : aOps)
      v = LLVM::BitcastOp::create(e.b, e.loc, v2, v);
    for (Value &v : bOps)
      v = LLVM::BitcastOp::create(e.b, e.loc, v2, v);
  }
  Value res = NVVM::MmaOp::create(
      e.b, e.loc, structTy, aOps, bOps, c, {16, 8, 16}, std::nullopt,
      std::nullopt, std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(e.b, e.loc, res, i));
  return out;
}

Value AttentionKernel::packPair(Value lo, Value hi) {
  auto v2f32 = VectorType::get({2}, e.f32());
  auto v2elt = VectorType::get({2}, elt);
  Value v = vector::FromElementsOp::create(e.b, e.loc, v2f32, ValueRange{lo, hi});
  Value narrow = arith::TruncFOp::create(e.b, e.loc, v2elt, v);
  return LLVM::BitcastOp::create(e.b, e.loc, e.i32(), narrow);
}

Value AttentionKernel::threadRow(int64_t mt, int64_t half) {
  return frag->accRow(e, warpRowBase(), mt, half);
}

SmallVector<Value> AttentionKernel::qFragment(int64_t mt, int64_t kk) {
  auto [laneRow, laneCol] = frag->ldmatrixA(e);
  Value row = e.add(e.add(warpRowBase(), e.c32(mt * MmaM16N8K16::kM)), laneRow);
  Value col = e.add(laneCol, e.c32(kk * MmaM16N8K16::kK));
  Value off = e.mul(e.add(e.mul(row, e.c32(d + 8)), col), e.c32(2));
  return ldmatrix4(off, /*transpose=*/false);
}

void AttentionKernel::emitEpilogue(int64_t mt, Value m0, Value m1, Value l0,
                                   Value l1, ArrayRef<Value> acc) {
  Value ms[2] = {m0, m1};
  Value ls[2] = {l0, l1};
  for (int64_t half = 0; half < 2; ++half) {
    auto [h, i, valid] = rowCoords(threadRow(mt, half));
    Value l = ls[half];
    Value empty = e.feq(l, e.cf(0.0));
    Value inv = e.select(empty, e.cf(0.0), e.fdiv(e.cf(1.0), l));
    Value mSafe = e.select(e.feq(ms[half], e.negInf()), e.cf(0.0), ms[half]);
    // Natural-log LSE from the log2-domain statistics.
    Value lse = e.select(empty, e.negInf(),
                         e.fmul(e.fadd(mSafe, e.log2(l)), e.cf(kLn2)));
    auto ifValid = scf::IfOp::create(e.b, e.loc, valid, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(e.b);
    e.b.setInsertionPointToStart(ifValid.thenBlock());
    Value hc = h, ic = i;
    for (int64_t nb = 0; nb < dv / 8; ++nb) {
      // Elements half * 2 and half * 2 + 1: one row, two adjacent columns.
      int64_t i = half * 2;
      Value col = frag->accColumn(e, nb, i);
      Value v0 = e.fmul(acc[nb * MmaM16N8K16::kAccElements + i], inv);
      Value v1 = e.fmul(acc[nb * MmaM16N8K16::kAccElements + i + 1], inv);
      if (!decode) {
        Value off = e.add(
            e.add(e.mul(e.toI64(batch), oStrides[0]),
                  e.mul(e.toI64(hc), oStrides[1])),
            e.add(e.mul(e.toI64(ic), oStrides[2]), e.toI64(col)));
        Value p = e.gep(oPtr, elt, off);
        LLVM::StoreOp::create(e.b, e.loc, packPair(v0, v1), p, /*alignment=*/4);
      } else {
        // partial_o [N, B, Hq, Sq, Dv]
        Value off = e.add(
            e.add(e.mul(e.toI64(split), oStrides[0]),
                  e.mul(e.toI64(batch), oStrides[1])),
            e.add(e.add(e.mul(e.toI64(hc), oStrides[2]),
                        e.mul(e.toI64(ic), oStrides[3])),
                  e.toI64(col)));
        Value p = e.gep(oPtr, e.f32(), off);
        auto v2 = VectorType::get({2}, e.f32());
        Value pair = vector::FromElementsOp::create(e.b, e.loc, v2,
                                                    ValueRange{v0, v1});
        LLVM::StoreOp::create(e.b, e.loc, pair, p, /*alignment=*/8);
      }
    }
    // One lane of the quad writes the row's LSE.
    Value writer = frag->firstOfRow(e);
    if (!decode) {
      Value addr = LLVM::PtrToIntOp::create(e.b, e.loc, e.i64(), lsePtr);
      writer = e.band(writer, e.ne(addr, e.c64(0)));
    }
    auto ifWriter = scf::IfOp::create(e.b, e.loc, writer, false);
    e.b.setInsertionPointToStart(ifWriter.thenBlock());
    Value off;
    if (!decode)
      off = e.add(e.add(e.mul(e.toI64(batch), lseStrides[0]),
                        e.mul(e.toI64(hc), lseStrides[1])),
                  e.mul(e.toI64(ic), lseStrides[2]));
    else
      off = e.add(e.add(e.mul(e.toI64(split), lseStrides[0]),
                        e.mul(e.toI64(batch), lseStrides[1])),
                  e.add(e.mul(e.toI64(hc), lseStrides[2]),
                        e.mul(e.toI64(ic), lseStrides[3])));
    LLVM::StoreOp::create(e.b, e.loc, lse, e.gep(lsePtr, e.f32(), off), 4);
  }
}

SmallVector<Value> AttentionKernel::mergeWarps(ValueRange state) {
  // Shared-memory scratch over the K/V stages (the loop ended on a barrier):
  // acc[w][row][col] f32, then m[w][row] and l[w][row].
  int64_t rows = 16, warps = keySplit;
  int64_t accBytes = warps * rows * dv * 4;
  Value base = e.c32(qBytes);
  auto accAt = [&](Value w, Value row, Value col) {
    return smemAt(e.add(base, e.mul(e.add(e.mul(e.add(e.mul(w, e.c32(rows)), row),
                                              e.c32(dv)),
                                        col),
                                  e.c32(4))));
  };
  auto statAt = [&](int64_t which, Value w, Value row) {
    Value idx = e.add(e.mul(w, e.c32(rows)), row);
    return smemAt(e.add(base, e.add(e.c32(accBytes + which * warps * rows * 4),
                                    e.mul(idx, e.c32(4)))));
  };
  Type f32 = e.f32();
  // No warp may still read the last K/V tile, and no copy may still land.
  NVVM::CpAsyncWaitGroupOp::create(e.b, e.loc, 0);
  gpu::BarrierOp::create(e.b, e.loc);
  Value rowOf[2] = {frag->accRow(e, Value(), 0, 0), frag->accRow(e, Value(), 0, 1)};
  Value ls[2] = {frag->rowReduce(e, state[2], false),
                 frag->rowReduce(e, state[3], false)};
  for (int64_t idx = 0; idx < dv / 8 * 4; ++idx) {
    int64_t nb = idx / 4, q = idx % 4;
    Value col = frag->accColumn(e, nb, q);
    LLVM::StoreOp::create(e.b, e.loc, state[4 + idx],
                          accAt(warp, rowOf[MmaM16N8K16::rowHalf(q)], col), 4);
  }
  {
    auto writer = scf::IfOp::create(e.b, e.loc, frag->firstOfRow(e), false);
    OpBuilder::InsertionGuard guard(e.b);
    e.b.setInsertionPointToStart(writer.thenBlock());
    for (int64_t half = 0; half < 2; ++half) {
      LLVM::StoreOp::create(e.b, e.loc, state[half], statAt(0, warp, rowOf[half]), 4);
      LLVM::StoreOp::create(e.b, e.loc, ls[half], statAt(1, warp, rowOf[half]), 4);
    }
  }
  gpu::BarrierOp::create(e.b, e.loc);

  // Every thread computes the merge for its own fragment positions (only
  // warp 0's result is stored): M = max_w m_w, l = sum_w 2^(m_w - M) l_w,
  // acc = sum_w 2^(m_w - M) acc_w.
  SmallVector<Value> out(4 + dv / 8 * 4);
  Value scales[2][8];
  for (int64_t half = 0; half < 2; ++half) {
    SmallVector<Value> ms;
    Value mMax = e.negInf();
    for (int64_t w = 0; w < warps; ++w) {
      ms.push_back(LLVM::LoadOp::create(e.b, e.loc, f32,
                                        statAt(0, e.c32(w), rowOf[half]), 4));
      mMax = e.fmax(mMax, ms.back());
    }
    Value mSafe = e.select(e.feq(mMax, e.negInf()), e.cf(0.0), mMax);
    Value l = e.cf(0.0);
    for (int64_t w = 0; w < warps; ++w) {
      scales[half][w] = e.exp2(e.fsub(ms[w], mSafe));
      Value lw = LLVM::LoadOp::create(e.b, e.loc, f32,
                                      statAt(1, e.c32(w), rowOf[half]), 4);
      l = e.fadd(l, e.fmul(scales[half][w], lw));
    }
    out[half] = mMax;
    out[2 + half] = l;
  }
  for (int64_t idx = 0; idx < dv / 8 * 4; ++idx) {
    int64_t nb = idx / 4, q = idx % 4;
    Value col = frag->accColumn(e, nb, q);
    Value acc = e.cf(0.0);
    for (int64_t w = 0; w < warps; ++w) {
      Value v = LLVM::LoadOp::create(e.b, e.loc, f32,
                                     accAt(e.c32(w), rowOf[MmaM16N8K16::rowHalf(q)], col), 4);
      acc = e.fadd(acc, e.fmul(scales[MmaM16N8K16::rowHalf(q)][w], v));
    }
    out[4 + idx] = acc;
  }
  return out;
}

gpu::GPUFuncOp AttentionKernel::build() {
  MLIRContext *ctx = e.b.getContext();
  OpBuilder &b = e.b;
  Type f32 = e.f32();
  gpu::GPUFuncOp func = createKernelFunc(b, e.loc, spec);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&func.getBody().front());
  KernelArgs a(spec, func);
  Value outArg = a[decode ? "partial_o" : "o"];
  Value lseArg = a[decode ? "partial_lse" : "lse"];

  qBytes = bq * (d + 8) * 2;
  kStageBytes = bkv * (d + 8) * 2;
  vStageBytes = bkv * (dv + 8) * 2;

  tid = e.toI32(gpu::ThreadIdOp::create(b, e.loc, gpu::Dimension::x));
  warp = e.div(tid, e.c32(32));
  lane = e.rem(tid, e.c32(32));
  frag.emplace(e, lane);
  Value bx = e.toI32(gpu::BlockIdOp::create(b, e.loc, gpu::Dimension::x));
  Value by = e.toI32(gpu::BlockIdOp::create(b, e.loc, gpu::Dimension::y));
  Value bz = e.toI32(gpu::BlockIdOp::create(b, e.loc, gpu::Dimension::z));
  Value one32 = e.c32(1);

  qPtr = e.globalBase(a["q"], elt);
  kPtr = e.globalBase(a["k"], elt);
  vPtr = e.globalBase(a["v"], elt);
  oPtr = e.globalBase(outArg, decode ? f32 : elt);
  lsePtr = e.globalBase(lseArg, f32);
  e.metadata(a["q"], qSizes, qStrides);
  e.metadata(a["k"], kSizes, kStrides);
  e.metadata(a["v"], vSizes, vStrides);
  e.metadata(outArg, oSizes, oStrides);
  e.metadata(lseArg, lseSizes, lseStrides);
  if (spec.mask != MaskOperand::None) {
    Value mask = a["mask"];
    maskPtr = e.globalBase(mask, spec.mask == MaskOperand::Additive
                                     ? elt
                                     : b.getI8Type());
    SmallVector<Value> maskSizes;
    e.metadata(mask, maskSizes, maskStrides);
  }
  scaleLog2 = a["scale_log2"];
  window = arith::TruncIOp::create(b, e.loc, e.i32(), a["window"]);
  hasWindow = e.ge(window, e.c32(0));

  querySeq = qSizes[2];
  keySeq = kSizes[2];
  group = e.div(qSizes[1], kSizes[1]);
  batch = bz;
  diagOffset = spec.causal == CausalKind::BottomRight ? e.sub(keySeq, querySeq)
                                                      : e.c32(0);
  if (!decode) {
    head = by;
    kvHead = e.div(head, group);
    // Causal rows near the end see the most keys: hand those tiles out
    // first so that the last wave is made of short ones.
    Value tileIdx = bx;
    if (spec.causal != CausalKind::None) {
      Value tilesX = e.toI32(gpu::GridDimOp::create(b, e.loc, gpu::Dimension::x));
      tileIdx = e.sub(e.sub(tilesX, one32), bx);
    }
    q0 = e.mul(tileIdx, e.c32(bq));
    kvStart = e.c32(0);
    kvEnd = keySeq;
    minI = q0;
    maxI = e.sub(e.min(e.add(q0, e.c32(bq)), querySeq), e.c32(1));
  } else {
    split = bx;
    kvHead = by;
    Value chunk = e.div(e.add(keySeq, e.sub(oSizes[0], one32)), oSizes[0]);
    kvStart = e.mul(split, chunk);
    kvEnd = e.min(e.add(kvStart, chunk), keySeq);
    minI = e.c32(0);
    maxI = e.sub(querySeq, e.c32(1));
  }
  // Tiles that no row can see are skipped by the loop bounds.
  kvLo = kvStart;
  kvHi = kvEnd;
  if (spec.causal != CausalKind::None) {
    kvHi = e.min(kvHi, e.add(e.add(maxI, diagOffset), e.c32(1)));
    Value first = e.sub(e.add(minI, diagOffset), window);
    kvLo = e.select(hasWindow, e.max(kvLo, first), kvLo);
  }
  Value span = e.sub(kvHi, kvLo);
  Value numTiles = e.select(
      e.gt(span, e.c32(0)), e.div(e.add(span, e.c32(bkv - 1)), e.c32(bkv)),
      e.c32(0));

  Value dyn = gpu::DynamicSharedMemoryOp::create(
      b, e.loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), MemRefLayoutAttrInterface{},
                      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup)));
  Value smemIdx = memref::ExtractAlignedPointerAsIndexOp::create(b, e.loc, dyn);
  smem = LLVM::IntToPtrOp::create(
      b, e.loc, ptr3(), Value(arith::IndexCastOp::create(b, e.loc, e.i64(), smemIdx)));

  // Prologue: Q with K/V tile 0 in one cp.async group, tile 1 in the next.
  // Every iteration commits exactly one group (empty past the last tile),
  // so "all but the newest group done" always means "this tile landed".
  loadQ();
  loadKV(e.c32(0), e.c32(0));
  NVVM::CpAsyncCommitGroupOp::create(b, e.loc);
  {
    auto second = scf::IfOp::create(b, e.loc, e.lt(e.c32(1), numTiles), false);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(second.thenBlock());
    loadKV(e.c32(1), e.c32(1));
  }
  NVVM::CpAsyncCommitGroupOp::create(b, e.loc);
  NVVM::CpAsyncWaitGroupOp::create(b, e.loc, 1);
  gpu::BarrierOp::create(b, e.loc);
  // With one m-tile per warp, Q stays in registers for the whole loop;
  // with more, its fragments are re-read from shared memory per k-step
  // (registers go to the larger accumulators instead).
  SmallVector<Value> qRegs;
  if (mTiles == 1)
    for (int64_t kk = 0; kk < d / 16; ++kk)
      llvm::append_range(qRegs, qFragment(0, kk));

  // The rows (g and g + 8 of each m-tile) this thread holds, for the masks.
  SmallVector<Value> rowI;
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t half = 0; half < 2; ++half)
      rowI.push_back(std::get<1>(rowCoords(threadRow(mt, half))));

  // Loop-carried per m-tile: max and sum of rows g and g + 8, then the
  // accumulator of O.
  int64_t sElems = keysPerWarp / 8 * 4, oElems = dv / 8 * 4;
  int64_t carriedPerTile = 4 + oElems;
  SmallVector<Value> init;
  for (int64_t mt = 0; mt < mTiles; ++mt) {
    init.append({e.negInf(), e.negInf(), e.cf(0.0), e.cf(0.0)});
    for (int64_t i = 0; i < oElems; ++i)
      init.push_back(e.cf(0.0));
  }
  Value zero = e.c32(0), one = e.c32(1);
  auto loop = scf::ForOp::create(b, e.loc, zero, numTiles, one, init);
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value tile = loop.getInductionVar();
    ValueRange carried = loop.getRegionIterArgs();
    Value stage = e.rem(tile, e.c32(kStages));
    Value ahead = e.add(tile, e.c32(kStages - 1));

    // Three stages: wait for this tile, then one barrier both publishes it
    // and tells that every warp is done with the tile before it, whose stage
    // the prefetch of tile + 2 reuses.
    NVVM::CpAsyncWaitGroupOp::create(b, e.loc, kStages - 2);
    gpu::BarrierOp::create(b, e.loc);
    {
      auto prefetch = scf::IfOp::create(b, e.loc, e.lt(ahead, numTiles), false);
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(prefetch.thenBlock());
      loadKV(ahead, e.rem(ahead, e.c32(kStages)));
    }
    NVVM::CpAsyncCommitGroupOp::create(b, e.loc);

    Value kBase = e.add(e.c32(qBytes), e.mul(stage, e.c32(kStageBytes)));
    Value vBase = e.add(e.c32(qBytes + kStages * kStageBytes),
                        e.mul(stage, e.c32(vStageBytes)));

    // S = Q K^T: K rows (keys) are the B operand's columns; one ldmatrix x4
    // gives b0, b1 of key blocks nb and nb + 1, used by every m-tile.
    SmallVector<Value> s(mTiles * sElems, e.cf(0.0));
    auto [kLaneRow, kCol] = frag->ldmatrixB(e);
    Value kRow = e.add(kLaneRow, warpKeyBase());
    for (int64_t kk = 0; kk < d / 16; ++kk) {
      SmallVector<SmallVector<Value>> aFrags;
      for (int64_t mt = 0; mt < mTiles; ++mt)
        aFrags.push_back(mTiles == 1
                             ? SmallVector<Value>(ArrayRef(qRegs).slice(kk * 4, 4))
                             : qFragment(mt, kk));
      for (int64_t nb = 0; nb < keysPerWarp / 8; nb += 2) {
        Value row = e.add(kRow, e.c32(nb * 8));
        Value col = e.add(kCol, e.c32(kk * 16));
        Value off = e.add(kBase, e.mul(e.add(e.mul(row, e.c32(d + 8)), col), e.c32(2)));
        SmallVector<Value> bf = ldmatrix4(off, false);
        for (int64_t mt = 0; mt < mTiles; ++mt)
          for (int64_t half = 0; half < 2; ++half) {
            auto first = s.begin() + mt * sElems + (nb + half) * 4;
            SmallVector<Value> c(first, first + 4);
            SmallVector<Value> r =
                mma(aFrags[mt], {bf[half * 2], bf[half * 2 + 1]}, c);
            std::copy(r.begin(), r.end(), first);
          }
      }
    }
    // S stays unscaled: the max commutes with the positive scale, and
    // exp2(s * scale - m) is one FMA (m is kept in scaled log2 units).

    // Masks, only on tiles that cross the key end, the diagonal or the
    // window's edge.
    Value start = e.add(kvLo, e.mul(tile, e.c32(bkv)));
    Value tileEnd = e.add(start, e.c32(bkv));
    Value myStart = e.add(start, warpKeyBase());
    Value needMask = e.gt(tileEnd, kvEnd);
    if (spec.mask != MaskOperand::None)
      needMask = e.cbool(true);
    if (spec.causal != CausalKind::None) {
      needMask = e.bor(needMask, e.gt(e.sub(tileEnd, one), e.add(minI, diagOffset)));
      Value windowEdge = e.sub(e.add(maxI, diagOffset), window);
      needMask = e.bor(needMask, e.band(hasWindow, e.lt(start, windowEdge)));
    }
    SmallVector<Type> sTypes(s.size(), f32);
    auto masked = scf::IfOp::create(b, e.loc, sTypes, needMask, true);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(masked.thenBlock());
      // The mask operand's row offsets for this thread's rows, computed
      // here rather than kept live through the loop (registers), and
      // 1 / scale in the units of the unscaled scores.
      SmallVector<Value> maskRowBase;
      Value invScale;
      if (spec.mask != MaskOperand::None) {
        invScale = e.fdiv(e.cf(kLog2e), scaleLog2);
        for (int64_t mt = 0; mt < mTiles; ++mt)
          for (int64_t half = 0; half < 2; ++half) {
            auto [h, i, valid] = rowCoords(threadRow(mt, half));
            Value ic = e.min(i, e.sub(querySeq, one));
            maskRowBase.push_back(
                e.add(e.add(e.mul(e.toI64(batch), maskStrides[0]),
                            e.mul(e.toI64(h), maskStrides[1])),
                      e.mul(e.toI64(ic), maskStrides[2])));
          }
      }
      SmallVector<Value> ms;
      for (int64_t idx = 0; idx < static_cast<int64_t>(s.size()); ++idx) {
        int64_t mt = idx / sElems, nb = (idx % sElems) / 4, q = idx % 4;
        int64_t half = MmaM16N8K16::rowHalf(q);
        Value j = e.add(myStart, frag->accColumn(e, nb, q));
        Value hidden = e.ge(j, kvEnd);
        if (spec.causal != CausalKind::None) {
          Value diag = e.add(rowI[mt * 2 + half], diagOffset);
          hidden = e.bor(hidden, e.gt(j, diag));
          hidden = e.bor(hidden, e.band(hasWindow, e.lt(j, e.sub(diag, window))));
        }
        Value x = s[idx];
        if (spec.mask != MaskOperand::None) {
          // Element (b, h, i, j) of the mask, clamped into range: rows past
          // Sq and keys past the end are never stored or already hidden.
          Value jc = e.min(j, e.sub(keySeq, one));
          Value off = e.add(maskRowBase[mt * 2 + half],
                            e.mul(e.toI64(jc), maskStrides[3]));
          if (spec.mask == MaskOperand::Additive) {
            // S is unscaled here: add mask / scale, so that the scale
            // applied in the exponent gives scale * S + mask.
            Value m = LLVM::LoadOp::create(b, e.loc, elt,
                                           e.gep(maskPtr, elt, off), 2);
            x = LLVM::FMAOp::create(b, e.loc, arith::ExtFOp::create(b, e.loc, f32, m),
                                    invScale, x);
          } else {
            Value m = LLVM::LoadOp::create(b, e.loc, b.getI8Type(),
                                           e.gep(maskPtr, b.getI8Type(), off), 1);
            Value drop = arith::CmpIOp::create(b, e.loc, arith::CmpIPredicate::eq, m,
                                               arith::ConstantOp::create(b, e.loc, b.getI8IntegerAttr(0)));
            hidden = e.bor(hidden, drop);
          }
        }
        ms.push_back(e.select(hidden, e.negInf(), x));
      }
      scf::YieldOp::create(b, e.loc, ms);
      b.setInsertionPointToStart(masked.elseBlock());
      scf::YieldOp::create(b, e.loc, s);
    }
    for (int64_t idx = 0; idx < static_cast<int64_t>(s.size()); ++idx)
      s[idx] = masked.getResult(idx);

    // Online softmax in the log2 domain, per m-tile and row.
    SmallVector<Value> yielded;
    SmallVector<SmallVector<Value>> accs, pFrags;
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      ValueRange mine = carried.slice(mt * carriedPerTile, carriedPerTile);
      ArrayRef<Value> sm = ArrayRef(s).slice(mt * sElems, sElems);
      Value mNew[2], mSafe[2], negMSafe[2], alpha[2], rowSum[2];
      for (int64_t half = 0; half < 2; ++half) {
        Value mx = e.negInf();
        for (int64_t idx = 0; idx < sElems; ++idx)
          if (MmaM16N8K16::rowHalf(idx % MmaM16N8K16::kAccElements) == half)
            mx = e.fmax(mx, sm[idx]);
        mx = e.fmul(frag->rowReduce(e, mx, true), scaleLog2);
        mNew[half] = e.fmax(mine[half], mx);
        mSafe[half] =
            e.select(e.feq(mNew[half], e.negInf()), e.cf(0.0), mNew[half]);
        alpha[half] = e.exp2(e.fsub(mine[half], mSafe[half]));
        negMSafe[half] = arith::NegFOp::create(b, e.loc, mSafe[half]);
        rowSum[half] = e.cf(0.0);
      }
      SmallVector<Value> p(sElems);
      for (int64_t idx = 0; idx < sElems; ++idx) {
        int64_t half = MmaM16N8K16::rowHalf(idx % MmaM16N8K16::kAccElements);
        p[idx] = e.exp2(LLVM::FMAOp::create(b, e.loc, sm[idx], scaleLog2,
                                            negMSafe[half]));
        rowSum[half] = e.fadd(rowSum[half], p[idx]);
      }
      SmallVector<Value> acc(mine.begin() + 4, mine.end());
      for (int64_t idx = 0; idx < oElems; ++idx)
        acc[idx] = e.fmul(
            acc[idx], alpha[MmaM16N8K16::rowHalf(idx % MmaM16N8K16::kAccElements)]);
      accs.push_back(acc);
      // P, in the accumulator layout, becomes the A operand of the second
      // product: key blocks 2kk and 2kk + 1 make k-step kk.
      SmallVector<Value> pFrag;
      for (int64_t kk = 0; kk < keysPerWarp / 16; ++kk)
        for (int64_t reg = 0; reg < MmaM16N8K16::kARegisters; ++reg) {
          auto [block, first] = MmaM16N8K16::aFromAccumulator(reg);
          int64_t at = (2 * kk + block) * MmaM16N8K16::kAccElements + first;
          pFrag.push_back(packPair(p[at], p[at + 1]));
        }
      pFrags.push_back(pFrag);
      yielded.append({mNew[0], mNew[1],
                      e.fadd(e.fmul(mine[2], alpha[0]), rowSum[0]),
                      e.fadd(e.fmul(mine[3], alpha[1]), rowSum[1])});
    }

    // O += P V: V rows (keys) are read transposed by ldmatrix; one x4 load
    // serves every m-tile.
    auto [vLaneRow, vCol] = frag->ldmatrixBTransposed(e);
    Value vRow = e.add(vLaneRow, warpKeyBase());
    for (int64_t nb = 0; nb < dv / 8; nb += 2) {
      for (int64_t kk = 0; kk < keysPerWarp / 16; ++kk) {
        Value row = e.add(vRow, e.c32(kk * 16));
        Value col = e.add(vCol, e.c32(nb * 8));
        Value off = e.add(vBase, e.mul(e.add(e.mul(row, e.c32(dv + 8)), col), e.c32(2)));
        SmallVector<Value> bf = ldmatrix4(off, /*transpose=*/true);
        for (int64_t mt = 0; mt < mTiles; ++mt) {
          ArrayRef<Value> aFrag = ArrayRef(pFrags[mt]).slice(kk * 4, 4);
          for (int64_t half = 0; half < 2; ++half) {
            auto first = accs[mt].begin() + (nb + half) * 4;
            SmallVector<Value> c(first, first + 4);
            SmallVector<Value> r =
                mma(aFrag, {bf[half * 2], bf[half * 2 + 1]}, c);
            std::copy(r.begin(), r.end(), first);
          }
        }
      }
    }
    SmallVector<Value> all;
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      all.append(yielded.begin() + mt * 4, yielded.begin() + mt * 4 + 4);
      all.append(accs[mt].begin(), accs[mt].end());
    }
    scf::YieldOp::create(b, e.loc, all);
  }
  ValueRange res = loop.getResults();
  if (keySplit > 1) {
    // Only warp 0 holds the merged rows and writes them.
    SmallVector<Value> merged = mergeWarps(res);
    auto first = scf::IfOp::create(b, e.loc, e.eq(warp, zero), false);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(first.thenBlock());
    emitEpilogue(0, merged[0], merged[1], merged[2], merged[3],
                 ArrayRef(merged).drop_front(4));
  } else {
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      ValueRange mine = res.slice(mt * carriedPerTile, carriedPerTile);
      emitEpilogue(mt, mine[0], mine[1], frag->rowReduce(e, mine[2], false),
                   frag->rowReduce(e, mine[3], false),
                   SmallVector<Value>(mine.begin() + 4, mine.end()));
    }
  }
  gpu::ReturnOp::create(b, e.loc);
  return func;
}

//===----------------------------------------------------------------------===//
// Decode combine
//===----------------------------------------------------------------------===//

/// One thread per 4 consecutive output columns of a row: the max of the
/// split LSEs, then O = sum_s exp(LSE_s - LSE) O_s.
gpu::GPUFuncOp buildCombineKernel(OpBuilder &b, Location loc,
                                  const KernelSpec &spec) {
  Emitter e{b, loc};
  Type f32 = e.f32(), elt = spec.elementType;
  gpu::GPUFuncOp func = createKernelFunc(b, loc, spec);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&func.getBody().front());
  KernelArgs a(spec, func);
  Value poPtr = e.globalBase(a["partial_o"], f32),
        plPtr = e.globalBase(a["partial_lse"], f32);
  Value oPtr = e.globalBase(a["o"], elt), lsePtr = e.globalBase(a["lse"], f32);
  SmallVector<Value> poS, poT, plS, plT, oS, oT, lS, lT;
  e.metadata(a["partial_o"], poS, poT);
  e.metadata(a["partial_lse"], plS, plT);
  e.metadata(a["o"], oS, oT);
  e.metadata(a["lse"], lS, lT);
  Value numSplits = poS[0], batch = poS[1], heads = poS[2], seq = poS[3];

  int64_t lanesPerRow = spec.valueDim / 4;
  Value tid = e.toI32(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  Value bx = e.toI32(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value row = e.add(e.mul(bx, e.c32(spec.rows())), e.div(tid, e.c32(lanesPerRow)));
  Value col = e.mul(e.rem(tid, e.c32(lanesPerRow)), e.c32(4));
  Value total = e.mul(e.mul(batch, heads), seq);
  // When Dv / 4 does not divide the CTA, the last threads have no row.
  Value used = e.lt(tid, e.c32(spec.rows() * lanesPerRow));
  auto inRange =
      scf::IfOp::create(b, loc, e.band(used, e.lt(row, total)), false);
  b.setInsertionPointToStart(inRange.thenBlock());
  Value i = e.rem(row, seq);
  Value h = e.rem(e.div(row, seq), heads);
  Value bb = e.div(e.div(row, seq), heads);
  auto lseAt = [&](Value s) {
    Value off = e.add(e.add(e.mul(e.toI64(s), plT[0]), e.mul(e.toI64(bb), plT[1])),
                      e.add(e.mul(e.toI64(h), plT[2]), e.mul(e.toI64(i), plT[3])));
    return LLVM::LoadOp::create(b, loc, f32, e.gep(plPtr, f32, off), 4)
        .getResult();
  };
  Value zero = e.c32(0), one = e.c32(1);
  auto maxLoop = scf::ForOp::create(b, loc, zero, numSplits, one,
                                    ValueRange{e.negInf()});
  {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(maxLoop.getBody());
    scf::YieldOp::create(b, loc,
                         e.fmax(maxLoop.getRegionIterArgs()[0],
                                lseAt(maxLoop.getInductionVar())));
  }
  Value m = maxLoop.getResult(0);
  Value mSafe = e.select(e.feq(m, e.negInf()), e.cf(0.0), m);
  auto v4 = VectorType::get({4}, f32);
  Value zeros = arith::ConstantOp::create(b, loc, DenseElementsAttr::get(v4, 0.0f));
  auto sumLoop = scf::ForOp::create(b, loc, zero, numSplits, one,
                                    ValueRange{e.cf(0.0), zeros});
  {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(sumLoop.getBody());
    Value s = sumLoop.getInductionVar();
    Value w = e.exp2(e.fmul(e.fsub(lseAt(s), mSafe), e.cf(kLog2e)));
    Value off = e.add(
        e.add(e.mul(e.toI64(s), poT[0]), e.mul(e.toI64(bb), poT[1])),
        e.add(e.add(e.mul(e.toI64(h), poT[2]), e.mul(e.toI64(i), poT[3])),
              e.toI64(col)));
    Value part = LLVM::LoadOp::create(b, loc, v4, e.gep(poPtr, f32, off), 16);
    Value wv = vector::BroadcastOp::create(b, loc, v4, w);
    Value acc = vector::FMAOp::create(b, loc, wv, part,
                                      sumLoop.getRegionIterArgs()[1]);
    scf::YieldOp::create(b, loc,
                         ValueRange{e.fadd(sumLoop.getRegionIterArgs()[0], w), acc});
  }
  Value l = sumLoop.getResult(0);
  Value empty = e.feq(l, e.cf(0.0));
  Value inv = e.select(empty, e.cf(0.0), e.fdiv(e.cf(1.0), l));
  Value out = arith::MulFOp::create(b, loc, sumLoop.getResult(1),
                                    vector::BroadcastOp::create(b, loc, v4, inv));
  Value narrow = arith::TruncFOp::create(b, loc, VectorType::get({4}, elt), out);
  Value oOff = e.add(e.add(e.mul(e.toI64(bb), oT[0]), e.mul(e.toI64(h), oT[1])),
                     e.add(e.mul(e.toI64(i), oT[2]), e.toI64(col)));
  LLVM::StoreOp::create(b, loc, narrow, e.gep(oPtr, elt, oOff), 8);
  Value addr = LLVM::PtrToIntOp::create(b, loc, e.i64(), lsePtr);
  Value writer = e.band(e.eq(col, e.c32(0)), e.ne(addr, e.c64(0)));
  auto ifWriter = scf::IfOp::create(b, loc, writer, false);
  b.setInsertionPointToStart(ifWriter.thenBlock());
  Value lse = e.select(empty, e.negInf(),
                       e.fadd(mSafe, e.fmul(e.log2(l), e.cf(kLn2))));
  Value lOff = e.add(e.add(e.mul(e.toI64(bb), lT[0]), e.mul(e.toI64(h), lT[1])),
                     e.mul(e.toI64(i), lT[2]));
  LLVM::StoreOp::create(b, loc, lse, e.gep(lsePtr, f32, lOff), 4);
  b.setInsertionPointToEnd(&func.getBody().front());
  gpu::ReturnOp::create(b, loc);
  return func;
}

} // namespace

gpu::GPUFuncOp attn::buildAttentionKernel(OpBuilder &b, Location loc,
                                          const KernelSpec &spec) {
  if (spec.kind == KernelKind::DecodeCombine)
    return buildCombineKernel(b, loc, spec);
  return AttentionKernel(b, loc, spec).build();
}
