//===- TileCost.cpp - HBM traffic and FLOPs of the tiled loops ------------===//
//
// Counts what the loops attn-tile builds move through HBM and compute, by
// walking the same tile bounds on the host (static shapes only), next to
// standard attention of the same shape: S = scale Q K^T written to HBM,
// read back by the softmax, P written and read by P V (S and P in the
// element type); its gradient reads P and writes and reads dP and dS. FLOPs
// count the matmuls (2 per multiply-add), padding of ragged tiles included
// for the tiled loops.
//
//===----------------------------------------------------------------------===//

#include "TileCommon.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
struct Cost {
  double bytes = 0, flops = 0;
};

/// The static problem, for counting.
struct Shape {
  int64_t batch, hq, hkv, sq, sk, d, dv;
  int64_t elementBytes, maskBytes = 0;
  CausalKind causal;
  std::optional<int64_t> window;
  /// With a block mask, the fraction of the blocks it keeps (1 - the
  /// report's sparsity); 0 without one.
  double density = 0;
  /// The tiles a visit of `tiles` tiles reads, and the bytes of the block
  /// lists it reads for them: a count per visit and an index per tile, of
  /// the partial and the full lists.
  double visited(double tiles) const {
    return density ? tiles * density : tiles;
  }
  double listBytes(double tiles) const {
    return density ? 2 * 4 + 4 * visited(tiles) : 0;
  }
  int64_t group() const { return hq / hkv; }
  int64_t offset() const { return causal == CausalKind::BottomRight ? sk - sq : 0; }
  /// The window as tile::getProblem clamps it.
  int64_t windowSize() const { return std::min(*window, sq + sk); }

  /// Mirrors tile::visibleKeys.
  std::pair<int64_t, int64_t> visibleKeys(int64_t iLo, int64_t iHi) const {
    int64_t begin = 0, end = sk;
    if (causal == CausalKind::None)
      return {begin, end};
    end = std::max<int64_t>(0, std::min(end, iHi + offset() + 1));
    if (window)
      begin = std::max(begin, iLo + offset() - windowSize());
    return {begin, end};
  }
  /// Mirrors tile::visibleQueries.
  std::pair<int64_t, int64_t> visibleQueries(int64_t jLo, int64_t jHi) const {
    int64_t begin = 0, end = sq;
    if (causal == CausalKind::None)
      return {begin, end};
    begin = std::min(end, std::max(begin, jLo - offset()));
    if (window)
      end = std::max(begin, std::min(end, jHi - offset() + windowSize() + 1));
    return {begin, end};
  }
};

/// ceil(a / b) for a >= 0, b > 0.
int64_t ceilDiv(int64_t a, int64_t b) {
  return static_cast<int64_t>(llvm::divideCeil(a, b));
}

/// The tiles of `block` keys (or queries) that cover [begin, end): how
/// many, and the keys they hold (the last tile may be short).
struct Span {
  double tiles = 0, keys = 0;
};
Span spanOf(int64_t begin, int64_t end, int64_t block) {
  if (end <= begin)
    return {};
  return {static_cast<double>(ceilDiv(end - begin, block)),
          static_cast<double>(end - begin)};
}

/// The outer tiles the counts below walk one by one, at most; past it the
/// report says the traffic was not counted rather than take minutes.
constexpr int64_t kMaxCountedTiles = int64_t(1) << 20;
} // namespace

template <typename OpTy>
static std::optional<Shape> getShape(OpTy op) {
  // With per-sequence key counts, every sequence at the capacity: an
  // upper bound (the counts are known at run time only).
  AttentionConfig c = getAttentionConfig(op);
  // A packed batch's sequence lengths are known at run time only.
  if (c.packedQueries)
    return std::nullopt;
  AttentionDims d = c.dims;
  if (ShapedType::isDynamic(d.batch) || ShapedType::isDynamic(d.querySeq) ||
      ShapedType::isDynamic(d.keySeq))
    return std::nullopt;
  Shape s{d.batch, d.queryHeads, d.kvHeads, d.querySeq, d.keySeq,
          d.headDim, d.valueDim};
  s.elementBytes =
      op.getQuery().getType().getElementType().getIntOrFloatBitWidth() / 8;
  if (Value mask = op.getMask())
    s.maskBytes =
        std::max<int64_t>(1, getElementTypeOrSelf(mask).getIntOrFloatBitWidth() / 8);
  s.causal = op.getCausal();
  s.window = op.getWindow();
  return s;
}

/// getShape, with `sparsity` for an op with a block mask.
template <typename OpTy>
static std::optional<Shape> getShape(OpTy op, double sparsity) {
  std::optional<Shape> s = getShape(op);
  if (s && getBlockMask(op))
    s->density = 1.0 - sparsity;
  return s;
}

// The counts are in double from the first product on: the shapes' products
// (B Hq Sq Sk, times D) need not fit int64.

/// Unfused forward attention: Q, K, V read, S written, read, P written,
/// read, O (and LSE) written.
static Cost standardForward(const Shape &s, bool withLse) {
  double heads = double(s.batch) * s.hq, e = s.elementBytes;
  double scores = heads * s.sq * s.sk;
  Cost c;
  c.bytes = heads * s.sq * (s.d + s.dv) * e +
            double(s.batch) * s.hkv * s.sk * (s.d + s.dv) * e + 4 * scores * e +
            scores * s.maskBytes + (withLse ? heads * s.sq * 4 : 0);
  c.flops = 2 * scores * (s.d + s.dv);
  return c;
}

static std::optional<Cost> tiledForward(const Shape &s, const AttnTileSizes &t,
                                        bool withLse) {
  if (ceilDiv(s.sq, t.blockQ) > kMaxCountedTiles)
    return std::nullopt;
  double e = s.elementBytes;
  double heads = double(s.batch) * s.hq;
  // Each value block reads Q, K, the mask and its V columns again and
  // computes S again (AttnTileSizes::valueBlocks).
  double blocks = t.valueBlocks;
  double dv = valueBlocking(s.dv, t.valueBlocks).width;
  Cost perHead;
  for (int64_t q0 = 0; q0 < s.sq; q0 += t.blockQ) {
    double rows = std::min(t.blockQ, s.sq - q0);
    auto [jBegin, jEnd] = s.visibleKeys(q0, q0 + int64_t(rows) - 1);
    Span keys = spanOf(jBegin, jEnd, t.blockKV);
    double seen = keys.keys * (s.density ? s.density : 1.0);
    perHead.bytes +=
        blocks * (rows * (s.d + dv) * e + seen * (s.d + dv) * e +
                  rows * seen * s.maskBytes + s.listBytes(keys.tiles)) +
        (withLse ? rows * 4 : 0);
    perHead.flops += blocks * s.visited(keys.tiles) * 2.0 * t.blockQ *
                     t.blockKV * (s.d + dv);
  }
  return Cost{perHead.bytes * heads, perHead.flops * heads};
}

static std::optional<Cost> tiledPartial(const Shape &s, const AttnTileSizes &t,
                                        int64_t splits) {
  int64_t packed = s.group() * s.sq;
  std::optional<int64_t> visits =
      llvm::checkedMul(splits, ceilDiv(packed, t.blockQ));
  if (!visits || *visits > kMaxCountedTiles)
    return std::nullopt;
  double e = s.elementBytes;
  int64_t chunk = ceilDiv(s.sk, splits);
  double blocks = t.valueBlocks;
  double dv = valueBlocking(s.dv, t.valueBlocks).width;
  Cost perGroup;
  for (int64_t n = 0; n < splits; ++n) {
    for (int64_t r0 = 0; r0 < packed; r0 += t.blockQ) {
      int64_t rows = std::min(t.blockQ, packed - r0);
      int64_t last = r0 + rows - 1;
      bool sameHead = r0 / s.sq == last / s.sq;
      auto [jBegin, jEnd] = s.visibleKeys(sameHead ? r0 % s.sq : 0,
                                          sameHead ? last % s.sq : s.sq - 1);
      jBegin = std::max(jBegin, n * chunk);
      jEnd = std::min({jEnd, n * chunk + chunk, s.sk});
      Span keys = spanOf(jBegin, jEnd, t.blockKV);
      perGroup.bytes += blocks * (rows * s.d * e + rows * dv * 4.0 +
                                  keys.keys * (s.d + dv) * e +
                                  double(rows) * keys.keys * s.maskBytes) +
                        rows * 4.0;
      perGroup.flops +=
          blocks * keys.tiles * 2.0 * t.blockQ * t.blockKV * (s.d + dv);
    }
  }
  double groups = double(s.batch) * s.hkv;
  return Cost{perGroup.bytes * groups, perGroup.flops * groups};
}

/// Unfused gradients: Q, K, V, O, dO, LSE read; P read twice (dV, dS), dP
/// written and read, dS written and read twice (dQ, dK); dQ, dK, dV
/// written.
static Cost standardBackward(const Shape &s) {
  double heads = double(s.batch) * s.hq, e = s.elementBytes;
  double scores = heads * s.sq * s.sk;
  double qSide = heads * s.sq * (s.d + 2 * s.dv) * e + heads * s.sq * 4;
  double kvSide = double(s.batch) * s.hkv * s.sk * (s.d + s.dv) * e;
  Cost c;
  c.bytes = qSide + 2 * kvSide + heads * s.sq * s.d * e + 7 * scores * e;
  c.flops = 4 * scores * (s.d + s.dv);
  return c;
}

static std::optional<Cost> tiledBackward(const Shape &s, const AttnTileSizes &t,
                                         bool deterministic) {
  if (ceilDiv(s.sk, t.blockKV) > kMaxCountedTiles ||
      ceilDiv(s.sq, t.blockQ) > kMaxCountedTiles)
    return std::nullopt;
  double e = s.elementBytes;
  double heads = double(s.batch) * s.hq, groups = double(s.batch) * s.hkv;
  // Column blocks (AttnTileSizes::valueBlocks) each read the tiles and
  // compute S and dP again; their products with Q, dO and K span the
  // blocks' columns (with one block the head dims).
  double blocks = t.valueBlocks;
  auto blockColumns = [&](int64_t dim, int64_t cols, int64_t align) {
    GradBlocking g = gradBlocking(dim, cols, t.valueBlocks, align);
    return t.valueBlocks > 1 ? double(g.count) * g.step : double(dim);
  };
  double dkCols = blockColumns(s.d, t.headCols, t.headBlockAlign);
  double dvCols = blockColumns(s.dv, t.valueCols, t.valueBlockAlign);
  Cost c;
  // The row statistics: dO, O and LSE read, a 16-byte record written.
  c.bytes += heads * s.sq * (2 * s.dv * e + 4 + 16);
  // dK, dV: one pass per key/value tile (and block) over the query tiles
  // that see it.
  Cost perGroup;
  for (int64_t j0 = 0; j0 < s.sk; j0 += t.blockKV) {
    double cols = std::min(t.blockKV, s.sk - j0);
    perGroup.bytes += (blocks + 1) * cols * (s.d + s.dv) * e;
    auto [iBegin, iEnd] = s.visibleQueries(j0, j0 + int64_t(cols) - 1);
    Span queries = spanOf(iBegin, iEnd, t.blockQ);
    double seen = queries.keys * (s.density ? s.density : 1.0);
    double step = seen * ((s.d + s.dv) * e + 16 + cols * s.maskBytes) +
                  s.listBytes(queries.tiles);
    if (!deterministic)
      step += 2.0 * seen * s.d * 4;
    perGroup.bytes += blocks * s.group() * step;
    double flops =
        2.0 * t.blockQ * t.blockKV * (blocks * (s.d + s.dv) + dkCols + dvCols);
    if (!deterministic)
      flops += 2.0 * t.blockQ * t.blockKV * s.d;
    perGroup.flops += s.group() * s.visited(queries.tiles) * flops;
  }
  c.bytes += perGroup.bytes * groups;
  c.flops += perGroup.flops * groups;
  if (!deterministic) {
    // Zeroing, reading and converting the f32 dQ accumulator.
    c.bytes += heads * s.sq * s.d * (8 + e);
    return c;
  }
  // dQ: one pass per query tile over the key/value tiles it sees.
  Cost perHead;
  for (int64_t q0 = 0; q0 < s.sq; q0 += t.blockQ) {
    double rows = std::min(t.blockQ, s.sq - q0);
    perHead.bytes +=
        blocks * (rows * (s.d + s.dv) * e + rows * 16) + rows * s.d * e;
    auto [jBegin, jEnd] = s.visibleKeys(q0, q0 + int64_t(rows) - 1);
    Span keys = spanOf(jBegin, jEnd, t.blockKV);
    double seen = keys.keys * (s.density ? s.density : 1.0);
    perHead.bytes += blocks * (seen * (s.d + s.dv) * e +
                               rows * seen * s.maskBytes +
                               s.listBytes(keys.tiles));
    perHead.flops += s.visited(keys.tiles) * 2.0 * t.blockQ * t.blockKV *
                     (blocks * (s.d + s.dv) + dkCols);
  }
  c.bytes += perHead.bytes * heads;
  c.flops += perHead.flops * heads;
  return c;
}

static std::string compare(const std::optional<Cost> &tiled,
                           const Cost &standard) {
  if (!tiled)
    return llvm::formatv("HBM traffic and FLOPs not counted: the tiled loops "
                         "visit more than {0} tiles",
                         kMaxCountedTiles)
        .str();
  return llvm::formatv("HBM traffic {0:F0} bytes tiled vs {1:F0} standard "
                       "({2:F2}x); matmul FLOPs {3:F0} tiled vs {4:F0} "
                       "standard ({5:F2}x)",
                       tiled->bytes, standard.bytes,
                       tiled->bytes / std::max(1.0, standard.bytes),
                       tiled->flops, standard.flops,
                       tiled->flops / std::max(1.0, standard.flops))
      .str();
}

std::string attn::describeAttnTiling(Operation *op,
                                     const AttnTileConfig &config) {
  const AttnTileSizes &t = config.sizes;
  std::string space = "default";
  if (config.memorySpace) {
    llvm::raw_string_ostream os(space);
    space.clear();
    config.memorySpace.print(os);
  }
  std::string head = llvm::formatv(
      "attn-tile: block-q = {0}, block-kv = {1}, {2} stages, "
      "{3} warps, {4}{5}{6} bytes of tiles in memory space {7}",
      t.blockQ, t.blockKV, t.stages, t.warps,
      t.keySlices > 1 ? llvm::formatv("{0} key slices, ", t.keySlices).str()
                      : std::string(),
      t.valueBlocks <= 1 ? std::string()
      : isa<AttentionGradOp>(op)
          ? llvm::formatv("{0} column blocks of the gradients, ", t.valueBlocks)
                .str()
          : llvm::formatv("{0} value blocks of {1} columns, ", t.valueBlocks,
                          t.valueCols)
                .str(),
      t.workgroupBytes, space);
  constexpr StringLiteral dynamic =
      "; HBM traffic and FLOPs need static batch and sequence lengths";
  // The tiled counts of an op with a block mask assume `sparsity`.
  auto sparse = [&](const Shape &s) -> std::string {
    if (!s.density)
      return "";
    return llvm::formatv(" (with the block mask leaving out a fraction "
                         "{0:F2} of the blocks: option sparsity)",
                         config.sparsity)
        .str();
  };
  // The counts of an op with per-sequence key counts are upper bounds.
  auto bound = [](auto op) -> std::string {
    if (!op.getKvLens())
      return "";
    return llvm::formatv(" (upper bounds: every sequence at the capacity, "
                         "{0} keys)",
                         getAttentionConfig(op).dims.keySeq)
        .str();
  };

  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case<AttentionOp>([&](AttentionOp op) {
        std::optional<Shape> s = getShape(op, config.sparsity);
        if (!s)
          return head + dynamic.str();
        bool lse = static_cast<bool>(op.getLse());
        return head + "; " +
               compare(tiledForward(*s, t, lse), standardForward(*s, lse)) +
               bound(op) + sparse(*s);
      })
      .Case<AttentionPartialOp>([&](AttentionPartialOp op) {
        std::optional<Shape> s = getShape(op);
        if (!s)
          return head + dynamic.str();
        return head + llvm::formatv(", {0} splits", op.getNumSplits()).str() +
               "; " +
               compare(tiledPartial(*s, t, op.getNumSplits()),
                       standardForward(*s, /*withLse=*/true)) +
               bound(op);
      })
      .Case<AttentionGradOp>([&](AttentionGradOp op) {
        std::optional<Shape> s = getShape(op, config.sparsity);
        if (!s)
          return head + dynamic.str();
        return head + "; " +
               compare(tiledBackward(*s, t, config.deterministic),
                       standardBackward(*s)) +
               sparse(*s);
      })
      .Case<CombineOp>([&](CombineOp op) {
        ShapedType parts = op.getPartialOutput().getType();
        std::string rowTiles =
            llvm::formatv("attn-tile: combine, block-q = {0} rows by "
                          "block-kv = {1} columns per tile, warps = {2}, no "
                          "shared memory",
                          t.blockQ, t.blockKV, t.warps)
                .str();
        if (!parts.hasStaticShape())
          return rowTiles + dynamic.str();
        double outRows = double(parts.getDimSize(1)) * parts.getDimSize(2) *
                         parts.getDimSize(3);
        double dv = parts.getDimSize(4);
        double outBytes =
            op.getOutput().getType().getElementType().getIntOrFloatBitWidth() /
            8;
        double bytes = parts.getDimSize(0) * outRows * (dv + 1) * 4 +
                       outRows * (dv * outBytes + (op.getLse() ? 4 : 0));
        return llvm::formatv("{0}; HBM traffic {1:F0} bytes", rowTiles, bytes)
            .str();
      })
      .Default([](Operation *) { return std::string(); });
}
