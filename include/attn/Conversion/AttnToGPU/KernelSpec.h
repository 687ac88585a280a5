//===- KernelSpec.h - the GPU kernels attn emits ----------------*- C++ -*-===//
//
// What one generated kernel is specialised for, and the facts about it that
// the runtime's manifest records (docs/KernelABI.md).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOGPU_KERNELSPEC_H
#define ATTN_CONVERSION_ATTNTOGPU_KERNELSPEC_H

#include "attn/Conversion/AttnToLoops/AttnToLoops.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/Types.h"

#include <string>

namespace mlir {
class DictionaryAttr;
namespace gpu {
class GPUFuncOp;
} // namespace gpu
namespace attn {

/// The kernel kinds of attn_kernel_abi.def.
enum class KernelKind {
#define ATTN_KERNEL_KIND(ENUM, KIND, PREFIX) ENUM,
#include "attn-runtime/attn_kernel_abi.def"
};

/// Dynamic shared memory one CTA may have on sm_90 (227 KiB), the most of
/// any chip the kernels target (AttnToGPU.cpp's chipSharedMemory).
constexpr int64_t kMaxSharedMemory = 227 * 1024;

/// The widest head dims D and Dv of a kernel (MLA's D = 576; past 256 on
/// sm_80's mapping, in value blocks: AttnTileSizes::valueBlocks, the
/// backward's in column blocks of dK, dV and dQ), and of the atomic dQ
/// mode's backward kernels, whose dK/dV kernel adds all of dQ's columns.
constexpr int64_t kMaxKernelHeadDim = 576, kMaxAtomicBackwardHeadDim = 256;
/// The widest head dim that attn-compile --ordered-dq gives dq=ordered
/// kernels (AttnToGPU.cpp's specFor).
constexpr int64_t kMaxOrderedHeadDim = 128;

/// The kernel attribute listing the arguments that are CUDA tensor maps
/// passed by value (attn-grid-constants).
constexpr llvm::StringLiteral kGridConstantsAttr = "attn.grid_constants";

/// The most tensors a kernel's modifications may read (`mod_operands`), and
/// their largest rank: the runtime's attn_tensor has 4 dims.
constexpr int64_t kMaxModOperands = 16, kMaxModOperandRank = 4;
/// The f32 fields of a backward row record (`row_stats`, [B, Hq, Sq, 4]:
/// attn_kernel_abi.def).
constexpr int64_t kRowStatsFields = 4;
/// The f32 columns of a box of the `dq_accum` tensor map (dq=atomic and
/// dq=ordered):
/// one 128-byte swizzle row (docs/KernelABI.md).
constexpr int64_t kDqAccumBoxCols = 32;

/// A mask given as an operand (forward kernels only): none, added to the
/// scores, or boolean (keep where true).
enum class MaskOperand { None, Additive, Boolean };

/// How the backward computes dQ (KernelSpec::dq).
enum class DqMode { Recompute, Atomic, Ordered };

/// One kernel parameter (include/attn-runtime/attn_kernel_abi.def): `type`
/// is "memref" (of `rank`), "tmap" (a tensor map of the memref `rank`),
/// "f32" or "i64".
struct KernelParam {
  StringRef name, type;
  int64_t rank;
};

struct KernelSpec {
  KernelKind kind = KernelKind::Forward;
  /// f16 or bf16 (mma.sync m16n8k16, or wgmma), or f32 (sm_80's mapping
  /// on every chip: mma.sync m16n8k8 on TF32 parts, TileTf32.cpp).
  Type elementType;
  int64_t headDim = 0, valueDim = 0;
  CausalKind causal = CausalKind::None;
  MaskOperand mask = MaskOperand::None;
  /// The mapping: sm_80's (mma.sync, cp.async) or sm_90a's (forward and
  /// split-KV partial kernels on sm_90a: TMA into swizzled tiles; wgmma
  /// for the forward, whose rows fill warpgroups).
  TileTarget target = TileTarget::Sm80;
  // The schedule: attn-tile's #attn.schedule.
  /// Warps per CTA.
  int64_t warps = 4;
  /// Query rows per CTA (forward, decode partial, backward dot and dQ).
  /// Forward splits them between the warps; decode's warps share them (the
  /// query heads of one KV head) and split each K/V tile instead. The
  /// backward's dK/dV kernel splits its `blockKV` keys between the warps.
  int64_t blockQ = 0;
  /// Keys per K/V tile.
  int64_t blockKV = 64;
  /// Parts of each K/V tile with their own softmax state, one per warp
  /// (decode), merged at the end.
  int64_t keySlices = 1;
  /// Forward and decode partial: the value column blocks of the schedule
  /// (AttnTileSizes::valueBlocks), one CTA each (manifest `value_blocks`):
  /// past Dv = 256 O's accumulator holds one block's columns.
  int64_t valueBlocks = 1;
  /// Dynamic shared memory: the Q tile and the ring of K and V tiles, rows
  /// padded by 16 bytes so that ldmatrix reads no bank twice (sm_90a:
  /// swizzled, unpadded).
  int64_t sharedBytes = 0;
  /// What the chip the kernel is compiled for lets a CTA have (the
  /// schedule's budget for sharedBytes).
  int64_t sharedMemoryLimit = kMaxSharedMemory;

  /// K and V are page pools read through a block table, with per-sequence
  /// key counts (decode partial and forward; manifest `kv=paged`).
  bool paged = false;
  /// Split-KV work balanced across the batch (decode partial with a paged
  /// cache, and its combine; manifest `splits=balanced`): the partial
  /// results are N * B work items and the `split_offsets` parameter each
  /// sequence's first one (attn.attention_partial `balanced`).
  bool balanced = false;
  /// A packed batch (forward only): Q, O and LSE hold the sequences back to
  /// back (`q=packed`), and K and V too with `packedKeys` (`kv=packed`).
  bool packedQueries = false, packedKeys = false;
  /// The backward's dQ mode: recomputed by the dQ kernel (the default), or
  /// added by the dK/dV kernel to an f32 accumulator, which the dot kernel
  /// zeroes and the dQ kernel converts: in any order (manifest
  /// `dq=atomic`) or in a fixed one (`dq=ordered`, bitwise reproducible).
  DqMode dq = DqMode::Recompute;
  /// f32 operands: one TF32 product per step (manifest `f32=tf32`) instead
  /// of 3xTF32's three.
  bool tf32 = false;
  /// The block mask's query and key block sizes (manifest `blocks=BQxBK`:
  /// the kernel takes its lists, attn_kernel_abi.def); 0 without.
  int64_t blockMaskQ = 0, blockMaskK = 0;
  /// The op's score and mask modifications (manifest `mod=` and
  /// `mod_hash=`, getModName and getModHash); empty without.
  std::string modName, modHash;
  /// The element type and rank of each tensor the modifications read (the
  /// op's `mod_operands`; manifest `mod_operands=`): the kernel takes one
  /// memref parameter per tensor, `mod0`, `mod1`..., after every parameter
  /// attn_kernel_abi.def gives it.
  SmallVector<std::pair<Type, int64_t>> modOperands;
  /// sm_90a: a producer warpgroup issues the copies (the schedule's).
  bool producer = false;
  /// A persistent grid (the schedule's): the runtime launches one CTA per
  /// SM, at most one per tile, and each walks the tiles grid-stride
  /// (manifest `grid=persistent`, docs/KernelABI.md).
  bool persistent = false;

  /// One of the backward's three kernels (one per loop nest of
  /// attn.attention_grad's tile form; the same parameters).
  bool isBackward() const {
    return kind == KernelKind::BackwardDot ||
           kind == KernelKind::BackwardKeyValue ||
           kind == KernelKind::BackwardQuery;
  }
  /// The warps of the schedule and the producer warpgroup.
  int64_t threads() const { return warps * 32 + (producer ? 128 : 0); }
  /// Whether the kernel copies its tiles by TMA (the sm_90a forward,
  /// partial, dK/dV and deterministic dQ kernels; the atomic mode's dQ
  /// kernel converts its accumulator, without tiles): it then takes the
  /// tensor maps attn_kernel_abi.def gives its kind.
  bool usesTma() const {
    return target == TileTarget::Sm90a && !paged &&
           (kind == KernelKind::Forward || kind == KernelKind::DecodePartial ||
            kind == KernelKind::BackwardKeyValue ||
            (kind == KernelKind::BackwardQuery && !accumulatesDq()));
  }
  /// Whether the backward adds dQ to an accumulator (dq_accum).
  bool accumulatesDq() const { return dq != DqMode::Recompute; }
  /// Query rows per CTA; the combine kernel's output rows per CTA.
  int64_t rows() const { return blockQ; }
  std::string name() const;
  /// The manifest's `kind=`: "forward", "decode_partial", "backward_kv"...
  StringRef kindName() const;
  /// The kernel's parameters, in order, from attn_kernel_abi.def.
  SmallVector<KernelParam> params() const;
  /// The manifest line `kernel NAME key=value...`.
  std::string manifestLine() const;

  /// Why this spec cannot be emitted, or "" if it can.
  /// Whether the rows of Q, K (D) and of V, O (Dv) are whole 16-byte
  /// chunks: copied by cp.async or TMA and stored in pairs. Other rows are
  /// copied and stored element by element, on sm_80's mapping.
  bool wholeChunkRows() const {
    int64_t bytes = elementType ? elementType.getIntOrFloatBitWidth() / 8 : 0;
    return headDim * bytes % 16 == 0 && valueDim * bytes % 16 == 0;
  }
  std::string unsupportedReason() const;
  /// The part of unsupportedReason that the schedule does not change:
  /// element type, head dims, rows on the chip's mapping.
  std::string operandsReason() const;
  /// The part that checks the schedule (warps, tiles) against the mapping.
  std::string scheduleReason() const;
};

/// An empty gpu.func (entry block, no terminator) with the signature
/// attn_kernel_abi.def gives `spec`; memref parameters carry the head dims
/// as static innermost sizes, a boolean mask is `i1`.
gpu::GPUFuncOp createKernelFunc(OpBuilder &b, Location loc,
                                const KernelSpec &spec);

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_ATTNTOGPU_KERNELSPEC_H
