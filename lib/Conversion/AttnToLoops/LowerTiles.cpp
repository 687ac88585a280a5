//===- LowerTiles.cpp - the tile form on the CPU ---------------------------===//
//
// The CPU lowering of attn-tile's tile ops: register tiles stay tensors and
// their ops become linalg.generics on tensors (one-shot-bufferize turns
// them into buffers later); row loads and stores become loops over the
// rows with the row region inlined. Nothing here knows about attention.
//
//===----------------------------------------------------------------------===//

#include "TileCommon.h"

#include "attn/Dialect/Attn/IR/SplitWork.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNLOWERTILESPASS
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::tile;

/// Clones the ops of a single-block region before the insertion point, its
/// arguments replaced by `args`; returns the values the region yields.
static SmallVector<Value> inlineRegion(OpBuilder &b, Region &region,
                                       ValueRange args) {
  Block &block = region.front();
  IRMapping map;
  map.map(block.getArguments(), args);
  for (Operation &op : block.without_terminator())
    b.clone(op, map);
  auto yield = cast<TileYieldOp>(block.getTerminator());
  return llvm::map_to_vector(yield.getValues(),
                             [&](Value v) { return map.lookupOrDefault(v); });
}

/// The rank-1 view `buffer[indices..., 0 : X]` of a row.
static Value rowView(OpBuilder &b, Location loc, Value buffer,
                     ValueRange indices) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(indices.begin(), indices.end());
  offsets.push_back(b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes(rank - 1, b.getIndexAttr(1));
  OpFoldResult last =
      type.isDynamicDim(rank - 1)
          ? OpFoldResult(
                memref::DimOp::create(b, loc, buffer, rank - 1).getResult())
          : OpFoldResult(b.getIndexAttr(type.getDimSize(rank - 1)));
  sizes.push_back(last);
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  auto resultType = cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
      {type.getDimSize(rank - 1)}, type, offsets, sizes, strides));
  return memref::SubViewOp::create(b, loc, resultType, buffer, offsets, sizes,
                                   strides);
}

/// Columns `[begin, end)` of a rank-1 row view (a tile row's data or its
/// padding, tile.load/tile.store).
static Value rowColumns(OpBuilder &b, Location loc, Value row, int64_t begin,
                        int64_t end) {
  auto type = cast<MemRefType>(row.getType());
  if (begin == 0 && end == type.getDimSize(0))
    return row;
  auto resultType = cast<MemRefType>(
      memref::SubViewOp::inferResultType(type, {begin}, {end - begin}, {1}));
  return memref::SubViewOp::create(
      b, loc, resultType, row, ArrayRef<int64_t>{begin},
      ArrayRef<int64_t>{end - begin}, ArrayRef<int64_t>{1});
}

/// The elements of a buffer row (the last dimension of a tile.load's source
/// or a tile.store's dest); static, as the verifiers require.
static int64_t rowLength(Value buffer) {
  return cast<MemRefType>(buffer.getType()).getShape().back();
}

static void lowerLoad(RewriterBase &rewriter, TileLoadOp op) {
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  IndexMath ix{b, loc};
  {
    OpBuilder::InsertionGuard guard(b);
    Value r = beginFor(b, loc, ix.c(0), op.getRows(), ix.c(1));
    SmallVector<Value> indices = inlineRegion(b, op.getIndices(), r);
    // A tile row longer than the source's is padding: zeros.
    int64_t length = rowLength(op.getSource());
    int64_t cols = op.getTile().getType().getDimSize(1);
    Value row = tileRow(b, loc, op.getTile(), r);
    linalg::CopyOp::create(b, loc,
                           ValueRange{rowView(b, loc, op.getSource(), indices)},
                           ValueRange{rowColumns(b, loc, row, 0, length)});
    if (length < cols)
      fill(b, loc, rowColumns(b, loc, row, length, cols), 0.0);
  }
  // Rows past `rows` are zero, so that full-tile arithmetic reads defined
  // values. A loop rather than a view of the tail: the tail is empty when
  // the rows fold to the tile's size.
  {
    OpBuilder::InsertionGuard guard(b);
    int64_t tileRows = op.getTile().getType().getDimSize(0);
    Value r = beginFor(b, loc, op.getRows(), ix.c(tileRows), ix.c(1));
    fill(b, loc, tileRow(b, loc, op.getTile(), r), 0.0);
  }
  rewriter.eraseOp(op);
}

static void lowerStore(RewriterBase &rewriter, TileStoreOp op) {
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  IndexMath ix{b, loc};
  Value tile = toReadOnlyBuffer(b, loc, op.getTile());
  Value r = beginFor(b, loc, ix.c(0), op.getRows(), ix.c(1));
  SmallVector<Value> indices = inlineRegion(b, op.getIndices(), r);
  if (op.getAccumulate() || op.getTranspose()) {
    // Element by element: other iterations may add to the same elements,
    // and a transposed tile's rows are the destination's columns.
    SmallVector<Value> at(indices);
    SmallVector<Value> from = {r};
    if (op.getTile().getType().getRank() == 2) {
      Value col =
          beginFor(b, loc, ix.c(0), ix.c(rowLength(op.getDest())), ix.c(1));
      at.push_back(col);
      from.push_back(col);
      if (op.getTranspose())
        std::swap(from[0], from[1]);
    }
    Value v = memref::LoadOp::create(b, loc, tile, from);
    if (op.getAccumulate())
      memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf, v,
                                  op.getDest(), at);
    else
      memref::StoreOp::create(b, loc, v, op.getDest(), at);
  } else if (op.getTile().getType().getRank() == 1) {
    Value v = memref::LoadOp::create(b, loc, tile, r);
    memref::StoreOp::create(b, loc, v, op.getDest(), indices);
  } else {
    // The tile's columns past dest's rows are padding: dropped.
    linalg::CopyOp::create(
        b, loc,
        ValueRange{rowColumns(b, loc, tileRow(b, loc, tile, r), 0,
                              rowLength(op.getDest()))},
        ValueRange{rowView(b, loc, op.getDest(), indices)});
  }
  rewriter.eraseOp(op);
}

/// A memory tile as a tensor, read in place.
static Value asTensor(OpBuilder &b, Location loc, Value tile) {
  auto type = dyn_cast<MemRefType>(tile.getType());
  if (!type)
    return tile;
  return bufferization::ToTensorOp::create(
      b, loc, RankedTensorType::get(type.getShape(), type.getElementType()),
      tile, /*restrict=*/true);
}

static void lowerMatmul(RewriterBase &rewriter, TileMatmulOp op) {
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  MLIRContext *ctx = b.getContext();
  // Loop dims (slice,) row, column, k; a rank-2 lhs is shared by every
  // slice.
  bool batched = op.getAcc().getType().getRank() == 3;
  unsigned numDims = batched ? 4 : 3;
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  unsigned s0 = batched ? 1 : 0;
  AffineExpr r = d(s0), c = d(s0 + 1), k = d(s0 + 2);
  auto map = [&](ArrayRef<AffineExpr> exprs, bool sliced) {
    SmallVector<AffineExpr> all;
    if (batched && sliced)
      all.push_back(d(0));
    llvm::append_range(all, exprs);
    return AffineMap::get(numDims, 0, all, ctx);
  };
  bool lhsSliced = cast<ShapedType>(op.getLhs().getType()).getRank() == 3;
  AffineMap rhsMap = op.getTransposeRhs() ? map({c, k}, true)
                                          : map({k, c}, true);
  SmallVector<utils::IteratorType> iterators(numDims - 1, par);
  iterators.push_back(red);
  auto generic = linalg::GenericOp::create(
      b, loc, op.getAcc().getType(),
      ValueRange{asTensor(b, loc, op.getLhs()), asTensor(b, loc, op.getRhs())},
      ValueRange{op.getAcc()},
      ArrayRef<AffineMap>{op.getTransposeLhs() ? map({k, r}, false)
                                               : map({r, k}, lhsSliced),
                          rhsMap, map({r, c}, true)},
      iterators, [](OpBuilder &b, Location loc, ValueRange a) {
        Value prod = arith::MulFOp::create(b, loc, toF32(b, loc, a[0]),
                                           toF32(b, loc, a[1]));
        linalg::YieldOp::create(b, loc,
                                Value(arith::AddFOp::create(b, loc, a[2], prod)));
      });
  rewriter.replaceOp(op, generic.getResults());
}

static void lowerMap(RewriterBase &rewriter, TileMapOp op) {
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  RankedTensorType type = op.getResult().getType();
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps;
  for (unsigned i = 0, e = op.getInputs().size(); i < e; ++i)
    maps.push_back(op.getInputMap(i));
  maps.push_back(b.getMultiDimIdentityMap(rank));
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                       type.getElementType());
  auto generic = linalg::GenericOp::create(
      b, loc, type, op.getInputs(), ValueRange{init}, maps,
      SmallVector<utils::IteratorType>(rank, par),
      [&](OpBuilder &b, Location loc, ValueRange a) {
        SmallVector<Value> args;
        for (int64_t d = 0; d < rank; ++d)
          args.push_back(linalg::IndexOp::create(b, loc, d));
        llvm::append_range(args, a.drop_back());
        linalg::YieldOp::create(b, loc, inlineRegion(b, op.getBody(), args));
      });
  rewriter.replaceOp(op, generic.getResults());
}

static void lowerReduce(RewriterBase &rewriter, TileReduceOp op) {
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  int64_t rank = op.getInput().getType().getRank();
  int64_t dim = op.getReducedDim();
  bool isMax = op.getKind() == TileReduceKind::Max;
  SmallVector<utils::IteratorType> iterators(rank, par);
  iterators[dim] = red;
  auto generic = linalg::GenericOp::create(
      b, loc, op.getInit().getType(), ValueRange{op.getInput()},
      ValueRange{op.getInit()},
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank),
                          b.getMultiDimIdentityMap(rank).dropResult(dim)},
      iterators,
      [&](OpBuilder &b, Location loc, ValueRange a) {
        Value v = isMax ? Value(arith::MaximumFOp::create(b, loc, a[1], a[0]))
                        : Value(arith::AddFOp::create(b, loc, a[1], a[0]));
        linalg::YieldOp::create(b, loc, v);
      });
  rewriter.replaceOp(op, generic.getResults());
}

/// On the CPU a launch parameter is the op's own value.
static void lowerParam(RewriterBase &rewriter, TileParamOp op) {
  rewriter.setInsertionPoint(op);
  rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, op.getValue());
}

/// The CPU runs the workgroups of a forall one after another in index
/// order (the pipeline's forall-to-for), which is every order a
/// `tile.await_turn` asks for: it waits for nothing, and `tile.pass_turn`
/// is a plain store.
static void lowerPassTurn(RewriterBase &rewriter, TilePassTurnOp op) {
  rewriter.setInsertionPoint(op);
  Value value = arith::IndexCastOp::create(
      rewriter, op.getLoc(), rewriter.getI32Type(), op.getValue());
  rewriter.replaceOpWithNewOp<memref::StoreOp>(op, value, op.getTurns(),
                                               op.getIndices());
}

/// On the CPU a work item is found as SplitWork.h defines it: scalar loops
/// over the sequences, the region inlined for each.
static void lowerWorkItem(RewriterBase &rewriter, TileWorkItemOp op) {
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  auto length = [&](OpBuilder &b, Location, Value s) {
    return inlineRegion(b, op.getLength(), s)[0];
  };
  Value chunk = balancedChunk(rewriter, loc, op.getItems(), op.getBatch(),
                              op.getCapacity(), length);
  WorkItem item =
      findWorkItem(rewriter, loc, op.getItem(), chunk, op.getBatch(), length);
  rewriter.replaceOp(op, {item.batch, item.begin, item.end});
}

namespace {
struct AttnLowerTilesPass
    : public attn::impl::AttnLowerTilesPassBase<AttnLowerTilesPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    // Post-order: a map nested in another op's region is lowered first.
    getOperation()->walk([&](Operation *op) {
      if (isa<TileLoadOp, TileStoreOp, TileMatmulOp, TileMapOp, TileReduceOp,
              TileParamOp, TileWorkItemOp, TileAwaitTurnOp, TilePassTurnOp>(
              op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops)
      llvm::TypeSwitch<Operation *>(op)
          .Case([&](TileLoadOp op) { lowerLoad(rewriter, op); })
          .Case([&](TileStoreOp op) { lowerStore(rewriter, op); })
          .Case([&](TileMatmulOp op) { lowerMatmul(rewriter, op); })
          .Case([&](TileMapOp op) { lowerMap(rewriter, op); })
          .Case([&](TileReduceOp op) { lowerReduce(rewriter, op); })
          .Case([&](TileParamOp op) { lowerParam(rewriter, op); })
          .Case([&](TileWorkItemOp op) { lowerWorkItem(rewriter, op); })
          .Case([&](TileAwaitTurnOp op) { rewriter.eraseOp(op); })
          .Case([&](TilePassTurnOp op) { lowerPassTurn(rewriter, op); });
  }
};
} // namespace
