//===- RaiseExpr.cpp - attn-raise's views and expressions
//-------------------===//
//
// The logical index space of a chain, the views of its tensors, the
// contractions, and the expression builder: it evaluates the ops between and
// around the contractions symbolically into expression trees over the
// logical coordinates (see Raise.cpp's header).
//
//===----------------------------------------------------------------------===//

#include "Raise.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

namespace mlir::attn::raise {

//===----------------------------------------------------------------------===//
// Logical index space and views
//===----------------------------------------------------------------------===//

std::string typeName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

bool viewMentions(const View &view, unsigned dim) {
  return llvm::any_of(view, [&](const Coord &c) {
    return llvm::any_of(c, [&](const Term &t) { return t.dim == dim; });
  });
}

/// The coordinate of a dim that merges `coords` row-major, the dims having
/// `sizes`.
Coord mergeCoords(ArrayRef<Coord> coords, ArrayRef<int64_t> sizes) {
  Coord merged;
  int64_t stride = 1;
  for (int64_t i = coords.size() - 1; i >= 0; --i) {
    for (const Term &t : coords[i])
      merged.push_back({t.dim, t.stride * stride});
    stride *= sizes[i];
  }
  llvm::stable_sort(
      merged, [](const Term &a, const Term &b) { return a.stride > b.stride; });
  return merged;
}

std::string printView(const View &view) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(view, os, [&](const Coord &c) {
    os << "(";
    llvm::interleave(
        c, os, [&](const Term &t) { os << t.dim << "*" << t.stride; }, "+");
    os << ")";
  });
  return s;
}

/// Splits coordinate `c` of a dim into the coordinates of the dims of
/// `sizes` that merge into it row-major. A logical dim that straddles two of
/// them yields a refinement request.
LogicalResult splitCoord(const Space &space, const Coord &c,
                         ArrayRef<int64_t> sizes, SmallVectorImpl<Coord> &out,
                         std::optional<Refinement> &refinement,
                         std::string &reason) {
  int64_t m = sizes.size();
  SmallVector<int64_t> strides(m, 1);
  for (int64_t t = m - 2; t >= 0; --t)
    strides[t] = strides[t + 1] * sizes[t + 1];
  out.assign(m, Coord());
  for (const Term &term : c) {
    int64_t n = space.size(term.dim);
    // The digit whose stride range holds the term's stride.
    int64_t t = 0;
    while (t < m && strides[t] > term.stride)
      ++t;
    reason = "a reshape does not align with the batch dims";
    if (t == m || term.stride % strides[t] != 0)
      return failure();
    int64_t limit =
        t == 0 ? std::numeric_limits<int64_t>::max() : strides[t - 1];
    if (term.stride * n > limit) {
      // The term straddles two digits: the logical dim must be split.
      int64_t factor = limit / term.stride;
      if (limit % term.stride != 0 || n % factor != 0 ||
          space.dims[term.dim].role != Role::Batch)
        return failure();
      refinement = Refinement{term.dim, factor};
      return failure();
    }
    out[t].push_back({term.dim, term.stride / strides[t]});
  }
  reason.clear();
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// Whether `v` is block argument `arg`, possibly through an arith.extf;
/// sets `extended` accordingly.
static bool isArgMaybeExtended(Value v, Value arg, bool &extended) {
  extended = false;
  if (auto ext = v.getDefiningOp<arith::ExtFOp>()) {
    extended = true;
    v = ext.getIn();
  }
  return v == arg;
}

/// Matches a linalg op computing a plain contraction. Returns failure for
/// anything else, without a reason: such ops are not chain candidates.
static FailureOr<Contraction> matchLinalgContraction(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || !op.hasPureTensorSemantics())
    return failure();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!llvm::all_of(maps,
                    [](AffineMap m) { return m.isProjectedPermutation(); }))
    return failure();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  if (llvm::count(iters, utils::IteratorType::reduction) != 1)
    return failure();
  unsigned red =
      llvm::find(iters, utils::IteratorType::reduction) - iters.begin();
  if (!maps[0].isFunctionOfDim(red) || !maps[1].isFunctionOfDim(red) ||
      maps[2].isFunctionOfDim(red))
    return failure();

  Block *body = op.getBlock();
  if (!body || body->getNumArguments() != 3)
    return failure();
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return failure();
  // Exactly mulf, addf and up to two extf besides the yield.
  for (Operation &inner : body->without_terminator())
    if (!isa<arith::MulFOp, arith::AddFOp, arith::ExtFOp>(inner))
      return failure();
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return failure();
  Value acc = body->getArgument(2);
  Value prod;
  if (add.getLhs() == acc)
    prod = add.getRhs();
  else if (add.getRhs() == acc)
    prod = add.getLhs();
  else
    return failure();
  auto mul = prod.getDefiningOp<arith::MulFOp>();
  if (!mul || !mul->hasOneUse())
    return failure();
  Contraction c;
  Value a = body->getArgument(0), b = body->getArgument(1);
  bool e0, e1;
  if (isArgMaybeExtended(mul.getLhs(), a, e0) &&
      isArgMaybeExtended(mul.getRhs(), b, e1)) {
    c.extends[0] = e0;
    c.extends[1] = e1;
  } else if (isArgMaybeExtended(mul.getLhs(), b, e1) &&
             isArgMaybeExtended(mul.getRhs(), a, e0)) {
    c.extends[0] = e0;
    c.extends[1] = e1;
  } else {
    return failure();
  }
  c.op = op;
  c.operands[0] = op.getDpsInputOperand(0)->get();
  c.operands[1] = op.getDpsInputOperand(1)->get();
  for (int i = 0; i < 3; ++i)
    c.maps[i] = maps[i];
  c.loopSizes = op.getStaticLoopRanges();
  c.reduction = red;
  c.init = op.getDpsInitOperand(0)->get();
  c.result = op->getResult(0);
  c.accType = body->getArgument(2).getType();
  return c;
}

/// Matches tosa.matmul: [N, H, C] x [N, C, W] -> [N, H, W], loops (n, h, w, c).
static FailureOr<Contraction> matchTosaMatmul(tosa::MatMulOp op) {
  auto aType = dyn_cast<RankedTensorType>(op.getA().getType());
  auto bType = dyn_cast<RankedTensorType>(op.getB().getType());
  auto oType = dyn_cast<RankedTensorType>(op.getType());
  if (!aType || !bType || !oType || aType.getRank() != 3 ||
      bType.getRank() != 3)
    return failure();
  MLIRContext *ctx = op.getContext();
  AffineExpr n, h, w, k;
  bindDims(ctx, n, h, w, k);
  Contraction c;
  c.op = op;
  c.operands[0] = op.getA();
  c.operands[1] = op.getB();
  c.maps[0] = AffineMap::get(4, 0, {n, h, k}, ctx);
  c.maps[1] = AffineMap::get(4, 0, {n, k, w}, ctx);
  c.maps[2] = AffineMap::get(4, 0, {n, h, w}, ctx);
  c.loopSizes = {aType.getDimSize(0), aType.getDimSize(1), bType.getDimSize(2),
                 aType.getDimSize(2)};
  c.reduction = 3;
  c.result = op.getResult();
  c.accType = oType.getElementType();
  c.extends[0] = aType.getElementType() != c.accType;
  c.extends[1] = bType.getElementType() != c.accType;
  return c;
}

FailureOr<Contraction> matchContraction(Operation *op) {
  if (!op)
    return failure();
  if (auto mm = dyn_cast<tosa::MatMulOp>(op))
    return matchTosaMatmul(mm);
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return matchLinalgContraction(linalgOp);
  return failure();
}

//===----------------------------------------------------------------------===//
// Symbolic expressions
//===----------------------------------------------------------------------===//

bool isConstF(const Expr *e, double v) {
  return e->kind == ExprKind::ConstF && e->f == v;
}

/// A value that drives exp to exactly 0: -inf, or the lowest finite f32 (a
/// common stand-in that still underflows whatever the other scores are).
bool isMaskedValue(const Expr *e) {
  return e->kind == ExprKind::ConstF && isLowestValue(e->f, e->type);
}

const Expr *ExprBuilder::coordExpr(const Coord &c, Type indexType) {
  if (c.empty())
    return constI(0, indexType);
  const Expr *sum = nullptr;
  for (const Term &t : c) {
    Expr idx{ExprKind::Index, indexType};
    idx.dim = t.dim;
    const Expr *term = make(std::move(idx));
    if (t.stride != 1)
      term =
          node(ExprKind::MulI, indexType, {term, constI(t.stride, indexType)});
    sum = sum ? node(ExprKind::AddI, indexType, {sum, term}) : term;
  }
  return sum;
}

FailureOr<const Expr *> ExprBuilder::build(Value v, const View &view) {
  auto key = std::make_pair(v.getAsOpaquePointer(), printView(view));
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second;
  FailureOr<const Expr *> e = buildUncached(v, view);
  if (failed(e))
    return e;
  cache[key] = *e;
  if (!(*e)->origin) {
    (*e)->origin = v;
    (*e)->originView = view;
  }
  builtAt.try_emplace(v, *e, view);
  return e;
}

FailureOr<const Expr *> ExprBuilder::buildLeaf(Value v, const View &view) {
  Expr e{ExprKind::Tensor, getElementTypeOrSelf(v.getType())};
  e.value = v;
  e.view = view;
  return make(std::move(e));
}

FailureOr<const Expr *> ExprBuilder::buildUncached(Value v, const View &view) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return fail("a chain value is not a ranked tensor");
  if (!type.hasStaticShape())
    return fail("dynamic shapes are not supported");
  if (!getStaticElementCount(type))
    return fail(kTooManyElements);
  if (type.getNumElements() == 0)
    return fail("a tensor in the chain has a zero-sized dimension");
  if (static_cast<int64_t>(view.size()) != type.getRank())
    return fail("internal: view rank mismatch");

  Operation *def = v.getDefiningOp();
  if (!def)
    return buildLeaf(v, view);

  Attribute cst;
  if (matchPattern(v, m_Constant(&cst)))
    return buildConstant(cst, v, view);

  if (scoreMode) {
    if (succeeded(matchContraction(def))) {
      if (def->getBlock() != block)
        return fail("the chain spans several blocks");
      if (scoresOp && scoresOp != def)
        return fail("more than one contraction feeds the softmax");
      scoresOp = def;
      visited.insert(def);
      Expr e{ExprKind::Scores, type.getElementType()};
      e.value = v;
      e.view = view;
      return make(std::move(e));
    }
  }

  bool elementwiseOnTensors =
      def->hasTrait<OpTrait::Elementwise>() &&
      isa<arith::ArithDialect, math::MathDialect>(def->getDialect());
  bool seeThrough =
      elementwiseOnTensors ||
      isa<linalg::LinalgOp, linalg::SoftmaxOp, tensor::CollapseShapeOp,
          tensor::ExpandShapeOp, tensor::CastOp>(def) ||
      (def->getDialect() && def->getDialect()->getNamespace() == "tosa" &&
       !isa<tosa::MatMulOp>(def));
  if (!seeThrough)
    return buildLeaf(v, view);
  if (scoreMode && def->getBlock() != block)
    return fail("the chain spans several blocks");

  FailureOr<const Expr *> e = failure();
  if (elementwiseOnTensors) {
    e = buildElementwise(def, view);
  } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(def)) {
    e = buildLinalg(linalgOp, cast<OpResult>(v), view);
  } else if (auto softmax = dyn_cast<linalg::SoftmaxOp>(def)) {
    e = buildSoftmax(softmax, view);
  } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
    e = buildCollapse(collapse.getSrc(), collapse.getSrcType().getShape(),
                      collapse.getReassociationIndices(), view);
  } else if (auto castOp = dyn_cast<tensor::CastOp>(def)) {
    // A tensor.cast between equal static types changes nothing.
    if (castOp.getSource().getType() == castOp.getType())
      e = build(castOp.getSource(), view);
    else
      e = fail("a tensor.cast from a dynamic shape");
  } else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
    e = buildExpand(expand.getSrc(), expand.getResultType().getShape(),
                    expand.getReassociationIndices(), view);
  } else {
    e = buildTosa(def, view);
  }
  if (failed(e)) {
    // Outside the chain, an op that cannot be seen through is an operand.
    if (!scoreMode && !refinement) {
      reason.clear();
      return buildLeaf(v, view);
    }
    return failure();
  }
  visited.insert(def);
  return e;
}

bool isLowestValue(double v, Type t) {
  if (v == -kInf || v == kLowestF32)
    return true;
  auto ft = dyn_cast<FloatType>(t);
  return ft &&
         v == APFloat::getLargest(ft.getFloatSemantics(), /*Negative=*/true)
                  .convertToDouble();
}

/// `v` rounded to float type `t`: the value a constant of that type holds.
static double roundTo(double v, Type t) {
  auto ft = dyn_cast<FloatType>(t);
  if (!ft || std::isnan(v))
    return v;
  APFloat a(v);
  bool lost = false;
  a.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
  return a.convertToDouble();
}

FailureOr<const Expr *> ExprBuilder::buildConstant(Attribute attr, Value v,
                                                   const View &view) {
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return buildLeaf(v, view);
  Type elem = dense.getElementType();
  if (!dense.isSplat()) {
    if (const Expr *iota = buildIota(dense, view))
      return iota;
    if (const Expr *causal = buildCausalConstant(dense, view))
      return causal;
    return buildLeaf(v, view);
  }
  if (isa<FloatType>(elem))
    return constF(dense.getSplatValue<APFloat>().convertToDouble(), elem);
  if (isa<IntegerType, IndexType>(elem))
    return constI(dense.getSplatValue<APInt>().getSExtValue(), elem);
  return buildLeaf(v, view);
}

/// A constant that counts along one dim, a * i + b for index i of that dim
/// and the same along the others, is that dim's coordinate: front ends build
/// index masks from such constants (torch's arange folded to a constant).
/// Null for any other constant.
const Expr *ExprBuilder::buildIota(DenseElementsAttr dense, const View &view) {
  // Large enough for the index vectors of long sequences; a full mask
  // constant is not scanned.
  constexpr int64_t kMaxElements = int64_t(1) << 20;
  auto type = cast<ShapedType>(dense.getType());
  Type elem = type.getElementType();
  if (!scoreMode || type.getNumElements() > kMaxElements ||
      type.getNumElements() < 2)
    return nullptr;
  SmallVector<double> values;
  if (isa<FloatType>(elem)) {
    for (const APFloat &x : dense.getValues<APFloat>())
      values.push_back(x.convertToDouble());
  } else if (isa<IntegerType, IndexType>(elem) &&
             elem.getIntOrFloatBitWidth() > 1) {
    for (const APInt &x : dense.getValues<APInt>())
      values.push_back(static_cast<double>(x.getSExtValue()));
  } else {
    return nullptr;
  }
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = shape.size();
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  for (int64_t d = 0; d < rank; ++d) {
    if (shape[d] < 2)
      continue;
    double b = values[0], a = values[strides[d]] - b;
    if (a == 0 || a != std::floor(a) || b != std::floor(b) ||
        std::fabs(a) > (1 << 24) || std::fabs(b) > (1 << 24))
      continue;
    bool counts = true;
    for (int64_t n = 0; n < static_cast<int64_t>(values.size()) && counts; ++n)
      counts = values[n] == a * ((n / strides[d]) % shape[d]) + b;
    if (!counts)
      continue;
    Type index = IndexType::get(elem.getContext());
    const Expr *e = coordExpr(view[d], index);
    if (a != 1)
      e = node(ExprKind::MulI, index,
               {e, constI(static_cast<int64_t>(a), index)});
    if (b != 0)
      e = node(ExprKind::AddI, index,
               {e, constI(static_cast<int64_t>(b), index)});
    return isa<FloatType>(elem) ? node(ExprKind::IToF, elem, {e}) : e;
  }
  return nullptr;
}

/// A constant mask over the query and key axes that hides exactly the keys
/// after a causal diagonal, top-left or bottom-right (-inf or the lowest
/// finite value against 0, or a boolean), is that index comparison: the
/// causal masks front ends fold to constants. Null for any other constant.
const Expr *ExprBuilder::buildCausalConstant(DenseElementsAttr dense,
                                             const View &view) {
  auto type = cast<ShapedType>(dense.getType());
  Type elem = type.getElementType();
  if (!scoreMode || type.getNumElements() > (int64_t(1) << 24))
    return nullptr;
  std::optional<int64_t> qDim, kDim;
  for (auto [d, c] : llvm::enumerate(view)) {
    if (c.size() == 1 && c[0].stride == 1 && c[0].dim == space.query)
      qDim = d;
    else if (c.size() == 1 && c[0].stride == 1 && c[0].dim == space.key)
      kDim = d;
    else if (type.getDimSize(d) != 1)
      return nullptr;
  }
  int64_t sq = space.size(space.query), sk = space.size(space.key);
  if (!qDim || !kDim || type.getDimSize(*qDim) != sq ||
      type.getDimSize(*kDim) != sk)
    return nullptr;
  // hidden(n): whether element n hides its key; false for values that are
  // neither masked nor 0.
  SmallVector<int8_t> hidden;
  if (elem.isInteger(1)) {
    for (bool x : dense.getValues<bool>())
      hidden.push_back(x);
  } else if (isa<FloatType>(elem)) {
    for (const APFloat &x : dense.getValues<APFloat>()) {
      double f = x.convertToDouble();
      if (f != 0.0 && !isLowestValue(f, elem))
        return nullptr;
      hidden.push_back(f != 0.0);
    }
  } else {
    return nullptr;
  }
  int64_t qStride = 1, kStride = 1;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    if (d > *qDim)
      qStride *= type.getDimSize(d);
    if (d > *kDim)
      kStride *= type.getDimSize(d);
  }
  for (int64_t offset : {int64_t(0), sk - sq}) {
    // For a boolean mask, either value may mean hidden.
    for (bool hiddenValue : {true, false}) {
      if (!elem.isInteger(1) && !hiddenValue)
        continue;
      bool matches = true;
      for (int64_t i = 0; i < sq && matches; ++i)
        for (int64_t j = 0; j < sk && matches; ++j)
          matches = (hidden[i * qStride + j * kStride] == hiddenValue) ==
                    (j > i + offset);
      if (!matches)
        continue;
      Type index = IndexType::get(elem.getContext());
      Expr cmp{ExprKind::CmpI, IntegerType::get(elem.getContext(), 1)};
      cmp.args = {coordExpr(view[*kDim], index),
                  node(ExprKind::AddI, index,
                       {coordExpr(view[*qDim], index), constI(offset, index)})};
      cmp.i = static_cast<int64_t>(hiddenValue ? arith::CmpIPredicate::sgt
                                               : arith::CmpIPredicate::sle);
      const Expr *cond = make(std::move(cmp));
      if (elem.isInteger(1))
        return cond;
      double masked = 0;
      for (const APFloat &x : dense.getValues<APFloat>())
        if (!x.isZero())
          masked = x.convertToDouble();
      return node(ExprKind::Select, elem,
                  {cond, constF(masked, elem), constF(0.0, elem)});
    }
  }
  return nullptr;
}

const Expr *ExprBuilder::binary(ExprKind k, const Expr *a, const Expr *b,
                                Type t) {
  if (a->kind == ExprKind::ConstF && b->kind == ExprKind::ConstF) {
    switch (k) {
    case ExprKind::AddF:
      return constF(roundTo(a->f + b->f, t), t);
    case ExprKind::SubF:
      return constF(roundTo(a->f - b->f, t), t);
    case ExprKind::MulF:
      return constF(roundTo(a->f * b->f, t), t);
    case ExprKind::DivF:
      return constF(roundTo(a->f / b->f, t), t);
    default:
      break;
    }
  }
  // Identities x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1: the other operand
  // must already have the result's type (a broadcast operand of an
  // elementwise op has it).
  bool commutes = k == ExprKind::AddF || k == ExprKind::MulF;
  std::optional<double> identity;
  if (k == ExprKind::AddF || k == ExprKind::SubF)
    identity = 0.0;
  else if (k == ExprKind::MulF || k == ExprKind::DivF)
    identity = 1.0;
  if (identity && isConstF(b, *identity) && a->type == t)
    return a;
  if (identity && commutes && isConstF(a, *identity) && b->type == t)
    return b;
  return node(k, t, {a, b});
}

FailureOr<const Expr *> ExprBuilder::convert(const Expr *x, Type t) {
  Type from = x->type;
  if (from == t)
    return x;
  if (from.isInteger(1) && isa<FloatType>(t))
    return node(ExprKind::Select, t, {x, constF(1.0, t), constF(0.0, t)});
  if (isa<FloatType>(from) && t.isInteger(1)) {
    Expr e{ExprKind::CmpF, t};
    e.args = {x, constF(0.0, from)};
    e.i = static_cast<int64_t>(arith::CmpFPredicate::UNE);
    return make(std::move(e));
  }
  if (isa<IntegerType, IndexType>(from) && isa<FloatType>(t))
    return node(ExprKind::IToF, t, {x});
  if (isa<FloatType>(from) && isa<FloatType>(t)) {
    if (x->kind == ExprKind::ConstF)
      return constF(roundTo(x->f, t), t);
    return node(from.getIntOrFloatBitWidth() < t.getIntOrFloatBitWidth()
                    ? ExprKind::ExtF
                    : ExprKind::TruncF,
                t, {x});
  }
  return fail("unsupported conversion from " + typeName(from) + " to " +
              typeName(t));
}

FailureOr<const Expr *>
ExprBuilder::buildCollapse(Value src, ArrayRef<int64_t> srcShape,
                           ArrayRef<ReassociationIndices> groups,
                           const View &view) {
  View srcView(srcShape.size());
  for (auto [g, group] : llvm::enumerate(groups)) {
    SmallVector<int64_t> sizes;
    for (int64_t d : group)
      sizes.push_back(srcShape[d]);
    SmallVector<Coord> parts;
    std::string why;
    if (failed(splitCoord(space, view[g], sizes, parts, refinement, why)))
      return fail(why);
    for (auto [d, part] : llvm::zip_equal(group, parts))
      srcView[d] = part;
  }
  return build(src, srcView);
}

FailureOr<const Expr *>
ExprBuilder::buildExpand(Value src, ArrayRef<int64_t> resultShape,
                         ArrayRef<ReassociationIndices> groups,
                         const View &view) {
  View srcView;
  for (const ReassociationIndices &group : groups) {
    SmallVector<Coord> coords;
    SmallVector<int64_t> sizes;
    for (int64_t d : group) {
      coords.push_back(view[d]);
      sizes.push_back(resultShape[d]);
    }
    srcView.push_back(mergeCoords(coords, sizes));
  }
  return build(src, srcView);
}

FailureOr<const Expr *> ExprBuilder::buildLinalg(linalg::LinalgOp op,
                                                 OpResult result,
                                                 const View &view) {
  if (!op.hasPureTensorSemantics())
    return fail("'" + op->getName().getStringRef() +
                "' does not work on tensors");
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  unsigned numLoops = op.getNumLoops();
  unsigned numInputs = op.getNumDpsInputs();
  unsigned resultNo = result.getResultNumber();
  AffineMap outMap = maps[numInputs + resultNo];

  // Loop coordinates from the output's view.
  // A constant 0 in the output map is a unit dim (a keep-dim reduction,
  // torch-mlir's softmax).
  SmallVector<std::optional<Coord>> sigma(numLoops);
  ArrayRef<int64_t> outShape =
      cast<RankedTensorType>(result.getType()).getShape();
  for (auto [t, expr] : llvm::enumerate(outMap.getResults())) {
    auto c = dyn_cast<AffineConstantExpr>(expr);
    if (c && c.getValue() == 0 && outShape[t] == 1)
      continue;
    auto d = dyn_cast<AffineDimExpr>(expr);
    if (!d || sigma[d.getPosition()])
      return fail("'" + op->getName().getStringRef() +
                  "' has an output map that is not a permutation");
    sigma[d.getPosition()] = view[t];
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  std::optional<unsigned> reductionLoop;
  for (unsigned l = 0; l < numLoops; ++l) {
    if (sigma[l])
      continue;
    // A loop of one iteration reads index 0 and combines once with the
    // output's initial value, which the body reads as a parallel op would;
    // with one key, the first such reduction is over the key axis.
    bool keyReduction = scoreMode && space.size(space.key) == 1 &&
                        iters[l] == utils::IteratorType::reduction &&
                        !reductionLoop;
    if (ranges[l] == 1 && !keyReduction) {
      sigma[l] = Coord();
      continue;
    }
    if (iters[l] != utils::IteratorType::reduction)
      return fail("'" + op->getName().getStringRef() +
                  "' has a parallel loop missing from its output");
    if (reductionLoop)
      return fail("'" + op->getName().getStringRef() +
                  "' reduces over more than one dimension");
    reductionLoop = l;
  }
  if (reductionLoop) {
    if (!scoreMode)
      return fail("a reduction computes a contraction operand");
    if (viewMentions(view, space.key))
      return fail(op.getNumDpsInputs() == 1
                      ? "the softmax reduces over a dimension other than the "
                        "key axis the second contraction sums over"
                      : "'" + op->getName().getStringRef() +
                            "' reduces over another dimension than the key "
                            "axis: not a contraction attn-raise recognises "
                            "nor a softmax over the key axis");
    if (ranges[*reductionLoop] != space.size(space.key))
      return fail("a reduction does not cover the key axis");
    sigma[*reductionLoop] = Coord{{space.key, 1}};
  }

  auto operandView = [&](AffineMap map) -> FailureOr<View> {
    View v;
    for (AffineExpr expr : map.getResults()) {
      if (auto d = dyn_cast<AffineDimExpr>(expr)) {
        v.push_back(*sigma[d.getPosition()]);
        continue;
      }
      auto c = dyn_cast<AffineConstantExpr>(expr);
      if (!c || c.getValue() != 0)
        return fail("'" + op->getName().getStringRef() +
                    "' has an indexing map that is not a projection");
      v.push_back(Coord());
    }
    return v;
  };

  Block *body = op.getBlock();
  if (!body)
    return fail("'" + op->getName().getStringRef() + "' has no body");
  BlockArgument accArg = body->getArgument(numInputs + resultNo);
  auto argExpr = [&](BlockArgument arg) -> FailureOr<const Expr *> {
    if (reductionLoop && arg == accArg)
      return node(ExprKind::Acc, arg.getType(), {});
    unsigned n = arg.getArgNumber();
    if (n >= numInputs && reductionLoop)
      return fail("a reduction reads another output");
    OpOperand &operand = op->getOpOperand(n);
    Value in = operand.get();
    if (!isa<RankedTensorType>(in.getType())) {
      Attribute attr;
      if (matchPattern(in, m_Constant(&attr))) {
        if (auto f = dyn_cast<FloatAttr>(attr))
          return constF(f.getValueAsDouble(), f.getType());
        if (auto i = dyn_cast<IntegerAttr>(attr))
          return constI(i.getValue().getSExtValue(), i.getType());
      }
      return fail("'" + op->getName().getStringRef() +
                  "' reads a scalar that is not a constant");
    }
    FailureOr<View> v = operandView(maps[n]);
    if (failed(v))
      return failure();
    return build(in, *v);
  };
  auto indexExpr = [&](int64_t dim) -> FailureOr<const Expr *> {
    return coordExpr(*sigma[dim], IndexType::get(op.getContext()));
  };
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  DenseMap<Value, const Expr *> memo;
  FailureOr<const Expr *> e = evalScalar(
      yield.getOperand(resultNo), *body->getParent(), argExpr, indexExpr, memo);
  if (failed(e) || !reductionLoop)
    return e;

  // A reduction: combine(acc, f) with f free of acc.
  const Expr *combine = *e;
  ExprKind kind;
  if (combine->kind == ExprKind::MaxF)
    kind = ExprKind::RowMax;
  else if (combine->kind == ExprKind::AddF)
    kind = ExprKind::RowSum;
  else
    return fail("a reduction over the key axis is neither a max nor a sum");
  const Expr *a = combine->args[0], *b = combine->args[1];
  if (b->kind == ExprKind::Acc)
    std::swap(a, b);
  if (a->kind != ExprKind::Acc || containsKind(b, ExprKind::Acc))
    return fail("a reduction over the key axis is neither a max nor a sum");
  FailureOr<View> initView = operandView(outMap);
  if (failed(initView))
    return failure();
  Value initValue = op.getDpsInitOperand(resultNo)->get();
  FailureOr<const Expr *> init = build(initValue, *initView);
  if (failed(init))
    return failure();
  if ((*init)->kind != ExprKind::ConstF)
    return fail("a reduction over the key axis does not start from a "
                "constant");
  Expr r{kind, combine->type};
  r.args.push_back(b);
  r.f = (*init)->f;
  // maxnumf ignores a NaN: upstream's softmax decomposition starts its max
  // from one.
  if (kind == ExprKind::RowMax && combine->i == 1 && std::isnan(r.f))
    r.f = -kInf;
  return make(std::move(r));
}

FailureOr<const Expr *> ExprBuilder::evalScalar(
    Value v, Region &region,
    function_ref<FailureOr<const Expr *>(BlockArgument)> argExpr,
    function_ref<FailureOr<const Expr *>(int64_t)> indexExpr,
    DenseMap<Value, const Expr *> &memo) {
  auto it = memo.find(v);
  if (it != memo.end())
    return it->second;
  auto recurse = [&](Value x) {
    return evalScalar(x, region, argExpr, indexExpr, memo);
  };
  FailureOr<const Expr *> result = failure();
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner()->getParent() != &region)
      return fail("a body reads a block argument of another region");
    result = argExpr(arg);
  } else {
    Operation *op = v.getDefiningOp();
    Attribute attr;
    Type t = v.getType();
    if (matchPattern(v, m_Constant(&attr))) {
      if (auto f = dyn_cast<FloatAttr>(attr))
        result = constF(f.getValueAsDouble(), t);
      else if (auto i = dyn_cast<IntegerAttr>(attr))
        result = constI(i.getValue().getSExtValue(), t);
      else
        return fail("a body uses an unsupported constant");
    } else if (!region.isAncestor(op->getParentRegion())) {
      return fail("a body uses a value defined outside it");
    } else if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      result = indexExpr(index.getDim());
    } else {
      SmallVector<const Expr *> args;
      for (Value operand : op->getOperands()) {
        FailureOr<const Expr *> a = recurse(operand);
        if (failed(a))
          return failure();
        args.push_back(*a);
      }
      result = applyOp(op, args, t);
      if (failed(result))
        return fail("unsupported op '" + op->getName().getStringRef() +
                    "' in a chain op's body");
    }
  }
  if (failed(result))
    return failure();
  memo[v] = *result;
  return result;
}

/// The expression of scalar op `op` (arith or math) applied to `args`,
/// with result type `t`; failure for an op the matcher does not model.
FailureOr<const Expr *>
ExprBuilder::applyOp(Operation *op, ArrayRef<const Expr *> args, Type t) {
  if (isa<arith::AddFOp>(op))
    return binary(ExprKind::AddF, args[0], args[1], t);
  if (isa<arith::SubFOp>(op))
    return binary(ExprKind::SubF, args[0], args[1], t);
  if (isa<arith::MulFOp>(op))
    return binary(ExprKind::MulF, args[0], args[1], t);
  if (isa<arith::DivFOp>(op))
    return binary(ExprKind::DivF, args[0], args[1], t);
  if (isa<arith::MaximumFOp>(op))
    return node(ExprKind::MaxF, t, args);
  if (isa<arith::MaxNumFOp>(op)) {
    Expr e{ExprKind::MaxF, t};
    e.args.assign(args.begin(), args.end());
    e.i = 1;
    return make(std::move(e));
  }
  if (isa<math::LogOp>(op))
    return node(ExprKind::Log, t, args);
  if (isa<arith::NegFOp>(op))
    return args[0]->kind == ExprKind::ConstF ? constF(-args[0]->f, t)
                                             : node(ExprKind::Neg, t, args);
  if (isa<math::ExpOp>(op))
    return node(ExprKind::Exp, t, args);
  if (isa<math::TanhOp>(op))
    return node(ExprKind::Tanh, t, args);
  if (isa<math::Exp2Op>(op))
    return node(ExprKind::Exp2, t, args);
  if (isa<math::SqrtOp>(op) && args[0]->kind == ExprKind::ConstF)
    return constF(std::sqrt(args[0]->f), t);
  if (isa<math::RsqrtOp>(op) && args[0]->kind == ExprKind::ConstF)
    return constF(1.0 / std::sqrt(args[0]->f), t);
  if (isa<arith::ExtFOp, arith::TruncFOp>(op))
    return convert(args[0], t);
  if (isa<arith::AddIOp>(op))
    return node(ExprKind::AddI, t, args);
  if (isa<arith::SubIOp>(op))
    return node(ExprKind::SubI, t, args);
  if (isa<arith::MulIOp>(op))
    return node(ExprKind::MulI, t, args);
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op))
    return args[0];
  if (isa<arith::UIToFPOp>(op) ||
      (isa<arith::SIToFPOp>(op) && !args[0]->type.isInteger(1)))
    return convert(args[0], t);
  if (isa<arith::SIToFPOp>(op)) // i1 true is -1
    return node(ExprKind::Select, t,
                {args[0], constF(-1.0, t), constF(0.0, t)});
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    Expr e{ExprKind::CmpI, t};
    e.args.assign(args.begin(), args.end());
    e.i = static_cast<int64_t>(cmp.getPredicate());
    return make(std::move(e));
  }
  if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
    Expr e{ExprKind::CmpF, t};
    e.args.assign(args.begin(), args.end());
    e.i = static_cast<int64_t>(cmp.getPredicate());
    return make(std::move(e));
  }
  if (isa<arith::SelectOp>(op))
    return node(ExprKind::Select, t, args);
  if (isa<arith::AndIOp>(op))
    return node(ExprKind::AndI, t, args);
  if (isa<arith::OrIOp>(op))
    return node(ExprKind::OrI, t, args);
  if (isa<arith::XOrIOp>(op))
    return node(ExprKind::XOrI, t, args);
  return failure();
}

FailureOr<const Expr *> ExprBuilder::buildElementwise(Operation *op,
                                                      const View &view) {
  SmallVector<const Expr *> args;
  for (Value operand : op->getOperands()) {
    if (operand.getType() != op->getResult(0).getType() &&
        !(isa<RankedTensorType>(operand.getType()) &&
          cast<RankedTensorType>(operand.getType()).getShape() ==
              cast<RankedTensorType>(op->getResult(0).getType()).getShape()))
      return fail("'" + op->getName().getStringRef() +
                  "' mixes scalars and tensors");
    FailureOr<const Expr *> a = build(operand, view);
    if (failed(a))
      return failure();
    args.push_back(*a);
  }
  FailureOr<const Expr *> e =
      applyOp(op, args, getElementTypeOrSelf(op->getResult(0).getType()));
  if (failed(e))
    return fail("unsupported op '" + op->getName().getStringRef() + "'");
  return e;
}

FailureOr<const Expr *> ExprBuilder::buildSoftmax(linalg::SoftmaxOp op,
                                                  const View &view) {
  if (!scoreMode)
    return fail("a softmax computes a contraction operand");
  int64_t dim = op.getDimension();
  if (view[dim].size() != 1 || view[dim][0].dim != space.key ||
      view[dim][0].stride != 1)
    return fail("the softmax reduces over a dimension other than the key "
                "axis the second contraction sums over");
  View rest = view;
  rest.erase(rest.begin() + dim);
  if (viewMentions(rest, space.key))
    return fail("the softmax reduces over a dimension other than the key "
                "axis the second contraction sums over");
  FailureOr<const Expr *> x = build(op.getInput(), view);
  if (failed(x))
    return failure();
  return node(ExprKind::Softmax,
              getElementTypeOrSelf(op->getResult(0).getType()), {*x});
}

FailureOr<const Expr *> ExprBuilder::buildTosa(Operation *op,
                                               const View &view) {
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  Type t = resultType.getElementType();
  ArrayRef<int64_t> shape = resultType.getShape();
  // Operands of elementwise tosa ops broadcast their unit dims.
  auto operand = [&](Value in) -> FailureOr<const Expr *> {
    auto inType = dyn_cast<RankedTensorType>(in.getType());
    if (!inType || inType.getRank() != resultType.getRank())
      return fail("'" + op->getName().getStringRef() +
                  "' has operands of different ranks");
    View v = view;
    for (int64_t d = 0; d < inType.getRank(); ++d)
      if (inType.getDimSize(d) == 1 && shape[d] != 1)
        v[d] = Coord();
    return build(in, v);
  };
  auto elementwise = [&](ExprKind kind,
                         ValueRange ins) -> FailureOr<const Expr *> {
    SmallVector<const Expr *> args;
    for (Value in : ins) {
      FailureOr<const Expr *> a = operand(in);
      if (failed(a))
        return failure();
      args.push_back(*a);
    }
    if (args.size() == 2 && kind != ExprKind::MaxF)
      return binary(kind, args[0], args[1], t);
    return node(kind, t, args);
  };
  auto reduce = [&](ExprKind kind, Value in, int64_t axis,
                    double init) -> FailureOr<const Expr *> {
    if (!scoreMode)
      return fail("a reduction computes a contraction operand");
    auto inType = cast<RankedTensorType>(in.getType());
    if (viewMentions(view, space.key))
      return fail("the softmax reduces over a dimension other than the key "
                  "axis the second contraction sums over");
    if (inType.getDimSize(axis) != space.size(space.key))
      return fail("a reduction does not cover the key axis");
    View v = view;
    v[axis] = Coord{{space.key, 1}};
    FailureOr<const Expr *> x = build(in, v);
    if (failed(x))
      return failure();
    Expr r{kind, t};
    r.args.push_back(*x);
    r.f = init;
    return make(std::move(r));
  };

  if (auto add = dyn_cast<tosa::AddOp>(op))
    return elementwise(ExprKind::AddF, {add.getInput1(), add.getInput2()});
  if (auto sub = dyn_cast<tosa::SubOp>(op))
    return elementwise(ExprKind::SubF, {sub.getInput1(), sub.getInput2()});
  if (auto mul = dyn_cast<tosa::MulOp>(op)) {
    if (!isa<FloatType>(t))
      return fail("unsupported integer tosa.mul");
    return elementwise(ExprKind::MulF, {mul.getInput1(), mul.getInput2()});
  }
  if (auto max = dyn_cast<tosa::MaximumOp>(op))
    return elementwise(ExprKind::MaxF, {max.getInput1(), max.getInput2()});
  if (auto exp = dyn_cast<tosa::ExpOp>(op))
    return elementwise(ExprKind::Exp, {exp.getInput1()});
  if (auto recip = dyn_cast<tosa::ReciprocalOp>(op)) {
    FailureOr<const Expr *> x = operand(recip.getInput1());
    if (failed(x))
      return failure();
    return binary(ExprKind::DivF, constF(1.0, t), *x, t);
  }
  if (auto log = dyn_cast<tosa::LogOp>(op))
    return elementwise(ExprKind::Log, {log.getInput1()});
  if (auto tanh = dyn_cast<tosa::TanhOp>(op))
    return elementwise(ExprKind::Tanh, {tanh.getInput()});
  if (auto rsqrt = dyn_cast<tosa::RsqrtOp>(op)) {
    FailureOr<const Expr *> x = operand(rsqrt.getInput1());
    if (failed(x))
      return failure();
    if ((*x)->kind != ExprKind::ConstF)
      return fail("a tosa.rsqrt of a non-constant");
    return constF(roundTo(1.0 / std::sqrt((*x)->f), t), t);
  }
  if (auto neg = dyn_cast<tosa::NegateOp>(op)) {
    FailureOr<const Expr *> x = operand(neg.getInput1());
    if (failed(x))
      return failure();
    return (*x)->kind == ExprKind::ConstF ? constF(-(*x)->f, t)
                                          : node(ExprKind::Neg, t, {*x});
  }
  if (auto identity = dyn_cast<tosa::IdentityOp>(op))
    return build(identity.getInput1(), view);
  if (auto sel = dyn_cast<tosa::SelectOp>(op))
    return elementwise(ExprKind::Select,
                       {sel.getInput1(), sel.getInput2(), sel.getInput3()});
  if (auto cast = dyn_cast<tosa::CastOp>(op)) {
    FailureOr<const Expr *> x = operand(cast.getInput());
    if (failed(x))
      return failure();
    return convert(*x, t);
  }
  if (auto rmax = dyn_cast<tosa::ReduceMaxOp>(op))
    return reduce(ExprKind::RowMax, rmax.getInput(), rmax.getAxis(), -kInf);
  if (auto rsum = dyn_cast<tosa::ReduceSumOp>(op))
    return reduce(ExprKind::RowSum, rsum.getInput(), rsum.getAxis(), 0.0);
  if (auto tile = dyn_cast<tosa::TileOp>(op)) {
    // Tiling a unit dim broadcasts it (K/V repeated for grouped-query
    // attention); tiling a longer dim repeats it, which is no view.
    auto inType = cast<RankedTensorType>(tile.getInput1().getType());
    View v = view;
    for (int64_t d = 0; d < inType.getRank(); ++d) {
      if (inType.getDimSize(d) == shape[d])
        continue;
      if (inType.getDimSize(d) != 1)
        return fail("a tosa.tile repeats a dimension longer than 1");
      v[d] = Coord();
    }
    return build(tile.getInput1(), v);
  }
  if (auto transpose = dyn_cast<tosa::TransposeOp>(op)) {
    ArrayRef<int32_t> perms = transpose.getPerms();
    View v(view.size());
    for (auto [t2, p] : llvm::enumerate(perms))
      v[p] = view[t2];
    return build(transpose.getInput1(), v);
  }
  if (auto reshape = dyn_cast<tosa::ReshapeOp>(op)) {
    auto srcType = cast<RankedTensorType>(reshape.getInput1().getType());
    if (!srcType.hasStaticShape())
      return fail("dynamic shapes are not supported");
    if (srcType.getRank() > resultType.getRank()) {
      if (auto groups = getReassociationIndicesForCollapse(
              srcType.getShape(), resultType.getShape()))
        return buildCollapse(reshape.getInput1(), srcType.getShape(), *groups,
                             view);
    } else if (srcType.getRank() < resultType.getRank()) {
      if (auto groups = getReassociationIndicesForCollapse(
              resultType.getShape(), srcType.getShape()))
        return buildExpand(reshape.getInput1(), resultType.getShape(), *groups,
                           view);
    } else if (srcType == resultType) {
      return build(reshape.getInput1(), view);
    }
    return fail("a tosa.reshape is neither a collapse nor an expansion");
  }
  return fail("unsupported op '" + op->getName().getStringRef() + "'");
}

//===----------------------------------------------------------------------===//
// Expression utilities
//===----------------------------------------------------------------------===//

/// Structural equality; `equal` memoises the pairs found equal so that
/// expressions sharing subtrees compare in linear time.
bool exprEqual(const Expr *a, const Expr *b,
               llvm::DenseSet<std::pair<const Expr *, const Expr *>> &equal) {
  if (a == b || equal.contains({a, b}))
    return true;
  if (a->kind != b->kind || a->type != b->type || a->f != b->f ||
      a->i != b->i || a->dim != b->dim || a->value != b->value ||
      a->args.size() != b->args.size() || a->view.size() != b->view.size())
    return false;
  for (auto [x, y] : llvm::zip_equal(a->view, b->view))
    if (x != y)
      return false;
  for (auto [x, y] : llvm::zip_equal(a->args, b->args))
    if (!exprEqual(x, y, equal))
      return false;
  equal.insert({a, b});
  return true;
}

bool exprEqual(const Expr *a, const Expr *b) {
  llvm::DenseSet<std::pair<const Expr *, const Expr *>> equal;
  return exprEqual(a, b, equal);
}

bool walkExpr(const Expr *e, function_ref<bool(const Expr *)> visit) {
  llvm::SmallPtrSet<const Expr *, 16> seen = {e};
  SmallVector<const Expr *> worklist = {e};
  while (!worklist.empty()) {
    const Expr *x = worklist.pop_back_val();
    if (!visit(x))
      return false;
    for (const Expr *a : x->args)
      if (seen.insert(a).second)
        worklist.push_back(a);
  }
  return true;
}

bool containsKind(const Expr *e, ExprKind kind) {
  return !walkExpr(e, [&](const Expr *x) { return x->kind != kind; });
}

} // namespace mlir::attn::raise
