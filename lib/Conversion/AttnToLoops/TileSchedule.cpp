//===- TileSchedule.cpp - the one cost model for attn's tilings -----------===//
//
// Picks the schedule of every attn op: query and key/value tile sizes, the
// pipeline stages of the key/value ring, the warps of a CTA and the shared
// memory that takes. attn-tile writes its loops with these numbers, the GPU
// lowering maps them, and the kernel manifest and attn-tile's report print
// them; nothing else chooses a tile size.
//
// The forward and split-KV defaults are the sm_80 tensor-core schedules
// measured on an H200 (bf16, S = 16k; docs/GPU.md): 4 warps x two 16-row
// MMA tiles with 32-key tiles at D > 64 (64-key tiles spill), 64-key tiles
// at D <= 64; causal at D > 64 and any at D > 128, 8 warps x one MMA tile
// with 64-key tiles (32 from D = 192);
// with a mask operand, one MMA tile per warp (registers). Split-KV packs the
// query heads of a key/value head into one 16-row tile and splits every
// key/value tile between the warps.
//
//===----------------------------------------------------------------------===//

#include "TileCommon.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
/// What the schedule of one op depends on.
struct TileShape {
  int64_t headDim = 0, valueDim = 0, elementBytes = 0;
  /// The tiles' columns: the head dims padded to whole kTileColumnStep.
  int64_t headCols = 0, valueCols = 0;
  CausalKind causal = CausalKind::None;
  bool mask = false;
  /// K and V rows gathered through a block table by cp.async, since no
  /// tensor map describes a page walk: by every thread, or on sm_90a by a
  /// producer warpgroup.
  bool paged = false;
  /// Rows and keys the op's loop nests see at most, when static.
  std::optional<int64_t> rows, keys;
  /// Gradients in the non-deterministic mode: the dK/dV nest holds dS^T
  /// in a memory tile for the dQ product.
  bool dsTile = false;
  /// A block mask's query and key blocks (0 without): the tiles must
  /// divide them.
  int64_t maskBlockQ = 0, maskBlockK = 0;
  enum class Kind { Forward, Partial, Gradient } kind = Kind::Forward;
  /// Gradients: the one nest scheduled (a GPU kernel's); unset, all.
  std::optional<GradNest> gradNest;
  /// A score modification (region 0): its derivative takes registers in
  /// the dK/dV nest.
  bool scoreMod = false;
  /// Query heads per key/value head, when static (0 otherwise).
  int64_t group = 0;
};
} // namespace

static std::optional<int64_t> staticDim(int64_t d) {
  if (ShapedType::isDynamic(d))
    return std::nullopt;
  return d;
}

template <typename OpTy>
static TileShape getTileShape(OpTy op) {
  AttentionConfig c = getAttentionConfig(op);
  TileShape s;
  s.headDim = c.dims.headDim;
  s.valueDim = c.dims.valueDim;
  s.elementBytes =
      op.getQuery().getType().getElementType().getIntOrFloatBitWidth() / 8;
  s.causal = c.causal;
  s.mask = static_cast<bool>(op.getMask());
  s.paged = c.paged;
  s.scoreMod = !op->getRegion(0).empty();
  s.rows = staticDim(c.dims.querySeq);
  if (!ShapedType::isDynamic(c.dims.queryHeads) &&
      !ShapedType::isDynamic(c.dims.kvHeads) && c.dims.kvHeads > 0)
    s.group = c.dims.groupSize();
  s.keys = staticDim(c.dims.keySeq);
  if (BlockMask blocks = getBlockMask(op)) {
    s.maskBlockQ = blocks.blockQ;
    s.maskBlockK = blocks.blockK;
  }
  return s;
}

/// The tile shape of an op with tiles; nullopt for attn.combine.
static std::optional<TileShape> getTileShape(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<TileShape>>(op)
      .Case<AttentionOp>([](AttentionOp op) { return getTileShape(op); })
      .Case<AttentionPartialOp>([](AttentionPartialOp op) {
        TileShape s = getTileShape(op);
        s.kind = TileShape::Kind::Partial;
        return s;
      })
      .Case<AttentionGradOp>([](AttentionGradOp op) {
        TileShape s = getTileShape(op);
        s.kind = TileShape::Kind::Gradient;
        return s;
      })
      .Default([](Operation *) { return std::nullopt; });
}

namespace {
/// An int64 byte count that remembers overflow: any sum or product that
/// leaves int64 is nullopt from then on (and larger than every budget).
struct Bytes {
  std::optional<int64_t> v;
  Bytes(int64_t v) : v(v) {}
  Bytes(std::optional<int64_t> v) : v(v) {}
  Bytes operator+(Bytes o) const {
    return v && o.v ? llvm::checkedAdd(*v, *o.v) : std::nullopt;
  }
  Bytes operator*(Bytes o) const {
    return v && o.v ? llvm::checkedMul(*v, *o.v) : std::nullopt;
  }
  Bytes alignTo(int64_t a) const {
    Bytes up = *this + Bytes(a - 1);
    return up.v ? Bytes(*up.v / a * a) : up;
  }
  bool exceeds(int64_t budget) const { return !v || *v > budget; }
};
} // namespace

/// The bytes of the gradient's nests that `s` schedules: the one nest, or
/// the larger of the two with tiles.
static Bytes largestNest(const TileShape &s, Bytes keyValue, Bytes query) {
  if (s.gradNest)
    return *s.gradNest == GradNest::KeyValue ? keyValue
           : *s.gradNest == GradNest::Query  ? query
                                             : Bytes(0);
  if (!keyValue.v || !query.v)
    return Bytes(std::optional<int64_t>());
  return *keyValue.v > *query.v ? keyValue : query;
}

/// Whether a kernel of `s` gives each of its `warps` a slice of every
/// key/value tile: split-KV decode, whose few rows leave the warps nothing
/// else to split, where the keys divide.
static bool splitsKeys(const TileShape &s, int64_t blockQ, int64_t blockKV,
                       int64_t warps) {
  return s.kind == TileShape::Kind::Partial && warps > 1 &&
         blockKV % warps == 0 && blockQ < 16 * warps;
}

/// Bytes of shared memory the tiles take (nullopt past int64). Forward and
/// split-KV: the Q tile and `stages` K and V tiles, each row padded by 16
/// bytes (ldmatrix then reads no bank twice), or unpadded swizzled rows:
/// on sm_90a with every tile 1024-byte aligned (the swizzle repeats every
/// 8 rows of 128 bytes; the K and V rings are one tile each), and in
/// split-KV decode with key slices (TileToNVVM.cpp says why).
/// Gradients: the larger of the dK/dV nest's (K and V tiles, `stages` Q
/// and dO tiles and the 16-byte records of their rows; in the
/// non-deterministic mode a [block-kv, block-q] dS^T tile) and the dQ
/// nest's (Q and dO tiles, `stages` K and V tiles), rows padded or swizzled
/// as the forward's (records: padded, or unswizzled on sm_90a). With one
/// nest scheduled, that nest's (the row statistics take none).
static Bytes sharedBytes(const TileShape &s, int64_t blockQ, int64_t blockKV,
                         int64_t stages, int64_t warps,
                         TileTarget target = TileTarget::Sm80,
                         bool producer = false, bool persistent = false) {
  Bytes e = s.elementBytes, d = s.headCols, dv = s.valueCols;
  if (s.kind == TileShape::Kind::Gradient && target == TileTarget::Sm90a) {
    // Swizzled, unpadded, 1024-byte aligned tiles (as the forward's below);
    // a ring is one tile of its stages' rows. The copies are TMA, each
    // nest's on `stages` + 1 mbarriers (one per stage, one for the held
    // tiles), after the tiles, and 8 bytes after them that the GPU
    // lowering stores to before a wgmma wait (TileWgmma.cpp).
    auto tile = [&](Bytes rows, Bytes cols) {
      return (rows * cols * e).alignTo(1024);
    };
    Bytes barriers = (Bytes(8) * (stages + 2)).alignTo(16);
    auto nest = [&](int64_t held, int64_t streamed) {
      Bytes ring = Bytes(stages) * streamed;
      return tile(held, d) + tile(held, dv) + tile(ring, d) + tile(ring, dv);
    };
    Bytes records = (Bytes(stages) * blockQ * 16).alignTo(1024);
    Bytes keyValue = nest(blockKV, blockQ) + records,
          query = nest(blockQ, blockKV) + barriers;
    // The atomic dQ mode: the dS^T tile, and the f32 stage of one dQ
    // chunk that the kernel adds to global memory with bulk reductions, a
    // row per query.
    if (s.dsTile) {
      GradDqProduct dq = gradDqProduct(s.headCols, warps);
      keyValue = keyValue + tile(blockKV, blockQ) +
                 Bytes(blockQ) * dq.stagePitch(s.headDim);
    }
    return largestNest(s, keyValue + barriers, query);
  }
  if (s.kind == TileShape::Kind::Gradient) {
    Bytes pad = 16 / s.elementBytes;
    Bytes row = d + dv + Bytes(2) * pad;
    Bytes records = Bytes(stages) * blockQ * (16 + 16);
    Bytes keyValue =
        (Bytes(blockKV) + Bytes(stages) * blockQ) * row * e + records;
    if (s.dsTile)
      keyValue = keyValue + Bytes(blockKV) * (Bytes(blockQ) + pad) * e;
    Bytes query = (Bytes(blockQ) + Bytes(stages) * blockKV) * row * e;
    return largestNest(s, keyValue, query);
  }
  if (target == TileTarget::Sm90a) {
    auto tile = [&](Bytes rows, Bytes cols) {
      return (rows * cols * e).alignTo(1024);
    };
    // The mbarriers of the TMA copies follow: per stage a full one (and
    // with a producer warpgroup an empty one, and with 2 stages, not
    // persistent, the same two again for the V tiles, which its rotated
    // loop reads an iteration after the K tiles: TileTma.cpp), and one for
    // Q (and, in a persistent kernel, one that frees Q for the next tile).
    // A paged cache's rows are copied by cp.async: no mbarriers without a
    // producer warpgroup (the warps wait for their own copies); with one,
    // the producer's cp.async copies complete on the same mbarriers.
    Bytes perStage = !producer ? 1 : stages == 2 && !persistent ? 4 : 2;
    // One more slot: the GPU lowering's anchor of its wgmma waits
    // (TileWgmma.cpp).
    Bytes barriers = perStage * stages + (persistent ? 2 : 1) + 1;
    Bytes ring = Bytes(stages) * blockKV;
    Bytes tiles = tile(blockQ, d) + tile(ring, d) + tile(ring, dv);
    return s.paged && !producer ? tiles
                                : tiles + (Bytes(8) * barriers).alignTo(16);
  }
  // Split-KV decode with key slices: swizzled rows as sm_90a's, each tile
  // 128-byte aligned (whole, as its rows are 8-row groups of 32-byte
  // multiples).
  Bytes pad = splitsKeys(s, blockQ, blockKV, warps)
                  ? Bytes(0)
                  : Bytes(16 / s.elementBytes);
  Bytes qRow = d + pad, kRow = d + pad, vRow = dv + pad;
  return (Bytes(blockQ) * qRow + Bytes(stages) * blockKV * (kRow + vRow)) * e;
}

ScheduleAttr AttnTileSizes::getAttr(MLIRContext *ctx) const {
  return ScheduleAttr::get(ctx, blockQ, blockKV, stages, warps, keySlices,
                           workgroupBytes);
}

int64_t attn::tileColumns(int64_t dim, TileTarget target,
                          int64_t elementBytes) {
  int64_t cols = llvm::alignTo(dim, kTileColumnStep);
  // A head dim the tensor cores divide keeps its width: padding one wider
  // for a wider swizzle measured slower (H200, bf16 forward, S = 2k and
  // 16k: D = 80 as 96 0.93x to 0.97x, D = 160 as 192 0.85x to 0.88x).
  if (target != TileTarget::Sm90a || cols == dim)
    return cols;
  // One that is padded anyway takes the cheapest of the roundings to 16,
  // 32 and 64 columns, counting each column by the swizzle its rows take,
  // relative to 128 bytes' (the same runs, D = 72 as 80, 96 and 128 and
  // D = 200 as 208, 224 and 256: 64 bytes 1.28, 32 bytes 1.61 to 1.69; as
  // chosen here D = 40 runs 1.05x to 1.10x, D = 72 1.02x to 1.04x, D = 104
  // 1.20x to 1.30x and D = 200 1.30x to 1.34x the speed of the rounding to
  // 16).
  auto cost = [&](int64_t c) {
    int64_t rowBytes = c * elementBytes;
    return c * (rowBytes % 128 == 0 ? 100 : rowBytes % 64 == 0 ? 128 : 165);
  };
  for (int64_t step : {32, 64}) {
    int64_t wider = llvm::alignTo(dim, step);
    if (cost(wider) < cost(cols))
      cols = wider;
  }
  return cols;
}

ValueBlocking attn::valueBlocking(int64_t valueDim, int64_t count) {
  if (count <= 1)
    return {1, valueDim, valueDim};
  int64_t step = llvm::alignTo(llvm::divideCeil(valueDim, count), 8);
  return {count, step, std::min(valueDim, step + valueDim % 8)};
}

GradBlocking attn::gradBlocking(int64_t dim, int64_t cols, int64_t count,
                                int64_t align) {
  if (count <= 1)
    return {1, cols, 0, align, true};
  int64_t step = llvm::alignTo(llvm::divideCeil(cols, count),
                               std::max(align, kTileColumnStep));
  bool fromDim = dim % 8 == 0 && dim >= step && (dim - step) % align == 0;
  GradBlocking g{count, step, (fromDim ? dim : cols) - step, align, true};
  g.valid = count * kTileColumnStep <= cols && g.lastFirst >= 0 &&
            (count - 1) * step <= dim;
  return g;
}

int64_t attn::gradBlockAlign(int64_t cols, int64_t elementBytes,
                             TileTarget target) {
  if (target != TileTarget::Sm90a)
    return 8;
  return swizzleBytes(cols * elementBytes) / elementBytes;
}

// H200, bf16, S = 4k, the whole backward with two column blocks against
// one (docs/GPU.md): sm_90a (wgmma) D = 256 1.52x to 1.54x (the one-block
// dK/dV kernel spilled 2 KB), D = 224 1.31x, D = 192 0.77x (it spilled 108
// bytes, and none with 32-query tiles, AttnToGPU.cpp). sm_80's mapping
// with 32-query tiles (AttnToGPU.cpp) spills nothing in one block up to
// 320 columns (D = 160), nor in two blocks from D = 168 to 256, where one
// spilled 52 to 608 bytes.
int64_t attn::gradOneBlockKeyValueCols(TileTarget target) {
  return target == TileTarget::Sm90a ? 384 : 320;
}

int64_t attn::defaultGradBlocks(int64_t headDim, int64_t headCols,
                                int64_t valueDim, int64_t valueCols,
                                int64_t elementBytes, TileTarget target,
                                bool queryNest) {
  if (std::max(headCols, valueCols) <= kMaxValueBlockCols &&
      (queryNest || headCols + valueCols <= gradOneBlockKeyValueCols(target)))
    return 1;
  int64_t keyAlign = gradBlockAlign(headCols, elementBytes, target);
  int64_t valueAlign = gradBlockAlign(valueCols, elementBytes, target);
  for (int64_t count = 2; count <= kMaxValueBlocks; ++count) {
    GradBlocking key = gradBlocking(headDim, headCols, count, keyAlign);
    GradBlocking value = gradBlocking(valueDim, valueCols, count, valueAlign);
    if (!key.valid || !value.valid)
      continue;
    if (queryNest ? key.step <= kMaxValueBlockCols
                  : key.step + value.step <= kMaxGradKeyValueCols)
      return count;
  }
  return 0;
}

/// The column blocks of a gradient's nests (AttnTileSizes::valueBlocks):
/// the request's, or in a GPU kernel past tiles of kMaxValueBlockCols
/// columns, or whose dK and dV accumulators exceed
/// gradOneBlockKeyValueCols (the dK/dV nest), the fewest blocks whose dK
/// and dV blocks together take at most kMaxGradKeyValueCols columns (the
/// dK/dV nest, and both nests of one schedule) or whose dQ block takes at
/// most kMaxValueBlockCols (the dQ nest).
static FailureOr<int64_t> chooseGradBlocks(Operation *op, const TileShape &s,
                                           const AttnTileRequest &request) {
  int64_t keyAlign = gradBlockAlign(s.headCols, s.elementBytes, request.target);
  int64_t valueAlign =
      gradBlockAlign(s.valueCols, s.elementBytes, request.target);
  auto blocks = [&](int64_t count) {
    return std::make_pair(
        gradBlocking(s.headDim, s.headCols, count, keyAlign),
        gradBlocking(s.valueDim, s.valueCols, count, valueAlign));
  };
  // Blocks start on multiples of 8 columns unless the swizzle asks more.
  auto aligned = [&]() -> std::string {
    if (std::max(keyAlign, valueAlign) <= 8)
      return "";
    return ", starting on multiples of " + std::to_string(keyAlign) +
           " (D) and " + std::to_string(valueAlign) +
           " (Dv) columns (column blocks of the swizzled tiles)";
  };
  int64_t count = request.valueBlocks;
  if (count > 1) {
    if (s.dsTile)
      return op->emitError()
             << "value-blocks = " << count
             << " needs the recomputed dQ: the dK/dV nest of the modes "
                "that accumulate dQ adds all of its columns";
    auto [key, value] = blocks(count);
    if (!key.valid || !value.valid)
      return op->emitError()
             << "value-blocks = " << count << " cannot cut D = " << s.headDim
             << " and Dv = " << s.valueDim << " (tiles of " << s.headCols
             << " and " << s.valueCols
             << " columns) into blocks of whole 16-column steps"
             << aligned() << ", each but the last inside the head dim";
    return count;
  }
  if (count == 1 || !request.gpuKernel || s.dsTile ||
      request.gradNest == GradNest::RowStats)
    return 1;
  if (int64_t fewest = defaultGradBlocks(
          s.headDim, s.headCols, s.valueDim, s.valueCols, s.elementBytes,
          request.target, request.gradNest == GradNest::Query))
    return fewest;
  return op->emitError()
         << "no column blocks of D = " << s.headDim << " and Dv = "
         << s.valueDim
         << " fit the backward's accumulators: every block takes whole "
            "16-column steps of both"
         << aligned() << ", dK's and dV's together at most "
         << kMaxGradKeyValueCols << " columns, dQ's at most "
         << kMaxValueBlockCols;
}

/// The value column blocks of `s` (AttnTileSizes::valueBlocks): the
/// request's, or in a GPU kernel the fewest whose tiles are at most
/// kMaxValueBlockCols columns. Sets `s.valueCols` to one block's tile
/// columns. Fails (with an error on `op`) on a request the value head dim
/// cannot serve. Gradients: chooseGradBlocks, with tiles of all columns.
static FailureOr<int64_t> chooseValueBlocks(Operation *op, TileShape &s,
                                            const AttnTileRequest &request) {
  auto columns = [&](int64_t count) {
    return tileColumns(valueBlocking(s.valueDim, count).width, request.target,
                       s.elementBytes);
  };
  if (s.kind == TileShape::Kind::Gradient) {
    s.valueCols = columns(1);
    return chooseGradBlocks(op, s, request);
  }
  int64_t count = request.valueBlocks;
  if (count > 1 && count * 8 > s.valueDim)
    return op->emitError() << "value-blocks = " << count
                           << " needs a value head dim of at least 8 columns "
                              "a block, got Dv = "
                           << s.valueDim;
  if (!count) {
    count = 1;
    while (request.gpuKernel && columns(count) > kMaxValueBlockCols)
      ++count;
  }
  s.valueCols = columns(count);
  return count;
}

FailureOr<AttnTileSizes>
attn::chooseAttnTileSizes(Operation *op, const AttnTileRequest &request) {
  std::optional<TileShape> shape = getTileShape(op);
  if (shape && shape->kind == TileShape::Kind::Gradient) {
    shape->dsTile = !request.deterministic || request.orderedDq;
    shape->gradNest = request.gradNest;
  }
  int64_t valueBlocks = 1;
  if (shape) {
    shape->headCols =
        tileColumns(shape->headDim, request.target, shape->elementBytes);
    FailureOr<int64_t> blocks = chooseValueBlocks(op, *shape, request);
    if (failed(blocks))
      return failure();
    valueBlocks = *blocks;
  }
  if (!shape) {
    // attn.combine: tiles of 16 rows per warp by 8 output columns: the few
    // rows of a decode step still make many CTAs, and each thread's loads
    // per split are few (a split is one latency-bound step: on an H200 the
    // combine of 16 splits x 32 rows took 13.3 us with 16 columns, 8.5 us
    // with 8). No key/value tiles, no shared memory. block-kv requests keys
    // of the attention ops: the columns are the combine's own choice. A Dv
    // that is no multiple of 8 ends in a ragged tile.
    AttnTileSizes t;
    t.warps = request.warps ? request.warps : 1;
    t.blockQ = request.blockQ ? request.blockQ : 16 * t.warps;
    t.blockKV = 8;
    t.stages = 0;
    return t;
  }
  const TileShape &s = *shape;
  constexpr int64_t kMinBlock = 16;
  int64_t bq = request.blockQ, bkv = request.blockKV;
  AttnTileSizes t;
  t.stages = request.stages ? request.stages : 3;

  bool hopper = request.target == TileTarget::Sm90a;
  switch (s.kind) {
  case TileShape::Kind::Forward: {
    if (hopper) {
      // Warpgroups of 4 warps, 64 rows each (wgmma's m64, one 16-row tile
      // per warp), 128-key tiles up to D = 128 (fewer past it, chosen
      // below: the accumulators of S and O stay in registers). Past D = 64
      // a producer warpgroup issues the copies and the stages are as many
      // as fit, up to 4; at D <= 64 two CTAs of 2 stages share an SM and
      // overlap each other's softmax and products instead (H200, bf16,
      // S = 16k: 495 TFLOP/s against 422 with a producer). Kernels with a mask
      // operand keep all registers to every thread: with the 240 registers
      // setmaxnreg gave a consumer then (232 now), D = 128 with an additive
      // mask, causal, spilled 36 bytes. A paged cache's K/V rows, which
      // no tensor map describes, the producer warpgroup copies by cp.async
      // through the block table, all 128 of its threads (FlashAttention-3's
      // paged path without TMA).
      // Its copies are 16-byte chunks: rows of whole chunks only.
      int64_t widest = std::max(s.headCols, s.valueCols);
      bool chunkRows = (s.headDim * s.elementBytes) % 16 == 0 &&
                       (s.valueDim * s.elementBytes) % 16 == 0;
      t.producer = widest > 64 && !s.mask && (!s.paged || chunkRows);
      // A persistent grid, when asked for, needs the producer: it loads the
      // next tile while the consumers finish the last (one CTA per SM,
      // which the registers allow anyway). Measured slower so far
      // (docs/GPU.md), so not the default; a paged kernel's producer
      // threads have no registers to spare for its tile loop.
      t.persistent = t.producer && request.persistent && !s.paged;
      t.warps = request.warps ? request.warps : 8;
      if (!bq)
        bq = 16 * t.warps;
      // Keys per tile: 128 up to D = 128, else 64; but with a producer
      // where three stages of 64 keys do not fit, the widest multiple of
      // 16 up to 128 whose two stages fit next to Q: fewer, longer
      // iterations (H200, bf16, D = 256: 80 keys against 64 measured 1.02x
      // to 1.06x, S = 2k to 16k, causal and not).
      auto fits = [&](int64_t keys, int64_t stages) {
        return !sharedBytes(s, bq, keys, stages, t.warps, request.target,
                            t.producer, t.persistent)
                    .exceeds(request.smemBudget);
      };
      if (!bkv && widest <= 128)
        bkv = 128;
      if (!bkv && t.producer && !fits(64, 3))
        for (int64_t n = 128; !bkv && n >= kMinBlock; n -= 16)
          if (fits(n, 2) && (!s.maskBlockK || s.maskBlockK % n == 0))
            bkv = n;
      if (!bkv)
        bkv = 64;
      if (!request.stages) {
        t.stages = t.producer ? 4 : 2;
        while (t.stages > 2 &&
               sharedBytes(s, bq, bkv, t.stages, t.warps, request.target,
                           t.producer, t.persistent)
                   .exceeds(request.smemBudget))
          --t.stages;
      }
      // With a producer the loop is rotated so that a warpgroup's softmax
      // overlaps its own P V. With 2 stages its K and V tiles complete and
      // are freed on barriers of their own (the V loads' kRingLagAttr,
      // TileTma.cpp), so that a tile of each is in flight (H200, bf16,
      // D = 256: 1.01x to 1.05x the speed unrotated from S = 4k, 0.99x to
      // 1.03x at 2k, 0.96x to 0.99x at 512 and 1k; docs/GPU.md);
      // but not in a persistent kernel, whose consumers have 232 registers
      // (rotated, D = 256 spilled 68 to 140 bytes there).
      t.overlap = t.producer && (t.stages >= 3 || !t.persistent);
      break;
    }
    // Causal past D = 64, and any past D = 128 (where two MMA tiles' O
    // accumulators spilled, 1528 bytes at D = 256; one tile runs 1.06x to
    // 2.82x faster at D = 160 to 256 on an H200), 8 warps of one tile.
    bool wideCausal = (s.causal != CausalKind::None && s.headCols > 64) ||
                      s.headCols > 128 || s.valueCols > 128;
    // f32 tiles (twice the bytes, each product's operands held as two TF32
    // parts): 4 warps of one MMA tile (two spilled 164 bytes at D = 64), 2
    // stages, and 32-key tiles past D = 64, so that Q and the ring fit
    // (D = 256: 199 KiB).
    bool f32 = s.elementBytes == 4 && request.gpuKernel;
    // Past D = 256 (or in value blocks): 4 warps of one MMA tile in 2
    // stages of 32 keys, so that Q (64 rows) and the ring fit, and each
    // block's O is what D = 256 holds; past D = 512 16 keys (32 spilled 8
    // to 20 bytes at D = 576, and 64 did at D = 264 and 320).
    bool wide = s.headCols > kMaxValueBlockCols || valueBlocks > 1;
    t.warps = request.warps                            ? request.warps
              : wideCausal && !s.mask && !f32 && !wide ? 8
                                                       : 4;
    if ((f32 || wide) && !request.stages)
      t.stages = 2;
    // 16-row MMA tiles per warp: two reuse every K/V fragment twice.
    int64_t mTiles = s.mask || wideCausal || f32 || wide ? 1 : 2;
    if (bq)
      mTiles = bq / (16 * t.warps);
    else
      bq = t.warps * 16 * mTiles;
    // 32-key tiles where two MMA tiles hold O past D = 64, or one from
    // D = 192 (64 keys' scores beside O spilled 8 bytes at 192, 88 to 120
    // at 208).
    if (!bkv)
      bkv = (mTiles == 2 && s.headCols > 64) || s.valueCols > 176 ||
                    (f32 && s.headCols > 64) || wide
                ? (wide && s.headCols > 512 ? 16 : 32)
                : 64;
    break;
  }
  case TileShape::Kind::Partial: {
    // Each warp takes 16 keys of a tile. f32 tiles in 2 stages, and past
    // D = 128 one warp of 16-key tiles (64 keys on 4 warps do not fit in 2
    // stages; on 2 warps the O accumulator beside the swizzled tiles'
    // addresses spilled 132 bytes, 12 with padded rows).
    // Past D = 256 (or in value blocks) 2 stages: D = 576 takes 226 KiB.
    bool f32 = s.elementBytes == 4 && request.gpuKernel;
    bool wideF32 = f32 && s.headCols > 128;
    bool wide = s.headCols > kMaxValueBlockCols || valueBlocks > 1;
    t.warps = request.warps ? request.warps : wideF32 ? 1 : 4;
    if ((f32 || wide) && !request.stages)
      t.stages = 2;
    // Past D = 256 with at least 64 query heads a key/value head (MLA's
    // 128 on one): a 16-row MMA tile per warp over whole key tiles, the
    // forward's schedule, instead of key slices, whose 16 rows run the
    // tensor cores at a 16th of a 64-row tile's reuse of each K/V tile
    // (H200, D = 576, Dv = 512, key slices: 160 to 171 GB/s).
    bool manyRows = wide && s.group >= 64 && !request.warps;
    if (!bq)
      bq = manyRows ? 16 * t.warps : 16;
    if (!bkv)
      bkv = wideF32 ? 16 : manyRows ? (s.headCols > 512 ? 16 : 32) : 64;
    break;
  }
  case TileShape::Kind::Gradient:
    // 64 x 64 tiles on 4 warps: each nest's register tiles have 16 rows
    // per warp (queries in the dQ nest, keys in the dK/dV nest), which
    // keeps dK, dV, S^T and dP^T in registers up to D = 64. A tile never
    // needs to exceed the (power-of-two-rounded) rows or keys of a static
    // shape.
    t.warps = request.warps ? request.warps : 4;
    // Two stages of the streamed tiles (Q and dO, or K and V): the GPU
    // kernels keep one in flight while they work on the other.
    t.stages = request.stages ? request.stages : 2;
    // sm_90a, one nest with tiles and nothing requested, past D = 64 and
    // up to 128, not causal: two warpgroups of 64 rows (keys of the dK/dV
    // nest, queries of the dQ nest), so that each streamed tile feeds 128
    // rows, against 64-row tiles of the other kind (each warp's registers
    // as with 4 warps, one CTA per SM). H200, bf16, D = 128, the whole
    // backward against 4 warps: 1.02x to 1.07x at S = 2k to 16k, but
    // causal 0.91x to 1.00x (docs/GPU.md). At D = 64, where 4 warps run 3
    // CTAs per SM, the dK/dV kernel took 1.03x to 1.08x the time. The
    // atomic mode's dK/dV nest takes them where its dQ^T product has the
    // two warpgroups' rows of head columns (gradDqProduct: D = 128), without
    // a mask operand (with one it spilled 104 to 120 bytes, 20 to 52 on 4
    // warps), causal too: 64-key tiles made twice the dQ reductions, and two
    // warpgroups ran the H100's D = 128 causal backward 1.46x to 1.69x
    // faster at S = 2k to 16k (44 to 48 bytes of spills against 20 to 36);
    // its dQ nest only converts the accumulator. A score
    // modification's derivative spilled 32 bytes in the deterministic dK/dV
    // kernel at D = 128; the atomic one takes them anyway (48 to 76 bytes of
    // spills against 12 to 28 on 4 warps): on an H100 two warpgroups ran
    // its forward + backward with ALiBi slopes 1.42x to 1.53x faster, with
    // a bias table 1.44x (docs/GPU.md).
    int64_t widest = std::max(s.headCols, s.valueCols);
    bool keyRows = s.gradNest == GradNest::KeyValue;
    bool dqRows = !s.dsTile || (keyRows && s.headCols % 128 == 0 && !s.mask);
    if (hopper && s.gradNest && *s.gradNest != GradNest::RowStats && dqRows &&
        !request.warps && !bq && !bkv && widest > 64 && widest <= 128 &&
        (s.causal == CausalKind::None || (keyRows && s.dsTile)) &&
        !(keyRows && s.scoreMod && !s.dsTile)) {
      int64_t block = keyRows ? s.maskBlockK : s.maskBlockQ;
      if (!block || block % 128 == 0) {
        t.warps = 8;
        bq = keyRows ? 64 : 128;
        bkv = keyRows ? 128 : 64;
      }
    }
    // sm_90a up to D = 64 without a mask operand: each nest issues its dP
    // product before the maps that read S, which then run while it does.
    // H200, bf16, D = 64, S = 2k to 16k: 0.89x to 0.98x the time of the
    // dK/dV kernel, 0.92x to 0.99x of the dQ kernel; at D = 128 (two
    // warpgroups, 255 registers in the dK/dV kernel) 0.97x to 1.05x,
    // mostly slower, and with a mask operand the dK/dV kernel spilled 36 bytes
    // (docs/GPU.md).
    t.overlap = hopper && !s.mask && std::max(s.headCols, s.valueCols) <= 64;
    if (!bq) {
      bq = 64;
      if (s.rows)
        bq = std::min(bq, std::max<int64_t>(kMinBlock,
                                            llvm::PowerOf2Ceil(*s.rows)));
    }
    if (!bkv) {
      bkv = 64;
      if (s.keys)
        bkv = std::min(bkv, std::max<int64_t>(kMinBlock,
                                              llvm::PowerOf2Ceil(*s.keys)));
    }
    break;
  }
  // A block mask's blocks are whole tiles: the widest multiple of 16 up
  // to the automatic tile that divides them (tileAttnOp reports blocks
  // that none divides). A forward whose query tile shrinks keeps one
  // 16-row MMA tile per warp.
  auto dividing = [&](int64_t tile, int64_t block) {
    for (int64_t n = tile / kMinBlock * kMinBlock; n >= kMinBlock;
         n -= kMinBlock)
      if (block % n == 0)
        return n;
    return tile;
  };
  if (s.maskBlockK && !request.blockKV)
    bkv = dividing(bkv, s.maskBlockK);
  if (s.maskBlockQ && !request.blockQ && s.maskBlockQ % bq) {
    bq = dividing(bq, s.maskBlockQ);
    if (s.kind == TileShape::Kind::Forward && !request.warps) {
      t.warps = std::max<int64_t>(bq / 16, 1);
      if (hopper && bq % 64)
        bq = 64, t.warps = 4;
    }
  }
  // Halve the automatic key/value tile (then the query tile of gradients)
  // until the tiles fit the budget: large head dims. Then, with no tile
  // asked for, fewer stages, m-tiles and warps: chips of less shared
  // memory (AttnToGPU.cpp's chipSharedMemory).
  while (sharedBytes(s, bq, bkv, t.stages, t.warps, request.target, t.producer,
                     t.persistent)
             .exceeds(request.smemBudget)) {
    if (!request.blockKV && bkv > kMinBlock) {
      // Decode's key slices (16 keys of a tile per warp) keep a warp for
      // every 16 keys.
      bool slices = splitsKeys(s, bq, bkv, t.warps);
      bkv /= 2;
      if (slices && !request.warps && request.gpuKernel)
        t.warps = std::clamp<int64_t>(bkv / 16, 1, t.warps);
    } else if (!request.blockQ && s.kind == TileShape::Kind::Gradient &&
               bq > kMinBlock) {
      bq /= 2;
    } else if (request.blockQ || request.blockKV) {
      // Explicit tiles that do not fit are the user's to change.
      break;
    } else if (!request.stages && t.stages > 2) {
      // Then fewer stages, and a forward's second m-tile (chips of
      // 99 KiB, sm_86 and sm_89).
      --t.stages;
    } else if (s.kind == TileShape::Kind::Forward && bq > 16 * t.warps) {
      bq /= 2;
    } else if (!request.warps && !hopper && t.warps > 1 &&
               (s.kind == TileShape::Kind::Forward ||
                (s.kind == TileShape::Kind::Partial &&
                 !splitsKeys(s, bq, bkv, t.warps)))) {
      // Then fewer warps of 16-row tiles.
      t.warps /= 2;
      bq /= 2;
    } else {
      break;
    }
  }
  Bytes bytes = sharedBytes(s, bq, bkv, t.stages, t.warps, request.target,
                            t.producer, t.persistent);
  if (bytes.exceeds(request.smemBudget)) {
    bool gradient = s.kind == TileShape::Kind::Gradient;
    InFlightDiagnostic diag = op->emitError();
    diag << "tiles of block-q = " << bq << " and block-kv = " << bkv << " in "
         << t.stages << " stages need ";
    if (bytes.v)
      diag << *bytes.v;
    else
      diag << "more than 2^63";
    diag << " bytes of workgroup memory ("
         << (gradient ? "Q, dO, K, V tiles and 16-byte row records, rows "
                        "padded by 16 bytes"
             : hopper || splitsKeys(s, bq, bkv, t.warps)
                 ? "Q, K, V tiles in swizzled rows"
                 : "Q, K, V tiles, rows padded by 16 bytes")
         << ", D = " << s.headDim << ", Dv = " << s.valueDim << ", "
         << s.elementBytes
         << "-byte elements), more than smem-budget = " << request.smemBudget;
    if (request.blockQ || request.blockKV)
      diag << "; choose smaller block-q/block-kv or raise smem-budget";
    else
      diag << "; no smaller automatic tile fits: raise smem-budget";
    return failure();
  }
  t.blockQ = bq;
  t.blockKV = bkv;
  t.headCols = s.headCols;
  t.valueCols = s.valueCols;
  t.valueBlocks = valueBlocks;
  if (shape && shape->kind == TileShape::Kind::Gradient) {
    t.headBlockAlign = gradBlockAlign(shape->headCols, shape->elementBytes,
                                      request.target);
    t.valueBlockAlign = gradBlockAlign(shape->valueCols, shape->elementBytes,
                                       request.target);
  }
  t.workgroupBytes = *bytes.v;
  // Decode's few rows leave the warps of a CTA nothing to split but the
  // keys: each takes a slice of every key/value tile.
  if (splitsKeys(s, bq, bkv, t.warps))
    t.keySlices = t.warps;
  return t;
}
