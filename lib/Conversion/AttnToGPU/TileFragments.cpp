//===- TileFragments.cpp - register tiles on MMA fragments ----------------===//
//
// The register-tile half of the tile form's GPU lowering (TileLowering.h):
// where each element of a register tile lives (MmaLayout.h's m16n8k16
// layout per 16-row tile, rows split between the warps or held whole),
// lane-partial row sums, and the ops on register tiles: tile.matmul on
// ldmatrix and mma.sync, tile.map per element, tile.reduce across lanes or
// through shared memory, tile.store.
//
//===----------------------------------------------------------------------===//

#include "TileLowering.h"

#include "attn/Conversion/AttnToGPU/KernelSpec.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

#include <map>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::tile_lowering;

int64_t tile_lowering::rowElement(const FragLayout &l, int64_t i) {
  if (!l.cols)
    return i;
  return i / l.perTile() * 2 + Mma::rowHalf(i % Mma::kAccElements);
}

Linearity tile_lowering::linearity(Block &body, int64_t rank, ArrayRef<bool> partial) {
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
  awaitWgmma(tensor);
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
  return summedOf(tensor, *f);
}

Fragment TileLowering::summedOf(Value tensor, const Fragment &f) {
  if (!f.partial)
    return f;
  auto [it, inserted] =
      summedIn.try_emplace({tensor, b.getInsertionBlock()}, Fragment());
  if (inserted)
    it->second = summed(f);
  return it->second;
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

Value TileLowering::tileAddress(const SharedTile &t, Value row, Value col,
                                int64_t dRow, int64_t dCol) {
  int64_t eb = t.elementBytes(), fixed;
  if (!t.swizzle) {
    fixed = (dRow * t.pitch + dCol) * eb;
  } else {
    int64_t blockCols = t.swizzle / eb;
    fixed =
        dRow / 8 * 8 * t.swizzle + dCol / blockCols * t.blockRows * t.swizzle;
    if (dRow % 8)
      row = e.add(row, e.c32(dRow % 8));
    if (dCol % blockCols)
      col = e.add(col, e.c32(dCol % blockCols));
  }
  Value base = sharedAt(tileOffset(t, row, col));
  return fixed ? e.gep(base, b.getI8Type(), e.c32(fixed)) : base;
}

SmallVector<Value> TileLowering::ldmatrix4(Value address, bool transpose) {
  MLIRContext *ctx = b.getContext();
  Type i32 = e.i32();
  auto structTy = LLVM::LLVMStructType::getLiteral(ctx, {i32, i32, i32, i32});
  Value res = NVVM::LdMatrixOp::create(
      b, e.loc, structTy, address, 4,
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

SmallVector<Value> TileLowering::packA(const Fragment &f, int64_t mt,
                                       int64_t kk, Type elementType) {
  // The accumulator layout packs into the A layout register by register.
  SmallVector<Value> a;
  for (int64_t reg = 0; reg < Mma::kARegisters; ++reg) {
    auto [block, first] = Mma::aFromAccumulator(reg);
    int64_t at =
        mt * f.layout.perTile() + (2 * kk + block) * Mma::kAccElements + first;
    a.push_back(packPair(elementType, f.elems[at], f.elems[at + 1]));
  }
  return a;
}

SmallVector<Value> TileLowering::sharedA(const SharedTile &tile, Value rowBase,
                                         int64_t mt, int64_t kk) {
  auto [laneRow, laneCol] = frag->ldmatrixA(e);
  return ldmatrix4(tileAddress(tile, e.add(rowBase, laneRow), laneCol,
                               mt * Mma::kM, kk * Mma::kK),
                   /*transpose=*/false);
}

void TileLowering::fenceAsyncProxy() {
  NVVM::FenceProxyOp::create(
      b, e.loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

void TileLowering::waitForStages(int64_t pending) {
  if (uncommittedLoads) {
    NVVM::CpAsyncCommitGroupOp::create(b, e.loc);
    uncommittedLoads = false;
  }
  NVVM::CpAsyncWaitGroupOp::create(b, e.loc, pending);
  // wgmma reads shared memory through the async proxy: the copies, made
  // through the generic one, must be visible to it.
  if (wgmma)
    fenceAsyncProxy();
  ctaBarrier();
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
// Register tiles
//===----------------------------------------------------------------------===//

LogicalResult TileLowering::lowerStoreShared(TileStoreOp op, const Fragment &f,
                                             const SharedTile &t) {
  const FragLayout &l = f.layout;
  if (t.shape.size() != 2 || !l.cols || l.replicated() || op.getAccumulate() ||
      op.getTranspose())
    return op.emitOpError("stores into a memory tile, which the GPU mapping "
                          "does for register tiles with rows split between "
                          "the warps into a rank-2 tile, without accumulate "
                          "or transpose");
  int64_t bytes = t.elementBytes();
  // Rows past `rows` keep what they hold; a constant count that covers the
  // tile needs no test.
  std::optional<int64_t> allRows = getConstantIntValue(op.getRows());
  bool every = allRows && *allRows >= t.shape[0];
  Value rows = scalars.lookup(op.getRows());
  for (int64_t mt = 0; mt < l.mTiles; ++mt)
    for (int64_t half = 0; half < 2; ++half) {
      int64_t first = mt * l.perTile() + half * 2;
      Value row = rowOf(l, first);
      OpBuilder::InsertionGuard rowGuard(b);
      if (!every) {
        auto ifRow = scf::IfOp::create(b, e.loc, e.lt(row, rows), false);
        b.setInsertionPointToStart(ifRow.thenBlock());
      }
      FailureOr<SmallVector<Value>> idx = rowIndices(op.getIndices(), row);
      if (failed(idx))
        return failure();
      for (int64_t nb = 0; nb < l.cols / Mma::kN; ++nb) {
        int64_t i = mt * l.perTile() + nb * Mma::kAccElements + half * 2;
        // Two adjacent columns per store: one 16-byte chunk of a swizzled
        // row holds both.
        Value pair = bytes == 2
                         ? packPair(t.elementType, f.elems[i], f.elems[i + 1])
                         : Value(vector::FromElementsOp::create(
                               b, e.loc, VectorType::get({2}, e.f32()),
                               ValueRange{f.elems[i], f.elems[i + 1]}));
        LLVM::StoreOp::create(b, e.loc, pair,
                              sharedAt(tileOffset(t, (*idx)[0], colOf(l, i))),
                              2 * bytes);
      }
    }
  // The tile is read by every warp next (wgmma through the async proxy).
  if (wgmma)
    fenceAsyncProxy();
  ctaBarrier();
  return success();
}

LogicalResult TileLowering::lowerAccumulateBulk(TileStoreOp op,
                                                const Fragment &f,
                                                const Global &g) {
  const FragLayout &l = f.layout;
  // The stage holds the destination's rows: the tile's, or with
  // `transpose` its columns.
  bool transposed = op.getTranspose();
  int64_t tileRows = l.mTiles * Mma::kM * warps;
  int64_t rows = transposed ? l.cols : tileRows;
  int64_t cols = transposed ? tileRows : l.cols;
  // The columns the destination's rows hold; the rest are padding.
  int64_t length = op.getDest().getType().getShape().back();
  if (length % 4 || !g.chunkRows)
    return op.emitOpError("accumulates rows of ")
           << length << " f32, not whole 16-byte chunks";
  // The stage's rows are unpadded where they are the accumulator's whole
  // rows (GradDqProduct::stagePitch, which the schedule counts): where
  // those rows follow one another in memory, one bulk reduction then adds
  // the whole tile.
  Value parent = op.getDest();
  // The view's place in the parameter: a constant first column and no
  // other offsets (the tile form's chunks of head columns), which a tensor
  // map's coordinates need.
  int64_t firstCol = 0;
  bool constantOrigin = true;
  while (auto view = parent.getDefiningOp<memref::SubViewOp>()) {
    ArrayRef<int64_t> offsets = view.getStaticOffsets();
    constantOrigin &= llvm::all_of(offsets.drop_back(),
                                   [](int64_t o) { return o == 0; }) &&
                      !ShapedType::isDynamic(offsets.back());
    firstCol += offsets.back();
    parent = view.getSource();
  }
  int64_t rowLength = cast<MemRefType>(parent.getType()).getShape().back();
  GradDqProduct chunk{transposed, cols};
  int64_t pitch = chunk.stagePitch(length == cols ? rowLength : 0);
  bool wholeRows = pitch == cols * 4;
  // Where the accumulator has a tensor map (sm_90a with TMA), the stage is
  // column blocks of kDqAccumBoxCols f32 in the 128-byte swizzle and thread
  // 0 adds each block with one tensor-map reduction. Its stores then fall
  // in distinct banks (transposed: the 4 rows two apart that a warp's
  // store covers XOR their chunks apart); unpadded, 4 of them met in each
  // bank. The stage must hold whole blocks (no more bytes than the
  // schedule counted) whose columns past the destination's fall past the
  // accumulator's last column, which the tensor map clips.
  bool tensor = g.tensorMap && constantOrigin && cols % kDqAccumBoxCols == 0 &&
                rows % 8 == 0 &&
                (cols == length || firstCol + length == rowLength);
  if (!reduceStageOffset) {
    reduceStageOffset = llvm::alignTo(tileBytes, tensor ? 1024 : 128);
    reduceStageBytes = rows * pitch;
    tileBytes = *reduceStageOffset + reduceStageBytes;
  }
  if (rows * pitch > reduceStageBytes || (tensor && *reduceStageOffset % 1024))
    return op.emitOpError("accumulates a larger tile than the kernel's "
                          "first accumulating store staged, or a swizzled "
                          "one into an unaligned stage");
  Value stage = e.c32(*reduceStageOffset);
  constexpr int64_t kBlockBytes = kDqAccumBoxCols * 4;
  // The stage byte offset of (stage row, stage column).
  auto stageAt = [&](Value row, Value col) -> Value {
    if (!tensor)
      return e.add(stage,
                   e.add(e.mul(row, e.c32(pitch)), e.mul(col, e.c32(4))));
    Value block = e.div(col, e.c32(kDqAccumBoxCols));
    Value inBlock = e.rem(col, e.c32(kDqAccumBoxCols));
    Value chunkAt = e.bxor(e.div(inBlock, e.c32(4)), e.rem(row, e.c32(8)));
    Value at = e.add(e.mul(block, e.c32(rows * kBlockBytes)),
                     e.add(e.mul(row, e.c32(kBlockBytes)),
                           e.add(e.mul(chunkAt, e.c32(16)),
                                 e.mul(e.rem(inBlock, e.c32(4)), e.c32(4)))));
    return e.add(stage, at);
  };
  // The previous reduction (of this store in an earlier iteration, or of
  // another) has read the stage: each thread that issued one waits for that
  // here, as late as it can (a thread that issued none passes), and the
  // barrier orders it before the stores.
  NVVM::CpAsyncBulkWaitGroupOp::create(b, e.loc, 0, b.getUnitAttr());
  bulkReduces = true;
  ctaBarrier();
  // The stage addresses of one row of the fragment (mt, half) are a few
  // computed ones plus constants: the n-blocks step the stage rows by 8
  // (transposed: the pattern's period) or the columns by 8, which a
  // swizzled stage repeats every block of kDqAccumBoxCols columns.
  int64_t nbPerBlock = kDqAccumBoxCols / Mma::kN;
  for (int64_t mt = 0; mt < l.mTiles; ++mt)
    for (int64_t half = 0; half < 2; ++half) {
      int64_t first = mt * l.perTile() + half * 2;
      Value row = rowOf(l, first);
      SmallVector<Value> bases;
      for (int64_t nb = 0; nb < l.cols / Mma::kN; ++nb) {
        int64_t i = mt * l.perTile() + nb * Mma::kAccElements + half * 2;
        if (transposed) {
          // Tile columns i and i + 1 are two stage rows.
          int64_t step = Mma::kN * (tensor ? kBlockBytes : pitch);
          for (int64_t k = 0; k < 2; ++k) {
            if (nb == 0)
              bases.push_back(stageAt(e.add(colOf(l, i), e.c32(k)), row));
            LLVM::StoreOp::create(
                b, e.loc, f.elems[i + k],
                sharedAt(e.add(bases[k], e.c32(nb * step))), 4);
          }
          continue;
        }
        Value at;
        if (!tensor) {
          if (nb == 0)
            bases.push_back(stageAt(row, colOf(l, i)));
          at = e.add(bases[0], e.c32(nb * Mma::kN * 4));
        } else {
          if (nb < nbPerBlock)
            bases.push_back(stageAt(row, colOf(l, i)));
          at = e.add(bases[nb % nbPerBlock],
                     e.c32(nb / nbPerBlock * rows * kBlockBytes));
        }
        Value pair = vector::FromElementsOp::create(
            b, e.loc, VectorType::get({2}, e.f32()),
            ValueRange{f.elems[i], f.elems[i + 1]});
        LLVM::StoreOp::create(b, e.loc, pair, sharedAt(at), 8);
      }
    }
  // The bulk copies read the stage through the async proxy.
  fenceAsyncProxy();
  ctaBarrier();
  Value validRows = e.min(e.c32(rows), scalars.lookup(op.getRows()));
  // Row `row`'s place in global memory, and its stage row's address.
  auto rowAddresses = [&](Value row) -> FailureOr<std::pair<Value, Value>> {
    FailureOr<SmallVector<Value>> idx = rowIndices(op.getIndices(), row);
    if (failed(idx))
      return failure();
    Value dst = LLVM::AddrSpaceCastOp::create(
        b, e.loc, LLVM::LLVMPointerType::get(b.getContext(), 1),
        e.gep(g.ptr, g.elementType, globalOffset(g, *idx, e.c32(0))));
    Value src = LLVM::PtrToIntOp::create(
        b, e.loc, e.i32(), sharedAt(e.add(stage, e.mul(row, e.c32(pitch)))));
    return std::make_pair(dst, src);
  };
  // Upstream NVVM has the tensor form of cp.reduce.async.bulk only (it
  // needs a tensor map), so this is inline PTX.
  auto reduce = [&](Value dst, Value src, Value bytes) {
    LLVM::InlineAsmOp::create(
        b, e.loc, TypeRange(), ValueRange{dst, src, bytes},
        "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [$0], "
        "[$1], $2;",
        "l,r,r", /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::tailcallkind::TailCallKind::None,
        LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
        /*operand_attrs=*/ArrayAttr());
    NVVM::CpAsyncBulkCommitGroupOp::create(b, e.loc);
  };
  // One bulk reduction of `length` f32 per row under `rows`, from the
  // stage's row into the row in global memory. A bulk copy takes uniform
  // operands, so a warp issues its lanes' one at a time: the rows are dealt
  // out across the warps (row lane x warps + warp), so that every warp
  // issues a few.
  auto perRow = [&]() -> LogicalResult {
    int64_t threads = 32 * warps;
    for (int64_t first = 0; first < rows; first += threads) {
      OpBuilder::InsertionGuard guard(b);
      Value row = e.add(e.c32(first), e.add(e.mul(lane, e.c32(warps)), warp));
      auto ifRow = scf::IfOp::create(b, e.loc, e.lt(row, validRows), false);
      b.setInsertionPointToStart(ifRow.thenBlock());
      FailureOr<std::pair<Value, Value>> at = rowAddresses(row);
      if (failed(at))
        return failure();
      reduce(at->first, at->second, e.c32(length * 4));
    }
    return success();
  };
  if (tensor) {
    // Rows past `rows` are past the accumulator's end (a query tile's rows
    // that exist), which the tensor map clips, as the TMA loads read zeros
    // there.
    FailureOr<SmallVector<Value>> origin =
        rowIndices(op.getIndices(), e.c32(0));
    if (failed(origin))
      return failure();
    OpBuilder::InsertionGuard guard(b);
    auto ifFirst = scf::IfOp::create(
        b, e.loc, e.band(e.eq(tid, e.c32(0)), e.lt(e.c32(0), validRows)),
        false);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    for (int64_t blk = 0; blk < cols / kDqAccumBoxCols; ++blk) {
      SmallVector<Value> coords = {
          e.c32(firstCol + blk * kDqAccumBoxCols)};
      for (Value index : llvm::reverse(*origin))
        coords.push_back(index);
      NVVM::CpAsyncBulkTensorReduceOp::create(
          b, e.loc, g.tensorMap,
          sharedAt(e.add(stage, e.c32(blk * rows * kBlockBytes))),
          NVVM::TMAReduxKind::ADD, NVVM::TMAStoreMode::TILE, coords,
          /*l2CacheHint=*/Value());
    }
    NVVM::CpAsyncBulkCommitGroupOp::create(b, e.loc);
    return success();
  }
  if (!wholeRows) {
    if (awaitsTurns)
      return op.emitOpError("accumulates rows whose order turns fix, but "
                            "its bulk reductions are dealt out across the "
                            "warps (only thread 0 takes the turns)");
    return perRow();
  }
  // Whole rows of the accumulator, which the ABI has contiguous
  // (docs/KernelABI.md): one reduction of the valid rows, by thread 0.
  OpBuilder::InsertionGuard guard(b);
  auto ifFirst = scf::IfOp::create(
      b, e.loc, e.band(e.eq(tid, e.c32(0)), e.lt(e.c32(0), validRows)), false);
  b.setInsertionPointToStart(ifFirst.thenBlock());
  FailureOr<std::pair<Value, Value>> first = rowAddresses(e.c32(0));
  if (failed(first))
    return failure();
  reduce(first->first, first->second, e.mul(validRows, e.c32(pitch)));
  return success();
}

LogicalResult TileLowering::lowerStore(TileStoreOp op) {
  FailureOr<Fragment> f = fragmentOf(op, op.getTile());
  if (failed(f))
    return failure();
  const FragLayout &l = f->layout;
  if (l.sliced)
    return op.emitOpError("stores a tile split between key slices; merge "
                          "the slices first");
  if (auto it = shared.find(op.getDest()); it != shared.end())
    return lowerStoreShared(op, *f, it->second);
  Global *g = globals.lookup(op.getDest());
  if (!g)
    return op.emitOpError("stores into a buffer that is not a kernel "
                          "parameter");
  if (op.getAccumulate()) {
    if (!l.cols || l.replicated() || !hopper || specialized)
      return op.emitOpError("accumulates into memory, which the GPU mapping "
                            "does on sm_90a, for register tiles whose rows "
                            "the warps split, in kernels without a producer "
                            "warpgroup (bulk reductions)");
    return lowerAccumulateBulk(op, *f, *g);
  }
  if (op.getTranspose())
    return op.emitOpError("writes a tile's columns as rows, which the GPU "
                          "mapping does only for accumulating stores");
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
      // Columns past the destination's rows are padding: not stored.
      int64_t length = op.getDest().getType().getShape().back();
      // Rows of whole 16-byte chunks are 16-byte aligned (the runtime's
      // checks): two columns per store. Others, element by element.
      bool pairs = g->chunkRows && length % 2 == 0;
      for (int64_t nb = 0; nb * Mma::kN < length; ++nb) {
        int64_t i = mt * l.perTile() + nb * Mma::kAccElements + half * 2;
        if (!pairs) {
          for (int64_t k = 0; k < 2; ++k) {
            Value col = e.add(colOf(l, i), e.c32(k));
            OpBuilder::InsertionGuard colGuard(b);
            if ((nb + 1) * Mma::kN > length) {
              auto ifCol =
                  scf::IfOp::create(b, e.loc, e.lt(col, e.c32(length)), false);
              b.setInsertionPointToStart(ifCol.thenBlock());
            }
            Value v = f->elems[i + k];
            if (v.getType() != elt)
              v = arith::TruncFOp::create(b, e.loc, elt, v);
            LLVM::StoreOp::create(
                b, e.loc, v,
                e.gep(g->ptr, g->elementType, globalOffset(*g, *idx, col)),
                bytes);
          }
          continue;
        }
        Value ptr =
            e.gep(g->ptr, g->elementType, globalOffset(*g, *idx, colOf(l, i)));
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

LogicalResult TileLowering::matmulLhs(TileMatmulOp op, const FragLayout &acc,
                                      int64_t k,
                                      std::optional<SharedTile> &tile,
                                      std::optional<Fragment> &fragment) {
  if (auto it = shared.find(op.getLhs()); it != shared.end()) {
    tile = it->second;
    return success();
  }
  FailureOr<Fragment> f = fragmentOf(op, op.getLhs());
  if (failed(f))
    return failure();
  fragment = *f;
  if (!fragment->layout.sameRows(acc) || fragment->layout.cols != k)
    return op.emitOpError("has a register lhs in another layout than its "
                          "accumulator");
  return success();
}

FailureOr<TileLowering::MmaRhs> TileLowering::mmaRhs(TileMatmulOp op,
                                                     const FragLayout &l,
                                                     const SharedTile &r) {
  ArrayRef<int64_t> shape = r.shape;
  MmaRhs rhs{e.c32(0), static_cast<bool>(op.getTransposeRhs()), 0, 0};
  if (shape.size() == 3) {
    // Key slices: warp w multiplies slice w.
    if (!l.sliced || shape[0] != keySlices)
      return op.emitOpError("multiplies key slices into a tile that is not "
                            "split by slice");
    rhs.firstRow = e.mul(warp, e.c32(shape[1]));
    shape = shape.drop_front();
  }
  rhs.n = rhs.transpose ? shape[0] : shape[1];
  rhs.k = rhs.transpose ? shape[1] : shape[0];
  return rhs;
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
  if (wgmma)
    return lowerMatmulWgmma(op, *acc, r);
  if (op.getTransposeLhs())
    return op.emitOpError("has a transposed lhs, which the GPU mapping reads "
                          "through wgmma's descriptors only (sm_90a)");
  if (r.elementType.isF32())
    return lowerMatmulTf32(op, *acc, r);
  FailureOr<MmaRhs> rhs = mmaRhs(op, l, r);
  if (failed(rhs))
    return failure();
  auto [rhsRow, transpose, n, k] = *rhs;
  Type elt = r.elementType;
  if (!(elt.isBF16() || elt.isF16()) || n != l.cols || n % 16 || k % 16)
    return op.emitOpError("needs f16, bf16 or f32 operands and N, K in "
                          "multiples of 16 for mma.sync.m16n8k16");
  int64_t kSteps = k / Mma::kK;

  // The A operand of m-tile mt, k-step kk, made once, on first use.
  std::optional<SharedTile> lhsTile;
  std::optional<Fragment> lhsFrag;
  if (failed(matmulLhs(op, l, k, lhsTile, lhsFrag)))
    return failure();
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
      a = packA(*lhsFrag, mt, kk, elt);
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
  // Each ldmatrix reads the lane's base address plus a constant, the
  // instruction's immediate (tileAddress): as whole offsets, LLVM kept
  // every distinct one in a register, and past D = 256 ptxas spilled.
  if (transpose) {
    // rhs rows are the N dimension (K for S = Q K^T).
    auto [laneRow, laneCol] = frag->ldmatrixB(e);
    Value row0 = e.add(laneRow, rhsRow);
    for (int64_t kk = 0; kk < kSteps; ++kk)
      for (int64_t nb = 0; nb < n / Mma::kN; nb += 2)
        multiply(
            nb, kk,
            ldmatrix4(tileAddress(r, row0, laneCol, nb * Mma::kN, kk * Mma::kK),
                      /*transpose=*/false));
  } else {
    // rhs rows are the K dimension (V for O = P V), read transposed.
    auto [laneRow, laneCol] = frag->ldmatrixBTransposed(e);
    Value row0 = e.add(laneRow, rhsRow);
    for (int64_t nb = 0; nb < n / Mma::kN; nb += 2)
      for (int64_t kk = 0; kk < kSteps; ++kk)
        multiply(
            nb, kk,
            ldmatrix4(tileAddress(r, row0, laneCol, kk * Mma::kK, nb * Mma::kN),
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
      for (auto [f, input] : llvm::zip(inputs, op.getInputs()))
        f = summedOf(input, f);
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
    ctaBarrier();
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
  // Row statistics made while a wgmma of this block is in flight anchor
  // the wait for it (anchorWgmmaWait).
  if (tma && llvm::any_of(wgmmaPending, [&](auto &p) {
        return p.second.block == b.getInsertionBlock();
      }))
    waitAnchor = {out, b.getInsertionBlock(), wgmmaCommitted};
  return success();
}

