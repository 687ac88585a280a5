//===- Plan.h - argument checks and launch plans ----------------*- C++ -*-===//
//
// Turns one attn_forward / attn_decode call into the launches it needs (the
// kernel, grid, block, dynamic shared memory and the parameter words of
// docs/KernelABI.md), after checking every argument. Nothing here touches
// CUDA: a plan is pure data, so the tests check arguments and parameter
// packing without a GPU, and the C API only launches what a plan says.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_PLAN_H
#define ATTN_LIB_RUNTIME_PLAN_H

#include "Manifest.h"

#include <cstdint>
#include <vector>

namespace attn::runtime {

/// The alignment of the decode workspace and of its two parts.
constexpr int64_t kWorkspaceAlignment = 256;

/// The bytes of data pointers and row strides must be a multiple of this.
constexpr int64_t kDataAlignment = 16;

/// One kernel launch. `args` holds one 8-byte word per kernel parameter, in
/// ABI order; an f32 parameter sits in the low 4 bytes of its word, which is
/// what cuLaunchKernel reads through a pointer to the word (little endian).
struct Launch {
  const KernelSpec *kernel = nullptr;
  unsigned grid[3] = {1, 1, 1};
  unsigned block = 0;
  unsigned smem = 0;
  std::vector<uint64_t> args;
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
};

struct DecodePlan {
  Launch partial, combine;
  int64_t numSplits = 0;      // after clamping to the key tiles
  int64_t chunk = 0;          // keys per split
  int64_t workspaceBytes = 0; // what the plan uses
};

/// The parameter sizes in bytes, in order, that the ABI gives `kind` (with
/// the mask descriptor after lse for a forward kernel with a mask).
ATTN_RUNTIME_API std::vector<size_t>
abiParamSizes(KernelKind kind, MaskKind mask = MaskKind::None);

/// Checks a forward call (options->mask included) and plans its launch.
ATTN_RUNTIME_API attn_status planForward(
    const Manifest &manifest, const attn_tensor *q, const attn_tensor *k,
    const attn_tensor *v, const attn_tensor *o, const attn_tensor *lse,
    const attn_options *options, Launch &launch);

/// Checks a decode call and plans its two launches. `numSplits` <= 0 uses
/// defaultSplits(); more splits than key tiles are clamped to the tiles.
ATTN_RUNTIME_API attn_status planDecode(
    const Manifest &manifest, int smCount, const attn_tensor *q,
    const attn_tensor *k, const attn_tensor *v, const attn_tensor *o,
    const attn_tensor *lse, const attn_options *options, int64_t numSplits,
    const void *workspace, int64_t workspaceBytes, DecodePlan &plan);

/// The split count for B * Hkv CTAs per split on `smCount` SMs: the count
/// with the fewest (CTAs on the busiest SM) x (tiles per split + 2), at most
/// one split per key tile, 1 when B * Hkv alone fills the GPU.
ATTN_RUNTIME_API int64_t defaultSplits(int smCount, int64_t batch,
                                       int64_t headsKv, int64_t seqK,
                                       int64_t blockKv);

/// attn_decode_splits() for a module with `smCount` SMs: the split count a
/// decode call with these inputs uses, or the error it would fail with.
ATTN_RUNTIME_API attn_status resolveSplits(const Manifest &manifest,
                                           int smCount, const attn_tensor *q,
                                           const attn_tensor *k,
                                           const attn_tensor *v,
                                           const attn_options *options,
                                           int64_t numSplits, int64_t &splits);

/// The workspace bytes of `numSplits` splits; -1 (with the last error set)
/// on bad arguments.
ATTN_RUNTIME_API int64_t decodeWorkspaceBytes(const attn_tensor *q,
                                              const attn_tensor *v,
                                              int64_t numSplits);

} // namespace attn::runtime

#endif // ATTN_LIB_RUNTIME_PLAN_H
