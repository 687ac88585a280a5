//===- Manifest.cpp - the kernel manifest of docs/KernelABI.md ------------===//

#include "Manifest.h"

#include "Error.h"

#include <cstring>
#include <map>

namespace attn::runtime {

namespace {
/// The WHEN column of attn_kernel_abi.def, spelled as it is there so that a
/// value this runtime does not know fails to compile.
enum class AbiWhen {
  always,
  mask,
  tma,
  paged,
  balanced,
  packed,
  packed_kv,
  dq_accum,
  dq_ordered,
  blocks,
  tma_dq_accum
};

struct AbiEntry {
  const char *kind, *name, *type;
  int rank;
  AbiWhen when;
};
constexpr AbiEntry kAbi[] = {
#define ATTN_KERNEL_PARAM(KIND, NAME, TYPE, RANK, WHEN)                        \
  {#KIND, #NAME, #TYPE, RANK, AbiWhen::WHEN},
#include "attn-runtime/attn_kernel_abi.def"
};

/// The memref parameters of the tensors a modification reads, in order.
constexpr const char *kModOperandParams[kMaxModOperands] = {
    "mod0", "mod1", "mod2",  "mod3",  "mod4",  "mod5",  "mod6",  "mod7",
    "mod8", "mod9", "mod10", "mod11", "mod12", "mod13", "mod14", "mod15"};

/// The dtypes a mod operand may have (`mod_operands`), by their names.
constexpr attn_dtype kModOperandDtypes[] = {ATTN_F32,  ATTN_F16, ATTN_BF16,
                                            ATTN_BOOL, ATTN_I32, ATTN_I64};

constexpr KernelKind kKinds[] = {
#define ATTN_KERNEL_KIND(ENUM, KIND, PREFIX) KernelKind::ENUM,
#include "attn-runtime/attn_kernel_abi.def"
};

/// Whether the ABI gives kernels of `kind` parameters that only some of
/// them take (`when`: a mask operand, tensor maps, a paged cache's lengths
/// and block table, the balanced work list's offsets, a packed batch's
/// offsets, the accumulating dQ modes' accumulator and the ordered one's
/// turns, a block mask's lists): the
/// manifest keys that ask for those (mask, tma, kv, splits, q, dq, blocks)
/// are for such kinds only.
bool kindTakes(KernelKind kind, AbiWhen when) {
  for (const AbiEntry &e : kAbi)
    if (e.when == when && std::strcmp(e.kind, kernelKindName(kind)) == 0)
      return true;
  return false;
}

/// The element type of the memref parameter `tensor` of `kernel` that a
/// tensor map is over: f32 for the backward's row statistics and the
/// accumulating dQ modes' accumulator, whatever the kernel's dtype
/// (attn_kernel_abi.def), the kernel's dtype for the others (q, k, v, dout).
attn_dtype tensorMapDtype(const KernelSpec &kernel, std::string_view tensor) {
  return tensor == "row_stats" || tensor == "dq_accum" ? ATTN_F32
                                                       : kernel.dtype;
}

/// The kinds that kindTakes(`when`), for messages: "forward, decode_partial".
std::string kindsTaking(AbiWhen when) {
  std::string names;
  for (KernelKind kind : kKinds)
    if (kindTakes(kind, when))
      names += std::string(names.empty() ? "" : ", ") + kernelKindName(kind);
  return names;
}
} // namespace

std::string_view tensorMapSource(std::string_view name) {
  constexpr std::string_view suffix = "_tmap";
  if (name.size() <= suffix.size() ||
      name.substr(name.size() - suffix.size()) != suffix)
    return {};
  return name.substr(0, name.size() - suffix.size());
}

std::vector<AbiParam> abiParams(const KernelSpec &kernel) {
  std::vector<AbiParam> params;
  for (const AbiEntry &e : kAbi) {
    if (std::strcmp(e.kind, kernelKindName(kernel.kind)) != 0)
      continue;
    bool taken =
        e.when == AbiWhen::always ||
        (e.when == AbiWhen::mask && kernel.mask != MaskKind::None) ||
        (e.when == AbiWhen::tma && kernel.usesTma()) ||
        (e.when == AbiWhen::paged && kernel.paged) ||
        (e.when == AbiWhen::balanced && kernel.balanced) ||
        (e.when == AbiWhen::packed && kernel.packedQueries) ||
        (e.when == AbiWhen::packed_kv && kernel.packedKeys) ||
        (e.when == AbiWhen::dq_accum && kernel.accumulatesDq()) ||
        (e.when == AbiWhen::dq_ordered && kernel.dq == DqMode::Ordered) ||
        (e.when == AbiWhen::tma_dq_accum && kernel.usesTma() &&
         kernel.accumulatesDq()) ||
        (e.when == AbiWhen::blocks && kernel.hasBlockMask());
    if (taken)
      params.push_back({e.name, e.type, e.rank});
  }
  // The tensors a modification reads come after all of those.
  for (size_t i = 0; i < kernel.modOperands.size(); ++i)
    params.push_back(
        {kModOperandParams[i], "memref", kernel.modOperands[i].rank});
  return params;
}

std::string abiParamList(const KernelSpec &kernel) {
  std::string list;
  for (const AbiParam &p : abiParams(kernel)) {
    if (!list.empty())
      list += ",";
    list += std::string(p.name) + ":" + p.type;
    if (std::strcmp(p.type, "memref") == 0 || std::strcmp(p.type, "tmap") == 0)
      list += std::to_string(p.rank);
  }
  return list;
}

std::string abiName(const KernelSpec &kernel) {
  std::string name = std::string("kind=") + kernelKindName(kernel.kind);
  if (kernel.mask != MaskKind::None)
    name += std::string(" mask=") + maskKindName(kernel.mask);
  name += kernel.blocksKey();
  name += kernel.batchKeys();
  name += kernel.splitsKey();
  name += kernel.dqKey();
  if (!kernel.modOperands.empty())
    name += " mod_operands=" + kernel.modOperandList();
  if (kernel.usesTma())
    name += " with tensor maps";
  return name;
}

std::string KernelSpec::batchKeys() const {
  std::string keys = packedQueries ? " q=packed" : "";
  if (paged)
    keys += " kv=paged";
  else if (packedKeys)
    keys += " kv=packed";
  return keys;
}

std::string KernelSpec::blocksKey() const {
  if (!hasBlockMask())
    return "";
  return " blocks=" + std::to_string(blockMaskQ) + "x" +
         std::to_string(blockMaskK);
}

std::string KernelSpec::modOperandList() const {
  std::string list;
  for (const ModOperand &operand : modOperands)
    list += std::string(list.empty() ? "" : ",") + dtypeName(operand.dtype) +
            ":" + std::to_string(operand.rank);
  return list;
}

std::string KernelSpec::modOperandSignature() const {
  if (modOperands.empty())
    return "no tensors";
  std::string list;
  for (const ModOperand &operand : modOperands)
    list += std::string(list.empty() ? "" : ", ") + dtypeName(operand.dtype) +
            " rank " + std::to_string(operand.rank);
  return std::to_string(modOperands.size()) +
         (modOperands.size() == 1 ? " tensor (" : " tensors (") + list + ")";
}

const TmaBox *KernelSpec::tmaBox(std::string_view tensor) const {
  for (const TmaBox &box : tma)
    if (box.tensor == tensor)
      return &box;
  return nullptr;
}

const char *kernelKindName(KernelKind kind) {
  switch (kind) {
#define ATTN_KERNEL_KIND(ENUM, KIND, PREFIX)                                   \
  case KernelKind::ENUM:                                                       \
    return #KIND;
#include "attn-runtime/attn_kernel_abi.def"
  }
  return "?";
}

const char *dqModeName(DqMode mode) {
  switch (mode) {
  case DqMode::Recompute:
    return "recompute";
  case DqMode::Atomic:
    return "atomic";
  case DqMode::Ordered:
    return "ordered";
  }
  return "?";
}

const char *maskKindName(MaskKind mask) {
  switch (mask) {
  case MaskKind::None:
    return "none";
  case MaskKind::Add:
    return "add";
  case MaskKind::Bool:
    return "bool";
  }
  return "?";
}

const KernelSpec *
ManifestSection::find(KernelKind kind, attn_dtype dtype, int64_t headDim,
                      int64_t valueDim, attn_causal causal, MaskKind mask,
                      bool paged, bool packedQueries, bool packedKeys,
                      DqMode dq, std::string_view mod, int64_t blockMaskQ,
                      int64_t blockMaskK, bool allowTf32, bool balanced) const {
  const KernelSpec *exact = nullptr;
  for (const KernelSpec &k : kernels) {
    if (k.tf32 && !allowTf32)
      continue;
    if (k.kind != kind || k.dtype != dtype || k.valueDim != valueDim ||
        k.mask != mask || k.paged != paged ||
        k.packedQueries != packedQueries || k.packedKeys != packedKeys ||
        k.dq != dq || k.mod != mod || k.blockMaskQ != blockMaskQ ||
        k.blockMaskK != blockMaskK || k.balanced != balanced)
      continue;
    if (kind != KernelKind::DecodeCombine &&
        (k.headDim != headDim || k.causal != causal))
      continue;
    if (k.tf32 || !allowTf32)
      return &k;
    if (!exact)
      exact = &k;
  }
  return exact;
}

bool ManifestSection::hasDtype(KernelKind kind, attn_dtype dtype) const {
  for (const KernelSpec &k : kernels)
    if (k.kind == kind && k.dtype == dtype)
      return true;
  return false;
}

bool ManifestSection::hasMasks(KernelKind kind) const {
  for (const KernelSpec &k : kernels)
    if (k.kind == kind && k.mask != MaskKind::None)
      return true;
  return false;
}

bool ManifestSection::hasMods(KernelKind kind) const {
  for (const KernelSpec &k : kernels)
    if (k.kind == kind && !k.mod.empty())
      return true;
  return false;
}

std::vector<std::string> ManifestSection::modNames() const {
  std::vector<std::string> names;
  for (const KernelSpec &k : kernels) {
    bool known = k.mod.empty();
    for (const std::string &name : names)
      known = known || name == k.mod;
    if (!known)
      names.push_back(k.mod);
  }
  return names;
}

bool ManifestSection::hasBlockMasks(KernelKind kind) const {
  for (const KernelSpec &k : kernels)
    if (k.kind == kind && k.hasBlockMask())
      return true;
  return false;
}

std::vector<std::string> ManifestSection::blockMaskSizes() const {
  std::vector<std::string> sizes;
  for (const KernelSpec &k : kernels) {
    std::string size =
        std::to_string(k.blockMaskQ) + "x" + std::to_string(k.blockMaskK);
    bool known = !k.hasBlockMask();
    for (const std::string &s : sizes)
      known = known || s == size;
    if (!known)
      sizes.push_back(size);
  }
  return sizes;
}

bool isModName(std::string_view name) {
  if (name.empty() || name.size() > kMaxModName)
    return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

std::string ManifestSection::describe(KernelKind kind) const {
  std::string out;
  for (const KernelSpec &k : kernels) {
    if (k.kind != kind)
      continue;
    if (!out.empty())
      out += ", ";
    out += dtypeName(k.dtype);
    if (kind == KernelKind::DecodeCombine) {
      out += " dv" + std::to_string(k.valueDim);
      out += k.splitsKey();
      continue;
    }
    out += " d" + std::to_string(k.headDim) + "/" + std::to_string(k.valueDim);
    out += " causal=";
    out += causalName(k.causal);
    if (k.mask != MaskKind::None) {
      out += " mask=";
      out += maskKindName(k.mask);
    }
    out += k.blocksKey();
    out += k.batchKeys();
    out += k.splitsKey();
    out += k.dqKey();
    out += k.tf32Key();
    out += k.modKey();
  }
  return out.empty() ? "none" : out;
}

bool parseTarget(std::string_view target, int &smVersion, bool &archSpecific) {
  if (target.size() < 5 || target.substr(0, 3) != "sm_")
    return false;
  std::string_view digits = target.substr(3);
  archSpecific = false;
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) {
    archSpecific = digits.back() == 'a';
    digits.remove_suffix(1);
  }
  if (digits.empty() || digits.size() > 4)
    return false;
  int value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return false;
    value = value * 10 + (c - '0');
  }
  smVersion = value;
  return value >= 10;
}

bool runsOn(std::string_view target, int deviceSm) {
  int sm = 0;
  bool archSpecific = false;
  if (!parseTarget(target, sm, archSpecific))
    return false;
  return archSpecific ? deviceSm == sm : deviceSm >= sm;
}

const ManifestSection *Manifest::chooseSection(int deviceSm) const {
  const ManifestSection *best = nullptr;
  int bestSm = 0;
  bool bestArchSpecific = false;
  for (const ManifestSection &section : sections) {
    int sm = 0;
    bool archSpecific = false;
    if (!runsOn(section.target, deviceSm) ||
        !parseTarget(section.target, sm, archSpecific))
      continue;
    // Arch-specific PTX may use what only this chip has (wgmma, TMA); among
    // the rest, the newest target has the most features the device runs.
    bool better = !best || (archSpecific && !bestArchSpecific) ||
                  (archSpecific == bestArchSpecific && sm > bestSm);
    if (!better)
      continue;
    best = &section;
    bestSm = sm;
    bestArchSpecific = archSpecific;
  }
  return best;
}

std::string Manifest::describeTargets() const {
  std::string out;
  for (size_t i = 0; i < sections.size(); ++i) {
    if (i)
      out += i + 1 == sections.size() ? " and " : ", ";
    out += sections[i].target;
  }
  return out;
}

namespace {

/// The whitespace-separated tokens of one line, comments removed.
std::vector<std::string_view> tokenize(std::string_view line) {
  if (size_t hash = line.find('#'); hash != std::string_view::npos)
    line = line.substr(0, hash);
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() &&
           (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' ||
            line[i] == '\v' || line[i] == '\f'))
      ++i;
    size_t start = i;
    while (i < line.size() &&
           !(line[i] == ' ' || line[i] == '\t' || line[i] == '\r' ||
             line[i] == '\v' || line[i] == '\f'))
      ++i;
    if (i > start)
      tokens.push_back(line.substr(start, i - start));
  }
  return tokens;
}

bool parseInt(std::string_view text, int64_t &value) {
  if (text.empty() || text.size() > 12)
    return false;
  value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    value = value * 10 + (c - '0');
  }
  return true;
}

bool isIdentifier(std::string_view name) {
  if (name.empty())
    return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '.';
    if (!ok)
      return false;
  }
  return !(name[0] >= '0' && name[0] <= '9');
}

/// Parses manifests, one line at a time, and reports the first error.
class Parser {
public:
  Parser(const std::string &path, Manifest &manifest)
      : path(path), manifest(manifest) {}

  attn_status parse(std::string_view text);

private:
  attn_status error(int line, const std::string &message) {
    return fail(ATTN_ERROR_MANIFEST,
                path + ":" + std::to_string(line) + ": " + message);
  }
  attn_status parseRecord(int line, const std::vector<std::string_view> &t);
  attn_status parseKernel(int line, const std::vector<std::string_view> &t);
  attn_status parseTma(int line, const std::string &where,
                       std::string_view value, KernelSpec &k);
  attn_status parseModOperands(int line, const std::string &where,
                               std::string_view value, KernelSpec &k);
  /// The error of kernel `k`, whose mod_operands differ from those of
  /// kernel `o` of the same modification.
  attn_status modOperandsDiffer(const KernelSpec &k, const KernelSpec &o);
  /// Checks the last section once its records are all read: at `line`, the
  /// next `target` record or the end of the manifest (`atEnd`).
  attn_status closeSection(int line, bool atEnd);

  const std::string &path;
  Manifest &manifest;
  bool sawHeader = false;
  int ptxLine = 0; // of the last section's `ptx` record
};

attn_status Parser::parse(std::string_view text) {
  int line = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos)
      end = text.size();
    ++line;
    std::vector<std::string_view> tokens =
        tokenize(text.substr(pos, end - pos));
    pos = end + 1;
    if (tokens.empty())
      continue;
    if (attn_status s = parseRecord(line, tokens))
      return s;
  }
  int last = line > 0 ? line : 1;
  if (!sawHeader)
    return error(last, "empty manifest: expected 'attn-manifest " +
                           std::to_string(kManifestVersion) + "'");
  if (manifest.sections.empty())
    return error(last, "missing 'target' record");
  return closeSection(last, /*atEnd=*/true);
}

attn_status Parser::closeSection(int line, bool atEnd) {
  const ManifestSection &section = manifest.sections.back();
  // A manifest of one section reads as it did before sections existed.
  std::string where;
  if (!atEnd || manifest.sections.size() > 1)
    where = " in the section of 'target " + section.target + "' (line " +
            std::to_string(section.line) + ")";
  if (section.ptxFile.empty())
    return error(line, "missing 'ptx' record" + where);
  if (section.kernels.empty())
    return error(line, "no 'kernel' records" + where);

  // Duplicates: by name, and by what the runtime looks a kernel up with.
  std::map<std::string, const KernelSpec *> byName;
  for (const KernelSpec &k : section.kernels) {
    auto [it, inserted] = byName.emplace(k.name, &k);
    if (!inserted)
      return error(k.line, "duplicate kernel '" + k.name + "' (first on line " +
                               std::to_string(it->second->line) + ")");
  }
  for (size_t i = 0; i < section.kernels.size(); ++i) {
    const KernelSpec &k = section.kernels[i];
    for (size_t j = 0; j < i; ++j) {
      const KernelSpec &o = section.kernels[j];
      bool same =
          o.kind == k.kind && o.dtype == k.dtype && o.valueDim == k.valueDim;
      if (k.kind != KernelKind::DecodeCombine)
        same = same && o.headDim == k.headDim && o.causal == k.causal;
      same = same && o.mask == k.mask && o.paged == k.paged &&
             o.balanced == k.balanced && o.packedQueries == k.packedQueries &&
             o.packedKeys == k.packedKeys && o.dq == k.dq &&
             o.blockMaskQ == k.blockMaskQ && o.blockMaskK == k.blockMaskK &&
             o.mod == k.mod && o.tf32 == k.tf32;
      if (same)
        return error(k.line, "kernel '" + k.name + "' has the same kind, " +
                                 "dtype, head_dim, value_dim, causal, " +
                                 "mask, q, kv, dq, f32, blocks and mod as '" +
                                 o.name + "' (line " + std::to_string(o.line) +
                                 "): the runtime could not choose");
    }
  }
  // A modification's name selects its kernels (attn_options.mod): within a
  // section it must stand for one modification, one hash.
  for (size_t i = 0; i < section.kernels.size(); ++i) {
    const KernelSpec &k = section.kernels[i];
    for (size_t j = 0; j < i && !k.mod.empty(); ++j) {
      const KernelSpec &o = section.kernels[j];
      if (o.mod == k.mod && o.modHash != k.modHash)
        return error(k.line, "kernel '" + k.name + "' has mod=" + k.mod +
                                 " with mod_hash=" + k.modHash +
                                 ", but kernel '" + o.name + "' (line " +
                                 std::to_string(o.line) + ") has mod=" + o.mod +
                                 " with mod_hash=" + o.modHash +
                                 ": a modification name must stand for one "
                                 "modification (one hash) within a section");
      // The runtime checks a call's mod operands against its kernels: all
      // of them read the same tensors.
      if (o.mod == k.mod && o.modOperandList() != k.modOperandList())
        return modOperandsDiffer(k, o);
    }
  }
  return ATTN_OK;
}

attn_status Parser::modOperandsDiffer(const KernelSpec &k,
                                      const KernelSpec &o) {
  auto operands = [](const KernelSpec &kernel) {
    return kernel.modOperands.empty()
               ? std::string("no mod_operands")
               : "mod_operands=" + kernel.modOperandList();
  };
  return error(k.line, "kernel '" + k.name + "' has mod=" + k.mod + " with " +
                           operands(k) + ", but kernel '" + o.name +
                           "' (line " + std::to_string(o.line) +
                           ") has mod=" + o.mod + " with " + operands(o) +
                           ": a modification name must stand for one "
                           "modification (one list of the tensors it reads) "
                           "within a section");
}

attn_status Parser::parseRecord(int line,
                                const std::vector<std::string_view> &t) {
  std::string_view record = t[0];
  if (!sawHeader) {
    if (record != "attn-manifest")
      return error(line, "expected 'attn-manifest " +
                             std::to_string(kManifestVersion) +
                             "' as the first record, found '" +
                             std::string(record) + "'");
    int64_t version = 0;
    if (t.size() != 2 || !parseInt(t[1], version))
      return error(line, "expected 'attn-manifest <version>'");
    if (version != kManifestVersion)
      return error(line, "manifest version " + std::to_string(version) +
                             " is not supported (this runtime reads version " +
                             std::to_string(kManifestVersion) + ")");
    manifest.version = static_cast<int>(version);
    sawHeader = true;
    return ATTN_OK;
  }
  if (record == "attn-manifest")
    return error(line, "second 'attn-manifest' record");
  if (record == "target") {
    int sm = 0;
    bool archSpecific = false;
    if (t.size() != 2 || !parseTarget(t[1], sm, archSpecific))
      return error(line, "expected 'target sm_<NN>' (e.g. sm_80, sm_90a)");
    if (!manifest.sections.empty())
      if (attn_status s = closeSection(line, /*atEnd=*/false))
        return s;
    for (const ManifestSection &other : manifest.sections)
      if (other.target == t[1])
        return error(line, "second section for 'target " + other.target +
                               "' (first on line " +
                               std::to_string(other.line) + ")");
    ManifestSection section;
    section.target = std::string(t[1]);
    section.line = line;
    manifest.sections.push_back(std::move(section));
    ptxLine = 0;
    return ATTN_OK;
  }
  if (record != "ptx" && record != "kernel")
    return error(line, "unknown record '" + std::string(record) +
                           "' (expected target, ptx or kernel)");
  if (record == "ptx" && t.size() != 2)
    return error(line, "expected 'ptx <file>'");
  if (manifest.sections.empty())
    return error(line, "'" + std::string(record) +
                           "' record before any 'target' record (each "
                           "section starts with 'target sm_<NN>')");
  if (record == "kernel")
    return parseKernel(line, t);
  if (ptxLine)
    return error(line, "second 'ptx' record (first on line " +
                           std::to_string(ptxLine) + ")");
  manifest.sections.back().ptxFile = std::string(t[1]);
  ptxLine = line;
  return ATTN_OK;
}

attn_status Parser::parseKernel(int line,
                                const std::vector<std::string_view> &t) {
  if (t.size() < 2 || !isIdentifier(t[1]) || t[1].find('=') != t[1].npos)
    return error(line, "expected 'kernel <name> key=value...'");
  KernelSpec k;
  k.name = std::string(t[1]);
  k.line = line;
  const std::string where = "kernel '" + k.name + "': ";

  // Every key a kernel record may have; `seen` catches repeats.
  // "tma" and "params" come last: they are read once the others are.
  static const char *const keys[] = {
      "kind",    "dtype",        "head_dim", "value_dim", "causal",
      "block_q", "rows",         "block_kv", "threads",   "smem",
      "grid",    "mask",         "q",        "kv",        "splits",
      "dq",      "f32",          "mod",      "mod_hash",  "mod_operands",
      "blocks",  "value_blocks", "tma",      "params"};
  constexpr size_t numKeys = sizeof(keys) / sizeof(keys[0]);
  bool seen[numKeys] = {};
  int64_t *ints[numKeys] = {
      nullptr, nullptr,    &k.headDim, &k.valueDim,    nullptr, &k.blockQ,
      &k.rows, &k.blockKv, &k.threads, &k.smem,        nullptr, nullptr,
      nullptr, nullptr,    nullptr,    nullptr,        nullptr, nullptr,
      nullptr, nullptr,    nullptr,    &k.valueBlocks, nullptr, nullptr};
  // Read once every key is known: its checks need the kind and dtype.
  std::string_view tma;
  for (size_t i = 2; i < t.size(); ++i) {
    size_t eq = t[i].find('=');
    if (eq == std::string_view::npos || eq == 0)
      return error(line, where + "expected key=value, found '" +
                             std::string(t[i]) + "'");
    std::string_view key = t[i].substr(0, eq);
    std::string_view value = t[i].substr(eq + 1);
    size_t index = numKeys;
    for (size_t j = 0; j < numKeys; ++j)
      if (key == keys[j])
        index = j;
    if (index == numKeys)
      return error(line, where + "unknown key '" + std::string(key) + "'");
    if (seen[index])
      return error(line, where + "key '" + std::string(key) + "' given twice");
    seen[index] = true;
    std::string bad = where + "bad value '" + std::string(value) + "' for '" +
                      std::string(key) + "'";
    if (key == "kind") {
      std::string names;
      bool known = false;
      for (KernelKind kind : kKinds) {
        names += std::string(names.empty() ? "" : ", ") + kernelKindName(kind);
        if (value == kernelKindName(kind)) {
          k.kind = kind;
          known = true;
        }
      }
      if (!known)
        return error(line, bad + " (" + names + ")");
    } else if (key == "dtype") {
      if (value == "f32")
        k.dtype = ATTN_F32;
      else if (value == "f16")
        k.dtype = ATTN_F16;
      else if (value == "bf16")
        k.dtype = ATTN_BF16;
      else
        return error(line, bad + " (f32, f16, bf16)");
    } else if (key == "causal") {
      if (value == "none")
        k.causal = ATTN_CAUSAL_NONE;
      else if (value == "top_left")
        k.causal = ATTN_CAUSAL_TOP_LEFT;
      else if (value == "bottom_right")
        k.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
      else
        return error(line, bad + " (none, top_left, bottom_right)");
    } else if (key == "params") {
      k.params = std::string(value);
    } else if (key == "tma") {
      tma = value;
    } else if (key == "grid") {
      if (value == "tiles")
        k.persistent = false;
      else if (value == "persistent")
        k.persistent = true;
      else
        return error(line, bad + " (tiles, persistent)");
    } else if (key == "mask") {
      if (value == "none")
        k.mask = MaskKind::None;
      else if (value == "add")
        k.mask = MaskKind::Add;
      else if (value == "bool")
        k.mask = MaskKind::Bool;
      else
        return error(line, bad + " (none, add, bool)");
    } else if (key == "q") {
      // Without the key a kernel reads each sequence's own Q rows.
      if (value != "packed")
        return error(line, bad + " (packed; absent means one sequence per "
                                 "batch row)");
      k.packedQueries = true;
    } else if (key == "kv") {
      // Without the key a kernel reads each sequence's own K/V rows.
      if (value == "paged")
        k.paged = true;
      else if (value == "packed")
        k.packedKeys = true;
      else
        return error(line,
                     bad + " (paged, packed; absent means contiguous K/V)");
    } else if (key == "splits") {
      // Without the key a paged decode kernel splits each sequence's own
      // keys N ways.
      if (value != "balanced")
        return error(line, bad + " (balanced; absent means each sequence "
                                 "split into N chunks of its own)");
      k.balanced = true;
    } else if (key == "dq") {
      // Without the key a backward kernel recomputes dQ in a pass of its own.
      if (value == "atomic")
        k.dq = DqMode::Atomic;
      else if (value == "ordered")
        k.dq = DqMode::Ordered;
      else
        return error(line, bad + " (atomic, ordered; absent means dQ "
                                 "recomputed by backward_q)");
    } else if (key == "f32") {
      // Without the key an f32 kernel runs 3xTF32 products (f32's accuracy).
      if (value != "tf32")
        return error(line, bad + " (tf32; absent means 3xTF32 products)");
      k.tf32 = true;
    } else if (key == "mod") {
      // Without the key a kernel applies no score/mask modification.
      if (value.size() > kMaxModName)
        return error(line, where + "mod '" + std::string(value) + "' has " +
                               std::to_string(value.size()) +
                               " characters: a modification name has 1 to " +
                               std::to_string(kMaxModName) +
                               " (of A-Z, a-z, 0-9 and _)");
      if (!isModName(value))
        return error(line, bad + " (a modification name: 1 to " +
                               std::to_string(kMaxModName) +
                               " characters of A-Z, a-z, 0-9 and _)");
      k.mod = std::string(value);
    } else if (key == "mod_hash") {
      bool hex = value.size() == kModHashDigits;
      for (char c : value)
        hex = hex && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
      if (!hex)
        return error(line, bad + " (the modification's hash: " +
                               std::to_string(kModHashDigits) +
                               " lowercase hex digits)");
      k.modHash = std::string(value);
    } else if (key == "mod_operands") {
      if (attn_status s = parseModOperands(line, where, value, k))
        return s;
    } else if (key == "blocks") {
      // Without the key a kernel takes no block mask.
      size_t times = value.find('x');
      bool sizes = times != std::string_view::npos &&
                   parseInt(value.substr(0, times), k.blockMaskQ) &&
                   parseInt(value.substr(times + 1), k.blockMaskK) &&
                   k.blockMaskQ >= 1 && k.blockMaskQ <= kMaxMaskBlock &&
                   k.blockMaskK >= 1 && k.blockMaskK <= kMaxMaskBlock;
      if (!sizes)
        return error(line, bad +
                               " (BQxBK: the block mask's query and key "
                               "blocks, each 1 to " +
                               std::to_string(kMaxMaskBlock) +
                               ", e.g. 128x128)");
    } else {
      int64_t *slot = ints[index];
      if (!parseInt(value, *slot))
        return error(line, bad + " (a non-negative integer)");
      if (*slot == 0 && key != "smem")
        return error(line, where + "'" + std::string(key) + "' must be > 0");
    }
  }

  // The keys each kind needs (docs/KernelABI.md); others are allowed and
  // ignored, so a compiler may describe a kernel more fully.
  std::vector<const char *> required = {"kind"};
  if (seen[0]) {
    switch (k.kind) {
    case KernelKind::Forward:
    case KernelKind::BackwardDot:
    case KernelKind::BackwardKeyValue:
    case KernelKind::BackwardQuery:
      required = {"dtype",   "head_dim", "value_dim", "causal",
                  "block_q", "block_kv", "threads",   "smem"};
      break;
    case KernelKind::DecodePartial:
      required = {"dtype", "head_dim", "value_dim", "causal",
                  "rows",  "block_kv", "threads",   "smem"};
      break;
    case KernelKind::DecodeCombine:
      required = {"dtype", "value_dim", "rows", "threads", "smem"};
      break;
    }
  }
  for (const char *req : required) {
    size_t index = 0;
    while (std::strcmp(keys[index], req) != 0)
      ++index;
    if (!seen[index])
      return error(line, where + "missing key '" + req + "'" +
                             (seen[0] ? std::string(" for kind=") +
                                            kernelKindName(k.kind)
                                      : std::string()));
  }
  // A modification is named and hashed together; the combine kernel, which
  // every decode call shares, applies none.
  if (!k.mod.empty() && k.modHash.empty())
    return error(line, where + "mod=" + k.mod +
                           " needs mod_hash=<16 hex digits>, the hash of the "
                           "modification");
  if (k.mod.empty() && !k.modHash.empty())
    return error(line, where + "mod_hash=" + k.modHash +
                           " needs mod=<name>, the modification it hashes");
  if (!k.modOperands.empty() && k.mod.empty())
    return error(line, where + "mod_operands=" + k.modOperandList() +
                           " needs mod=<name>, the modification that reads "
                           "them");
  if (!k.mod.empty() && k.kind == KernelKind::DecodeCombine)
    return error(line, where + "mod=" + k.mod +
                           " is for the kinds that compute scores, not "
                           "kind=decode_combine: every decode call shares "
                           "the combine kernel");
  if (k.tf32 && (k.dtype != ATTN_F32 || k.kind == KernelKind::DecodeCombine))
    return error(line, where +
                           "f32=tf32 is for the f32 kernels that multiply "
                           "(this is dtype=" +
                           dtypeName(k.dtype) + " kind=" +
                           kernelKindName(k.kind) + ")");
  if (k.persistent && k.kind != KernelKind::Forward)
    return error(line, where +
                           "grid=persistent is for kind=forward only "
                           "(this is kind=" +
                           kernelKindName(k.kind) + ")");
  // Value blocks are CTAs of their own in the grid of tiles, each reading
  // V at its columns from the tensor's pointer (no tensor map); the
  // backward's column blocks are CTAs of their own in the grids of the
  // dK/dV and dQ kernels.
  if (k.valueBlocks > 1) {
    if (k.kind != KernelKind::Forward && k.kind != KernelKind::DecodePartial &&
        k.kind != KernelKind::BackwardKeyValue &&
        k.kind != KernelKind::BackwardQuery)
      return error(line, where +
                             "value_blocks is for kind=forward, "
                             "decode_partial, backward_kv and backward_q "
                             "(this is kind=" +
                             kernelKindName(k.kind) + ")");
    if (k.valueBlocks > kMaxValueBlocks || k.valueBlocks * 8 > k.valueDim)
      return error(line,
                   where + "value_blocks=" + std::to_string(k.valueBlocks) +
                       " must be at most " + std::to_string(kMaxValueBlocks) +
                       " and value_dim / 8 (value_dim=" +
                       std::to_string(k.valueDim) + ")");
    // The backward's blocks load whole tiles (by tensor maps on sm_90a)
    // and multiply and store their own columns of them.
    bool backward = k.kind == KernelKind::BackwardKeyValue ||
                    k.kind == KernelKind::BackwardQuery;
    if (k.persistent || (seen[numKeys - 2] && !backward))
      return error(line, where + "value_blocks and " +
                             (k.persistent ? "grid=persistent" : "tma") +
                             " do not go together in kind=" +
                             kernelKindName(k.kind) +
                             ": its kernels of value blocks have a CTA per "
                             "block and copy V without a tensor map");
  }
  // A key that adds parameters is for the kinds whose ABI has them (mask=none
  // and the keys' absence are harmless anywhere).
  const struct {
    bool set;
    AbiWhen when;
    std::string key;
    const char *kernels;
  } variants[] = {
      {k.mask != MaskKind::None, AbiWhen::mask,
       std::string("mask=") + maskKindName(k.mask), "take a mask"},
      {k.paged, AbiWhen::paged, "kv=paged", "read a paged KV cache"},
      {k.balanced, AbiWhen::balanced, "splits=balanced",
       "split the keys by a balanced work list"},
      {k.accumulatesDq(),
       k.dq == DqMode::Ordered ? AbiWhen::dq_ordered : AbiWhen::dq_accum,
       k.dqKey() + 1, "compute dQ"},
      {k.packedQueries, AbiWhen::packed, "q=packed", "read a packed batch"},
      {k.hasBlockMask(), AbiWhen::blocks,
       k.hasBlockMask() ? k.blocksKey().substr(1) : "", "take a block mask"},
  };
  for (const auto &v : variants)
    if (v.set && !kindTakes(k.kind, v.when))
      return error(line, where + v.key + " is for the kinds whose kernels " +
                             v.kernels + " (" + kindsTaking(v.when) +
                             "), not kind=" + kernelKindName(k.kind));
  // The balanced work list divides the lengths of a paged cache (kv_lens),
  // which only a paged partial kernel reads.
  if (k.balanced && k.kind == KernelKind::DecodePartial && !k.paged)
    return error(line, where + "splits=balanced on kind=decode_partial needs "
                               "kv=paged: the balanced work list divides the "
                               "lengths (kv_lens) of a paged cache");
  // A packed batch's keys are packed too, or paged; only a packed batch
  // has packed keys, and a forward kernel reads a paged cache only for
  // one (chunked prefill): attn_forward's batch has no lengths.
  if (k.packedKeys && !k.packedQueries)
    return error(line, where + "kv=packed needs q=packed: key_offsets split "
                               "the keys of a packed batch");
  if (k.packedQueries && !k.paged && !k.packedKeys)
    return error(line, where + "q=packed needs kv=packed (key_offsets) or "
                               "kv=paged (kv_lens and block_table): the ABI "
                               "says how a packed batch's keys are found");
  if (k.kind == KernelKind::Forward && k.paged && !k.packedQueries)
    return error(line, where + "kv=paged on kind=forward needs q=packed: a "
                               "forward kernel reads a paged cache for a "
                               "packed batch (chunked prefill) only");
  // Each sequence of a packed batch has its own rows, which no mask
  // operand [B, Hq, Sq, Sk], persistent tile order or tensor map of one
  // strided box describes.
  if (k.packedQueries && k.mask != MaskKind::None)
    return error(line, where + "q=packed and mask=" + maskKindName(k.mask) +
                           " do not go together: a packed batch takes no "
                           "mask operand");
  if (k.packedQueries && k.hasBlockMask())
    return error(line, where + "q=packed and" + k.blocksKey() +
                           " do not go together: a packed batch takes no "
                           "block mask");
  if (k.packedQueries && k.persistent)
    return error(line, where + "q=packed and grid=persistent do not go "
                               "together: a packed batch's grid is its "
                               "sequences' query tiles");
  // A tensor map describes one strided box; a paged kernel's K/V tiles
  // come from pages that the block table scatters over the pool.
  if (k.paged && seen[numKeys - 2])
    return error(line, where + "kv=paged and tma do not go together: a paged "
                               "kernel gathers its K/V pages through the block "
                               "table, which no tensor map describes");
  if (seen[numKeys - 2])
    if (attn_status s = parseTma(line, where, tma, k))
      return s;
  // The compiler writes the parameter list it built the kernel with; it
  // must be the ABI this runtime packs.
  if (seen[numKeys - 1]) {
    std::string expected = abiParamList(k);
    if (k.params != expected)
      return error(line, where + "params=" + k.params +
                             " is not this runtime's ABI for " + abiName(k) +
                             ", params=" + expected + " (docs/KernelABI.md)");
  }
  // The compiler's limits (docs/Limits.md): within them every size a plan
  // derives from a kernel (tiles, grid, workspace) stays far inside int64.
  const struct {
    const char *key;
    int64_t value, limit;
  } bounded[] = {{"head_dim", k.headDim, kMaxHeadDim},
                 {"value_dim", k.valueDim, kMaxHeadDim},
                 {"block_q", k.blockQ, kMaxBlock},
                 {"rows", k.rows, kMaxBlock},
                 {"block_kv", k.blockKv, kMaxBlock}};
  for (const auto &b : bounded)
    if (b.value > b.limit)
      return error(line, where + b.key + "=" + std::to_string(b.value) +
                             " exceeds attn's limit of " +
                             std::to_string(b.limit));
  if (k.threads > 1024)
    return error(line, where + "threads=" + std::to_string(k.threads) +
                           " exceeds the CUDA limit of 1024");
  if (k.smem > (int64_t(1) << 30))
    return error(line, where + "smem=" + std::to_string(k.smem) +
                           " is not a plausible shared-memory size");
  manifest.sections.back().kernels.push_back(std::move(k));
  return ATTN_OK;
}

attn_status Parser::parseTma(int line, const std::string &where,
                             std::string_view value, KernelSpec &k) {
  // The tensors whose tensor maps the ABI gives this kind (forward: q, k,
  // v; decode_partial: k, v; backward_kv: q, k, v, dout, row_stats, and
  // dq_accum with dq=atomic or dq=ordered, read before tma; backward_q: q,
  // k, v, dout).
  std::vector<std::string> tensors;
  for (const AbiEntry &e : kAbi)
    if (std::strcmp(e.kind, kernelKindName(k.kind)) == 0 &&
        std::strcmp(e.type, "tmap") == 0 &&
        (e.when != AbiWhen::tma_dq_accum || k.accumulatesDq()))
      tensors.emplace_back(tensorMapSource(e.name));
  if (tensors.empty())
    return error(line, where +
                           "tma is for the kinds whose kernels take "
                           "tensor maps (" +
                           kindsTaking(AbiWhen::tma) +
                           "), not kind=" + kernelKindName(k.kind));
  std::string names;
  for (const std::string &t : tensors)
    names += (names.empty() ? "" : ", ") + t;

  size_t pos = 0;
  while (pos <= value.size()) {
    size_t end = value.find(',', pos);
    if (end == std::string_view::npos)
      end = value.size();
    std::string entry(value.substr(pos, end - pos));
    pos = end + 1;
    // TENSOR:ROWSxCOLS:SWIZZLE
    TmaBox box;
    size_t colon = entry.find(':');
    size_t times = entry.find('x', colon == std::string::npos ? 0 : colon);
    size_t colon2 = entry.find(':', times == std::string::npos ? 0 : times);
    if (colon == std::string::npos || times == std::string::npos ||
        colon2 == std::string::npos ||
        !parseInt(std::string_view(entry).substr(colon + 1, times - colon - 1),
                  box.rows) ||
        !parseInt(std::string_view(entry).substr(times + 1, colon2 - times - 1),
                  box.cols) ||
        !parseInt(std::string_view(entry).substr(colon2 + 1), box.swizzle))
      return error(line, where + "bad tma entry '" + entry +
                             "' (expected TENSOR:ROWSxCOLS:SWIZZLE, e.g. "
                             "q:128x64:128)");
    box.tensor = entry.substr(0, colon);
    bool known = false;
    for (const std::string &t : tensors)
      known = known || t == box.tensor;
    if (!known)
      return error(line, where + "tma entry '" + entry + "' is for '" +
                             box.tensor + "'; the tensor maps are over " +
                             names);
    if (k.tmaBox(box.tensor))
      return error(line,
                   where + "tma has two entries for '" + box.tensor + "'");
    if (box.rows < 1 || box.rows > 256 || box.cols < 1 || box.cols > 256)
      return error(line, where + "tma box of '" + box.tensor + "' has " +
                             std::to_string(box.rows) + " rows and " +
                             std::to_string(box.cols) +
                             " columns: each must be in [1, 256]");
    if (box.swizzle != 0 && box.swizzle != 32 && box.swizzle != 64 &&
        box.swizzle != 128)
      return error(line, where + "tma swizzle of '" + box.tensor + "' is " +
                             std::to_string(box.swizzle) +
                             " bytes: it must be 0 (none), 32, 64 or 128");
    // A box row is the innermost span TMA copies: whole 16-byte units, and
    // no wider than the swizzle pattern it lands in, if any.
    attn_dtype dtype = tensorMapDtype(k, box.tensor);
    int64_t rowBytes = box.cols * static_cast<int64_t>(dtypeSize(dtype));
    std::string row = "tma box of '" + box.tensor + "' has rows of " +
                      std::to_string(box.cols) + " " + dtypeName(dtype) +
                      " = " + std::to_string(rowBytes) + " bytes";
    if (rowBytes % 16)
      return error(line, where + row + ", not a multiple of 16");
    if (box.swizzle && rowBytes > box.swizzle)
      return error(line, where + row + ", wider than its " +
                             std::to_string(box.swizzle) + "-byte swizzle");
    k.tma.push_back(std::move(box));
  }
  for (const std::string &t : tensors)
    if (!k.tmaBox(t))
      return error(line, where + "tma has no entry for '" + t +
                             "' (it needs one for each of " + names + ")");
  return ATTN_OK;
}

attn_status Parser::parseModOperands(int line, const std::string &where,
                                     std::string_view value, KernelSpec &k) {
  size_t entries = 1;
  for (char c : value)
    entries += c == ',';
  if (entries > static_cast<size_t>(kMaxModOperands))
    return error(line, where + "mod_operands has " + std::to_string(entries) +
                           " entries: a modification reads at most " +
                           std::to_string(kMaxModOperands) + " tensors");
  std::string dtypes;
  for (attn_dtype dtype : kModOperandDtypes)
    dtypes += std::string(dtypes.empty() ? "" : ", ") + dtypeName(dtype);
  size_t pos = 0;
  while (pos <= value.size()) {
    size_t end = value.find(',', pos);
    if (end == std::string_view::npos)
      end = value.size();
    std::string_view entry = value.substr(pos, end - pos);
    pos = end + 1;
    // TYPE:RANK
    size_t colon = entry.find(':');
    ModOperand operand;
    bool known = false;
    for (attn_dtype dtype : kModOperandDtypes)
      if (colon != std::string_view::npos &&
          entry.substr(0, colon) == dtypeName(dtype)) {
        operand.dtype = dtype;
        known = true;
      }
    int64_t rank = -1;
    if (!known || !parseInt(entry.substr(colon + 1), rank) ||
        rank > kMaxModOperandRank)
      return error(line,
                   where + "bad mod_operands entry '" + std::string(entry) +
                       "' (TYPE:RANK, a tensor the modification "
                       "reads: TYPE one of " +
                       dtypes + ", RANK 0 to " +
                       std::to_string(kMaxModOperandRank) + ", e.g. i64:1)");
    operand.rank = static_cast<int>(rank);
    k.modOperands.push_back(operand);
  }
  return ATTN_OK;
}

/// Whether `ptx` declares an entry named `name`.
bool hasEntry(std::string_view ptx, const std::string &name) {
  size_t pos = 0;
  while ((pos = ptx.find(".entry", pos)) != std::string_view::npos) {
    pos += 6;
    size_t i = pos;
    while (i < ptx.size() && (ptx[i] == ' ' || ptx[i] == '\t'))
      ++i;
    if (i == pos || ptx.compare(i, name.size(), name) != 0)
      continue;
    size_t after = i + name.size();
    if (after == ptx.size())
      return true;
    char c = ptx[after];
    if (c == '(' || c == ' ' || c == '\t' || c == '\n' || c == '\r')
      return true;
  }
  return false;
}

} // namespace

attn_status parseManifest(std::string_view text, const std::string &path,
                          Manifest &manifest) {
  manifest = Manifest();
  return Parser(path, manifest).parse(text);
}

attn_status checkPtx(const ManifestSection &section, std::string_view ptx,
                     const std::string &ptxPath) {
  size_t pos = ptx.find(".target");
  if (pos == std::string_view::npos)
    return fail(ATTN_ERROR_MANIFEST,
                ptxPath + ": no '.target' directive: is this a PTX file?");
  pos += 7;
  while (pos < ptx.size() && (ptx[pos] == ' ' || ptx[pos] == '\t'))
    ++pos;
  size_t end = pos;
  while (end < ptx.size() && ptx[end] != ',' && ptx[end] != ' ' &&
         ptx[end] != '\t' && ptx[end] != '\n' && ptx[end] != '\r')
    ++end;
  std::string_view target = ptx.substr(pos, end - pos);
  if (target != section.target)
    return fail(ATTN_ERROR_MANIFEST,
                ptxPath + ": PTX targets '" + std::string(target) +
                    "' but the manifest says 'target " + section.target + "'");
  for (const KernelSpec &k : section.kernels)
    if (!hasEntry(ptx, k.name))
      return fail(ATTN_ERROR_MANIFEST,
                  ptxPath + ": no '.entry " + k.name +
                      "' for the kernel on manifest line " +
                      std::to_string(k.line));
  return ATTN_OK;
}

} // namespace attn::runtime
