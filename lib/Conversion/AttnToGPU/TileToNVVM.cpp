//===- TileToNVVM.cpp - the tile form on warps and tensor cores -----------===//
//
// Maps attn-tile's tile form onto one CTA (docs/TileToGPU.md), op by op; no
// op is recognised by the pattern around it, and the attention algorithm
// lives in attn-tile alone. Upstream MLIR has the nvvm ops for ldmatrix,
// mma.sync and cp.async but no lowering of tensor-level ops onto register
// fragments (the vector-to-nvgpu path needs vector.contract on one warp's
// tile), so the mapping below is written here:
//
// - register tiles: each warp holds a set of 16-row MMA tiles, each thread
//   the elements MmaLayout.h says. Without key slices a `[R, C]` tile's
//   rows are split between the warps; with key slices (split-KV decode) a
//   `[S, R, C]` tile gives slice s to warp s, and a tile without the slice
//   dimension is held whole by every warp (R = 16 m-tiles);
// - memory tiles in workgroup memory: slices of the dynamic shared memory,
//   rows padded by 16 bytes, as attn-tile's cost model counts them;
// - index arithmetic in i32, global element offsets in i64;
// - tile.load: 16-byte cp.async chunks, zero-filled past `rows`; a commit
//   group after every scf.if that holds loads, and a wait for all but the
//   newest `stages - 2` groups plus one barrier at the top of the loop that
//   prefetches;
// - tile.matmul: ldmatrix and mma.sync.m16n8k16; a loop-invariant memory
//   lhs with one m-tile per warp is read into registers before the loop;
// - tile.reduce over columns: per thread, then across the four lanes of a
//   row; over key slices: through shared memory, after the K/V tiles are
//   retired. A sum over columns stays lane-partial (each of the row's four
//   lanes holds part of it) through the maps that are linear in it and the
//   loops that carry it, and is summed across the lanes only where its
//   value is needed (the running softmax sum: once, after the loop).
//
//===----------------------------------------------------------------------===//

#include "TileToNVVM.h"
#include "Emitter.h"
#include "MmaLayout.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>

using namespace mlir;
using namespace mlir::attn;

namespace {

using Mma = MmaM16N8K16;

/// Iterations of a loop without a copy ring that issue together.
constexpr int64_t kUnroll = 4;

/// Where the rows of a register tile live.
struct FragLayout {
  /// The leading dimension is the key slice, one per warp.
  bool sliced = false;
  /// The rows are split between the warps (else every warp's rows start at
  /// row 0: sliced tiles and tiles every warp holds whole).
  bool warpRows = false;
  /// 16-row MMA tiles per warp, and columns (0: a row tile, one value per
  /// row).
  int64_t mTiles = 0, cols = 0;

  /// Elements per 16-row MMA tile and per thread.
  int64_t perTile() const {
    return cols ? cols / Mma::kN * Mma::kAccElements : 2;
  }
  int64_t size() const { return mTiles * perTile(); }
  /// Whether every warp holds the same elements.
  bool replicated() const { return !sliced && !warpRows; }
  bool sameRows(const FragLayout &o) const {
    return warpRows == o.warpRows && mTiles == o.mTiles;
  }
};

/// Element of a row tile with the rows of element `i` of `l`.
int64_t rowElement(const FragLayout &l, int64_t i) {
  if (!l.cols)
    return i;
  return i / l.perTile() * 2 + Mma::rowHalf(i % Mma::kAccElements);
}

/// A register tile: its layout and this thread's elements.
struct Fragment {
  FragLayout layout;
  SmallVector<Value> elems;
  /// A row tile held lane-partial: a row's value is the sum of its four
  /// lanes' elements.
  bool partial = false;
};

/// How a tile.map body depends on its lane-partial inputs.
enum class Linearity {
  /// Not at all.
  Full,
  /// Linearly: the body of the lanes' parts sums to the body of the sum.
  Partial,
  /// Otherwise: the inputs must be summed across the lanes first.
  Mixed
};

/// The linearity of `body` (a tile.map's, `rank` index arguments first) in
/// the element arguments whose `partial` flag is set.
Linearity linearity(Block &body, int64_t rank, ArrayRef<bool> partial) {
  DenseMap<Value, Linearity> kind;
  for (auto [arg, p] :
       llvm::zip(body.getArguments().drop_front(rank), partial))
    kind[arg] = p ? Linearity::Partial : Linearity::Full;
  // Values from outside the body and index arguments are full.
  auto of = [&](Value v) { return kind.lookup(v); };
  for (Operation &op : body.without_terminator()) {
    SmallVector<Linearity> in = llvm::map_to_vector(op.getOperands(), of);
    int64_t parts = llvm::count(in, Linearity::Partial);
    Linearity out;
    if (llvm::is_contained(in, Linearity::Mixed))
      out = Linearity::Mixed;
    else if (parts == 0)
      out = Linearity::Full;
    else if (isa<arith::AddFOp, arith::SubFOp>(op))
      out = parts == 2 ? Linearity::Partial : Linearity::Mixed;
    else if (isa<arith::MulFOp>(op))
      out = parts == 1 ? Linearity::Partial : Linearity::Mixed;
    else if (isa<arith::DivFOp>(op))
      out = in[1] == Linearity::Full ? Linearity::Partial : Linearity::Mixed;
    else if (isa<arith::NegFOp>(op))
      out = Linearity::Partial;
    else
      out = Linearity::Mixed;
    for (Value r : op.getResults())
      kind[r] = out;
  }
  return of(body.getTerminator()->getOperand(0));
}

/// A memref kernel parameter.
struct Global {
  StringRef name;
  Value ptr;
  Type elementType;
  SmallVector<Value> sizes, strides;
};

/// A memory tile in shared memory: byte offset (i32), static shape, row
/// pitch in elements.
struct SharedTile {
  Value offset;
  SmallVector<int64_t> shape;
  int64_t pitch;
  Type elementType;
  int64_t elementBytes() const {
    return elementType.getIntOrFloatBitWidth() / 8;
  }
};

class TileLowering {
public:
  TileLowering(OpBuilder &b, Location loc) : b(b), e{b, loc} {}

  FailureOr<int64_t> run(func::FuncOp source, gpu::GPUFuncOp kernel,
                         ArrayRef<KernelParam> params);

private:
  OpBuilder &b;
  Emitter e;

  // The schedule of the loop nest being lowered.
  int64_t warps = 0, keySlices = 1, blockQ = 0, stages = 0;
  Value tid, warp, lane, smem;
  Block *entry = nullptr;
  std::optional<Mma> frag;

  IRMapping scalars;
  /// The scalar kernel parameters, by name.
  llvm::StringMap<Value> paramArgs;
  DenseMap<Value, Global *> globals;
  std::vector<std::unique_ptr<Global>> globalStorage;
  DenseMap<Value, SharedTile> shared;
  DenseMap<Value, Fragment> regs;
  /// Tiles read into A-operand registers before the loop that uses them:
  /// per m-tile and k-step, four registers.
  DenseMap<Value, SmallVector<Value>> hoistedA;

  int64_t tileBytes = 0, scratchBytes = 0;
  bool uncommittedLoads = false, tilesRetired = false;

  Type ptr3() { return LLVM::LLVMPointerType::get(b.getContext(), 3); }
  /// The dynamic shared memory (made at the kernel's entry on first use).
  Value sharedBase();
  Value sharedAt(Value byteOffset) {
    return e.gep(sharedBase(), b.getI8Type(), byteOffset);
  }
  Type convert(Type t) { return t.isIndex() ? e.i32() : t; }

  // Ops.
  /// Lowers the ops of `block`; the operands of its terminator go to
  /// `yielded`, lane-partial where `partial` says so.
  LogicalResult lowerBlock(Block &block, SmallVectorImpl<Value> *yielded,
                           ArrayRef<bool> partial = {});
  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerScalar(Operation *op);
  LogicalResult lowerView(Operation *op);
  LogicalResult lowerForall(scf::ForallOp op);
  LogicalResult lowerFor(scf::ForOp op);
  LogicalResult lowerIf(scf::IfOp op);
  LogicalResult lowerAlloc(memref::AllocOp op);
  LogicalResult lowerSubView(memref::SubViewOp op);
  /// memref.load or tensor.extract of a kernel parameter.
  LogicalResult lowerGlobalLoad(Operation *op);
  LogicalResult lowerLoad(TileLoadOp op);
  LogicalResult lowerStore(TileStoreOp op);
  LogicalResult lowerMatmul(TileMatmulOp op);
  LogicalResult lowerMap(TileMapOp op);
  LogicalResult lowerReduce(TileReduceOp op);

  // Values.
  FailureOr<FragLayout> layoutOf(Operation *where, RankedTensorType type);
  /// The fragments of `tensor`, summed across lanes if they are partial.
  FailureOr<Fragment> fragmentOf(Operation *where, Value tensor);
  /// The fragments of `tensor` as they are held.
  FailureOr<Fragment> heldFragmentOf(Operation *where, Value tensor);
  Fragment summed(const Fragment &f);
  Fragment lanePartial(const Fragment &f);
  /// Whether `v`, a row tile, can be held lane-partial, given that the
  /// loop-carried values in `assumed` are.
  bool staysPartial(Value v, const DenseSet<Value> &assumed);
  FailureOr<SmallVector<Value>> flatten(Operation *where, Value old,
                                        bool partial = false);
  FailureOr<int64_t> flatSize(Operation *where, Value old);
  LogicalResult bind(Operation *where, Value old, ValueRange flat,
                     bool partial = false);
  /// The i32 row and column of element `i` of a tile of `layout`.
  Value rowOf(const FragLayout &layout, int64_t i);
  Value colOf(const FragLayout &layout, int64_t i);
  /// Evaluates a tile.load / tile.store row region at row `row`.
  FailureOr<SmallVector<Value>> rowIndices(Region &region, Value row);
  Value globalOffset(const Global &g, ArrayRef<Value> leading, Value column);

  // Instructions.
  SmallVector<Value> ldmatrix4(Value byteOffset, bool transpose);
  SmallVector<Value> mma(Type elementType, ArrayRef<Value> a,
                         ArrayRef<Value> bFrag, ArrayRef<Value> c);
  Value packPair(Type elementType, Value lo, Value hi);
  SmallVector<Value> sharedA(const SharedTile &tile, Value rowBase, int64_t mt,
                             int64_t kk);
  void waitForStages(int64_t pending);
  void retireTiles();
};

} // namespace

//===----------------------------------------------------------------------===//
// Layouts and values
//===----------------------------------------------------------------------===//

FailureOr<FragLayout> TileLowering::layoutOf(Operation *where,
                                             RankedTensorType type) {
  FragLayout l;
  ArrayRef<int64_t> shape = type.getShape();
  if (!warps)
    return where->emitOpError("holds a register tile outside the loop nest "
                              "of a schedule");
  // With key slices, a leading dimension of `key_slices` is the slice (the
  // schedule keeps decode's rows, block_q, apart from it).
  l.sliced = keySlices > 1 && shape.size() >= 2 && shape[0] == keySlices &&
             shape[1] == blockQ;
  ArrayRef<int64_t> rest = shape.drop_front(l.sliced ? 1 : 0);
  if (rest.empty() || rest.size() > 2)
    return where->emitOpError("has a register tile of shape ")
           << type << " the GPU lowering cannot map onto warps";
  int64_t rows = rest[0];
  l.cols = rest.size() == 2 ? rest[1] : 0;
  l.warpRows = keySlices == 1;
  int64_t rowsPerWarp = l.warpRows ? rows / warps : rows;
  if (rows % (l.warpRows ? warps : 1) || rowsPerWarp % Mma::kM ||
      l.cols % Mma::kN)
    return where->emitOpError("has a register tile of shape ")
           << type << ": the GPU lowering needs rows in 16-row MMA tiles "
           << (l.warpRows ? "on each warp " : "")
           << "and columns in multiples of 8";
  l.mTiles = rowsPerWarp / Mma::kM;
  return l;
}

FailureOr<Fragment> TileLowering::heldFragmentOf(Operation *where,
                                                 Value tensor) {
  auto it = regs.find(tensor);
  if (it != regs.end())
    return it->second;
  // A splat constant: every element the same scalar.
  DenseElementsAttr attr;
  auto type = dyn_cast<RankedTensorType>(tensor.getType());
  if (type && matchPattern(tensor, m_Constant(&attr)) && attr.isSplat()) {
    FailureOr<FragLayout> layout = layoutOf(where, type);
    if (failed(layout))
      return failure();
    // At the kernel's entry, so that it dominates every use.
    OpBuilder atEntry = OpBuilder::atBlockBegin(entry);
    Value v = arith::ConstantOp::create(
        atEntry, e.loc, cast<TypedAttr>(attr.getSplatValue<Attribute>()));
    Fragment f{*layout, SmallVector<Value>(layout->size(), v)};
    regs[tensor] = f;
    return f;
  }
  return where->emitOpError("uses a register tile the GPU lowering has no "
                            "fragments for (only tile ops and splat "
                            "constants make them)");
}

FailureOr<Fragment> TileLowering::fragmentOf(Operation *where, Value tensor) {
  FailureOr<Fragment> f = heldFragmentOf(where, tensor);
  if (failed(f) || !f->partial)
    return f;
  return summed(*f);
}

Fragment TileLowering::summed(const Fragment &f) {
  if (!f.partial)
    return f;
  Fragment out{f.layout, {}, false};
  for (Value v : f.elems)
    out.elems.push_back(frag->rowReduce(e, v, /*isMax=*/false));
  return out;
}

Fragment TileLowering::lanePartial(const Fragment &f) {
  if (f.partial)
    return f;
  // The first lane of a row holds the value, the others 0.
  Fragment out{f.layout, {}, true};
  for (Value v : f.elems)
    out.elems.push_back(matchPattern(v, m_AnyZeroFloat())
                            ? v
                            : e.select(frag->firstOfRow(e), v, e.cf(0.0)));
  return out;
}

bool TileLowering::staysPartial(Value v, const DenseSet<Value> &assumed) {
  if (assumed.contains(v))
    return true;
  if (auto reduce = v.getDefiningOp<TileReduceOp>())
    return reduce.getKind() == TileReduceKind::Add &&
           static_cast<int64_t>(reduce.getReducedDim()) ==
               reduce.getInput().getType().getRank() - 1;
  auto map = v.getDefiningOp<TileMapOp>();
  if (!map)
    return false;
  SmallVector<bool> partial;
  for (Value in : map.getInputs())
    partial.push_back(in.getType() == map.getType() &&
                      staysPartial(in, assumed));
  return llvm::is_contained(partial, true) &&
         linearity(map.getBody().front(), map.getType().getRank(), partial) ==
             Linearity::Partial;
}

FailureOr<SmallVector<Value>> TileLowering::flatten(Operation *where,
                                                    Value old, bool partial) {
  if (isa<RankedTensorType>(old.getType())) {
    FailureOr<Fragment> f =
        partial ? heldFragmentOf(where, old) : fragmentOf(where, old);
    if (failed(f))
      return failure();
    return partial ? lanePartial(*f).elems : f->elems;
  }
  Value v = scalars.lookupOrNull(old);
  if (!v)
    return where->emitOpError("uses a value the GPU lowering did not map");
  return SmallVector<Value>{v};
}

FailureOr<int64_t> TileLowering::flatSize(Operation *where, Value old) {
  auto type = dyn_cast<RankedTensorType>(old.getType());
  if (!type)
    return 1;
  FailureOr<FragLayout> l = layoutOf(where, type);
  if (failed(l))
    return failure();
  return l->size();
}

LogicalResult TileLowering::bind(Operation *where, Value old, ValueRange flat,
                                 bool partial) {
  if (auto type = dyn_cast<RankedTensorType>(old.getType())) {
    FailureOr<FragLayout> layout = layoutOf(where, type);
    if (failed(layout))
      return failure();
    regs[old] = Fragment{*layout, llvm::to_vector(flat), partial};
    return success();
  }
  scalars.map(old, flat.front());
  return success();
}

Value TileLowering::rowOf(const FragLayout &l, int64_t i) {
  int64_t mt = i / l.perTile(), k = i % l.perTile();
  int64_t half = l.cols ? Mma::rowHalf(k % Mma::kAccElements) : k;
  Value base = l.warpRows ? e.mul(warp, e.c32(l.mTiles * Mma::kM)) : Value();
  return frag->accRow(e, base, mt, half);
}

Value TileLowering::colOf(const FragLayout &l, int64_t i) {
  int64_t k = i % l.perTile();
  return frag->accColumn(e, k / Mma::kAccElements, k % Mma::kAccElements);
}

FailureOr<SmallVector<Value>> TileLowering::rowIndices(Region &region,
                                                       Value row) {
  Block &block = region.front();
  scalars.map(block.getArgument(0), row);
  SmallVector<Value> out;
  if (failed(lowerBlock(block, &out)))
    return failure();
  return out;
}

Value TileLowering::globalOffset(const Global &g, ArrayRef<Value> leading,
                                 Value column) {
  // The innermost dimension is contiguous (the runtime checks it).
  Value off = e.toI64(column);
  for (auto [index, stride] : llvm::zip(leading, g.strides))
    off = e.add(off, e.mul(e.toI64(index), stride));
  return off;
}

//===----------------------------------------------------------------------===//
// Instructions
//===----------------------------------------------------------------------===//

SmallVector<Value> TileLowering::ldmatrix4(Value byteOffset, bool transpose) {
  MLIRContext *ctx = b.getContext();
  Type i32 = e.i32();
  auto structTy = LLVM::LLVMStructType::getLiteral(ctx, {i32, i32, i32, i32});
  Value res = NVVM::LdMatrixOp::create(
      b, e.loc, structTy, sharedAt(byteOffset), 4,
      transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8), NVVM::LdStMatrixEltType::B16);
  SmallVector<Value> out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, e.loc, res, i));
  return out;
}

SmallVector<Value> TileLowering::mma(Type elementType, ArrayRef<Value> a,
                                     ArrayRef<Value> bFrag,
                                     ArrayRef<Value> c) {
  MLIRContext *ctx = b.getContext();
  Type f32 = e.f32();
  auto structTy = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
  NVVM::MMATypes type =
      elementType.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  // Fragments travel as i32 (two 16-bit values); the f16 form of the op
  // takes them as vector<2xf16>.
  SmallVector<Value> aOps(a), bOps(bFrag);
  if (elementType.isF16()) {
    auto v2 = VectorType::get({2}, elementType);
    for (Value &v : aOps)
      v = LLVM::BitcastOp::create(b, e.loc, v2, v);
    for (Value &v : bOps)
      v = LLVM::BitcastOp::create(b, e.loc, v2, v);
  }
  Value res = NVVM::MmaOp::create(
      b, e.loc, structTy, aOps, bOps, c, {16, 8, 16}, std::nullopt,
      std::nullopt, std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, e.loc, res, i));
  return out;
}

Value TileLowering::packPair(Type elementType, Value lo, Value hi) {
  auto v2 = VectorType::get({2}, elementType);
  Value v;
  auto loTrunc = lo.getDefiningOp<arith::TruncFOp>();
  auto hiTrunc = hi.getDefiningOp<arith::TruncFOp>();
  if (loTrunc && hiTrunc && loTrunc.getIn().getType().isF32() &&
      hiTrunc.getIn().getType().isF32()) {
    // Two f32 -> 16-bit conversions in one cvt.rn.{bf16x2,f16x2}.f32.
    Value wide = vector::FromElementsOp::create(
        b, e.loc, VectorType::get({2}, e.f32()),
        ValueRange{loTrunc.getIn(), hiTrunc.getIn()});
    v = arith::TruncFOp::create(b, e.loc, v2, wide);
  } else {
    v = vector::FromElementsOp::create(b, e.loc, v2, ValueRange{lo, hi});
  }
  return LLVM::BitcastOp::create(b, e.loc, e.i32(), v);
}

SmallVector<Value> TileLowering::sharedA(const SharedTile &tile, Value rowBase,
                                         int64_t mt, int64_t kk) {
  auto [laneRow, laneCol] = frag->ldmatrixA(e);
  Value row = e.add(e.add(rowBase, e.c32(mt * Mma::kM)), laneRow);
  Value col = e.add(laneCol, e.c32(kk * Mma::kK));
  return ldmatrix4(
      e.add(tile.offset, e.mul(e.add(e.mul(row, e.c32(tile.pitch)), col),
                               e.c32(tile.elementBytes()))),
      /*transpose=*/false);
}

void TileLowering::waitForStages(int64_t pending) {
  if (uncommittedLoads) {
    NVVM::CpAsyncCommitGroupOp::create(b, e.loc);
    uncommittedLoads = false;
  }
  NVVM::CpAsyncWaitGroupOp::create(b, e.loc, pending);
  gpu::BarrierOp::create(b, e.loc);
}

void TileLowering::retireTiles() {
  if (tilesRetired)
    return;
  // No copy may still land and no warp may still read a memory tile once
  // shared memory is reused as scratch.
  waitForStages(0);
  tilesRetired = true;
}

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

LogicalResult TileLowering::lowerBlock(Block &block,
                                       SmallVectorImpl<Value> *yielded,
                                       ArrayRef<bool> partial) {
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      if (isa<scf::InParallelOp, func::ReturnOp>(op))
        continue;
      if (!yielded)
        return op.emitOpError("ends a region the GPU lowering does not "
                              "expect");
      for (auto [i, v] : llvm::enumerate(op.getOperands())) {
        FailureOr<SmallVector<Value>> flat =
            flatten(&op, v, i < partial.size() && partial[i]);
        if (failed(flat))
          return failure();
        llvm::append_range(*yielded, *flat);
      }
      continue;
    }
    if (failed(lowerOp(&op)))
      return failure();
  }
  return success();
}

LogicalResult TileLowering::lowerOp(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](scf::ForallOp op) { return lowerForall(op); })
      .Case([&](scf::ForOp op) { return lowerFor(op); })
      .Case([&](scf::IfOp op) { return lowerIf(op); })
      .Case([&](memref::AllocOp op) { return lowerAlloc(op); })
      .Case([&](memref::SubViewOp op) { return lowerSubView(op); })
      .Case<memref::LoadOp, tensor::ExtractOp>(
          [&](Operation *op) { return lowerGlobalLoad(op); })
      .Case([&](TileLoadOp op) { return lowerLoad(op); })
      .Case([&](TileStoreOp op) { return lowerStore(op); })
      .Case([&](TileMatmulOp op) { return lowerMatmul(op); })
      .Case([&](TileMapOp op) { return lowerMap(op); })
      .Case([&](TileReduceOp op) { return lowerReduce(op); })
      .Case([&](TileParamOp op) -> LogicalResult {
        auto it = paramArgs.find(op.getName());
        if (it == paramArgs.end())
          return op.emitOpError("names launch parameter '")
                 << op.getName() << "', which this kernel does not take";
        Value arg = it->second;
        if (op.getType().isIndex())
          arg = arith::TruncIOp::create(b, e.loc, e.i32(), arg);
        scalars.map(op.getResult(), arg);
        return success();
      })
      .Case<memref::CastOp, memref::ExpandShapeOp, bufferization::ToBufferOp,
            bufferization::ToTensorOp, tensor::CastOp>(
          [&](Operation *op) { return lowerView(op); })
      .Case<memref::DimOp, tensor::DimOp>([&](Operation *op) -> LogicalResult {
        std::optional<int64_t> dim = getConstantIntValue(op->getOperand(1));
        Global *g = globals.lookup(op->getOperand(0));
        if (!dim || !g)
          return op->emitOpError("reads a size the GPU lowering cannot map");
        scalars.map(op->getResult(0), g->sizes[*dim]);
        return success();
      })
      .Default([&](Operation *op) { return lowerScalar(op); });
}

LogicalResult TileLowering::lowerView(Operation *op) {
  Value src = op->getOperand(0), res = op->getResult(0);
  if (Global *g = globals.lookup(src)) {
    globals[res] = g;
    return success();
  }
  auto it = shared.find(src);
  if (it == shared.end())
    return op->emitOpError("views a buffer the GPU lowering did not map");
  SharedTile t = it->second;
  t.shape = llvm::to_vector(cast<MemRefType>(res.getType()).getShape());
  // Only leading dimensions may be split: the rows keep their pitch.
  if (auto expand = dyn_cast<memref::ExpandShapeOp>(op);
      expand && expand.getReassociationIndices().back().size() != 1)
    return op->emitOpError("splits the rows of a shared-memory tile");
  shared[res] = t;
  return success();
}

LogicalResult TileLowering::lowerScalar(Operation *op) {
  // Register tiles of one value become fragments where they are used.
  if (isa<arith::ConstantOp>(op) &&
      isa<RankedTensorType>(op->getResult(0).getType()))
    return success();
  auto isScalar = [](Type t) { return t.isIntOrIndexOrFloat(); };
  if (op->getNumRegions() || !llvm::all_of(op->getOperandTypes(), isScalar) ||
      !llvm::all_of(op->getResultTypes(), isScalar))
    return op->emitOpError("is not part of the tile form the GPU lowering "
                           "maps");
  for (Value operand : op->getOperands())
    if (!scalars.contains(operand))
      return op->emitOpError("uses a value the GPU lowering did not map");
  Value result = op->getNumResults() ? op->getResult(0) : Value();
  if (auto c = dyn_cast<arith::ConstantOp>(op); c && c.getType().isIndex()) {
    scalars.map(result, e.c32(cast<IntegerAttr>(c.getValue()).getInt()));
    return success();
  }
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op)) {
    Value in = scalars.lookup(op->getOperand(0));
    Type to = convert(result.getType());
    unsigned from = in.getType().getIntOrFloatBitWidth();
    unsigned width = to.getIntOrFloatBitWidth();
    Value out = in;
    if (width > from && isa<arith::IndexCastUIOp>(op))
      out = arith::ExtUIOp::create(b, e.loc, to, in);
    else if (width > from)
      out = arith::ExtSIOp::create(b, e.loc, to, in);
    else if (width < from)
      out = arith::TruncIOp::create(b, e.loc, to, in);
    scalars.map(result, out);
    return success();
  }
  // exp2 and log2 of f32 on the special-function unit (ex2/lg2.approx), as
  // the online softmax wants them, and fma as one instruction: no
  // libdevice calls.
  if (isa<math::Exp2Op, math::Log2Op>(op) && result.getType().isF32()) {
    Value x = scalars.lookup(op->getOperand(0));
    scalars.map(result, isa<math::Exp2Op>(op) ? e.exp2(x) : e.log2(x));
    return success();
  }
  if (auto fma = dyn_cast<math::FmaOp>(op)) {
    scalars.map(result, LLVM::FMAOp::create(b, e.loc,
                                            scalars.lookup(fma.getA()),
                                            scalars.lookup(fma.getB()),
                                            scalars.lookup(fma.getC())));
    return success();
  }
  Operation *clone = b.clone(*op, scalars);
  for (OpResult r : clone->getResults())
    r.setType(convert(r.getType()));
  return success();
}

LogicalResult TileLowering::lowerForall(scf::ForallOp op) {
  auto schedule = op->getAttrOfType<ScheduleAttr>("attn.schedule");
  std::optional<ArrayAttr> mapping = op.getMapping();
  if (!schedule || !mapping || warps)
    return op.emitOpError("is not a loop nest of attn-tile's kernel form (one "
                          "scf.forall with an #attn.schedule and a "
                          "#gpu.block mapping)");
  warps = schedule.getWarps();
  keySlices = schedule.getKeySlices();
  blockQ = schedule.getBlockQ();
  stages = schedule.getStages();
  if (keySlices > 1 && (keySlices != warps || keySlices == blockQ))
    return op.emitOpError("splits key/value tiles into ")
           << keySlices << " slices; the GPU lowering gives one to each of "
           << "the " << warps << " warps and needs block_q != key_slices";
  for (auto [lb, step] : llvm::zip(op.getMixedLowerBound(), op.getMixedStep()))
    if (!isConstantIntValue(lb, 0) || !isConstantIntValue(step, 1))
      return op.emitOpError("has a dimension that does not start at 0 with "
                            "step 1; it cannot become a grid dimension");
  for (auto [iv, attr] : llvm::zip_equal(op.getInductionVars(), *mapping)) {
    auto block = dyn_cast<gpu::GPUBlockMappingAttr>(attr);
    if (!block || block.getBlock() > gpu::MappingId::DimZ)
      return op.emitOpError("maps a dimension to ")
             << attr << "; the GPU lowering takes #gpu.block<x|y|z>";
    auto dim = static_cast<gpu::Dimension>(
        static_cast<int64_t>(block.getBlock()) -
        static_cast<int64_t>(gpu::MappingId::DimX));
    scalars.map(iv, e.toI32(gpu::BlockIdOp::create(b, e.loc, dim)));
  }
  return lowerBlock(*op.getBody(), nullptr);
}

LogicalResult TileLowering::lowerFor(scf::ForOp op) {
  for (Value v : {op.getLowerBound(), op.getUpperBound(), op.getStep()})
    if (!scalars.contains(v))
      return op.emitOpError("has bounds the GPU lowering did not map");
  bool pipelined =
      op.getBody()
          ->walk([](TileLoadOp) { return WalkResult::interrupt(); })
          .wasInterrupted();
  if (pipelined && stages < 2)
    return op.emitOpError("loads tiles in a schedule of ")
           << stages << " stage; the GPU kernels keep at least 2 key/value "
           << "tiles in flight";

  // A memory lhs that the loop does not write and one m-tile per warp: read
  // into registers once, before the loop.
  bool waited = false;
  WalkResult hoist = op.getBody()->walk([&](TileMatmulOp mm) {
    Value lhs = mm.getLhs();
    auto it = shared.find(lhs);
    if (it == shared.end() || hoistedA.count(lhs))
      return WalkResult::advance();
    FailureOr<FragLayout> out = layoutOf(mm, mm.getType());
    if (failed(out))
      return WalkResult::interrupt();
    if (out->mTiles != 1 || it->second.shape.size() != 2)
      return WalkResult::advance();
    if (!waited && pipelined)
      waitForStages(stages - 2);
    waited = true;
    Value base = out->warpRows ? e.mul(warp, e.c32(Mma::kM)) : e.c32(0);
    SmallVector<Value> regsA;
    for (int64_t kk = 0; kk < it->second.shape[1] / Mma::kK; ++kk)
      llvm::append_range(regsA, sharedA(it->second, base, 0, kk));
    hoistedA[lhs] = regsA;
    return WalkResult::advance();
  });
  if (hoist.wasInterrupted())
    return failure();

  // Row sums the loop carries lane-partial: those whose start value can be
  // (a held partial or zero) and whose next value stays partial when they
  // are (optimistic, then pruned to a fixed point).
  auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
  DenseSet<Value> assumed;
  for (auto [arg, init] : llvm::zip(op.getRegionIterArgs(), op.getInitArgs())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      continue;
    FailureOr<FragLayout> l = layoutOf(op, type);
    if (failed(l))
      return failure();
    auto held = regs.find(init);
    bool zero = matchPattern(init, m_AnyZeroFloat());
    if (!l->cols && (zero || (held != regs.end() && held->second.partial)))
      assumed.insert(arg);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (auto [arg, next] :
         llvm::zip(op.getRegionIterArgs(), yield.getOperands()))
      if (assumed.contains(arg) && !staysPartial(next, assumed)) {
        assumed.erase(arg);
        changed = true;
      }
  }
  SmallVector<bool> partial = llvm::map_to_vector(
      op.getRegionIterArgs(), [&](Value v) { return assumed.contains(v); });

  SmallVector<Value> init;
  SmallVector<int64_t> sizes;
  for (auto [v, p] : llvm::zip(op.getInitArgs(), partial)) {
    FailureOr<SmallVector<Value>> flat = flatten(op, v, p);
    if (failed(flat))
      return failure();
    llvm::append_range(init, *flat);
    sizes.push_back(flat->size());
  }
  auto loop = scf::ForOp::create(b, e.loc, scalars.lookup(op.getLowerBound()),
                                 scalars.lookup(op.getUpperBound()),
                                 scalars.lookup(op.getStep()), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    scalars.map(op.getInductionVar(), loop.getInductionVar());
    int64_t pos = 0;
    for (auto [arg, n, p] : llvm::zip(op.getRegionIterArgs(), sizes, partial)) {
      if (failed(bind(op, arg, loop.getRegionIterArgs().slice(pos, n), p)))
        return failure();
      pos += n;
    }
    // This tile has landed, and every warp is done with the stage that the
    // prefetch below overwrites.
    if (pipelined)
      waitForStages(stages - 2);
    SmallVector<Value> yielded;
    if (failed(lowerBlock(*op.getBody(), &yielded, partial)))
      return failure();
    scf::YieldOp::create(b, e.loc, yielded);
  }
  // A loop without a copy ring (the combine's over splits) waits on memory
  // once per iteration: unrolled, ptxas issues the loads of several
  // iterations together. The results are then those of the remainder loop.
  ValueRange results = loop.getResults();
  if (!pipelined) {
    FailureOr<UnrolledLoopInfo> unrolled =
        loopUnrollByFactor(loop, kUnroll);
    if (failed(unrolled))
      return op.emitOpError("could not be unrolled");
    if (unrolled->epilogueLoopOp)
      results = unrolled->epilogueLoopOp->getResults();
    else if (unrolled->mainLoopOp)
      results = unrolled->mainLoopOp->getResults();
  }
  int64_t pos = 0;
  for (auto [res, n, p] : llvm::zip(op.getResults(), sizes, partial)) {
    if (failed(bind(op, res, results.slice(pos, n), p)))
      return failure();
    pos += n;
  }
  return success();
}

LogicalResult TileLowering::lowerIf(scf::IfOp op) {
  Value cond = scalars.lookupOrNull(op.getCondition());
  if (!cond)
    return op.emitOpError("has a condition the GPU lowering did not map");
  SmallVector<Type> types;
  SmallVector<int64_t> sizes;
  for (Value r : op.getResults()) {
    FailureOr<int64_t> n = flatSize(op, r);
    if (failed(n))
      return failure();
    types.append(*n, convert(getElementTypeOrSelf(r.getType())));
    sizes.push_back(*n);
  }
  bool hasElse = !op.getElseRegion().empty();
  auto ifOp = scf::IfOp::create(b, e.loc, types, cond, hasElse);
  for (auto [from, to] : llvm::zip(op->getRegions(), ifOp->getRegions())) {
    if (from.empty())
      continue;
    OpBuilder::InsertionGuard guard(b);
    Block &block = to.front();
    if (!block.empty())
      block.getTerminator()->erase();
    b.setInsertionPointToEnd(&block);
    SmallVector<Value> yielded;
    if (failed(lowerBlock(from.front(), &yielded)))
      return failure();
    scf::YieldOp::create(b, e.loc, yielded);
  }
  // One cp.async group per scf.if with loads, taken or not, so that the
  // groups count key/value tiles.
  if (op->walk([](TileLoadOp) { return WalkResult::interrupt(); })
          .wasInterrupted()) {
    NVVM::CpAsyncCommitGroupOp::create(b, e.loc);
    uncommittedLoads = false;
  }
  int64_t pos = 0;
  for (auto [res, n] : llvm::zip(op.getResults(), sizes)) {
    if (failed(bind(op, res, ifOp.getResults().slice(pos, n))))
      return failure();
    pos += n;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Memory tiles
//===----------------------------------------------------------------------===//

LogicalResult TileLowering::lowerAlloc(memref::AllocOp op) {
  MemRefType type = op.getType();
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
  if (!space || space.getValue() != gpu::AddressSpace::Workgroup ||
      !type.hasStaticShape() || type.getRank() < 2)
    return op.emitOpError("allocates ")
           << type << "; GPU kernels hold static tiles of rank 2 or more in "
           << "workgroup memory only";
  int64_t eb = type.getElementTypeBitWidth() / 8;
  if (eb < 1 || 16 % eb)
    return op.emitOpError("allocates a tile of ")
           << type.getElementType() << ", not whole 16-byte chunks per row";
  SharedTile t{e.c32(tileBytes), llvm::to_vector(type.getShape()),
               type.getShape().back() + 16 / eb, type.getElementType()};
  int64_t rows = 1;
  for (int64_t d : type.getShape().drop_back())
    rows *= d;
  tileBytes += llvm::alignTo(rows * t.pitch * eb, 16);
  shared[op.getResult()] = t;
  return success();
}

LogicalResult TileLowering::lowerSubView(memref::SubViewOp op) {
  auto index = [&](OpFoldResult v) -> Value {
    if (auto value = dyn_cast<Value>(v))
      return scalars.lookupOrNull(value);
    return e.c32(*getConstantIntValue(v));
  };
  for (OpFoldResult stride : op.getMixedStrides())
    if (!isConstantIntValue(stride, 1))
      return op.emitOpError("has a non-unit stride; the GPU lowering views "
                            "buffers with unit strides only");
  if (Global *src = globals.lookup(op.getSource())) {
    // A view of a kernel parameter: its pointer moves, its strides stay.
    if (op.getType().getRank() != op.getSourceType().getRank())
      return op.emitOpError("drops dimensions of a kernel parameter");
    auto g = std::make_unique<Global>(*src);
    Value off = e.c64(0);
    for (auto [offset, stride] : llvm::zip(op.getMixedOffsets(), src->strides)) {
      Value i = index(offset);
      if (!i)
        return op.emitOpError("has an offset the GPU lowering did not map");
      off = e.add(off, e.mul(e.toI64(i), stride));
    }
    g->ptr = e.gep(src->ptr, src->elementType, off);
    g->sizes.clear();
    for (OpFoldResult size : op.getMixedSizes()) {
      Value s = index(size);
      if (!s)
        return op.emitOpError("has a size the GPU lowering did not map");
      g->sizes.push_back(s);
    }
    globals[op.getResult()] = g.get();
    globalStorage.push_back(std::move(g));
    return success();
  }
  auto it = shared.find(op.getSource());
  if (it == shared.end())
    return op.emitOpError("views a buffer that is not a shared-memory tile");
  SharedTile src = it->second;
  int64_t rank = src.shape.size();
  Value off = src.offset;
  for (auto [d, offset] : llvm::enumerate(op.getMixedOffsets())) {
    if (isConstantIntValue(offset, 0))
      continue;
    // Elements per step of dimension d: the padded rows below it.
    int64_t step = 1;
    if (static_cast<int64_t>(d) < rank - 1) {
      step = src.pitch;
      for (int64_t k = d + 1; k < rank - 1; ++k)
        step *= src.shape[k];
    }
    Value i = index(offset);
    if (!i)
      return op.emitOpError("has an offset the GPU lowering did not map");
    off = e.add(off, e.mul(i, e.c32(step * src.elementBytes())));
  }
  SharedTile t = src;
  t.offset = off;
  t.shape = llvm::to_vector(op.getType().getShape());
  if (t.shape.back() != src.shape.back())
    return op.emitOpError("cuts the rows of a shared-memory tile");
  shared[op.getResult()] = t;
  return success();
}

LogicalResult TileLowering::lowerGlobalLoad(Operation *op) {
  Global *g = globals.lookup(op->getOperand(0));
  if (!g)
    return op->emitOpError("loads from a buffer that is not a kernel "
                           "parameter");
  SmallVector<Value> idx;
  for (Value i : op->getOperands().drop_front()) {
    Value v = scalars.lookupOrNull(i);
    if (!v)
      return op->emitOpError("has an index the GPU lowering did not map");
    idx.push_back(v);
  }
  Value col = idx.pop_back_val();
  // A broadcast mask passes stride 0: scale the column by its stride.
  Value off = globalOffset(*g, idx, e.c32(0));
  off = e.add(off, e.mul(e.toI64(col), g->strides.back()));
  Value ptr = e.gep(g->ptr, g->elementType, off);
  Value result = op->getResult(0);
  Type t = result.getType();
  if (t.isInteger(1)) {
    // Boolean memrefs hold a byte per element.
    Value byte = LLVM::LoadOp::create(b, e.loc, b.getI8Type(), ptr, 1);
    scalars.map(result, e.ne(byte, arith::ConstantOp::create(
                                       b, e.loc, b.getI8IntegerAttr(0))));
    return success();
  }
  scalars.map(result, LLVM::LoadOp::create(
                                  b, e.loc, t, ptr,
                                  t.getIntOrFloatBitWidth() / 8));
  return success();
}

LogicalResult TileLowering::lowerLoad(TileLoadOp op) {
  Global *g = globals.lookup(op.getSource());
  auto it = shared.find(op.getTile());
  if (!g || it == shared.end() || it->second.shape.size() != 2)
    return op.emitOpError("copies between buffers the GPU lowering cannot "
                          "map (a kernel parameter into a rank-2 shared "
                          "tile)");
  const SharedTile &t = it->second;
  int64_t eb = t.elementBytes(), chunk = 16 / eb;
  if (t.shape[1] % chunk)
    return op.emitOpError("copies rows of ")
           << t.shape[1] << " elements, not whole 16-byte chunks";
  Value rows = scalars.lookup(op.getRows());
  Value last = e.max(e.sub(rows, e.c32(1)), e.c32(0));
  int64_t perRow = t.shape[1] / chunk, total = t.shape[0] * perRow;
  int64_t threads = warps * 32;
  for (int64_t k = 0; k < total; k += threads) {
    OpBuilder::InsertionGuard guard(b);
    Value c = e.add(tid, e.c32(k));
    // The last round may have fewer chunks than threads.
    if (k + threads > total) {
      auto inTile = scf::IfOp::create(b, e.loc, e.lt(c, e.c32(total)), false);
      b.setInsertionPointToStart(inTile.thenBlock());
    }
    Value r = e.div(c, e.c32(perRow));
    Value col = e.mul(e.rem(c, e.c32(perRow)), e.c32(chunk));
    // Rows past `rows` read row `rows - 1`, in bounds, and zero-fill.
    FailureOr<SmallVector<Value>> idx =
        rowIndices(op.getIndices(), e.min(r, last));
    if (failed(idx))
      return failure();
    Value src = e.gep(g->ptr, g->elementType, globalOffset(*g, *idx, col));
    Value dst = sharedAt(e.add(
        t.offset, e.mul(e.add(e.mul(r, e.c32(t.pitch)), col), e.c32(eb))));
    NVVM::CpAsyncOp::create(b, e.loc, dst, src, 16,
                            NVVM::LoadCacheModifierKind::CG,
                            e.select(e.lt(r, rows), e.c32(16), e.c32(0)));
  }
  uncommittedLoads = true;
  return success();
}

//===----------------------------------------------------------------------===//
// Register tiles
//===----------------------------------------------------------------------===//

LogicalResult TileLowering::lowerStore(TileStoreOp op) {
  FailureOr<Fragment> f = fragmentOf(op, op.getTile());
  if (failed(f))
    return failure();
  Global *g = globals.lookup(op.getDest());
  if (!g)
    return op.emitOpError("stores into a buffer that is not a kernel "
                          "parameter");
  const FragLayout &l = f->layout;
  if (l.sliced)
    return op.emitOpError("stores a tile split between key slices; merge "
                          "the slices first");
  OpBuilder::InsertionGuard guard(b);
  // Every warp holds a replicated tile: warp 0 writes it.
  Value cond;
  if (l.replicated())
    cond = e.eq(warp, e.c32(0));
  // The LSE is optional in the ABI: a null pointer skips it.
  if (g->name == "lse") {
    Value addr = LLVM::PtrToIntOp::create(b, e.loc, e.i64(), g->ptr);
    Value given = e.ne(addr, e.c64(0));
    cond = cond ? e.band(cond, given) : given;
  }
  if (cond) {
    auto ifOp = scf::IfOp::create(b, e.loc, cond, false);
    b.setInsertionPointToStart(ifOp.thenBlock());
  }
  Value rows = scalars.lookup(op.getRows());
  Type elt = getElementTypeOrSelf(op.getTile().getType());
  int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
  for (int64_t mt = 0; mt < l.mTiles; ++mt)
    for (int64_t half = 0; half < 2; ++half) {
      int64_t first = mt * l.perTile() + (l.cols ? half * 2 : half);
      Value row = rowOf(l, first);
      Value valid = e.lt(row, rows);
      // One lane of a row's four writes a row tile's value.
      if (!l.cols)
        valid = e.band(valid, frag->firstOfRow(e));
      OpBuilder::InsertionGuard rowGuard(b);
      auto ifRow = scf::IfOp::create(b, e.loc, valid, false);
      b.setInsertionPointToStart(ifRow.thenBlock());
      FailureOr<SmallVector<Value>> idx = rowIndices(op.getIndices(), row);
      if (failed(idx))
        return failure();
      if (!l.cols) {
        // The region gives every index; there is no column.
        Value pos = idx->pop_back_val();
        Value off = globalOffset(*g, *idx, e.c32(0));
        off = e.add(off, e.mul(e.toI64(pos), g->strides.back()));
        LLVM::StoreOp::create(b, e.loc, f->elems[first],
                              e.gep(g->ptr, g->elementType, off), bytes);
        continue;
      }
      for (int64_t nb = 0; nb < l.cols / Mma::kN; ++nb) {
        int64_t i = mt * l.perTile() + nb * Mma::kAccElements + half * 2;
        Value ptr = e.gep(g->ptr, g->elementType,
                          globalOffset(*g, *idx, colOf(l, i)));
        // Two adjacent columns per store.
        Value pair =
            bytes == 2
                ? packPair(elt, f->elems[i], f->elems[i + 1])
                : Value(vector::FromElementsOp::create(
                      b, e.loc, VectorType::get({2}, elt),
                      ValueRange{f->elems[i], f->elems[i + 1]}));
        LLVM::StoreOp::create(b, e.loc, pair, ptr, 2 * bytes);
      }
    }
  return success();
}

LogicalResult TileLowering::lowerMatmul(TileMatmulOp op) {
  FailureOr<Fragment> acc = fragmentOf(op, op.getAcc());
  if (failed(acc))
    return failure();
  const FragLayout &l = acc->layout;
  auto rit = shared.find(op.getRhs());
  if (rit == shared.end())
    return op.emitOpError("has a rhs that is not a shared-memory tile");
  const SharedTile &r = rit->second;
  SmallVector<int64_t> rs = r.shape;
  Value rhsRow = e.c32(0);
  if (rs.size() == 3) {
    // Key slices: warp w multiplies slice w.
    if (!l.sliced || rs[0] != keySlices)
      return op.emitOpError("multiplies key slices into a tile that is not "
                            "split by slice");
    rhsRow = e.mul(warp, e.c32(rs[1]));
    rs.erase(rs.begin());
  }
  bool transpose = op.getTransposeRhs();
  int64_t n = transpose ? rs[0] : rs[1], k = transpose ? rs[1] : rs[0];
  Type elt = r.elementType;
  if (!(elt.isBF16() || elt.isF16()) || n != l.cols || n % 16 || k % 16)
    return op.emitOpError("needs f16 or bf16 operands and N, K in multiples "
                          "of 16 for mma.sync.m16n8k16");
  int64_t eb = r.elementBytes(), kSteps = k / Mma::kK;

  // The A operand of m-tile mt, k-step kk, made once, on first use.
  std::optional<SharedTile> lhsTile;
  std::optional<Fragment> lhsFrag;
  if (auto it = shared.find(op.getLhs()); it != shared.end()) {
    lhsTile = it->second;
  } else {
    FailureOr<Fragment> f = fragmentOf(op, op.getLhs());
    if (failed(f))
      return failure();
    lhsFrag = *f;
    if (!lhsFrag->layout.sameRows(l) || lhsFrag->layout.cols != k)
      return op.emitOpError("has a register lhs in another layout than its "
                            "accumulator");
  }
  auto hoisted = hoistedA.find(op.getLhs());
  std::map<std::pair<int64_t, int64_t>, SmallVector<Value>> aCache;
  auto aOperand = [&](int64_t mt, int64_t kk) -> ArrayRef<Value> {
    auto key = std::make_pair(mt, kk);
    if (auto found = aCache.find(key); found != aCache.end())
      return found->second;
    SmallVector<Value> a;
    if (hoisted != hoistedA.end()) {
      a = llvm::to_vector(ArrayRef(hoisted->second)
                              .slice((mt * kSteps + kk) * Mma::kARegisters,
                                     Mma::kARegisters));
    } else if (lhsTile) {
      Value base = l.warpRows ? e.mul(warp, e.c32(l.mTiles * Mma::kM))
                              : e.c32(0);
      a = sharedA(*lhsTile, base, mt, kk);
    } else {
      // The accumulator layout packs into the A layout register by register.
      for (int64_t reg = 0; reg < Mma::kARegisters; ++reg) {
        auto [block, first] = Mma::aFromAccumulator(reg);
        int64_t at = mt * lhsFrag->layout.perTile() +
                     (2 * kk + block) * Mma::kAccElements + first;
        a.push_back(packPair(elt, lhsFrag->elems[at], lhsFrag->elems[at + 1]));
      }
    }
    return aCache[key] = a;
  };

  SmallVector<Value> c = acc->elems;
  // Two 8-column blocks of B per ldmatrix.x4, each into every m-tile.
  auto multiply = [&](int64_t nb, int64_t kk, ArrayRef<Value> bf) {
    for (int64_t mt = 0; mt < l.mTiles; ++mt)
      for (int64_t half = 0; half < 2; ++half) {
        auto first =
            c.begin() + mt * l.perTile() + (nb + half) * Mma::kAccElements;
        SmallVector<Value> in(first, first + Mma::kAccElements);
        SmallVector<Value> out =
            mma(elt, aOperand(mt, kk), {bf[half * 2], bf[half * 2 + 1]}, in);
        std::copy(out.begin(), out.end(), first);
      }
  };
  auto rhsAt = [&](Value row, Value col) {
    return e.add(r.offset,
                 e.mul(e.add(e.mul(row, e.c32(r.pitch)), col), e.c32(eb)));
  };
  if (transpose) {
    // rhs rows are the N dimension (K for S = Q K^T).
    auto [laneRow, laneCol] = frag->ldmatrixB(e);
    Value row0 = e.add(laneRow, rhsRow);
    for (int64_t kk = 0; kk < kSteps; ++kk)
      for (int64_t nb = 0; nb < n / Mma::kN; nb += 2)
        multiply(nb, kk,
                 ldmatrix4(rhsAt(e.add(row0, e.c32(nb * Mma::kN)),
                                 e.add(laneCol, e.c32(kk * Mma::kK))),
                           /*transpose=*/false));
  } else {
    // rhs rows are the K dimension (V for O = P V), read transposed.
    auto [laneRow, laneCol] = frag->ldmatrixBTransposed(e);
    Value row0 = e.add(laneRow, rhsRow);
    for (int64_t nb = 0; nb < n / Mma::kN; nb += 2)
      for (int64_t kk = 0; kk < kSteps; ++kk)
        multiply(nb, kk,
                 ldmatrix4(rhsAt(e.add(row0, e.c32(kk * Mma::kK)),
                                 e.add(laneCol, e.c32(nb * Mma::kN))),
                           /*transpose=*/true));
  }
  regs[op.getResult()] = Fragment{l, c};
  return success();
}

LogicalResult TileLowering::lowerMap(TileMapOp op) {
  FailureOr<FragLayout> out = layoutOf(op, op.getType());
  if (failed(out))
    return failure();
  const FragLayout &l = *out;
  int64_t rank = op.getType().getRank();
  // What each dimension of a tile is: the key slice, the row, the column.
  enum Role { Slice, Row, Col };
  auto roles = [](const FragLayout &l) {
    SmallVector<Role> r;
    if (l.sliced)
      r.push_back(Slice);
    r.push_back(Row);
    if (l.cols)
      r.push_back(Col);
    return r;
  };
  SmallVector<Role> outRoles = roles(l);
  SmallVector<Fragment> inputs;
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    FailureOr<Fragment> f = heldFragmentOf(op, input);
    if (failed(f))
      return failure();
    const FragLayout &in = f->layout;
    AffineMap map = op.getInputMap(i);
    SmallVector<Role> inRoles = roles(in);
    bool ok = map.getNumResults() == inRoles.size() &&
              (in.sameRows(l) ||
               (l.sliced && in.replicated() && in.mTiles == l.mTiles)) &&
              (!in.cols || in.cols == l.cols);
    for (auto [j, expr] : llvm::enumerate(map.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      ok = ok && dim && j < inRoles.size() &&
           outRoles[dim.getPosition()] == inRoles[j];
    }
    if (!ok)
      return op.emitOpError("broadcasts input ")
             << i << " in a way the GPU lowering cannot map onto fragments "
             << "(an input holds the rows of the result, and its columns or "
             << "none)";
    inputs.push_back(*f);
  }
  // Lane-partial inputs stay partial through a body linear in them (of
  // the result's own shape); otherwise they are summed first.
  SmallVector<bool> partial =
      llvm::map_to_vector(inputs, [](const Fragment &f) { return f.partial; });
  Block &body = op.getBody().front();
  bool keepPartial = false;
  if (llvm::is_contained(partial, true)) {
    keepPartial =
        !l.cols && linearity(body, rank, partial) == Linearity::Partial;
    if (!keepPartial)
      for (Fragment &f : inputs)
        f = summed(f);
  }
  SmallVector<Value> elems;
  for (int64_t i = 0; i < l.size(); ++i) {
    // The element's indices, where the body uses them.
    ValueRange idx = body.getArguments().take_front(rank);
    int64_t d = 0;
    if (l.sliced)
      scalars.map(idx[d++], warp);
    if (!idx[d].use_empty())
      scalars.map(idx[d], rowOf(l, i));
    ++d;
    if (l.cols && !idx[d].use_empty())
      scalars.map(idx[d], colOf(l, i));
    for (auto [arg, in] :
         llvm::zip(body.getArguments().drop_front(rank), inputs))
      scalars.map(arg, in.elems[in.layout.cols ? i : rowElement(l, i)]);
    SmallVector<Value> yielded;
    if (failed(lowerBlock(body, &yielded)))
      return failure();
    elems.push_back(yielded.front());
  }
  regs[op.getResult()] = Fragment{l, elems, keepPartial};
  return success();
}

LogicalResult TileLowering::lowerReduce(TileReduceOp op) {
  FailureOr<Fragment> in = fragmentOf(op, op.getInput());
  FailureOr<Fragment> init = fragmentOf(op, op.getInit());
  if (failed(in) || failed(init))
    return failure();
  const FragLayout &li = in->layout, &lo = init->layout;
  bool isMax = op.getKind() == TileReduceKind::Max;
  auto combine = [&](Value x, Value y) {
    return isMax ? e.fmax(x, y) : e.fadd(x, y);
  };
  int64_t dim = op.getReducedDim();
  int64_t rank = op.getInput().getType().getRank();
  SmallVector<Value> out;
  bool partial = false;
  if (li.cols && dim == rank - 1) {
    // Over the columns: a thread's elements of the row, then, for a max,
    // the row's four lanes; a sum stays lane-partial.
    if (!lo.sameRows(li) || lo.sliced != li.sliced || lo.cols)
      return op.emitOpError("reduces into a tile of other rows");
    partial = !isMax;
    Fragment start = partial ? lanePartial(*init) : *init;
    for (int64_t mt = 0; mt < li.mTiles; ++mt)
      for (int64_t half = 0; half < 2; ++half) {
        Value v;
        for (int64_t k = 0; k < li.perTile(); ++k)
          if (Mma::rowHalf(k % Mma::kAccElements) == half) {
            Value x = in->elems[mt * li.perTile() + k];
            v = v ? combine(v, x) : x;
          }
        if (isMax)
          v = frag->rowReduce(e, v, /*isMax=*/true);
        Value s = start.elems[mt * 2 + half];
        out.push_back(matchPattern(s, m_AnyZeroFloat()) && partial
                          ? v
                          : combine(s, v));
      }
  } else if (li.sliced && dim == 0) {
    // Over the key slices: each warp writes its elements to shared memory
    // (the memory tiles are done with), then every thread combines the
    // warps' values of its own elements.
    if (lo.sliced || !lo.replicated() || lo.mTiles != li.mTiles ||
        lo.cols != li.cols)
      return op.emitOpError("reduces key slices into a tile of other rows");
    retireTiles();
    int64_t rows = li.mTiles * Mma::kM, width = li.cols ? li.cols : 1;
    int64_t base = scratchBytes;
    scratchBytes += llvm::alignTo(keySlices * rows * width * 4, 16);
    auto at = [&](Value w, Value row, Value col) {
      Value idx = e.add(e.mul(e.add(e.mul(w, e.c32(rows)), row), e.c32(width)),
                        col);
      return sharedAt(e.add(e.c32(base), e.mul(idx, e.c32(4))));
    };
    {
      OpBuilder::InsertionGuard guard(b);
      if (!li.cols) {
        auto writer = scf::IfOp::create(b, e.loc, frag->firstOfRow(e), false);
        b.setInsertionPointToStart(writer.thenBlock());
      }
      for (int64_t i = 0; i < li.size(); ++i)
        LLVM::StoreOp::create(
            b, e.loc, in->elems[i],
            at(warp, rowOf(li, i), li.cols ? colOf(li, i) : e.c32(0)), 4);
    }
    gpu::BarrierOp::create(b, e.loc);
    for (int64_t i = 0; i < li.size(); ++i) {
      Value v = init->elems[i];
      Value row = rowOf(li, i), col = li.cols ? colOf(li, i) : e.c32(0);
      for (int64_t w = 0; w < keySlices; ++w)
        v = combine(v, LLVM::LoadOp::create(b, e.loc, e.f32(),
                                            at(e.c32(w), row, col), 4));
      out.push_back(v);
    }
  } else {
    return op.emitOpError("reduces dimension ")
           << dim << "; the GPU lowering reduces columns or key slices";
  }
  regs[op.getResult()] = Fragment{lo, out, partial};
  return success();
}

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

Value TileLowering::sharedBase() {
  if (smem)
    return smem;
  OpBuilder atEntry = OpBuilder::atBlockBegin(entry);
  Value dyn = gpu::DynamicSharedMemoryOp::create(
      atEntry, e.loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface{},
                      gpu::AddressSpaceAttr::get(
                          b.getContext(), gpu::AddressSpace::Workgroup)));
  Value index =
      memref::ExtractAlignedPointerAsIndexOp::create(atEntry, e.loc, dyn);
  smem = LLVM::IntToPtrOp::create(
      atEntry, e.loc, ptr3(),
      Value(arith::IndexCastOp::create(atEntry, e.loc, e.i64(), index)));
  return smem;
}

FailureOr<int64_t> TileLowering::run(func::FuncOp source,
                                     gpu::GPUFuncOp kernel,
                                     ArrayRef<KernelParam> params) {
  entry = &kernel.getBody().front();
  b.setInsertionPointToStart(entry);
  tid = e.toI32(gpu::ThreadIdOp::create(b, e.loc, gpu::Dimension::x));
  warp = e.div(tid, e.c32(32));
  lane = e.rem(tid, e.c32(32));
  frag.emplace(e, lane);

  for (auto [param, arg, from] : llvm::zip_equal(
           params, kernel.getArguments(), source.getArguments())) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (!type) {
      paramArgs[param.name] = arg;
      continue;
    }
    auto g = std::make_unique<Global>();
    g->name = param.name;
    // Boolean memrefs hold a byte per element.
    g->elementType = type.getElementType().isInteger(1)
                         ? b.getI8Type()
                         : type.getElementType();
    g->ptr = e.globalBase(arg, g->elementType);
    e.metadata(arg, g->sizes, g->strides);
    globals[from] = g.get();
    globalStorage.push_back(std::move(g));
  }
  if (failed(lowerBlock(source.front(), nullptr)))
    return failure();
  gpu::ReturnOp::create(b, e.loc);
  if (scratchBytes > tileBytes)
    return source.emitError("the cross-warp merge needs ")
           << scratchBytes << " bytes of shared memory, more than the "
           << tileBytes << " of the tiles it reuses; use fewer warps";
  return tileBytes;
}

FailureOr<int64_t> attn::lowerTileFormToNVVM(func::FuncOp source,
                                             gpu::GPUFuncOp kernel,
                                             ArrayRef<KernelParam> params) {
  OpBuilder b(kernel.getContext());
  return TileLowering(b, source.getLoc()).run(source, kernel, params);
}
