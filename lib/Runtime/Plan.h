//===- Plan.h - argument checks and launch plans ----------------*- C++ -*-===//
//
// Turns one attn_forward / attn_forward_varlen / attn_decode /
// attn_decode_paged / attn_backward call into the launches it needs (the
// kernel, grid, block, dynamic shared memory, the parameter words of
// docs/KernelABI.md and the tensor maps to encode), after checking every
// argument. Nothing here touches CUDA: a plan is pure data, so the tests check
// arguments and parameter packing without a GPU, and the C API only encodes and
// launches what a plan says.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_PLAN_H
#define ATTN_LIB_RUNTIME_PLAN_H

#include "Manifest.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn::runtime {

/// The alignment of the decode and backward workspaces and of decode's
/// parts.
constexpr int64_t kWorkspaceAlignment = 256;

/// The largest workspace the runtime plans (2^50 bytes, far past any
/// device's memory); beyond it attn_decode, attn_backward and their
/// workspace sizes fail with ATTN_ERROR_SHAPE.
constexpr int64_t kMaxWorkspaceBytes = int64_t(1) << 50;

/// The bytes of data pointers and row strides must be a multiple of this.
constexpr int64_t kDataAlignment = 16;

/// The bytes of a CUtensorMap parameter.
constexpr size_t kTensorMapBytes = 128;

/// The tensor-map strides, in bytes, must be below this (TMA's limit).
constexpr uint64_t kMaxTensorMapStride = uint64_t(1) << 40;

/// A tensor-map dim may have at most this many elements (TMA's limit).
constexpr uint64_t kMaxTensorMapDim = uint64_t(1) << 32;

/// A CUtensorMap parameter, as cuTensorMapEncodeTiled takes it: the memref
/// parameter `tensor` seen innermost dim first, its strides in bytes (the
/// innermost stride, 1 element, is implied). The plan checks it against
/// TMA's limits; the launch encodes it (Runtime.cpp), interleave none, L2
/// promotion 128B, out-of-bounds elements read as zero.
struct TensorMapArg {
  size_t param = 0;            // the kernel parameter it fills
  const char *tensor = "";     // "q", "k", "v", "dout", "row_stats"
  attn_dtype dtype = ATTN_F32; // the tensor's: f32 for row_stats
  uint64_t address = 0;
  uint64_t dims[4] = {};    // [D, S, H, B]; row_stats: [4, Sq, Hq, B]
  uint64_t strides[3] = {}; // bytes: [S, H, B]
  uint32_t box[4] = {};     // [cols, rows, 1, 1]
  int64_t swizzle = 0;      // bytes: 0 (none), 32, 64 or 128
};

/// One kernel launch. `args` holds one 8-byte word per kernel parameter, in
/// ABI order; an f32 parameter sits in the low 4 bytes of its word, which is
/// what cuLaunchKernel reads through a pointer to the word (little endian).
/// A tensor map parameter's word is 0: `tensorMaps` says what to encode for
/// it, and the launch passes the 128-byte CUtensorMap in its place.
struct Launch {
  const KernelSpec *kernel = nullptr;
  unsigned grid[3] = {1, 1, 1};
  unsigned block = 0;
  unsigned smem = 0;
  std::vector<uint64_t> args;
  std::vector<TensorMapArg> tensorMaps;
};

/// The sizes one call works on, after its arguments passed every check.
struct Problem {
  int64_t batch = 0, headsQ = 0, headsKv = 0, seqQ = 0, seqK = 0;
  int64_t headDim = 0, valueDim = 0;
  attn_dtype dtype = ATTN_F32;
  attn_causal causal = ATTN_CAUSAL_NONE;
  int64_t window = -1; // < 0: none
  MaskKind mask = MaskKind::None; // from options->mask's dtype (forward)
  float scaleLog2 = 0; // scale * log2(e)
  // A paged cache (attn_decode_paged, attn_forward_varlen): keys per page
  // (the pools' size 2) and pages per sequence (block_table's size 1);
  // seqK is their product, the most keys a sequence can have, since the
  // lengths stay on the device.
  bool paged = false;
  int64_t pageSize = 0, maxPages = 0;
  // attn_forward_varlen: a packed batch of `sequences` sequences, whose
  // rows q, o and lse hold back to back (batch = 1, seqQ = T), with packed
  // keys (seqK = Tk) or a paged cache.
  bool packedQueries = false, packedKeys = false;
  int64_t sequences = 0;
  // options->mod: the modification whose kernels serve the call ("": none).
  std::string mod;
  // options->mod_operands: the tensors the modification reads (none
  // without it), which the chosen kernels' mod_operands must describe.
  const attn_tensor *modOperands = nullptr;
  int64_t numModOperands = 0;
  // options->block_mask: the block sizes whose kernels serve the call (0:
  // none), and the query and key blocks, ceil(Sq / blockMaskQ) and
  // ceil(Sk / blockMaskK), that its lists number.
  int64_t blockMaskQ = 0, blockMaskK = 0;
  int64_t queryBlocks = 0, keyBlocks = 0;
  // options->allow_tf32: f32=tf32 kernels may serve the call (and are
  // preferred); else only the 3xTF32 ones.
  bool allowTf32 = false;
};

/// The tensors of a forward call: attn_forward's q, k, v, o and lse (null:
/// not written), or attn_forward_varlen's, whose packed batch adds
/// queryOffsets [B + 1] and either keyOffsets [B + 1] (packed keys) or
/// kvLens [B] and blockTable [B, max_pages] (a paged cache: k and v are
/// then page pools [P, Hkv, page_size, D]).
struct ForwardTensors {
  const attn_tensor *q = nullptr, *k = nullptr, *v = nullptr;
  const attn_tensor *queryOffsets = nullptr, *keyOffsets = nullptr;
  const attn_tensor *kvLens = nullptr, *blockTable = nullptr;
  const attn_tensor *o = nullptr, *lse = nullptr;
};

/// The tensors of a decode call, as the C API takes them: attn_decode's
/// (blockTable and kvLens null), or attn_decode_paged's (`paged`), whose k
/// and v are the page pools k_cache and v_cache [P, Hkv, page_size, D] that
/// blockTable [B, max_pages] maps onto the sequences, kvLens [B] their
/// lengths. Resolving the split count needs neither o nor lse.
struct DecodeTensors {
  const attn_tensor *q = nullptr, *k = nullptr, *v = nullptr;
  const attn_tensor *blockTable = nullptr, *kvLens = nullptr;
  const attn_tensor *o = nullptr, *lse = nullptr;
  bool paged = false;
};

/// A decode call's two launches. With the balanced kernels (`balanced`,
/// manifest splits=balanced; attn_decode_paged only) the partial kernel
/// takes N x B work items of one chunk of keys each, which it computes
/// from kv_lens on the device and lists in split_offsets (i32 [B + 1], at
/// the end of the workspace: decodeWorkspaceBytes()) for the combine.
struct DecodePlan {
  Launch partial, combine;
  bool balanced = false;
  int64_t numSplits = 0; // after clamping to the key tiles
  // Keys per split; paged: of a full sequence; balanced: per work item of a
  // batch whose sequences are all full (the kernel's from the lengths).
  int64_t chunk = 0;
  int64_t workspaceBytes = 0; // attn_decode_workspace_size's
};

/// The tensors of an attn_backward call, as the C API takes them.
struct BackwardTensors {
  const attn_tensor *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr,
                    *dout = nullptr, *lse = nullptr;
  const attn_tensor *dq = nullptr, *dk = nullptr, *dv = nullptr;
};

/// The backward's launches, in the order they run on the stream:
/// backward_dot writes a 16-byte record per query row into the workspace
/// ({LSE log2(e), D = rowsum(dO * O), 0, 0}), then backward_kv (dK, dV) and
/// backward_q (dQ) read them. All three take the same arguments up to
/// window; then a backward_kv or backward_q kernel with `tma` takes its
/// tensor maps (backward_kv: q, k, v, dout and row_stats over the
/// workspace's records; backward_q: q, k, v, dout), and each the mod
/// operands. With kernels that accumulate dQ (`dq`, manifest dq=atomic or
/// dq=ordered) the workspace also holds the f32 dQ accumulator
/// [B, Hq, Sq, D] after the records (BackwardWorkspace): backward_dot
/// zeroes it, backward_kv adds to it, backward_q converts it into dq; the
/// ordered ones also the i32 turns [B, Hq, Sq] after it, which backward_dot
/// zeroes and backward_kv's CTAs take turns by.
struct BackwardPlan {
  Launch dot, keyValue, query;
  DqMode dq = DqMode::Recompute; // the three kernels' dQ mode
  int64_t workspaceBytes = 0;    // what the plan uses: B * Hq * Sq * 16, or
                                 // BackwardWorkspace::bytes
};

/// Where the backward's workspace holds what, in bytes from its start: the
/// row statistics records f32 [B, Hq, Sq, 4] at 0, then for the
/// accumulating dQ modes the accumulator f32 [B, Hq, Sq, D] at
/// `accumulator` = round_up(B * Hq * Sq * 16, 256) and the turns i32
/// [B, Hq, Sq] at `turns` = round_up(accumulator + B * Hq * Sq * D * 4,
/// 256), `bytes` = turns + B * Hq * Sq * 4 in all (one layout for both
/// modes, so one size serves either); `records` = B * Hq * Sq * 16 is all
/// that the recompute mode uses.
struct BackwardWorkspace {
  int64_t records = 0, accumulator = 0, turns = 0, bytes = 0;
};

/// The backward's workspace layout for B = `batch`, Hq = `heads`, Sq =
/// `seq`, D = `headDim`; false when any of it would exceed 2^50 bytes.
ATTN_RUNTIME_API bool backwardWorkspaceFor(int64_t batch, int64_t heads,
                                           int64_t seq, int64_t headDim,
                                           BackwardWorkspace &layout);

/// The parameter sizes in bytes, in order, that the ABI gives `kernel`: 8
/// for each word of a memref descriptor (3 + 2 * rank) and for i64, 4 for
/// f32, 128 for a tensor map.
ATTN_RUNTIME_API std::vector<size_t> abiParamSizes(const KernelSpec &kernel);

/// Checks a forward call (options->mask and options->block_mask included)
/// and plans its launch with a kernel of `section`, the manifest section
/// that the module loaded, on a GPU of `smCount` SMs (a persistent
/// kernel's grid).
ATTN_RUNTIME_API attn_status planForward(
    const ManifestSection &section, int smCount, const attn_tensor *q,
    const attn_tensor *k, const attn_tensor *v, const attn_tensor *o,
    const attn_tensor *lse, const attn_options *options, Launch &launch);

/// Checks an attn_forward_varlen call (no mask, no block mask) and plans
/// its launch with a packed kernel of `section` (q=packed, kv=packed or
/// kv=paged as the call's keys): grid (ceil(rows / block_q), Hq, B) for
/// rows = `maxSeqlenQ`, or T when that is <= 0 or more than T (no sequence
/// has more rows).
ATTN_RUNTIME_API attn_status planForwardVarlen(const ManifestSection &section,
                                               const ForwardTensors &tensors,
                                               int64_t maxSeqlenQ,
                                               const attn_options *options,
                                               Launch &launch);

/// Checks a decode call, paged or not, and plans its two launches.
/// `numSplits` <= 0 uses defaultSplits() (paged: pagedDefaultSplits(), or
/// balancedDefaultSplits() for the balanced kernels); more splits than key
/// tiles are clamped to the tiles. A paged call counts the keys of its
/// capacity, max_pages * page_size, and takes the section's balanced pair
/// of kernels (splits=balanced) when it has a partial one for the call,
/// else the per-sequence ones.
ATTN_RUNTIME_API attn_status planDecode(
    const ManifestSection &section, int smCount, const DecodeTensors &tensors,
    const attn_options *options, int64_t numSplits, const void *workspace,
    int64_t workspaceBytes, DecodePlan &plan);

/// Checks a backward call (options->mask and options->block_mask included)
/// and plans its three launches with kernels of `section`, the row
/// statistics (and the accumulating dQ modes' accumulator and turns) in
/// `workspace`, and the tensor maps of those with `tma` (checked against
/// TMA's limits). The kernels are the section's dq=atomic set for the call
/// when options->atomic_dq is set and the section has all three, else its
/// dq=ordered set when it has all three, else its recompute set; never a
/// mix.
ATTN_RUNTIME_API attn_status planBackward(const ManifestSection &section,
                                          const BackwardTensors &tensors,
                                          const attn_options *options,
                                          const void *workspace,
                                          int64_t workspaceBytes,
                                          BackwardPlan &plan);

/// The backward's workspace bytes for `q`: the recompute kernels' (the row
/// statistics alone), for attn_backward_workspace_size; -1 (with the last
/// error set) on bad arguments.
ATTN_RUNTIME_API int64_t backwardWorkspaceBytes(const attn_tensor *q);
/// Those of the modes that accumulate dQ (dq=atomic and dq=ordered:
/// BackwardWorkspace::bytes), for attn_backward_atomic_workspace_size.
ATTN_RUNTIME_API int64_t backwardAccumulatorWorkspaceBytes(const attn_tensor *q);

/// The split count for B * Hkv CTAs per split on `smCount` SMs: the count
/// with the fewest (CTAs on the busiest SM) x (tiles per split + 2), at most
/// one split per key tile, 1 when B * Hkv alone fills the GPU.
ATTN_RUNTIME_API int64_t defaultSplits(int smCount, int64_t batch,
                                       int64_t headsKv, int64_t seqK,
                                       int64_t blockKv);

/// The split count of a paged decode call (lengths on the device, unknown
/// here; `seqK` the capacity): the count with the least modelled time,
/// (CTAs x (half the capacity's tiles / splits + 2)) / SMs for the work of
/// a batch whose sequences fill half their capacity on average, plus half
/// a full sequence's split (tiles / splits + 2) for the tail that ragged
/// lengths leave; at most one split per key tile. One sequence (B = 1)
/// takes defaultSplits().
ATTN_RUNTIME_API int64_t pagedDefaultSplits(int smCount, int64_t batch,
                                            int64_t headsKv, int64_t seqK,
                                            int64_t blockKv);

/// The split count of a paged decode call on the balanced kernels, whose
/// N x B work items cut the batch's keys into chunks of one size
/// (`headsKv`: the partial kernel's CTAs per item; `seqK` the capacity):
/// 4 (chunks of about a third of the mean length, the fastest measured),
/// or enough for 1.5 CTAs per SM where B x headsKv is small, at most one
/// per key tile of the capacity.
ATTN_RUNTIME_API int64_t balancedDefaultSplits(int smCount, int64_t batch,
                                               int64_t headsKv, int64_t seqK,
                                               int64_t blockKv);

/// attn_decode_splits() (attn_decode_paged_splits() for a paged call) for
/// a module with `smCount` SMs: the split count a decode call with these
/// inputs uses, or the error it would fail with.
ATTN_RUNTIME_API attn_status resolveSplits(const ManifestSection &section,
                                           int smCount,
                                           const DecodeTensors &tensors,
                                           const attn_options *options,
                                           int64_t numSplits, int64_t &splits);

/// The workspace bytes of `numSplits` splits, for either kind of decode
/// kernel: f32 partial_o (N x B x Hq x Sq x Dv), aligned up to
/// kWorkspaceAlignment, f32 partial_lse (N x B x Hq x Sq), aligned up, then
/// the balanced kernels' i32 split_offsets (B + 1); -1 (with the last error
/// set) on bad arguments.
ATTN_RUNTIME_API int64_t decodeWorkspaceBytes(const attn_tensor *q,
                                              const attn_tensor *v,
                                              int64_t numSplits);

} // namespace attn::runtime

#endif // ATTN_LIB_RUNTIME_PLAN_H
