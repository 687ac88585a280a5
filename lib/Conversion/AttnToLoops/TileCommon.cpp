//===- TileCommon.cpp - building blocks of the tiled attn loops -----------===//

#include "TileCommon.h"

#include "attn/Dialect/Attn/IR/ModRegions.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::tile;


//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

Value IndexMath::c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
Value IndexMath::add(Value x, Value y) {
  return b.createOrFold<arith::AddIOp>(loc, x, y);
}
Value IndexMath::sub(Value x, Value y) {
  return b.createOrFold<arith::SubIOp>(loc, x, y);
}
Value IndexMath::mul(Value x, Value y) {
  return b.createOrFold<arith::MulIOp>(loc, x, y);
}
Value IndexMath::div(Value x, Value y) {
  return b.createOrFold<arith::DivUIOp>(loc, x, y);
}
Value IndexMath::rem(Value x, Value y) {
  return b.createOrFold<arith::RemUIOp>(loc, x, y);
}
Value IndexMath::ceilDiv(Value x, Value y) {
  return div(sub(add(x, y), c(1)), y);
}
Value IndexMath::min(Value x, Value y) {
  return b.createOrFold<arith::MinSIOp>(loc, x, y);
}
Value IndexMath::max(Value x, Value y) {
  return b.createOrFold<arith::MaxSIOp>(loc, x, y);
}
Value IndexMath::cmp(arith::CmpIPredicate pred, Value x, Value y) {
  return b.createOrFold<arith::CmpIOp>(loc, pred, x, y);
}
Value IndexMath::andI(Value x, Value y) {
  return b.createOrFold<arith::AndIOp>(loc, x, y);
}
Value IndexMath::select(Value cond, Value x, Value y) {
  return b.createOrFold<arith::SelectOp>(loc, cond, x, y);
}

Value tile::constF32(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

Value tile::negInf(OpBuilder &b, Location loc) {
  return constF32(b, loc, -std::numeric_limits<double>::infinity());
}

Value tile::toF32(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isF32())
    return v;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
}

Value tile::fromF32(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  return arith::TruncFOp::create(b, loc, type, v);
}

Value tile::safeMax(OpBuilder &b, Location loc, Value m) {
  Value isNegInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m,
                                         negInf(b, loc));
  return arith::SelectOp::create(b, loc, isNegInf, constF32(b, loc, 0.0), m);
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

Value tile::toReadOnlyBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic,
                                       strides);
  auto memrefType =
      MemRefType::get(type.getShape(), type.getElementType(), layout);
  return bufferization::ToBufferOp::create(b, loc, memrefType, tensor,
                                           /*read_only=*/b.getUnitAttr());
}

Value tile::allocResult(OpBuilder &b, Location loc, RankedTensorType type,
                        ArrayRef<Value> sizes) {
  SmallVector<Value> dynamic;
  for (auto [i, size] : llvm::enumerate(sizes))
    if (type.isDynamicDim(i))
      dynamic.push_back(size);
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  return memref::AllocOp::create(b, loc, memrefType, dynamic);
}

Value tile::toTensorResult(OpBuilder &b, Location loc, RankedTensorType type,
                           Value buffer) {
  // The buffer is fresh and nothing else aliases it: `restrict` lets
  // one-shot-bufferize use it in place, `writable` lets later ops write it.
  return bufferization::ToTensorOp::create(b, loc, type, buffer,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

Value tile::allocTile(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                      Type elementType, Attribute memorySpace) {
  auto type = MemRefType::get(shape, elementType, MemRefLayoutAttrInterface(),
                              memorySpace);
  return memref::AllocOp::create(b, loc, type);
}

/// A unit-stride subview of `source` whose result has `resultShape`: the
/// unit dims of `sizes` that `resultShape` lacks are dropped.
static Value rankReducedSubview(OpBuilder &b, Location loc, Value source,
                                ArrayRef<OpFoldResult> offsets,
                                ArrayRef<OpFoldResult> sizes,
                                ArrayRef<int64_t> resultShape) {
  auto sourceType = cast<MemRefType>(source.getType());
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  MemRefType resultType = memref::SubViewOp::inferRankReducedResultType(
      resultShape, sourceType, offsets, sizes, strides);
  return memref::SubViewOp::create(b, loc, resultType, source, offsets, sizes,
                                   strides);
}

/// A static size as an attribute, a dynamic one as the value.
static OpFoldResult foldSize(Value v) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return OpBuilder(v.getContext()).getIndexAttr(*c);
  return v;
}

Value tile::tileRow(OpBuilder &b, Location loc, Value tile, Value row) {
  auto type = cast<MemRefType>(tile.getType());
  return rankReducedSubview(
      b, loc, tile, {row, b.getIndexAttr(0)},
      {b.getIndexAttr(1), b.getIndexAttr(type.getDimSize(1))},
      {type.getDimSize(1)});
}

Value tile::columnView(OpBuilder &b, Location loc, Value buffer, Value first,
                       int64_t width) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
      strides(rank, b.getIndexAttr(1));
  offsets.back() = foldSize(first);
  for (int64_t d = 0; d + 1 < rank; ++d)
    sizes.push_back(
        type.isDynamicDim(d)
            ? OpFoldResult(memref::DimOp::create(b, loc, buffer, d).getResult())
            : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
  sizes.push_back(b.getIndexAttr(width));
  return memref::SubViewOp::create(b, loc, buffer, offsets, sizes, strides);
}

Problem tile::valueBlockProblem(OpBuilder &b, Location loc, const Problem &p,
                                const ValueBlocking &blocking, Value block,
                                Value &first) {
  IndexMath ix{b, loc};
  // Both candidates are multiples of 8 columns, and the product says so
  // to the GPU lowering, which then copies the view's rows by 16 bytes
  // where its buffer's rows are whole chunks (TileToNVVM.cpp).
  int64_t lastFirst = p.dims.valueDim - blocking.width;
  assert(blocking.step % 8 == 0 && lastFirst % 8 == 0 &&
         "value blocks start on multiples of 8 columns");
  first = ix.mul(
      ix.min(ix.mul(block, ix.c(blocking.step / 8)), ix.c(lastFirst / 8)),
      ix.c(8));
  Problem q = p;
  q.value = columnView(b, loc, p.value, first, blocking.width);
  return q;
}

void tile::fill(OpBuilder &b, Location loc, Value buffer, double v) {
  Type type = cast<MemRefType>(buffer.getType()).getElementType();
  Value cst = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, v));
  linalg::FillOp::create(b, loc, ValueRange{cst}, ValueRange{buffer});
}

void tile::beginIfLess(OpBuilder &b, Location loc, Value x, Value bound) {
  IndexMath ix{b, loc};
  auto op = scf::IfOp::create(
      b, loc, ix.cmp(arith::CmpIPredicate::slt, x, bound), false);
  b.setInsertionPointToStart(op.thenBlock());
}

Value tile::beginFor(OpBuilder &b, Location loc, Value lb, Value ub,
                     Value step) {
  auto loop = scf::ForOp::create(b, loc, lb, ub, step);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  return loop.getInductionVar();
}

SmallVector<Value> tile::beginForall(OpBuilder &b, Location loc,
                                     ArrayRef<Value> ubs,
                                     ArrayRef<gpu::MappingId> blocks) {
  SmallVector<OpFoldResult> bounds;
  for (Value ub : ubs)
    bounds.push_back(foldSize(ub));
  std::optional<ArrayAttr> mapping;
  if (!blocks.empty()) {
    SmallVector<Attribute> dims;
    for (gpu::MappingId id : blocks)
      dims.push_back(gpu::GPUBlockMappingAttr::get(b.getContext(), id));
    mapping = b.getArrayAttr(dims);
  }
  auto forall = scf::ForallOp::create(b, loc, bounds, ValueRange{}, mapping);
  b.setInsertionPoint(forall.getBody()->getTerminator());
  return llvm::to_vector(forall.getInductionVars());
}

RowTile tile::beginQueryTileForall(OpBuilder &b, Location loc, const Problem &p,
                                   int64_t blockQ, Problem *seq,
                                   int64_t valueBlocks, Value *valueBlock) {
  IndexMath ix{b, loc};
  Value tiles = ix.ceilDiv(p.querySeq, ix.c(blockQ));
  SmallVector<Value> ivs = beginForall(
      b, loc, {p.batch, p.queryHeads, ix.mul(tiles, ix.c(valueBlocks))},
      {gpu::MappingId::DimZ, gpu::MappingId::DimY, gpu::MappingId::DimX});
  Value querySeq = p.querySeq;
  if (seq) {
    *seq = p.forBatch(b, loc, ivs[0]);
    querySeq = seq->querySeq;
  }
  // The value blocks of a query tile are consecutive: they share its Q
  // and K tiles in the L2 cache.
  Value tile = ix.div(ivs[2], ix.c(valueBlocks));
  if (valueBlock)
    *valueBlock = ix.rem(ivs[2], ix.c(valueBlocks));
  if (p.causal != CausalKind::None && p.queryOffsets) {
    // The sequence's own tiles last first; the grid's others are empty.
    Value own = ix.ceilDiv(querySeq, ix.c(blockQ));
    tile = ix.select(ix.cmp(arith::CmpIPredicate::slt, tile, own),
                     ix.sub(ix.sub(own, ix.c(1)), tile), tile);
  } else if (p.causal != CausalKind::None) {
    tile = ix.sub(ix.sub(tiles, ix.c(1)), tile);
  }
  Value q0 = ix.mul(tile, ix.c(blockQ));
  Value rows = ix.min(ix.c(blockQ), ix.sub(querySeq, q0));
  if (p.queryOffsets)
    rows = ix.max(rows, ix.c(0));
  return RowTile{ivs[0], ivs[1], q0, rows, /*packed=*/false};
}

//===----------------------------------------------------------------------===//
// The attention problem
//===----------------------------------------------------------------------===//

template <typename OpTy>
Problem tile::getProblem(OpBuilder &b, Location loc, OpTy op,
                         const AttnTileSizes &sizes, ProblemForm form) {
  Problem p;
  static_cast<AttentionConfig &>(p) = getAttentionConfig(op);
  p.headCols = std::max(sizes.headCols, p.dims.headDim);
  // Value blocks' tiles hold one block's columns (AttnTileSizes).
  p.valueCols = sizes.valueBlocks > 1
                    ? sizes.valueCols
                    : std::max(sizes.valueCols, p.dims.valueDim);
  p.elementType = op.getQuery().getType().getElementType();
  p.query = toReadOnlyBuffer(b, loc, op.getQuery());
  p.key = toReadOnlyBuffer(b, loc, op.getKey());
  p.value = toReadOnlyBuffer(b, loc, op.getValue());
  if (Value mask = op.getMask()) {
    p.mask = toReadOnlyBuffer(b, loc, mask);
    p.boolMask = getElementTypeOrSelf(mask).isInteger(1);
  }
  if (!op.getScoreMod().empty())
    p.scoreMod = &op.getScoreMod();
  if (!op.getMaskMod().empty())
    p.maskMod = &op.getMaskMod();
  for (Value operand : op.getModOperands())
    p.modOperands.push_back(toReadOnlyBuffer(b, loc, operand));
  if (BlockMask blocks = getBlockMask(op)) {
    p.maskBlockQ = blocks.blockQ;
    p.maskBlockK = blocks.blockK;
    auto buffers = [&](const BlockLists &lists) {
      BlockLists out;
      for (auto [from, to] :
           {std::make_pair(lists.counts, &out.counts),
            std::make_pair(lists.indices, &out.indices),
            std::make_pair(lists.fullCounts, &out.fullCounts),
            std::make_pair(lists.fullIndices, &out.fullIndices)})
        if (from)
          *to = toReadOnlyBuffer(b, loc, from);
      return out;
    };
    p.kvBlocks = buffers(blocks.kv);
    p.qBlocks = buffers(blocks.q);
  }
  IndexMath ix{b, loc};
  bool kernel = form == ProblemForm::Kernel;
  auto dimOf = [&](Value buffer, unsigned dim) -> Value {
    auto type = cast<MemRefType>(buffer.getType());
    if (!type.isDynamicDim(dim) && !kernel)
      return ix.c(type.getDimSize(dim));
    return memref::DimOp::create(b, loc, buffer, dim);
  };
  unsigned seqDim = getSeqDim(p.layout), headsDim = getHeadsDim(p.layout);
  p.batch = dimOf(p.query, 0);
  p.querySeq = dimOf(p.query, seqDim);
  p.keySeq = dimOf(p.key, seqDim);
  if constexpr (std::is_same_v<OpTy, AttentionOp>) {
    if (Value offsets = op.getQueryOffsets()) {
      p.queryOffsets = toReadOnlyBuffer(b, loc, offsets);
      p.batch = ix.sub(dimOf(p.queryOffsets, 0), ix.c(1));
    }
    if (Value offsets = op.getKeyOffsets())
      p.keyOffsets = toReadOnlyBuffer(b, loc, offsets);
  }
  if constexpr (!std::is_same_v<OpTy, AttentionGradOp>) {
    if (Value lens = op.getKvLens())
      p.kvLens = toReadOnlyBuffer(b, loc, lens);
    if (Value table = op.getBlockTable()) {
      p.blockTable = toReadOnlyBuffer(b, loc, table);
      p.pageSize = p.keySeq;
      p.keySeq = ix.mul(dimOf(p.blockTable, 1), p.pageSize);
    }
  }
  p.queryHeads = dimOf(p.query, headsDim);
  p.kvHeads = dimOf(p.key, headsDim);
  p.group = ix.div(p.queryHeads, p.kvHeads);
  p.diagOffset = p.causal == CausalKind::BottomRight
                     ? ix.sub(p.keySeq, p.querySeq)
                     : ix.c(0);
  if (p.causal != CausalKind::None) {
    int64_t window = p.window ? *p.window : -1;
    Value windowSize =
        kernel ? Value(TileParamOp::create(b, loc, b.getIndexType(),
                                           b.getStringAttr("window"),
                                           b.getIndexAttr(window)))
               : ix.c(window);
    p.hasWindow = ix.cmp(arith::CmpIPredicate::sge, windowSize, ix.c(0));
    // Every diagonal lies below max(Sq, Sk), so a window of Sq + Sk keys
    // hides nothing that a wider one would not: clamped there, the window
    // arithmetic (diag - window, j - offset + window) cannot overflow, even
    // for windows near INT64_MAX.
    p.windowSize = ix.min(windowSize, ix.add(p.querySeq, p.keySeq));
  }
  FloatAttr scaleLog2 = b.getF32FloatAttr(p.scale * kLog2e);
  p.scaleLog2 = kernel ? Value(TileParamOp::create(
                             b, loc, b.getF32Type(),
                             b.getStringAttr("scale_log2"), scaleLog2))
                       : Value(arith::ConstantOp::create(b, loc, scaleLog2));
  if (p.scoreMod) {
    Value log2e = constF32(b, loc, kLog2e);
    p.modScale = arith::DivFOp::create(b, loc, p.scaleLog2, log2e);
    p.modInvScale = arith::DivFOp::create(b, loc, log2e, p.scaleLog2);
  }
  return p;
}

/// `v` (i32) as an index.
static Value indexOf(OpBuilder &b, Location loc, Value v) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

std::pair<Value, Value> tile::packedRows(OpBuilder &b, Location loc,
                                         Value offsets, Value batch,
                                         Value rows) {
  IndexMath ix{b, loc};
  auto clamped = [&](Value i, Value lo) {
    Value v = indexOf(b, loc, memref::LoadOp::create(b, loc, offsets, i));
    return ix.min(ix.max(v, lo), rows);
  };
  Value begin = clamped(batch, ix.c(0));
  return {begin, clamped(ix.add(batch, ix.c(1)), begin)};
}

Problem Problem::forBatch(OpBuilder &b, Location loc, Value batch) const {
  if (!kvLens && !queryOffsets)
    return *this;
  IndexMath ix{b, loc};
  Problem p = *this;
  if (queryOffsets) {
    auto [begin, end] = packedRows(b, loc, queryOffsets, batch, querySeq);
    p.queryBase = begin;
    p.querySeq = ix.sub(end, begin);
  }
  if (keyOffsets) {
    auto [begin, end] = packedRows(b, loc, keyOffsets, batch, keySeq);
    p.keyBase = begin;
    p.keySeq = ix.sub(end, begin);
  } else if (kvLens) {
    Value len = indexOf(b, loc, memref::LoadOp::create(b, loc, kvLens, batch));
    // Clamped, so that no length the device holds reads past the cache.
    p.keySeq = ix.min(ix.max(len, ix.c(0)), keySeq);
  }
  if (causal == CausalKind::BottomRight)
    p.diagOffset = ix.sub(p.keySeq, p.querySeq);
  return p;
}

SmallVector<Value> Problem::queryIndices(OpBuilder &b, Location loc,
                                         Value batch, Value head,
                                         Value i) const {
  if (!queryOffsets)
    return storedIndices(layout, batch, head, i);
  IndexMath ix{b, loc};
  return storedIndices(layout, ix.c(0), head, ix.add(queryBase, i));
}

SmallVector<Value> Problem::lseIndices(OpBuilder &b, Location loc, Value batch,
                                       Value head, Value i) const {
  if (!queryOffsets)
    return {batch, head, i};
  IndexMath ix{b, loc};
  return {ix.c(0), head, ix.add(queryBase, i)};
}

SmallVector<Value> Problem::keyIndices(OpBuilder &b, Location loc, Value batch,
                                       Value kvHead, Value j) const {
  if (keyOffsets) {
    IndexMath ix{b, loc};
    return storedIndices(layout, ix.c(0), kvHead, ix.add(keyBase, j));
  }
  if (!blockTable)
    return storedIndices(layout, batch, kvHead, j);
  IndexMath ix{b, loc};
  Value page =
      indexOf(b, loc,
              memref::LoadOp::create(b, loc, blockTable,
                                     ValueRange{batch, ix.div(j, pageSize)}));
  return storedIndices(layout, page, kvHead, ix.rem(j, pageSize));
}

template Problem tile::getProblem(OpBuilder &, Location, AttentionOp,
                                  const AttnTileSizes &, ProblemForm);
template Problem tile::getProblem(OpBuilder &, Location, AttentionPartialOp,
                                  const AttnTileSizes &, ProblemForm);
template Problem tile::getProblem(OpBuilder &, Location, AttentionGradOp,
                                  const AttnTileSizes &, ProblemForm);

std::pair<Value, Value> RowTile::coords(IndexMath &ix, const Problem &p,
                                        Value r) const {
  Value last = ix.sub(rows, ix.c(1));
  Value row = ix.add(rowBegin, ix.min(r, last));
  if (!packed)
    return {head, row};
  return {ix.add(head, ix.div(row, p.querySeq)), ix.rem(row, p.querySeq)};
}

std::pair<Value, Value> RowTile::queryRange(IndexMath &ix,
                                            const Problem &p) const {
  Value last = ix.add(rowBegin, ix.sub(rows, ix.c(1)));
  if (!packed)
    return {rowBegin, last};
  // A packed tile that spans two heads may hold any query position.
  Value sameHead = ix.cmp(arith::CmpIPredicate::eq,
                          ix.div(rowBegin, p.querySeq),
                          ix.div(last, p.querySeq));
  return {ix.select(sameHead, ix.rem(rowBegin, p.querySeq), ix.c(0)),
          ix.select(sameHead, ix.rem(last, p.querySeq),
                    ix.sub(p.querySeq, ix.c(1)))};
}

std::pair<Value, Value> tile::visibleKeys(IndexMath &ix, const Problem &p,
                                          Value iLo, Value iHi) {
  Value begin = ix.c(0), end = p.keySeq;
  if (p.causal == CausalKind::None)
    return {begin, end};
  // Query i sees keys j <= i + offset ...
  end = ix.max(ix.c(0), ix.min(end, ix.add(ix.add(iHi, p.diagOffset),
                                           ix.c(1))));
  // ... and, with a window, j >= i + offset - window.
  begin = ix.select(p.hasWindow,
                    ix.max(begin, ix.sub(ix.add(iLo, p.diagOffset),
                                         p.windowSize)),
                    begin);
  return {begin, end};
}

std::pair<Value, Value> tile::visibleQueries(IndexMath &ix, const Problem &p,
                                             Value jLo, Value jHi) {
  Value begin = ix.c(0), end = p.querySeq;
  if (p.causal == CausalKind::None)
    return {begin, end};
  // Key j is seen by queries i >= j - offset ...
  begin = ix.min(end, ix.max(begin, ix.sub(jLo, p.diagOffset)));
  // ... and, with a window, i <= j - offset + window.
  Value last = ix.add(ix.sub(jHi, p.diagOffset), p.windowSize);
  end = ix.select(p.hasWindow,
                  ix.max(begin, ix.min(end, ix.add(last, ix.c(1)))), end);
  return {begin, end};
}

/// Loads the mask element broadcast to (batch, head, i, j).
static Value loadMask(OpBuilder &b, Location loc, const Problem &p,
                      ArrayRef<Value> bhij) {
  auto type = cast<MemRefType>(p.mask.getType());
  IndexMath ix{b, loc};
  SmallVector<Value> indices;
  for (int64_t d = 0, rank = type.getRank(); d < rank; ++d) {
    int64_t logical = 4 - rank + d;
    indices.push_back(type.getDimSize(d) == 1 ? ix.c(0) : bhij[logical]);
  }
  return memref::LoadOp::create(b, loc, p.mask, indices);
}

/// The i1 constant true.
static Value trueValue(IndexMath &ix) {
  return arith::ConstantIntOp::create(ix.b, ix.loc, 1, 1);
}

Value tile::keyVisible(IndexMath &ix, const Problem &p, Value i, Value j,
                       Value jEnd) {
  Value visible = ix.cmp(arith::CmpIPredicate::slt, j, jEnd);
  if (p.causal == CausalKind::None)
    return visible;
  Value diag = ix.add(i, p.diagOffset);
  visible = ix.andI(visible, ix.cmp(arith::CmpIPredicate::sle, j, diag));
  Value inWindow =
      ix.cmp(arith::CmpIPredicate::sge, j, ix.sub(diag, p.windowSize));
  return ix.andI(visible, ix.select(p.hasWindow, inWindow, trueValue(ix)));
}

Value tile::tileNeedsIndexMasks(IndexMath &ix, const Problem &p,
                                const RowTile &rows, Value j0,
                                int64_t blockKV, Value jEnd) {
  // Every key of the tile is visible to every query of it when it ends
  // before jEnd, lies at or below the causal diagonal of its first query
  // and inside the window of its last one.
  Value jLast = ix.add(j0, ix.c(blockKV - 1));
  Value inside = ix.cmp(arith::CmpIPredicate::slt, jLast, jEnd);
  if (p.causal != CausalKind::None) {
    auto [iLo, iHi] = rows.queryRange(ix, p);
    inside = ix.andI(inside, ix.cmp(arith::CmpIPredicate::sle, jLast,
                                    ix.add(iLo, p.diagOffset)));
    Value inWindow =
        ix.cmp(arith::CmpIPredicate::sge, j0,
               ix.sub(ix.add(iHi, p.diagOffset), p.windowSize));
    inside = ix.andI(inside,
                     ix.select(p.hasWindow, inWindow, trueValue(ix)));
  }
  return ix.cmp(arith::CmpIPredicate::eq, inside,
                arith::ConstantIntOp::create(ix.b, ix.loc, 0, 1));
}

/// The arguments (b, h, i, j) of a modification at tile row `r` and key
/// `j`, the key clamped below Sk.
static SmallVector<Value> modArgs(IndexMath &ix, const Problem &p,
                                  const RowTile &rows, Value r, Value j) {
  auto [h, i] = rows.coords(ix, p, r);
  return {rows.batch, h, i, ix.min(j, ix.sub(p.keySeq, ix.c(1)))};
}

/// Element `indices` of mod operand `operand` (a ModOperandReader), each
/// index clamped into its dim: an index out of range (the region's own
/// arithmetic, or a padding row or key past Sq or Sk) reads the edge
/// element rather than outside the tensor. A mod operand has no empty dim
/// (the runtime checks it).
static Value readModOperand(const Problem &p, OpBuilder &b, Location loc,
                            unsigned operand, ValueRange indices) {
  IndexMath ix{b, loc};
  Value buffer = p.modOperands[operand];
  SmallVector<Value> clamped;
  for (auto [dim, index] : llvm::enumerate(indices)) {
    Value last = ix.sub(memref::DimOp::create(b, loc, buffer, dim), ix.c(1));
    clamped.push_back(ix.max(ix.min(index, last), ix.c(0)));
  }
  return memref::LoadOp::create(b, loc, buffer, clamped);
}

/// score_mod at the unscaled `score`, unscaled again.
static Value applyScoreMod(OpBuilder &b, Location loc, const Problem &p,
                           SmallVector<Value> args, Value score) {
  args.push_back(arith::MulFOp::create(b, loc, score, p.modScale));
  Value modified = emitModRegion(
      b, *p.scoreMod, args,
      [&](OpBuilder &b, Location loc, unsigned operand, ValueRange indices) {
        return readModOperand(p, b, loc, operand, indices);
      });
  return arith::MulFOp::create(b, loc, modified, p.modInvScale);
}

Value tile::maskScore(OpBuilder &b, Location loc, const Problem &p,
                      const RowTile &rows, Value score, Value r, Value j,
                      Value jEnd, bool indexMasks, Value maskScale,
                      Value maskModOn) {
  if (!p.mask && !indexMasks && !p.scoreMod && !p.maskMod)
    return score;
  IndexMath ix{b, loc};
  auto [h, i] = rows.coords(ix, p, r);
  SmallVector<Value> args;
  if (p.scoreMod || p.maskMod)
    args = modArgs(ix, p, rows, r, j);
  if (p.scoreMod)
    score = applyScoreMod(b, loc, p, args, score);
  if (p.mask) {
    // Padding keys past Sk read the last key's mask; the index masks hide
    // them.
    Value jLoad = ix.min(j, ix.sub(p.keySeq, ix.c(1)));
    Value m = loadMask(b, loc, p, {rows.batch, h, i, jLoad});
    if (p.boolMask) {
      score = arith::SelectOp::create(b, loc, m, score, negInf(b, loc));
    } else {
      Value add = toF32(b, loc, m);
      score = maskScale ? Value(math::FmaOp::create(b, loc, add, maskScale,
                                                    score))
                        : Value(arith::AddFOp::create(b, loc, score, add));
    }
  }
  if (indexMasks)
    score = arith::SelectOp::create(b, loc, keyVisible(ix, p, i, j, jEnd),
                                    score, negInf(b, loc));
  if (p.maskMod && (indexMasks || !maskModOn)) {
    Value keep = emitModRegion(
        b, *p.maskMod, args,
        [&](OpBuilder &b, Location loc, unsigned operand, ValueRange indices) {
          return readModOperand(p, b, loc, operand, indices);
        });
    // A block mask's full blocks keep what the modification would hide.
    if (maskModOn)
      keep = arith::OrIOp::create(
          b, loc, keep,
          arith::XOrIOp::create(b, loc, maskModOn, trueValue(ix)));
    score = arith::SelectOp::create(b, loc, keep, score, negInf(b, loc));
  }
  return score;
}

Value tile::scoreModGrad(OpBuilder &b, Location loc, const Problem &p,
                         const RowTile &rows, Value grad, Value prob,
                         Value rawScore, Value r, Value j) {
  if (!p.scoreMod)
    return grad;
  IndexMath ix{b, loc};
  SmallVector<Value> args = modArgs(ix, p, rows, r, j);
  args.push_back(arith::MulFOp::create(b, loc, rawScore, p.modScale));
  Value deriv = emitScoreModDerivative(
      b, *p.scoreMod, args,
      [&](OpBuilder &b, Location loc, unsigned operand, ValueRange indices) {
        return readModOperand(p, b, loc, operand, indices);
      });
  Value zero = constF32(b, loc, 0.0);
  Value hidden =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, prob, zero);
  return arith::SelectOp::create(b, loc, hidden, zero,
                                 arith::MulFOp::create(b, loc, grad, deriv));
}

//===----------------------------------------------------------------------===//
// Tile ops
//===----------------------------------------------------------------------===//

/// Fills the single-block region of a tile.load / tile.store with
/// `indices(row)`.
static void buildRowRegion(OpBuilder &b, Location loc, Region &region,
                           RowIndices indices) {
  OpBuilder::InsertionGuard guard(b);
  Block *block = b.createBlock(&region, {}, {b.getIndexType()}, {loc});
  TileYieldOp::create(b, loc, indices(b, loc, block->getArgument(0)));
}

TileLoadOp tile::tileLoad(OpBuilder &b, Location loc, Value source, Value tile,
                          Value rows, RowIndices indices) {
  auto op = TileLoadOp::create(b, loc, source, tile, rows);
  buildRowRegion(b, loc, op.getIndices(), indices);
  return op;
}

void tile::tileStore(OpBuilder &b, Location loc, Value tile, Value dest,
                     Value rows, RowIndices indices) {
  auto op = TileStoreOp::create(b, loc, tile, dest, rows);
  buildRowRegion(b, loc, op.getIndices(), indices);
}

Value tile::tileMap(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange, ValueRange)> fn,
    ArrayRef<AffineMap> maps) {
  auto op = TileMapOp::create(
      b, loc, type, inputs,
      maps.empty() ? ArrayAttr() : b.getAffineMapArrayAttr(maps));
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Type> argTypes(type.getRank(), b.getIndexType());
  for (Value input : inputs)
    argTypes.push_back(getElementTypeOrSelf(input.getType()));
  SmallVector<Location> locs(argTypes.size(), loc);
  Block *block = b.createBlock(&op.getBody(), {}, argTypes, locs);
  ValueRange args = block->getArguments();
  TileYieldOp::create(b, loc,
                      fn(b, loc, args.take_front(type.getRank()),
                         args.drop_front(type.getRank())));
  return op.getResult();
}

Value tile::tileReduce(OpBuilder &b, Location loc, TileReduceKind kind,
                       Value input, Value init, std::optional<int64_t> dim) {
  return TileReduceOp::create(b, loc, init.getType(), kind, input, init,
                              dim ? b.getI64IntegerAttr(*dim) : IntegerAttr());
}

Value tile::splat(OpBuilder &b, Location loc, RankedTensorType type,
                  double v) {
  return arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), v)));
}

SmallVector<Value> tile::storedIndices(Layout layout, Value batch,
                                       Value head, Value seq) {
  if (layout == Layout::BHSD)
    return {batch, head, seq};
  return {batch, seq, head};
}

void tile::setSchedule(OpBuilder &b, const AttnTileConfig &config) {
  Operation *forall = b.getInsertionBlock()->getParentOp();
  forall->setAttr("attn.schedule", config.sizes.getAttr(b.getContext()));
}

//===----------------------------------------------------------------------===//
// Key/value rings and masked scores
//===----------------------------------------------------------------------===//

Value tile::ringStage(OpBuilder &b, Location loc, Value ring, Value stage) {
  auto type = cast<MemRefType>(ring.getType());
  SmallVector<OpFoldResult> offsets = {stage, b.getIndexAttr(0),
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                     b.getIndexAttr(type.getDimSize(1)),
                                     b.getIndexAttr(type.getDimSize(2))};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  auto resultType =
      cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
          {type.getDimSize(1), type.getDimSize(2)}, type, offsets, sizes,
          strides));
  return memref::SubViewOp::create(b, loc, resultType, ring, offsets, sizes,
                                   strides);
}

Value tile::sliceRows(OpBuilder &b, Location loc, Value tile, int64_t slices) {
  if (slices == 1)
    return tile;
  auto type = cast<MemRefType>(tile.getType());
  int64_t rows = type.getDimSize(0), row = type.getDimSize(1);
  return memref::ExpandShapeOp::create(
      b, loc, SmallVector<int64_t>{slices, rows / slices, row}, tile,
      SmallVector<ReassociationIndices>{{0, 1}, {2}});
}

tile::KeyValueRing::KeyValueRing(OpBuilder &b, Location loc, const Problem &p,
                                 const RowTile &rows,
                                 const AttnTileConfig &config)
    : blockKV(config.sizes.blockKV), stages(config.sizes.stages), problem(&p),
      rows(rows) {
  keys = allocTile(b, loc, {stages, blockKV, p.headCols}, p.elementType,
                   config.memorySpace);
  values = allocTile(b, loc, {stages, blockKV, p.valueCols}, p.elementType,
                     config.memorySpace);
}

tile::BlockWalk::BlockWalk(IndexMath &ix, const BlockLists &lists, Value batch,
                           Value head, Value row, Value numBlocks)
    : lists(lists), numBlocks(numBlocks) {
  // Each list broadcasts over its own dims of size 1.
  auto where = [&](Value indices) {
    auto type = cast<MemRefType>(indices.getType());
    return SmallVector<Value>{type.getDimSize(0) == 1 ? ix.c(0) : batch,
                              type.getDimSize(1) == 1 ? ix.c(0) : head, row};
  };
  auto count = [&](Value counts, Value indices) {
    Value n =
        indexOf(ix.b, ix.loc,
                memref::LoadOp::create(ix.b, ix.loc, counts, where(counts)));
    Value length = memref::DimOp::create(ix.b, ix.loc, indices, 3);
    return ix.min(ix.max(n, ix.c(0)), length);
  };
  at = where(lists.indices);
  partial = count(lists.counts, lists.indices);
  total = partial;
  if (lists.fullCounts) {
    fullAt = where(lists.fullIndices);
    total = ix.add(total, count(lists.fullCounts, lists.fullIndices));
  }
  total = ix.select(ix.cmp(arith::CmpIPredicate::sgt, numBlocks, ix.c(0)),
                    total, ix.c(0));
}

Value tile::BlockWalk::isFull(IndexMath &ix, Value n) const {
  return ix.cmp(arith::CmpIPredicate::sge, n, partial);
}

Value tile::BlockWalk::block(IndexMath &ix, Value n) const {
  auto entry = [&](Value indices, Value at3) {
    SmallVector<Value> where(indices == lists.indices ? at : fullAt);
    where.push_back(at3);
    return indexOf(ix.b, ix.loc,
                   memref::LoadOp::create(ix.b, ix.loc, indices, where));
  };
  Value e = entry(lists.indices,
                  ix.min(n, ix.max(ix.sub(partial, ix.c(1)), ix.c(0))));
  if (lists.fullIndices) {
    // Both lists are read (each at an entry clamped into its count, so
    // that the address stays in bounds; lists are never empty): a select,
    // not a branch, in the loops that GPU kernels pipeline.
    Value full = entry(lists.fullIndices, ix.max(ix.sub(n, partial), ix.c(0)));
    e = ix.select(isFull(ix, n), full, e);
  }
  return ix.max(ix.min(e, ix.sub(numBlocks, ix.c(1))), ix.c(0));
}

void tile::KeyValueRing::stream(OpBuilder &b, Location loc, Value head,
                                Value begin, Value end) {
  kvHead = head;
  jBegin = begin;
  jEnd = end;
  IndexMath ix{b, loc};
  const Problem &p = *problem;
  if (!p.maskBlockQ) {
    numTiles = ix.ceilDiv(ix.max(ix.sub(jEnd, jBegin), ix.c(0)), ix.c(blockKV));
    return;
  }
  // The tiles of the listed key blocks (the schedule's tiles divide the
  // blocks: tileAttention checks).
  walk.emplace(ix, p.kvBlocks, rows.batch, rows.head,
               ix.div(rows.rowBegin, ix.c(p.maskBlockQ)),
               ix.ceilDiv(p.keySeq, ix.c(p.maskBlockK)));
  numTiles = ix.mul(walk->total, ix.c(p.maskBlockK / blockKV));
}

Value tile::KeyValueRing::firstKey(IndexMath &ix, Value n) const {
  if (!walk)
    return ix.add(jBegin, ix.mul(n, ix.c(blockKV)));
  int64_t perBlock = problem->maskBlockK / blockKV;
  Value block = walk->block(ix, ix.div(n, ix.c(perBlock)));
  return ix.add(ix.mul(block, ix.c(problem->maskBlockK)),
                ix.mul(ix.rem(n, ix.c(perBlock)), ix.c(blockKV)));
}

Value tile::KeyValueRing::maskModOn(IndexMath &ix, Value n) const {
  if (!walk || !problem->maskMod)
    return Value();
  Value full = walk->isFull(ix, ix.div(n, ix.c(problem->maskBlockK / blockKV)));
  return ix.cmp(arith::CmpIPredicate::eq, full,
                arith::ConstantIntOp::create(ix.b, ix.loc, 0, 1));
}

Value tile::KeyValueRing::keyStage(OpBuilder &b, Location loc, Value n) const {
  IndexMath ix{b, loc};
  return ringStage(b, loc, keys, ix.rem(n, ix.c(stages)));
}

Value tile::KeyValueRing::valueStage(OpBuilder &b, Location loc,
                                     Value n) const {
  IndexMath ix{b, loc};
  return ringStage(b, loc, values, ix.rem(n, ix.c(stages)));
}

void tile::KeyValueRing::load(OpBuilder &b, Location loc, Value n) const {
  OpBuilder::InsertionGuard guard(b);
  beginIfLess(b, loc, n, numTiles);
  IndexMath ix{b, loc};
  const Problem &p = *problem;
  Value j0 = firstKey(ix, n);
  // A block mask's tile may lie past jEnd: no rows.
  Value cols = ix.min(ix.c(blockKV), ix.sub(jEnd, j0));
  if (walk)
    cols = ix.max(cols, ix.c(0));
  Value stage = ix.rem(n, ix.c(stages));
  auto keyRow = [&](OpBuilder &b, Location loc, Value r) {
    IndexMath ix{b, loc};
    return p.keyIndices(b, loc, rows.batch, kvHead, ix.add(j0, r));
  };
  tileLoad(b, loc, p.key, ringStage(b, loc, keys, stage), cols, keyRow);
  TileLoadOp value =
      tileLoad(b, loc, p.value, ringStage(b, loc, values, stage), cols, keyRow);
  if (valueLag)
    value->setAttr(kRingLagAttr, b.getI64IntegerAttr(valueLag));
}

Value tile::maskedScores(OpBuilder &b, Location loc, const Problem &p,
                         const RowTile &rows, Value s, Value j0, Value jEnd,
                         int64_t blockKV, int64_t slices, Value maskScale,
                         bool keyRows, Value maskModOn) {
  auto scoreType = cast<RankedTensorType>(s.getType());
  int64_t kps = blockKV / slices;
  // The mask operand on every tile (added in units of the unscaled
  // scores), the index masks only on tiles that cross the diagonal, the
  // window's edge or the key end (every tile with a mask operand).
  auto masked = [&](OpBuilder &b, Location loc, bool indexMasks) -> Value {
    if (!p.mask && !indexMasks && !p.scoreMod && !p.maskMod)
      return s;
    return tileMap(
        b, loc, scoreType, s,
        [&](OpBuilder &b, Location loc, ValueRange idx, ValueRange x) {
          IndexMath ix{b, loc};
          // Key j0 + slice * kps + column (row, in S^T).
          Value keyIdx = keyRows ? idx[0] : idx.back();
          Value rowIdx = keyRows ? idx[1] : idx[idx.size() - 2];
          Value key = ix.add(j0, keyIdx);
          if (slices > 1)
            key = ix.add(key, ix.mul(idx[0], ix.c(kps)));
          return maskScore(b, loc, p, rows, x[0], rowIdx, key, jEnd, indexMasks,
                           maskScale, maskModOn);
        });
  };
  // A tile that reads the mask operand or evaluates the mask modification
  // evaluates the index masks with it: one copy of the per-element code.
  IndexMath ix{b, loc};
  Value needMasks = p.mask || (p.maskMod && !maskModOn)
                        ? ix.c(1)
                        : tileNeedsIndexMasks(ix, p, rows, j0, blockKV, jEnd);
  // With a mask operand every tile takes the masks anyway.
  if (p.maskMod && maskModOn && !p.mask)
    needMasks = arith::OrIOp::create(b, loc, needMasks, maskModOn);
  if (std::optional<int64_t> folded = getConstantIntValue(needMasks))
    return masked(b, loc, *folded != 0);
  auto ifOp = scf::IfOp::create(
      b, loc, needMasks,
      [&](OpBuilder &b, Location loc) {
        scf::YieldOp::create(b, loc, masked(b, loc, true));
      },
      [&](OpBuilder &b, Location loc) {
        scf::YieldOp::create(b, loc, masked(b, loc, false));
      });
  return ifOp.getResult(0);
}
