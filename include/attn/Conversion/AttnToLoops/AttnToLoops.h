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
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewriterBase;
namespace attn {

#define GEN_PASS_DECL_ATTNTILEPASS
#include "attn/Conversion/Passes.h.inc"

/// The loop nests of attn.attention_grad's tile form, each a GPU kernel:
/// the row statistics (LSE log2(e) and D = rowsum(dO O)), dK and dV per
/// key/value tile, dQ per query tile.
enum class GradNest { RowStats, KeyValue, Query };

/// How one attn op is tiled: its schedule (docs/Overview.md, "The tile
/// form"). attn-tile carries it on the loop nest it writes as an
/// `#attn.schedule` attribute.
struct AttnTileSizes {
  /// Query rows per tile (for split-KV: packed (query head, query) rows;
  /// for the combine: output rows).
  int64_t blockQ = 0;
  /// Keys per tile (for the combine: output columns).
  int64_t blockKV = 0;
  /// Key/value tiles in flight: the ring of memory tiles.
  int64_t stages = 1;
  /// Warps of one CTA on a GPU.
  int64_t warps = 4;
  /// Parts of every key/value tile with a softmax state of their own,
  /// merged after the loop (split-KV decode: one per warp).
  int64_t keySlices = 1;
  /// Bytes of workgroup (shared) memory the tiles of one loop nest take.
  int64_t workgroupBytes = 0;
  /// sm_90a: a producer warpgroup, besides the warps, issues the copies
  /// (warp specialisation).
  bool producer = false;
  /// Forward: the key/value loop is rotated so that the product P V of
  /// tile n - 1 sits next to S = Q K^T of tile n and the softmax of tile n
  /// can run while it does (FlashAttention-3's intra-warpgroup overlap);
  /// the ring then prefetches stages - 2 tiles ahead (stages >= 3).
  /// Gradients: each nest issues its dP product before the maps that read
  /// S, so that they run while it does.
  bool overlap = false;
  /// sm_90a, with a producer: a persistent grid. One CTA per SM walks the
  /// loop nest's tiles (grid-stride), and the producer loads the next
  /// tile's Q and K/V while the consumers finish the last (the GPU
  /// lowering's mapping of the scf.forall; the tile form is unchanged).
  bool persistent = false;
  /// Columns of the tiles that hold rows of Q and K (dQ, dK) and of V and
  /// O (dO, dV): the head dims D and Dv rounded up to whole tensor-core
  /// k-steps (kTileColumnStep). The loads fill the padding with zeros and
  /// the stores drop it, so a head dim the tensor cores do not divide
  /// costs a few zero columns of arithmetic, never a copy of the tensors.
  /// 0 for attn.combine, which has no such tiles.
  int64_t headCols = 0, valueCols = 0;
  /// Forward and split-KV: the value column blocks (valueBlocking). Each
  /// query tile (decode: row tile) is computed once per block, S = Q K^T
  /// and the softmax again each time, the product with V and the stores
  /// of O on that block's columns only, so that the f32 accumulator of O
  /// holds at most kMaxValueBlockCols columns. 1: all of Dv at once.
  /// `valueCols` is then the columns of one block's tiles.
  /// Gradients: the column blocks of dK and dV (the dK/dV nest) and of dQ
  /// (the dQ nest), a CTA each (gradBlocking): every block recomputes S
  /// and dP, its accumulators hold one block's columns, so that they fit
  /// in registers past D = 256; the tiles keep all columns.
  int64_t valueBlocks = 1;
  /// Gradients: the columns every column block of the tiles of D (Q, K;
  /// dQ, dK) and of Dv (V, dO; dV) starts on (gradBlocking's `align`,
  /// gradBlockAlign).
  int64_t headBlockAlign = 8, valueBlockAlign = 8;

  ScheduleAttr getAttr(MLIRContext *ctx) const;
};

/// The widest value column block a GPU kernel's accumulator of O holds:
/// 16-row MMA tiles of 256 f32 columns are 128 registers a thread, as at
/// D = 256 (ptxas spilled nothing there; twice that would not fit at all).
constexpr int64_t kMaxValueBlockCols = 256;

/// The columns of V (and O) that `count` value blocks of a value head dim
/// `valueDim` read and write: block c covers [first(c), first(c) + width)
/// with first(c) = min(c step, valueDim - width). `step` is a multiple of
/// 8 and `width` is `step` plus valueDim mod 8, so every block starts on a
/// multiple of 8 columns (whole 16-byte chunks of 2-byte elements where
/// the rows are) and the last one ends at valueDim; consecutive blocks
/// may overlap by a few columns, which both compute alike. One block:
/// step = width = valueDim.
struct ValueBlocking {
  int64_t count = 1, step = 0, width = 0;
};
ValueBlocking valueBlocking(int64_t valueDim, int64_t count);

/// The column blocks of a gradient's head dim `dim` (D for dQ and dK, Dv
/// for dV) whose tiles hold `cols` columns (a multiple of
/// kTileColumnStep and of `align`), in `count` blocks
/// (AttnTileSizes::valueBlocks): block c is columns [first(c), first(c) +
/// step) of the tiles and of the result with first(c) = min(c step,
/// lastFirst). `step` is a multiple of kTileColumnStep, so that its
/// products read whole k-steps, and of `align`, as is every first(c):
/// whole 16-byte chunks of 2-byte elements (8, sm_80's padded tiles), or
/// whole column blocks of a swizzled tile (gradBlockAlign, sm_90a), where
/// wgmma's descriptors start. Where `dim` is a multiple of 8 and dim -
/// step one of `align`, lastFirst = dim - step and every block writes
/// `step` columns (the last two may overlap, and compute the overlap
/// alike); otherwise lastFirst = cols - step and the last block writes the
/// dim - lastFirst that end at `dim`. `valid` is false where `count`
/// blocks cannot be cut so: fewer than a k-step each, or a block but the
/// last past `dim`.
struct GradBlocking {
  int64_t count = 1, step = 0, lastFirst = 0, align = 8;
  bool valid = true;
  /// The columns of the result the last block writes.
  int64_t lastWidth(int64_t dim) const { return dim - lastFirst; }
};
GradBlocking gradBlocking(int64_t dim, int64_t cols, int64_t count,
                          int64_t align = 8);

/// The swizzle of a memory tile with rows of `rowBytes` on sm_90a: the
/// widest of wgmma's and TMA's patterns (128, 64 or 32 bytes) that divides
/// the row; the row is then that many column blocks.
inline int64_t swizzleBytes(int64_t rowBytes) {
  return rowBytes % 128 == 0 ? 128 : rowBytes % 64 == 0 ? 64 : 32;
}

/// The widest column block of dK plus dV that the dK/dV nest of a GPU
/// kernel holds (16-row MMA tiles: 128 f32 registers a thread, what D = 128
/// holds without spilling), and of dQ in the dQ nest (kMaxValueBlockCols,
/// as O in the forward).
constexpr int64_t kMaxGradKeyValueCols = 256;

/// The columns a tile row holds a multiple of (AttnTileSizes::headCols):
/// the k-step of the tensor cores (mma.sync m16n8k16, wgmma k16), which is
/// also whole 32-byte swizzle chunks of 2-byte elements on sm_90a.
constexpr int64_t kTileColumnStep = 16;

/// On a tile.load of a ring in the tile form: the tile it loads for
/// iteration n of the loop that streams the ring is read in iteration
/// n + lag, and tile 0's in the first lag iterations too (a rotated loop's
/// values: 1). Absent: 0, read in iteration n. The GPU lowering waits for
/// and frees each lag's copies on barriers of their own.
constexpr llvm::StringLiteral kRingLagAttr = "attn.ring_lag";

/// The tensor-core mapping a schedule is for: sm_80's warps of mma.sync
/// with rows padded by 16 bytes in shared memory, or sm_90a's warpgroups
/// of wgmma (64 query rows each) with 128-byte-swizzled rows.
enum class TileTarget { Sm80, Sm90a };

/// The columns of the tiles that hold rows of `dim` elements of
/// `elementBytes` on `target` (AttnTileSizes::headCols): `dim` rounded up
/// to whole kTileColumnStep; on sm_90a a `dim` that needs padding takes the
/// cheapest of the roundings to 16, 32 and 64 columns once the swizzle its
/// rows take is counted (a 64- or 32-byte swizzle costs more per column
/// than a 128-byte one, docs/GPU.md).
int64_t tileColumns(int64_t dim, TileTarget target, int64_t elementBytes);

/// The widest dK plus dV accumulator that the dK/dV nest of a GPU kernel
/// for `target` keeps in one column block (AttnTileSizes::valueBlocks);
/// wider ones take blocks, each recomputing S and dP (TileSchedule.cpp).
int64_t gradOneBlockKeyValueCols(TileTarget target);

/// The columns every gradient column block starts on (gradBlocking's
/// `align`) in tiles of `cols` columns of `elementBytes`-byte elements:
/// on sm_90a a column block of the tile's swizzle (a view of a swizzled
/// tile starts one: TileToNVVM.cpp), elsewhere 8 (whole 16-byte chunks).
int64_t gradBlockAlign(int64_t cols, int64_t elementBytes, TileTarget target);

/// The column blocks a GPU kernel's gradient nest takes unless asked
/// (AttnTileSizes::valueBlocks): one where its accumulators fit (dQ, or dK
/// and dV in the dK/dV nest, `queryNest` false: gradOneBlockKeyValueCols),
/// else the fewest whose blocks of D and Dv (tiles of `headCols` and
/// `valueCols` columns) fit kMaxValueBlockCols (dQ) or together
/// kMaxGradKeyValueCols (dK and dV); 0 where no count does.
int64_t defaultGradBlocks(int64_t headDim, int64_t headCols, int64_t valueDim,
                          int64_t valueCols, int64_t elementBytes,
                          TileTarget target, bool queryNest);

/// The largest schedule a request may ask for (docs/Limits.md): query rows
/// and keys per tile (a CTA has at most 1024 threads, and tiles past that
/// only take memory), key/value tiles in flight, warps of a CTA (1024
/// threads), and the workgroup-memory budget (GPUs have 227 KiB; the CPU
/// runs allow more). Within them every size the cost model multiplies stays
/// far inside int64.
constexpr int64_t kMaxTileBlock = 1024;
constexpr int64_t kMaxTileStages = 16;
constexpr int64_t kMaxTileWarps = 32;
constexpr int64_t kMaxSmemBudget = int64_t(1) << 30;
constexpr int64_t kMaxValueBlocks = 64;

/// What the user asked for; 0 means "choose".
struct AttnTileRequest {
  int64_t blockQ = 0, blockKV = 0, stages = 0, warps = 0;
  /// Bytes of workgroup memory the tiles may take.
  int64_t smemBudget = 232448;
  TileTarget target = TileTarget::Sm80;
  /// sm_90a: a persistent grid where the schedule has a producer.
  bool persistent = false;
  /// Value column blocks (AttnTileSizes::valueBlocks), 0 to choose: one
  /// block, or in a GPU kernel as few as keep each block's accumulators
  /// within kMaxValueBlockCols columns (O, dQ) or kMaxGradKeyValueCols
  /// (dK and dV together) past head dims of 256.
  int64_t valueBlocks = 0;
  /// Gradients: the deterministic mode (else the dK/dV nest also holds a
  /// dS^T tile in workgroup memory for the dQ product).
  bool deterministic = true;
  /// Gradients, deterministic mode: dQ accumulated by the dK/dV nest in a
  /// fixed order (AttnTileConfig::orderedDq), with its dS^T tile.
  bool orderedDq = false;
  /// Gradients: the schedule of this one nest (a GPU kernel's), which may
  /// differ from the other nests'; unset, one schedule for all of them.
  std::optional<GradNest> gradNest;
  /// The schedule of a GPU kernel (attn-to-gpu): f32 tiles then take the
  /// f32 kernels' (TF32 products, TileSchedule.cpp); attn-tile's loops on
  /// the CPU keep the 16-bit kernels' defaults.
  bool gpuKernel = false;
};

/// The one cost model: picks the schedule of an attn op, the requested
/// values where non-zero (checked against the budget), otherwise the
/// defaults of the GPU kernels (lib/Conversion/AttnToLoops/TileSchedule.cpp).
/// Emits an error on `op` and fails when the tiles cannot fit the budget.
FailureOr<AttnTileSizes> chooseAttnTileSizes(Operation *op,
                                             const AttnTileRequest &request);

/// Columns of dQ per product in the non-deterministic mode's dK/dV nest:
/// one chunk's f32 product is what a GPU thread holds beside dK and dV, and
/// what the sm_90a kernels stage in shared memory for one bulk reduction.
constexpr int64_t kGradDqChunk = 64;

/// How the non-deterministic mode's dK/dV nest computes a query tile's dQ
/// from dS^T (staged in memory) and K: as dQ^T = K^T dS^T, `width` head
/// columns per product, where a GPU CTA's rows (16 per warp of `warps`)
/// divide the head columns, so that the head columns are the product's rows
/// and every warp holds a share of them (with two warpgroups, half the
/// columns each, all the tile's queries); otherwise as dQ = dS K in chunks
/// of kGradDqChunk columns, the query tile's rows.
struct GradDqProduct {
  bool transposed;
  int64_t width;

  /// The row pitch in bytes of the f32 stage in shared memory that a GPU
  /// kernel adds a chunk's dQ to global memory from, a row per query. Where
  /// a chunk is the accumulator's whole rows (`headDim` f32) the stage is
  /// unpadded, so that one bulk reduction adds the tile; otherwise its rows
  /// are padded by 16 bytes (transposed: a warp's 4-byte stores then cover 8
  /// consecutive words in each of 4 rows two apart) or 32 (the 8-byte
  /// stores of a warp's 8 rows then fall in distinct banks).
  int64_t stagePitch(int64_t headDim) const {
    return width * 4 + (width == headDim ? 0 : transposed ? 16 : 32);
  }
};
inline GradDqProduct gradDqProduct(int64_t headCols, int64_t warps) {
  int64_t rows = 16 * warps;
  if (headCols % rows == 0)
    return {true, rows};
  return {false, std::min(kGradDqChunk, headCols)};
}

/// Everything the tiled lowering of one op needs besides the op.
struct AttnTileConfig {
  AttnTileSizes sizes;
  /// Memory space of the Q/K/V/dO tile buffers; null for the default one.
  Attribute memorySpace;
  /// Gradients: dQ bitwise reproducible: from its own loop nest or, with
  /// `orderedDq`, added to an accumulator by the dK/dV nest in a fixed order
  /// (the key tiles that see a query tile take turns); else added to it
  /// with atomic adds in any order.
  bool deterministic = true;
  bool orderedDq = false;
  /// describeAttnTiling only: the fraction of the blocks an op's block mask
  /// leaves out, in [0, 1) (its lists are known at run time only).
  double sparsity = 0.0;
  /// Destination-passing form (forward, split-KV, combine and gradient ops):
  /// the buffers the results are written to, one per result and in the same
  /// order, instead of fresh allocations; the op's results must then be
  /// unused, and the op is erased. When empty, an op whose every result is
  /// used once, by a `bufferization.materialize_in_destination` into a
  /// memref, writes into those memrefs (the uses are erased): how a GPU
  /// kernel's output parameters reach attn-tile.
  SmallVector<Value> destinations;
  /// Gradients: the one nest to write (a GPU kernel's), all when unset. A
  /// single nest needs `destinations`, `rowStats` and, in the
  /// modes that accumulate dQ, `dqAccum` (and, ordered, `dqTurns`). There
  /// the nests are: the row statistics, which also zero the dQ accumulator
  /// (and the turns); dK and dV, which add each tile's dQ to it; dQ, its
  /// conversion into the result.
  std::optional<GradNest> gradNest;
  /// Gradients: the `[B, Hq, Sq, 4]` f32 buffer of the row statistics
  /// (a record per query row: LSE log2(e), +inf where LSE = -inf; D =
  /// rowsum(dO O); 0; 0), a GPU kernel's workspace, instead of an
  /// allocation.
  Value rowStats;
  /// Gradients, non-deterministic and ordered modes: the `[B, Hq, Sq, D]`
  /// f32 dQ accumulator, a GPU kernel's workspace, instead of an
  /// allocation.
  Value dqAccum;
  /// Gradients, ordered mode: the `[B, Hq, Sq]` i32 turn counters (the
  /// entry of a query tile's first row orders the additions to its rows),
  /// a GPU kernel's workspace, instead of an allocation.
  Value dqTurns;

  /// Whether the dK/dV nest adds dQ to an accumulator.
  bool accumulatesDq() const { return !deterministic || orderedDq; }
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
