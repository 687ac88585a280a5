//===- AttnOps.cpp - attn operations and their verifiers ------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/BlockMask.h"
#include "attn/Dialect/Attn/IR/ModRegions.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/Attn/IR/AttnEnums.cpp.inc"

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

AttentionDims attn::getAttentionDims(Layout layout, ShapedType query,
                                     ShapedType key, ShapedType value) {
  unsigned h = getHeadsDim(layout), s = getSeqDim(layout);
  return {query.getDimSize(0), query.getDimSize(h), key.getDimSize(h),
          query.getDimSize(s), key.getDimSize(s),   query.getDimSize(3),
          value.getDimSize(3)};
}

SmallVector<int64_t> attn::getStoredShape(Layout layout, int64_t batch,
                                          int64_t heads, int64_t seq,
                                          int64_t last) {
  if (layout == Layout::BHSD)
    return {batch, heads, seq, last};
  return {batch, seq, heads, last};
}

double attn::getEffectiveScale(std::optional<llvm::APFloat> scale,
                               int64_t headDim) {
  if (scale)
    return scale->convertToFloat();
  return 1.0 / std::sqrt(static_cast<double>(headDim));
}

int64_t attn::getPagedCapacity(int64_t maxPages, int64_t pageSize) {
  if (ShapedType::isDynamic(maxPages) || ShapedType::isDynamic(pageSize))
    return ShapedType::kDynamic;
  std::optional<int64_t> capacity = llvm::checkedMul(maxPages, pageSize);
  return capacity && *capacity <= kMaxElements ? *capacity
                                               : ShapedType::kDynamic;
}

std::optional<int64_t> attn::getStaticElementCount(ShapedType type) {
  int64_t count = 1;
  for (int64_t d : type.getShape()) {
    if (ShapedType::isDynamic(d))
      continue;
    std::optional<int64_t> product = llvm::checkedMul(count, d);
    if (!product || *product > kMaxElements)
      return std::nullopt;
    count = *product;
  }
  return count;
}

//===----------------------------------------------------------------------===//
// Verification helpers
//===----------------------------------------------------------------------===//

namespace {
/// Formats a shape as `[2, ?, 64]`.
std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return s;
}

bool dimsCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

bool shapesCompatible(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  return a.size() == b.size() &&
         llvm::all_of(llvm::zip_equal(a, b), [](auto pair) {
           return dimsCompatible(std::get<0>(pair), std::get<1>(pair));
         });
}

bool isSupportedElementType(Type t) {
  return t.isF16() || t.isBF16() || t.isF32();
}

StringRef layoutName(Layout layout) {
  return layout == Layout::BHSD ? "[B, H, S, X] (bhsd)" : "[B, S, H, X] (bshd)";
}

/// Checks that `value` is a rank-4 tensor of a supported element type.
LogicalResult verifyRank4(Operation *op, Value value, StringRef name) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() != 4)
    return op->emitOpError()
           << "'" << name << "' must have rank 4, got rank " << type.getRank();
  if (!isSupportedElementType(type.getElementType()))
    return op->emitOpError()
           << "'" << name << "' element type must be f16, bf16 or f32, got "
           << type.getElementType();
  return success();
}

/// Checks `value` against an expected shape and element type.
LogicalResult verifyTypeIs(Operation *op, Value value, StringRef name,
                           ArrayRef<int64_t> shape, Type elementType,
                           StringRef what) {
  auto type = cast<RankedTensorType>(value.getType());
  if (!shapesCompatible(type.getShape(), shape))
    return op->emitOpError()
           << "'" << name << "' must have shape " << formatShape(shape) << " ("
           << what << "), got " << formatShape(type.getShape());
  if (type.getElementType() != elementType)
    return op->emitOpError()
           << "'" << name << "' must have element type " << elementType
           << ", got " << type.getElementType();
  return success();
}

/// Checks every operand and result of `op` against kMaxElements.
LogicalResult verifyElementCounts(Operation *op) {
  auto check = [&](Value value, StringRef kind,
                   unsigned index) -> LogicalResult {
    auto type = dyn_cast<ShapedType>(value.getType());
    if (!type || getStaticElementCount(type))
      return success();
    return op->emitOpError()
           << kind << " #" << index << " of type " << type
           << " holds more than 2^48 = " << kMaxElements
           << " elements (its static dims), the most an attn op takes";
  };
  for (OpOperand &operand : op->getOpOperands())
    if (failed(check(operand.get(), "operand", operand.getOperandNumber())))
      return failure();
  for (OpResult result : op->getResults())
    if (failed(check(result, "result", result.getResultNumber())))
      return failure();
  return success();
}

/// Verifies what every attention op shares: Q, K, V, the mask and the
/// attributes. Returns the logical dims on success.
/// Verifies the KV cache operands (`kv_lens`, `block_table`) against the
/// logical dims, and with a block table makes `dims.keySeq` the capacity.
LogicalResult verifyKvCache(Operation *op, Value kvLens, Value blockTable,
                            Layout layout, AttentionDims &dims) {
  if (!kvLens && !blockTable)
    return success();
  if (blockTable && !kvLens)
    return op->emitOpError()
           << "has a 'block_table' but no 'kv_lens': a paged cache needs the "
              "key count of every sequence";
  auto lType = cast<RankedTensorType>(kvLens.getType());
  if (lType.getRank() != 1 || !dimsCompatible(lType.getDimSize(0), dims.batch))
    return op->emitOpError()
           << "'kv_lens' must have shape " << formatShape({dims.batch})
           << " ([B], one key count per sequence), got "
           << formatShape(lType.getShape());
  if (!blockTable)
    return success();
  auto tType = cast<RankedTensorType>(blockTable.getType());
  if (tType.getRank() != 2 || !dimsCompatible(tType.getDimSize(0), dims.batch))
    return op->emitOpError()
           << "'block_table' must have shape "
           << formatShape({dims.batch, ShapedType::kDynamic})
           << " ([B, max_pages]), got " << formatShape(tType.getShape());
  int64_t maxPages = tType.getDimSize(1), pageSize = dims.keySeq;
  if (maxPages == 0 || pageSize == 0)
    return op->emitOpError()
           << "a paged cache needs at least one page per sequence and one "
              "row per page, got max_pages = "
           << maxPages << " and page_size = " << pageSize
           << " ('key' is the page pool "
           << (layout == Layout::BHSD ? "[P, Hkv, page_size, D]"
                                      : "[P, page_size, Hkv, D]")
           << ")";
  int64_t capacity = getPagedCapacity(maxPages, pageSize);
  if (ShapedType::isDynamic(capacity) && !ShapedType::isDynamic(maxPages) &&
      !ShapedType::isDynamic(pageSize))
    return op->emitOpError()
           << "a paged cache of max_pages x page_size = " << maxPages << " x "
           << pageSize << " keys holds more than 2^48 keys";
  dims.keySeq = capacity;
  return success();
}

/// Verifies the offsets of a packed batch; with `queryOffsets`, makes
/// `dims.batch` the sequence count.
LogicalResult verifyPacking(Operation *op, Value queryOffsets, Value keyOffsets,
                            Value kvLens, Value mask, ShapedType qType,
                            ShapedType kType, ShapedType vType,
                            AttentionDims &dims) {
  if (!queryOffsets && !keyOffsets)
    return success();
  if (!queryOffsets)
    return op->emitOpError() << "has 'key_offsets' but no 'query_offsets': "
                                "packed keys come with packed queries";
  if (keyOffsets && kvLens)
    return op->emitOpError()
           << "has both 'key_offsets' and 'kv_lens': packed keys give each "
              "sequence's keys by their offsets";
  if (mask)
    return op->emitOpError() << "has a mask operand and packed sequences; "
                                "a packed batch takes no mask";
  // An operand whose shape is `ok`, or an error that names it, says what
  // its shape must be and gives its shape.
  auto checkShape = [&](bool ok, StringRef name, StringRef requirement,
                        Type type) -> LogicalResult {
    if (ok)
      return success();
    return op->emitOpError()
           << "'" << name << "' " << requirement << ", got shape "
           << formatShape(cast<ShapedType>(type).getShape());
  };
  auto checkOffsets = [&](Value offsets, StringRef name) {
    auto type = cast<RankedTensorType>(offsets.getType());
    return checkShape(type.getRank() == 1 && type.getDimSize(0) != 0, name,
                      "must have shape [B + 1] (the first row of every "
                      "sequence and the end of the last)",
                      type);
  };
  auto leadingOne = [&](ShapedType type, StringRef name) {
    return checkShape(dimsCompatible(type.getDimSize(0), 1), name,
                      "of a packed batch must have a leading size of 1 (the "
                      "sequences lie back to back in one)",
                      type);
  };
  if (failed(checkOffsets(queryOffsets, "query_offsets")) ||
      failed(leadingOne(qType, "query")))
    return failure();
  dims.batch = getPackedBatch(cast<ShapedType>(queryOffsets.getType()));
  if (!keyOffsets)
    return success();
  if (failed(checkOffsets(keyOffsets, "key_offsets")) ||
      failed(leadingOne(kType, "key")) || failed(leadingOne(vType, "value")))
    return failure();
  int64_t nq = cast<ShapedType>(queryOffsets.getType()).getDimSize(0);
  int64_t nk = cast<ShapedType>(keyOffsets.getType()).getDimSize(0);
  if (!dimsCompatible(nq, nk))
    return op->emitOpError()
           << "'query_offsets' and 'key_offsets' must give the same number of "
              "sequences, got "
           << nq << " and " << nk << " offsets";
  return success();
}

FailureOr<AttentionDims> verifyAttentionOperands(
    Operation *op, Value query, Value key, Value value, Value mask,
    std::optional<llvm::APFloat> scale, CausalKind causal,
    std::optional<int64_t> window, Layout layout, Value kvLens = Value(),
    Value blockTable = Value(), Value queryOffsets = Value(),
    Value keyOffsets = Value()) {
  if (failed(verifyRank4(op, query, "query")) ||
      failed(verifyRank4(op, key, "key")) ||
      failed(verifyRank4(op, value, "value")))
    return failure();
  auto qType = cast<ShapedType>(query.getType());
  auto kType = cast<ShapedType>(key.getType());
  auto vType = cast<ShapedType>(value.getType());
  Type elementType = qType.getElementType();
  if (kType.getElementType() != elementType ||
      vType.getElementType() != elementType)
    return op->emitOpError()
           << "'query', 'key' and 'value' must share one element type, got "
           << elementType << ", " << kType.getElementType() << " and "
           << vType.getElementType();

  AttentionDims dims = getAttentionDims(layout, qType, kType, vType);
  unsigned hDim = getHeadsDim(layout);
  for (auto [type, name] :
       {std::make_pair(qType, "query"), std::make_pair(kType, "key"),
        std::make_pair(vType, "value")}) {
    if (type.isDynamicDim(hDim) || type.isDynamicDim(3))
      return op->emitOpError()
             << "'" << name << "' must have a static head count and head dim "
             << "(layout " << layoutName(layout) << "), got shape "
             << formatShape(type.getShape());
  }
  if (failed(verifyPacking(op, queryOffsets, keyOffsets, kvLens, mask, qType,
                           kType, vType, dims)))
    return failure();
  if (keyOffsets) {
    // Checked by verifyPacking.
  } else if (blockTable) {
    if (!dimsCompatible(kType.getDimSize(0), vType.getDimSize(0)))
      return op->emitOpError()
             << "page count mismatch: the pools 'key' and 'value' have P = "
             << formatShape({kType.getDimSize(0), vType.getDimSize(0)});
  } else if (!dimsCompatible(kType.getDimSize(0), dims.batch) ||
             !dimsCompatible(vType.getDimSize(0), dims.batch)) {
    return op->emitOpError()
           << "batch mismatch: 'query', 'key' and 'value' have B = "
           << formatShape(
                  {dims.batch, kType.getDimSize(0), vType.getDimSize(0)});
  }
  if (dims.headDim != kType.getDimSize(3))
    return op->emitOpError()
           << "head dim mismatch: 'query' has D = " << dims.headDim
           << " but 'key' has D = " << kType.getDimSize(3);
  if (vType.getDimSize(hDim) != dims.kvHeads)
    return op->emitOpError()
           << "'key' and 'value' must have the same number of heads, got "
           << dims.kvHeads << " and " << vType.getDimSize(hDim);
  if (!dimsCompatible(vType.getDimSize(getSeqDim(layout)), dims.keySeq))
    return op->emitOpError()
           << (blockTable ? "page size mismatch: 'key' has page_size = "
                          : "key length mismatch: 'key' has Sk = ")
           << formatShape({dims.keySeq})
           << (blockTable ? " but 'value' has page_size = "
                          : " but 'value' has Sk = ")
           << formatShape({vType.getDimSize(getSeqDim(layout))});
  // Zero heads would make the GQA group size Hq / Hkv zero or undefined, and
  // every lowering divides by it.
  if (dims.queryHeads == 0 || dims.kvHeads == 0)
    return op->emitOpError()
           << "head counts must be non-zero, got Hq = " << dims.queryHeads
           << " and Hkv = " << dims.kvHeads;
  if (dims.queryHeads % dims.kvHeads != 0)
    return op->emitOpError()
           << "query heads (Hq = " << dims.queryHeads
           << ") must be a multiple of key/value heads (Hkv = " << dims.kvHeads
           << ")";
  if (dims.headDim == 0 || dims.valueDim == 0)
    return op->emitOpError()
           << "head dims must be non-zero, got D = " << dims.headDim
           << " and Dv = " << dims.valueDim;
  if (dims.headDim > kMaxHeadDim || dims.valueDim > kMaxHeadDim)
    return op->emitOpError()
           << "head dims must be at most " << kMaxHeadDim
           << ", got D = " << dims.headDim << " and Dv = " << dims.valueDim;

  if (failed(verifyKvCache(op, kvLens, blockTable, layout, dims)))
    return failure();

  if (mask) {
    auto mType = cast<RankedTensorType>(mask.getType());
    Type mElem = mType.getElementType();
    if (!mElem.isInteger(1) && !isSupportedElementType(mElem))
      return op->emitOpError() << "'mask' element type must be f16, bf16, f32 "
                                  "(additive) or i1 (keep where true), got "
                               << mElem;
    SmallVector<int64_t> full = {dims.batch, dims.queryHeads, dims.querySeq,
                                 dims.keySeq};
    ArrayRef<int64_t> mShape = mType.getShape();
    bool ok = mShape.size() <= 4;
    for (size_t i = 0; ok && i < mShape.size(); ++i) {
      int64_t m = mShape[mShape.size() - 1 - i];
      int64_t f = full[3 - i];
      ok = m == 1 || dimsCompatible(m, f);
    }
    if (!ok)
      return op->emitOpError() << "'mask' of shape " << formatShape(mShape)
                               << " is not broadcastable to [B, Hq, Sq, Sk] = "
                               << formatShape(full);
  }

  if (scale) {
    double s = scale->convertToDouble();
    if (!std::isfinite(s) || s <= 0.0)
      return op->emitOpError()
             << "'scale' must be a finite positive number, got " << s;
    // The lowerings divide the mask by the scale (docs/Limits.md).
    if (s < kMinScale || s > kMaxScale)
      return op->emitOpError()
             << "'scale' must lie in [2^-64, 2^64], got " << s;
  }
  if (window) {
    if (*window < 0)
      return op->emitOpError()
             << "'window' must be non-negative, got " << *window;
    if (causal == CausalKind::None)
      return op->emitOpError()
             << "'window' needs a causal kind (top_left or bottom_right): the "
                "window is counted back from the causal diagonal";
  }
  return dims;
}

/// Verifies a block mask: `block_size`, the lists of key blocks per query
/// block (`kvLists`) and, for attention_grad, of query blocks per key block
/// (`qLists`, null for the other ops).
LogicalResult verifyBlockMask(Operation *op, ValueRange kvLists,
                              std::optional<ValueRange> qLists,
                              std::optional<ArrayRef<int64_t>> blockSize,
                              const AttentionDims &dims, bool packedOrPaged) {
  if (kvLists.empty() && (!qLists || qLists->empty())) {
    if (blockSize)
      return op->emitOpError() << "has a 'block_size' but no 'block_mask'";
    return success();
  }
  if (kvLists.size() != 2 && kvLists.size() != 4)
    return op->emitOpError()
           << "'block_mask' must have 2 operands (counts, indices) or 4 "
              "(and the full blocks' counts, indices), got "
           << kvLists.size();
  if (qLists && qLists->size() != kvLists.size())
    return op->emitOpError()
           << "'q_block_mask' must have as many operands as 'block_mask' ("
           << kvLists.size() << ", the same lists transposed), got "
           << qLists->size();
  if (!blockSize)
    return op->emitOpError() << "has a 'block_mask' but no 'block_size'";
  if (blockSize->size() != 2 || (*blockSize)[0] < 1 || (*blockSize)[1] < 1 ||
      (*blockSize)[0] > kMaxHeadDim || (*blockSize)[1] > kMaxHeadDim)
    return op->emitOpError()
           << "'block_size' must be [BQ, BK], each in [1, " << kMaxHeadDim
           << "], got " << formatShape(*blockSize);
  if (packedOrPaged)
    return op->emitOpError() << "has a 'block_mask' and a packed batch or KV "
                                "cache; block masks take dense operands";
  auto blocks = [](int64_t seq, int64_t block) {
    return ShapedType::isDynamic(seq) ? ShapedType::kDynamic
                                      : llvm::divideCeil(seq, block);
  };
  int64_t queryBlocks = blocks(dims.querySeq, (*blockSize)[0]);
  int64_t keyBlocks = blocks(dims.keySeq, (*blockSize)[1]);
  auto checkLists = [&](ValueRange lists, StringRef name, int64_t rows,
                        StringRef rowName) -> LogicalResult {
    for (auto [i, list] : llvm::enumerate(lists)) {
      auto type = cast<RankedTensorType>(list.getType());
      bool counts = i % 2 == 0;
      ArrayRef<int64_t> shape = type.getShape();
      bool ok = shape.size() == (counts ? 3u : 4u) &&
                (shape[0] == 1 || dimsCompatible(shape[0], dims.batch)) &&
                (shape[1] == 1 || dimsCompatible(shape[1], dims.queryHeads)) &&
                dimsCompatible(shape[2], rows) && (counts || shape[3] != 0);
      if (!ok)
        return op->emitOpError()
               << "'" << name << "' operand #" << i << " ("
               << (i < 2 ? "" : "full blocks' ")
               << (counts ? "counts" : "indices") << ") must have shape "
               << formatShape(
                      counts ? SmallVector<int64_t>{dims.batch, dims.queryHeads,
                                                    rows}
                             : SmallVector<int64_t>{dims.batch, dims.queryHeads,
                                                    rows, ShapedType::kDynamic})
               << " (" << rowName << (counts ? "" : ", a non-zero list")
               << "; B and Hq may be 1), got " << formatShape(shape);
      if (!counts) {
        auto countType = cast<RankedTensorType>(lists[i - 1].getType());
        for (unsigned d = 0; d < 3; ++d)
          if (!dimsCompatible(countType.getDimSize(d), shape[d]))
            return op->emitOpError()
                   << "'" << name << "' operand #" << i
                   << " must have the leading dims of its counts (operand #"
                   << i - 1 << "), got " << formatShape(shape) << " and "
                   << formatShape(countType.getShape());
      }
    }
    return success();
  };
  if (failed(checkLists(kvLists, "block_mask", queryBlocks,
                        "[B, Hq, ceil(Sq / BQ)]")))
    return failure();
  if (qLists && failed(checkLists(*qLists, "q_block_mask", keyBlocks,
                                  "[B, Hq, ceil(Sk / BK)]")))
    return failure();
  return success();
}

/// Verifies an optional LSE value of shape [B, Hq, Sq] f32.
LogicalResult verifyLse(Operation *op, Value lse, StringRef name,
                        const AttentionDims &dims) {
  return verifyTypeIs(op, lse, name,
                      {dims.batch, dims.queryHeads, dims.querySeq},
                      Float32Type::get(op->getContext()), "[B, Hq, Sq], f32");
}
} // namespace

//===----------------------------------------------------------------------===//
// Block masks
//===----------------------------------------------------------------------===//

BlockMask attn::getBlockMask(Operation *op) {
  auto lists = [](ValueRange operands) {
    BlockLists l;
    if (operands.size() >= 2) {
      l.counts = operands[0];
      l.indices = operands[1];
    }
    if (operands.size() == 4) {
      l.fullCounts = operands[2];
      l.fullIndices = operands[3];
    }
    return l;
  };
  auto make = [&](auto concrete) {
    BlockMask mask;
    std::optional<ArrayRef<int64_t>> size = concrete.getBlockSize();
    if (concrete.getBlockMask().empty() || !size || size->size() != 2)
      return mask;
    mask.blockQ = (*size)[0];
    mask.blockK = (*size)[1];
    mask.kv = lists(concrete.getBlockMask());
    if constexpr (std::is_same_v<decltype(concrete), AttentionGradOp>)
      mask.q = lists(concrete.getQBlockMask());
    return mask;
  };
  if (auto a = dyn_cast<AttentionOp>(op))
    return make(a);
  if (auto g = dyn_cast<AttentionGradOp>(op))
    return make(g);
  return BlockMask();
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  FailureOr<AttentionDims> dims = verifyAttentionOperands(
      *this, getQuery(), getKey(), getValue(), getMask(), getScale(),
      getCausal(), getWindow(), getLayout(), getKvLens(), getBlockTable(),
      getQueryOffsets(), getKeyOffsets());
  if (failed(dims))
    return failure();
  // A packed batch's O and LSE are packed as Q is: a leading 1.
  AttentionDims stored = *dims;
  if (getQueryOffsets())
    stored.batch = 1;
  Type elementType = getQuery().getType().getElementType();
  if (failed(verifyTypeIs(*this, getOutput(), "output",
                          getStoredShape(getLayout(), stored.batch,
                                         dims->queryHeads, dims->querySeq,
                                         dims->valueDim),
                          elementType,
                          "[B, Hq, Sq, Dv] in the op's layout, query's "
                          "element type")))
    return failure();
  if (getLse() && failed(verifyLse(*this, getLse(), "lse", stored)))
    return failure();
  if (failed(verifyBlockMask(*this, getBlockMask(), std::nullopt,
                             getBlockSize(), *dims,
                             getQueryOffsets() || getKvLens())))
    return failure();
  if (failed(verifyModRegions(*this, getScoreMod(), getMaskMod(),
                              getModOperands(), getModNameAttr(),
                              /*needDerivative=*/false)))
    return failure();
  return verifyElementCounts(*this);
}

//===----------------------------------------------------------------------===//
// AttentionPartialOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionPartialOp::verify() {
  FailureOr<AttentionDims> dims = verifyAttentionOperands(
      *this, getQuery(), getKey(), getValue(), getMask(), getScale(),
      getCausal(), getWindow(), getLayout(), getKvLens(), getBlockTable());
  if (failed(dims))
    return failure();
  int64_t n = getNumSplits();
  if (n < 1)
    return emitOpError() << "'num_splits' must be at least 1, got " << n;
  // Every split is a row of partial results, whatever B is.
  if (n > kMaxElements)
    return emitOpError() << "'num_splits' must be at most 2^48 = "
                         << kMaxElements << ", got " << n;
  Type f32 = Float32Type::get(getContext());
  if (getBalanced()) {
    if (!getKvLens())
      return emitOpError() << "is 'balanced' but has no 'kv_lens': the work "
                              "is balanced by the sequences' key counts";
    if (!getSplitOffsets())
      return emitOpError() << "is 'balanced' but has no 'split_offsets' "
                              "result (i32 [B + 1], each sequence's first "
                              "work item)";
    // N work items per sequence on average: the combine's reads stay in
    // the N * B items whatever the lengths.
    int64_t items = ShapedType::kDynamic, offsets = ShapedType::kDynamic;
    if (!ShapedType::isDynamic(dims->batch)) {
      // Checked: a wrapped product would accept a partial_output of the
      // wrong size.
      std::optional<int64_t> total = llvm::checkedMul(n, dims->batch);
      if (!total || *total > kMaxElements)
        return emitOpError()
               << "has num_splits * B = " << n << " * " << dims->batch
               << " work items, more than 2^48 = " << kMaxElements;
      items = *total;
      offsets = dims->batch + 1;
    }
    if (failed(verifyTypeIs(
            *this, getPartialOutput(), "partial_output",
            {items, 1, dims->queryHeads, dims->querySeq, dims->valueDim}, f32,
            "[num_splits * B, 1, Hq, Sq, Dv], f32: balanced work items")) ||
        failed(verifyTypeIs(*this, getPartialLse(), "partial_lse",
                            {items, 1, dims->queryHeads, dims->querySeq}, f32,
                            "[num_splits * B, 1, Hq, Sq], f32")) ||
        failed(verifyTypeIs(*this, getSplitOffsets(), "split_offsets",
                            {offsets}, IntegerType::get(getContext(), 32),
                            "[B + 1], i32")))
      return failure();
  } else {
    if (getSplitOffsets())
      return emitOpError() << "has a 'split_offsets' result but is not "
                              "'balanced'";
    if (failed(verifyTypeIs(
            *this, getPartialOutput(), "partial_output",
            {n, dims->batch, dims->queryHeads, dims->querySeq, dims->valueDim},
            f32, "[num_splits, B, Hq, Sq, Dv], f32")))
      return failure();
    if (failed(verifyTypeIs(*this, getPartialLse(), "partial_lse",
                            {n, dims->batch, dims->queryHeads, dims->querySeq},
                            f32, "[num_splits, B, Hq, Sq], f32")))
      return failure();
  }
  if (failed(verifyModRegions(*this, getScoreMod(), getMaskMod(),
                              getModOperands(), getModNameAttr(),
                              /*needDerivative=*/false)))
    return failure();
  return verifyElementCounts(*this);
}

//===----------------------------------------------------------------------===//
// CombineOp
//===----------------------------------------------------------------------===//

LogicalResult CombineOp::verify() {
  auto poType = getPartialOutput().getType();
  Type f32 = Float32Type::get(getContext());
  if (poType.getRank() != 5 || poType.getElementType() != f32)
    return emitOpError() << "'partial_output' must be a rank-5 f32 tensor "
                            "[N, B, Hq, Sq, Dv], got "
                         << poType;
  if (poType.isDynamicDim(2) || poType.isDynamicDim(4))
    return emitOpError() << "'partial_output' must have a static head count "
                            "and head dim, got shape "
                         << formatShape(poType.getShape());
  ArrayRef<int64_t> po = poType.getShape();
  // As for the attention ops: zero heads or a zero value dim leave nothing
  // to combine, and the lowerings tile the value dim.
  if (po[2] == 0 || po[4] == 0)
    return emitOpError() << "'partial_output' must have a non-zero head "
                            "count and value dim, got Hq = "
                         << po[2] << " and Dv = " << po[4];
  if (po[4] > kMaxHeadDim)
    return emitOpError() << "'partial_output' value dim must be at most "
                         << kMaxHeadDim << ", got Dv = " << po[4];
  if (failed(verifyTypeIs(*this, getPartialLse(), "partial_lse", po.drop_back(),
                          f32, "the leading dims of 'partial_output', f32")))
    return failure();
  // With split_offsets the partial results are the work items of the whole
  // batch, and the offsets give B.
  int64_t batch = po[1];
  if (Value offsets = getSplitOffsets()) {
    if (po[1] != 1 && !ShapedType::isDynamic(po[1]))
      return emitOpError() << "'partial_output' must be [W, 1, Hq, Sq, Dv] "
                              "work items with 'split_offsets', got shape "
                           << formatShape(po);
    auto offType = cast<RankedTensorType>(offsets.getType());
    if (offType.getRank() != 1)
      return emitOpError() << "'split_offsets' must be i32 [B + 1], got "
                           << offType;
    batch = offType.isDynamicDim(0) ? ShapedType::kDynamic
                                    : offType.getDimSize(0) - 1;
    if (batch < 0 && !ShapedType::isDynamic(batch))
      return emitOpError() << "'split_offsets' must be i32 [B + 1], got "
                           << offType;
  }
  auto oType = getOutput().getType();
  if (!isSupportedElementType(oType.getElementType()))
    return emitOpError() << "'output' element type must be f16, bf16 or f32, "
                            "got "
                         << oType.getElementType();
  if (failed(verifyTypeIs(
          *this, getOutput(), "output",
          getStoredShape(getLayout(), batch, po[2], po[3], po[4]),
          oType.getElementType(), "[B, Hq, Sq, Dv] in the op's layout")))
    return failure();
  if (getLse() &&
      failed(verifyTypeIs(*this, getLse(), "lse", {batch, po[2], po[3]}, f32,
                          "[B, Hq, Sq], f32")))
    return failure();
  return verifyElementCounts(*this);
}

//===----------------------------------------------------------------------===//
// AttentionGradOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionGradOp::verify() {
  FailureOr<AttentionDims> dims = verifyAttentionOperands(
      *this, getQuery(), getKey(), getValue(), getMask(), getScale(),
      getCausal(), getWindow(), getLayout());
  if (failed(dims))
    return failure();
  Type elementType = getQuery().getType().getElementType();
  SmallVector<int64_t> oShape =
      getStoredShape(getLayout(), dims->batch, dims->queryHeads, dims->querySeq,
                     dims->valueDim);
  StringRef oWhat = "[B, Hq, Sq, Dv] in the op's layout, query's element type";
  if (failed(verifyTypeIs(*this, getOutput(), "output", oShape, elementType,
                          oWhat)) ||
      failed(verifyTypeIs(*this, getGradOutput(), "grad_output", oShape,
                          elementType, oWhat)) ||
      failed(verifyLse(*this, getLse(), "lse", *dims)))
    return failure();
  for (auto [result, operand, name] :
       {std::make_tuple(getGradQuery(), getQuery(), "grad_query"),
        std::make_tuple(getGradKey(), getKey(), "grad_key"),
        std::make_tuple(getGradValue(), getValue(), "grad_value")}) {
    auto type = cast<RankedTensorType>(operand.getType());
    if (failed(verifyTypeIs(*this, result, name, type.getShape(),
                            type.getElementType(),
                            "the shape and element type of its operand")))
      return failure();
  }
  if (failed(verifyBlockMask(*this, getBlockMask(), getQBlockMask(),
                             getBlockSize(), *dims, /*packedOrPaged=*/false)))
    return failure();
  if (failed(verifyModRegions(*this, getScoreMod(), getMaskMod(),
                              getModOperands(), getModNameAttr(),
                              /*needDerivative=*/true)))
    return failure();
  return verifyElementCounts(*this);
}
