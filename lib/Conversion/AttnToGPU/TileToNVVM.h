//===- TileToNVVM.h - the tile form on warps and tensor cores ---*- C++ -*-===//
//
// The GPU lowering of attn-tile's tile form (docs/TileToGPU.md): one
// kernel's loop nest onto a CTA's threads; cp.async copies, and ldmatrix and
// mma.sync (sm_80) or wgmma (sm_90a) products.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_TILETONVVM_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_TILETONVVM_H

#include "attn/Conversion/AttnToGPU/KernelSpec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir {
namespace attn {

/// Writes the body of `kernel` from the tile form in `source`, a function
/// with the same arguments: the kernel parameters `params`, in order. The
/// body of `source` is one `scf.forall` carrying an `#attn.schedule` and a
/// `#gpu.block` mapping, with the loads, products, maps, reductions and
/// stores of attn-tile inside; its iterations become the CTAs of the grid.
/// Returns the bytes of dynamic shared memory the kernel uses, or an error
/// on the op it cannot map. `target` picks the tensor-core mapping: sm_80's
/// warps (mma.sync, ldmatrix) or sm_90a's warpgroups (wgmma); `producer`
/// adds a producer warpgroup that issues the copies (TMA kernels only);
/// `persistent` (with a producer) makes each CTA walk the scf.forall's
/// tiles grid-stride over a one-dimensional grid. Products of f32 tiles
/// run on TF32 parts: three per step (3xTF32), or one with `tf32`.
FailureOr<int64_t> lowerTileFormToNVVM(func::FuncOp source,
                                       gpu::GPUFuncOp kernel,
                                       ArrayRef<KernelParam> params,
                                       TileTarget target, bool producer,
                                       bool persistent, bool tf32);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_TILETONVVM_H
