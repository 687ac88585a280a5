//===- AttnTileOps.cpp - the tile form's ops and their verifiers ----------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/AffineMap.h"
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
  auto yield = dyn_cast<TileYieldOp>(block.getTerminator());
  if (!yield)
    return op->emitOpError("region must end with attn.tile.yield");
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
  if (tile.getRank() != 2)
    return emitOpError("tile must have rank 2, got ") << tile.getRank();
  if (source.getElementType() != tile.getElementType())
    return emitOpError("source and tile must have one element type, got ")
           << source.getElementType() << " and " << tile.getElementType();
  int64_t row = source.getShape().back();
  if (ShapedType::isDynamic(row) || row > tile.getDimSize(1))
    return emitOpError("tile rows hold ")
           << tile.getDimSize(1) << " elements but the source's rows hold "
           << (ShapedType::isDynamic(row) ? std::string("a dynamic count")
                                          : std::to_string(row))
           << "; a tile row holds a whole static source row";
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
  if (!acc.getElementType().isF32() || acc.getRank() < 2 || acc.getRank() > 3)
    return emitOpError("acc and result must be one f32 tile of rank 2 (or 3, "
                       "batched over key slices)");
  bool batched = acc.getRank() == 3;
  if (!lhs.hasRank() || !lhs.hasStaticShape() ||
      (lhs.getRank() != 2 && !(batched && lhs.getRank() == 3)))
    return emitOpError("lhs must be a static tile of rank 2")
           << (batched ? " or 3" : "");
  if (rhs.getRank() != acc.getRank())
    return emitOpError("rhs must have acc's rank ") << acc.getRank();
  if (lhs.getElementType() != rhs.getElementType())
    return emitOpError("lhs and rhs must have one element type, got ")
           << lhs.getElementType() << " and " << rhs.getElementType();
  if (getTransposeLhs() && (!isa<MemRefType>(lhs) || lhs.getRank() != 2))
    return emitOpError("transpose_lhs needs a rank-2 memory tile lhs");
  int64_t l = lhs.getRank(), r = rhs.getRank();
  bool tl = getTransposeLhs();
  int64_t m = lhs.getDimSize(tl ? l - 1 : l - 2),
          k = lhs.getDimSize(tl ? l - 2 : l - 1);
  int64_t rk = rhs.getDimSize(getTransposeRhs() ? r - 1 : r - 2);
  int64_t n = rhs.getDimSize(getTransposeRhs() ? r - 2 : r - 1);
  if (rk != k)
    return emitOpError("lhs")
           << (tl ? "^T" : "") << " has " << k << " columns but rhs"
           << (getTransposeRhs() ? "^T" : "") << " has " << rk << " rows";
  SmallVector<int64_t> expected = {m, n};
  if (batched) {
    int64_t slices = rhs.getDimSize(0);
    if (l == 3 && lhs.getDimSize(0) != slices)
      return emitOpError("lhs has ") << lhs.getDimSize(0)
                                     << " slices but rhs has " << slices;
    expected.insert(expected.begin(), slices);
  }
  if (acc.getShape() != ArrayRef<int64_t>(expected)) {
    InFlightDiagnostic diag = emitOpError("acc must be [");
    llvm::interleaveComma(expected, diag);
    diag << "], got " << acc;
    return diag;
  }
  return success();
}

AffineMap TileMapOp::getInputMap(unsigned i) {
  if (std::optional<ArrayAttr> maps = getIndexingMaps())
    return cast<AffineMapAttr>((*maps)[i]).getValue();
  unsigned rank = getResult().getType().getRank();
  unsigned inputRank = cast<RankedTensorType>(getInputs()[i].getType()).getRank();
  // A rank-0 input: no results (getMajorSubMap(0) is the null map).
  if (inputRank == 0)
    return AffineMap::get(rank, 0, getContext());
  return AffineMap::getMultiDimIdentityMap(rank, getContext())
      .getMajorSubMap(inputRank);
}

LogicalResult TileMapOp::verify() {
  RankedTensorType result = getResult().getType();
  int64_t rank = result.getRank();
  if (rank < 1 || rank > 3)
    return emitOpError("result must be a tile of rank 1 to 3");
  if (std::optional<ArrayAttr> maps = getIndexingMaps())
    if (maps->size() != getInputs().size())
      return emitOpError("has ") << maps->size() << " indexing maps for "
                                 << getInputs().size() << " inputs";
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getRank() > rank)
      return emitOpError("input ") << i << " has a higher rank than the result";
    AffineMap map = getInputMap(i);
    if (map.getNumDims() != rank || map.getNumResults() != type.getRank() ||
        !map.isProjectedPermutation())
      return emitOpError("indexing map of input ")
             << i << " must be a projected permutation from the " << rank
             << " result dimensions to the input's " << type.getRank();
    for (auto [d, expr] : llvm::enumerate(map.getResults()))
      if (type.getDimSize(d) !=
          result.getDimSize(cast<AffineDimExpr>(expr).getPosition()))
        return emitOpError("input ")
               << i << " of type " << type
               << " does not match the result's dimensions through its map";
  }
  Block &body = getBody().front();
  size_t indices = rank;
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
  auto yield = dyn_cast<TileYieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("region must end with attn.tile.yield");
  if (yield.getValues().size() != 1 ||
      yield.getValues()[0].getType() != result.getElementType())
    return emitOpError("region must yield one ")
           << result.getElementType() << " element";
  return success();
}

LogicalResult TileReduceOp::verify() {
  RankedTensorType input = getInput().getType();
  RankedTensorType init = getInit().getType();
  int64_t dim = getReducedDim();
  if (input.getRank() < 2 || input.getRank() > 3 || dim < 0 ||
      dim >= input.getRank())
    return emitOpError("reduces dimension ")
           << dim << " of a tile of rank 2 or 3, got " << input;
  SmallVector<int64_t> expected(input.getShape());
  expected.erase(expected.begin() + dim);
  if (init.getShape() != ArrayRef<int64_t>(expected) ||
      init.getElementType() != input.getElementType())
    return emitOpError("reduces dimension ")
           << dim << " of " << input
           << " into its init and result of that shape without it and the "
              "same element type, got "
           << init;
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
  if (getAccumulate() && !tile.getElementType().isF32())
    return emitOpError("accumulate adds f32 tiles only, got ")
           << tile.getElementType();
  if (getTranspose() && tile.getRank() != 2)
    return emitOpError("transpose writes the columns of a rank-2 tile, got "
                       "rank ")
           << tile.getRank();
  if (tile.getRank() == 2) {
    int64_t row = dest.getRank() ? dest.getShape().back() : 0;
    int64_t held = tile.getDimSize(getTranspose() ? 0 : 1);
    if (dest.getRank() < 1 || ShapedType::isDynamic(row) || row > held)
      return emitOpError("tile ")
             << (getTranspose() ? "columns" : "rows") << " hold " << held
             << " elements; dest's last dimension must be static and at "
                "most that";
    return verifyRowRegion(*this, getIndices(), dest.getRank() - 1,
                           "every dest dimension but the last");
  }
  return verifyRowRegion(*this, getIndices(), dest.getRank(),
                         "every dest dimension");
}

/// A turn op's indices address one element of its counters.
static LogicalResult verifyTurnIndices(Operation *op, Value turns,
                                       ValueRange indices) {
  int64_t rank = cast<MemRefType>(turns.getType()).getRank();
  if (static_cast<int64_t>(indices.size()) != rank)
    return op->emitOpError("takes one index per dimension of turns (")
           << rank << "), got " << indices.size();
  return success();
}

LogicalResult TileAwaitTurnOp::verify() {
  return verifyTurnIndices(*this, getTurns(), getIndices());
}

LogicalResult TilePassTurnOp::verify() {
  return verifyTurnIndices(*this, getTurns(), getIndices());
}

LogicalResult TileParamOp::verify() {
  if (getName() != "scale_log2" && getName() != "window")
    return emitOpError("names a kernel parameter that is not a tile-form "
                       "scalar: '")
           << getName() << "' (scale_log2, window)";
  return success();
}

LogicalResult TileWorkItemOp::verify() {
  Block &block = getLength().front();
  if (block.getNumArguments() != 1 || !block.getArgument(0).getType().isIndex())
    return emitOpError("region must take one index argument (the sequence), "
                       "got ")
           << block.getNumArguments() << " arguments";
  auto yield = dyn_cast<TileYieldOp>(block.getTerminator());
  if (!yield || yield.getValues().size() != 1 ||
      !yield.getValues()[0].getType().isIndex())
    return emitOpError("region must yield one index (the sequence's key "
                       "count)");
  return success();
}
