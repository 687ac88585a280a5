//===- Manifest.h - the kernel manifest of docs/KernelABI.md ----*- C++ -*-===//
//
// The manifest has one section per target chip: each names a PTX file and
// describes each kernel in it; the runtime loads the one section that the
// device runs best (chooseSection). Parsing is strict: unknown records or
// keys, missing fields, duplicate kernels or targets and a version other
// than the runtime's fail with ATTN_ERROR_MANIFEST and a "path:line:
// message" in attn_last_error(). Nothing here touches CUDA, so the tests
// exercise it without a GPU (ATTN_RUNTIME_API exports what test/Runtime
// calls).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_MANIFEST_H
#define ATTN_LIB_RUNTIME_MANIFEST_H

#include "attn-runtime/attn_runtime.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::runtime {

/// The manifest version this runtime reads.
constexpr int kManifestVersion = 1;

/// The largest head dim and tile a manifest may give a kernel: the
/// compiler's own limits (docs/Limits.md).
constexpr int64_t kMaxHeadDim = int64_t(1) << 16;
constexpr int64_t kMaxBlock = 1024;
/// The most value blocks a kernel may have (`value_blocks`).
constexpr int64_t kMaxValueBlocks = 64;

/// The largest block of a block mask (the manifest's `blocks` key,
/// attn_block_mask's block_q and block_k) that a manifest may give.
constexpr int64_t kMaxMaskBlock = int64_t(1) << 16;

/// The longest name of a modification (the manifest's `mod` key,
/// attn_options.mod) and the digits of its hash (`mod_hash`).
constexpr size_t kMaxModName = 64;
constexpr size_t kModHashDigits = 16;

/// The most tensors a modification may read (the manifest's
/// `mod_operands`, attn_options.num_mod_operands) and their largest rank
/// (attn_tensor's).
constexpr int64_t kMaxModOperands = 16;
constexpr int kMaxModOperandRank = 4;

/// Whether `name` is a modification name: 1 to kMaxModName characters of
/// [A-Za-z0-9_].
ATTN_RUNTIME_API bool isModName(std::string_view name);

/// The kernel kinds of attn_kernel_abi.def.
enum class KernelKind {
#define ATTN_KERNEL_KIND(ENUM, KIND, PREFIX) ENUM,
#include "attn-runtime/attn_kernel_abi.def"
};

/// "forward", "decode_partial", "decode_combine", "backward_dot",
/// "backward_kv", "backward_q".
ATTN_RUNTIME_API const char *kernelKindName(KernelKind kind);

/// The manifest's `mask` key (forward and backward kernels): the kernel takes
/// no mask, an additive mask of its dtype, or a boolean (1-byte) mask.
enum class MaskKind { None, Add, Bool };

/// "none", "add", "bool".
ATTN_RUNTIME_API const char *maskKindName(MaskKind mask);

/// The manifest's `dq` key (backward kinds): how the three backward
/// kernels compute dQ. Recompute (no key): backward_q recomputes it in a
/// pass of its own, deterministically. Atomic (`dq=atomic`) and Ordered
/// (`dq=ordered`) accumulate it instead: they take the dq_accum parameter
/// (f32 [B, Hq, Sq, D] in the workspace after the row statistics), which
/// backward_dot zeroes, backward_kv adds each tile's dQ to and backward_q
/// converts into dq; Atomic adds with atomics in whatever order the CTAs
/// run (dq is not bitwise reproducible), Ordered in an order fixed by the
/// tile indices, its CTAs taking turns through the dq_turns parameter (i32
/// [B, Hq, Sq] after dq_accum), so its dq is deterministic.
enum class DqMode { Recompute, Atomic, Ordered };

/// "recompute", "atomic", "ordered".
ATTN_RUNTIME_API const char *dqModeName(DqMode mode);

/// One entry of a kernel's `tma` key: the box that the kernel copies by TMA
/// out of the memref parameter `tensor` (q, k, v, dout or row_stats) through
/// its tensor map parameter `<tensor>_tmap`, and the swizzle of the copy in
/// shared memory.
struct TmaBox {
  std::string tensor;
  int64_t rows = 0;    // elements along the sequence dim
  int64_t cols = 0;    // elements along the innermost dim (head dim, record)
  int64_t swizzle = 0; // bytes: 0 (none), 32, 64 or 128
};

/// One entry of a kernel's `mod_operands` key: the dtype and rank of a
/// tensor that its modification reads.
struct ModOperand {
  attn_dtype dtype = ATTN_F32;
  int rank = 0;
};

/// One `kernel` record. Fields a kind does not use stay 0.
struct KernelSpec {
  std::string name;
  KernelKind kind = KernelKind::Forward;
  attn_dtype dtype = ATTN_F32;
  int64_t headDim = 0; // all kinds but decode_combine
  int64_t valueDim = 0;
  attn_causal causal = ATTN_CAUSAL_NONE; // all kinds but decode_combine
  MaskKind mask = MaskKind::None;        // forward, backward_*
  int64_t blockQ = 0;                    // forward, backward_*
  int64_t rows = 0;                      // decode_partial, decode_combine
  int64_t blockKv = 0; // forward, decode_partial, backward_*; combine: columns
  /// `value_blocks` (forward, decode_partial): the kernel computes O's
  /// columns in this many blocks, one CTA each, consecutive in grid x
  /// (forward) or y (decode_partial) (docs/KernelABI.md); 1 without.
  int64_t valueBlocks = 1;
  int64_t threads = 0;
  int64_t smem = 0;
  /// `kv=paged` (decode_partial, forward with q=packed): K and V are page
  /// pools that the kernel reads through its kv_lens and block_table
  /// parameters (docs/KernelABI.md); such a decode_partial kernel serves
  /// attn_decode_paged only, the others attn_decode only.
  bool paged = false;
  /// `splits=balanced` (decode_partial with kv=paged, decode_combine): the
  /// kernels of the balanced split-KV work list, N x B items that cut the
  /// batch's keys into chunks of one size, which the partial kernel computes
  /// from kv_lens on the device and writes as split_offsets for the combine
  /// (docs/KernelABI.md). attn_decode_paged prefers them, as a pair; the
  /// others serve attn_decode_paged without such a pair, and attn_decode.
  bool balanced = false;
  /// `q=packed` (forward): a packed batch, Q, O and LSE [1, Hq, T] with the
  /// sequences' rows back to back, split by the query_offsets parameter;
  /// its keys are packed too (`kv=packed`, key_offsets: packedKeys) or
  /// paged (`kv=paged`). Such a kernel serves attn_forward_varlen only,
  /// the others attn_forward only.
  bool packedQueries = false;
  bool packedKeys = false;
  /// The `dq` key (backward_*): Recompute without it, Atomic for
  /// `dq=atomic`, Ordered for `dq=ordered`. attn_backward takes the Atomic
  /// kernels only with options->atomic_dq set, prefers the Ordered ones to
  /// the Recompute ones, and never mixes modes in one call.
  DqMode dq = DqMode::Recompute;
  /// `f32=tf32` (f32 kernels): the products run one TF32 tensor-core step
  /// (10-bit mantissas) where the others run three (3xTF32, f32's
  /// accuracy). A call takes such a kernel only with options->allow_tf32,
  /// and then prefers it.
  bool tf32 = false;
  /// `mod=NAME mod_hash=HEX16` (every kind but decode_combine): the kernel
  /// applies the score/mask modification NAME (FlexAttention's score_mod /
  /// mask_mod compiled in), whose regions hash to HEX16; both empty when it
  /// applies none. Such a kernel serves only calls whose options->mod is
  /// NAME, and a call without one only kernels without one; the parameters
  /// are those of the same kernel without a modification, and the
  /// modOperands'.
  std::string mod;
  std::string modHash;
  /// `mod_operands=T0:R0,T1:R1,...` (kernels with `mod` only): the tensors
  /// the modification reads, 1 to kMaxModOperands, each a memref parameter
  /// (mod0, mod1, ...) after every parameter attn_kernel_abi.def gives the
  /// kernel, tensor maps included; empty when it reads none. Within a
  /// section, one modification name has one list.
  std::vector<ModOperand> modOperands;
  /// `blocks=BQxBK` (forward, backward_*): the kernel takes a block mask
  /// (FlexAttention's BlockMask) of query blocks of BQ rows and key blocks
  /// of BK keys, through its kv_block_* parameters (and the backward's
  /// q_block_*); both 0 when it takes none. Such a kernel serves only calls
  /// whose options->block_mask has those block sizes, and a call without
  /// one only kernels without one.
  int64_t blockMaskQ = 0, blockMaskK = 0;
  /// `grid=persistent` (forward): one CTA per SM, at most one per tile,
  /// each walking the tiles grid-stride (docs/KernelABI.md); else one CTA
  /// per tile.
  bool persistent = false;
  /// The `tma` key (forward, decode_partial, backward_kv, backward_q): one
  /// box per tensor map parameter, as written; empty when the kernel takes
  /// no tensor maps.
  std::vector<TmaBox> tma;
  /// The `params` key as written (empty when absent); when present, it is
  /// checked against abiParamList() as the manifest is read.
  std::string params;
  int line = 0;

  /// Whether the kernel takes tensor maps (the ABI's WHEN=tma parameters).
  bool usesTma() const { return !tma.empty(); }
  /// The keys that say how the kernel reads its batch, for messages: "",
  /// " kv=paged", " q=packed kv=packed", " q=packed kv=paged".
  std::string batchKeys() const;
  /// " splits=balanced" for a kernel of the balanced work list, else ""
  /// (messages).
  const char *splitsKey() const { return balanced ? " splits=balanced" : ""; }
  /// Whether the kernel accumulates dQ in dq_accum (the ABI's
  /// WHEN=dq_accum parameters): dq=atomic or dq=ordered.
  bool accumulatesDq() const { return dq != DqMode::Recompute; }
  /// " dq=atomic", " dq=ordered", or "" for the recompute mode (messages).
  const char *dqKey() const {
    return dq == DqMode::Atomic    ? " dq=atomic"
           : dq == DqMode::Ordered ? " dq=ordered"
                                   : "";
  }
  /// " f32=tf32" for a TF32 kernel, else "" (messages).
  const char *tf32Key() const { return tf32 ? " f32=tf32" : ""; }
  /// " mod=NAME" for a kernel with a modification, else "" (messages).
  std::string modKey() const { return mod.empty() ? "" : " mod=" + mod; }
  /// The value of the `mod_operands` key, "i64:1,f32:2" ("" for none).
  ATTN_RUNTIME_API std::string modOperandList() const;
  /// What the modification reads, for messages: "no tensors", "1 tensor
  /// (i64 rank 1)", "2 tensors (i64 rank 1, f32 rank 2)".
  ATTN_RUNTIME_API std::string modOperandSignature() const;
  /// Whether the kernel takes a block mask (the ABI's WHEN=blocks
  /// parameters).
  bool hasBlockMask() const { return blockMaskQ > 0; }
  /// " blocks=BQxBK" for a kernel with a block mask, else "" (messages).
  std::string blocksKey() const;
  /// The box of the tensor map over `tensor` ("q"); null when there is none.
  const TmaBox *tmaBox(std::string_view tensor) const;
};

/// One kernel parameter as include/attn-runtime/attn_kernel_abi.def gives
/// it: `type` is "memref" (of `rank`), "tmap" (a CUtensorMap over a memref
/// of `rank`), "f32" or "i64".
struct AbiParam {
  const char *name;
  const char *type;
  int rank;
};

/// The parameters of `kernel`, in order: those of its kind, with the mask
/// operand's when it takes a mask, query_offsets when its batch is packed,
/// key_offsets when its keys are, kv_lens and block_table when it is
/// paged, split_offsets when it is of the balanced work list
/// (`splits=balanced`), dq_accum when it accumulates dQ (`dq=atomic` or
/// `dq=ordered`) and dq_turns after it with `dq=ordered`, the block mask's
/// when it has `blocks`, and the tensor maps when it has `tma` (dq_accum's
/// for a backward_kv kernel that accumulates dQ); then a memref per entry
/// of its `mod_operands` (mod0, mod1, ...).
ATTN_RUNTIME_API std::vector<AbiParam> abiParams(const KernelSpec &kernel);

/// Their manifest spelling, the value of a kernel's `params` key:
/// "q:memref4,k:memref4,...,scale_log2:f32,window:i64[,q_tmap:tmap4,...]
/// [,mod0:memref1,...]".
ATTN_RUNTIME_API std::string abiParamList(const KernelSpec &kernel);

/// The memref parameter that the tensor map parameter `name` maps: `name`
/// without its `_tmap` suffix ("q" for "q_tmap"); empty for other names.
ATTN_RUNTIME_API std::string_view tensorMapSource(std::string_view name);

/// The ABI variant of `kernel` for messages: "kind=forward", "kind=forward
/// mask=add", "kind=forward with tensor maps", "kind=decode_partial
/// kv=paged", "kind=decode_partial kv=paged splits=balanced",
/// "kind=forward q=packed kv=packed", "kind=backward_kv dq=atomic",
/// "kind=backward_kv dq=ordered",
/// "kind=forward blocks=128x128", "kind=forward mod_operands=i64:1".
ATTN_RUNTIME_API std::string abiName(const KernelSpec &kernel);

/// One section of a manifest: a `target` record, the `ptx` record and the
/// `kernel` records after it, up to the next `target`. Kernel names and
/// specialisations are unique within a section; each section is a PTX
/// module of its own, so they may repeat across sections.
struct ATTN_RUNTIME_API ManifestSection {
  std::string target;  // "sm_90a"
  std::string ptxFile; // as written, relative to the manifest
  std::vector<KernelSpec> kernels;
  int line = 0; // of the `target` record

  /// The kernel of `kind` that fits; `headDim` and `causal` are ignored for
  /// decode_combine; `mask` must match (MaskKind::None for decode kinds),
  /// and so must `paged` (true for attn_decode_paged's decode_partial
  /// kernel and attn_forward_varlen's on a paged cache), `packedQueries`
  /// and `packedKeys` (attn_forward_varlen's forward kernels only) and
  /// `dq` (the backward's dQ mode; Recompute for the other kinds), `mod`,
  /// the kernel's modification name ("" for none: a call without
  /// options->mod, and decode_combine, which never has one), and
  /// `blockMaskQ` and `blockMaskK`, its block mask's block sizes (0 for
  /// none: a call without options->block_mask), and `balanced` (the
  /// kernels of attn_decode_paged's balanced work list only). An
  /// `f32=tf32` kernel fits only with `allowTf32`, and is then preferred to
  /// the one without. This is the one place where a call's kernels are
  /// matched. Null when none does.
  const KernelSpec *find(KernelKind kind, attn_dtype dtype, int64_t headDim,
                         int64_t valueDim, attn_causal causal,
                         MaskKind mask = MaskKind::None, bool paged = false,
                         bool packedQueries = false, bool packedKeys = false,
                         DqMode dq = DqMode::Recompute,
                         std::string_view mod = {}, int64_t blockMaskQ = 0,
                         int64_t blockMaskK = 0, bool allowTf32 = false,
                         bool balanced = false) const;
  /// Whether any kernel of `kind` has `dtype`.
  bool hasDtype(KernelKind kind, attn_dtype dtype) const;
  /// Whether any kernel of `kind` takes a mask.
  bool hasMasks(KernelKind kind) const;
  /// Whether any kernel of `kind` has a modification (`mod`).
  bool hasMods(KernelKind kind) const;
  /// The modification names of the section's kernels, each once, in the
  /// order of the manifest (messages).
  std::vector<std::string> modNames() const;
  /// Whether any kernel of `kind` takes a block mask (`blocks`).
  bool hasBlockMasks(KernelKind kind) const;
  /// The block sizes of the section's kernels with a block mask ("128x128"),
  /// each once, in the order of the manifest (messages).
  std::vector<std::string> blockMaskSizes() const;
  /// "bf16 d128/128 causal=none, bf16 d128/128 causal=none mask=add, bf16
  /// d128/128 causal=none kv=paged, bf16 d128/128 causal=none kv=paged
  /// splits=balanced, bf16 d128/128 causal=none q=packed kv=packed, bf16
  /// d128/128 causal=none dq=atomic, bf16 d128/128 causal=none dq=ordered,
  /// bf16 d128/128 causal=none mask=add
  /// blocks=128x128, bf16 d128/128 causal=none mod=softcap, ..." for the
  /// kernels of `kind` ("bf16 dv128, bf16 dv128 splits=balanced" for
  /// decode_combine; messages: mask=none, each sequence's own Q, K/V, the
  /// per-sequence splits, the recomputed dQ, no block mask and no
  /// modification are not written).
  std::string describe(KernelKind kind) const;
};

struct ATTN_RUNTIME_API Manifest {
  int version = 0;
  /// In the order of the manifest; never empty once parsed.
  std::vector<ManifestSection> sections;

  /// The section to load on a device of compute capability `deviceSm` (90
  /// for 9.0): among those whose target runs on it (runsOn), the
  /// arch-specific one, else the one of the highest sm_NN (the first in the
  /// manifest on a tie). Null when none runs.
  const ManifestSection *chooseSection(int deviceSm) const;
  /// The targets, in order, for messages: "sm_90a", "sm_90a and sm_80",
  /// "sm_90a, sm_86 and sm_80".
  std::string describeTargets() const;
};

/// Parses the text of a manifest. `path` prefixes messages ("path:3: ...").
ATTN_RUNTIME_API attn_status parseManifest(std::string_view text,
                                           const std::string &path,
                                           Manifest &manifest);

/// Checks the PTX text against a manifest section before it reaches the
/// driver: every kernel of the section is a `.entry` of the PTX and the PTX
/// `.target` is the section's target.
ATTN_RUNTIME_API attn_status checkPtx(const ManifestSection &section,
                                      std::string_view ptx,
                                      const std::string &ptxPath);

/// Parses "sm_80", "sm_90a" into 80/90 and whether it is arch-specific.
ATTN_RUNTIME_API bool parseTarget(std::string_view target, int &smVersion,
                                  bool &archSpecific);

/// Whether PTX for `target` runs on a device of compute capability
/// `deviceSm`: an arch-specific target (sm_90a) on exactly its own, any
/// other (sm_80) on its own and later ones.
ATTN_RUNTIME_API bool runsOn(std::string_view target, int deviceSm);

} // namespace attn::runtime

#endif // ATTN_LIB_RUNTIME_MANIFEST_H
