//===- Plan.cpp - argument checks and launch plans ------------------------===//

#include "Plan.h"

#include "Error.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>

namespace attn::runtime {

namespace {

constexpr int64_t kMaxGridX = 2147483647;
constexpr int64_t kMaxGridYZ = 65535;

/// ceil(a / b) for a >= 0 and b > 0, without forming a + b - 1.
int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/// Size arithmetic that says when it leaves int64: the sizes come from the
/// caller's tensors, and a product that wrapped around could pass every
/// check and launch a kernel that addresses the wrong memory.
bool mul(int64_t a, int64_t b, int64_t &out) {
  return !__builtin_mul_overflow(a, b, &out);
}
bool add(int64_t a, int64_t b, int64_t &out) {
  return !__builtin_add_overflow(a, b, &out);
}
bool alignUp(int64_t a, int64_t b, int64_t &out) {
  return mul(ceilDiv(a, b), b, out);
}

std::string shapeString(const attn_tensor &t) {
  std::string s = "[";
  for (int i = 0; i < t.rank && i < 4; ++i) {
    if (i)
      s += ", ";
    s += std::to_string(t.shape[i]);
  }
  return s + "]";
}

std::string stridesString(const attn_tensor &t) {
  std::string s = "[";
  for (int i = 0; i < t.rank && i < 4; ++i) {
    if (i)
      s += ", ";
    s += std::to_string(t.strides[i]);
  }
  return s + "]";
}

/// The int a caller stored in an enum field. A C caller may store any int
/// there, which C++ may not load as the enum (UBSan: invalid enum load), so
/// the checks read it as an int.
template <typename Enum> int rawEnum(const Enum &field) {
  static_assert(sizeof(Enum) == sizeof(int), "an int-sized C enum");
  int value;
  std::memcpy(&value, &field, sizeof value);
  return value;
}

bool validDtype(const attn_dtype &field) {
  int d = rawEnum(field);
  return d == ATTN_F32 || d == ATTN_F16 || d == ATTN_BF16 || d == ATTN_BOOL ||
         d == ATTN_I32 || d == ATTN_I64;
}

/// What every tensor argument is checked for first: present, of `rank`
/// (`dims` names its dims), with a dtype of the enum.
attn_status checkPresence(const char *api, const char *name,
                          const attn_tensor *t, int rank, const char *dims) {
  if (!t)
    return failf(ATTN_ERROR_INVALID_ARGUMENT, "%s: %s is null", api, name);
  if (t->rank != rank)
    return failf(ATTN_ERROR_SHAPE, "%s: %s has rank %d, expected %d (%s)", api,
                 name, t->rank, rank, dims);
  if (!validDtype(t->dtype))
    return failf(ATTN_ERROR_INVALID_ARGUMENT,
                 "%s: %s has dtype %d, not an attn_dtype", api, name,
                 rawEnum(t->dtype));
  return ATTN_OK;
}

/// Null, rank, sizes, dtype enum and data pointer of one tensor; `dims`
/// names its logical dims for messages. Only masks (and mod operands) may
/// be ATTN_BOOL, only the index tensors (offsets, lengths, block tables;
/// checkIndexTensor) and mod operands ATTN_I32, only mod operands ATTN_I64
/// (checkModOperands).
attn_status checkTensor(const char *api, const char *name, const attn_tensor *t,
                        int rank, const char *dims) {
  if (attn_status s = checkPresence(api, name, t, rank, dims))
    return s;
  // The dtypes only some arguments take, and which.
  static constexpr struct {
    attn_dtype dtype;
    const char *only;
  } kNarrow[] = {
      {ATTN_BOOL, "a mask may be bool"},
      {ATTN_I32, "query_offsets, key_offsets, kv_lens and block_table may "
                 "be i32"},
      {ATTN_I64, "the tensors a modification reads (options->mod_operands) "
                 "may be i64"}};
  for (const auto &narrow : kNarrow)
    if (t->dtype == narrow.dtype)
      return failf(ATTN_ERROR_DTYPE,
                   "%s: %s has dtype %s; only %s (the other tensors are f32, "
                   "f16 or bf16, lse f32)",
                   api, name, dtypeName(narrow.dtype), narrow.only);
  for (int i = 0; i < rank; ++i)
    if (t->shape[i] < 1)
      return failf(ATTN_ERROR_SHAPE,
                   "%s: %s has shape %s (%s): every size must be >= 1", api,
                   name, shapeString(*t).c_str(), dims);
  if (!t->data)
    return failf(ATTN_ERROR_INVALID_ARGUMENT, "%s: %s->data is null", api,
                 name);
  return ATTN_OK;
}

/// Last dim contiguous, no negative strides, no two elements of an output
/// in one place (a zero stride over a dim of size > 1).
attn_status checkStrides(const char *api, const char *name,
                         const attn_tensor &t, bool output) {
  if (t.strides[t.rank - 1] != 1 && t.shape[t.rank - 1] != 1)
    return failf(ATTN_ERROR_STRIDE,
                 "%s: %s has strides %s: the last dim must be contiguous "
                 "(stride 1)",
                 api, name, stridesString(t).c_str());
  for (int i = 0; i < t.rank; ++i) {
    if (t.strides[i] < 0)
      return failf(ATTN_ERROR_STRIDE,
                   "%s: %s has strides %s: negative strides are not "
                   "supported",
                   api, name, stridesString(t).c_str());
    if (output && t.strides[i] == 0 && t.shape[i] > 1)
      return failf(ATTN_ERROR_STRIDE,
                   "%s: %s has strides %s: an output cannot have a zero "
                   "stride over dim %d of size %lld",
                   api, name, stridesString(t).c_str(), i,
                   static_cast<long long>(t.shape[i]));
  }
  return ATTN_OK;
}

/// The bytes from the first element of `t` to past its last one fit int64
/// (the kernels address elements with 64-bit offsets). Run after
/// checkTensor and checkStrides: sizes >= 1, strides >= 0.
attn_status checkExtent(const char *api, const char *name,
                        const attn_tensor &t) {
  int64_t last = 0, bytes = 0;
  bool ok = true;
  for (int i = 0; i < t.rank && ok; ++i) {
    int64_t step = 0;
    ok = mul(t.shape[i] - 1, t.strides[i], step) && add(last, step, last);
  }
  ok = ok && add(last, 1, last) &&
       mul(last, static_cast<int64_t>(dtypeSize(t.dtype)), bytes);
  if (ok)
    return ATTN_OK;
  return failf(ATTN_ERROR_SHAPE,
               "%s: %s has shape %s and strides %s (%s): its elements span "
               "more than 2^63 bytes",
               api, name, shapeString(t).c_str(), stridesString(t).c_str(),
               dtypeName(t.dtype));
}

/// 16-byte data pointer and row strides (dims of size 1 are never stepped
/// over, so their strides do not matter), for tensors whose rows (the last
/// dim) are whole 16-byte chunks: the kernels copy those by 16 bytes. The
/// kernels read and write other rows (head dims such as 59) element by
/// element (docs/KernelABI.md), so those need the element's alignment
/// only. Run after checkExtent: a stride in bytes then fits int64.
attn_status checkAlignment(const char *api, const char *name,
                           const attn_tensor &t) {
  int64_t elem = static_cast<int64_t>(dtypeSize(t.dtype));
  int64_t align = t.rank > 0 && t.shape[t.rank - 1] * elem % kDataAlignment != 0
                      ? elem
                      : kDataAlignment;
  uint64_t address = reinterpret_cast<uint64_t>(t.data);
  if (address % align)
    return failf(ATTN_ERROR_ALIGNMENT,
                 "%s: %s->data 0x%llx is not %lld-byte aligned", api, name,
                 static_cast<unsigned long long>(address),
                 static_cast<long long>(align));
  for (int i = 0; i + 1 < t.rank; ++i)
    if (t.shape[i] > 1 && (t.strides[i] * elem) % align)
      return failf(ATTN_ERROR_ALIGNMENT,
                   "%s: %s has strides %s (%s): stride %lld of dim %d is "
                   "%lld bytes, not a multiple of %lld",
                   api, name, stridesString(t).c_str(), dtypeName(t.dtype),
                   static_cast<long long>(t.strides[i]), i,
                   static_cast<long long>(t.strides[i] * elem),
                   static_cast<long long>(align));
  return ATTN_OK;
}

/// How a call lays out q, k and v: the logical dims of q and the names and
/// logical dims of k and v in messages, whether k and v are page pools
/// (their first dim counts pages, not sequences) and whether q holds a
/// packed batch (its first dim is 1, the sequences' rows back to back in
/// dim 2; so are k and v unless they are pools).
struct InputLayout {
  const char *qDims, *k, *v, *kDims, *vDims;
  bool pools, packed;
};
/// attn_forward, attn_decode, attn_backward: each sequence's own rows.
constexpr InputLayout kSequenceInputs = {
    "B, Hq, Sq, D", "k", "v", "B, Hkv, Sk, D", "B, Hkv, Sk, Dv", false, false};
/// attn_decode_paged: the pools k_cache and v_cache.
constexpr InputLayout kPagedInputs = {
    "B, Hq, Sq, D",          "k_cache", "v_cache", "P, Hkv, page_size, D",
    "P, Hkv, page_size, Dv", true,      false};
/// attn_forward_varlen: a packed batch with packed keys (varlen prefill),
/// or against a paged cache (chunked prefill).
constexpr InputLayout kPackedInputs = {
    "1, Hq, T, D", "k", "v", "1, Hkv, Tk, D", "1, Hkv, Tk, Dv", false, true};
constexpr InputLayout kPackedPagedInputs = {
    "1, Hq, T, D",           "k",  "v", "P, Hkv, page_size, D",
    "P, Hkv, page_size, Dv", true, true};

/// `text` for a message: printable ASCII as is, other bytes as \xNN.
std::string printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      out += c;
      continue;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02x", byte);
    out += hex;
  }
  return out;
}

/// Checks options->mod (NULL or "": none; else a modification name) and
/// records it in `p`. It reads at most kMaxModName + 1 characters.
attn_status checkMod(const char *api, const char *mod, Problem &p) {
  p.mod.clear();
  if (!mod || !*mod)
    return ATTN_OK;
  size_t length = 0;
  while (length <= kMaxModName && mod[length])
    ++length;
  std::string_view name(mod, length);
  if (length > kMaxModName)
    return failf(ATTN_ERROR_INVALID_ARGUMENT,
                 "%s: options->mod = \"%s...\" is longer than %zu "
                 "characters: a modification name (manifest mod=) is 1 to "
                 "%zu characters of A-Z, a-z, 0-9 and _; NULL or \"\" "
                 "means none",
                 api, printable(name.substr(0, kMaxModName)).c_str(),
                 kMaxModName, kMaxModName);
  if (!isModName(name))
    return failf(ATTN_ERROR_INVALID_ARGUMENT,
                 "%s: options->mod = \"%s\" is not a modification name "
                 "(manifest mod=): 1 to %zu characters of A-Z, a-z, 0-9 and "
                 "_; NULL or \"\" means none",
                 api, printable(name).c_str(), kMaxModName);
  p.mod = std::string(name);
  return ATTN_OK;
}

/// Checks what options->mod_operands can be checked before the kernel is
/// chosen: 0 to kMaxModOperands tensors, an array when there are any, and
/// a modification (checkMod: p.mod) to read them; records them in `p`. The
/// tensors themselves are checked against the kernel (checkModOperands).
attn_status checkModOperandOptions(const char *api, const attn_options &opt,
                                   Problem &p) {
  p.modOperands = nullptr;
  p.numModOperands = 0;
  long long count = static_cast<long long>(opt.num_mod_operands);
  if (opt.num_mod_operands < 0 || opt.num_mod_operands > kMaxModOperands)
    return failf(ATTN_ERROR_INVALID_ARGUMENT,
                 "%s: options->num_mod_operands = %lld is outside [0, %lld]: "
                 "a modification reads at most %lld tensors (manifest "
                 "mod_operands=)",
                 api, count, static_cast<long long>(kMaxModOperands),
                 static_cast<long long>(kMaxModOperands));
  if (opt.num_mod_operands == 0)
    return ATTN_OK;
  if (!opt.mod_operands)
    return failf(ATTN_ERROR_INVALID_ARGUMENT,
                 "%s: options->num_mod_operands = %lld, but "
                 "options->mod_operands is null",
                 api, count);
  if (p.mod.empty())
    return failf(ATTN_ERROR_INVALID_ARGUMENT,
                 "%s: options->num_mod_operands = %lld, but options->mod is "
                 "not set: mod operands are the tensors a modification "
                 "(options->mod) reads",
                 api, count);
  p.modOperands = opt.mod_operands;
  p.numModOperands = opt.num_mod_operands;
  return ATTN_OK;
}

/// Checks the options (causal enum, window needs causal, finite scale, the
/// modification's name and its operands' count) and records them in `p`;
/// the mask is the caller's (checkMask, or decode's refusal).
attn_status checkOptions(const char *api, const attn_options *options,
                         Problem &p) {
  attn_options defaults = {0.0f,    ATTN_CAUSAL_NONE, -1,      nullptr, 0,
                           nullptr, nullptr,          nullptr, 0,       0};
  const attn_options &opt = options ? *options : defaults;
  int causal = rawEnum(opt.causal);
  if (causal != ATTN_CAUSAL_NONE && causal != ATTN_CAUSAL_TOP_LEFT &&
      causal != ATTN_CAUSAL_BOTTOM_RIGHT)
    return failf(ATTN_ERROR_INVALID_ARGUMENT,
                 "%s: options->causal = %d is not an attn_causal", api, causal);
  if (opt.window >= 0 && opt.causal == ATTN_CAUSAL_NONE)
    return failf(ATTN_ERROR_INVALID_ARGUMENT,
                 "%s: window = %lld needs a causal kind (top_left or "
                 "bottom_right); window < 0 means none",
                 api, static_cast<long long>(opt.window));
  if (!std::isfinite(opt.scale))
    return failf(ATTN_ERROR_INVALID_ARGUMENT,
                 "%s: scale = %g is not finite (<= 0 picks 1/sqrt(D))", api,
                 static_cast<double>(opt.scale));
  // The kernels divide the mask by the scale and multiply the scores by
  // it: beyond 2^+-64 (docs/Limits.md) either overflows.
  if (opt.scale > 0 && (static_cast<double>(opt.scale) < std::ldexp(1.0, -64) ||
                        static_cast<double>(opt.scale) > std::ldexp(1.0, 64)))
    return failf(ATTN_ERROR_INVALID_ARGUMENT,
                 "%s: scale = %g is outside [2^-64, 2^64] (<= 0 picks "
                 "1/sqrt(D))",
                 api, static_cast<double>(opt.scale));
  double scale = opt.scale > 0
                     ? static_cast<double>(opt.scale)
                     : 1.0 / std::sqrt(static_cast<double>(p.headDim));
  p.scaleLog2 = static_cast<float>(scale * 1.4426950408889634);
  p.causal = opt.causal;
  p.window = opt.window < 0 ? -1 : opt.window;
  p.allowTf32 = opt.allow_tf32 != 0;
  if (attn_status s = checkMod(api, opt.mod, p))
    return s;
  return checkModOperandOptions(api, opt, p);
}

/// Checks q, k, v and the options; fills everything of `p` they determine.
/// With `n.pools`, k and v are page pools [P, Hkv, page_size, D]: their
/// first dim counts pages, not sequences, and p.seqK is left to checkPages
/// (the pages a sequence has). With `n.packed`, q is a packed batch
/// [1, Hq, T, D], and so are k and v [1, Hkv, Tk, D] unless they are
/// pools: p.batch is then 1 and p.seqQ = T rows, the sequences are left
/// to the offsets (checkVarlenIndices).
attn_status checkInputs(const char *api, const attn_tensor *q,
                        const attn_tensor *k, const attn_tensor *v,
                        const attn_options *options, Problem &p,
                        const InputLayout &n = kSequenceInputs) {
  if (attn_status s = checkTensor(api, "q", q, 4, n.qDims))
    return s;
  if (attn_status s = checkTensor(api, n.k, k, 4, n.kDims))
    return s;
  if (attn_status s = checkTensor(api, n.v, v, 4, n.vDims))
    return s;
  if (k->dtype != q->dtype || v->dtype != q->dtype)
    return failf(ATTN_ERROR_DTYPE,
                 "%s: q, %s, %s must have one dtype; they are %s, %s, %s", api,
                 n.k, n.v, dtypeName(q->dtype), dtypeName(k->dtype),
                 dtypeName(v->dtype));
  p.batch = q->shape[0];
  p.headsQ = q->shape[1];
  p.seqQ = q->shape[2];
  p.headDim = q->shape[3];
  p.headsKv = k->shape[1];
  p.valueDim = v->shape[3];
  p.dtype = q->dtype;
  p.paged = n.pools;
  p.packedQueries = n.packed;
  p.packedKeys = n.packed && !n.pools;
  // A packed batch is one row of the batch dim: its sequences lie back to
  // back along dim 2.
  const char *names[] = {"q", n.k, n.v};
  const attn_tensor *tensors[] = {q, k, v};
  const char *dims[] = {n.qDims, n.kDims, n.vDims};
  for (int i = 0; i < (n.pools ? 1 : 3) && n.packed; ++i)
    if (tensors[i]->shape[0] != 1)
      return failf(ATTN_ERROR_SHAPE,
                   "%s: %s has shape %s (%s): a packed batch has its "
                   "sequences' rows back to back in dim 2, dim 0 must be 1",
                   api, names[i], shapeString(*tensors[i]).c_str(), dims[i]);
  if (n.pools) {
    p.pageSize = k->shape[2];
    if (v->shape[0] != k->shape[0] || v->shape[1] != p.headsKv ||
        v->shape[2] != p.pageSize)
      return failf(ATTN_ERROR_SHAPE,
                   "%s: %s %s and %s %s must agree on P, Hkv and page_size",
                   api, n.k, shapeString(*k).c_str(), n.v,
                   shapeString(*v).c_str());
  } else {
    p.seqK = k->shape[2];
    if (k->shape[0] != p.batch || v->shape[0] != p.batch)
      return failf(ATTN_ERROR_SHAPE, "%s: batch sizes differ: q %s, k %s, v %s",
                   api, shapeString(*q).c_str(), shapeString(*k).c_str(),
                   shapeString(*v).c_str());
    if (v->shape[1] != p.headsKv || v->shape[2] != p.seqK)
      return failf(ATTN_ERROR_SHAPE,
                   "%s: k %s and v %s must agree on Hkv and %s", api,
                   shapeString(*k).c_str(), shapeString(*v).c_str(),
                   n.packed ? "Tk" : "Sk");
  }
  if (k->shape[3] != p.headDim)
    return failf(ATTN_ERROR_SHAPE,
                 "%s: q %s and %s %s must agree on the head dim D", api,
                 shapeString(*q).c_str(), n.k, shapeString(*k).c_str());
  if (p.headsQ % p.headsKv)
    return failf(
        ATTN_ERROR_SHAPE, "%s: Hq = %lld is not a multiple of Hkv = %lld", api,
        static_cast<long long>(p.headsQ), static_cast<long long>(p.headsKv));
  for (int i = 0; i < 3; ++i)
    if (attn_status s = checkStrides(api, names[i], *tensors[i], false))
      return s;
  for (int i = 0; i < 3; ++i)
    if (attn_status s = checkExtent(api, names[i], *tensors[i]))
      return s;
  for (int i = 0; i < 3; ++i)
    if (attn_status s = checkAlignment(api, names[i], *tensors[i]))
      return s;
  return checkOptions(api, options, p);
}

/// A data pointer aligned to the tensor's element size: all that kernels
/// reading a tensor one element at a time need (lse, kv_lens,
/// block_table).
attn_status checkElementAlignment(const char *api, const char *name,
                                  const attn_tensor &t) {
  uint64_t address = reinterpret_cast<uint64_t>(t.data);
  uint64_t elementBytes = dtypeSize(t.dtype);
  if (address % elementBytes)
    return failf(ATTN_ERROR_ALIGNMENT,
                 "%s: %s->data 0x%llx is not %llu-byte aligned", api, name,
                 static_cast<unsigned long long>(address),
                 static_cast<unsigned long long>(elementBytes));
  return ATTN_OK;
}

/// Checks one index tensor: i32 of `rank` (kv_lens [B], block_table
/// [B, max_pages], query_offsets and key_offsets [B + 1]) whose dim 0 has
/// `rows` entries (any when < 0; `rowsFrom` says what gives the count, for
/// messages: "q has B = 4 sequences"). Kernels read them an element at a
/// time (4-byte alignment), and as inputs they may repeat a row (a zero
/// stride).
attn_status checkIndexTensor(const char *api, const char *name,
                             const attn_tensor *t, int rank, const char *dims,
                             int64_t rows, const std::string &rowsFrom) {
  if (attn_status s = checkPresence(api, name, t, rank, dims))
    return s;
  if (t->dtype != ATTN_I32)
    return failf(ATTN_ERROR_DTYPE, "%s: %s has dtype %s, must be i32", api,
                 name, dtypeName(t->dtype));
  for (int i = 0; i < rank; ++i)
    if (t->shape[i] < 1)
      return failf(ATTN_ERROR_SHAPE,
                   "%s: %s has shape %s (%s): every size must be >= 1", api,
                   name, shapeString(*t).c_str(), dims);
  if (rows >= 0 && t->shape[0] != rows)
    return failf(ATTN_ERROR_SHAPE, "%s: %s has shape %s (%s), %s", api, name,
                 shapeString(*t).c_str(), dims, rowsFrom.c_str());
  if (!t->data)
    return failf(ATTN_ERROR_INVALID_ARGUMENT, "%s: %s->data is null", api,
                 name);
  if (attn_status s = checkStrides(api, name, *t, /*output=*/false))
    return s;
  if (attn_status s = checkExtent(api, name, *t))
    return s;
  return checkElementAlignment(api, name, *t);
}

/// Checks the block table and lengths of a paged cache for `batch`
/// sequences (`batchFrom` says what gives the count, checkIndexTensor),
/// then sets p.seqK to the capacity max_pages * page_size: the host never
/// reads the lengths (a CUDA graph replays one call for every step), so
/// the plan is made for the longest sequence the table can hold. kv_lens
/// is i32: a capacity it cannot count is refused.
attn_status checkPages(const char *api, const attn_tensor *blockTable,
                       const attn_tensor *kvLens, int64_t batch,
                       const std::string &batchFrom, Problem &p) {
  if (attn_status s = checkIndexTensor(api, "block_table", blockTable, 2,
                                       "B, max_pages", batch, batchFrom))
    return s;
  if (attn_status s =
          checkIndexTensor(api, "kv_lens", kvLens, 1, "B", batch, batchFrom))
    return s;
  p.maxPages = blockTable->shape[1];
  int64_t capacity = 0;
  if (!mul(p.maxPages, p.pageSize, capacity) || capacity > INT32_MAX)
    return failf(
        ATTN_ERROR_SHAPE,
        "%s: a sequence of max_pages = %lld pages (block_table %s) "
        "of page_size = %lld keys holds %.0f keys, more than "
        "kv_lens (i32) can count (2^31 - 1)",
        api, static_cast<long long>(p.maxPages),
        shapeString(*blockTable).c_str(), static_cast<long long>(p.pageSize),
        static_cast<double>(p.maxPages) * static_cast<double>(p.pageSize));
  p.seqK = capacity;
  return ATTN_OK;
}

/// Checks the index tensors of a packed batch: query_offsets i32 [B + 1]
/// (at least one sequence), then key_offsets [B + 1] or the paged cache's
/// block_table [B, max_pages] and kv_lens [B]; sets p.sequences to B. The
/// offsets count rows in i32, so T and Tk past 2^31 - 1 are refused. The
/// host never reads the offsets: the kernel clamps them into [0, T] and
/// [0, Tk].
attn_status checkVarlenIndices(const char *api, const ForwardTensors &t,
                               Problem &p) {
  if (attn_status s = checkIndexTensor(api, "query_offsets", t.queryOffsets, 1,
                                       "B + 1", -1, ""))
    return s;
  int64_t offsets = t.queryOffsets->shape[0];
  if (offsets < 2)
    return failf(ATTN_ERROR_SHAPE,
                 "%s: query_offsets has shape %s (B + 1): a packed batch "
                 "needs at least one sequence, two offsets",
                 api, shapeString(*t.queryOffsets).c_str());
  p.sequences = offsets - 1;
  if (p.seqQ > INT32_MAX)
    return failf(ATTN_ERROR_SHAPE,
                 "%s: q has T = %lld rows, more than query_offsets (i32) can "
                 "address (2^31 - 1)",
                 api, static_cast<long long>(p.seqQ));
  std::string from = "query_offsets has shape " + shapeString(*t.queryOffsets) +
                     " (B + 1): B = " + std::to_string(p.sequences) +
                     " sequences";
  if (p.paged)
    return checkPages(api, t.blockTable, t.kvLens, p.sequences, from, p);
  if (attn_status s = checkIndexTensor(api, "key_offsets", t.keyOffsets, 1,
                                       "B + 1", offsets, from))
    return s;
  if (p.seqK > INT32_MAX)
    return failf(ATTN_ERROR_SHAPE,
                 "%s: k has Tk = %lld rows, more than key_offsets (i32) can "
                 "address (2^31 - 1)",
                 api, static_cast<long long>(p.seqK));
  return ATTN_OK;
}

/// Checks a rank-4 tensor that must have `shape` (the sizes `dims` names)
/// and q's dtype: o, and the backward's dout and gradients. An output may
/// not have a zero stride over a dim of size > 1.
attn_status checkShaped(const char *api, const char *name, const attn_tensor *t,
                        const char *dims, const int64_t (&shape)[4],
                        const Problem &p, bool output) {
  if (attn_status s = checkTensor(api, name, t, 4, dims))
    return s;
  if (t->dtype != p.dtype)
    return failf(ATTN_ERROR_DTYPE, "%s: %s has dtype %s, q has %s", api, name,
                 dtypeName(t->dtype), dtypeName(p.dtype));
  if (t->shape[0] != shape[0] || t->shape[1] != shape[1] ||
      t->shape[2] != shape[2] || t->shape[3] != shape[3])
    return failf(
        ATTN_ERROR_SHAPE,
        "%s: %s has shape %s, expected [%lld, %lld, %lld, %lld] (%s)", api,
        name, shapeString(*t).c_str(), static_cast<long long>(shape[0]),
        static_cast<long long>(shape[1]), static_cast<long long>(shape[2]),
        static_cast<long long>(shape[3]), dims);
  if (attn_status s = checkStrides(api, name, *t, output))
    return s;
  if (attn_status s = checkExtent(api, name, *t))
    return s;
  return checkAlignment(api, name, *t);
}

/// Checks an LSE tensor, f32 [B, Hq, Sq] ([1, Hq, T] for a packed batch):
/// the forward's output, the backward's input. Kernels read and write it
/// one f32 at a time, so it needs only 4-byte alignment.
attn_status checkLse(const char *api, const attn_tensor *lse, const Problem &p,
                     bool output) {
  const char *dims = p.packedQueries ? "1, Hq, T" : "B, Hq, Sq";
  if (attn_status s = checkTensor(api, "lse", lse, 3, dims))
    return s;
  if (lse->dtype != ATTN_F32)
    return failf(ATTN_ERROR_DTYPE, "%s: lse has dtype %s, must be f32", api,
                 dtypeName(lse->dtype));
  if (lse->shape[0] != p.batch || lse->shape[1] != p.headsQ ||
      lse->shape[2] != p.seqQ)
    return failf(ATTN_ERROR_SHAPE,
                 "%s: lse has shape %s, expected [%lld, %lld, %lld] (%s)", api,
                 shapeString(*lse).c_str(), static_cast<long long>(p.batch),
                 static_cast<long long>(p.headsQ),
                 static_cast<long long>(p.seqQ), dims);
  if (attn_status s = checkStrides(api, "lse", *lse, output))
    return s;
  if (attn_status s = checkExtent(api, "lse", *lse))
    return s;
  return checkElementAlignment(api, "lse", *lse);
}

/// Checks o and lse (optional) against the problem the inputs define.
attn_status checkOutputs(const char *api, const attn_tensor *o,
                         const attn_tensor *lse, const Problem &p) {
  const int64_t shape[4] = {p.batch, p.headsQ, p.seqQ, p.valueDim};
  if (attn_status s = checkShaped(
          api, "o", o, p.packedQueries ? "1, Hq, T, Dv" : "B, Hq, Sq, Dv",
          shape, p, /*output=*/true))
    return s;
  return lse ? checkLse(api, lse, p, /*output=*/true) : ATTN_OK;
}

/// Checks the backward's tensors beyond q, k and v, in the order of its
/// parameters: o and dout [B, Hq, Sq, Dv], the forward's lse (required
/// here), then the gradients, each of its operand's shape; all of q's
/// dtype but lse.
attn_status checkBackwardTensors(const char *api, const BackwardTensors &t,
                                 const Problem &p) {
  const int64_t rows[4] = {p.batch, p.headsQ, p.seqQ, p.valueDim};
  if (attn_status s =
          checkShaped(api, "o", t.o, "B, Hq, Sq, Dv", rows, p, false))
    return s;
  if (attn_status s =
          checkShaped(api, "dout", t.dout, "B, Hq, Sq, Dv", rows, p, false))
    return s;
  if (!t.lse)
    return failf(ATTN_ERROR_INVALID_ARGUMENT,
                 "%s: lse is null: the backward recomputes the attention "
                 "weights from the forward's LSE (attn_forward with lse)",
                 api);
  if (attn_status s = checkLse(api, t.lse, p, /*output=*/false))
    return s;
  const int64_t query[4] = {p.batch, p.headsQ, p.seqQ, p.headDim};
  const int64_t key[4] = {p.batch, p.headsKv, p.seqK, p.headDim};
  const int64_t value[4] = {p.batch, p.headsKv, p.seqK, p.valueDim};
  if (attn_status s =
          checkShaped(api, "dq", t.dq, "B, Hq, Sq, D", query, p, true))
    return s;
  if (attn_status s =
          checkShaped(api, "dk", t.dk, "B, Hkv, Sk, D", key, p, true))
    return s;
  return checkShaped(api, "dv", t.dv, "B, Hkv, Sk, Dv", value, p, true);
}

/// Checks options->mask of a forward call against the problem and records
/// its kind in `p`: rank 4, each dim the full size of [B, Hq, Sq, Sk] or 1,
/// a data pointer, q's dtype (additive) or ATTN_BOOL (boolean), no negative
/// stride over a dim of size > 1. No alignment: kernels read it element by
/// element.
attn_status checkMask(const char *api, const attn_tensor *mask, Problem &p) {
  p.mask = MaskKind::None;
  if (!mask)
    return ATTN_OK;
  const char *dims = "B, Hq, Sq, Sk";
  const char *dimNames[] = {"B", "Hq", "Sq", "Sk"};
  const int64_t full[] = {p.batch, p.headsQ, p.seqQ, p.seqK};
  if (mask->rank != 4)
    return failf(ATTN_ERROR_SHAPE,
                 "%s: mask has rank %d, expected 4 (%s; a dim of size 1 "
                 "broadcasts)",
                 api, mask->rank, dims);
  if (!validDtype(mask->dtype))
    return failf(ATTN_ERROR_INVALID_ARGUMENT,
                 "%s: mask has dtype %d, not an attn_dtype", api,
                 rawEnum(mask->dtype));
  for (int i = 0; i < 4; ++i)
    if (mask->shape[i] != full[i] && mask->shape[i] != 1)
      return failf(ATTN_ERROR_SHAPE,
                   "%s: mask has shape %s, expected each dim to be the full "
                   "size of [%lld, %lld, %lld, %lld] (%s) or 1 (broadcast); "
                   "dim %d (%s) is %lld",
                   api, shapeString(*mask).c_str(),
                   static_cast<long long>(full[0]),
                   static_cast<long long>(full[1]),
                   static_cast<long long>(full[2]),
                   static_cast<long long>(full[3]), dims, i, dimNames[i],
                   static_cast<long long>(mask->shape[i]));
  if (!mask->data)
    return failf(ATTN_ERROR_INVALID_ARGUMENT, "%s: mask->data is null", api);
  if (mask->dtype == ATTN_BOOL)
    p.mask = MaskKind::Bool;
  else if (mask->dtype == p.dtype)
    p.mask = MaskKind::Add;
  else
    return failf(ATTN_ERROR_DTYPE,
                 "%s: mask has dtype %s, q has %s: an additive mask has q's "
                 "dtype, a boolean mask ATTN_BOOL",
                 api, dtypeName(mask->dtype), dtypeName(p.dtype));
  for (int i = 0; i < 4; ++i)
    if (mask->shape[i] > 1 && mask->strides[i] < 0)
      return failf(ATTN_ERROR_STRIDE,
                   "%s: mask has strides %s: negative strides are not "
                   "supported",
                   api, stridesString(*mask).c_str());
  // A stride over a dim of size 1 is never used: zero it for the extent.
  attn_tensor stepped = *mask;
  for (int i = 0; i < 4; ++i)
    if (stepped.shape[i] == 1)
      stepped.strides[i] = 0;
  return checkExtent(api, "mask", stepped);
}

/// One list of a block mask: its field and name, the logical dims of its
/// tensor, the name of its last dim (indices: rank 4, the list's length;
/// null for counts: rank 3), and whether it is per key block (the
/// backward's q_* lists, of the query blocks that visit each key block) or
/// per query block (kv_*).
struct BlockList {
  attn_tensor attn_block_mask::*field;
  const char *name, *dims, *length;
  bool perKeyBlock;

  int rank() const { return length ? 4 : 3; }
};

/// A block mask's lists in attn_kernel_abi.def's order of their parameters
/// (kv_block_counts, kv_block_indices, ...): the forward takes the first
/// four, the backward all eight.
constexpr BlockList kBlockLists[] = {
    {&attn_block_mask::kv_counts, "kv_counts", "B, Hq, QB", nullptr, false},
    {&attn_block_mask::kv_indices, "kv_indices", "B, Hq, QB, N", "N", false},
    {&attn_block_mask::full_kv_counts, "full_kv_counts", "B, Hq, QB", nullptr,
     false},
    {&attn_block_mask::full_kv_indices, "full_kv_indices", "B, Hq, QB, N2",
     "N2", false},
    {&attn_block_mask::q_counts, "q_counts", "B, Hq, KB", nullptr, true},
    {&attn_block_mask::q_indices, "q_indices", "B, Hq, KB, M", "M", true},
    {&attn_block_mask::full_q_counts, "full_q_counts", "B, Hq, KB", nullptr,
     true},
    {&attn_block_mask::full_q_indices, "full_q_indices", "B, Hq, KB, M2", "M2",
     true},
};
constexpr int kForwardBlockLists = 4;
constexpr int kBackwardBlockLists = 8;

/// Checks one list of a block mask: i32 of its rank, [B, Hq, QB] or
/// [B, Hq, QB, N] (KB for the q_* lists) with B and Hq each the full size
/// or 1 (broadcast) and N >= 1, a data pointer, no negative stride over a
/// dim of size > 1, an extent that fits, 4-byte alignment (the kernels
/// read it an element at a time).
attn_status checkBlockList(const char *api, const attn_block_mask &blockMask,
                           const BlockList &list, const Problem &p) {
  const attn_tensor &t = blockMask.*list.field;
  std::string name = std::string("block_mask->") + list.name;
  int rank = list.rank();
  if (attn_status s = checkPresence(api, name.c_str(), &t, rank, list.dims))
    return s;
  if (t.dtype != ATTN_I32)
    return failf(ATTN_ERROR_DTYPE, "%s: %s has dtype %s, must be i32", api,
                 name.c_str(), dtypeName(t.dtype));
  int64_t blocks = list.perKeyBlock ? p.keyBlocks : p.queryBlocks;
  if ((t.shape[0] != p.batch && t.shape[0] != 1) ||
      (t.shape[1] != p.headsQ && t.shape[1] != 1) || t.shape[2] != blocks ||
      (rank == 4 && t.shape[3] < 1)) {
    std::string count =
        list.perKeyBlock
            ? "KB = ceil(Sk / block_k) = ceil(" + std::to_string(p.seqK) +
                  " / " + std::to_string(p.blockMaskK) + ")"
            : "QB = ceil(Sq / block_q) = ceil(" + std::to_string(p.seqQ) +
                  " / " + std::to_string(p.blockMaskQ) + ")";
    std::string expected =
        "[" + std::to_string(p.batch) + ", " + std::to_string(p.headsQ) + ", " +
        std::to_string(blocks) +
        (list.length ? std::string(", ") + list.length : std::string()) + "]";
    return fail(ATTN_ERROR_SHAPE,
                std::string(api) + ": " + name + " has shape " +
                    shapeString(t) + ", expected " + expected + " (" +
                    list.dims + "; B and Hq may be 1, broadcast" +
                    (list.length ? std::string(", ") + list.length + " >= 1"
                                 : std::string()) +
                    "; " + count + ")");
  }
  if (!t.data)
    return failf(ATTN_ERROR_INVALID_ARGUMENT, "%s: %s->data is null", api,
                 name.c_str());
  for (int i = 0; i < rank; ++i)
    if (t.shape[i] > 1 && t.strides[i] < 0)
      return failf(ATTN_ERROR_STRIDE,
                   "%s: %s has strides %s: negative strides are not "
                   "supported",
                   api, name.c_str(), stridesString(t).c_str());
  // A stride over a dim of size 1 is never used: zero it for the extent.
  attn_tensor stepped = t;
  for (int i = 0; i < rank; ++i)
    if (stepped.shape[i] == 1)
      stepped.strides[i] = 0;
  if (attn_status s = checkExtent(api, name.c_str(), stepped))
    return s;
  return checkElementAlignment(api, name.c_str(), t);
}

/// Checks options->block_mask against the problem and records its block
/// sizes and block counts in `p`: block sizes >= 1, as many query and key
/// blocks as i32 indices can number, then each list the call takes
/// (checkBlockList): the kv_* lists (attn_forward ignores the q_* ones),
/// all eight with `backward`. The host never reads the lists' values.
attn_status checkBlockMask(const char *api, const attn_block_mask *blockMask,
                           bool backward, Problem &p) {
  p.blockMaskQ = p.blockMaskK = p.queryBlocks = p.keyBlocks = 0;
  if (!blockMask)
    return ATTN_OK;
  if (blockMask->block_q < 1 || blockMask->block_k < 1)
    return failf(ATTN_ERROR_INVALID_ARGUMENT,
                 "%s: options->block_mask has block_q = %lld and block_k = "
                 "%lld: a block mask's blocks have at least one query row "
                 "and one key (the kernels' manifest blocks=BQxBK)",
                 api, static_cast<long long>(blockMask->block_q),
                 static_cast<long long>(blockMask->block_k));
  p.blockMaskQ = blockMask->block_q;
  p.blockMaskK = blockMask->block_k;
  p.queryBlocks = ceilDiv(p.seqQ, p.blockMaskQ);
  p.keyBlocks = ceilDiv(p.seqK, p.blockMaskK);
  if (p.queryBlocks > INT32_MAX || p.keyBlocks > INT32_MAX)
    return failf(ATTN_ERROR_SHAPE,
                 "%s: options->block_mask cuts Sq = %lld queries into %lld "
                 "blocks of %lld and Sk = %lld keys into %lld blocks of "
                 "%lld: more than its i32 indices can number (2^31 - 1)",
                 api, static_cast<long long>(p.seqQ),
                 static_cast<long long>(p.queryBlocks),
                 static_cast<long long>(p.blockMaskQ),
                 static_cast<long long>(p.seqK),
                 static_cast<long long>(p.keyBlocks),
                 static_cast<long long>(p.blockMaskK));
  int lists = backward ? kBackwardBlockLists : kForwardBlockLists;
  for (int i = 0; i < lists; ++i)
    if (attn_status s = checkBlockList(api, *blockMask, kBlockLists[i], p))
      return s;
  return ATTN_OK;
}

/// Checks options->mod_operands against what `kernel`'s modification reads
/// (its manifest mod_operands): as many tensors, each of the manifest's
/// dtype and rank, every size in [1, 2^31 - 1] (the kernels read its
/// elements and clamp indices into the sizes in 32 bits), no
/// negative stride over a dim of size > 1 (a dim of size 1 goes out with
/// stride 0), a data pointer aligned to the element, an extent that fits.
/// The host never reads their values: the kernels clamp each index into
/// the tensor.
attn_status checkModOperands(const char *api, const KernelSpec &kernel,
                             const Problem &p) {
  std::string reads =
      "mod=" + kernel.mod + " reads " + kernel.modOperandSignature();
  if (p.numModOperands != static_cast<int64_t>(kernel.modOperands.size()))
    return failf(ATTN_ERROR_INVALID_ARGUMENT,
                 "%s: %s; options->num_mod_operands = %lld", api, reads.c_str(),
                 static_cast<long long>(p.numModOperands));
  for (int64_t i = 0; i < p.numModOperands; ++i) {
    const attn_tensor &t = p.modOperands[i];
    const ModOperand &want = kernel.modOperands[static_cast<size_t>(i)];
    std::string name = "options->mod_operands[" + std::to_string(i) + "]";
    if (!validDtype(t.dtype))
      return failf(ATTN_ERROR_INVALID_ARGUMENT,
                   "%s: %s has dtype %d, not an attn_dtype (%s)", api,
                   name.c_str(), rawEnum(t.dtype), reads.c_str());
    if (t.dtype != want.dtype)
      return failf(ATTN_ERROR_DTYPE, "%s: %s has dtype %s, expected %s (%s)",
                   api, name.c_str(), dtypeName(t.dtype), dtypeName(want.dtype),
                   reads.c_str());
    if (t.rank != want.rank)
      return failf(ATTN_ERROR_SHAPE, "%s: %s has rank %d, expected %d (%s)",
                   api, name.c_str(), t.rank, want.rank, reads.c_str());
    for (int d = 0; d < t.rank; ++d)
      if (t.shape[d] < 1 || t.shape[d] > INT32_MAX)
        return failf(ATTN_ERROR_SHAPE,
                     "%s: %s has shape %s: every size must be in [1, 2^31 - "
                     "1] (the modification reads its elements; the kernels "
                     "clamp indices in 32 bits)",
                     api, name.c_str(), shapeString(t).c_str());
    for (int d = 0; d < t.rank; ++d)
      if (t.shape[d] > 1 && t.strides[d] < 0)
        return failf(ATTN_ERROR_STRIDE,
                     "%s: %s has strides %s: negative strides are not "
                     "supported",
                     api, name.c_str(), stridesString(t).c_str());
    if (!t.data)
      return failf(ATTN_ERROR_INVALID_ARGUMENT, "%s: %s->data is null", api,
                   name.c_str());
    if (attn_status s = checkElementAlignment(api, name.c_str(), t))
      return s;
    // A stride over a dim of size 1 is never used: zero it for the extent.
    attn_tensor stepped = t;
    for (int d = 0; d < t.rank; ++d)
      if (stepped.shape[d] == 1)
        stepped.strides[d] = 0;
    if (attn_status s = checkExtent(api, name.c_str(), stepped))
      return s;
  }
  return ATTN_OK;
}

/// What a call asks of a kernel of `kinds`: "bf16 d128/128 causal=top_left
/// mask=bool", "bf16 d128/128 causal=none kv=paged", "bf16 d128/128
/// causal=none q=packed kv=packed", "bf16 d128/128 causal=none
/// blocks=128x128". The mask kind is named when the call has a mask or the
/// module has masked kernels of those kinds: either may be what is missing.
std::string describeCall(const ManifestSection &section,
                         std::initializer_list<KernelKind> kinds,
                         const Problem &p) {
  std::string call =
      std::string(dtypeName(p.dtype)) + " d" + std::to_string(p.headDim) + "/" +
      std::to_string(p.valueDim) + " causal=" + causalName(p.causal);
  bool masks = p.mask != MaskKind::None;
  for (KernelKind kind : kinds)
    masks = masks || section.hasMasks(kind);
  if (masks)
    call += std::string(" mask=") + maskKindName(p.mask);
  if (p.blockMaskQ)
    call += " blocks=" + std::to_string(p.blockMaskQ) + "x" +
            std::to_string(p.blockMaskK);
  if (p.packedQueries)
    call += " q=packed";
  if (p.paged)
    call += " kv=paged";
  else if (p.packedKeys)
    call += " kv=packed";
  if (!p.mod.empty())
    call += " mod=" + p.mod;
  return call;
}

/// "a", "a and b", "a, b and c": `names` in a sentence.
std::string listAll(const std::vector<std::string> &names) {
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return list;
}

/// An option that picks kernels by a manifest key (mod=, blocks=), as the
/// no-kernel messages name it.
struct KernelSelector {
  /// The option as the call set it ("" when it did not), e.g.
  /// `options->mod = "softcap"`.
  std::string given;
  /// The option, what a kernel with the key has ("a modification"), the
  /// key, the values' name ("modifications") and how a call sets it
  /// ("name it in").
  const char *option, *thing, *key, *plural, *setBy;
  /// The module's values of the key, and whether a kernel of the call's
  /// kinds has it.
  std::vector<std::string> values;
  bool kindsHaveIt;
};

/// The end of a message of a call that found no kernel, when `s` may be
/// why: with the option set, the values the module has (or that it has
/// none); without, when kernels of the call's kinds have the key, that
/// those serve only calls that set it. "" otherwise.
std::string describeSelector(const KernelSelector &s) {
  std::string list = listAll(s.values);
  if (!s.given.empty())
    return "; " + s.given + ": " +
           (s.values.empty()
                ? std::string("the module has no kernels with ") + s.thing +
                      " (manifest " + s.key + ")"
                : std::string("the module's ") + s.plural + " (manifest " +
                      s.key + ") " + (s.values.size() == 1 ? "is " : "are ") +
                      list);
  if (!s.kindsHaveIt)
    return "";
  return std::string("; ") + s.option + " is not set, and kernels with " +
         s.thing + " (manifest " + s.key + ") serve only calls that " +
         s.setBy + " " + s.option + " (the module's " + s.plural + ": " + list +
         ")";
}

/// describeSelector for options->block_mask.
std::string describeBlockMasks(const ManifestSection &section,
                               std::initializer_list<KernelKind> kinds,
                               const Problem &p) {
  KernelSelector s{"",
                   "options->block_mask",
                   "a block mask",
                   "blocks=",
                   "block sizes",
                   "pass one in",
                   section.blockMaskSizes(),
                   false};
  if (p.blockMaskQ)
    s.given = "options->block_mask has blocks of " +
              std::to_string(p.blockMaskQ) + "x" + std::to_string(p.blockMaskK);
  for (KernelKind kind : kinds)
    s.kindsHaveIt = s.kindsHaveIt || section.hasBlockMasks(kind);
  return describeSelector(s);
}

/// describeSelector for options->mod.
std::string describeMods(const ManifestSection &section,
                         std::initializer_list<KernelKind> kinds,
                         const Problem &p) {
  KernelSelector s{"",
                   "options->mod",
                   "a modification",
                   "mod=",
                   "modifications",
                   "name it in",
                   section.modNames(),
                   false};
  if (!p.mod.empty())
    s.given = "options->mod = \"" + p.mod + "\"";
  for (KernelKind kind : kinds)
    s.kindsHaveIt = s.kindsHaveIt || section.hasMods(kind);
  return describeSelector(s);
}

/// The kernel of `kind` for the problem in `section`, of the balanced work
/// list or not (`balanced`); null when there is none. A paged decode call
/// needs a paged decode_partial kernel, a packed batch a forward kernel of
/// its q and kv keys, and no other call may have one; paged and unpaged
/// decode share the decode_combine kernel, which has no modification.
const KernelSpec *lookUpKernel(const ManifestSection &section, KernelKind kind,
                               const Problem &p, bool allowTf32,
                               bool balanced) {
  bool combine = kind == KernelKind::DecodeCombine;
  return section.find(kind, p.dtype, p.headDim, p.valueDim, p.causal, p.mask,
                      p.paged && !combine, p.packedQueries, p.packedKeys,
                      DqMode::Recompute,
                      combine ? std::string_view() : std::string_view(p.mod),
                      p.blockMaskQ, p.blockMaskK, allowTf32, balanced);
}

/// The kernel of `kind` for the problem, not of the balanced work list
/// (lookUpKernel), or ATTN_ERROR_DTYPE / ATTN_ERROR_NO_KERNEL with the
/// kernels the module does have.
attn_status findKernel(const char *api, const ManifestSection &section,
                       KernelKind kind, const Problem &p,
                       const KernelSpec *&kernel) {
  kernel = lookUpKernel(section, kind, p, p.allowTf32, /*balanced=*/false);
  if (kernel)
    return ATTN_OK;
  if (!p.allowTf32 &&
      lookUpKernel(section, kind, p, /*allowTf32=*/true, /*balanced=*/false))
    return failf(ATTN_ERROR_NO_KERNEL,
                 "%s: the module's %s kernel for this call is an f32=tf32 "
                 "one (TF32 products, 10-bit mantissas), which a call takes "
                 "only when asked: set options.allow_tf32 = 1, or load "
                 "kernels compiled without --tf32 (3xTF32, f32's accuracy)",
                 api, kernelKindName(kind));
  if (!section.hasDtype(kind, p.dtype))
    return failf(ATTN_ERROR_DTYPE,
                 "%s: the module has no %s kernel for dtype %s (it has: %s)",
                 api, kernelKindName(kind), dtypeName(p.dtype),
                 section.describe(kind).c_str());
  if (kind == KernelKind::DecodeCombine)
    return failf(ATTN_ERROR_NO_KERNEL,
                 "%s: the module has no decode_combine kernel for %s "
                 "dv%lld (it has: %s)",
                 api, dtypeName(p.dtype), static_cast<long long>(p.valueDim),
                 section.describe(kind).c_str());
  // Built whole, not through failf's buffer: a module of many kernels
  // lists them all, and the block sizes and modifications come last.
  return fail(ATTN_ERROR_NO_KERNEL,
              std::string(api) + ": the module has no " + kernelKindName(kind) +
                  " kernel for " + describeCall(section, {kind}, p) +
                  " (it has: " + section.describe(kind) + ")" +
                  describeBlockMasks(section, {kind}, p) +
                  describeMods(section, {kind}, p));
}

/// The backward's kernels, in launch order.
constexpr KernelKind kBackwardKinds[3] = {KernelKind::BackwardDot,
                                          KernelKind::BackwardKeyValue,
                                          KernelKind::BackwardQuery};

/// The backward kernels of `section`, kind by kind, for messages:
/// "backward_dot: bf16 d64/64 causal=none; backward_kv: none; ...".
std::string describeBackward(const ManifestSection &section) {
  std::string out;
  for (KernelKind kind : kBackwardKinds)
    out += std::string(out.empty() ? "" : "; ") + kernelKindName(kind) + ": " +
           section.describe(kind);
  return out;
}

/// "a, b or c" (`conjunction` "or"), "a and b" ("and"): `names` in a
/// sentence.
std::string listNames(const std::vector<const char *> &names,
                      const char *conjunction) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += std::string(i == 0 ? ""
                       : i + 1 == names.size()
                           ? std::string(" ") + conjunction + " "
                           : ", ") +
           names[i];
  return out;
}

/// The backward kernels of the dQ mode `dq` for the problem, in launch
/// order; the kinds missing (their entries null) go to `missing`.
void findBackwardSet(const ManifestSection &section, const Problem &p,
                     DqMode dq, const KernelSpec *(&kernels)[3],
                     std::vector<const char *> &missing) {
  for (int i = 0; i < 3; ++i) {
    KernelKind kind = kBackwardKinds[i];
    kernels[i] = section.find(kind, p.dtype, p.headDim, p.valueDim, p.causal,
                              p.mask, /*paged=*/false, /*packedQueries=*/false,
                              /*packedKeys=*/false, dq, p.mod, p.blockMaskQ,
                              p.blockMaskK, p.allowTf32);
    if (!kernels[i])
      missing.push_back(kernelKindName(kind));
  }
}

/// The backward's three kernels for the problem, all of one specialisation
/// and one dQ mode (`dq` says which): the dq=atomic set when `wantAtomic`
/// (options->atomic_dq) and the module has all three, else the
/// deterministic choice: the dq=ordered set when the module has all three,
/// else the recompute set. A module whose backward kernels all have other
/// dtypes is ATTN_ERROR_DTYPE, as for the forward; any other miss, a module
/// without backward kernels or without one of the three kinds included, is
/// ATTN_ERROR_NO_KERNEL naming the kinds that are missing, and the option
/// when the module has the call's kernels only with dq=atomic.
attn_status findBackwardKernels(const char *api, const ManifestSection &section,
                                const Problem &p, bool wantAtomic,
                                const KernelSpec *(&kernels)[3], DqMode &dq) {
  const KernelSpec *recompute[3], *atomic[3], *ordered[3];
  std::vector<const char *> missing, missingAtomic, missingOrdered;
  findBackwardSet(section, p, DqMode::Recompute, recompute, missing);
  findBackwardSet(section, p, DqMode::Atomic, atomic, missingAtomic);
  findBackwardSet(section, p, DqMode::Ordered, ordered, missingOrdered);
  const KernelSpec *const *chosen = nullptr;
  if (wantAtomic && missingAtomic.empty()) {
    dq = DqMode::Atomic;
    chosen = atomic;
  } else if (missingOrdered.empty()) {
    dq = DqMode::Ordered;
    chosen = ordered;
  } else if (missing.empty()) {
    dq = DqMode::Recompute;
    chosen = recompute;
  }
  if (chosen) {
    for (int i = 0; i < 3; ++i)
      kernels[i] = chosen[i];
    return ATTN_OK;
  }
  bool anyBackward = false, anyOfDtype = false;
  for (KernelKind kind : kBackwardKinds) {
    anyOfDtype = anyOfDtype || section.hasDtype(kind, p.dtype);
    for (const KernelSpec &k : section.kernels)
      anyBackward = anyBackward || k.kind == kind;
  }
  // The module's backward kernels end each message, whole: a module with
  // several modes lists many.
  std::string has = describeBackward(section);
  if (anyBackward && !anyOfDtype)
    return fail(ATTN_ERROR_DTYPE, std::string(api) +
                                      ": the module has no backward kernels "
                                      "for dtype " +
                                      dtypeName(p.dtype) + " (it has " + has +
                                      ")");
  std::string call =
      describeCall(section,
                   {KernelKind::BackwardDot, KernelKind::BackwardKeyValue,
                    KernelKind::BackwardQuery},
                   p);
  std::string mods =
      describeBlockMasks(section,
                         {KernelKind::BackwardDot, KernelKind::BackwardKeyValue,
                          KernelKind::BackwardQuery},
                         p) +
      describeMods(section,
                   {KernelKind::BackwardDot, KernelKind::BackwardKeyValue,
                    KernelKind::BackwardQuery},
                   p);
  // What each mode that has some of the call's kernels lacks: the
  // recompute mode always, dq=ordered where it has one of the three, and
  // dq=atomic where the call asks for it.
  bool someOrdered = missingOrdered.size() < 3;
  std::string lacks;
  auto lack = [&](const std::string &ones,
                  const std::vector<const char *> &kinds) {
    lacks += (lacks.empty() ? "of the " + ones + " it lacks "
                            : ", of the " + ones + " ") +
             listNames(kinds, "and");
  };
  if (wantAtomic)
    lack("dq=atomic ones (options.atomic_dq)", missingAtomic);
  if (someOrdered)
    lack("dq=ordered ones", missingOrdered);
  lack("recomputing ones", missing);
  // Deterministic by default: the atomic kernels only when asked for.
  if (missingAtomic.empty())
    return fail(
        ATTN_ERROR_NO_KERNEL,
        std::string(api) + ": the module has no deterministic " +
            (someOrdered
                 ? "set of backward kernels for " + call + " (" + lacks + ")"
                 : listNames(missing, "or") + " kernel for " + call) +
            ", only dq=atomic backward kernels (the atomic dQ mode, "
            "whose dq is not bitwise reproducible run to run), "
            "which attn_backward takes only when asked: set "
            "options.atomic_dq = 1 to use them, or load "
            "deterministic backward kernels (it has " +
            has + ")" + mods);
  if (wantAtomic || someOrdered)
    return fail(ATTN_ERROR_NO_KERNEL,
                std::string(api) +
                    ": the module has no complete set of backward kernels "
                    "for " +
                    call + ": " + lacks +
                    " (a backward call launches backward_dot, backward_kv "
                    "and backward_q kernels of its dtype, head dims, causal "
                    "and mask kind, all three of one dQ mode; it has " +
                    has + ")" + mods);
  return fail(ATTN_ERROR_NO_KERNEL,
              std::string(api) + ": the module has no " +
                  listNames(missing, "or") + " kernel for " + call +
                  " (a backward call launches backward_dot, backward_kv and "
                  "backward_q kernels of its dtype, head dims, causal and "
                  "mask kind; it has " +
                  has + ")" + mods);
}

void pushMemref(std::vector<uint64_t> &args, uint64_t pointer,
                const int64_t *sizes, const int64_t *strides, int rank) {
  args.push_back(pointer); // allocated
  args.push_back(pointer); // aligned
  args.push_back(0);       // offset
  for (int i = 0; i < rank; ++i)
    args.push_back(static_cast<uint64_t>(sizes[i]));
  for (int i = 0; i < rank; ++i)
    args.push_back(static_cast<uint64_t>(strides[i]));
}

void pushTensor(std::vector<uint64_t> &args, const attn_tensor &t) {
  pushMemref(args, reinterpret_cast<uint64_t>(t.data), t.shape, t.strides,
             t.rank);
}

/// A contiguous memref of `rank` sizes at `pointer`.
void pushContiguous(std::vector<uint64_t> &args, uint64_t pointer,
                    std::initializer_list<int64_t> sizeList) {
  int64_t sizes[5], strides[5];
  int rank = 0;
  for (int64_t s : sizeList)
    sizes[rank++] = s;
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= sizes[i];
  }
  pushMemref(args, pointer, sizes, strides, rank);
}

/// The LSE parameter: the tensor, or a descriptor whose aligned pointer 0
/// tells the kernel not to write it.
void pushLse(std::vector<uint64_t> &args, const attn_tensor *lse,
             const Problem &p) {
  if (lse)
    pushTensor(args, *lse);
  else
    pushContiguous(args, 0, {p.batch, p.headsQ, p.seqQ});
}

/// The mask parameter: the full logical sizes [B, Hq, Sq, Sk], stride 0
/// over the dims the mask broadcasts (size 1 in the caller's tensor).
void pushMask(std::vector<uint64_t> &args, const attn_tensor &mask,
              const Problem &p) {
  const int64_t sizes[4] = {p.batch, p.headsQ, p.seqQ, p.seqK};
  int64_t strides[4];
  for (int i = 0; i < 4; ++i)
    strides[i] = mask.shape[i] == 1 ? 0 : mask.strides[i];
  pushMemref(args, reinterpret_cast<uint64_t>(mask.data), sizes, strides, 4);
}

/// The block mask's parameters, in attn_kernel_abi.def's order: the kv_*
/// lists, and with `backward` the q_* ones. Each goes out with the full B
/// and Hq and its own other sizes, stride 0 over the dims it broadcasts
/// (size 1 in the caller's tensor).
void pushBlockMask(std::vector<uint64_t> &args, const attn_block_mask &mask,
                   const Problem &p, bool backward) {
  int lists = backward ? kBackwardBlockLists : kForwardBlockLists;
  for (int i = 0; i < lists; ++i) {
    const attn_tensor &t = mask.*kBlockLists[i].field;
    int rank = kBlockLists[i].rank();
    int64_t sizes[4] = {p.batch, p.headsQ, t.shape[2], t.shape[3]};
    int64_t strides[4];
    for (int d = 0; d < rank; ++d)
      strides[d] = t.shape[d] == 1 ? 0 : t.strides[d];
    pushMemref(args, reinterpret_cast<uint64_t>(t.data), sizes, strides, rank);
  }
}

/// The tensors the modification reads (mod0, mod1, ...), after every
/// other parameter of the kernel, tensor maps included: each as the caller
/// gave it, stride 0 over its dims of size 1 (as the mask's).
void pushModOperands(std::vector<uint64_t> &args, const Problem &p) {
  for (int64_t i = 0; i < p.numModOperands; ++i) {
    const attn_tensor &t = p.modOperands[i];
    int64_t strides[4] = {};
    for (int d = 0; d < t.rank; ++d)
      strides[d] = t.shape[d] == 1 ? 0 : t.strides[d];
    pushMemref(args, reinterpret_cast<uint64_t>(t.data), t.shape, strides,
               t.rank);
  }
}

/// Checks a tensor map against TMA's limits before anything reaches the
/// driver. The argument checks that every kernel needs already require the
/// alignment of q, k, v and dout where their rows are whole 16-byte chunks
/// (checkAlignment), and checkWorkspace that of the row statistics; TMA's
/// terms are checked here in full so that they hold however those change.
attn_status checkTensorMap(const char *api, const KernelSpec &kernel,
                           const attn_tensor &t, const char *dims,
                           const TensorMapArg &m) {
  std::string reads = std::string("kernel '") + kernel.name +
                      "' reads it through a tensor map (TMA)";
  if (m.address % kDataAlignment)
    return failf(ATTN_ERROR_ALIGNMENT,
                 "%s: %s->data 0x%llx is not %lld-byte aligned: %s", api,
                 m.tensor, static_cast<unsigned long long>(m.address),
                 static_cast<long long>(kDataAlignment), reads.c_str());
  for (int i = 0; i < 4; ++i)
    if (m.dims[i] > kMaxTensorMapDim)
      return failf(ATTN_ERROR_SHAPE,
                   "%s: %s has shape %s (%s): %s, whose dims have at most "
                   "2^32 elements; dim %d has %llu",
                   api, m.tensor, shapeString(t).c_str(), dims, reads.c_str(),
                   3 - i, static_cast<unsigned long long>(m.dims[i]));
  for (int i = 0; i < 3; ++i) {
    uint64_t stride = m.strides[i];
    if (stride % kDataAlignment == 0 && stride < kMaxTensorMapStride)
      continue;
    return failf(stride % kDataAlignment ? ATTN_ERROR_ALIGNMENT
                                         : ATTN_ERROR_STRIDE,
                 "%s: %s has strides %s (%s): %s, whose strides are "
                 "multiples of %lld bytes below 2^40; dim %d steps %llu "
                 "bytes",
                 api, m.tensor, stridesString(t).c_str(), dtypeName(t.dtype),
                 reads.c_str(), static_cast<long long>(kDataAlignment), 2 - i,
                 static_cast<unsigned long long>(stride));
  }
  return ATTN_OK;
}

/// The tensors a kernel's tensor maps may be over, by the name of their
/// memref parameter; null for those a call does not have.
struct MapTensors {
  const attn_tensor *q = nullptr, *k = nullptr, *v = nullptr;
  const attn_tensor *dout = nullptr, *rowStats = nullptr;
  const attn_tensor *dqAccum = nullptr;
};

/// The tensor map parameters of a kernel with `tma`, after all its other
/// parameters but the mod operands (the ABI's order): each over the memref
/// parameter its name says, with that memref's sizes and strides innermost
/// first, and its box and swizzle from the manifest. A dim of size 1 is
/// never stepped over, so it gets stride 0 whatever the caller gave it:
/// any stride is valid there, and TMA would reject most.
attn_status pushTensorMaps(const char *api, Launch &launch,
                           const MapTensors &tensors) {
  const struct {
    const char *name, *dims;
    const attn_tensor *tensor;
  } sources[] = {{"q", "B, Hq, Sq, D", tensors.q},
                 {"k", "B, Hkv, Sk, D", tensors.k},
                 {"v", "B, Hkv, Sk, Dv", tensors.v},
                 {"dout", "B, Hq, Sq, Dv", tensors.dout},
                 {"row_stats", "B, Hq, Sq, 4", tensors.rowStats},
                 {"dq_accum", "B, Hq, Sq, D", tensors.dqAccum}};
  const KernelSpec &kernel = *launch.kernel;
  launch.tensorMaps.clear();
  if (!kernel.usesTma())
    return ATTN_OK;
  for (const AbiParam &p : abiParams(kernel)) {
    if (std::strcmp(p.type, "tmap") != 0)
      continue;
    std::string_view name = tensorMapSource(p.name);
    const TmaBox *box = kernel.tmaBox(name);
    const attn_tensor *t = nullptr;
    const char *dims = "";
    for (const auto &source : sources)
      if (name == source.name) {
        t = source.tensor;
        dims = source.dims;
      }
    if (!box || !t || p.rank != 4)
      return failf(ATTN_ERROR_INVALID_ARGUMENT,
                   "%s: internal error: no tensor for parameter %s of kernel "
                   "'%s'",
                   api, p.name, kernel.name.c_str());
    TensorMapArg m;
    m.param = launch.args.size();
    m.tensor = box->tensor.c_str();
    m.dtype = t->dtype;
    m.address = reinterpret_cast<uint64_t>(t->data);
    uint64_t elementBytes = dtypeSize(t->dtype);
    for (int i = 0; i < 4; ++i)
      m.dims[i] = static_cast<uint64_t>(t->shape[3 - i]);
    for (int i = 0; i < 3; ++i) {
      int dim = 2 - i;
      uint64_t bytes = 0;
      if (t->shape[dim] > 1 &&
          __builtin_mul_overflow(static_cast<uint64_t>(t->strides[dim]),
                                 elementBytes, &bytes))
        bytes = UINT64_MAX; // far past TMA's limit: checkTensorMap says so
      m.strides[i] = bytes;
    }
    m.box[0] = static_cast<uint32_t>(box->cols);
    m.box[1] = static_cast<uint32_t>(box->rows);
    m.box[2] = m.box[3] = 1;
    m.swizzle = box->swizzle;
    if (attn_status s = checkTensorMap(api, kernel, *t, dims, m))
      return s;
    launch.args.push_back(0);
    launch.tensorMaps.push_back(m);
  }
  return ATTN_OK;
}

void pushF32(std::vector<uint64_t> &args, float value) {
  uint32_t bits;
  static_assert(sizeof(bits) == sizeof(value), "f32 is 4 bytes");
  std::memcpy(&bits, &value, sizeof(bits));
  args.push_back(bits);
}

/// Grid x of a kernel with `tiles` tiles (forward and dQ: query tiles;
/// dK/dV: key tiles): a CTA per tile and value block (manifest
/// `value_blocks`); past int64 more than any grid.
int64_t valueBlockTiles(int64_t tiles, const KernelSpec &kernel) {
  int64_t x = 0;
  return mul(tiles, kernel.valueBlocks, x) ? x : INT64_MAX;
}

attn_status setGrid(const char *api, Launch &launch, int64_t x, int64_t y,
                    int64_t z) {
  if (x > kMaxGridX || y > kMaxGridYZ || z > kMaxGridYZ)
    return failf(ATTN_ERROR_SHAPE,
                 "%s: grid (%lld, %lld, %lld) for kernel '%s' exceeds the "
                 "CUDA limits (2^31-1, 65535, 65535)",
                 api, static_cast<long long>(x), static_cast<long long>(y),
                 static_cast<long long>(z), launch.kernel->name.c_str());
  launch.grid[0] = static_cast<unsigned>(x);
  launch.grid[1] = static_cast<unsigned>(y);
  launch.grid[2] = static_cast<unsigned>(z);
  launch.block = static_cast<unsigned>(launch.kernel->threads);
  launch.smem = static_cast<unsigned>(launch.kernel->smem);
  return ATTN_OK;
}

/// The parameters of a forward kernel in attn_kernel_abi.def's order: q, k,
/// v, a packed batch's query_offsets, then its key_offsets, or kv_lens and
/// block_table, o, lse, the mask when the kernel takes one, the block
/// mask's kv_* lists when it takes one, scale_log2 and window, then the
/// tensor maps of a kernel with `tma`, then the mod operands.
attn_status pushForwardArgs(const char *api, const ForwardTensors &t,
                            const attn_tensor *mask,
                            const attn_block_mask *blockMask, const Problem &p,
                            Launch &launch) {
  const KernelSpec &kernel = *launch.kernel;
  std::vector<uint64_t> &args = launch.args;
  args.clear();
  pushTensor(args, *t.q);
  pushTensor(args, *t.k);
  pushTensor(args, *t.v);
  if (kernel.packedQueries)
    pushTensor(args, *t.queryOffsets);
  if (kernel.packedKeys)
    pushTensor(args, *t.keyOffsets);
  if (kernel.paged) {
    pushTensor(args, *t.kvLens);
    pushTensor(args, *t.blockTable);
  }
  pushTensor(args, *t.o);
  pushLse(args, t.lse, p);
  if (kernel.mask != MaskKind::None)
    pushMask(args, *mask, p);
  if (kernel.hasBlockMask())
    pushBlockMask(args, *blockMask, p, /*backward=*/false);
  pushF32(args, p.scaleLog2);
  args.push_back(static_cast<uint64_t>(p.window));
  if (attn_status s = pushTensorMaps(api, launch, {t.q, t.k, t.v}))
    return s;
  pushModOperands(args, p);
  return ATTN_OK;
}

/// The error of a call whose `kind` of kernels ("decode", "packed") takes
/// no mask operand, when options->mask is set.
attn_status refuseMask(const char *api, const attn_options *options,
                       const char *kind) {
  if (!options || !options->mask)
    return ATTN_OK;
  return failf(ATTN_ERROR_INVALID_ARGUMENT,
               "%s: options->mask is set, but %s kernels take no mask; use "
               "attn_forward for a masked call",
               api, kind);
}

/// The error of a call other than attn_forward and attn_backward when
/// options->block_mask is set: only their kernels take one.
attn_status refuseBlockMask(const char *api, const attn_options *options) {
  if (!options || !options->block_mask)
    return ATTN_OK;
  return failf(ATTN_ERROR_INVALID_ARGUMENT,
               "%s: options->block_mask is set, but block masks are for "
               "attn_forward and attn_backward only",
               api);
}

/// The balanced pair of kernels (splits=balanced) for a paged decode call:
/// both null when the section has no balanced partial kernel for it (the
/// call then takes the per-sequence ones, as before such kernels existed);
/// ATTN_ERROR_NO_KERNEL when it has one but no balanced combine kernel of
/// the dtype and Dv, which the partial kernel's work list needs.
attn_status findBalancedKernels(const char *api, const ManifestSection &section,
                                const Problem &p, const KernelSpec *&partial,
                                const KernelSpec *&combine) {
  combine = nullptr;
  partial = lookUpKernel(section, KernelKind::DecodePartial, p, p.allowTf32,
                         /*balanced=*/true);
  if (!partial)
    return ATTN_OK;
  combine = lookUpKernel(section, KernelKind::DecodeCombine, p, p.allowTf32,
                         /*balanced=*/true);
  if (combine)
    return ATTN_OK;
  return failf(ATTN_ERROR_NO_KERNEL,
               "%s: the module's decode_partial kernel '%s' for this call "
               "has splits=balanced, but the module has no decode_combine "
               "kernel with splits=balanced for %s dv%lld to merge its work "
               "items (it has: %s)",
               api, partial->name.c_str(), dtypeName(p.dtype),
               static_cast<long long>(p.valueDim),
               section.describe(KernelKind::DecodeCombine).c_str());
}

/// Decode's checks that do not involve the outputs: the inputs (with a
/// paged call's block table and lengths) and the kernels: for a paged call
/// the balanced pair where the section has one (findBalancedKernels), else
/// the per-sequence partial kernel and the combine that attn_decode shares.
attn_status checkDecodeInputs(const char *api, const ManifestSection &section,
                              const DecodeTensors &t,
                              const attn_options *options, Problem &p,
                              const KernelSpec *&partial,
                              const KernelSpec *&combine) {
  if (attn_status s = checkInputs(api, t.q, t.k, t.v, options, p,
                                  t.paged ? kPagedInputs : kSequenceInputs))
    return s;
  if (t.paged)
    if (attn_status s = checkPages(
            api, t.blockTable, t.kvLens, p.batch,
            "q has B = " + std::to_string(p.batch) + " sequences", p))
      return s;
  if (attn_status s = refuseMask(api, options, "decode"))
    return s;
  if (attn_status s = refuseBlockMask(api, options))
    return s;
  partial = combine = nullptr;
  if (t.paged)
    if (attn_status s = findBalancedKernels(api, section, p, partial, combine))
      return s;
  if (!partial)
    if (attn_status s =
            findKernel(api, section, KernelKind::DecodePartial, p, partial))
      return s;
  if (attn_status s = checkModOperands(api, *partial, p))
    return s;
  if (!combine)
    if (attn_status s =
            findKernel(api, section, KernelKind::DecodeCombine, p, combine))
      return s;
  return ATTN_OK;
}

/// Row tiles of the partial kernel per KV head: its CTAs hold `rows` of the
/// (Hq / Hkv) * Sq query rows of a KV head (docs/KernelABI.md); INT64_MAX
/// when that overflows (the grid check then refuses it).
int64_t rowTilesPerKvHead(const Problem &p, const KernelSpec &partial) {
  int64_t rows = 0;
  if (!mul(p.headsQ / p.headsKv, p.seqQ, rows))
    return INT64_MAX;
  return ceilDiv(rows, partial.rows);
}

/// The CTAs of one split of the partial kernel: Hkv x row tiles x value
/// blocks; INT64_MAX when that overflows.
int64_t ctasPerBatch(const Problem &p, const KernelSpec &partial) {
  int64_t ctas = 0;
  if (!mul(p.headsKv, rowTilesPerKvHead(p, partial), ctas) ||
      !mul(ctas, partial.valueBlocks, ctas))
    return INT64_MAX;
  return ctas;
}

int64_t splitsFor(int smCount, const Problem &p, const KernelSpec &partial,
                  int64_t numSplits) {
  int64_t tiles = ceilDiv(p.seqK, partial.blockKv);
  if (numSplits <= 0) {
    auto model = partial.balanced ? balancedDefaultSplits
                 : p.paged        ? pagedDefaultSplits
                                  : defaultSplits;
    // The models count CTAs on the busiest SM, one streaming at a time. A
    // CTA of fewer than 4 warps does not take an SM's share of the
    // bandwidth alone: on an H200, sm_80's 2-warp decode kernels (D = 216
    // to 256, B = 8, Hkv = 8, 16k keys) streamed 2090 to 4140 GB/s with
    // one CTA an SM (2 splits) and 2480 to 4300 with two (4 splits;
    // docs/GPU.md). Such kernels count two CTA slots an SM, as many as
    // their shared memory leaves room for on sm_80 and sm_90.
    int slots = smCount;
    if (partial.threads > 0 && partial.threads < 128 &&
        smCount <= INT32_MAX / 2)
      slots = 2 * smCount;
    return model(slots, p.batch, ctasPerBatch(p, partial), p.seqK,
                 partial.blockKv);
  }
  return numSplits < tiles ? numSplits : tiles;
}

/// The balanced kernels' chunk is a multiple of this many keys.
constexpr int64_t kBalancedChunkKeys = 128;

/// The keys of a work item of the balanced kernels for `splits` splits
/// of `batch` sequences when every one holds its capacity of `seqK` keys:
/// the kernel's chunk (SplitWork.h, which the kernel runs on the device):
/// of the candidates 128 ceil(T / (128 max(1, m))) for T = B x seqK and
/// m = W, W - ceil(B / 2), W - B (W = N x B), each at most seqK, the first
/// for which the B sequences' ceil(seqK / c) items each fit in W.
int64_t balancedFullChunk(int64_t splits, int64_t batch, int64_t seqK) {
  if (batch < 1 || seqK < 1)
    return 1;
  // W and T stay far inside int64 for the shapes the plan accepts.
  int64_t items = splits * batch, total = batch * seqK;
  int64_t chunk = 1;
  for (int64_t slack : {int64_t{0}, ceilDiv(batch, 2), batch}) {
    int64_t m = items - slack > 1 ? items - slack : 1;
    chunk = kBalancedChunkKeys * ceilDiv(total, kBalancedChunkKeys * m);
    chunk = chunk < seqK ? chunk : seqK;
    if (batch * ceilDiv(seqK, chunk) <= items)
      break;
  }
  return chunk;
}

/// Where a decode call's workspace holds its parts (decodeWorkspaceBytes):
/// partial_o at 0, partial_lse at `partialLse`, the balanced kernels'
/// split_offsets at `splitOffsets`, `bytes` in all.
struct DecodeWorkspace {
  int64_t partialLse = 0, splitOffsets = 0, bytes = 0;
};

/// The workspace of `splits` splits of `rows` query rows of `batch`
/// sequences: the f32 partial outputs (Dv each), aligned, the f32 partial
/// LSEs, aligned, then the i32 split offsets (B + 1). Both kinds of decode
/// kernels fit it, so that its size does not depend on the kernels. False
/// when the byte count overflows int64.
bool workspaceBytesFor(int64_t splits, int64_t batch, int64_t rows,
                       int64_t valueDim, DecodeWorkspace &w) {
  int64_t parts = 0, outputs = 0, lses = 0, offsets = 0;
  return mul(splits, rows, parts) && mul(parts, valueDim, outputs) &&
         mul(outputs, 4, outputs) &&
         alignUp(outputs, kWorkspaceAlignment, w.partialLse) &&
         mul(parts, 4, lses) && add(w.partialLse, lses, lses) &&
         alignUp(lses, kWorkspaceAlignment, w.splitOffsets) &&
         add(batch, 1, offsets) && mul(offsets, 4, offsets) &&
         add(w.splitOffsets, offsets, w.bytes);
}

/// The query rows B * Hq * Sq of a decode call; false when they overflow.
bool queryRows(int64_t batch, int64_t heads, int64_t seq, int64_t &rows) {
  return mul(batch, heads, rows) && mul(rows, seq, rows);
}

/// The caller's workspace: not null, kWorkspaceAlignment-aligned, at least
/// `needed` bytes. `need` says what needs them ("16 splits need"),
/// `sizeFunction` which function of the API computes it.
attn_status checkWorkspace(const char *api, const void *workspace,
                           int64_t bytes, int64_t needed,
                           const std::string &need, const char *sizeFunction) {
  if (!workspace)
    return failf(ATTN_ERROR_INVALID_ARGUMENT,
                 "%s: workspace is null (%s %lld bytes)", api, need.c_str(),
                 static_cast<long long>(needed));
  uint64_t address = reinterpret_cast<uint64_t>(workspace);
  if (address % kWorkspaceAlignment)
    return failf(ATTN_ERROR_ALIGNMENT,
                 "%s: workspace 0x%llx is not %lld-byte aligned", api,
                 static_cast<unsigned long long>(address),
                 static_cast<long long>(kWorkspaceAlignment));
  if (bytes < needed)
    return failf(ATTN_ERROR_INVALID_ARGUMENT,
                 "%s: workspace has %lld bytes, %s %lld (%s)", api,
                 static_cast<long long>(bytes), need.c_str(),
                 static_cast<long long>(needed), sizeFunction);
  return ATTN_OK;
}

/// The f32 fields of a backward row statistics record: {LSE log2(e) (+inf
/// where LSE = -inf), D = rowsum(dO * O), 0, 0}, 16 bytes.
constexpr int64_t kRowStatsFields = 4;

/// The backward's workspace: one row statistics record per query row.
/// False when that is more than kMaxWorkspaceBytes.
bool backwardBytesFor(int64_t batch, int64_t heads, int64_t seq,
                      int64_t &bytes) {
  int64_t rows = 0;
  return queryRows(batch, heads, seq, rows) &&
         mul(rows, kRowStatsFields * 4, bytes) && bytes <= kMaxWorkspaceBytes;
}

/// "the 16-byte row statistics of 2 x 8 x 77 query rows": what the
/// backward's workspace holds, for messages.
std::string backwardRowStats(int64_t batch, int64_t heads, int64_t seq) {
  return "the 16-byte row statistics of " + std::to_string(batch) + " x " +
         std::to_string(heads) + " x " + std::to_string(seq) + " query rows";
}

/// "the 16-byte row statistics of 2 x 8 x 77 query rows, the f32 dQ
/// accumulator [2, 8, 77, 64] and the i32 dQ turns [2, 8, 77]": what the
/// workspace of the accumulating dQ modes holds, for messages.
std::string backwardAccumulatorContents(int64_t batch, int64_t heads,
                                        int64_t seq, int64_t headDim) {
  std::string rows = std::to_string(batch) + ", " + std::to_string(heads) +
                     ", " + std::to_string(seq);
  return backwardRowStats(batch, heads, seq) + ", the f32 dQ accumulator [" +
         rows + ", " + std::to_string(headDim) + "] and the i32 dQ turns [" +
         rows + "]";
}

/// A contiguous f32 tensor of `sizes` at `address` in the backward's
/// workspace: row_stats' records, [B, Hq, Sq, 4], the memref that
/// backwardArgs passes and the tensor maps of the backward kernels with
/// `tma` are over, or the accumulating dQ modes' dq_accum, [B, Hq, Sq, D].
attn_tensor workspaceTensor(uint64_t address, const int64_t (&sizes)[4]) {
  attn_tensor t = {};
  t.data = reinterpret_cast<void *>(address);
  t.dtype = ATTN_F32;
  t.rank = 4;
  int64_t stride = 1;
  for (int i = 3; i >= 0; --i) {
    t.shape[i] = sizes[i];
    t.strides[i] = stride;
    stride *= sizes[i];
  }
  return t;
}

/// The arguments that the three backward kernels share, in
/// attn_kernel_abi.def's order: the tensors as the caller gave them,
/// row_stats over the workspace (contiguous [B, Hq, Sq, 4] f32), dq_accum
/// (contiguous [B, Hq, Sq, D] f32 at `dqAccum`) when the kernels accumulate
/// dQ (`dq`), dq_turns (contiguous [B, Hq, Sq] i32 at `dqTurns`) when they
/// are the ordered ones, the mask when they take one, the block mask's eight
/// lists when they take one, then scale_log2 and window. Each kernel's own
/// tensor maps and the mod operands follow (planBackward).
std::vector<uint64_t>
backwardArgs(const BackwardTensors &t, const attn_tensor *mask,
             const attn_block_mask *blockMask, const attn_tensor &rowStats,
             DqMode dq, uint64_t dqAccum, uint64_t dqTurns, const Problem &p) {
  std::vector<uint64_t> args;
  for (const attn_tensor *x : {t.q, t.k, t.v, t.o, t.dout})
    pushTensor(args, *x);
  pushTensor(args, *t.lse);
  for (const attn_tensor *x : {t.dq, t.dk, t.dv})
    pushTensor(args, *x);
  pushTensor(args, rowStats);
  if (dq != DqMode::Recompute)
    pushContiguous(args, dqAccum, {p.batch, p.headsQ, p.seqQ, p.headDim});
  if (dq == DqMode::Ordered)
    pushContiguous(args, dqTurns, {p.batch, p.headsQ, p.seqQ});
  if (p.mask != MaskKind::None)
    pushMask(args, *mask, p);
  if (p.blockMaskQ)
    pushBlockMask(args, *blockMask, p, /*backward=*/true);
  pushF32(args, p.scaleLog2);
  args.push_back(static_cast<uint64_t>(p.window));
  return args;
}

/// Where a decode call's partial results go in its workspace: f32
/// partial_o [N, B, Hq, Sq, Dv], then f32 partial_lse [N, B, Hq, Sq], each
/// contiguous; the balanced kernels' (`balanced`) are the same bytes seen
/// as W = N x B work items, [W, 1, Hq, Sq, Dv] and [W, 1, Hq, Sq], and
/// their i32 split_offsets [B + 1].
struct DecodePartials {
  int64_t splits = 0, batch = 0;
  bool balanced = false;
  uint64_t partialO = 0, partialLse = 0, splitOffsets = 0;

  /// The first two sizes of partial_o and partial_lse: N and B, or W and 1.
  /// planDecode checked that N x B x Hq x Sq fits int64.
  int64_t outer() const { return balanced ? splits * batch : splits; }
  int64_t inner() const { return balanced ? 1 : batch; }
};

/// The partial results' parameters of both decode kinds: partial_o,
/// partial_lse, and the balanced kernels' split_offsets.
void pushPartials(std::vector<uint64_t> &args, const DecodePartials &d,
                  const Problem &p) {
  pushContiguous(args, d.partialO,
                 {d.outer(), d.inner(), p.headsQ, p.seqQ, p.valueDim});
  pushContiguous(args, d.partialLse, {d.outer(), d.inner(), p.headsQ, p.seqQ});
  if (d.balanced)
    pushContiguous(args, d.splitOffsets, {p.batch + 1});
}

/// The decode_partial launch of `launch.kernel`: one CTA per split (the
/// balanced kernels: per work item), row tile of a KV head and sequence,
/// and its parameters in attn_kernel_abi.def's order (a paged kernel's
/// kv_lens and block_table after v, a balanced one's split_offsets after
/// partial_lse, a kernel with `tma` its tensor maps after the scalars),
/// then the mod operands.
attn_status planPartial(const char *api, const DecodeTensors &t,
                        const Problem &p, const DecodePartials &d,
                        Launch &launch) {
  if (attn_status s = setGrid(api, launch, d.outer(),
                              ctasPerBatch(p, *launch.kernel), d.inner()))
    return s;
  std::vector<uint64_t> &args = launch.args;
  args.clear();
  pushTensor(args, *t.q);
  pushTensor(args, *t.k);
  pushTensor(args, *t.v);
  if (launch.kernel->paged) {
    pushTensor(args, *t.kvLens);
    pushTensor(args, *t.blockTable);
  }
  pushPartials(args, d, p);
  pushF32(args, p.scaleLog2);
  args.push_back(static_cast<uint64_t>(p.window));
  if (attn_status s = pushTensorMaps(api, launch, {t.q, t.k, t.v}))
    return s;
  pushModOperands(args, p);
  return ATTN_OK;
}

/// The decode_combine launch of `launch.kernel`, which merges the splits'
/// partials (the balanced kernel: each sequence's work items, which
/// split_offsets lists) into o and lse: one CTA per `rows` query rows and
/// column tile.
attn_status planCombine(const char *api, const DecodeTensors &t,
                        const Problem &p, const DecodePartials &d,
                        Launch &launch) {
  const KernelSpec &combine = *launch.kernel;
  int64_t rows = 0;
  queryRows(p.batch, p.headsQ, p.seqQ, rows); // planDecode checked it
  // A CTA covers block_kv of the value_dim columns (all of them when the
  // manifest does not say), the last one fewer where block_kv does not
  // divide value_dim.
  int64_t columnTiles =
      combine.blockKv ? ceilDiv(combine.valueDim, combine.blockKv) : 1;
  if (attn_status s =
          setGrid(api, launch, ceilDiv(rows, combine.rows), columnTiles, 1))
    return s;
  launch.args.clear();
  pushPartials(launch.args, d, p);
  pushTensor(launch.args, *t.o);
  pushLse(launch.args, t.lse, p);
  launch.tensorMaps.clear(); // the combine takes none
  return ATTN_OK;
}

} // namespace

std::vector<size_t> abiParamSizes(const KernelSpec &kernel) {
  std::vector<size_t> sizes;
  for (const AbiParam &p : abiParams(kernel)) {
    if (std::strcmp(p.type, "memref") == 0)
      sizes.insert(sizes.end(), 3 + 2 * p.rank, 8);
    else if (std::strcmp(p.type, "tmap") == 0)
      sizes.push_back(kTensorMapBytes);
    else
      sizes.push_back(std::strcmp(p.type, "f32") == 0 ? 4 : 8);
  }
  return sizes;
}

attn_status planForward(const ManifestSection &section, int smCount,
                        const attn_tensor *q, const attn_tensor *k,
                        const attn_tensor *v, const attn_tensor *o,
                        const attn_tensor *lse, const attn_options *options,
                        Launch &launch) {
  const char *api = "attn_forward";
  Problem p;
  if (attn_status s = checkInputs(api, q, k, v, options, p))
    return s;
  if (attn_status s = checkOutputs(api, o, lse, p))
    return s;
  const attn_tensor *mask = options ? options->mask : nullptr;
  if (attn_status s = checkMask(api, mask, p))
    return s;
  const attn_block_mask *blockMask = options ? options->block_mask : nullptr;
  if (attn_status s = checkBlockMask(api, blockMask, /*backward=*/false, p))
    return s;
  if (attn_status s =
          findKernel(api, section, KernelKind::Forward, p, launch.kernel))
    return s;
  if (attn_status s = checkModOperands(api, *launch.kernel, p))
    return s;
  int64_t tiles = ceilDiv(p.seqQ, launch.kernel->blockQ);
  if (launch.kernel->persistent) {
    // One CTA per SM (the kernels take the register file), at most one per
    // tile; the kernel counts the tiles in 32 bits.
    int64_t all = 0;
    if (!mul(tiles, p.headsQ, all) || !mul(all, p.batch, all) ||
        all > INT32_MAX)
      return failf(ATTN_ERROR_SHAPE,
                   "%s: %lld x %lld x %lld query tiles for kernel '%s' are "
                   "more than its persistent grid counts (2^31 - 1)",
                   api, static_cast<long long>(p.batch),
                   static_cast<long long>(p.headsQ),
                   static_cast<long long>(tiles), launch.kernel->name.c_str());
    if (attn_status s =
            setGrid(api, launch,
                    std::min<int64_t>(all, smCount > 0 ? smCount : 1), 1, 1))
      return s;
  } else if (attn_status s =
                 setGrid(api, launch, valueBlockTiles(tiles, *launch.kernel),
                         p.headsQ, p.batch)) {
    return s;
  }
  ForwardTensors t{q,       k, v,  /*queryOffsets=*/nullptr, nullptr, nullptr,
                   nullptr, o, lse};
  return pushForwardArgs(api, t, mask, blockMask, p, launch);
}

attn_status planForwardVarlen(const ManifestSection &section,
                              const ForwardTensors &t, int64_t maxSeqlenQ,
                              const attn_options *options, Launch &launch) {
  const char *api = "attn_forward_varlen";
  // The keys are packed (key_offsets) or paged (kv_lens and block_table):
  // one of the two, which also says what k and v are.
  bool paged = t.kvLens || t.blockTable;
  if (t.keyOffsets && paged)
    return failf(ATTN_ERROR_INVALID_ARGUMENT,
                 "%s: key_offsets (packed keys) and kv_lens or block_table "
                 "(a paged cache) are both given: pass one or the other",
                 api);
  if (!t.keyOffsets && !paged)
    return failf(ATTN_ERROR_INVALID_ARGUMENT,
                 "%s: key_offsets, kv_lens and block_table are all null: "
                 "pass key_offsets for packed keys, or kv_lens and "
                 "block_table for a paged cache",
                 api);
  Problem p;
  if (attn_status s = checkInputs(api, t.q, t.k, t.v, options, p,
                                  paged ? kPackedPagedInputs : kPackedInputs))
    return s;
  if (attn_status s = checkOutputs(api, t.o, t.lse, p))
    return s;
  if (attn_status s = checkVarlenIndices(api, t, p))
    return s;
  if (attn_status s = refuseMask(api, options, "packed"))
    return s;
  if (attn_status s = refuseBlockMask(api, options))
    return s;
  if (attn_status s =
          findKernel(api, section, KernelKind::Forward, p, launch.kernel))
    return s;
  if (attn_status s = checkModOperands(api, *launch.kernel, p))
    return s;
  // The CTAs past a sequence's own query tiles return at once: any count
  // of rows that covers the longest sequence serves, and T covers all.
  int64_t rows = maxSeqlenQ <= 0 || maxSeqlenQ > p.seqQ ? p.seqQ : maxSeqlenQ;
  if (attn_status s = setGrid(
          api, launch,
          valueBlockTiles(ceilDiv(rows, launch.kernel->blockQ), *launch.kernel),
          p.headsQ, p.sequences))
    return s;
  return pushForwardArgs(api, t, nullptr, nullptr, p, launch);
}

int64_t defaultSplits(int smCount, int64_t batch, int64_t headsKv,
                      int64_t seqK, int64_t blockKv) {
  int64_t tiles = ceilDiv(seqK, blockKv > 0 ? blockKv : 1);
  int64_t ctas = 0;
  // So many CTAs that their count overflows fill the GPU many times over.
  if (smCount <= 0 || !mul(batch, headsKv, ctas))
    return 1;
  // Decode streams K/V at the SM's bandwidth, so CTAs that share an SM run
  // one after the other in effect. Model the partial kernel's time as (CTAs
  // on the busiest SM) x (key tiles per split + about two tiles of fixed
  // cost per CTA: Q load, pipeline fill, the warps' merge), plus a quarter
  // tile per split for the combine, and take the cheapest count (in
  // quarter tiles). Measured on an H200 (132 SMs, bench/decode_splits.py):
  // B = 1, Hkv = 8, 16k keys: 16 splits, one CTA per SM, streamed 9%
  // faster than 33, two per SM; at 1k keys 8 splits 11% faster than 16.
  int64_t best = 1, bestCost = -1;
  for (int64_t n = 1; n <= tiles && n <= 4096; ++n) {
    int64_t all = 0;
    if (!mul(n, ctas, all))
      break; // more splits only cost more
    int64_t perSm = ceilDiv(all, smCount);
    int64_t perCta = 0, cost = 0;
    if (!mul(perSm, ceilDiv(tiles, n) + 2, perCta) || !mul(perCta, 4, cost) ||
        cost > INT64_MAX - n)
      break;
    cost += n;
    // On a tie the smaller count wins: fewer partials to combine.
    if (bestCost < 0 || cost < bestCost) {
      best = n;
      bestCost = cost;
    }
  }
  return best;
}

int64_t pagedDefaultSplits(int smCount, int64_t batch, int64_t headsKv,
                           int64_t seqK, int64_t blockKv) {
  // One sequence leaves no other sequences waiting: the dense model.
  if (batch == 1)
    return defaultSplits(smCount, batch, headsKv, seqK, blockKv);
  int64_t tiles = ceilDiv(seqK, blockKv > 0 ? blockKv : 1);
  int64_t ctas = 0;
  if (smCount <= 0 || !mul(batch, headsKv, ctas))
    return 1;
  // Each sequence's keys are cut into `n` chunks of its own length, so
  // more splits shorten the longest sequence's chunks, which the other SMs
  // wait for at the end, and cost about two tiles per CTA (Q load,
  // pipeline fill, the warps' merge). In half tiles, as doubles: the
  // counts of a real call are far from overflowing one. Measured on an
  // H200 (132 SMs, Hkv = 8, lengths from L to 10 L): B = 8 picks 8 splits
  // at 4k keys and 16 at 16k (the fastest counts of 1 to 32), B = 64 picks
  // 2 at 4k and 4 at 16k (within 5% of the fastest).
  int64_t best = 1;
  double bestCost = -1;
  for (int64_t n = 1; n <= tiles && n <= 4096; ++n) {
    double work = static_cast<double>(ctas) * n *
                  (static_cast<double>(tiles) / (2.0 * n) + 2) / smCount;
    double tail = (static_cast<double>(ceilDiv(tiles, n)) + 2) / 2;
    double cost = work + tail;
    if (bestCost < 0 || cost < bestCost) {
      best = n;
      bestCost = cost;
    }
  }
  return best;
}

int64_t balancedDefaultSplits(int smCount, int64_t batch, int64_t headsKv,
                              int64_t seqK, int64_t blockKv) {
  // Measured on an H100 (132 SMs, Hkv = 8, D = 128, lengths spread over
  // 10x, split counts 1 to 24, docs/GPU.md): chunks of about a third of
  // the mean length were the fastest at every batch (N = 4: B = 8 and 64,
  // 4k and 16k mean); fewer splits leave the long sequences' items for
  // last, more pay each item's fixed cost (Q load, pipeline fill, the
  // warps' merge, a partial to combine) on short chunks. A small batch
  // needs more items to fill the SMs: at least 1.5 CTAs per SM.
  constexpr int64_t kSplits = 4;
  if (smCount <= 0 || batch < 1 || headsKv < 1)
    return 1;
  int64_t tiles = ceilDiv(seqK, blockKv > 0 ? blockKv : 1);
  int64_t perSplit = 0, splits = kSplits;
  if (mul(batch, headsKv, perSplit)) {
    int64_t fill = ceilDiv(3 * static_cast<int64_t>(smCount), 2 * perSplit);
    splits = fill > splits ? fill : splits;
  }
  splits = splits < tiles ? splits : tiles;
  return splits > 1 ? splits : 1;
}

attn_status resolveSplits(const ManifestSection &section, int smCount,
                          const DecodeTensors &t, const attn_options *options,
                          int64_t numSplits, int64_t &splits) {
  const char *api = t.paged ? "attn_decode_paged_splits" : "attn_decode_splits";
  Problem p;
  const KernelSpec *partial = nullptr, *combine = nullptr;
  if (attn_status s =
          checkDecodeInputs(api, section, t, options, p, partial, combine))
    return s;
  splits = splitsFor(smCount, p, *partial, numSplits);
  return ATTN_OK;
}

int64_t decodeWorkspaceBytes(const attn_tensor *q, const attn_tensor *v,
                             int64_t numSplits) {
  const char *api = "attn_decode_workspace_size";
  if (checkTensor(api, "q", q, 4, "B, Hq, Sq, D") ||
      checkTensor(api, "v", v, 4, "B, Hkv, Sk, Dv; or P, Hkv, page_size, Dv"))
    return -1;
  if (numSplits < 1) {
    failf(ATTN_ERROR_INVALID_ARGUMENT,
          "%s: num_splits = %lld; pass the count attn_decode_splits() "
          "returns",
          api, static_cast<long long>(numSplits));
    return -1;
  }
  // 2^50 bytes is no real workspace; the estimate, in double, cannot
  // overflow, and below it the exact count fits int64.
  double parts =
      static_cast<double>(numSplits) * q->shape[0] * q->shape[1] * q->shape[2];
  double estimate = parts * (static_cast<double>(v->shape[3]) + 1) * 4 +
                    (static_cast<double>(q->shape[0]) + 1) * 4;
  int64_t rows = 0;
  DecodeWorkspace w;
  if (estimate > static_cast<double>(kMaxWorkspaceBytes) ||
      !queryRows(q->shape[0], q->shape[1], q->shape[2], rows) ||
      !workspaceBytesFor(numSplits, q->shape[0], rows, v->shape[3], w) ||
      w.bytes > kMaxWorkspaceBytes) {
    failf(ATTN_ERROR_SHAPE,
          "%s: %lld splits of this shape need %.3g bytes, more than 2^50", api,
          static_cast<long long>(numSplits), estimate);
    return -1;
  }
  return w.bytes;
}

attn_status planDecode(const ManifestSection &section, int smCount,
                       const DecodeTensors &t, const attn_options *options,
                       int64_t numSplits, const void *workspace,
                       int64_t workspaceBytes, DecodePlan &plan) {
  const char *api = t.paged ? "attn_decode_paged" : "attn_decode";
  Problem p;
  const KernelSpec *partial = nullptr, *combine = nullptr;
  if (attn_status s =
          checkDecodeInputs(api, section, t, options, p, partial, combine))
    return s;
  if (attn_status s = checkOutputs(api, t.o, t.lse, p))
    return s;

  int64_t splits = splitsFor(smCount, p, *partial, numSplits);
  int64_t rows = 0;
  DecodeWorkspace w;
  if (!queryRows(p.batch, p.headsQ, p.seqQ, rows) ||
      !workspaceBytesFor(splits, p.batch, rows, p.valueDim, w) ||
      w.bytes > kMaxWorkspaceBytes)
    return failf(
        ATTN_ERROR_SHAPE,
        "%s: %lld splits of B * Hq * Sq = %lld x %lld x %lld query "
        "rows need more than 2^50 bytes of workspace",
        api, static_cast<long long>(splits), static_cast<long long>(p.batch),
        static_cast<long long>(p.headsQ), static_cast<long long>(p.seqQ));
  std::string need = std::to_string(splits) + " splits need";
  if (attn_status s = checkWorkspace(api, workspace, workspaceBytes, w.bytes,
                                     need, "attn_decode_workspace_size"))
    return s;
  uint64_t address = reinterpret_cast<uint64_t>(workspace);

  plan.balanced = partial->balanced;
  plan.numSplits = splits;
  plan.chunk = plan.balanced ? balancedFullChunk(splits, p.batch, p.seqK)
                             : ceilDiv(p.seqK, splits);
  plan.workspaceBytes = w.bytes;
  const DecodePartials partials = {
      splits,
      p.batch,
      plan.balanced,
      address,
      address + static_cast<uint64_t>(w.partialLse),
      address + static_cast<uint64_t>(w.splitOffsets)};
  plan.partial.kernel = partial;
  if (attn_status s = planPartial(api, t, p, partials, plan.partial))
    return s;
  plan.combine.kernel = combine;
  return planCombine(api, t, p, partials, plan.combine);
}

bool backwardWorkspaceFor(int64_t batch, int64_t heads, int64_t seq,
                          int64_t headDim, BackwardWorkspace &layout) {
  int64_t rows = 0, accumulator = 0, accumulatorEnd = 0, turns = 0;
  return queryRows(batch, heads, seq, rows) &&
         mul(rows, kRowStatsFields * 4, layout.records) &&
         alignUp(layout.records, kWorkspaceAlignment, layout.accumulator) &&
         mul(rows, headDim, accumulator) && mul(accumulator, 4, accumulator) &&
         add(layout.accumulator, accumulator, accumulatorEnd) &&
         alignUp(accumulatorEnd, kWorkspaceAlignment, layout.turns) &&
         mul(rows, 4, turns) && add(layout.turns, turns, layout.bytes) &&
         layout.bytes <= kMaxWorkspaceBytes;
}

int64_t backwardWorkspaceBytes(const attn_tensor *q) {
  const char *api = "attn_backward_workspace_size";
  if (checkTensor(api, "q", q, 4, "B, Hq, Sq, D"))
    return -1;
  int64_t bytes = 0;
  if (!backwardBytesFor(q->shape[0], q->shape[1], q->shape[2], bytes)) {
    failf(ATTN_ERROR_SHAPE, "%s: %s need more than 2^50 bytes", api,
          backwardRowStats(q->shape[0], q->shape[1], q->shape[2]).c_str());
    return -1;
  }
  return bytes;
}

int64_t backwardAccumulatorWorkspaceBytes(const attn_tensor *q) {
  const char *api = "attn_backward_atomic_workspace_size";
  if (checkTensor(api, "q", q, 4, "B, Hq, Sq, D"))
    return -1;
  BackwardWorkspace layout;
  if (!backwardWorkspaceFor(q->shape[0], q->shape[1], q->shape[2], q->shape[3],
                            layout)) {
    failf(ATTN_ERROR_SHAPE, "%s: %s need more than 2^50 bytes", api,
          backwardAccumulatorContents(q->shape[0], q->shape[1], q->shape[2],
                                      q->shape[3])
              .c_str());
    return -1;
  }
  return layout.bytes;
}

attn_status planBackward(const ManifestSection &section,
                         const BackwardTensors &t, const attn_options *options,
                         const void *workspace, int64_t workspaceBytes,
                         BackwardPlan &plan) {
  const char *api = "attn_backward";
  Problem p;
  if (attn_status s = checkInputs(api, t.q, t.k, t.v, options, p))
    return s;
  if (attn_status s = checkBackwardTensors(api, t, p))
    return s;
  const attn_tensor *mask = options ? options->mask : nullptr;
  if (attn_status s = checkMask(api, mask, p))
    return s;
  const attn_block_mask *blockMask = options ? options->block_mask : nullptr;
  if (attn_status s = checkBlockMask(api, blockMask, /*backward=*/true, p))
    return s;
  const KernelSpec *kernels[3] = {};
  bool wantAtomic = options && options->atomic_dq != 0;
  if (attn_status s =
          findBackwardKernels(api, section, p, wantAtomic, kernels, plan.dq))
    return s;
  // The three are of one modification, which reads one list of tensors in
  // a section (the manifest's check).
  if (attn_status s = checkModOperands(api, *kernels[0], p))
    return s;
  plan.dot.kernel = kernels[0];
  plan.keyValue.kernel = kernels[1];
  plan.query.kernel = kernels[2];
  // dot and query work on query tiles, key_value on key tiles, each CTA
  // of key_value summing dK and dV over every query head of its group;
  // key_value and query a CTA per column block too (value_blocks).
  if (attn_status s =
          setGrid(api, plan.dot, ceilDiv(p.seqQ, kernels[0]->blockQ), p.headsQ,
                  p.batch))
    return s;
  if (attn_status s = setGrid(
          api, plan.keyValue,
          valueBlockTiles(ceilDiv(p.seqK, kernels[1]->blockKv), *kernels[1]),
          p.headsKv, p.batch))
    return s;
  if (attn_status s = setGrid(
          api, plan.query,
          valueBlockTiles(ceilDiv(p.seqQ, kernels[2]->blockQ), *kernels[2]),
          p.headsQ, p.batch))
    return s;

  // The recompute kernels use the records alone
  // (attn_backward_workspace_size); the accumulating kernels need the whole
  // layout (attn_backward_atomic_workspace_size): a smaller workspace is an
  // error, not a reason to take the recompute kernels instead.
  std::string need;
  const char *sizeFunction = "attn_backward_workspace_size";
  BackwardWorkspace layout;
  bool fits = false;
  if (plan.dq == DqMode::Recompute) {
    need = backwardRowStats(p.batch, p.headsQ, p.seqQ) + " need";
    fits = backwardBytesFor(p.batch, p.headsQ, p.seqQ, layout.bytes);
  } else {
    need = std::string("the dq=") + dqModeName(plan.dq) +
           " kernels' workspace of " +
           backwardAccumulatorContents(p.batch, p.headsQ, p.seqQ, p.headDim) +
           " needs";
    fits = backwardWorkspaceFor(p.batch, p.headsQ, p.seqQ, p.headDim, layout);
    sizeFunction = "attn_backward_atomic_workspace_size";
  }
  if (!fits)
    return failf(ATTN_ERROR_SHAPE, "%s: %s more than 2^50 bytes of workspace",
                 api, need.c_str());
  if (attn_status s = checkWorkspace(api, workspace, workspaceBytes,
                                     layout.bytes, need, sizeFunction))
    return s;
  plan.workspaceBytes = layout.bytes;
  uint64_t address = reinterpret_cast<uint64_t>(workspace);
  attn_tensor rowStats =
      workspaceTensor(address, {p.batch, p.headsQ, p.seqQ, kRowStatsFields});
  attn_tensor dqAccum =
      workspaceTensor(address + static_cast<uint64_t>(layout.accumulator),
                      {p.batch, p.headsQ, p.seqQ, p.headDim});
  std::vector<uint64_t> shared =
      backwardArgs(t, mask, blockMask, rowStats, plan.dq,
                   address + static_cast<uint64_t>(layout.accumulator),
                   address + static_cast<uint64_t>(layout.turns), p);
  // Each kernel with `tma` (backward_kv, backward_q) takes the maps of the
  // tiles it copies after the shared words; backward_dot never has any.
  for (Launch *l : {&plan.dot, &plan.keyValue, &plan.query}) {
    l->args = shared;
    if (attn_status s = pushTensorMaps(
            api, *l, {t.q, t.k, t.v, t.dout, &rowStats, &dqAccum}))
      return s;
    pushModOperands(l->args, p);
  }
  return ATTN_OK;
}

} // namespace attn::runtime
