//===- AttnToLoops.h - attn ops to tiled loops ------------------*- C++ -*-===//

#ifndef ATTN_CONVERSION_ATTNTOLOOPS_ATTNTOLOOPS_H
#define ATTN_CONVERSION_ATTNTOLOOPS_ATTNTOLOOPS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewriterBase;
namespace attn {

#define GEN_PASS_DECL_ATTNTILEPASS
#include "attn/Conversion/Passes.h.inc"

/// How one attn op is tiled.
struct AttnTileSizes {
  /// Query rows per tile (for split-KV: packed (query head, query) rows).
  int64_t blockQ = 0;
  /// Keys per tile.
  int64_t blockKV = 0;
  /// Bytes of workgroup memory the tiles of one loop nest take.
  int64_t workgroupBytes = 0;
};

/// The bytes of workgroup memory that tiles of `blockQ` x `blockKV` take for
/// `op` (Q, K, V tiles; for attn.attention_grad also the dO tile).
int64_t getAttnTileWorkgroupBytes(Operation *op, int64_t blockQ,
                                  int64_t blockKV);

/// Picks the tile sizes of an attn op: the requested ones where non-zero
/// (checked against `smemBudget`), otherwise defaults from the head dim, the
/// element type, the budget and (for static shapes) the sequence lengths.
/// Emits an error on `op` and fails when the tiles cannot fit the budget.
FailureOr<AttnTileSizes> chooseAttnTileSizes(Operation *op, int64_t blockQ,
                                             int64_t blockKV,
                                             int64_t smemBudget);

/// Everything the tiled lowering of one op needs besides the op.
struct AttnTileConfig {
  AttnTileSizes sizes;
  /// Memory space of the Q/K/V/dO tile buffers; null for the default one.
  Attribute memorySpace;
  /// Gradients: dQ from its own loop nest rather than atomic adds.
  bool deterministic = true;
};

/// Replaces an attn op (attention, attention_partial, combine or
/// attention_grad) by tiled loops on buffers.
LogicalResult tileAttnOp(RewriterBase &rewriter, Operation *op,
                         const AttnTileConfig &config);

/// A human-readable account of the tiling of `op`: tile sizes, workgroup
/// memory and, for static shapes, the HBM bytes and matmul FLOPs of the
/// tiled loops next to those of standard attention.
std::string describeAttnTiling(Operation *op, const AttnTileConfig &config);

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_ATTNTOLOOPS_ATTNTOLOOPS_H
