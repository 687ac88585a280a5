//===- AttnOps.h - attn operations ------------------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_H
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_H

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <type_traits>

#include "attn/Dialect/Attn/IR/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.h.inc"

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.h.inc"

namespace mlir {
namespace attn {

/// Position of the heads and sequence dimensions of a rank-4 Q/K/V/O tensor
/// stored in `layout`. Batch is dimension 0 and the head dim is 3 in both.
inline unsigned getHeadsDim(Layout layout) {
  return layout == Layout::BHSD ? 1 : 2;
}
inline unsigned getSeqDim(Layout layout) {
  return layout == Layout::BHSD ? 2 : 1;
}

/// The largest head dim D and value head dim Dv an attn op may have. Tiles
/// are [rows, D] buffers and every lowering multiplies D by tile sizes and
/// element sizes in int64; 2^16 keeps those products far from overflow.
/// (The GPU kernels take D, Dv up to 256.)
constexpr int64_t kMaxHeadDim = int64_t(1) << 16;
/// The range of an op's `scale`: the lowerings divide the mask by it.
inline constexpr double kMinScale = 0x1p-64, kMaxScale = 0x1p64;

/// The most elements an operand or result of an attn op may hold, counting
/// its static dims (2^48; dynamic dims are the sizes of real tensors at run
/// time). Within it every index, offset and size the lowerings derive from
/// the shapes (B Hq Sq rows, Sq + Sk, tile counts) fits int64 with room to
/// spare.
constexpr int64_t kMaxElements = int64_t(1) << 48;

/// The product of the static dims of `type`, or nullopt when it exceeds
/// kMaxElements.
std::optional<int64_t> getStaticElementCount(ShapedType type);

/// The logical sizes of an attention problem (ShapedType::kDynamic where the
/// IR leaves them dynamic).
struct AttentionDims {
  int64_t batch, queryHeads, kvHeads, querySeq, keySeq, headDim, valueDim;

  /// Q heads per K/V head.
  int64_t groupSize() const { return queryHeads / kvHeads; }
};

/// Reads the logical sizes from Q, K, V types stored in `layout`. The types
/// must be verified rank-4 tensors.
AttentionDims getAttentionDims(Layout layout, ShapedType query, ShapedType key,
                               ShapedType value);

/// The rank-4 shape of a [B, H, S, X] tensor stored in `layout`.
SmallVector<int64_t> getStoredShape(Layout layout, int64_t batch,
                                    int64_t heads, int64_t seq, int64_t last);

/// The softmax scale of an op: its `scale` attribute, or 1/sqrt(D).
double getEffectiveScale(std::optional<llvm::APFloat> scale, int64_t headDim);

/// What the attributes and operand types of attention, attention_partial and
/// attention_grad say about the computation, read once for every lowering.
struct AttentionConfig {
  Layout layout;
  CausalKind causal;
  std::optional<int64_t> window;
  double scale;
  /// With a paged cache, `dims.keySeq` is the capacity max_pages x
  /// page_size and `dims.batch` Q's batch (not the pools' page count).
  AttentionDims dims;
  /// Per-sequence key counts (`kv_lens`), and K/V in pages (`block_table`)
  /// of `pageSize` rows (ShapedType::kDynamic when the IR leaves it so).
  bool kvLens = false, paged = false;
  int64_t pageSize = 0;
  /// Packed batches (`query_offsets`, `key_offsets`): `dims.batch` is the
  /// sequence count, `dims.querySeq` (`keySeq`) the packed rows T (Tk).
  bool packedQueries = false, packedKeys = false;
};

/// The sequence count of a packed batch with `offsets` (i32 [B + 1]).
inline int64_t getPackedBatch(ShapedType offsets) {
  int64_t n = offsets.getDimSize(0);
  return ShapedType::isDynamic(n) || n < 1 ? ShapedType::kDynamic : n - 1;
}

/// The capacity of a paged cache, max_pages x page_size (dynamic when
/// either is).
int64_t getPagedCapacity(int64_t maxPages, int64_t pageSize);

template <typename OpTy>
AttentionConfig getAttentionConfig(OpTy op) {
  AttentionConfig c;
  c.layout = op.getLayout();
  c.causal = op.getCausal();
  c.window = op.getWindow();
  c.dims = getAttentionDims(c.layout, op.getQuery().getType(),
                            op.getKey().getType(), op.getValue().getType());
  c.scale = getEffectiveScale(op.getScale(), c.dims.headDim);
  if constexpr (std::is_same_v<OpTy, AttentionOp>) {
    if (Value offsets = op.getQueryOffsets()) {
      c.packedQueries = true;
      c.dims.batch = getPackedBatch(cast<ShapedType>(offsets.getType()));
    }
    c.packedKeys = static_cast<bool>(op.getKeyOffsets());
  }
  if constexpr (std::is_same_v<OpTy, AttentionOp> ||
                std::is_same_v<OpTy, AttentionPartialOp>) {
    c.kvLens = static_cast<bool>(op.getKvLens());
    if (Value table = op.getBlockTable()) {
      c.paged = true;
      c.pageSize = c.dims.keySeq;
      c.dims.keySeq = getPagedCapacity(
          cast<ShapedType>(table.getType()).getDimSize(1), c.pageSize);
    }
  }
  return c;
}

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_H
