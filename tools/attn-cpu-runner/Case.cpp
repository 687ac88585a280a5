//===- Case.cpp - one attention test case ---------------------------------===//

#include "Case.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <tuple>

using namespace harness;
using reference::Causal;
using reference::MaskKind;
using reference::MaskMod;
using reference::ScoreMod;

namespace {
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

std::string causalName(Causal c) {
  switch (c) {
  case Causal::None:
    return "none";
  case Causal::TopLeft:
    return "top_left";
  case Causal::BottomRight:
    return "bottom_right";
  }
  return "?";
}

std::string maskName(MaskKind m) {
  switch (m) {
  case MaskKind::None:
    return "none";
  case MaskKind::Additive:
    return "add";
  case MaskKind::Boolean:
    return "bool";
  }
  return "?";
}

const char *const kScoreModNames[] = {"none", "softcap", "alibi", "bias"};
const char *const kMaskModNames[] = {"none", "prefix", "document", "stride"};
const char *const kBlockMaskNames[] = {"none", "random", "causal", "document"};

/// Looks `val` up in `names`; false (and `out` untouched) if absent.
template <typename Enum, size_t N>
bool parseName(const std::string &val, const char *const (&names)[N],
               Enum &out) {
  for (size_t i = 0; i < N; ++i)
    if (val == names[i]) {
      out = static_cast<Enum>(i);
      return true;
    }
  return false;
}

/// The shortest text that reads back as `v`.
std::string shortest(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, res.ptr);
}

/// "2x?x8x" style dims for a tensor type.
std::string tensorType(const std::vector<int64_t> &shape,
                       const std::vector<bool> &dynamic, const std::string &elt) {
  std::ostringstream os;
  os << "tensor<";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (dynamic[i])
      os << "?x";
    else
      os << shape[i] << "x";
  }
  os << elt << ">";
  return os.str();
}

/// Swaps dims 1 and 2 of a row-major 4-d array: logical BHSD <-> stored BSHD.
std::vector<double> swapMiddle(const std::vector<double> &in, int64_t d0,
                               int64_t d1, int64_t d2, int64_t d3) {
  std::vector<double> out(in.size());
  for (int64_t a = 0; a < d0; ++a)
    for (int64_t b = 0; b < d1; ++b)
      for (int64_t c = 0; c < d2; ++c)
        for (int64_t e = 0; e < d3; ++e)
          out[((a * d2 + c) * d1 + b) * d3 + e] =
              in[((a * d1 + b) * d2 + c) * d3 + e];
  return out;
}
} // namespace

std::string Case::parse(const std::string &text) {
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    size_t eq = word.find('=');
    if (eq == std::string::npos)
      return "expected key=value, got '" + word + "'";
    std::string key = word.substr(0, eq), val = word.substr(eq + 1);
    auto num = [&](int64_t &out) {
      char *end = nullptr;
      out = std::strtoll(val.c_str(), &end, 10);
      return !val.empty() && *end == '\0';
    };
    auto real = [&](double &out) {
      char *end = nullptr;
      out = std::strtod(val.c_str(), &end);
      return !val.empty() && *end == '\0';
    };
    bool ok = true;
    if (key == "op")
      op = val, ok = op == "attention" || op == "split" || op == "grad";
    else if (key == "b")
      ok = num(b);
    else if (key == "hq")
      ok = num(hq);
    else if (key == "hkv")
      ok = num(hkv);
    else if (key == "sq")
      ok = num(sq);
    else if (key == "sk")
      ok = num(sk);
    else if (key == "d")
      ok = num(d);
    else if (key == "dv")
      ok = num(dv);
    else if (key == "window")
      ok = num(window);
    else if (key == "splits")
      ok = num(splits);
    else if (key == "dtype")
      ok = parseDType(val, dtype) && dtype != DType::I1;
    else if (key == "causal") {
      if (val == "none")
        causal = Causal::None;
      else if (val == "top_left")
        causal = Causal::TopLeft;
      else if (val == "bottom_right")
        causal = Causal::BottomRight;
      else
        ok = false;
    } else if (key == "mask") {
      if (val == "none")
        mask = MaskKind::None;
      else if (val == "add")
        mask = MaskKind::Additive;
      else if (val == "bool")
        mask = MaskKind::Boolean;
      else
        ok = false;
    } else if (key == "score-mod") {
      if (!parseName(val, kScoreModNames, scoreMod))
        return "bad value for 'score-mod': '" + val +
               "' (none, softcap, alibi or bias)";
    } else if (key == "mask-mod") {
      if (!parseName(val, kMaskModNames, maskMod))
        return "bad value for 'mask-mod': '" + val +
               "' (none, prefix, document or stride)";
    } else if (key == "block-mask") {
      if (!parseName(val, kBlockMaskNames, blockMask))
        return "bad value for 'block-mask': '" + val +
               "' (none, random, causal or document)";
    } else if (key == "mask-block-q") {
      ok = num(maskBlockQ) && maskBlockQ >= 1;
    } else if (key == "mask-block-k") {
      ok = num(maskBlockK) && maskBlockK >= 1;
    } else if (key == "sparsity") {
      ok = real(sparsity) && sparsity >= 0 && sparsity <= 1;
    } else if (key == "block-heads") {
      ok = val == "1" || val == "hq";
      blockHeads = val == "hq";
    } else if (key == "block-batch") {
      ok = val == "1" || val == "b";
      blockBatch = val == "b";
    } else if (key == "softcap") {
      ok = real(softcap) && softcap > 0 && std::isfinite(softcap);
    } else if (key == "prefix") {
      ok = num(prefix) && prefix >= 0;
    } else if (key == "mask-shape") {
      maskShape = val;
      ok = !val.empty() && val.size() <= 4 &&
           val.find_first_not_of("bhqk1") == std::string::npos;
    } else if (key == "kill-rows" || key == "lse" || key == "dynamic" ||
               key == "kv-lens" || key == "packed" || key == "full" ||
               key == "balanced") {
      int64_t v;
      ok = num(v) && (v == 0 || v == 1);
      (key == "kill-rows"  ? killRows
       : key == "lse"      ? lse
       : key == "dynamic"  ? dynamic
       : key == "packed"   ? packed
       : key == "full"     ? fullLists
       : key == "balanced" ? balanced
                           : kvLens) = v;
    } else if (key == "page-size") {
      ok = num(pageSize) && pageSize >= 1;
      kvLens = true;
    } else if (key == "layout") {
      ok = val == "bhsd" || val == "bshd";
      bshd = val == "bshd";
    } else if (key == "scale") {
      ok = real(scale) && scale > 0;
    } else if (key == "seed") {
      int64_t v;
      ok = num(v);
      seed = v;
    } else
      return "unknown key '" + key + "'";
    if (!ok)
      return "bad value for '" + key + "': '" + val + "'";
  }
  roundKeysToPages();
  return validate();
}

std::string Case::validate() const {
  if (b < 1 || hq < 1 || hkv < 1 || sq < 1 || sk < 1 || d < 1 || dv < 1)
    return "every size must be at least 1";
  if (hq % hkv)
    return "hq must be a multiple of hkv";
  if (window >= 0 && causal == Causal::None)
    return "window needs a causal kind";
  if (splits < 1)
    return "splits must be at least 1";
  if (op != "split" && splits != 1)
    return "splits only applies to op=split";
  if (op == "grad" && kvLens)
    return "kv-lens and page-size apply to op=attention and op=split";
  if (balanced && (op != "split" || !kvLens))
    return "balanced applies to op=split with kv-lens or page-size";
  if (packed && op != "attention")
    return "packed applies to op=attention";
  if (packed && mask != MaskKind::None)
    return "a packed batch takes no mask";
  if (!(softcap > 0) || !std::isfinite(softcap))
    return "softcap must be positive and finite";
  if (prefix < 0)
    return "prefix must be at least 0";
  if (blockMask != BlockMaskKind::None) {
    if (op == "split")
      return "block-mask applies to op=attention and op=grad";
    if (packed || kvLens)
      return "a block mask takes no packed batch, kv-lens or page-size";
    if (maskBlockQ < 1 || maskBlockK < 1 || maskBlockQ > (int64_t(1) << 16) ||
        maskBlockK > (int64_t(1) << 16))
      return "mask-block-q and mask-block-k must be in [1, 65536]";
    if (!(sparsity >= 0 && sparsity <= 1))
      return "sparsity must be in [0, 1]";
  }
  std::string canon = "bhqk";
  for (size_t i = 0; i < maskShape.size(); ++i) {
    char c = maskShape[i];
    if (c != '1' && c != canon[4 - maskShape.size() + i])
      return "mask-shape letter '" + std::string(1, c) + "' is out of place";
  }
  // What the runner allocates, inputs, results and the reference's, before
  // it allocates any of it: a mask is expanded to [B, Hq, Sq, Sk] for the
  // reference, partial results have a leading split dim.
  std::vector<std::pair<std::string, std::vector<int64_t>>> tensors = {
      {"Q", {b, hq, sq, d}},
      {"K", {b, hkv, sk, d}},
      {"V", {b, hkv, sk, dv}},
      {"O", {b, hq, sq, dv}}};
  if (op == "split")
    tensors.push_back({"partial O", {splits, b, hq, sq, dv}});
  if (mask != MaskKind::None)
    tensors.push_back({"the mask", {b, hq, sq, sk}});
  if (pageSize)
    tensors.push_back({"the page pool", {pages(), pageSize, hkv, d}});
  if (blockMask != BlockMaskKind::None) {
    // The lists, and the transposed ones, with their spare columns.
    tensors.push_back({"the block lists",
                       {blockBatch ? b : 1, blockHeads ? hq : 1, queryBlocks(),
                        keyBlocks() + 2}});
    tensors.push_back({"the transposed block lists",
                       {blockBatch ? b : 1, blockHeads ? hq : 1, keyBlocks(),
                        queryBlocks() + 2}});
  }
  for (const auto &[name, shape] : tensors)
    if (std::string problem = checkTensorSize(name, shape); !problem.empty())
      return problem;
  return "";
}

std::string Case::str() const {
  std::ostringstream os;
  os << "op=" << op << " b=" << b << " hq=" << hq << " hkv=" << hkv
     << " sq=" << sq << " sk=" << sk << " d=" << d << " dv=" << dv
     << " dtype=" << dtypeName(dtype) << " causal=" << causalName(causal);
  if (window >= 0)
    os << " window=" << window;
  os << " mask=" << maskName(mask);
  if (mask != MaskKind::None)
    os << " mask-shape=" << maskShape << " kill-rows=" << killRows;
  if (scoreMod != ScoreMod::None)
    os << " score-mod=" << kScoreModNames[static_cast<int>(scoreMod)];
  if (scoreMod == ScoreMod::Softcap)
    os << " softcap=" << shortest(softcap);
  if (maskMod != MaskMod::None)
    os << " mask-mod=" << kMaskModNames[static_cast<int>(maskMod)];
  if (maskMod == MaskMod::Prefix)
    os << " prefix=" << prefix;
  if (blockMask != BlockMaskKind::None) {
    os << " block-mask=" << kBlockMaskNames[static_cast<int>(blockMask)]
       << " mask-block-q=" << maskBlockQ << " mask-block-k=" << maskBlockK;
    if (blockMask == BlockMaskKind::Random)
      os << " sparsity=" << shortest(sparsity);
    os << " full=" << fullLists << " block-heads=" << (blockHeads ? "hq" : "1")
       << " block-batch=" << (blockBatch ? "b" : "1");
  }
  os << " layout=" << (bshd ? "bshd" : "bhsd") << " lse=" << lse;
  if (op == "split")
    os << " splits=" << splits;
  if (scale)
    os << " scale=" << scale;
  if (pageSize)
    os << " page-size=" << pageSize;
  else if (kvLens)
    os << " kv-lens=1";
  if (balanced)
    os << " balanced=1";
  if (packed)
    os << " packed=1";
  os << " dynamic=" << dynamic << " seed=" << seed;
  return os.str();
}

Case Case::random(std::mt19937_64 &rng, const std::vector<std::string> &ops,
                  const std::vector<int64_t> &blockSizes) {
  auto pick = [&](std::initializer_list<int64_t> xs) {
    std::vector<int64_t> v(xs);
    return v[rng() % v.size()];
  };
  auto range = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % (hi - lo + 1));
  };
  Case c;
  c.op = ops[rng() % ops.size()];
  c.b = range(1, 2);
  c.hkv = range(1, 2);
  c.hq = c.hkv * pick({1, 2, 4});
  c.sq = c.op == "split" ? pick({1, 1, 2, 4}) : pick({1, 2, 7, 16, 33, 77, range(1, 90)});
  c.sk = pick({1, 5, 33, 64, 129, range(1, 150)});
  // Head dims the tensor cores divide and ones the tiles pad (40, 59).
  c.d = pick({8, 16, 32, 64, 40, range(1, 80)});
  c.dv = pick({c.d, c.d, 8, 24, range(1, 72)});
  c.dtype = static_cast<DType>(rng() % 3);
  c.causal = static_cast<Causal>(rng() % 3);
  if (c.causal != Causal::None && rng() % 2)
    c.window = range(0, c.sk);
  c.mask = static_cast<MaskKind>(rng() % 3);
  c.maskShape = std::vector<std::string>{"bhqk", "qk", "1hqk", "b1qk", "k",
                                         "bh1k"}[rng() % 6];
  c.killRows = c.mask != MaskKind::None && rng() % 2;
  c.bshd = rng() % 2;
  c.lse = rng() % 2;
  if (c.op == "split")
    c.splits = range(1, c.sk + 3);
  c.dynamic = rng() % 4 == 0;
  if (c.op != "grad" && rng() % 3 == 0) {
    c.kvLens = true;
    c.pageSize = rng() % 2 ? pick({1, 4, 16, range(1, 40)}) : 0;
    c.roundKeysToPages();
    // Half the split cases balance the work (no draw of its own, so that
    // the other cases stay what their seeds made them).
    c.balanced = c.op == "split" && c.splits % 2 == 0;
  }
  if (c.op == "attention" && c.mask == MaskKind::None && rng() % 3 == 0)
    c.packed = true;
  c.seed = rng() % 100000;
  // The modifications come from a stream of the seed's, so that the draws
  // above make the cases they made before modifications existed.
  std::mt19937_64 modRng(c.seed * 7919 + 4);
  if (modRng() % 3 == 0) {
    c.scoreMod = static_cast<ScoreMod>(1 + modRng() % 3);
    c.softcap = std::vector<double>{2, 5, 20, 50}[modRng() % 4];
  }
  if (modRng() % 3 == 0) {
    c.maskMod = static_cast<MaskMod>(1 + modRng() % 3);
    c.prefix = static_cast<int64_t>(modRng() % (c.sk + 2));
  }
  // The block mask from a stream of its own too, and only when asked for:
  // the tiles of the pipeline under test must divide its blocks.
  std::mt19937_64 blockRng(c.seed * 7919 + 7);
  if (!blockSizes.empty() && c.op != "split" && !c.kvLens && !c.packed &&
      blockRng() % 2 == 0) {
    c.blockMask = static_cast<BlockMaskKind>(1 + blockRng() % 3);
    c.maskBlockQ = blockSizes[blockRng() % blockSizes.size()];
    c.maskBlockK = blockSizes[blockRng() % blockSizes.size()];
    c.sparsity = std::vector<double>{0.1, 0.5, 0.9}[blockRng() % 3];
    c.fullLists = blockRng() % 4 != 0;
    c.blockHeads = blockRng() % 3 != 0;
    c.blockBatch = blockRng() % 3 != 0;
  }
  return c;
}

//===----------------------------------------------------------------------===//
// IR
//===----------------------------------------------------------------------===//

std::vector<int64_t> Case::packedCounts(bool keys) const {
  std::mt19937_64 rng(seed * 7919 + (keys ? 2 : 1));
  int64_t most = keys ? sk : sq;
  std::vector<int64_t> counts(b);
  for (int64_t &n : counts) {
    uint64_t r = rng() % 5;
    n = r == 0 ? 0 : r == 1 ? most : 1 + int64_t(rng() % most);
  }
  // At least one row in all.
  if (std::all_of(counts.begin(), counts.end(), [](int64_t n) { return !n; }))
    counts.back() = most;
  return counts;
}

std::vector<int64_t> Case::offsetsOf(const std::vector<int64_t> &counts) {
  std::vector<int64_t> offsets = {0};
  for (int64_t n : counts)
    offsets.push_back(offsets.back() + n);
  return offsets;
}

std::vector<std::string> Case::modOperandNames() const {
  std::vector<std::string> names;
  if (scoreMod == ScoreMod::Alibi)
    names.push_back("slopes");
  if (scoreMod == ScoreMod::Bias)
    names.push_back("bias");
  if (maskMod == MaskMod::Document)
    names.insert(names.end(), {"qdoc", "kdoc"});
  return names;
}

namespace {
/// The `score_mod` and `mask_mod` regions of a case (reference::ScoreMod
/// and reference::MaskMod say what they compute), after the op's result
/// types. Each takes every mod operand, of `types`, whether it reads it or
/// not. Value names start with "s_" and "m_", apart from the function's.
std::string modRegions(const Case &c, const std::vector<std::string> &types) {
  std::vector<std::string> names = c.modOperandNames();
  auto header = [&](const std::string &p, bool score) {
    std::string h = "  ^bb0(%" + p + "b: index, %" + p + "h: index, %" + p +
                    "i: index, %" + p + "j: index";
    if (score)
      h += ", %" + p + "s: f32";
    for (size_t i = 0; i < names.size(); ++i)
      h += ", %" + p + names[i] + ": " + types[i];
    return h + "):\n";
  };
  auto typeOf = [&](const std::string &name) {
    return types[std::find(names.begin(), names.end(), name) - names.begin()];
  };
  std::ostringstream os;
  if (c.scoreMod != ScoreMod::None) {
    os << " score_mod {\n" << header("s_", true);
    switch (c.scoreMod) {
    case ScoreMod::None:
      break;
    case ScoreMod::Softcap: {
      // The cap is an f32 constant; the reference reads it as one too.
      std::ostringstream cap;
      cap.precision(9);
      cap << std::scientific << static_cast<float>(c.softcap);
      os << "    %s_cap = arith.constant " << cap.str() << " : f32\n"
         << "    %s_x = arith.divf %s_s, %s_cap : f32\n"
         << "    %s_t = math.tanh %s_x : f32\n"
         << "    %s_r = arith.mulf %s_cap, %s_t : f32\n";
      break;
    }
    case ScoreMod::Alibi:
      os << "    %s_d = arith.subi %s_i, %s_j : index\n"
         << "    %s_di = arith.index_cast %s_d : index to i64\n"
         << "    %s_df = arith.sitofp %s_di : i64 to f32\n"
         << "    %s_dist = math.absf %s_df : f32\n"
         << "    %s_slope = tensor.extract %s_slopes[%s_h] : "
         << typeOf("slopes") << "\n"
         << "    %s_pen = arith.mulf %s_slope, %s_dist : f32\n"
         << "    %s_r = arith.subf %s_s, %s_pen : f32\n";
      break;
    case ScoreMod::Bias:
      os << "    %s_c0 = arith.constant 0 : index\n"
         << "    %s_rad = arith.constant " << Case::kBiasRadius << " : index\n"
         << "    %s_top = arith.constant " << 2 * Case::kBiasRadius
         << " : index\n"
         << "    %s_d = arith.subi %s_i, %s_j : index\n"
         << "    %s_e = arith.addi %s_d, %s_rad : index\n"
         << "    %s_lo = arith.maxsi %s_e, %s_c0 : index\n"
         << "    %s_at = arith.minsi %s_lo, %s_top : index\n"
         << "    %s_add = tensor.extract %s_bias[%s_h, %s_at] : "
         << typeOf("bias") << "\n"
         << "    %s_r = arith.addf %s_s, %s_add : f32\n";
      break;
    }
    os << "    attn.yield %s_r : f32\n  }";
  }
  if (c.maskMod != MaskMod::None) {
    os << " mask_mod {\n" << header("m_", false);
    switch (c.maskMod) {
    case MaskMod::None:
      break;
    case MaskMod::Prefix:
      os << "    %m_p = arith.constant " << c.prefix << " : index\n"
         << "    %m_inPrefix = arith.cmpi slt, %m_j, %m_p : index\n"
         << "    %m_causal = arith.cmpi sle, %m_j, %m_i : index\n"
         << "    %m_keep = arith.ori %m_inPrefix, %m_causal : i1\n";
      break;
    case MaskMod::Document:
      os << "    %m_qd = tensor.extract %m_qdoc[%m_b, %m_i] : "
         << typeOf("qdoc") << "\n"
         << "    %m_kd = tensor.extract %m_kdoc[%m_b, %m_j] : "
         << typeOf("kdoc") << "\n"
         << "    %m_keep = arith.cmpi eq, %m_qd, %m_kd : i32\n";
      break;
    case MaskMod::Stride:
      // remsi truncates: (i - j) mod 3 = 1 (floored) is a remainder of 1 or
      // -2.
      os << "    %m_c3 = arith.constant 3 : index\n"
         << "    %m_c1 = arith.constant 1 : index\n"
         << "    %m_cm2 = arith.constant -2 : index\n"
         << "    %m_d = arith.subi %m_i, %m_j : index\n"
         << "    %m_r = arith.remsi %m_d, %m_c3 : index\n"
         << "    %m_not1 = arith.cmpi ne, %m_r, %m_c1 : index\n"
         << "    %m_notm2 = arith.cmpi ne, %m_r, %m_cm2 : index\n"
         << "    %m_keep = arith.andi %m_not1, %m_notm2 : i1\n";
      break;
    }
    os << "    attn.yield %m_keep : i1\n  }";
  }
  return os.str();
}
} // namespace

std::string Case::toIR() const {
  std::string elt = dtypeName(dtype);
  auto storedIn = [&](int64_t batch, int64_t heads, int64_t seq, int64_t last,
                      std::string e) {
    std::vector<int64_t> shape = {batch, bshd ? seq : heads, bshd ? heads : seq,
                                  last};
    std::vector<bool> dyn = {dynamic, dynamic && bshd, dynamic && !bshd, false};
    return tensorType(shape, dyn, e);
  };
  auto stored = [&](int64_t heads, int64_t seq, int64_t last, std::string e) {
    return storedIn(b, heads, seq, last, e);
  };
  std::string qT = stored(hq, sq, d, elt), kT = stored(hkv, sk, d, elt),
              vT = stored(hkv, sk, dv, elt), oT = stored(hq, sq, dv, elt);
  std::string lseT = tensorType({b, hq, sq}, {dynamic, false, dynamic}, "f32");
  // A packed batch: its sequences back to back in one, and their offsets.
  std::string packedUse, packedArgs;
  if (packed) {
    int64_t t = offsetsOf(packedCounts(false)).back();
    std::string offsetsT = tensorType({b + 1}, {dynamic}, "i32");
    qT = storedIn(1, hq, t, d, elt);
    oT = storedIn(1, hq, t, dv, elt);
    lseT = tensorType({1, hq, t}, {dynamic, false, dynamic}, "f32");
    packedUse = " query_offsets(%qoff : " + offsetsT + ")";
    packedArgs = ", %qoff: " + offsetsT;
    if (packedKeys()) {
      int64_t tk = offsetsOf(packedCounts(true)).back();
      kT = storedIn(1, hkv, tk, d, elt);
      vT = storedIn(1, hkv, tk, dv, elt);
      packedUse += " key_offsets(%koff : " + offsetsT + ")";
      packedArgs += ", %koff: " + offsetsT;
    }
  }

  std::string maskT;
  if (mask != MaskKind::None) {
    std::vector<int64_t> shape;
    std::vector<bool> dyn;
    for (char c : maskShape) {
      int64_t size = c == 'b' ? b : c == 'h' ? hq : c == 'q' ? sq : c == 'k' ? sk : 1;
      shape.push_back(size);
      dyn.push_back(dynamic && (c == 'b' || c == 'q' || c == 'k'));
    }
    maskT = tensorType(shape, dyn, mask == MaskKind::Boolean ? "i1" : elt);
  }

  std::ostringstream attrs;
  std::vector<std::string> parts;
  if (causal != Causal::None)
    parts.push_back("causal = #attn.causal<" + causalName(causal) + ">");
  if (window >= 0)
    parts.push_back("window = " + std::to_string(window) + " : i64");
  if (bshd)
    parts.push_back("layout = #attn.layout<bshd>");
  if (scale) {
    std::ostringstream s;
    s.precision(9);
    s << std::scientific << scale;
    parts.push_back("scale = " + s.str() + " : f32");
  }
  if (op == "split")
    parts.push_back("num_splits = " + std::to_string(splits) + " : i64");
  if (balanced)
    parts.push_back("balanced");
  if (blockMask != BlockMaskKind::None)
    parts.push_back("block_size = array<i64: " + std::to_string(maskBlockQ) +
                    ", " + std::to_string(maskBlockK) + ">");
  if (!parts.empty()) {
    attrs << " {";
    for (size_t i = 0; i < parts.size(); ++i)
      attrs << (i ? ", " : "") << parts[i];
    attrs << "}";
  }
  std::string maskUse = mask == MaskKind::None ? "" : " mask(%m : " + maskT + ")";
  std::string maskArg = mask == MaskKind::None ? "" : ", %m: " + maskT;
  if (kvLens) {
    // kv_lens and block_table come before the mask, as arguments and as
    // operands; K and V become the page pools.
    std::string lensT = tensorType({b}, {dynamic}, "i32");
    std::string cache = " kv_lens(%lens : " + lensT + ")";
    std::string args = ", %lens: " + lensT;
    if (pageSize) {
      std::string tableT =
          tensorType({b, maxPages()}, {dynamic, dynamic}, "i32");
      cache += " block_table(%table : " + tableT + ")";
      args += ", %table: " + tableT;
      auto pool = [&](int64_t last) {
        std::vector<int64_t> shape = {pages(), bshd ? pageSize : hkv,
                                      bshd ? hkv : pageSize, last};
        return tensorType(shape, {dynamic, false, false, false}, elt);
      };
      kT = pool(d);
      vT = pool(dv);
    }
    maskUse = cache + maskUse;
    maskArg = args + maskArg;
  }
  maskUse = packedUse + maskUse;
  maskArg = packedArgs + maskArg;
  // The block mask's lists come after the mask, as arguments and as
  // operands: block_mask, then attention_grad's q_block_mask. Broadcast
  // dims stay static 1s; a dim of size 1 in the type is what broadcasts.
  if (blockMask != BlockMaskKind::None) {
    const char *const names[] = {"bcnt", "bidx", "bfcnt", "bfidx"};
    size_t lists = fullLists ? 4 : 2;
    std::vector<HostTensor> blockIn = makeBlockMask();
    auto addLists = [&](const std::string &keyword, const std::string &prefix,
                        size_t first) {
      std::string operands, types;
      for (size_t i = 0; i < lists; ++i) {
        const std::vector<int64_t> &shape = blockIn[first + i].shape;
        std::vector<bool> dyn = {dynamic && blockBatch, false, dynamic,
                                 dynamic};
        dyn.resize(shape.size());
        std::string type = tensorType(shape, dyn, "i32");
        operands += (i ? ", %" : "%") + prefix + names[i];
        types += (i ? ", " : "") + type;
        maskArg += ", %" + prefix + names[i] + ": " + type;
      }
      maskUse += " " + keyword + "(" + operands + " : " + types + ")";
    };
    addLists("block_mask", "", 0);
    if (op == "grad")
      addLists("q_block_mask", "q", lists);
  }
  // The mod operands come last, as arguments and as operands.
  std::vector<std::string> modNames = modOperandNames(), modTypes;
  for (const std::string &name : modNames) {
    if (name == "slopes")
      modTypes.push_back(tensorType({hq}, {false}, "f32"));
    else if (name == "bias")
      modTypes.push_back(
          tensorType({hq, 2 * kBiasRadius + 1}, {false, false}, "f32"));
    else
      modTypes.push_back(
          tensorType({b, name == "qdoc" ? sq : sk}, {dynamic, dynamic}, "i32"));
  }
  if (!modNames.empty()) {
    std::string operands, types;
    for (size_t i = 0; i < modNames.size(); ++i) {
      operands += (i ? ", %" : "%") + modNames[i];
      types += (i ? ", " : "") + modTypes[i];
      maskArg += ", %" + modNames[i] + ": " + modTypes[i];
    }
    maskUse += " mod_operands(" + operands + " : " + types + ")";
  }
  std::string regions = modRegions(*this, modTypes);

  std::ostringstream ir;
  if (op == "attention") {
    std::string results = lse ? oT + ", " + lseT : oT;
    ir << "func.func @kernel(%q: " << qT << ", %k: " << kT << ", %v: " << vT
       << maskArg << ") -> (" << results << ") {\n"
       << "  " << (lse ? "%o, %lse" : "%o") << " = attn.attention %q, %k, %v"
       << maskUse << attrs.str() << " : " << qT << ", " << kT << ", " << vT
       << " -> " << results << regions << "\n"
       << "  return " << (lse ? "%o, %lse" : "%o") << " : " << results
       << "\n}\n";
  } else if (op == "split") {
    // Balanced: splits * b work items [W, 1, ...] and their offsets.
    std::string poT =
        balanced ? tensorType({splits * b, 1, hq, sq, dv},
                              {dynamic, false, false, dynamic, false}, "f32")
                 : tensorType({splits, b, hq, sq, dv},
                              {false, dynamic, false, dynamic, false}, "f32");
    std::string plT = balanced
                          ? tensorType({splits * b, 1, hq, sq},
                                       {dynamic, false, false, dynamic}, "f32")
                          : tensorType({splits, b, hq, sq},
                                       {false, dynamic, false, dynamic}, "f32");
    std::string offT = tensorType({b + 1}, {dynamic}, "i32");
    std::string partials =
        balanced ? poT + ", " + plT + ", " + offT : poT + ", " + plT;
    std::string partialValues = balanced ? "%po, %pl, %offs" : "%po, %pl";
    std::string offsetsUse =
        balanced ? " split_offsets(%offs : " + offT + ")" : "";
    std::string combined = lse ? oT + ", " + lseT : oT;
    ir << "func.func @kernel(%q: " << qT << ", %k: " << kT << ", %v: " << vT
       << maskArg << ") -> (" << partials << ", " << combined << ") {\n"
       << "  " << partialValues << " = attn.attention_partial %q, %k, %v"
       << maskUse << attrs.str() << " : " << qT << ", " << kT << ", " << vT
       << " -> " << partials << regions << "\n"
       << "  " << (lse ? "%o, %lse" : "%o") << " = attn.combine %po, %pl"
       << offsetsUse << (bshd ? " {layout = #attn.layout<bshd>}" : "") << " : "
       << poT << ", " << plT << " -> " << combined << "\n"
       << "  return " << partialValues << ", " << (lse ? "%o, %lse" : "%o")
       << " : " << partials << ", " << combined << "\n}\n";
  } else {
    ir << "func.func @kernel(%q: " << qT << ", %k: " << kT << ", %v: " << vT
       << ", %o: " << oT << ", %do: " << oT << ", %lse: " << lseT << maskArg
       << ") -> (" << qT << ", " << kT << ", " << vT << ") {\n"
       << "  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse"
       << maskUse << attrs.str() << " : " << qT << ", " << kT << ", " << vT
       << ", " << oT << ", " << oT << ", " << lseT << " -> " << qT << ", " << kT
       << ", " << vT << regions << "\n"
       << "  return %dq, %dk, %dv : " << qT << ", " << kT << ", " << vT
       << "\n}\n";
  }
  return ir.str();
}

//===----------------------------------------------------------------------===//
// Inputs and the reference
//===----------------------------------------------------------------------===//

namespace {
/// A random logical [B, H, S, X] tensor stored in the case's layout.
HostTensor randomQKV(const Case &c, std::mt19937_64 &rng, int64_t heads,
                     int64_t seq, int64_t last) {
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  HostTensor t(c.dtype, {c.b, c.bshd ? seq : heads, c.bshd ? heads : seq, last});
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.set(i, uni(rng));
  return t;
}

/// Logical [B, H, S, X] values of a tensor stored in the case's layout.
std::vector<double> logical(const Case &c, const HostTensor &t) {
  std::vector<double> v = t.toDoubles();
  if (!c.bshd)
    return v;
  return swapMiddle(v, t.shape[0], t.shape[1], t.shape[2], t.shape[3]);
}

std::vector<double> storedFromLogical(const Case &c, const std::vector<double> &v,
                                      int64_t heads, int64_t seq, int64_t last) {
  if (!c.bshd)
    return v;
  return swapMiddle(v, c.b, heads, seq, last);
}

std::vector<int64_t> maskDims(const Case &c) {
  std::vector<int64_t> shape;
  for (char ch : c.maskShape)
    shape.push_back(ch == 'b' ? c.b : ch == 'h' ? c.hq : ch == 'q' ? c.sq : ch == 'k' ? c.sk : 1);
  return shape;
}

reference::Problem problemOf(const Case &c, const std::vector<HostTensor> &in) {
  reference::Problem p;
  p.batch = c.b;
  p.queryHeads = c.hq;
  p.kvHeads = c.hkv;
  p.querySeq = c.sq;
  p.keySeq = c.sk;
  p.headDim = c.d;
  p.valueDim = c.dv;
  // An explicit scale is an f32 attribute: the reference uses that f32.
  p.scale = c.scale ? static_cast<float>(c.scale)
                    : 1.0 / std::sqrt(static_cast<double>(c.d));
  p.causal = c.causal;
  p.window = c.window;
  p.maskKind = c.mask;
  // The mod operands are the last inputs, the block mask's lists just
  // before them, and the mask before those.
  std::vector<std::string> modNames = c.modOperandNames();
  size_t firstMod = in.size() - modNames.size();
  size_t firstList = firstMod - c.blockMaskOperands();
  p.scoreMod = c.scoreMod;
  p.softcap = static_cast<float>(c.softcap);
  p.biasRadius = Case::kBiasRadius;
  p.maskMod = c.maskMod;
  p.prefix = c.prefix;
  for (size_t i = 0; i < modNames.size(); ++i) {
    std::vector<double> values = in[firstMod + i].toDoubles();
    if (modNames[i] == "slopes")
      p.slopes = values;
    else if (modNames[i] == "bias")
      p.bias = values;
    else
      (modNames[i] == "qdoc" ? p.queryDocs : p.keyDocs)
          .assign(values.begin(), values.end());
  }
  if (c.blockMask != BlockMaskKind::None) {
    auto ints = [](const HostTensor &t) {
      std::vector<int64_t> v(t.numElements());
      for (int64_t i = 0; i < t.numElements(); ++i)
        v[i] = static_cast<int64_t>(t.get(i));
      return v;
    };
    const HostTensor &indices = in[firstList + 1];
    p.blockQ = c.maskBlockQ;
    p.blockK = c.maskBlockK;
    p.listBatch = indices.shape[0];
    p.listHeads = indices.shape[1];
    p.listLength = indices.shape[3];
    p.blockCounts = ints(in[firstList]);
    p.blockIndices = ints(indices);
    if (c.fullLists) {
      p.fullBlockCounts = ints(in[firstList + 2]);
      p.fullBlockIndices = ints(in[firstList + 3]);
      p.fullListLength = in[firstList + 3].shape[3];
    }
  }
  if (c.mask != MaskKind::None) {
    const HostTensor &m = in[firstList - 1];
    std::vector<int64_t> shape = maskDims(c);
    int64_t rank = shape.size();
    p.mask.resize(c.b * c.hq * c.sq * c.sk);
    int64_t full[4] = {c.b, c.hq, c.sq, c.sk};
    for (int64_t flat = 0; flat < static_cast<int64_t>(p.mask.size()); ++flat) {
      int64_t idx[4], rem = flat;
      for (int d = 3; d >= 0; --d) {
        idx[d] = rem % full[d];
        rem /= full[d];
      }
      int64_t off = 0;
      for (int64_t i = 0; i < rank; ++i) {
        int64_t di = idx[4 - rank + i];
        off = off * shape[i] + (shape[i] == 1 ? 0 : di);
      }
      p.mask[flat] = m.get(off);
    }
  }
  return p;
}
} // namespace

namespace {
/// Calls `copy(dense, packed)` for the element offsets of row i < counts[b]
/// of every sequence b and head h: in a logical [B, H, S, X] tensor and in
/// its packed [1, H, T, X] one (stored in the case's layout when
/// `inLayout`, else [1, H, T]), X = `last` elements each. Returns T.
int64_t forEachPackedRow(const Case &c, const std::vector<int64_t> &counts,
                         int64_t heads, int64_t seq, int64_t last,
                         bool inLayout,
                         const std::function<void(int64_t, int64_t)> &copy) {
  std::vector<int64_t> offsets = Case::offsetsOf(counts);
  int64_t t = offsets.back();
  for (int64_t s = 0; s < c.b; ++s)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < counts[s]; ++i) {
        int64_t row = offsets[s] + i;
        int64_t packed = inLayout && c.bshd ? row * heads + h : h * t + row;
        int64_t dense = (s * heads + h) * seq + i;
        for (int64_t x = 0; x < last; ++x)
          copy(dense * last + x, packed * last + x);
      }
  return t;
}

/// Rows i < counts[b] of every sequence b of a logical [B, H, S, X]
/// tensor, back to back in a packed [1, H, T, X] one stored in the case's
/// layout.
HostTensor packHost(const Case &c, const std::vector<double> &dense,
                    const std::vector<int64_t> &counts, int64_t heads,
                    int64_t seq, int64_t last, DType dtype) {
  int64_t t = Case::offsetsOf(counts).back();
  HostTensor packed(dtype, {1, c.bshd ? t : heads, c.bshd ? heads : t, last});
  forEachPackedRow(
      c, counts, heads, seq, last, /*inLayout=*/true,
      [&](int64_t from, int64_t to) { packed.set(to, dense[from]); });
  return packed;
}

/// The logical [B, H, S, X] tensor of a packed one (0 past each
/// sequence's rows).
std::vector<double> unpackHost(const Case &c, const HostTensor &packed,
                               const std::vector<int64_t> &counts,
                               int64_t heads, int64_t seq, int64_t last) {
  std::vector<double> dense(c.b * heads * seq * last, 0.0);
  forEachPackedRow(
      c, counts, heads, seq, last, /*inLayout=*/true,
      [&](int64_t to, int64_t from) { dense[to] = packed.get(from); });
  return dense;
}

/// Rows i < counts[b] of a logical [B, H, S(, X)] result, packed as the op
/// returns it: O [1, H, T, X] in the case's layout, LSE [1, H, T].
std::vector<double> packResult(const Case &c, const std::vector<double> &dense,
                               const std::vector<int64_t> &counts,
                               int64_t heads, int64_t seq, int64_t last,
                               bool inLayout) {
  int64_t t = Case::offsetsOf(counts).back();
  std::vector<double> packed(heads * t * last, 0.0);
  forEachPackedRow(c, counts, heads, seq, last, inLayout,
                   [&](int64_t from, int64_t to) { packed[to] = dense[from]; });
  return packed;
}
} // namespace

namespace {
/// Document ids 0, 1, ... of 1 to 4 documents per sequence, i32 [B, Sq]
/// for the queries and [B, Sk] for the keys, cut at the same random
/// fractions of the queries and of the keys (so that query and key
/// documents roughly line up, as in a packed self-attention); a third of
/// the sequences then lose one document's keys, so that some queries see
/// no key of their document (rows the mask modification hides entirely:
/// O = 0, LSE = -inf).
std::pair<HostTensor, HostTensor> drawDocuments(const Case &c,
                                                std::mt19937_64 &rng) {
  HostTensor qdoc(DType::I32, {c.b, c.sq}), kdoc(DType::I32, {c.b, c.sk});
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int64_t s = 0; s < c.b; ++s) {
    int64_t docs = 1 + rng() % 4;
    std::vector<double> cuts(docs - 1);
    for (double &cut : cuts)
      cut = unit(rng);
    std::sort(cuts.begin(), cuts.end());
    int64_t emptied = rng() % 3 == 0 ? int64_t(rng() % docs) : -1;
    // Position i of n is in the document of the cuts below i / n.
    auto docOf = [&](int64_t i, int64_t n) {
      return std::upper_bound(cuts.begin(), cuts.end(), double(i) / n) -
             cuts.begin();
    };
    for (int64_t i = 0; i < c.sq; ++i)
      qdoc.set(s * c.sq + i, docOf(i, c.sq));
    // The emptied document's keys join the next one (the previous one for
    // the last, id -1 for the only one: no query sees a key), which keeps
    // the ids non-decreasing.
    for (int64_t j = 0; j < c.sk; ++j) {
      int64_t doc = docOf(j, c.sk);
      if (doc == emptied)
        doc += doc + 1 < docs ? 1 : -1;
      kdoc.set(s * c.sk + j, doc);
    }
  }
  return {qdoc, kdoc};
}
} // namespace

std::vector<HostTensor> Case::makeModOperands() const {
  std::mt19937_64 rng(seed * 7919 + 3);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::vector<HostTensor> out;
  for (const std::string &name : modOperandNames()) {
    if (name == "slopes") {
      // ALiBi's geometric slopes 2^(-8 (h + 1) / Hq), each scaled by a
      // random factor in [0.5, 1.5].
      HostTensor t(DType::F32, {hq});
      for (int64_t h = 0; h < hq; ++h)
        t.set(h, std::exp2(-8.0 * (h + 1) / hq) * (1.0 + 0.5 * uni(rng)));
      out.push_back(t);
    } else if (name == "bias") {
      HostTensor t(DType::F32, {hq, 2 * kBiasRadius + 1});
      for (int64_t i = 0; i < t.numElements(); ++i)
        t.set(i, uni(rng));
      out.push_back(t);
    } else if (name == "qdoc") {
      auto [qdoc, kdoc] = drawDocuments(*this, rng);
      out.push_back(qdoc);
      out.push_back(kdoc);
    }
    // "kdoc" is made with "qdoc", which comes just before it.
  }
  return out;
}

size_t Case::blockMaskOperands() const {
  if (blockMask == BlockMaskKind::None)
    return 0;
  size_t lists = fullLists ? 4 : 2;
  return op == "grad" ? 2 * lists : lists;
}

namespace {
enum class Block : uint8_t { Hidden, Partial, Full };

/// Lists of the column blocks of every row block, as the op takes them:
/// for each of `rows` rows (row-major over the lists' (b, h, row block)),
/// the columns whose state in `state` ([rows, cols]) is `which`, in random
/// order, counts i32 [`shape`] and indices i32 [`shape`, N], N = `cols`
/// plus 0 to 2 spare columns. Past each count the indices are garbage
/// (out of range, negative), which a lowering must not read; an empty
/// list's count is sometimes negative and a whole list's sometimes more
/// than N, both clamped by the op.
std::pair<HostTensor, HostTensor>
blockLists(const std::vector<Block> &state, Block which,
           std::vector<int64_t> shape, int64_t cols, std::mt19937_64 &rng) {
  int64_t rows = 1;
  for (int64_t size : shape)
    rows *= size;
  int64_t length = cols + int64_t(rng() % 3);
  HostTensor counts(DType::I32, shape);
  shape.push_back(length);
  HostTensor indices(DType::I32, shape);
  const int64_t garbage[] = {-7, -1, cols, cols + 1000, INT32_MAX, INT32_MIN};
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> listed;
    for (int64_t col = 0; col < cols; ++col)
      if (state[r * cols + col] == which)
        listed.push_back(col);
    std::shuffle(listed.begin(), listed.end(), rng);
    int64_t count = listed.size();
    for (int64_t n = 0; n < length; ++n)
      indices.set(r * length + n, n < count ? listed[n] : garbage[rng() % 6]);
    if (count == 0 && rng() % 2)
      count = -1 - int64_t(rng() % 3);
    else if (count == length && rng() % 2)
      count = length + 1 + int64_t(rng() % 3);
    counts.set(r, count);
  }
  return {counts, indices};
}
} // namespace

std::vector<HostTensor> Case::makeBlockMask() const {
  if (blockMask == BlockMaskKind::None)
    return {};
  int64_t qbs = queryBlocks(), kbs = keyBlocks();
  int64_t lb = blockBatch ? b : 1, lh = blockHeads ? hq : 1;
  std::mt19937_64 rng(seed * 7919 + 6);
  // The state of key block kb for query block qb of list (s, h), at
  // ((s * lh + h) * qbs + qb) * kbs + kb.
  std::vector<Block> state(lb * lh * qbs * kbs, Block::Hidden);
  auto at = [&](int64_t s, int64_t h, int64_t qb, int64_t kb) -> Block & {
    return state[((s * lh + h) * qbs + qb) * kbs + kb];
  };
  // A block that the other masks (or the documents) leave wholly visible
  // is full; without full lists it is visited as a partial one.
  Block whole = fullLists ? Block::Full : Block::Partial;
  switch (blockMask) {
  case BlockMaskKind::None:
    break;
  case BlockMaskKind::Random: {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (int64_t s = 0; s < lb; ++s)
      for (int64_t h = 0; h < lh; ++h) {
        for (int64_t qb = 0; qb < qbs; ++qb)
          for (int64_t kb = 0; kb < kbs; ++kb)
            if (unit(rng) >= sparsity)
              at(s, h, qb, kb) =
                  fullLists && rng() % 2 ? Block::Full : Block::Partial;
        if (rng() % 2) {
          int64_t qb = rng() % qbs;
          for (int64_t kb = 0; kb < kbs; ++kb)
            at(s, h, qb, kb) = Block::Hidden;
        }
      }
    break;
  }
  case BlockMaskKind::Causal: {
    // Key j is visible to query i where i + offset - window <= j <= i +
    // offset (no lower end without a window); a causal kind of none is
    // taken as top_left.
    int64_t offset = causal == Causal::BottomRight ? sk - sq : 0;
    int64_t reach = window >= 0 ? window : std::numeric_limits<int32_t>::max();
    for (int64_t qb = 0; qb < qbs; ++qb)
      for (int64_t kb = 0; kb < kbs; ++kb) {
        int64_t qlo = qb * maskBlockQ + offset,
                qhi = std::min(sq, (qb + 1) * maskBlockQ) - 1 + offset;
        int64_t klo = kb * maskBlockK,
                khi = std::min(sk, (kb + 1) * maskBlockK) - 1;
        Block block = khi <= qlo && klo >= qhi - reach   ? whole
                      : klo <= qhi && khi >= qlo - reach ? Block::Partial
                                                         : Block::Hidden;
        for (int64_t s = 0; s < lb; ++s)
          for (int64_t h = 0; h < lh; ++h)
            at(s, h, qb, kb) = block;
      }
    break;
  }
  case BlockMaskKind::Document: {
    // The document mask modification's ids, or ones drawn alike.
    HostTensor qdoc, kdoc;
    if (maskMod == MaskMod::Document) {
      std::vector<HostTensor> mods = makeModOperands();
      qdoc = mods[mods.size() - 2];
      kdoc = mods.back();
    } else {
      std::mt19937_64 docRng(seed * 7919 + 5);
      std::tie(qdoc, kdoc) = drawDocuments(*this, docRng);
    }
    auto docsOf = [](const HostTensor &ids, int64_t s, int64_t seq, int64_t lo,
                     int64_t hi) {
      std::set<int64_t> docs;
      for (int64_t i = lo; i < std::min(hi, seq); ++i)
        docs.insert(static_cast<int64_t>(ids.get(s * seq + i)));
      return docs;
    };
    // Broadcast lists follow the first sequence's documents.
    for (int64_t s = 0; s < lb; ++s)
      for (int64_t qb = 0; qb < qbs; ++qb)
        for (int64_t kb = 0; kb < kbs; ++kb) {
          std::set<int64_t> qd = docsOf(qdoc, s, sq, qb * maskBlockQ,
                                        (qb + 1) * maskBlockQ),
                            kd = docsOf(kdoc, s, sk, kb * maskBlockK,
                                        (kb + 1) * maskBlockK);
          bool overlap = std::any_of(qd.begin(), qd.end(),
                                     [&](int64_t d) { return kd.count(d); });
          Block block = qd.size() == 1 && qd == kd ? whole
                        : overlap                  ? Block::Partial
                                                   : Block::Hidden;
          for (int64_t h = 0; h < lh; ++h)
            at(s, h, qb, kb) = block;
        }
    break;
  }
  }

  std::vector<HostTensor> out;
  auto addLists = [&](const std::vector<Block> &states, int64_t rows,
                      int64_t cols) {
    for (Block which : {Block::Partial, Block::Full}) {
      if (which == Block::Full && !fullLists)
        continue;
      auto [counts, indices] =
          blockLists(states, which, {lb, lh, rows}, cols, rng);
      out.push_back(counts);
      out.push_back(indices);
    }
  };
  addLists(state, qbs, kbs);
  if (op == "grad") {
    // The query blocks of each key block: the exact transpose.
    std::vector<Block> transposed(state.size());
    for (int64_t s = 0; s < lb; ++s)
      for (int64_t h = 0; h < lh; ++h)
        for (int64_t qb = 0; qb < qbs; ++qb)
          for (int64_t kb = 0; kb < kbs; ++kb)
            transposed[((s * lh + h) * kbs + kb) * qbs + qb] = at(s, h, qb, kb);
    addLists(transposed, kbs, qbs);
  }
  return out;
}

std::vector<HostTensor> Case::makeInputs() const {
  std::mt19937_64 rng(seed);
  std::vector<HostTensor> in;
  in.push_back(randomQKV(*this, rng, hq, sq, d));
  in.push_back(randomQKV(*this, rng, hkv, sk, d));
  in.push_back(randomQKV(*this, rng, hkv, sk, dv));
  HostTensor maskT;
  if (mask != MaskKind::None) {
    std::vector<int64_t> shape = maskDims(*this);
    maskT = HostTensor(mask == MaskKind::Boolean ? DType::I1 : dtype, shape);
    std::uniform_real_distribution<double> uni(-2.0, 2.0);
    int64_t lastDim = shape.back();
    for (int64_t i = 0; i < maskT.numElements(); ++i)
      maskT.set(i, mask == MaskKind::Boolean ? (uni(rng) > -1.2) : uni(rng));
    if (killRows) {
      // Hide every key from some rows of the mask: fully masked queries.
      for (int64_t row = 0; row < maskT.numElements() / lastDim; ++row) {
        if (rng() % 3)
          continue;
        for (int64_t j = 0; j < lastDim; ++j)
          maskT.set(row * lastDim + j, mask == MaskKind::Boolean ? 0.0 : kNegInf);
      }
    }
  }
  if (op == "grad") {
    // O and LSE come from the float64 forward, rounded as a forward pass
    // would store them; dO is random.
    std::vector<HostTensor> fwdIn = in;
    if (mask != MaskKind::None)
      fwdIn.push_back(maskT);
    for (HostTensor &t : makeBlockMask())
      fwdIn.push_back(t);
    for (HostTensor &t : makeModOperands())
      fwdIn.push_back(t);
    reference::Problem p = problemOf(*this, fwdIn);
    std::vector<double> o, l;
    reference::attention(p, logical(*this, in[0]), logical(*this, in[1]),
                         logical(*this, in[2]), o, l);
    std::vector<double> oStored = storedFromLogical(*this, o, hq, sq, dv);
    HostTensor oT(dtype, {b, bshd ? sq : hq, bshd ? hq : sq, dv});
    for (int64_t i = 0; i < oT.numElements(); ++i)
      oT.set(i, oStored[i]);
    in.push_back(oT);
    in.push_back(randomQKV(*this, rng, hq, sq, dv));
    HostTensor lT(DType::F32, {b, hq, sq});
    for (int64_t i = 0; i < lT.numElements(); ++i)
      lT.set(i, l[i]);
    in.push_back(lT);
  }
  if (packed) {
    // The sequences back to back: Q (and K, V without kv_lens) packed to
    // their counts, and the offsets.
    auto offsets = [&](const std::vector<int64_t> &counts) {
      std::vector<int64_t> o = offsetsOf(counts);
      HostTensor t(DType::I32, {b + 1});
      for (int64_t i = 0; i <= b; ++i)
        t.set(i, o[i]);
      return t;
    };
    std::vector<int64_t> qc = packedCounts(false);
    in[0] = packHost(*this, logical(*this, in[0]), qc, hq, sq, d, dtype);
    in.push_back(offsets(qc));
    if (packedKeys()) {
      std::vector<int64_t> kc = packedCounts(true);
      in[1] = packHost(*this, logical(*this, in[1]), kc, hkv, sk, d, dtype);
      in[2] = packHost(*this, logical(*this, in[2]), kc, hkv, sk, dv, dtype);
      in.push_back(offsets(kc));
    }
  }
  if (kvLens) {
    // Lengths from 0 to sk, the ends of the range among them.
    HostTensor lens(DType::I32, {b});
    for (int64_t s = 0; s < b; ++s) {
      uint64_t r = rng() % 5;
      lens.set(s, r == 0 ? 0 : r == 1 ? sk : 1 + int64_t(rng() % sk));
    }
    in.push_back(lens);
  }
  if (pageSize) {
    // Sequence s's page p is pool page perm[s * maxPages + p]; the table
    // entries past a sequence's length are -1, which a read would trip on.
    std::vector<int64_t> perm(pages());
    for (int64_t i = 0; i < pages(); ++i)
      perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    HostTensor table(DType::I32, {b, maxPages()});
    const HostTensor &lens = in.back();
    for (int64_t s = 0; s < b; ++s)
      for (int64_t p = 0; p < maxPages(); ++p)
        table.set(s * maxPages() + p,
                  p * pageSize < lens.get(s) ? perm[s * maxPages() + p] : -1);
    // The pools hold the dense K and V rows at their pages, random values
    // elsewhere.
    std::uniform_real_distribution<double> uni(-1.0, 1.0);
    for (int which : {1, 2}) {
      int64_t last = which == 1 ? d : dv;
      std::vector<double> dense = logical(*this, in[which]);
      HostTensor pool(
          dtype, {pages(), bshd ? pageSize : hkv, bshd ? hkv : pageSize, last});
      for (int64_t i = 0; i < pool.numElements(); ++i)
        pool.set(i, uni(rng));
      for (int64_t s = 0; s < b; ++s)
        for (int64_t h = 0; h < hkv; ++h)
          for (int64_t j = 0; j < sk; ++j) {
            int64_t page = perm[s * maxPages() + j / pageSize];
            int64_t slot = j % pageSize;
            int64_t row = bshd ? (page * pageSize + slot) * hkv + h
                               : (page * hkv + h) * pageSize + slot;
            for (int64_t x = 0; x < last; ++x)
              pool.set(row * last + x,
                       dense[((s * hkv + h) * sk + j) * last + x]);
          }
      in[which] = pool;
    }
    in.push_back(table);
  }
  if (mask != MaskKind::None)
    in.push_back(maskT);
  for (HostTensor &t : makeBlockMask())
    in.push_back(t);
  for (HostTensor &t : makeModOperands())
    in.push_back(t);
  return in;
}

namespace {
/// The logical [B, Hkv, Sk, X] K (`which` = 1) or V (2) of a case: its
/// input, or gathered from its pages through the block table (keys past a
/// sequence's length are 0; the reference hides them).
std::vector<double>
denseKeysOrValues(const Case &c, const std::vector<HostTensor> &in, int which) {
  int64_t last = which == 1 ? c.d : c.dv;
  if (c.packedKeys())
    return unpackHost(c, in[which], c.packedCounts(true), c.hkv, c.sk, last);
  if (!c.pageSize)
    return logical(c, in[which]);
  size_t lensAt = c.packed ? 4 : 3;
  const HostTensor &pool = in[which], &lens = in[lensAt],
                   &table = in[lensAt + 1];
  std::vector<double> dense(c.b * c.hkv * c.sk * last, 0.0);
  for (int64_t s = 0; s < c.b; ++s)
    for (int64_t j = 0; j < lens.get(s); ++j) {
      int64_t page = table.get(s * c.maxPages() + j / c.pageSize);
      int64_t slot = j % c.pageSize;
      for (int64_t h = 0; h < c.hkv; ++h) {
        int64_t row = c.bshd ? (page * c.pageSize + slot) * c.hkv + h
                             : (page * c.hkv + h) * c.pageSize + slot;
        for (int64_t x = 0; x < last; ++x)
          dense[((s * c.hkv + h) * c.sk + j) * last + x] =
              pool.get(row * last + x);
      }
    }
  return dense;
}
} // namespace

std::vector<std::vector<double>>
Case::expectedOutputs(const std::vector<HostTensor> &in) const {
  reference::Problem p = problemOf(*this, in);
  std::vector<double> q = packed ? unpackHost(*this, in[0], packedCounts(false),
                                              hq, sq, d)
                                 : logical(*this, in[0]),
                      k = denseKeysOrValues(*this, in, 1),
                      v = denseKeysOrValues(*this, in, 2);
  if (kvLens)
    for (int64_t s = 0; s < b; ++s)
      p.keyLens.push_back(static_cast<int64_t>(in[packed ? 4 : 3].get(s)));
  if (packedKeys())
    p.keyLens = packedCounts(true);
  if (packed) {
    // O and LSE of each sequence's own queries, packed.
    p.queryLens = packedCounts(false);
    std::vector<double> o, l;
    reference::attention(p, q, k, v, o, l);
    std::vector<std::vector<double>> out = {
        packResult(*this, o, p.queryLens, hq, sq, dv, /*inLayout=*/true)};
    if (lse)
      out.push_back(
          packResult(*this, l, p.queryLens, hq, sq, 1, /*inLayout=*/false));
    return out;
  }
  std::vector<std::vector<double>> out;
  if (op == "grad") {
    std::vector<double> dq, dk, dv_;
    reference::attentionGrad(p, q, k, v, logical(*this, in[4]), dq, dk, dv_);
    out.push_back(storedFromLogical(*this, dq, hq, sq, d));
    out.push_back(storedFromLogical(*this, dk, hkv, sk, d));
    out.push_back(storedFromLogical(*this, dv_, hkv, sk, dv));
    return out;
  }
  if (op == "split") {
    std::vector<double> po, pl, offsets;
    if (balanced)
      reference::balancedPartial(p, splits, q, k, v, po, pl, offsets);
    else
      reference::attentionPartial(p, splits, q, k, v, po, pl);
    out.push_back(po);
    out.push_back(pl);
    if (balanced)
      out.push_back(offsets);
  }
  std::vector<double> o, l;
  reference::attention(p, q, k, v, o, l);
  out.push_back(storedFromLogical(*this, o, hq, sq, dv));
  if (lse)
    out.push_back(l);
  return out;
}

std::vector<std::string> Case::resultNames() const {
  if (op == "grad")
    return {"dQ", "dK", "dV"};
  std::vector<std::string> names;
  if (op == "split")
    names = {"partial O", "partial LSE"};
  if (balanced)
    names.push_back("split offsets");
  names.push_back("O");
  if (lse)
    names.push_back("LSE");
  return names;
}

void Case::tolerance(size_t i, double &atol, double &rtol) const {
  std::string name = resultNames()[i];
  if (name == "split offsets") {
    atol = rtol = 0; // Integers: exact.
    return;
  }
  bool f32Result = name == "LSE" || name == "partial LSE";
  // Machine epsilon of the result type: its rounding dominates, f32
  // accumulation over a few hundred keys adds little. The partial O is f32
  // but P enters P V in the element type (as on tensor cores), so it takes
  // the element type's tolerance.
  double eps = f32Result || dtype == DType::F32 ? 1.0 / (1 << 23)
               : dtype == DType::F16            ? 1.0 / (1 << 10)
                                                : 1.0 / (1 << 7);
  // Gradients read O rounded to the element type (Di = rowsum(dO * O)) and
  // sum over more terms: twice the forward's tolerance.
  double ulps = op == "grad" ? 8 : 4;
  atol = ulps * eps + 1e-5;
  rtol = ulps * eps;
}
