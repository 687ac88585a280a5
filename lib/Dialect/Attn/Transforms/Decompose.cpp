//===- Decompose.cpp - attn ops to naive linalg on tensors ----------------===//
//
// The reference semantics of every attn op, spelled as linalg.generic ops on
// tensors. Everything is computed in f32; Q/K/V are read in their stored
// layout through the indexing maps (no transposes) and GQA reads K/V head
// `h floordiv G`.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/BlockMask.h"
#include "attn/Dialect/Attn/IR/ModRegions.h"
#include "attn/Dialect/Attn/IR/SplitWork.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNDECOMPOSEPASS
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

using utils::IteratorType;
constexpr IteratorType par = IteratorType::parallel;
constexpr IteratorType red = IteratorType::reduction;

/// The operands and attributes shared by the attention ops, with the runtime
/// sizes the decomposition needs.
struct Problem : AttentionConfig {
  /// K and V are dense (a paged cache is gathered first, gatherPages).
  Value query, key, value, mask;
  /// Per-sequence key counts (i32 [B]), and the offsets of a packed
  /// batch's queries and keys (i32 [B + 1]; Q, K and V are unpacked to
  /// dense [B, H, T, X] first, unpackRows), or null.
  Value kvLens, queryOffsets, keyOffsets;
  OpFoldResult batch, querySeq, keySeq;
  /// The score and mask modifications (null without) and the tensors they
  /// read.
  Region *scoreMod = nullptr, *maskMod = nullptr;
  ValueRange modOperands;
  /// The block mask (empty without).
  BlockMask blocks;

  /// Reads a mod operand's element (ModOperandReader).
  Value readModOperand(OpBuilder &b, Location loc, unsigned operand,
                       ValueRange indices) const {
    return tensor::ExtractOp::create(b, loc, modOperands[operand], indices);
  }

  /// Whether sequences have counts of their own (so the masks and the
  /// causal diagonal are per sequence).
  bool perSequence() const { return kvLens || queryOffsets; }
  /// The keys (queries) of sequence `batch` (an index inside a linalg
  /// body): its `kv_lens` clamped to [0, Sk] or its offsets' span, or Sk
  /// (Sq).
  Value keysOf(OpBuilder &b, Location loc, Value batch) const;
  Value queriesOf(OpBuilder &b, Location loc, Value batch) const;
};

Value clampIndex(OpBuilder &b, Location loc, Value v, Value lo, Value hi) {
  return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, v, lo),
                                hi);
}

Value extractIndex(OpBuilder &b, Location loc, Value tensor, ValueRange at) {
  return arith::IndexCastOp::create(
      b, loc, b.getIndexType(), tensor::ExtractOp::create(b, loc, tensor, at));
}

/// Rows [begin, end) of sequence `batch` of a packed tensor of `rows` rows:
/// its offsets clamped into [0, rows], never decreasing.
std::pair<Value, Value> packedRows(OpBuilder &b, Location loc, Value offsets,
                                   Value batch, Value rows) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value begin =
      clampIndex(b, loc, extractIndex(b, loc, offsets, batch), zero, rows);
  Value next = arith::AddIOp::create(b, loc, batch, one);
  return {begin,
          clampIndex(b, loc, extractIndex(b, loc, offsets, next), begin, rows)};
}

Value spanOf(OpBuilder &b, Location loc, Value offsets, Value batch,
             Value rows) {
  auto [begin, end] = packedRows(b, loc, offsets, batch, rows);
  return arith::SubIOp::create(b, loc, end, begin);
}

Value Problem::keysOf(OpBuilder &b, Location loc, Value batch) const {
  Value capacity = getValueOrCreateConstantIndexOp(b, loc, keySeq);
  if (keyOffsets)
    return spanOf(b, loc, keyOffsets, batch, capacity);
  if (!kvLens)
    return capacity;
  return clampIndex(b, loc, extractIndex(b, loc, kvLens, batch),
                    arith::ConstantIndexOp::create(b, loc, 0), capacity);
}

Value Problem::queriesOf(OpBuilder &b, Location loc, Value batch) const {
  Value rows = getValueOrCreateConstantIndexOp(b, loc, querySeq);
  if (!queryOffsets)
    return rows;
  return spanOf(b, loc, queryOffsets, batch, rows);
}

/// Where a gathered element comes from: whether it exists (else it is 0)
/// and, built only where it does, its indices in the source.
using GatherSource =
    function_ref<Value(OpBuilder &, Location, ArrayRef<Value> at)>;
using GatherIndices =
    function_ref<SmallVector<Value>(OpBuilder &, Location, ArrayRef<Value> at)>;

/// A rank-4 tensor of `sizes` whose element `at` is `source[indices(at)]`
/// where `exists(at)` and 0 elsewhere: the indices (page numbers, packed
/// rows) are computed, and read, only for elements that exist.
Value gather(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
             Value source, GatherSource exists, GatherIndices indices) {
  Type elementType = cast<RankedTensorType>(source.getType()).getElementType();
  Value init = tensor::EmptyOp::create(b, loc, sizes, elementType);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{}, init,
             b.getMultiDimIdentityMap(4), SmallVector<IteratorType>(4, par),
             [&](OpBuilder &b, Location loc, ValueRange) {
               SmallVector<Value> at;
               for (unsigned d = 0; d < 4; ++d)
                 at.push_back(linalg::IndexOp::create(b, loc, d));
               auto read = scf::IfOp::create(
                   b, loc, exists(b, loc, at),
                   [&](OpBuilder &b, Location loc) {
                     scf::YieldOp::create(
                         b, loc,
                         Value(tensor::ExtractOp::create(b, loc, source,
                                                         indices(b, loc, at))));
                   },
                   [&](OpBuilder &b, Location loc) {
                     scf::YieldOp::create(
                         b, loc,
                         Value(arith::ConstantOp::create(
                             b, loc, b.getZeroAttr(elementType))));
                   });
               linalg::YieldOp::create(b, loc, read.getResult(0));
             })
      .getResult(0);
}

/// The dense `[B, H, T, X]` tensor (stored in `layout`) of a packed
/// `[1, H, T, X]` one (`layout` too) whose sequence b is rows
/// `[offsets[b], offsets[b + 1])`: row i of sequence b, 0 past its rows.
Value unpackRows(OpBuilder &b, Location loc, Layout layout, Value packed,
                 Value offsets, OpFoldResult batch) {
  unsigned seqDim = getSeqDim(layout);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, packed);
  sizes[0] = batch;
  Value rows = tensor::DimOp::create(b, loc, packed, seqDim);
  // The packed row of element `at`.
  auto rowOf = [&](OpBuilder &b, Location loc, ArrayRef<Value> at) {
    auto [begin, end] = packedRows(b, loc, offsets, at[0], rows);
    return std::make_pair(
        Value(arith::AddIOp::create(b, loc, begin, at[seqDim])), end);
  };
  return gather(
      b, loc, sizes, packed,
      [&](OpBuilder &b, Location loc, ArrayRef<Value> at) -> Value {
        auto [row, end] = rowOf(b, loc, at);
        return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row,
                                     end);
      },
      [&](OpBuilder &b, Location loc, ArrayRef<Value> at) {
        SmallVector<Value> from(at);
        from[0] = arith::ConstantIndexOp::create(b, loc, 0);
        from[seqDim] = rowOf(b, loc, at).first;
        return from;
      });
}

/// The dense `[B, Hkv, max_pages x page_size, X]` tensor (stored in
/// `layout`) that a paged `pool` holds for the sequences of `table`: key j
/// of sequence b is row `j mod page_size` of page `table[b, j floordiv
/// page_size]`, and keys past the sequence's length are 0 (their pages are
/// never read).
Value gatherPages(OpBuilder &b, Location loc, const Problem &p, Value pool,
                  Value table) {
  unsigned seqDim = getSeqDim(p.layout), headsDim = getHeadsDim(p.layout);
  auto poolType = cast<RankedTensorType>(pool.getType());
  SmallVector<OpFoldResult> sizes = {
      p.batch, b.getIndexAttr(poolType.getDimSize(headsDim)), p.keySeq,
      b.getIndexAttr(poolType.getDimSize(3))};
  if (p.layout == Layout::BSHD)
    std::swap(sizes[1], sizes[2]);
  Value pageSize = tensor::DimOp::create(b, loc, pool, seqDim);
  return gather(
      b, loc, sizes, pool,
      [&](OpBuilder &b, Location loc, ArrayRef<Value> at) -> Value {
        return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                     at[seqDim], p.keysOf(b, loc, at[0]));
      },
      [&](OpBuilder &b, Location loc, ArrayRef<Value> at) {
        Value j = at[seqDim];
        SmallVector<Value> from(at);
        from[0] = extractIndex(
            b, loc, table,
            ValueRange{at[0], arith::DivUIOp::create(b, loc, j, pageSize)});
        from[seqDim] = arith::RemUIOp::create(b, loc, j, pageSize);
        return from;
      });
}

/// The packed tensor of type `type` (`[1, H, T, X]` stored in `layout`, or
/// `[1, H, T]`) of a dense logical f32 `[B, H, T(, X)]` one: row t is row
/// t - offsets[b] of the sequence b whose rows hold it (converted to
/// `type`'s element type), `fill` in a row no sequence holds.
Value packRows(OpBuilder &b, Location loc, Layout layout, Value dense,
               Value offsets, OpFoldResult batch, RankedTensorType type,
               double fill) {
  bool rank4 = type.getRank() == 4;
  unsigned seqDim = rank4 ? getSeqDim(layout) : 2;
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, dense);
  sizes[0] = b.getIndexAttr(1);
  if (rank4 && layout == Layout::BSHD)
    std::swap(sizes[1], sizes[2]);
  Value rows = getValueOrCreateConstantIndexOp(b, loc, sizes[seqDim]);
  Value init = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  unsigned rank = type.getRank();
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{}, init,
             b.getMultiDimIdentityMap(rank),
             SmallVector<IteratorType>(rank, par),
             [&](OpBuilder &b, Location loc, ValueRange) {
               SmallVector<Value> at;
               for (unsigned d = 0; d < rank; ++d)
                 at.push_back(linalg::IndexOp::create(b, loc, d));
               Value t = at[seqDim];
               // The sequence that holds row t, -1 when none does.
               Value none = arith::ConstantIndexOp::create(b, loc, -1);
               Value zero = arith::ConstantIndexOp::create(b, loc, 0);
               Value one = arith::ConstantIndexOp::create(b, loc, 1);
               auto find = scf::ForOp::create(
                   b, loc, zero, getValueOrCreateConstantIndexOp(b, loc, batch),
                   one, ValueRange{none},
                   [&](OpBuilder &b, Location loc, Value s, ValueRange acc) {
                     auto [begin, end] = packedRows(b, loc, offsets, s, rows);
                     Value holds = arith::AndIOp::create(
                         b, loc,
                         arith::CmpIOp::create(
                             b, loc, arith::CmpIPredicate::sge, t, begin),
                         arith::CmpIOp::create(
                             b, loc, arith::CmpIPredicate::slt, t, end));
                     scf::YieldOp::create(b, loc,
                                          Value(arith::SelectOp::create(
                                              b, loc, holds, s, acc[0])));
                   });
               Value owner = find.getResult(0);
               Value found = arith::CmpIOp::create(
                   b, loc, arith::CmpIPredicate::sge, owner, zero);
               auto read = scf::IfOp::create(
                   b, loc, found,
                   [&](OpBuilder &b, Location loc) {
                     auto [begin, end] =
                         packedRows(b, loc, offsets, owner, rows);
                     // Logical (b, h, i[, x]) of the dense tensor.
                     SmallVector<Value> from = {
                         owner, at[rank4 && layout == Layout::BSHD ? 2 : 1],
                         arith::SubIOp::create(b, loc, t, begin)};
                     if (rank4)
                       from.push_back(at[3]);
                     Value v = tensor::ExtractOp::create(b, loc, dense, from);
                     if (v.getType() != type.getElementType())
                       v = arith::TruncFOp::create(b, loc,
                                                   type.getElementType(), v);
                     scf::YieldOp::create(b, loc, v);
                   },
                   [&](OpBuilder &b, Location loc) {
                     scf::YieldOp::create(
                         b, loc,
                         Value(arith::ConstantOp::create(
                             b, loc,
                             b.getFloatAttr(type.getElementType(), fill))));
                   });
               linalg::YieldOp::create(b, loc, read.getResult(0));
             })
      .getResult(0);
}

template <typename OpTy>
Problem getProblem(OpBuilder &b, Location loc, OpTy op) {
  Problem p;
  static_cast<AttentionConfig &>(p) = getAttentionConfig(op);
  p.query = op.getQuery();
  p.key = op.getKey();
  p.value = op.getValue();
  p.mask = op.getMask();
  if (!op.getScoreMod().empty())
    p.scoreMod = &op.getScoreMod();
  if (!op.getMaskMod().empty())
    p.maskMod = &op.getMaskMod();
  p.modOperands = op.getModOperands();
  p.blocks = getBlockMask(op);
  p.batch = tensor::getMixedSize(b, loc, p.query, 0);
  p.querySeq = tensor::getMixedSize(b, loc, p.query, getSeqDim(p.layout));
  p.keySeq = tensor::getMixedSize(b, loc, p.key, getSeqDim(p.layout));
  if constexpr (std::is_same_v<OpTy, AttentionOp>) {
    // A packed batch: dense [B, H, T, X] tensors of its sequences, padded
    // to the packed rows.
    if (Value offsets = op.getQueryOffsets()) {
      p.queryOffsets = offsets;
      p.batch = Value(arith::SubIOp::create(
          b, loc, tensor::DimOp::create(b, loc, offsets, 0),
          arith::ConstantIndexOp::create(b, loc, 1)));
      p.query = unpackRows(b, loc, p.layout, p.query, offsets, p.batch);
    }
    if (Value offsets = op.getKeyOffsets()) {
      p.keyOffsets = offsets;
      p.key = unpackRows(b, loc, p.layout, p.key, offsets, p.batch);
      p.value = unpackRows(b, loc, p.layout, p.value, offsets, p.batch);
    }
  }
  if constexpr (!std::is_same_v<OpTy, AttentionGradOp>) {
    p.kvLens = op.getKvLens();
    if (Value table = op.getBlockTable()) {
      p.keySeq = b.getIndexAttr(p.dims.keySeq);
      if (ShapedType::isDynamic(p.dims.keySeq))
        p.keySeq = Value(arith::MulIOp::create(
            b, loc, tensor::DimOp::create(b, loc, table, 1),
            tensor::DimOp::create(b, loc, p.key, getSeqDim(p.layout))));
      p.key = gatherPages(b, loc, p, p.key, table);
      p.value = gatherPages(b, loc, p, p.value, table);
    }
  }
  return p;
}

Type f32(OpBuilder &b) { return b.getF32Type(); }

Value constF32(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

Value negInf(OpBuilder &b, Location loc) {
  return constF32(b, loc, -std::numeric_limits<double>::infinity());
}

Value toF32(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isF32())
    return v;
  return arith::ExtFOp::create(b, loc, f32(b), v);
}

Value index(OpBuilder &b, Location loc, OpFoldResult ofr) {
  return getValueOrCreateConstantIndexOp(b, loc, ofr);
}

/// An f32 (or `type`) tensor of `sizes` filled with `v`.
Value filled(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
             double v, Type type = {}) {
  if (!type)
    type = f32(b);
  Value empty = tensor::EmptyOp::create(b, loc, sizes, type);
  Value cst = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, v));
  return linalg::FillOp::create(b, loc, cst, empty).getResult(0);
}

Value empty(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
            Type type) {
  return tensor::EmptyOp::create(b, loc, sizes, type);
}

/// Map from `numDims` loop dims to a Q/K/V/O tensor stored in `layout`,
/// given the logical (batch, heads, seq, last) expressions.
AffineMap storedMap(MLIRContext *ctx, unsigned numDims, Layout layout,
                    AffineExpr bt, AffineExpr h, AffineExpr s, AffineExpr x) {
  if (layout == Layout::BHSD)
    return AffineMap::get(numDims, 0, {bt, h, s, x}, ctx);
  return AffineMap::get(numDims, 0, {bt, s, h, x}, ctx);
}

/// Map from the 4 loop dims (b, h, i, j) to the broadcast mask operand.
AffineMap maskMap(MLIRContext *ctx, ShapedType maskType, unsigned numDims,
                  ArrayRef<AffineExpr> bhij) {
  SmallVector<AffineExpr> results;
  int64_t rank = maskType.getRank();
  for (int64_t i = 0; i < rank; ++i) {
    int64_t logical = 4 - rank + i;
    if (maskType.getDimSize(i) == 1)
      results.push_back(getAffineConstantExpr(0, ctx));
    else
      results.push_back(bhij[logical]);
  }
  return AffineMap::get(numDims, 0, results, ctx);
}

Value generic(OpBuilder &b, Location loc, Value init, ValueRange inputs,
              ArrayRef<AffineMap> maps, ArrayRef<IteratorType> iterators,
              function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  return linalg::GenericOp::create(b, loc, init.getType(), inputs, init, maps,
                                   iterators, body)
      .getResult(0);
}

/// The loop indices (b, h, i, j) of a linalg body over scores.
SmallVector<Value> scoreIndices(OpBuilder &b, Location loc) {
  SmallVector<Value> idx;
  for (unsigned d = 0; d < 4; ++d)
    idx.push_back(linalg::IndexOp::create(b, loc, d));
  return idx;
}

/// Whether block `col` is listed among the first `counts[b, h, row]`
/// entries of `indices[b, h, row, :]` (the count clamped into the list,
/// each entry into `[0, numCols)`, as every lowering reads them); `b` and
/// `h` are 0 on a dim of size 1 (broadcast).
Value blockListed(OpBuilder &b, Location loc, Value counts, Value indices,
                  Value batch, Value head, Value row, Value col,
                  Value numCols) {
  auto type = cast<RankedTensorType>(indices.getType());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> at = {type.getDimSize(0) == 1 ? zero : batch,
                           type.getDimSize(1) == 1 ? zero : head, row};
  Value listLength = tensor::DimOp::create(b, loc, indices, 3);
  Value count =
      clampIndex(b, loc, extractIndex(b, loc, counts, at), zero, listLength);
  Value lastCol = arith::SubIOp::create(b, loc, numCols, one);
  Value falseValue = arith::ConstantIntOp::create(b, loc, 0, 1);
  auto loop = scf::ForOp::create(
      b, loc, zero, count, one, ValueRange{falseValue},
      [&](OpBuilder &b, Location loc, Value n, ValueRange found) {
        SmallVector<Value> entryAt(at);
        entryAt.push_back(n);
        Value entry =
            clampIndex(b, loc, extractIndex(b, loc, indices, entryAt),
                       arith::ConstantIndexOp::create(b, loc, 0), lastCol);
        Value hit =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, entry, col);
        scf::YieldOp::create(
            b, loc, Value(arith::OrIOp::create(b, loc, found[0], hit)));
      });
  return loop.getResult(0);
}

/// Whether the block mask lets query i see key j (loop dims (b, h, i, j)):
/// `keep` (the mask_mod's verdict) in a listed block, true in a full one,
/// false elsewhere.
Value blockMaskKeeps(OpBuilder &b, Location loc, const Problem &p, Value keep) {
  SmallVector<Value> bhij = scoreIndices(b, loc);
  Value blockQ = arith::ConstantIndexOp::create(b, loc, p.blocks.blockQ);
  Value blockK = arith::ConstantIndexOp::create(b, loc, p.blocks.blockK);
  Value row = arith::DivUIOp::create(b, loc, bhij[2], blockQ);
  Value col = arith::DivUIOp::create(b, loc, bhij[3], blockK);
  Value cols =
      arith::CeilDivUIOp::create(b, loc, index(b, loc, p.keySeq), blockK);
  const BlockLists &kv = p.blocks.kv;
  Value listed = blockListed(b, loc, kv.counts, kv.indices, bhij[0], bhij[1],
                             row, col, cols);
  Value kept =
      keep ? Value(arith::AndIOp::create(b, loc, listed, keep)) : listed;
  if (!kv.fullCounts)
    return kept;
  Value full = blockListed(b, loc, kv.fullCounts, kv.fullIndices, bhij[0],
                           bhij[1], row, col, cols);
  return arith::OrIOp::create(b, loc, kept, full);
}

/// Scores S[b, h, i, j] = score_mod(scale * Q K^T) + mask in f32, -inf
/// where the causal kind, the window, a boolean mask or the mask_mod hides
/// key j from query i. With `products`, also returns Q K^T.
Value buildScores(OpBuilder &b, Location loc, const Problem &p,
                  Value *products = nullptr) {
  MLIRContext *ctx = b.getContext();
  const AttentionDims &d = p.dims;
  SmallVector<OpFoldResult> sizes = {p.batch, b.getIndexAttr(d.queryHeads),
                                     p.querySeq, p.keySeq};
  AffineExpr bt, h, i, j, k;
  bindDims(ctx, bt, h, i, j, k);
  AffineExpr kvHead = h.floorDiv(d.groupSize());

  Value dot = generic(
      b, loc, filled(b, loc, sizes, 0.0), {p.query, p.key},
      {storedMap(ctx, 5, p.layout, bt, h, i, k),
       storedMap(ctx, 5, p.layout, bt, kvHead, j, k),
       AffineMap::get(5, 0, {bt, h, i, j}, ctx)},
      {par, par, par, par, red}, [](OpBuilder &b, Location loc, ValueRange a) {
        Value prod = arith::MulFOp::create(b, loc, toF32(b, loc, a[0]),
                                           toF32(b, loc, a[1]));
        linalg::YieldOp::create(b, loc,
                                Value(arith::AddFOp::create(b, loc, a[2], prod)));
      });
  if (products)
    *products = dot;

  // Sk - Sq (bottom_right) or 0; per sequence, in the body, with counts of
  // its own.
  Value diagOffset;
  if (p.causal == CausalKind::BottomRight && !p.perSequence())
    diagOffset = arith::SubIOp::create(b, loc, index(b, loc, p.keySeq),
                                       index(b, loc, p.querySeq));
  else if (!p.perSequence())
    diagOffset = arith::ConstantIndexOp::create(b, loc, 0);

  AffineMap id4 = b.getMultiDimIdentityMap(4);
  SmallVector<Value> inputs = {dot};
  SmallVector<AffineMap> maps = {id4};
  if (p.mask) {
    inputs.push_back(p.mask);
    maps.push_back(maskMap(ctx, cast<ShapedType>(p.mask.getType()), 4,
                           {b.getAffineDimExpr(0), b.getAffineDimExpr(1),
                            b.getAffineDimExpr(2), b.getAffineDimExpr(3)}));
  }
  maps.push_back(id4);
  bool boolMask = p.mask && getElementTypeOrSelf(p.mask).isInteger(1);
  return generic(
      b, loc, empty(b, loc, sizes, f32(b)), inputs, maps,
      {par, par, par, par}, [&](OpBuilder &b, Location loc, ValueRange a) {
        Value s = arith::MulFOp::create(b, loc, a[0], constF32(b, loc, p.scale));
        Value ninf = negInf(b, loc);
        auto read = [&](OpBuilder &b, Location loc, unsigned operand,
                        ValueRange indices) {
          return p.readModOperand(b, loc, operand, indices);
        };
        if (p.scoreMod) {
          SmallVector<Value> args = scoreIndices(b, loc);
          args.push_back(s);
          s = emitModRegion(b, *p.scoreMod, args, read);
        }
        if (p.mask && boolMask)
          s = arith::SelectOp::create(b, loc, a[1], s, ninf);
        else if (p.mask)
          s = arith::AddFOp::create(b, loc, s, toF32(b, loc, a[1]));
        Value offset = diagOffset;
        if (p.perSequence()) {
          // Keys past the sequence's own count are hidden, and its causal
          // diagonal follows its counts (its queries past its own count
          // are padding, dropped by packRows).
          Value kj = linalg::IndexOp::create(b, loc, 3);
          Value seq = linalg::IndexOp::create(b, loc, 0);
          Value keys = p.keysOf(b, loc, seq);
          s = arith::SelectOp::create(
              b, loc,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, kj,
                                    keys),
              s, ninf);
          offset = p.causal == CausalKind::BottomRight
                       ? Value(arith::SubIOp::create(b, loc, keys,
                                                     p.queriesOf(b, loc, seq)))
                       : Value(arith::ConstantIndexOp::create(b, loc, 0));
        }
        if (p.causal != CausalKind::None) {
          Value qi = linalg::IndexOp::create(b, loc, 2);
          Value kj = linalg::IndexOp::create(b, loc, 3);
          Value diag = arith::AddIOp::create(b, loc, qi, offset);
          Value hidden = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                               kj, diag);
          if (p.window) {
            Value w = arith::ConstantIndexOp::create(b, loc, *p.window);
            Value first = arith::SubIOp::create(b, loc, diag, w);
            Value before = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::slt, kj, first);
            hidden = arith::OrIOp::create(b, loc, hidden, before);
          }
          s = arith::SelectOp::create(b, loc, hidden, ninf, s);
        }
        Value keep;
        if (p.maskMod)
          keep = emitModRegion(b, *p.maskMod, scoreIndices(b, loc), read);
        if (p.blocks)
          keep = blockMaskKeeps(b, loc, p, keep);
        if (keep)
          s = arith::SelectOp::create(b, loc, keep, s, ninf);
        linalg::YieldOp::create(b, loc, s);
      });
}

/// `m` with -inf replaced by 0, so that exp(s - m) is 0 (not NaN) on a row
/// where every score is -inf.
Value safeMax(OpBuilder &b, Location loc, Value m) {
  Value isNegInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m,
                                         negInf(b, loc));
  return arith::SelectOp::create(b, loc, isNegInf, constF32(b, loc, 0.0), m);
}

/// How the keys are cut into splits: `count` chunks of ceil(Sk / count)
/// keys of each sequence, or `count` chunks of a batch-wide `chunk` keys
/// (balanced; null otherwise).
struct Splits {
  OpFoldResult count;
  Value chunk;
};

/// Whether key j (loop dim `jDim`) lies in split n (loop dim 0) of
/// `splits`, Sk the key count of sequence b (loop dim 1).
Value inSplit(OpBuilder &b, Location loc, const Problem &p,
              const Splits &splits, unsigned jDim) {
  Value chunk = splits.chunk;
  if (!chunk) {
    Value keys = p.keysOf(b, loc, linalg::IndexOp::create(b, loc, 1));
    chunk =
        arith::CeilDivUIOp::create(b, loc, keys, index(b, loc, splits.count));
  }
  Value n = linalg::IndexOp::create(b, loc, 0);
  Value j = linalg::IndexOp::create(b, loc, jDim);
  Value lo = arith::MulIOp::create(b, loc, n, chunk);
  Value hi = arith::AddIOp::create(b, loc, lo, chunk);
  Value geLo =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, j, lo);
  Value ltHi =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, j, hi);
  return arith::AndIOp::create(b, loc, geLo, ltHi);
}

/// Split-KV attention: for each of the N chunks of `splits`, the
/// normalised partial output [N, B, Hq, Sq, Dv] and its LSE [N, B, Hq, Sq],
/// both f32. With N = 1 this is plain attention.
std::pair<Value, Value> buildPartials(OpBuilder &b, Location loc,
                                      const Problem &p, const Splits &splits) {
  MLIRContext *ctx = b.getContext();
  const AttentionDims &d = p.dims;
  Value scores = buildScores(b, loc, p);

  SmallVector<OpFoldResult> statSizes = {
      splits.count, p.batch, b.getIndexAttr(d.queryHeads), p.querySeq};
  SmallVector<OpFoldResult> outSizes = statSizes;
  outSizes.push_back(b.getIndexAttr(d.valueDim));

  // Loop dims (n, b, h, i, j).
  AffineExpr n, bt, h, i, j;
  bindDims(ctx, n, bt, h, i, j);
  AffineMap sMap = AffineMap::get(5, 0, {bt, h, i, j}, ctx);
  AffineMap statMap = AffineMap::get(5, 0, {n, bt, h, i}, ctx);
  SmallVector<IteratorType> rowReduce = {par, par, par, par, red};

  Value maxes = generic(
      b, loc, filled(b, loc, statSizes, -std::numeric_limits<double>::infinity()),
      {scores}, {sMap, statMap}, rowReduce,
      [&](OpBuilder &b, Location loc, ValueRange a) {
        Value m = arith::MaximumFOp::create(b, loc, a[1], a[0]);
        linalg::YieldOp::create(
            b, loc,
            Value(arith::SelectOp::create(b, loc, inSplit(b, loc, p, splits, 4),
                                          m, a[1])));
      });

  // exp(s - m) if key j is in split n, else 0.
  auto weight = [&](OpBuilder &b, Location loc, Value s, Value m,
                    unsigned jDim) -> Value {
    Value pexp = math::ExpOp::create(
        b, loc, arith::SubFOp::create(b, loc, s, safeMax(b, loc, m)));
    return arith::SelectOp::create(b, loc, inSplit(b, loc, p, splits, jDim),
                                   pexp, constF32(b, loc, 0.0));
  };

  Value sums = generic(b, loc, filled(b, loc, statSizes, 0.0), {scores, maxes},
                       {sMap, statMap, statMap}, rowReduce,
                       [&](OpBuilder &b, Location loc, ValueRange a) {
                         Value w = weight(b, loc, a[0], a[1], 4);
                         linalg::YieldOp::create(
                             b, loc, Value(arith::AddFOp::create(b, loc, a[2], w)));
                       });

  // Loop dims (n, b, h, i, e, j) for the second contraction.
  AffineExpr n6, b6, h6, i6, e6, j6;
  bindDims(ctx, n6, b6, h6, i6, e6, j6);
  Value acc = generic(
      b, loc, filled(b, loc, outSizes, 0.0), {scores, maxes, p.value},
      {AffineMap::get(6, 0, {b6, h6, i6, j6}, ctx),
       AffineMap::get(6, 0, {n6, b6, h6, i6}, ctx),
       storedMap(ctx, 6, p.layout, b6, h6.floorDiv(d.groupSize()), j6, e6),
       AffineMap::get(6, 0, {n6, b6, h6, i6, e6}, ctx)},
      {par, par, par, par, par, red},
      [&](OpBuilder &b, Location loc, ValueRange a) {
        Value w = weight(b, loc, a[0], a[1], 5);
        Value pv = arith::MulFOp::create(b, loc, w, toF32(b, loc, a[2]));
        linalg::YieldOp::create(b, loc,
                                Value(arith::AddFOp::create(b, loc, a[3], pv)));
      });

  AffineMap id5 = b.getMultiDimIdentityMap(5);
  AffineMap rowOf5 = AffineMap::get(5, 0,
                                    {b.getAffineDimExpr(0), b.getAffineDimExpr(1),
                                     b.getAffineDimExpr(2), b.getAffineDimExpr(3)},
                                    ctx);
  Value out = generic(
      b, loc, empty(b, loc, outSizes, f32(b)), {acc, sums}, {id5, rowOf5, id5},
      {par, par, par, par, par}, [&](OpBuilder &b, Location loc, ValueRange a) {
        Value zero = constF32(b, loc, 0.0);
        Value isEmpty =
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, a[1], zero);
        Value o = arith::DivFOp::create(b, loc, a[0], a[1]);
        linalg::YieldOp::create(
            b, loc, Value(arith::SelectOp::create(b, loc, isEmpty, zero, o)));
      });

  AffineMap id4 = b.getMultiDimIdentityMap(4);
  Value lse = generic(
      b, loc, empty(b, loc, statSizes, f32(b)), {maxes, sums}, {id4, id4, id4},
      {par, par, par, par}, [&](OpBuilder &b, Location loc, ValueRange a) {
        Value logSum = math::LogOp::create(b, loc, a[1]);
        linalg::YieldOp::create(
            b, loc,
            Value(arith::AddFOp::create(b, loc, safeMax(b, loc, a[0]), logSum)));
      });
  return {out, lse};
}

/// Balanced split-KV attention (attention_partial `balanced`, SplitWork.h):
/// the partial outputs [N * B, 1, Hq, Sq, Dv] and LSEs [N * B, 1, Hq, Sq] of
/// the batch's work items and split_offsets (i32 [B + 1]). Each sequence's
/// chunks of the batch-wide size are computed as splits of their own (a
/// sequence has at most N * B), then item w takes chunk s of sequence b
/// for w = split_offsets[b] + s; the items past the last are O = 0,
/// LSE = -inf.
SmallVector<Value> buildBalancedPartials(OpBuilder &b, Location loc,
                                         const Problem &p, int64_t numSplits) {
  MLIRContext *ctx = b.getContext();
  Value batch = index(b, loc, p.batch);
  Value items = arith::MulIOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, numSplits), batch);
  auto length = [&](OpBuilder &b, Location loc, Value s) {
    return p.keysOf(b, loc, s);
  };
  Value chunk =
      balancedChunk(b, loc, items, batch, index(b, loc, p.keySeq), length);
  auto [parts, lses] = buildPartials(b, loc, p, {items, chunk});

  // The sequence (-1 past the last item) and chunk of each item, and the
  // offsets.
  Type i32 = b.getI32Type();
  auto toI32 = [&](OpBuilder &b, Location loc, Value v) -> Value {
    return arith::IndexCastOp::create(b, loc, i32, v);
  };
  auto filledI32 = [&](int64_t v) -> Value {
    Value cst = arith::ConstantIntOp::create(b, loc, v, 32);
    Value init = tensor::EmptyOp::create(b, loc, {OpFoldResult(items)}, i32);
    return linalg::FillOp::create(b, loc, cst, init).getResult(0);
  };
  Value itemSequence = filledI32(-1), itemChunk = filledI32(0);
  Value offsets = tensor::EmptyOp::create(
      b, loc,
      {OpFoldResult(arith::AddIOp::create(
          b, loc, batch, arith::ConstantIndexOp::create(b, loc, 1)))},
      i32);
  SmallVector<Value> scanned = scanWorkItems(
      b, loc, chunk, batch, length, {itemSequence, itemChunk, offsets},
      [&](OpBuilder &b, Location loc, const SequenceItems &seq,
          ValueRange tables) -> SmallVector<Value> {
        Value one = arith::ConstantIndexOp::create(b, loc, 1);
        auto fill = scf::ForOp::create(
            b, loc, arith::ConstantIndexOp::create(b, loc, 0), seq.count, one,
            ValueRange{tables[0], tables[1]},
            [&](OpBuilder &b, Location loc, Value s, ValueRange t) {
              Value w = arith::AddIOp::create(b, loc, seq.first, s);
              Value sequences = tensor::InsertOp::create(
                  b, loc, toI32(b, loc, seq.batch), t[0], w);
              Value chunks =
                  tensor::InsertOp::create(b, loc, toI32(b, loc, s), t[1], w);
              scf::YieldOp::create(b, loc, ValueRange{sequences, chunks});
            });
        Value offsets = tensor::InsertOp::create(
            b, loc, toI32(b, loc, seq.first), tables[2], seq.batch);
        return {fill.getResult(0), fill.getResult(1), offsets};
      });
  offsets = tensor::InsertOp::create(b, loc, toI32(b, loc, scanned[3]),
                                     scanned[2], batch);

  // Item w of the results: chunk itemChunk[w] of sequence itemSequence[w].
  auto pack = [&](Value perSequence, double emptyValue) {
    auto type = cast<RankedTensorType>(perSequence.getType());
    int64_t rank = type.getRank();
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(b, loc, perSequence);
    sizes[0] = items;
    sizes[1] = b.getIndexAttr(1);
    AffineMap itemMap = AffineMap::get(rank, 0, b.getAffineDimExpr(0), ctx);
    SmallVector<IteratorType> iterators(rank, par);
    return generic(
        b, loc, empty(b, loc, sizes, f32(b)), {scanned[0], scanned[1]},
        {itemMap, itemMap, b.getMultiDimIdentityMap(rank)}, iterators,
        [&](OpBuilder &b, Location loc, ValueRange a) {
          Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
          Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                              a[0], zero);
          auto asIndex = [&](Value v) -> Value {
            return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
          };
          SmallVector<Value> at = {
              asIndex(a[1]),
              asIndex(arith::SelectOp::create(b, loc, valid, a[0], zero))};
          for (int64_t i = 2; i < rank; ++i)
            at.push_back(linalg::IndexOp::create(b, loc, i));
          Value v = tensor::ExtractOp::create(b, loc, perSequence, at);
          linalg::YieldOp::create(
              b, loc,
              Value(arith::SelectOp::create(b, loc, valid, v,
                                            constF32(b, loc, emptyValue))));
        });
  };
  return {pack(parts, 0.0),
          pack(lses, -std::numeric_limits<double>::infinity()), offsets};
}

/// Writes an f32 [B, H, S, X] tensor in `layout` with `elementType`.
Value storeAs(OpBuilder &b, Location loc, Value logical, Layout layout,
              Type elementType) {
  MLIRContext *ctx = b.getContext();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, logical);
  SmallVector<OpFoldResult> stored = {sizes[0], sizes[1], sizes[2], sizes[3]};
  if (layout == Layout::BSHD)
    std::swap(stored[1], stored[2]);
  AffineExpr bt, h, s, x;
  bindDims(ctx, bt, h, s, x);
  return generic(b, loc, empty(b, loc, stored, elementType), {logical},
                 {b.getMultiDimIdentityMap(4),
                  storedMap(ctx, 4, layout, bt, h, s, x)},
                 {par, par, par, par},
                 [&](OpBuilder &b, Location loc, ValueRange a) {
                   Value v = a[0];
                   if (v.getType() != elementType)
                     v = arith::TruncFOp::create(b, loc, elementType, v);
                   linalg::YieldOp::create(b, loc, v);
                 });
}

/// Drops the leading unit split dim of a partial result.
Value dropSplitDim(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<ReassociationIndices> reassoc = {{0, 1}};
  for (int64_t i = 2; i < type.getRank(); ++i)
    reassoc.push_back({i});
  return tensor::CollapseShapeOp::create(b, loc, v, reassoc);
}

/// Replaces `op` by `values`, each cast (tensor.cast) to the type the op
/// declares for its result where the two differ: the verifiers let a result
/// be more or less static than the operands it follows from.
void replaceWithCasts(PatternRewriter &rewriter, Operation *op,
                      ValueRange values) {
  SmallVector<Value> results;
  for (auto [value, result] : llvm::zip_equal(values, op->getResults())) {
    if (value.getType() != result.getType())
      value = tensor::CastOp::create(rewriter, op->getLoc(), result.getType(),
                                     value);
    results.push_back(value);
  }
  rewriter.replaceOp(op, results);
}

struct DecomposeAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Problem p = getProblem(rewriter, loc, op);
    auto [parts, lses] =
        buildPartials(rewriter, loc, p, {rewriter.getIndexAttr(1), Value()});
    Value out = dropSplitDim(rewriter, loc, parts);
    // A packed batch goes back to its packed rows: O = 0 and LSE = -inf
    // on rows no sequence holds.
    out = p.queryOffsets
              ? packRows(rewriter, loc, p.layout, out, p.queryOffsets,
                         p.batch, op.getOutput().getType(), 0.0)
              : storeAs(rewriter, loc, out, p.layout,
                        op.getOutput().getType().getElementType());
    SmallVector<Value> results = {out};
    if (op.getLse()) {
      Value lse = dropSplitDim(rewriter, loc, lses);
      if (p.queryOffsets)
        lse = packRows(rewriter, loc, p.layout, lse, p.queryOffsets, p.batch,
                       op.getLse().getType(),
                       -std::numeric_limits<double>::infinity());
      results.push_back(lse);
    }
    replaceWithCasts(rewriter, op, results);
    return success();
  }
};

struct DecomposeAttentionPartial : OpRewritePattern<AttentionPartialOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionPartialOp op,
                                PatternRewriter &rewriter) const override {
    Problem p = getProblem(rewriter, op.getLoc(), op);
    if (op.getBalanced()) {
      replaceWithCasts(
          rewriter, op,
          buildBalancedPartials(rewriter, op.getLoc(), p, op.getNumSplits()));
      return success();
    }
    auto [parts, lses] =
        buildPartials(rewriter, op.getLoc(), p,
                      {rewriter.getIndexAttr(op.getNumSplits()), Value()});
    replaceWithCasts(rewriter, op, {parts, lses});
    return success();
  }
};

struct DecomposeCombine : OpRewritePattern<CombineOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CombineOp op,
                                PatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Value parts = op.getPartialOutput(), lses = op.getPartialLse();
    Value offsets = op.getSplitOffsets();
    SmallVector<OpFoldResult> partSizes = tensor::getMixedSizes(b, loc, parts);
    if (offsets)
      partSizes[1] = Value(arith::SubIOp::create(
          b, loc, tensor::DimOp::create(b, loc, offsets, 0),
          arith::ConstantIndexOp::create(b, loc, 1)));
    ArrayRef<OpFoldResult> rowSizes = ArrayRef(partSizes).slice(1, 3);
    ArrayRef<OpFoldResult> outSizes = ArrayRef(partSizes).drop_front();
    // With split_offsets, split n of row b is work item n, which belongs to
    // it when it lies in [split_offsets[b], split_offsets[b + 1]).
    auto ownItem = [&](OpBuilder &b, Location loc, unsigned nDim) -> Value {
      Value items = tensor::DimOp::create(b, loc, parts, 0);
      auto [begin, end] = packedRows(b, loc, offsets,
                                     linalg::IndexOp::create(b, loc, 0), items);
      Value n = linalg::IndexOp::create(b, loc, nDim);
      return arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, n, begin),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, n, end));
    };
    // The LSE of split n for row b: -inf for another sequence's item.
    auto splitLse = [&](OpBuilder &b, Location loc, Value lse, unsigned nDim) {
      if (!offsets)
        return lse;
      return Value(arith::SelectOp::create(b, loc, ownItem(b, loc, nDim), lse,
                                           negInf(b, loc)));
    };

    // Loop dims (b, h, i, n): the max and the sum of weights over splits.
    AffineExpr bt, h, i, n;
    bindDims(ctx, bt, h, i, n);
    AffineExpr partBatch = offsets ? b.getAffineConstantExpr(0) : bt;
    AffineMap lseMap = AffineMap::get(4, 0, {n, partBatch, h, i}, ctx);
    AffineMap rowMap = AffineMap::get(4, 0, {bt, h, i}, ctx);
    SmallVector<IteratorType> reduceN = {par, par, par, red};
    Value maxes = generic(
        b, loc,
        filled(b, loc, rowSizes, -std::numeric_limits<double>::infinity()),
        {lses}, {lseMap, rowMap}, reduceN,
        [&](OpBuilder &b, Location loc, ValueRange a) {
          linalg::YieldOp::create(
              b, loc,
              Value(arith::MaximumFOp::create(b, loc, a[1],
                                              splitLse(b, loc, a[0], 3))));
        });
    auto weight = [](OpBuilder &b, Location loc, Value lse, Value m) -> Value {
      return math::ExpOp::create(
          b, loc, arith::SubFOp::create(b, loc, lse, safeMax(b, loc, m)));
    };
    Value sums =
        generic(b, loc, filled(b, loc, rowSizes, 0.0), {lses, maxes},
                {lseMap, rowMap, rowMap}, reduceN,
                [&](OpBuilder &b, Location loc, ValueRange a) {
                  Value w = weight(b, loc, splitLse(b, loc, a[0], 3), a[1]);
                  linalg::YieldOp::create(
                      b, loc, Value(arith::AddFOp::create(b, loc, a[2], w)));
                });

    // Loop dims (b, h, i, e, n): the weighted sum of partial outputs.
    AffineExpr b5, h5, i5, e5, n5;
    bindDims(ctx, b5, h5, i5, e5, n5);
    AffineExpr partBatch5 = offsets ? b.getAffineConstantExpr(0) : b5;
    Value acc = generic(
        b, loc, filled(b, loc, outSizes, 0.0), {parts, lses, maxes, sums},
        {AffineMap::get(5, 0, {n5, partBatch5, h5, i5, e5}, ctx),
         AffineMap::get(5, 0, {n5, partBatch5, h5, i5}, ctx),
         AffineMap::get(5, 0, {b5, h5, i5}, ctx),
         AffineMap::get(5, 0, {b5, h5, i5}, ctx),
         AffineMap::get(5, 0, {b5, h5, i5, e5}, ctx)},
        {par, par, par, par, red},
        [&](OpBuilder &b, Location loc, ValueRange a) {
          Value zero = constF32(b, loc, 0.0);
          Value isEmpty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                                a[3], zero);
          Value w = arith::DivFOp::create(
              b, loc, weight(b, loc, splitLse(b, loc, a[1], 4), a[2]), a[3]);
          w = arith::SelectOp::create(b, loc, isEmpty, zero, w);
          Value contrib = arith::MulFOp::create(b, loc, w, a[0]);
          // Another sequence's item adds nothing, whatever it holds.
          if (offsets)
            contrib = arith::SelectOp::create(b, loc, ownItem(b, loc, 4),
                                              contrib, zero);
          linalg::YieldOp::create(
              b, loc, Value(arith::AddFOp::create(b, loc, a[4], contrib)));
        });
    SmallVector<Value> results = {
        storeAs(b, loc, acc, op.getLayout(),
                op.getOutput().getType().getElementType())};
    if (op.getLse()) {
      AffineMap id3 = b.getMultiDimIdentityMap(3);
      results.push_back(generic(
          b, loc, empty(b, loc, rowSizes, f32(b)), {maxes, sums},
          {id3, id3, id3}, {par, par, par},
          [&](OpBuilder &b, Location loc, ValueRange a) {
            linalg::YieldOp::create(
                b, loc,
                Value(arith::AddFOp::create(b, loc, safeMax(b, loc, a[0]),
                                            math::LogOp::create(b, loc, a[1]))));
          }));
    }
    replaceWithCasts(rewriter, op, results);
    return success();
  }
};

/// Sums a per-query-head gradient [B, Hq, S, X] over the heads of each group,
/// giving [B, Hkv, S, X].
Value sumOverGroups(OpBuilder &b, Location loc, Value perHead,
                    const AttentionDims &d) {
  if (d.groupSize() == 1)
    return perHead;
  MLIRContext *ctx = b.getContext();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, perHead);
  auto type = cast<RankedTensorType>(perHead.getType());
  SmallVector<int64_t> expandedShape = {type.getDimSize(0), d.kvHeads,
                                        d.groupSize(), type.getDimSize(2),
                                        type.getDimSize(3)};
  SmallVector<OpFoldResult> expandedSizes = {sizes[0], b.getIndexAttr(d.kvHeads),
                                             b.getIndexAttr(d.groupSize()),
                                             sizes[2], sizes[3]};
  Value expanded = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(expandedShape, type.getElementType()),
      perHead, SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}},
      expandedSizes);
  SmallVector<OpFoldResult> outSizes = {sizes[0], b.getIndexAttr(d.kvHeads),
                                        sizes[2], sizes[3]};
  AffineExpr bt, g, s, x, r;
  bindDims(ctx, bt, g, s, x, r);
  return generic(b, loc, filled(b, loc, outSizes, 0.0), {expanded},
                 {AffineMap::get(5, 0, {bt, g, r, s, x}, ctx),
                  AffineMap::get(5, 0, {bt, g, s, x}, ctx)},
                 {par, par, par, par, red},
                 [](OpBuilder &b, Location loc, ValueRange a) {
                   linalg::YieldOp::create(
                       b, loc, Value(arith::AddFOp::create(b, loc, a[1], a[0])));
                 });
}

struct DecomposeAttentionGrad : OpRewritePattern<AttentionGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionGradOp op,
                                PatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Problem p = getProblem(b, loc, op);
    const AttentionDims &d = p.dims;
    Value products;
    Value scores = buildScores(b, loc, p, &products);
    Value scale = constF32(b, loc, p.scale);
    SmallVector<OpFoldResult> scoreSizes =
        tensor::getMixedSizes(b, loc, scores);
    SmallVector<OpFoldResult> rowSizes = {scoreSizes[0], scoreSizes[1],
                                          scoreSizes[2]};
    AffineMap id4 = b.getMultiDimIdentityMap(4);
    AffineExpr bt, h, i, j, x;

    // P = exp(S - LSE), 0 on rows with LSE = -inf.
    bindDims(ctx, bt, h, i, j);
    AffineMap rowOf4 = AffineMap::get(4, 0, {bt, h, i}, ctx);
    Value probs = generic(
        b, loc, empty(b, loc, scoreSizes, f32(b)), {scores, op.getLse()},
        {id4, rowOf4, id4}, {par, par, par, par},
        [&](OpBuilder &b, Location loc, ValueRange a) {
          Value pexp = math::ExpOp::create(
              b, loc, arith::SubFOp::create(b, loc, a[0], safeMax(b, loc, a[1])));
          Value dead = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                             a[1], negInf(b, loc));
          linalg::YieldOp::create(
              b, loc,
              Value(arith::SelectOp::create(b, loc, dead, constF32(b, loc, 0.0),
                                            pexp)));
        });

    // Di = rowsum(dO * O): loop dims (b, h, i, x).
    bindDims(ctx, bt, h, i, x);
    AffineMap oMap = storedMap(ctx, 4, p.layout, bt, h, i, x);
    Value rowDot = generic(
        b, loc, filled(b, loc, rowSizes, 0.0),
        {op.getGradOutput(), op.getOutput()}, {oMap, oMap, rowOf4},
        {par, par, par, red}, [](OpBuilder &b, Location loc, ValueRange a) {
          Value prod = arith::MulFOp::create(b, loc, toF32(b, loc, a[0]),
                                             toF32(b, loc, a[1]));
          linalg::YieldOp::create(
              b, loc, Value(arith::AddFOp::create(b, loc, a[2], prod)));
        });

    // dS = P * (dO V^T - Di): loop dims (b, h, i, j, x).
    bindDims(ctx, bt, h, i, j, x);
    AffineExpr kvHead = h.floorDiv(d.groupSize());
    AffineMap ij5 = AffineMap::get(5, 0, {bt, h, i, j}, ctx);
    Value dP = generic(
        b, loc, filled(b, loc, scoreSizes, 0.0),
        {op.getGradOutput(), p.value},
        {storedMap(ctx, 5, p.layout, bt, h, i, x),
         storedMap(ctx, 5, p.layout, bt, kvHead, j, x), ij5},
        {par, par, par, par, red}, [](OpBuilder &b, Location loc, ValueRange a) {
          Value prod = arith::MulFOp::create(b, loc, toF32(b, loc, a[0]),
                                             toF32(b, loc, a[1]));
          linalg::YieldOp::create(
              b, loc, Value(arith::AddFOp::create(b, loc, a[2], prod)));
        });
    // With a score_mod, dS is the gradient of the modified score: times
    // the region's derivative at the scaled score (0 where P is: a hidden
    // key's derivative may not be finite).
    SmallVector<Value> dsInputs = {probs, dP, rowDot};
    SmallVector<AffineMap> dsMaps = {id4, id4, rowOf4};
    if (p.scoreMod) {
      dsInputs.push_back(products);
      dsMaps.push_back(id4);
    }
    dsMaps.push_back(id4);
    Value dS = generic(
        b, loc, empty(b, loc, scoreSizes, f32(b)), dsInputs, dsMaps,
        {par, par, par, par}, [&](OpBuilder &b, Location loc, ValueRange a) {
          Value diff = arith::SubFOp::create(b, loc, a[1], a[2]);
          Value ds = arith::MulFOp::create(b, loc, a[0], diff);
          if (p.scoreMod) {
            SmallVector<Value> args = scoreIndices(b, loc);
            args.push_back(arith::MulFOp::create(b, loc, a[3], scale));
            Value deriv = emitScoreModDerivative(
                b, *p.scoreMod, args,
                [&](OpBuilder &b, Location loc, unsigned operand,
                    ValueRange indices) {
                  return p.readModOperand(b, loc, operand, indices);
                });
            Value zero = constF32(b, loc, 0.0);
            Value hidden = arith::CmpFOp::create(
                b, loc, arith::CmpFPredicate::OEQ, a[0], zero);
            ds = arith::SelectOp::create(
                b, loc, hidden, zero, arith::MulFOp::create(b, loc, ds, deriv));
          }
          linalg::YieldOp::create(b, loc, ds);
        });

    // dQ = scale dS K: loop dims (b, h, i, x, j).
    AffineExpr b5, h5, s5, x5, r5;
    bindDims(ctx, b5, h5, s5, x5, r5);
    AffineExpr kv5 = h5.floorDiv(d.groupSize());
    SmallVector<OpFoldResult> dqSizes = {p.batch, b.getIndexAttr(d.queryHeads),
                                         p.querySeq, b.getIndexAttr(d.headDim)};
    auto scaledMac = [&](OpBuilder &b, Location loc, ValueRange a) {
      Value prod = arith::MulFOp::create(
          b, loc, arith::MulFOp::create(b, loc, a[0], scale),
          toF32(b, loc, a[1]));
      linalg::YieldOp::create(b, loc,
                              Value(arith::AddFOp::create(b, loc, a[2], prod)));
    };
    Value dQ = generic(b, loc, filled(b, loc, dqSizes, 0.0), {dS, p.key},
                       {AffineMap::get(5, 0, {b5, h5, s5, r5}, ctx),
                        storedMap(ctx, 5, p.layout, b5, kv5, r5, x5),
                        AffineMap::get(5, 0, {b5, h5, s5, x5}, ctx)},
                       {par, par, par, par, red}, scaledMac);

    // Per query head, dK = scale dS^T Q and dV = P^T dO: loop dims
    // (b, h, j, x, i).
    SmallVector<OpFoldResult> dkSizes = {p.batch, b.getIndexAttr(d.queryHeads),
                                         p.keySeq, b.getIndexAttr(d.headDim)};
    SmallVector<OpFoldResult> dvSizes = {p.batch, b.getIndexAttr(d.queryHeads),
                                         p.keySeq, b.getIndexAttr(d.valueDim)};
    AffineMap sT = AffineMap::get(5, 0, {b5, h5, r5, s5}, ctx);
    AffineMap outMap = AffineMap::get(5, 0, {b5, h5, s5, x5}, ctx);
    SmallVector<IteratorType> iters = {par, par, par, par, red};
    Value dKHeads = generic(b, loc, filled(b, loc, dkSizes, 0.0), {dS, p.query},
                            {sT, storedMap(ctx, 5, p.layout, b5, h5, r5, x5),
                             outMap},
                            iters, scaledMac);
    Value dVHeads = generic(
        b, loc, filled(b, loc, dvSizes, 0.0), {probs, op.getGradOutput()},
        {sT, storedMap(ctx, 5, p.layout, b5, h5, r5, x5), outMap}, iters,
        [](OpBuilder &b, Location loc, ValueRange a) {
          Value prod = arith::MulFOp::create(b, loc, a[0], toF32(b, loc, a[1]));
          linalg::YieldOp::create(
              b, loc, Value(arith::AddFOp::create(b, loc, a[2], prod)));
        });

    Type q = op.getQuery().getType().getElementType();
    replaceWithCasts(
        rewriter, op,
        {storeAs(b, loc, dQ, p.layout, q),
         storeAs(b, loc, sumOverGroups(b, loc, dKHeads, d), p.layout, q),
         storeAs(b, loc, sumOverGroups(b, loc, dVHeads, d), p.layout, q)});
    return success();
  }
};

struct AttnDecomposePass
    : public attn::impl::AttnDecomposePassBase<AttnDecomposePass> {
  void runOnOperation() override {
    Operation *root = getOperation();
    unsigned count = 0;
    root->walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionPartialOp, CombineOp, AttentionGradOp>(op))
        ++count;
    });
    RewritePatternSet patterns(&getContext());
    populateAttnDecomposePatterns(patterns);
    if (failed(applyPatternsGreedily(root, std::move(patterns))))
      return signalPassFailure();
    numDecomposed += count;
  }
};

} // namespace

void attn::populateAttnDecomposePatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeAttention, DecomposeAttentionPartial, DecomposeCombine,
               DecomposeAttentionGrad>(patterns.getContext());
}
