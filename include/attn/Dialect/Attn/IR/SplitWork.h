//===- SplitWork.h - balanced split-KV work items ---------------*- C++ -*-===//
//
// The work list of a `balanced` attn.attention_partial (FlashInfer's
// split-KV plan): chunks of one size for the whole batch, each sequence
// taking as many as its key count needs. Built as scalar loops over the
// sequences, so that attn-decompose (which defines it on tensors) and
// attn-tile (which runs it in every CTA of a kernel, the lengths being
// device data) emit the one definition.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_SPLITWORK_H
#define ATTN_DIALECT_ATTN_IR_SPLITWORK_H

#include "mlir/IR/Builders.h"

namespace mlir {
namespace attn {

/// The keys a chunk is a multiple of: whole tiles of every kernel's
/// block_kv, which divide it.
inline constexpr int64_t kBalancedChunkAlign = 128;

/// Emits the key count of sequence `batch` (index), already clamped to
/// [0, Sk].
using SequenceLength =
    function_ref<Value(OpBuilder &b, Location loc, Value batch)>;

/// The chunk of a batch of `batch` sequences (index) of at most `capacity`
/// (Sk) keys whose key counts sum to T, for `items` work items (N * B;
/// index): the first of the candidates (balancedChunkCandidates) whose
/// item count sum_b ceil(L_b / c) is at most `items`. T and the counts are
/// summed in 64 bits: on a GPU the index type is 32 bits, and B sequences
/// of up to 2^31 - 1 keys may sum past it.
Value balancedChunk(OpBuilder &b, Location loc, Value items, Value batch,
                    Value capacity, SequenceLength length);

/// The candidate chunks, tightest first: c_m = min(Sk, max(128, 128 *
/// ceil(T / (128 * max(1, m))))) for m = items, items - ceil(B / 2) and
/// items - B. The last always fits (sum_b ceil(L_b / c) <= T / c + B <=
/// items); a tighter one gives more, shorter items where the lengths
/// leave room, so that the items fill the grid more evenly. Past Sk a
/// larger chunk would change nothing (one item per sequence). `total` is
/// i64; `items`, `batch` and `capacity` are of one type (index or an
/// integer type), which the chunks have.
SmallVector<Value> balancedChunkCandidates(OpBuilder &b, Location loc,
                                           Value total, Value items,
                                           Value batch, Value capacity);

/// The first candidate whose item count (`counts`, i64, one for every
/// candidate but the last) is at most `items`, else the last.
Value pickBalancedChunk(OpBuilder &b, Location loc, ArrayRef<Value> candidates,
                        ArrayRef<Value> counts, Value items);

/// The items of a sequence of `length` keys: ceil(length / chunk).
Value sequenceItemCount(OpBuilder &b, Location loc, Value length, Value chunk);

/// The values a scanWorkItems body sees for sequence b: its first item
/// (split_offsets[b]) and its item count n_b = ceil(L_b / c).
struct SequenceItems {
  Value batch, first, count;
};

/// Runs `body` for b = 0 .. B - 1 in order, threading `inits` through its
/// results; returns the threaded values followed by the total item count
/// (split_offsets[B]).
SmallVector<Value> scanWorkItems(
    OpBuilder &b, Location loc, Value chunk, Value batch, SequenceLength length,
    ValueRange inits,
    function_ref<SmallVector<Value>(OpBuilder &, Location,
                                    const SequenceItems &, ValueRange)>
        body);

/// Work item `item` (index) as a chunk of a sequence: keys [begin, end) of
/// sequence `batch`. Past the last item, `batch` is 0 and the range empty.
struct WorkItem {
  Value batch, begin, end;
};
WorkItem findWorkItem(OpBuilder &b, Location loc, Value item, Value chunk,
                      Value batch, SequenceLength length);

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_IR_SPLITWORK_H
