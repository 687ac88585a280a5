//===- ModRegions.h - score and mask modifications --------------*- C++ -*-===//
//
// The `score_mod` and `mask_mod` regions of the attention ops: their
// verification, and the two ways a lowering emits them where it computes
// scores (the region itself, and the derivative of a score modification
// with respect to its score, for the backward).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_MODREGIONS_H
#define ATTN_DIALECT_ATTN_IR_MODREGIONS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Region.h"

#include <string>

namespace mlir {
namespace attn {

/// The index arguments (b, h, i, j) every modification takes first; a
/// score modification then takes the score, and both then the tensors of
/// `mod_operands`.
constexpr unsigned kModIndexArgs = 4;

/// Verifies the `score_mod` and `mask_mod` regions of `op` against its
/// `modOperands`, and its `modName`; with `needDerivative`
/// (attention_grad) the score modification must also have a derivative
/// rule for every op that depends on the score.
LogicalResult verifyModRegions(Operation *op, Region &scoreMod, Region &maskMod,
                               ValueRange modOperands, StringAttr modName,
                               bool needDerivative);

/// The name of `op`'s modifications for its GPU kernels: its `mod_name`,
/// else "h" and 16 hex digits of a hash of the regions' generic form; ""
/// without modifications. The same regions always hash the same.
std::string getModName(Operation *op);

/// The hash of `op`'s modification regions (16 hex digits), "" without.
std::string getModHash(Operation *op);

/// Reads element `indices` of mod operand `operand`: what a
/// `tensor.extract` of it in a region becomes.
using ModOperandReader =
    function_ref<Value(OpBuilder &, Location, unsigned operand, ValueRange)>;

/// Emits the ops of `region` at the builder's insertion point with its
/// scalar arguments (b, h, i, j and, for a score modification, the score)
/// bound to `args` and its tensor arguments read through `read`; returns
/// the value it yields.
Value emitModRegion(OpBuilder &b, Region &region, ValueRange args,
                    ModOperandReader read);

/// Emits d score_mod(b, h, i, j, s) / ds at `args` (as emitModRegion)
/// by forward-mode differentiation of the region's ops.
Value emitScoreModDerivative(OpBuilder &b, Region &region, ValueRange args,
                             ModOperandReader read);

/// The first op of a score modification that depends on the score but has
/// no derivative rule (emitScoreModDerivative cannot go through it), or
/// null.
Operation *findUndifferentiableOp(Region &scoreMod);

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_IR_MODREGIONS_H
