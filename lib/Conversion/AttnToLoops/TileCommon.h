//===- TileCommon.h - building blocks of the tiled attn loops ---*- C++ -*-===//
//
// Shared by the forward, split-KV, combine and gradient lowerings: index
// arithmetic, buffers and tiles, the score tile with its masks, and the
// helpers that keep every tile access in bounds.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOLOOPS_TILECOMMON_H
#define ATTN_LIB_CONVERSION_ATTNTOLOOPS_TILECOMMON_H

#include "attn/Conversion/AttnToLoops/AttnToLoops.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/BlockMask.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {
namespace tile {

using utils::IteratorType;

constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;
constexpr IteratorType par = IteratorType::parallel;
constexpr IteratorType red = IteratorType::reduction;

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

/// Index arithmetic that folds constants as it goes, so that loop bounds of
/// static shapes stay readable in the output.
struct IndexMath {
  OpBuilder &b;
  Location loc;

  Value c(int64_t v);
  Value add(Value x, Value y);
  Value sub(Value x, Value y);
  Value mul(Value x, Value y);
  /// Floor division of non-negative values.
  Value div(Value x, Value y);
  /// Remainder of non-negative values.
  Value rem(Value x, Value y);
  /// Ceiling division of a non-negative value by a positive one.
  Value ceilDiv(Value x, Value y);
  Value min(Value x, Value y);
  Value max(Value x, Value y);
  Value cmp(arith::CmpIPredicate pred, Value x, Value y);
  Value andI(Value x, Value y);
  Value select(Value cond, Value x, Value y);
};

Value constF32(OpBuilder &b, Location loc, double v);
Value negInf(OpBuilder &b, Location loc);
Value toF32(OpBuilder &b, Location loc, Value v);
/// `v` converted to `type` (f32 -> f16/bf16 truncation, or nothing).
Value fromF32(OpBuilder &b, Location loc, Value v, Type type);
/// `m` with -inf replaced by 0, so that exp(s - m) is 0 (not NaN) on a row
/// where every score is -inf.
Value safeMax(OpBuilder &b, Location loc, Value m);

/// Rows [begin, end) of sequence `batch` of a packed buffer of `rows`
/// rows (or work items of split-KV's split_offsets): offsets[batch] and
/// offsets[batch + 1] (an i32 memref), clamped into [0, rows] and never
/// decreasing, so that no offset the device holds reads past it.
std::pair<Value, Value> packedRows(OpBuilder &b, Location loc, Value offsets,
                                   Value batch, Value rows);

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

/// A read-only view of a tensor operand with a fully dynamic strided layout,
/// so that whatever buffer bufferization picks for it fits.
Value toReadOnlyBuffer(OpBuilder &b, Location loc, Value tensor);

/// A fresh identity-layout buffer for a result of type `type`; `sizes`
/// holds one size per dim (only the dynamic ones are used).
Value allocResult(OpBuilder &b, Location loc, RankedTensorType type,
                  ArrayRef<Value> sizes);

/// Hands a result buffer back to the tensor world.
Value toTensorResult(OpBuilder &b, Location loc, RankedTensorType type,
                     Value buffer);

/// Replaces an op with an output and an optional LSE result (attention,
/// combine) by the tensors of the buffers `out` and `lse` (null when the op
/// has no LSE).
template <typename OpTy>
void replaceWithOutputAndLse(RewriterBase &rewriter, Location loc, OpTy op,
                             Value out, Value lse) {
  SmallVector<Value> results = {
      toTensorResult(rewriter, loc, op.getOutput().getType(), out)};
  if (lse)
    results.push_back(
        toTensorResult(rewriter, loc, op.getLse().getType(), lse));
  rewriter.replaceOp(op, results);
}

/// A static tile buffer in `memorySpace` (null: the default space).
Value allocTile(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                Type elementType, Attribute memorySpace = {});

/// One row of a rank-2 tile (a rank-1 view).
Value tileRow(OpBuilder &b, Location loc, Value tile, Value row);

void fill(OpBuilder &b, Location loc, Value buffer, double v);

/// An scf.if (x < bound) with no results and no else block; leaves the
/// insertion point in its then block (a ring's load of a step that may not
/// exist).
void beginIfLess(OpBuilder &b, Location loc, Value x, Value bound);

/// An scf.for with no results; returns its induction variable and leaves
/// the insertion point in its body.
Value beginFor(OpBuilder &b, Location loc, Value lb, Value ub, Value step);

/// An scf.forall with no results over `[0, ubs)`; returns the induction
/// variables and leaves the insertion point in its body. `blocks` maps each
/// dimension to a GPU grid dimension (`#gpu.block<x|y|z>`), the form a GPU
/// lowering launches it in; empty: no mapping.
SmallVector<Value> beginForall(OpBuilder &b, Location loc,
                               ArrayRef<Value> ubs,
                               ArrayRef<gpu::MappingId> blocks = {});

//===----------------------------------------------------------------------===//
// Tile ops
//===----------------------------------------------------------------------===//

/// The buffer indices of a tile row, for tile.load / tile.store regions.
using RowIndices =
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value row)>;

/// A tile.load of the rows `[0, rows)` of `tile` from `source`, row r from
/// `indices(r)`.
TileLoadOp tileLoad(OpBuilder &b, Location loc, Value source, Value tile,
                    Value rows, RowIndices indices);

/// A tile.store of the rows `[0, rows)` of `tile` into `dest`.
void tileStore(OpBuilder &b, Location loc, Value tile, Value dest, Value rows,
               RowIndices indices);

/// A tile.map to `type` whose element is `fn(indices, elements)`; `maps`
/// where the inputs' default broadcast does not apply.
Value tileMap(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange, ValueRange)> fn,
    ArrayRef<AffineMap> maps = {});

/// Reduces dimension `dim` of `input` (the last when absent) into `init`.
Value tileReduce(OpBuilder &b, Location loc, TileReduceKind kind, Value input,
                 Value init, std::optional<int64_t> dim = std::nullopt);

/// A register tile of `type` holding `v` everywhere.
Value splat(OpBuilder &b, Location loc, RankedTensorType type, double v);

/// The stored indices of (batch, head, seq) in `layout`.
SmallVector<Value> storedIndices(Layout layout, Value batch, Value head,
                                 Value seq);

/// Marks the loop nest around the insertion point with the schedule.
void setSchedule(OpBuilder &b, const AttnTileConfig &config);

//===----------------------------------------------------------------------===//
// The attention problem on buffers
//===----------------------------------------------------------------------===//

/// The operands and attributes of an attention op, read through buffers.
struct Problem : AttentionConfig {
  Value query, key, value, mask;
  Type elementType;
  /// Columns of the memory and register tiles that hold rows of Q, K (dQ,
  /// dK) and of V, O (dO, dV): the schedule's padded head dims
  /// (AttnTileSizes::headCols); the buffers' rows keep D and Dv.
  int64_t headCols = 0, valueCols = 0;
  bool boolMask = false;
  /// Runtime sizes.
  Value batch, querySeq, keySeq, queryHeads, kvHeads;
  /// Query heads per key/value head.
  Value group;
  /// Key index of the causal diagonal of query 0: 0 or Sk - Sq.
  Value diagOffset;
  /// The sliding window (index, < 0: none; at most Sq + Sk, which hides
  /// the same keys as any wider window) and whether there is one (i1); set
  /// with a causal kind only.
  Value windowSize, hasWindow;
  /// scale * log2(e), f32.
  Value scaleLog2;
  /// The score and mask modifications (null without), the buffers of the
  /// tensors they read, and, with a score modification, the scale and its
  /// inverse (f32): the region takes scaled scores, the tile form's are
  /// unscaled.
  Region *scoreMod = nullptr, *maskMod = nullptr;
  SmallVector<Value> modOperands;
  Value modScale, modInvScale;
  /// Per-sequence key counts (i32 [B]) and the block table of a paged
  /// cache (i32 [B, max_pages]); null without. With a block table, K and V
  /// are page pools of `pageSize` rows and `keySeq` is the capacity.
  Value kvLens, blockTable, pageSize;
  /// Packed batches: the first row of every sequence and the end of the
  /// last (i32 [B + 1]) of Q (and O, LSE) and of K and V; null without.
  /// The problem's `querySeq` (`keySeq`) is then the packed rows, and
  /// forBatch's the sequence's own count, from row `queryBase`
  /// (`keyBase`).
  Value queryOffsets, keyOffsets, queryBase, keyBase;
  /// The block mask (BlockMask.h) on buffers: the sizes of its query and
  /// key blocks (0 without one), the key blocks of each query block and,
  /// for gradients, the query blocks of each key block.
  int64_t maskBlockQ = 0, maskBlockK = 0;
  BlockLists kvBlocks, qBlocks;

  /// The problem of sequence `batch`: with per-sequence counts (kv_lens,
  /// offsets), its own Sq and Sk (clamped into the buffers) and causal
  /// diagonal; itself without.
  Problem forBatch(OpBuilder &b, Location loc, Value batch) const;
  /// The stored indices of the Q (O) row of query `i` of head `head` of
  /// sequence `batch`, and of its LSE.
  SmallVector<Value> queryIndices(OpBuilder &b, Location loc, Value batch,
                                  Value head, Value i) const;
  SmallVector<Value> lseIndices(OpBuilder &b, Location loc, Value batch,
                                Value head, Value i) const;
  /// The stored indices of the K/V row of key `j` of key/value head
  /// `kvHead` of sequence `batch` (through the block table when paged).
  SmallVector<Value> keyIndices(OpBuilder &b, Location loc, Value batch,
                                Value kvHead, Value j) const;
};

/// How getProblem reads sizes and scalars.
enum class ProblemForm {
  /// Static sizes and the op's scale and window as constants.
  Constant,
  /// What a GPU kernel sees: every size but the head dims read from the
  /// buffers, scale and window as `attn.tile.param`s, so one kernel serves
  /// every shape and every value the ABI passes at launch.
  Kernel,
};

/// The problem of `op` tiled with `sizes` (its tile columns).
template <typename OpTy>
Problem getProblem(OpBuilder &b, Location loc, OpTy op,
                   const AttnTileSizes &sizes,
                   ProblemForm form = ProblemForm::Constant);

/// Where the rows of a query tile come from. Plain tiles hold consecutive
/// queries of one head; packed tiles (split-KV) hold the `groupSize` query
/// heads of one key/value head, row `x` of the packed sequence being query
/// `x mod Sq` of head `head + x floordiv Sq`.
struct RowTile {
  Value batch;
  /// The query head (plain) or the first query head of the group (packed).
  Value head;
  /// First query position (plain) or first packed row (packed).
  Value rowBegin;
  /// Rows of the tile that exist.
  Value rows;
  bool packed = false;

  /// (query head, query position) of tile row `r`. Rows past `rows` are
  /// clamped to the last valid row so that any load they drive is in
  /// bounds.
  std::pair<Value, Value> coords(IndexMath &ix, const Problem &p,
                                 Value r) const;
  /// The smallest and largest query position among the valid rows.
  std::pair<Value, Value> queryRange(IndexMath &ix, const Problem &p) const;
};

/// Opens an scf.forall over (batch, query head, query tile of `blockQ` rows)
/// at the builder's insertion point and returns the body's plain row tile.
/// On a GPU the three go to grid dimensions z, y and x; under a causal
/// mask the tiles are handed out last first, so that the longest ones (the
/// most visible keys) start in the first wave. With `seq`, sets it to the
/// body's sequence (Problem::forBatch) and counts the rows in it: a packed
/// batch's grid covers its packed rows, and the tiles past a sequence's
/// own rows have none. With `valueBlocks` (AttnTileSizes::valueBlocks) the
/// query tile dimension has that many iterations per tile, the value block
/// set in `valueBlock`.
RowTile beginQueryTileForall(OpBuilder &b, Location loc, const Problem &p,
                             int64_t blockQ, Problem *seq = nullptr,
                             int64_t valueBlocks = 1,
                             Value *valueBlock = nullptr);

/// `p` reduced to value block `block` of `blocking` (a forward or split-KV
/// op's, AttnTileSizes::valueBlocks): V viewed at the block's columns
/// (`valueCols` is already the block's tiles'). Sets `first` to the
/// block's first column.
Problem valueBlockProblem(OpBuilder &b, Location loc, const Problem &p,
                          const ValueBlocking &blocking, Value block,
                          Value &first);

/// The columns `[first, first + width)` of `buffer` (any rank, the last
/// dim the columns), every other dim whole.
Value columnView(OpBuilder &b, Location loc, Value buffer, Value first,
                 int64_t width);

/// The keys `[begin, end)` that some query in `[iLo, iHi]` may see under the
/// causal kind and window (all of `[0, Sk)` without them).
std::pair<Value, Value> visibleKeys(IndexMath &ix, const Problem &p, Value iLo,
                                    Value iHi);

/// The queries `[begin, end)` that may see some key in `[jLo, jHi]`.
std::pair<Value, Value> visibleQueries(IndexMath &ix, const Problem &p,
                                       Value jLo, Value jHi);

/// Whether query `i` sees key `j` under the causal kind and window, keys at
/// or past `jEnd` being hidden too.
Value keyVisible(IndexMath &ix, const Problem &p, Value i, Value j,
                 Value jEnd);

/// Whether some key of the tile `[j0, j0 + blockKV)` is hidden from some
/// query of `rows` by `keyVisible` (an i1, folded for static shapes): only
/// such tiles evaluate the index masks.
Value tileNeedsIndexMasks(IndexMath &ix, const Problem &p, const RowTile &rows,
                          Value j0, int64_t blockKV, Value jEnd);

/// `score` (unscaled) of tile row `r` and key `j` with the score
/// modification applied, then the mask operand (added, times `maskScale`
/// when given, or selected), with `indexMasks` -inf where `keyVisible` says
/// the key is hidden, and -inf where the mask modification does. The
/// modifications see key `j` clamped below Sk, so that padding keys (hidden
/// anyway) never make them read past their tensors. With `maskModOn` (an
/// i1) the mask modification applies only where it is true, and not at
/// all without `indexMasks`.
Value maskScore(OpBuilder &b, Location loc, const Problem &p,
                const RowTile &rows, Value score, Value r, Value j, Value jEnd,
                bool indexMasks, Value maskScale = Value(),
                Value maskModOn = Value());

/// The derivative of the score modification at the unscaled score
/// `rawScore` of tile row `r` and key `j` (see maskScore), times `grad`
/// (the gradient of the modified score), 0 where `prob` is 0 (a hidden
/// key, whose derivative may not be finite); `grad` without a score
/// modification.
Value scoreModGrad(OpBuilder &b, Location loc, const Problem &p,
                   const RowTile &rows, Value grad, Value prob, Value rawScore,
                   Value r, Value j);

/// Stage `stage` of a `[stages, rows, X]` ring of memory tiles, as a
/// `[rows, X]` tile.
Value ringStage(OpBuilder &b, Location loc, Value ring, Value stage);

/// `tile` (`[rows, X]`) as `slices` consecutive parts `[slices, rows /
/// slices, X]`; itself for one slice.
Value sliceRows(OpBuilder &b, Location loc, Value tile, int64_t slices);

/// The entries of one row block's lists of a block mask that a loop walks:
/// `partial` entries of `lists.indices` (the mask modification applies),
/// then `total - partial` of `lists.fullIndices`, each naming a column
/// block in `[0, numBlocks)` (entries clamped into it; counts into their
/// lists; `total` is 0 without column blocks).
struct BlockWalk {
  BlockLists lists;
  /// Where the lists and the full lists are read: batch, head (0 on a
  /// dim of size 1: broadcast) and row block.
  SmallVector<Value> at, fullAt;
  Value partial, total, numBlocks;

  /// Starts the walk of row block `row` of (`batch`, `head`).
  BlockWalk(IndexMath &ix, const BlockLists &lists, Value batch, Value head,
            Value row, Value numBlocks);
  /// The column block of entry `n` (< total).
  Value block(IndexMath &ix, Value n) const;
  /// Whether entry `n` is a full block (an i1).
  Value isFull(IndexMath &ix, Value n) const;
};

/// The K and V tiles of a loop over the key/value tiles of keys
/// `[jBegin, jEnd)` of key/value head `kvHead`: tile `n` covers keys
/// `[jBegin + n blockKV, +blockKV)` clipped at `jEnd` and goes to stage
/// `n mod stages` of a ring of each.
struct KeyValueRing {
  Value keys, values;
  Value jBegin, jEnd, kvHead;
  /// Key/value tiles the loop visits.
  Value numTiles;
  int64_t blockKV = 0, stages = 0;
  /// The iterations after its own in which a loop reads a value tile
  /// (kRingLagAttr on its loads): 1 in a rotated loop.
  int64_t valueLag = 0;

  /// Allocates the rings (after the tiles allocated before it: the order
  /// in which a GPU kernel lays out its shared memory).
  KeyValueRing(OpBuilder &b, Location loc, const Problem &p,
               const RowTile &rows, const AttnTileConfig &config);
  /// Sets the keys the rings carry and counts their tiles. With a block
  /// mask the tiles are those of the key blocks the rows' query block
  /// lists (whose first row is `rows.rowBegin`), in list order, keys past
  /// `jEnd` still hidden.
  void stream(OpBuilder &b, Location loc, Value kvHead, Value jBegin,
              Value jEnd);
  /// Loads tile `n` into its stage, when `n < numTiles` (an scf.if: one
  /// group of copies).
  void load(OpBuilder &b, Location loc, Value n) const;
  /// The first key of tile `n`.
  Value firstKey(IndexMath &ix, Value n) const;
  /// Whether the mask modification applies to tile `n` (an i1: false on
  /// a block mask's full blocks); null where it applies to every tile.
  Value maskModOn(IndexMath &ix, Value n) const;
  /// The stages of tile `n`.
  Value keyStage(OpBuilder &b, Location loc, Value n) const;
  Value valueStage(OpBuilder &b, Location loc, Value n) const;

private:
  const Problem *problem;
  RowTile rows;
  /// With a block mask: the walk of the rows' key blocks.
  std::optional<BlockWalk> walk;
};

/// The score tile `s` (`[Br, keys]`, or `[slices, Br, keys / slices]` with
/// key slices, unscaled) of keys from `j0` with the mask operand applied
/// and, on tiles that cross the diagonal, the window's edge or `jEnd`, the
/// index masks: -inf where `maskScore` says so. An additive mask is added
/// times `maskScale`. With `keyRows`, `s` is S^T (`[keys, Br]`, one slice):
/// its rows are the keys and its columns the query rows of `rows`.
/// `maskModOn` (an i1, or null: always) says whether the mask
/// modification applies to the tile (KeyValueRing::maskModOn).
Value maskedScores(OpBuilder &b, Location loc, const Problem &p,
                   const RowTile &rows, Value s, Value j0, Value jEnd,
                   int64_t blockKV, int64_t slices, Value maskScale,
                   bool keyRows = false, Value maskModOn = Value());

/// Forward, split-KV and gradient lowerings.
LogicalResult tileAttention(RewriterBase &rewriter, AttentionOp op,
                            const AttnTileConfig &config);
LogicalResult tileAttentionPartial(RewriterBase &rewriter,
                                   AttentionPartialOp op,
                                   const AttnTileConfig &config);
LogicalResult tileCombine(RewriterBase &rewriter, CombineOp op,
                          const AttnTileConfig &config);
LogicalResult tileAttentionGrad(RewriterBase &rewriter, AttentionGradOp op,
                                const AttnTileConfig &config);

} // namespace tile
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOLOOPS_TILECOMMON_H
