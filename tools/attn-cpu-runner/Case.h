//===- Case.h - one attention test case --------------------------*- C++
//-*-===//
//
// A test case is a line of `key=value` words, e.g.
//   op=attention b=2 hq=8 hkv=2 sq=77 sk=129 d=16 dv=8 dtype=f16
//   causal=bottom_right window=5 mask=add mask-shape=1hqk layout=bshd lse=1
//   kv-lens=1 page-size=16 score-mod=softcap softcap=30 mask-mod=document
//   block-mask=random mask-block-q=32 mask-block-k=16 sparsity=0.5 full=1
// Cases come from the command line or from a seeded random generator; each
// becomes attn IR, inputs, and a float64 reference.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_CPU_RUNNER_CASE_H
#define ATTN_TOOLS_CPU_RUNNER_CASE_H

#include "HostTensor.h"
#include "Reference.h"

#include <random>
#include <string>
#include <vector>

namespace harness {

/// How a case draws its block mask (the op's `block_mask`): random key
/// blocks per query block, FlexAttention's causal block mask (the blocks
/// that the causal diagonal and the window cut partial, those wholly
/// inside full, the rest hidden), or blocks of documents (full where the
/// query and key blocks lie in one document, partial where their
/// documents overlap, hidden where they do not).
enum class BlockMaskKind { None, Random, Causal, Document };

struct Case {
  std::string op = "attention"; // attention | split | grad
  int64_t b = 1, hq = 1, hkv = 1, sq = 1, sk = 1, d = 16, dv = 16;
  DType dtype = DType::F32;
  reference::Causal causal = reference::Causal::None;
  int64_t window = -1;
  reference::MaskKind mask = reference::MaskKind::None;
  /// Right-aligned mask dims from "bhqk1": "bhqk", "qk", "1hqk", "b11k"...
  std::string maskShape = "bhqk";
  /// Rows of the mask set to -inf / false so that some queries see nothing.
  bool killRows = false;
  bool bshd = false;
  bool lse = false;
  int64_t splits = 1;
  double scale = 0; // 0: the op's default 1/sqrt(d)
  bool dynamic = false;
  /// Per-sequence key counts (kv_lens, random in [0, sk] from the seed);
  /// with `pageSize`, K and V in a paged cache of pages of that many rows,
  /// in random page order (the block table).
  bool kvLens = false;
  int64_t pageSize = 0;
  /// op=split with kv_lens: `balanced` split-KV work items (splits * b of
  /// them, one chunk size for the whole batch) and their split_offsets.
  bool balanced = false;
  /// A packed batch (op=attention): the queries of each sequence (0 to sq,
  /// from the seed) back to back, with query_offsets; without kv_lens the
  /// keys (0 to sk each) too, with key_offsets.
  bool packed = false;
  /// A `score_mod` region (reference::ScoreMod has the formulas): soft-capping
  /// at `softcap`, ALiBi with random slopes, or a random relative-position
  /// bias of radius kBiasRadius.
  reference::ScoreMod scoreMod = reference::ScoreMod::None;
  double softcap = 20;
  /// A `mask_mod` region: prefix-LM over the first `prefix` keys, document
  /// ids drawn from the seed, or a stride pattern.
  reference::MaskMod maskMod = reference::MaskMod::None;
  int64_t prefix = 5;
  /// A block mask of `maskBlockQ` x `maskBlockK` blocks. Random: each key
  /// block hidden with probability `sparsity`, else listed, and in half
  /// of the (b, h) lists one query block sees no block at all. With
  /// `fullLists`, the op takes full lists too (random: half of the listed
  /// blocks go there; causal, document: the blocks wholly visible), else
  /// every visited block is partial. The lists are per query head and
  /// per sequence, or broadcast (size 1) over either; in random order,
  /// with 0 to 2 spare columns of garbage past every count.
  BlockMaskKind blockMask = BlockMaskKind::None;
  int64_t maskBlockQ = 16, maskBlockK = 16;
  double sparsity = 0.5;
  bool fullLists = true;
  bool blockHeads = true, blockBatch = true;
  uint64_t seed = 1;

  static constexpr int64_t kBiasRadius = 8;

  /// Pages per sequence (ceil(sk / pageSize)) and in the pool (two spare
  /// pages that no sequence uses).
  int64_t maxPages() const { return (sk + pageSize - 1) / pageSize; }
  int64_t pages() const { return b * maxPages() + 2; }
  /// With pages, sk is the cache's capacity: whole pages.
  void roundKeysToPages() {
    if (pageSize > 0 && sk > 0)
      sk = maxPages() * pageSize;
  }

  /// A packed case's query and key counts per sequence (drawn from the
  /// seed, 0 and the maxima among them), and their offsets.
  std::vector<int64_t> packedCounts(bool keys) const;
  static std::vector<int64_t> offsetsOf(const std::vector<int64_t> &counts);
  /// Whether K and V are packed too (key_offsets).
  bool packedKeys() const { return packed && !kvLens; }

  /// The tensors the regions read (the op's mod_operands), in their fixed
  /// order: the ALiBi slopes [Hq] (f32) or the bias [Hq, 2R + 1] (f32),
  /// then the query and key document ids [B, Sq] and [B, Sk] (i32). They
  /// are @kernel's last arguments.
  std::vector<std::string> modOperandNames() const;
  /// Their values, from the seed (a stream of their own, so that the other
  /// inputs of a case do not change with its modifications).
  std::vector<HostTensor> makeModOperands() const;

  /// The block mask's query and key blocks.
  int64_t queryBlocks() const { return (sq + maskBlockQ - 1) / maskBlockQ; }
  int64_t keyBlocks() const { return (sk + maskBlockK - 1) / maskBlockK; }
  /// The block mask's operands, in their fixed order: the counts and
  /// indices of the key blocks of each query block (i32 [B, Hq, QB] and
  /// [B, Hq, QB, N], B and Hq 1 when broadcast), the full blocks' ones
  /// (with `fullLists`), then for op=grad the same lists transposed (the
  /// query blocks of each key block: q_block_mask). They are @kernel's
  /// arguments after the mask, drawn from a stream of the seed's.
  std::vector<HostTensor> makeBlockMask() const;
  size_t blockMaskOperands() const;

  /// Parses `key=value` words; returns an error message or "".
  std::string parse(const std::string &text);
  std::string str() const;
  /// Checks the case describes valid IR; returns an error message or "".
  std::string validate() const;

  /// A random valid case; `ops` restricts the op kinds. With
  /// `blockSizes`, half of the attention and grad cases that can take one
  /// get a block mask of blocks of those sizes (query and key sizes drawn
  /// apart).
  static Case random(std::mt19937_64 &rng, const std::vector<std::string> &ops,
                     const std::vector<int64_t> &blockSizes = {});

  /// The attn IR of this case: a func @kernel taking the inputs and
  /// returning the outputs.
  std::string toIR() const;

  /// The inputs, in the order of @kernel's arguments, filled from `seed`.
  std::vector<HostTensor> makeInputs() const;

  /// Float64 expected outputs, in the order of @kernel's results, each in
  /// the stored layout; `logicalOrder` results follow the op's fixed order.
  std::vector<std::vector<double>>
  expectedOutputs(const std::vector<HostTensor> &inputs) const;

  /// Names of @kernel's results, for messages.
  std::vector<std::string> resultNames() const;

  /// Tolerances for comparing result `i`: |got - ref| <= atol + rtol |ref|,
  /// with atol scaled by max(1, max |ref|).
  void tolerance(size_t i, double &atol, double &rtol) const;
};

} // namespace harness

#endif // ATTN_TOOLS_CPU_RUNNER_CASE_H
