//===- Reference.h - float64 attention reference ----------------*- C++ -*-===//
//
// An independent float64 implementation of the attn op semantics, written
// from the op contract (DESIGN.md, AttnOps.td) without MLIR, so that the
// compiled code is checked against something it does not share code with.
// Tensors are plain row-major double arrays in the logical [B, H, S, X] order.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_CPU_RUNNER_REFERENCE_H
#define ATTN_TOOLS_CPU_RUNNER_REFERENCE_H

#include <cstdint>
#include <vector>

namespace harness {
namespace reference {

enum class Causal { None, TopLeft, BottomRight };
enum class MaskKind { None, Additive, Boolean };
/// The score modifications the harness writes as `score_mod` regions, on the
/// scaled score s of query i, key j, query head h:
///   Softcap: cap * tanh(s / cap);
///   Alibi:   s - slopes[h] * |i - j|;
///   Bias:    s + bias[h, clamp(i - j + R, 0, 2R)] (R = biasRadius).
enum class ScoreMod { None, Softcap, Alibi, Bias };
/// The mask modifications the harness writes as `mask_mod` regions; key j
/// stays visible to query i of sequence b where:
///   Prefix:   j < prefix || j <= i (prefix-LM);
///   Document: queryDocs[b, i] == keyDocs[b, j];
///   Stride:   (i - j) mod 3 != 1, the mod floored (in {0, 1, 2}), so that
///             i - j = ..., -5, -2, 1, 4, ... are hidden on both sides of
///             the diagonal.
enum class MaskMod { None, Prefix, Document, Stride };

struct Problem {
  int64_t batch, queryHeads, kvHeads, querySeq, keySeq, headDim, valueDim;
  double scale;
  Causal causal = Causal::None;
  int64_t window = -1; // < 0: none
  MaskKind maskKind = MaskKind::None;
  /// The mask broadcast to [B, Hq, Sq, Sk] (additive values, or 0/1).
  std::vector<double> mask;
  /// Per-sequence key counts in [0, Sk] (the op's kv_lens); empty: Sk for
  /// every sequence. Keys past a sequence's count are hidden, and its
  /// causal diagonal and split chunks follow its count.
  std::vector<int64_t> keyLens;
  /// Per-sequence query counts in [0, Sq] (a packed batch); empty: Sq.
  /// The causal diagonal follows them; queries past them are not read.
  std::vector<int64_t> queryLens;

  /// The score modification, applied to scale * q.k before the mask, the
  /// causal kind, the window and the mask modification.
  ScoreMod scoreMod = ScoreMod::None;
  double softcap = 20;
  /// ALiBi slopes [Hq]; relative-position bias [Hq, 2 biasRadius + 1].
  std::vector<double> slopes, bias;
  int64_t biasRadius = 8;
  MaskMod maskMod = MaskMod::None;
  int64_t prefix = 0;
  /// Document ids [B, Sq] and [B, Sk].
  std::vector<int64_t> queryDocs, keyDocs;

  /// A block mask (the op's `block_mask`): blocks of `blockQ` queries by
  /// `blockK` keys (0: none). Key block kb of query block qb of (b, h) is
  /// partial if listed among the first counts[b, h, qb] (clamped into
  /// [0, N]) entries of indices[b, h, qb, :N] (each clamped into
  /// [0, ceil(Sk / blockK))), full if listed likewise in the full lists,
  /// hidden otherwise. A partial block's keys are decided by the other
  /// masks and the mask modification, a full one's by the other masks
  /// alone. The lists are stored as the op takes them: counts
  /// [listBatch, listHeads, QB], indices [listBatch, listHeads, QB, N]
  /// (N = listLength, fullListLength), listBatch and listHeads 1 when
  /// broadcast; the full ones empty without full lists.
  int64_t blockQ = 0, blockK = 0;
  int64_t listBatch = 1, listHeads = 1, listLength = 0, fullListLength = 0;
  std::vector<int64_t> blockCounts, blockIndices;
  std::vector<int64_t> fullBlockCounts, fullBlockIndices;

  int64_t keysOf(int64_t b) const {
    return keyLens.empty() ? keySeq : keyLens[b];
  }
  int64_t queriesOf(int64_t b) const {
    return queryLens.empty() ? querySeq : queryLens[b];
  }
};

/// Attention forward: O [B, Hq, Sq, Dv] and LSE [B, Hq, Sq].
void attention(const Problem &p, const std::vector<double> &q,
               const std::vector<double> &k, const std::vector<double> &v,
               std::vector<double> &o, std::vector<double> &lse);

/// Split-KV partials: O_s [N, B, Hq, Sq, Dv], LSE_s [N, B, Hq, Sq].
void attentionPartial(const Problem &p, int64_t numSplits,
                      const std::vector<double> &q,
                      const std::vector<double> &k,
                      const std::vector<double> &v, std::vector<double> &o,
                      std::vector<double> &lse);

/// Balanced split-KV partials (attn.attention_partial `balanced`): the
/// N * B work items O_w [N * B, 1, Hq, Sq, Dv], LSE_w [N * B, 1, Hq, Sq]
/// (O = 0, LSE = -inf past the last) and split_offsets [B + 1].
void balancedPartial(const Problem &p, int64_t numSplits,
                     const std::vector<double> &q, const std::vector<double> &k,
                     const std::vector<double> &v, std::vector<double> &o,
                     std::vector<double> &lse, std::vector<double> &offsets);

/// Gradients dQ, dK, dV (logical shapes of Q, K, V) given dO.
void attentionGrad(const Problem &p, const std::vector<double> &q,
                   const std::vector<double> &k, const std::vector<double> &v,
                   const std::vector<double> &dO, std::vector<double> &dQ,
                   std::vector<double> &dK, std::vector<double> &dV);

} // namespace reference
} // namespace harness

#endif // ATTN_TOOLS_CPU_RUNNER_REFERENCE_H
