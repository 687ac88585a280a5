//===- RaiseEmit.cpp - attn-raise's emitter
//---------------------------------===//
//
// Emits attn.attention for a checked chain: the reshapes, transposes and
// casts that turn each leaf's view into the op's operand order and the op's
// result into the chain's output, then erases the chain.
//
//===----------------------------------------------------------------------===//

#include "Raise.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

namespace {
/// Emits the reshapes, transposes and casts around attn.attention. Without a
/// builder it only checks that they can be emitted, so that a chain is
/// declined before the IR changes.
class Emitter {
public:
  Emitter(OpBuilder *b, Location loc, const Space &space)
      : b(b), loc(loc), space(space) {}

  /// A value, or only its type when checking.
  struct Val {
    Value value;
    RankedTensorType type;
  };

  Val expand(Val v, ArrayRef<int64_t> shape,
             ArrayRef<ReassociationIndices> groups) {
    auto type = RankedTensorType::get(shape, v.type.getElementType());
    if (!b)
      return {Value(), type};
    return {tensor::ExpandShapeOp::create(*b, loc, type, v.value, groups),
            type};
  }
  Val collapse(Val v, ArrayRef<int64_t> shape,
               ArrayRef<ReassociationIndices> groups) {
    auto type = RankedTensorType::get(shape, v.type.getElementType());
    if (!b)
      return {Value(), type};
    return {tensor::CollapseShapeOp::create(*b, loc, type, v.value, groups),
            type};
  }
  Val transpose(Val v, ArrayRef<int64_t> perm) {
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(v.type.getDimSize(p));
    auto type = RankedTensorType::get(shape, v.type.getElementType());
    if (!b)
      return {Value(), type};
    Value init = tensor::EmptyOp::create(*b, loc, shape, type.getElementType());
    return {
        linalg::TransposeOp::create(*b, loc, v.value, init, perm)->getResult(0),
        type};
  }
  /// An elementwise linalg.generic applying `fn`.
  Val map(Val v, Type elem,
          function_ref<Value(OpBuilder &, Location, Value)> fn) {
    auto type = RankedTensorType::get(v.type.getShape(), elem);
    if (!b)
      return {Value(), type};
    Value init = tensor::EmptyOp::create(*b, loc, type.getShape(), elem);
    AffineMap id = b->getMultiDimIdentityMap(type.getRank());
    SmallVector<utils::IteratorType> iters(type.getRank(),
                                           utils::IteratorType::parallel);
    Value r =
        linalg::GenericOp::create(
            *b, loc, type, v.value, init, ArrayRef<AffineMap>{id, id}, iters,
            [&](OpBuilder &nb, Location nloc, ValueRange args) {
              linalg::YieldOp::create(nb, nloc, fn(nb, nloc, args[0]));
            })
            .getResult(0);
    return {r, type};
  }

  /// Reads a leaf as a tensor whose dims are `order` (logical dims, -1 for
  /// a unit dim); a dim the leaf does not depend on becomes a unit dim.
  FailureOr<Val> read(Val v, const View &view, ArrayRef<int> order);

  /// Turns `v`, whose dims are `order`, into a tensor of `type` whose dims
  /// hold `view`.
  FailureOr<Val> write(Val v, ArrayRef<int> order, const View &view,
                       RankedTensorType type);

private:
  OpBuilder *b;
  Location loc;
  const Space &space;
};
} // namespace

/// Whether `c` merges its logical dims row-major; returns its extent.
static std::optional<int64_t> rowMajorExtent(const Coord &c,
                                             const Space &space) {
  int64_t stride = 1;
  for (int64_t t = c.size() - 1; t >= 0; --t) {
    if (c[t].stride != stride)
      return std::nullopt;
    stride *= space.size(c[t].dim);
  }
  return stride;
}

/// Groups consecutive dims so that each group holds exactly one dim for
/// which `keep` is true (the others being unit dims).
static SmallVector<ReassociationIndices> unitGroups(ArrayRef<bool> keep) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (auto [d, k] : llvm::enumerate(keep)) {
    pending.push_back(d);
    if (!k)
      continue;
    groups.push_back(pending);
    pending.clear();
  }
  if (!pending.empty() && !groups.empty())
    groups.back().append(pending.begin(), pending.end());
  return groups;
}

FailureOr<Emitter::Val> Emitter::read(Val v, const View &view,
                                      ArrayRef<int> order) {
  // Split merged dims.
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> shape;
  SmallVector<int> dims; // logical dim per expanded dim, -1 for a unit
  for (auto [d, coord] : llvm::enumerate(view)) {
    ReassociationIndices group;
    if (coord.empty()) {
      if (v.type.getDimSize(d) != 1)
        return failure();
      group.push_back(shape.size());
      shape.push_back(1);
      dims.push_back(-1);
    } else {
      std::optional<int64_t> extent = rowMajorExtent(coord, space);
      if (!extent || *extent != v.type.getDimSize(d))
        return failure();
      for (const Term &t : coord) {
        group.push_back(shape.size());
        shape.push_back(space.size(t.dim));
        dims.push_back(t.dim);
      }
    }
    groups.push_back(group);
  }
  // Already in order (with unit dims where the order has dims the leaf does
  // not depend on)?
  SmallVector<int> direct;
  for (int d : order)
    direct.push_back(d >= 0 && llvm::is_contained(dims, d) ? d : -1);
  if (direct == dims) {
    if (dims.size() != view.size())
      v = expand(v, shape, groups);
    return v;
  }
  if (dims.size() != view.size())
    v = expand(v, shape, groups);

  // Drop unit dims.
  SmallVector<bool> keep;
  SmallVector<int> present;
  SmallVector<int64_t> presentShape;
  for (auto [d, dim] : llvm::enumerate(dims)) {
    keep.push_back(dim >= 0);
    if (dim < 0)
      continue;
    if (llvm::is_contained(present, dim) || !llvm::is_contained(order, dim))
      return failure();
    present.push_back(dim);
    presentShape.push_back(shape[d]);
  }
  if (present.empty())
    return failure();
  if (present.size() != dims.size())
    v = collapse(v, presentShape, unitGroups(keep));

  // Transpose into the order's order.
  SmallVector<int> wanted;
  for (int d : order)
    if (d >= 0 && llvm::is_contained(present, d))
      wanted.push_back(d);
  if (wanted != present) {
    SmallVector<int64_t> perm;
    for (int d : wanted)
      perm.push_back(llvm::find(present, d) - present.begin());
    v = transpose(v, perm);
  }

  // Insert unit dims.
  if (wanted.size() == order.size())
    return v;
  SmallVector<bool> has;
  SmallVector<int64_t> outShape;
  for (int d : order) {
    has.push_back(d >= 0 && llvm::is_contained(wanted, d));
    outShape.push_back(has.back() ? space.size(d) : 1);
  }
  return expand(v, outShape, unitGroups(has));
}

FailureOr<Emitter::Val> Emitter::write(Val v, ArrayRef<int> order,
                                       const View &view,
                                       RankedTensorType type) {
  // Drop unit dims.
  SmallVector<int> dims;
  SmallVector<bool> keep;
  SmallVector<int64_t> shape;
  for (int d : order) {
    keep.push_back(d >= 0);
    if (d < 0)
      continue;
    dims.push_back(d);
    shape.push_back(space.size(d));
  }
  if (dims.size() != order.size())
    v = collapse(v, shape, unitGroups(keep));

  // The target's dims, flattened, must be a permutation of `dims`.
  SmallVector<int> flat;
  for (auto [d, c] : llvm::enumerate(view)) {
    if (c.empty()) {
      if (type.getDimSize(d) != 1)
        return failure();
      continue;
    }
    std::optional<int64_t> extent = rowMajorExtent(c, space);
    if (!extent || *extent != type.getDimSize(d))
      return failure();
    for (const Term &t : c)
      flat.push_back(t.dim);
  }
  SmallVector<int> x = flat, y = dims;
  llvm::sort(x);
  llvm::sort(y);
  if (x != y)
    return failure();
  if (flat != dims) {
    SmallVector<int64_t> perm;
    for (int d : flat)
      perm.push_back(llvm::find(dims, d) - dims.begin());
    v = transpose(v, perm);
  }

  // Merge runs, then insert unit dims.
  SmallVector<ReassociationIndices> merge;
  SmallVector<int64_t> mergedShape;
  SmallVector<bool> nonUnit;
  int64_t pos = 0;
  for (auto [d, c] : llvm::enumerate(view)) {
    nonUnit.push_back(!c.empty());
    if (c.empty())
      continue;
    ReassociationIndices group;
    for (size_t t = 0; t < c.size(); ++t)
      group.push_back(pos++);
    merge.push_back(group);
    mergedShape.push_back(type.getDimSize(d));
  }
  if (merge.size() != flat.size())
    v = collapse(v, mergedShape, merge);
  if (mergedShape.size() != view.size())
    v = expand(v, type.getShape(), unitGroups(nonUnit));
  return v;
}

/// The shape of `type` with the dims of each group merged.
static SmallVector<int64_t> mergedShape(RankedTensorType type,
                                        ArrayRef<ReassociationIndices> groups) {
  SmallVector<int64_t> shape;
  for (const ReassociationIndices &group : groups) {
    int64_t n = 1;
    for (int64_t d : group)
      n *= type.getDimSize(d);
    shape.push_back(n);
  }
  return shape;
}

/// The batch dims that attn.attention's head dim merges, major first: all
/// but the first when there are two or more (grouped-query attention splits
/// the query heads into key/value heads and the queries of each).
static ArrayRef<unsigned> headDims(const Space &space) {
  ArrayRef<unsigned> batch = space.batch;
  return batch.size() <= 1 ? batch : batch.drop_front();
}

/// The operand orders of attn.attention, [B, H..., S, X] or [B, S, H..., X]
/// in logical dims, H... being headDims(space); -1 for the unit dims of a
/// problem with fewer batch dims.
static SmallVector<int> operandOrder(const Space &space, unsigned seq,
                                     unsigned last, Layout layout) {
  ArrayRef<unsigned> heads = headDims(space);
  SmallVector<int> order;
  order.push_back(space.batch.size() >= 2 ? space.batch.front() : -1);
  if (layout == Layout::BSHD)
    order.push_back(seq);
  if (heads.empty())
    order.push_back(-1);
  order.append(heads.begin(), heads.end());
  if (layout == Layout::BHSD)
    order.push_back(seq);
  order.push_back(last);
  return order;
}

/// The reassociation that merges the head dims of `order` into one.
static SmallVector<ReassociationIndices> headGroups(const Space &space,
                                                    ArrayRef<int> order) {
  ArrayRef<unsigned> heads = headDims(space);
  SmallVector<ReassociationIndices> groups;
  for (auto [d, dim] : llvm::enumerate(order)) {
    bool head = dim >= 0 && llvm::is_contained(heads, dim);
    if (head && !groups.empty() && dim != static_cast<int>(heads.front()))
      groups.back().push_back(d);
    else
      groups.push_back({static_cast<int64_t>(d)});
  }
  return groups;
}

/// The logical dims a view holds, in storage order.
static SmallVector<int> storedDims(const View &view) {
  SmallVector<int> dims;
  for (const Coord &c : view)
    for (const Term &t : c)
      dims.push_back(t.dim);
  return dims;
}

/// Whether the dims of `view` come in `order` already.
static bool storedInOrder(const View &view, ArrayRef<int> order) {
  SmallVector<int> dims = storedDims(view);
  SmallVector<int> filtered;
  for (int d : order)
    if (d >= 0 && llvm::is_contained(dims, d))
      filtered.push_back(d);
  return filtered == dims;
}

namespace {
/// The tensors the modifications of `chain` read (their tensor leaves), in
/// order of first use, each once: the op's mod_operands.
static SmallVector<Value> modOperands(const Chain &chain) {
  llvm::SetVector<Value> operands;
  auto collect = [&](const Expr *e) {
    walkExpr(e, [&](const Expr *x) {
      if (x->kind == ExprKind::Tensor)
        operands.insert(x->value);
      return true;
    });
  };
  if (chain.scoreMod)
    collect(chain.scoreMod);
  for (const Expr *k : chain.keeps)
    collect(k);
  return operands.takeVector();
}

/// Emits the expressions of a chain's modifications as the scalar ops of a
/// `score_mod` or `mask_mod` region: the logical dims' indices from the
/// region's (b, h, i, j), the scaled score from s, a tensor leaf by
/// tensor.extract from the block argument of its mod operand (`operands`,
/// after the scalar arguments). regionProblem() has checked that they hold
/// nothing else (no reductions, no tensor read along a head dim).
class RegionEmitter {
public:
  RegionEmitter(OpBuilder &b, Location loc, const Space &space, Block &block,
                const Expr *scaled, ArrayRef<Value> operands)
      : b(b), loc(loc), space(space), block(block), scaled(scaled),
        operands(operands) {}

  Value emit(const Expr *e) {
    auto it = memo.find(e);
    if (it != memo.end())
      return it->second;
    Value v = emitUncached(e);
    memo[e] = v;
    return v;
  }

private:
  /// Integer `v` as integer or index type `t`.
  Value castInt(Value v, Type t) {
    Type from = v.getType();
    if (from == t)
      return v;
    if (isa<IndexType>(from) || isa<IndexType>(t))
      return arith::IndexCastOp::create(b, loc, t, v);
    if (from.getIntOrFloatBitWidth() < t.getIntOrFloatBitWidth())
      return arith::ExtSIOp::create(b, loc, t, v);
    return arith::TruncIOp::create(b, loc, t, v);
  }
  /// The index of logical dim `d`: i, j, or a batch dim from b and h (the
  /// heads merge the batch dims after the first row-major; with one batch
  /// dim it is the head).
  Value index(unsigned d) {
    if (d == space.query)
      return block.getArgument(2);
    if (d == space.key)
      return block.getArgument(3);
    ArrayRef<unsigned> batch = space.batch;
    if (batch.size() >= 2 && d == batch.front())
      return block.getArgument(0);
    ArrayRef<unsigned> heads = batch.size() <= 1 ? batch : batch.drop_front();
    int64_t inner = 1;
    for (unsigned h : llvm::reverse(heads)) {
      if (h == d)
        break;
      inner *= space.size(h);
    }
    Value h = block.getArgument(1);
    if (inner != 1)
      h = arith::DivUIOp::create(b, loc, h,
                                 arith::ConstantIndexOp::create(b, loc, inner));
    if (heads.front() != d)
      h = arith::RemUIOp::create(
          b, loc, h, arith::ConstantIndexOp::create(b, loc, space.size(d)));
    return h;
  }

  /// `e`'s op OpTy on its two arguments, integers cast to its type first.
  template <typename OpTy> Value binary(const Expr *e) {
    Value x = emit(e->args[0]), y = emit(e->args[1]);
    if (!isa<FloatType>(e->type)) {
      x = castInt(x, e->type);
      y = castInt(y, e->type);
    }
    return OpTy::create(b, loc, x, y);
  }

  Value emitUncached(const Expr *e) {
    if (e == scaled || e->kind == ExprKind::Scores)
      return block.getArgument(4);
    Type t = e->type;
    auto arg = [&](unsigned n) { return emit(e->args[n]); };
    auto intArg = [&](unsigned n, Type to) { return castInt(arg(n), to); };
    switch (e->kind) {
    case ExprKind::ConstF:
      return arith::ConstantOp::create(b, loc, FloatAttr::get(t, e->f));
    case ExprKind::ConstI:
      return arith::ConstantOp::create(
          b, loc,
          isa<IndexType>(t) ? b.getIndexAttr(e->i)
                            : cast<TypedAttr>(b.getIntegerAttr(t, e->i)));
    case ExprKind::Index:
      return castInt(index(e->dim), t);
    case ExprKind::Tensor: {
      // Each dim's coordinate, a sum of logical indices times strides.
      SmallVector<Value> indices;
      for (const Coord &c : e->view) {
        Value at;
        for (const Term &term : c) {
          Value x = index(term.dim);
          if (term.stride != 1)
            x = arith::MulIOp::create(
                b, loc, x, arith::ConstantIndexOp::create(b, loc, term.stride));
          at = at ? arith::AddIOp::create(b, loc, at, x).getResult() : x;
        }
        indices.push_back(at ? at : arith::ConstantIndexOp::create(b, loc, 0));
      }
      unsigned first = block.getNumArguments() - operands.size();
      Value tensor = block.getArgument(
          first + (llvm::find(operands, e->value) - operands.begin()));
      return tensor::ExtractOp::create(b, loc, tensor, indices);
    }
    case ExprKind::ExtF:
      // From a tensor's narrower floats; f32 to f32 otherwise.
      if (arg(0).getType() != t)
        return arith::ExtFOp::create(b, loc, t, arg(0));
      return arg(0);
    case ExprKind::TruncF:
      return arg(0); // f32 to f32: regionProblem() allows no other float.
    case ExprKind::Exp:
      return math::ExpOp::create(b, loc, arg(0));
    case ExprKind::Exp2:
      return math::Exp2Op::create(b, loc, arg(0));
    case ExprKind::Log:
      return math::LogOp::create(b, loc, arg(0));
    case ExprKind::Tanh:
      return math::TanhOp::create(b, loc, arg(0));
    case ExprKind::Neg:
      return arith::NegFOp::create(b, loc, arg(0));
    case ExprKind::AddF:
      return binary<arith::AddFOp>(e);
    case ExprKind::SubF:
      return binary<arith::SubFOp>(e);
    case ExprKind::MulF:
      return binary<arith::MulFOp>(e);
    case ExprKind::DivF:
      return binary<arith::DivFOp>(e);
    case ExprKind::MaxF:
      return e->i == 1 ? binary<arith::MaxNumFOp>(e)
                       : binary<arith::MaximumFOp>(e);
    case ExprKind::AddI:
      return binary<arith::AddIOp>(e);
    case ExprKind::SubI:
      return binary<arith::SubIOp>(e);
    case ExprKind::MulI:
      return binary<arith::MulIOp>(e);
    case ExprKind::AndI:
      return binary<arith::AndIOp>(e);
    case ExprKind::OrI:
      return binary<arith::OrIOp>(e);
    case ExprKind::XOrI:
      return binary<arith::XOrIOp>(e);
    case ExprKind::IToF: {
      Value x = arg(0);
      if (isa<IndexType>(x.getType()))
        x = castInt(x, b.getI64Type());
      if (x.getType().isInteger(1))
        return arith::UIToFPOp::create(b, loc, t, x);
      return arith::SIToFPOp::create(b, loc, t, x);
    }
    case ExprKind::CmpI: {
      Value x = arg(0);
      return arith::CmpIOp::create(b, loc,
                                   static_cast<arith::CmpIPredicate>(e->i), x,
                                   intArg(1, x.getType()));
    }
    case ExprKind::CmpF:
      return arith::CmpFOp::create(
          b, loc, static_cast<arith::CmpFPredicate>(e->i), arg(0), arg(1));
    case ExprKind::Select: {
      Value x = arg(1), y = arg(2);
      if (!isa<FloatType>(t)) {
        x = castInt(x, t);
        y = castInt(y, t);
      }
      return arith::SelectOp::create(b, loc, arg(0), x, y);
    }
    default:
      llvm_unreachable("regionProblem() admits no other expression");
    }
  }

  OpBuilder &b;
  Location loc;
  const Space &space;
  Block &block;
  const Expr *scaled;
  ArrayRef<Value> operands;
  DenseMap<const Expr *, Value> memo;
};
} // namespace

/// Fills `op`'s score_mod and mask_mod regions from `chain`.
static void emitRegions(OpBuilder &b, Location loc, AttentionOp op,
                        const Chain &chain) {
  OpBuilder::InsertionGuard guard(b);
  Type index = b.getIndexType();
  SmallVector<Type> args(4, index);
  SmallVector<Value> operands(op.getModOperands());
  auto startRegion = [&](Region &region, bool score) -> Block & {
    SmallVector<Type> types = args;
    if (score)
      types.push_back(b.getF32Type());
    llvm::append_range(types, ValueRange(operands).getTypes());
    Block *block = b.createBlock(&region, {}, types,
                                 SmallVector<Location>(types.size(), loc));
    b.setInsertionPointToStart(block);
    return *block;
  };
  if (chain.scoreMod) {
    Block &block = startRegion(op.getScoreMod(), /*score=*/true);
    RegionEmitter emitter(b, loc, chain.space, block, chain.modScaled,
                          operands);
    Value y = emitter.emit(chain.scoreMod);
    if (chain.modFactor != 1.0)
      y = arith::MulFOp::create(
          b, loc, y,
          arith::ConstantOp::create(
              b, loc, b.getF32FloatAttr(static_cast<float>(chain.modFactor))));
    YieldOp::create(b, loc, y);
  }
  if (!chain.keeps.empty()) {
    Block &block = startRegion(op.getMaskMod(), /*score=*/false);
    RegionEmitter emitter(b, loc, chain.space, block, nullptr, operands);
    Value keep;
    for (const Expr *k : chain.keeps) {
      Value v = emitter.emit(k);
      keep = keep ? arith::AndIOp::create(b, loc, keep, v).getResult() : v;
    }
    YieldOp::create(b, loc, keep);
  }
}

/// Emits attn.attention for `chain` and returns the value that replaces the
/// chain's target; with a null builder only checks that it can.
FailureOr<Replacement> mlir::attn::raise::emitAttention(OpBuilder *b,
                                                        Location loc,
                                                        const Chain &chain,
                                                        std::string &reason) {
  const Space &space = chain.space;
  // The op's verifier bounds the head dims; a chain beyond them stays as it
  // is rather than becoming an op that fails to verify.
  if (space.size(space.headDim) > kMaxHeadDim ||
      space.size(space.valueDim) > kMaxHeadDim) {
    reason = "head dims D = " + std::to_string(space.size(space.headDim)) +
             " and Dv = " + std::to_string(space.size(space.valueDim)) +
             " exceed attn's limit of " + std::to_string(kMaxHeadDim);
    return failure();
  }
  Emitter emitter(b, loc, space);

  // bshd when every tensor is stored [B, S, H, X] and not also [B, H, S, X].
  auto storedAs = [&](Layout layout) {
    return storedInOrder(
               chain.query->view,
               operandOrder(space, space.query, space.headDim, layout)) &&
           storedInOrder(
               chain.key->view,
               operandOrder(space, space.key, space.headDim, layout)) &&
           storedInOrder(
               chain.value->view,
               operandOrder(space, space.key, space.valueDim, layout)) &&
           storedInOrder(
               chain.targetView,
               operandOrder(space, space.query, space.valueDim, layout));
  };
  Layout layout = space.batch.size() >= 2 && storedAs(Layout::BSHD) &&
                          !storedAs(Layout::BHSD)
                      ? Layout::BSHD
                      : Layout::BHSD;

  auto read = [&](const Expr *leaf, unsigned seq,
                  unsigned last) -> FailureOr<Emitter::Val> {
    Emitter::Val v{leaf->value, cast<RankedTensorType>(leaf->value.getType())};
    if (chain.elementType != leaf->type)
      v = emitter.map(v, chain.elementType,
                      [&](OpBuilder &nb, Location l, Value x) -> Value {
                        return arith::ExtFOp::create(nb, l, chain.elementType,
                                                     x);
                      });
    SmallVector<int> order = operandOrder(space, seq, last, layout);
    FailureOr<Emitter::Val> r = emitter.read(v, leaf->view, order);
    if (failed(r) || headDims(space).size() < 2)
      return r;
    return emitter.collapse(*r, mergedShape(r->type, headGroups(space, order)),
                            headGroups(space, order));
  };
  FailureOr<Emitter::Val> q = read(chain.query, space.query, space.headDim);
  FailureOr<Emitter::Val> k = read(chain.key, space.key, space.headDim);
  FailureOr<Emitter::Val> v = read(chain.value, space.key, space.valueDim);
  if (failed(q) || failed(k) || failed(v)) {
    reason = "an operand's view needs a copy (it slices or repeats a "
             "dimension)";
    return failure();
  }
  Value mask;
  if (chain.mask) {
    // The mask's heads are the op's, merged like the operands', or none.
    ArrayRef<unsigned> heads = headDims(space);
    int64_t mentioned = llvm::count_if(
        heads, [&](unsigned h) { return viewMentions(chain.mask->view, h); });
    if (mentioned != 0 && mentioned != static_cast<int64_t>(heads.size())) {
      reason = "the mask varies over some of the dims the heads merge, not "
               "all";
      return failure();
    }
    // Broadcasting aligns the mask right: leading dims it does not depend
    // on need not be there.
    SmallVector<int> order;
    for (unsigned b : space.batch)
      if (!order.empty() || viewMentions(chain.mask->view, b))
        order.push_back(b);
    order.push_back(space.query);
    order.push_back(space.key);
    Emitter::Val m{chain.mask->value,
                   cast<RankedTensorType>(chain.mask->value.getType())};
    FailureOr<Emitter::Val> read = emitter.read(m, chain.mask->view, order);
    if (failed(read)) {
      reason = "the mask's view needs a copy (it slices or repeats a "
               "dimension)";
      return failure();
    }
    if (llvm::count_if(order, [&](int d) {
          return d >= 0 && llvm::is_contained(heads, d);
        }) > 1)
      read = emitter.collapse(*read,
                              mergedShape(read->type, headGroups(space, order)),
                              headGroups(space, order));
    if (chain.invertBoolMask)
      read = emitter.map(*read, read->type.getElementType(),
                         [&](OpBuilder &nb, Location l, Value x) -> Value {
                           Value one =
                               arith::ConstantIntOp::create(nb, l, 1, 1);
                           return arith::XOrIOp::create(nb, l, x, one);
                         });
    mask = read->value;
  }

  SmallVector<int> oOrder =
      operandOrder(space, space.query, space.valueDim, layout);
  SmallVector<int64_t> oShape;
  for (int d : oOrder)
    oShape.push_back(d < 0 ? 1 : space.size(d));
  SmallVector<ReassociationIndices> oGroups = headGroups(space, oOrder);
  auto oType = RankedTensorType::get(
      mergedShape(RankedTensorType::get(oShape, chain.elementType), oGroups),
      chain.elementType);
  Emitter::Val o{Value(), oType};
  // The LSE, [B, H..., Sq] in logical dims.
  SmallVector<int> lseOrder(oOrder.begin(), oOrder.end());
  lseOrder.pop_back();
  if (layout == Layout::BSHD) {
    llvm::erase(lseOrder, static_cast<int>(space.query));
    lseOrder.push_back(space.query);
  }
  SmallVector<int64_t> lseShape;
  for (int d : lseOrder)
    lseShape.push_back(d < 0 ? 1 : space.size(d));
  SmallVector<ReassociationIndices> lseGroups = headGroups(space, lseOrder);
  auto f32 = Float32Type::get(oType.getContext());
  Emitter::Val lse{
      Value(),
      RankedTensorType::get(
          mergedShape(RankedTensorType::get(lseShape, f32), lseGroups), f32)};
  if (b) {
    auto op = AttentionOp::create(
        *b, loc, oType, chain.lse ? Type(lse.type) : Type(), q->value, k->value,
        v->value, /*query_offsets=*/Value(), /*key_offsets=*/Value(),
        /*kv_lens=*/Value(), /*block_table=*/Value(), mask,
        /*block_mask=*/ValueRange(), modOperands(chain),
        b->getF32FloatAttr(static_cast<float>(chain.scale)), chain.causal,
        chain.window ? b->getI64IntegerAttr(*chain.window) : IntegerAttr(),
        layout, /*mod_name=*/StringAttr(), /*block_size=*/DenseI64ArrayAttr());
    emitRegions(*b, loc, op, chain);
    o.value = op.getOutput();
    lse.value = op.getLse();
  }
  // The op's results, head dims split again, written into the views of the
  // values they replace.
  auto writeBack = [&](Emitter::Val v, ArrayRef<int> order,
                       ArrayRef<int64_t> shape,
                       ArrayRef<ReassociationIndices> groups, const View &view,
                       Value target, StringRef what) -> FailureOr<Value> {
    if (groups.size() != order.size())
      v = emitter.expand(v, shape, groups);
    FailureOr<Emitter::Val> written =
        emitter.write(v, order, view, cast<RankedTensorType>(target.getType()));
    if (failed(written)) {
      reason = ("the " + what + "'s view needs a copy").str();
      return failure();
    }
    return written->value;
  };
  Replacement replacement;
  if (chain.lse) {
    FailureOr<Value> written =
        writeBack(lse, lseOrder, lseShape, lseGroups, chain.lseView, chain.lse,
                  "log-sum-exp");
    if (failed(written))
      return failure();
    replacement.lse = *written;
  }
  FailureOr<Value> out = writeBack(o, oOrder, oShape, oGroups, chain.targetView,
                                   chain.target, "output");
  if (failed(out))
    return failure();
  replacement.output = *out;
  return replacement;
}

/// Replaces `chain` with attn.attention; the chain has been checked with
/// emitAttention(nullptr, ...).
void mlir::attn::raise::rewriteChain(RewriterBase &rewriter,
                                     const Chain &chain) {
  Operation *anchor = chain.second.op;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(anchor);
  std::string reason;
  Replacement replacement =
      *emitAttention(&rewriter, anchor->getLoc(), chain, reason);
  Value out = replacement.output;
  rewriter.replaceAllUsesWith(chain.target, out);
  if (chain.lse) {
    // Only the uses outside the chain, which goes away.
    llvm::SmallPtrSet<Operation *, 16> inChain(chain.chainOps.begin(),
                                               chain.chainOps.end());
    rewriter.replaceUsesWithIf(chain.lse, replacement.lse, [&](OpOperand &use) {
      return !inChain.contains(use.getOwner());
    });
  }

  // Fold a reshape of the result straight back to the op's shape.
  if (auto collapse = out.getDefiningOp<tensor::CollapseShapeOp>()) {
    for (Operation *user : llvm::make_early_inc_range(out.getUsers())) {
      auto expand = dyn_cast<tensor::ExpandShapeOp>(user);
      if (expand && expand.getResultType() == collapse.getSrcType() &&
          expand.getReassociationIndices() ==
              collapse.getReassociationIndices())
        rewriter.replaceOp(expand, collapse.getSrc());
    }
    if (collapse->use_empty())
      rewriter.eraseOp(collapse);
  }

  // Erase the chain, then whatever only it used.
  SmallVector<Operation *> worklist;
  llvm::SmallPtrSet<Operation *, 16> erased;
  auto erase = [&](Operation *op) {
    SetVector<Value> used(op->getOperands().begin(), op->getOperands().end());
    for (Region &region : op->getRegions())
      getUsedValuesDefinedAbove(region, used);
    for (Value value : used)
      if (Operation *def = value.getDefiningOp())
        worklist.push_back(def);
    erased.insert(op);
    rewriter.eraseOp(op);
  };
  for (Operation *op : llvm::reverse(chain.chainOps))
    if (op->use_empty())
      erase(op);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!erased.contains(op) && isOpTriviallyDead(op))
      erase(op);
  }
}
