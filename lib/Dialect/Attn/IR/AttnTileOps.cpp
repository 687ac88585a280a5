//===- AttnTileOps.cpp - the tile form's ops and their verifiers ----------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::attn;

/// Checks that a row-addressing region (tile.load, tile.store) takes one
/// index and yields `count` indices.
static LogicalResult verifyRowRegion(Operation *op, Region &region,
                                     int64_t count, StringRef what) {
  Block &block = region.front();
  if (block.getNumArguments() != 1 || !block.getArgument(0).getType().isIndex())
    return op->emitOpError("region must take one index argument (the tile "
                           "row), got ")
           << block.getNumArguments() << " arguments";
  auto yield = cast<TileYieldOp>(block.getTerminator());
  if (static_cast<int64_t>(yield.getValues().size()) != count ||
      !llvm::all_of(yield.getValues().getTypes(),
                    [](Type t) { return t.isIndex(); }))
    return op->emitOpError("region must yield ")
           << count << " indices (" << what << "), got "
           << yield.getValues().size() << " values";
  return success();
}

LogicalResult TileLoadOp::verify() {
  auto source = cast<MemRefType>(getSource().getType());
  MemRefType tile = getTile().getType();
  if (source.getRank() < 1)
    return emitOpError("source must have rank >= 1");
  if (source.getElementType() != tile.getElementType())
    return emitOpError("source and tile must have one element type, got ")
           << source.getElementType() << " and " << tile.getElementType();
  int64_t row = source.getShape().back();
  if (!ShapedType::isDynamic(row) && row != tile.getDimSize(1))
    return emitOpError("tile rows hold ")
           << tile.getDimSize(1) << " elements but the source's rows hold "
           << row;
  return verifyRowRegion(*this, getIndices(), source.getRank() - 1,
                         "every source dimension but the last");
}

void TileMatmulOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  for (OpOperand &operand : getOperation()->getOpOperands())
    if (isa<MemRefType>(operand.get().getType()))
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
}

LogicalResult TileMatmulOp::verify() {
  auto lhs = cast<ShapedType>(getLhs().getType());
  MemRefType rhs = getRhs().getType();
  RankedTensorType acc = getAcc().getType();
  if (!lhs.hasRank() || lhs.getRank() != 2 || !lhs.hasStaticShape())
    return emitOpError("lhs must be a static rank-2 tile");
  if (!acc.getElementType().isF32() || acc.getRank() != 2 ||
      getResult().getType() != acc)
    return emitOpError("acc and result must be one f32 tile of rank 2");
  if (lhs.getElementType() != rhs.getElementType())
    return emitOpError("lhs and rhs must have one element type, got ")
           << lhs.getElementType() << " and " << rhs.getElementType();
  int64_t m = lhs.getDimSize(0), k = lhs.getDimSize(1);
  int64_t rk = getTransposeRhs() ? rhs.getDimSize(1) : rhs.getDimSize(0);
  int64_t n = getTransposeRhs() ? rhs.getDimSize(0) : rhs.getDimSize(1);
  if (rk != k)
    return emitOpError("lhs has ")
           << k << " columns but rhs" << (getTransposeRhs() ? "^T" : "")
           << " has " << rk << " rows";
  if (acc.getDimSize(0) != m || acc.getDimSize(1) != n)
    return emitOpError("acc must be [") << m << ", " << n << "], got ["
                                        << acc.getDimSize(0) << ", "
                                        << acc.getDimSize(1) << "]";
  return success();
}

LogicalResult TileMapOp::verify() {
  RankedTensorType result = getResult().getType();
  if (result.getRank() < 1 || result.getRank() > 2)
    return emitOpError("result must be a tile of rank 1 or 2");
  int64_t rows = result.getDimSize(0);
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    bool same = type.getShape() == result.getShape();
    bool rowTile = type.getRank() == 1 && type.getDimSize(0) == rows;
    if (!same && !rowTile)
      return emitOpError("input ")
             << i << " must have the result's shape or be a row tile [" << rows
             << "], got " << type;
  }
  Block &body = getBody().front();
  size_t indices = result.getRank();
  if (body.getNumArguments() != indices + getInputs().size())
    return emitOpError("region must take ")
           << indices << " indices and one element per input, got "
           << body.getNumArguments() << " arguments";
  for (size_t i = 0; i < indices; ++i)
    if (!body.getArgument(i).getType().isIndex())
      return emitOpError("region argument ") << i << " must be an index";
  for (auto [i, input] : llvm::enumerate(getInputs()))
    if (body.getArgument(indices + i).getType() !=
        getElementTypeOrSelf(input.getType()))
      return emitOpError("region argument ")
             << indices + i << " must have input " << i << "'s element type";
  auto yield = cast<TileYieldOp>(body.getTerminator());
  if (yield.getValues().size() != 1 ||
      yield.getValues()[0].getType() != result.getElementType())
    return emitOpError("region must yield one ")
           << result.getElementType() << " element";
  return success();
}

LogicalResult TileReduceOp::verify() {
  RankedTensorType input = getInput().getType();
  RankedTensorType init = getInit().getType();
  if (input.getRank() != 2 || init.getRank() != 1 ||
      init.getDimSize(0) != input.getDimSize(0) ||
      init.getElementType() != input.getElementType() ||
      getResult().getType() != init)
    return emitOpError("reduces a [R, C] tile into its init and result of "
                       "shape [R] and the same element type, got ")
           << input << " and " << init;
  return success();
}

LogicalResult TileStoreOp::verify() {
  RankedTensorType tile = getTile().getType();
  auto dest = cast<MemRefType>(getDest().getType());
  if (tile.getRank() < 1 || tile.getRank() > 2)
    return emitOpError("tile must have rank 1 or 2");
  if (tile.getElementType() != dest.getElementType())
    return emitOpError("tile and dest must have one element type, got ")
           << tile.getElementType() << " and " << dest.getElementType();
  if (tile.getRank() == 2) {
    int64_t row = dest.getRank() ? dest.getShape().back() : 0;
    if (dest.getRank() < 1 ||
        (!ShapedType::isDynamic(row) && row != tile.getDimSize(1)))
      return emitOpError("tile rows hold ")
             << tile.getDimSize(1)
             << " elements; dest's last dimension must match";
    return verifyRowRegion(*this, getIndices(), dest.getRank() - 1,
                           "every dest dimension but the last");
  }
  return verifyRowRegion(*this, getIndices(), dest.getRank(),
                         "every dest dimension");
}

LogicalResult TileParamOp::verify() {
  if (getName() != "scale_log2" && getName() != "window")
    return emitOpError("names a kernel parameter that is not a tile-form "
                       "scalar: '")
           << getName() << "' (scale_log2, window)";
  return success();
}
