//===- Reference.cpp - float64 attention reference ------------------------===//

#include "Reference.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

using namespace harness::reference;

namespace {
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// Row-major index into a logical [B, H, S, X] tensor.
struct Index4 {
  int64_t h, s, x;
  int64_t operator()(int64_t b, int64_t hi, int64_t si, int64_t xi) const {
    return ((b * h + hi) * s + si) * x + xi;
  }
};

/// The score modification at the scaled score `s` of query i and key j of
/// query head h.
double modifyScore(const Problem &p, int64_t h, int64_t i, int64_t j,
                   double s) {
  switch (p.scoreMod) {
  case ScoreMod::None:
    return s;
  case ScoreMod::Softcap:
    return p.softcap * std::tanh(s / p.softcap);
  case ScoreMod::Alibi:
    return s - p.slopes[h] * static_cast<double>(std::llabs(i - j));
  case ScoreMod::Bias: {
    int64_t r = p.biasRadius;
    int64_t at = std::clamp<int64_t>(i - j + r, 0, 2 * r);
    return s + p.bias[h * (2 * r + 1) + at];
  }
  }
  return s;
}

/// d modifyScore / ds at `s`.
double modifyScoreDerivative(const Problem &p, double s) {
  if (p.scoreMod != ScoreMod::Softcap)
    return 1.0; // The identity, ALiBi and the bias only add to s.
  double t = std::tanh(s / p.softcap);
  return 1.0 - t * t;
}

/// Whether the mask modification keeps key j for query i of sequence b.
bool maskModKeeps(const Problem &p, int64_t b, int64_t i, int64_t j) {
  switch (p.maskMod) {
  case MaskMod::None:
    return true;
  case MaskMod::Prefix:
    return j < p.prefix || j <= i;
  case MaskMod::Document:
    return p.queryDocs[b * p.querySeq + i] == p.keyDocs[b * p.keySeq + j];
  case MaskMod::Stride: {
    // Floored: C++'s % truncates toward zero, so shift negative remainders.
    int64_t r = (i - j) % 3;
    return (r < 0 ? r + 3 : r) != 1;
  }
  }
  return true;
}

/// How the block mask treats the key blocks of query block qb of (b, h).
enum class Block : uint8_t { Hidden, Partial, Full };

/// The state of every key block for query block qb of (b, h); without a
/// block mask, one partial block of every key (the mask modification
/// decides each).
std::vector<Block> keyBlocks(const Problem &p, int64_t b, int64_t h,
                             int64_t qb) {
  if (!p.blockQ)
    return {Block::Partial};
  int64_t numBlocks = (p.keySeq + p.blockK - 1) / p.blockK;
  int64_t numQueryBlocks = (p.querySeq + p.blockQ - 1) / p.blockQ;
  std::vector<Block> state(numBlocks, Block::Hidden);
  int64_t row =
      ((p.listBatch == 1 ? 0 : b) * p.listHeads + (p.listHeads == 1 ? 0 : h)) *
          numQueryBlocks +
      qb;
  auto mark = [&](const std::vector<int64_t> &counts,
                  const std::vector<int64_t> &indices, int64_t length,
                  Block as) {
    int64_t count = std::clamp<int64_t>(counts[row], 0, length);
    for (int64_t n = 0; n < count; ++n) {
      int64_t kb =
          std::clamp<int64_t>(indices[row * length + n], 0, numBlocks - 1);
      // A block in both lists is full (the lowerings' or; the op leaves
      // it unspecified, so the harness never makes one).
      if (state[kb] != Block::Full)
        state[kb] = as;
    }
  };
  mark(p.blockCounts, p.blockIndices, p.listLength, Block::Partial);
  if (!p.fullBlockCounts.empty())
    mark(p.fullBlockCounts, p.fullBlockIndices, p.fullListLength, Block::Full);
  return state;
}

/// The scores of query (b, h, i) against every key: score_mod(scale * q.k)
/// + mask, -inf where hidden. With `slope`, also the derivative of the
/// score modification at each key's scaled score.
std::vector<double> scoreRow(const Problem &p, const std::vector<double> &q,
                             const std::vector<double> &k, int64_t b, int64_t h,
                             int64_t i, std::vector<double> *slope = nullptr) {
  Index4 qi{p.queryHeads, p.querySeq, p.headDim};
  Index4 ki{p.kvHeads, p.keySeq, p.headDim};
  int64_t kvh = h / (p.queryHeads / p.kvHeads);
  int64_t keys = p.keysOf(b);
  int64_t diag =
      i + (p.causal == Causal::BottomRight ? keys - p.queriesOf(b) : 0);
  std::vector<Block> blocks = keyBlocks(p, b, h, p.blockQ ? i / p.blockQ : 0);
  std::vector<double> s(p.keySeq);
  if (slope)
    slope->assign(p.keySeq, 1.0);
  for (int64_t j = 0; j < p.keySeq; ++j) {
    double dot = 0;
    for (int64_t d = 0; d < p.headDim; ++d)
      dot += q[qi(b, h, i, d)] * k[ki(b, kvh, j, d)];
    double v = modifyScore(p, h, i, j, p.scale * dot);
    if (slope)
      (*slope)[j] = modifyScoreDerivative(p, p.scale * dot);
    size_t m = ((b * p.queryHeads + h) * p.querySeq + i) * p.keySeq + j;
    if (p.maskKind == MaskKind::Additive)
      v += p.mask[m];
    if (p.maskKind == MaskKind::Boolean && p.mask[m] == 0)
      v = kNegInf;
    if (p.causal != Causal::None) {
      if (j > diag || (p.window >= 0 && diag - j > p.window))
        v = kNegInf;
    }
    Block block = blocks[p.blockQ ? j / p.blockK : 0];
    bool keep = block == Block::Full ||
                (block == Block::Partial && maskModKeeps(p, b, i, j));
    if (j >= keys || !keep)
      v = kNegInf;
    s[j] = v;
  }
  return s;
}

/// Softmax-weighted sum of V over keys [lo, hi) of one score row; writes the
/// normalised output row and returns the LSE (-inf when nothing is visible).
double attendRange(const Problem &p, const std::vector<double> &s,
                   const std::vector<double> &v, int64_t b, int64_t kvh,
                   int64_t lo, int64_t hi, double *out) {
  Index4 vi{p.kvHeads, p.keySeq, p.valueDim};
  double m = kNegInf;
  for (int64_t j = lo; j < hi; ++j)
    m = std::max(m, s[j]);
  std::fill(out, out + p.valueDim, 0.0);
  if (m == kNegInf)
    return kNegInf;
  double l = 0;
  for (int64_t j = lo; j < hi; ++j) {
    double w = std::exp(s[j] - m);
    l += w;
    for (int64_t e = 0; e < p.valueDim; ++e)
      out[e] += w * v[vi(b, kvh, j, e)];
  }
  for (int64_t e = 0; e < p.valueDim; ++e)
    out[e] /= l;
  return m + std::log(l);
}
} // namespace

void harness::reference::attentionPartial(const Problem &p, int64_t numSplits,
                                       const std::vector<double> &q,
                                       const std::vector<double> &k,
                                       const std::vector<double> &v,
                                       std::vector<double> &o,
                                       std::vector<double> &lse) {
  int64_t rows = p.batch * p.queryHeads * p.querySeq;
  o.assign(numSplits * rows * p.valueDim, 0.0);
  lse.assign(numSplits * rows, kNegInf);
  int64_t group = p.queryHeads / p.kvHeads;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.queryHeads; ++h)
      for (int64_t i = 0; i < p.querySeq; ++i) {
        std::vector<double> s = scoreRow(p, q, k, b, h, i);
        int64_t row = (b * p.queryHeads + h) * p.querySeq + i;
        int64_t keys = p.keysOf(b);
        int64_t chunk = (keys + numSplits - 1) / numSplits;
        for (int64_t n = 0; n < numSplits; ++n) {
          int64_t lo = std::min(n * chunk, keys);
          int64_t hi = std::min(lo + chunk, keys);
          lse[n * rows + row] =
              attendRange(p, s, v, b, h / group, lo, hi,
                          &o[(n * rows + row) * p.valueDim]);
        }
      }
}

void harness::reference::balancedPartial(const Problem &p, int64_t numSplits,
                                         const std::vector<double> &q,
                                         const std::vector<double> &k,
                                         const std::vector<double> &v,
                                         std::vector<double> &o,
                                         std::vector<double> &lse,
                                         std::vector<double> &offsets) {
  // One chunk size for the batch, a multiple of 128 keys: T / (N * B - B)
  // rounded up, at least 128, at most Sk.
  int64_t items = numSplits * p.batch, total = 0;
  for (int64_t b = 0; b < p.batch; ++b)
    total += p.keysOf(b);
  int64_t chunks = std::max<int64_t>(items - p.batch, 1);
  int64_t chunk =
      128 * std::max<int64_t>((total + 128 * chunks - 1) / (128 * chunks), 1);
  chunk = std::max<int64_t>(std::min(chunk, p.keySeq), 1);
  int64_t rows = p.queryHeads * p.querySeq;
  o.assign(items * rows * p.valueDim, 0.0);
  lse.assign(items * rows, kNegInf);
  offsets.assign(p.batch + 1, 0.0);
  int64_t group = p.queryHeads / p.kvHeads, first = 0;
  for (int64_t b = 0; b < p.batch; ++b) {
    int64_t keys = p.keysOf(b), count = (keys + chunk - 1) / chunk;
    offsets[b] = static_cast<double>(first);
    for (int64_t h = 0; h < p.queryHeads; ++h)
      for (int64_t i = 0; i < p.querySeq; ++i) {
        std::vector<double> s = scoreRow(p, q, k, b, h, i);
        int64_t row = h * p.querySeq + i;
        for (int64_t n = 0; n < count; ++n) {
          int64_t w = first + n;
          int64_t lo = n * chunk, hi = std::min(lo + chunk, keys);
          lse[w * rows + row] = attendRange(p, s, v, b, h / group, lo, hi,
                                            &o[(w * rows + row) * p.valueDim]);
        }
      }
    first += count;
  }
  offsets[p.batch] = static_cast<double>(first);
}

void harness::reference::attention(const Problem &p, const std::vector<double> &q,
                                const std::vector<double> &k,
                                const std::vector<double> &v,
                                std::vector<double> &o,
                                std::vector<double> &lse) {
  attentionPartial(p, /*numSplits=*/1, q, k, v, o, lse);
}

void harness::reference::attentionGrad(const Problem &p,
                                    const std::vector<double> &q,
                                    const std::vector<double> &k,
                                    const std::vector<double> &v,
                                    const std::vector<double> &dO,
                                    std::vector<double> &dQ,
                                    std::vector<double> &dK,
                                    std::vector<double> &dV) {
  Index4 qi{p.queryHeads, p.querySeq, p.headDim};
  Index4 ki{p.kvHeads, p.keySeq, p.headDim};
  Index4 vi{p.kvHeads, p.keySeq, p.valueDim};
  Index4 oi{p.queryHeads, p.querySeq, p.valueDim};
  dQ.assign(q.size(), 0.0);
  dK.assign(k.size(), 0.0);
  dV.assign(v.size(), 0.0);
  int64_t group = p.queryHeads / p.kvHeads;
  std::vector<double> prob(p.keySeq), dP(p.keySeq), slope;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.queryHeads; ++h)
      for (int64_t i = 0; i < p.querySeq; ++i) {
        int64_t kvh = h / group;
        std::vector<double> s = scoreRow(p, q, k, b, h, i, &slope);
        double m = *std::max_element(s.begin(), s.end());
        if (m == kNegInf)
          continue; // A fully masked row has zero output and zero gradient.
        double l = 0;
        for (int64_t j = 0; j < p.keySeq; ++j)
          l += (prob[j] = std::exp(s[j] - m));
        // The analytic softmax Jacobian: dS_j = P_j (dP_j - sum_k P_k dP_k).
        double rowDot = 0;
        for (int64_t j = 0; j < p.keySeq; ++j) {
          prob[j] /= l;
          double acc = 0;
          for (int64_t e = 0; e < p.valueDim; ++e)
            acc += dO[oi(b, h, i, e)] * v[vi(b, kvh, j, e)];
          dP[j] = acc;
          rowDot += prob[j] * acc;
        }
        for (int64_t j = 0; j < p.keySeq; ++j) {
          for (int64_t e = 0; e < p.valueDim; ++e)
            dV[vi(b, kvh, j, e)] += prob[j] * dO[oi(b, h, i, e)];
          // Through the score modification, then through scale * q.k.
          double dS = prob[j] * (dP[j] - rowDot) * slope[j] * p.scale;
          for (int64_t d = 0; d < p.headDim; ++d) {
            dQ[qi(b, h, i, d)] += dS * k[ki(b, kvh, j, d)];
            dK[ki(b, kvh, j, d)] += dS * q[qi(b, h, i, d)];
          }
        }
      }
}
