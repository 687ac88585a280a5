//===- BlockMask.h - the block mask of the attention ops --------*- C++ -*-===//
//
// The operands of a block mask (block-sparse attention, FlexAttention's
// BlockMask) read once for every lowering.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_BLOCKMASK_H
#define ATTN_DIALECT_ATTN_IR_BLOCKMASK_H

#include "mlir/IR/Operation.h"

namespace mlir {
namespace attn {

/// One direction of a block mask: per row block, the count and list of the
/// column blocks it visits with the mask modification (`counts`,
/// `indices`) and without it (`fullCounts`, `fullIndices`, null when the
/// op has no full lists).
struct BlockLists {
  Value counts, indices, fullCounts, fullIndices;
};

/// The block mask of an attention op: blocks of `blockQ` queries by
/// `blockK` keys, the key blocks of each query block (`kv`) and, on
/// attention_grad, the query blocks of each key block (`q`).
struct BlockMask {
  int64_t blockQ = 0, blockK = 0;
  BlockLists kv, q;

  explicit operator bool() const { return blockQ != 0; }
};

/// The block mask of `op` (attention, attention_grad); empty for other ops
/// and for ops without one.
BlockMask getBlockMask(Operation *op);

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_IR_BLOCKMASK_H
