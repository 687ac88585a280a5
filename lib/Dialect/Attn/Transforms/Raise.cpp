//===- Raise.cpp - matmul -> softmax -> matmul chains to attn.attention ---===//
//
// Front ends spell attention as two contractions around a softmax. This file
// recognises those spellings in linalg and tosa IR and replaces each chain
// with one attn.attention.
//
// The recogniser works in three stages:
//
//  1. The second contraction O = P V fixes a *logical index space*: batch
//     dims, the query axis I, the key axis J (the dim it sums over), the
//     value dim E; the first contraction adds the head dim D. Every tensor
//     the chain reads is given a *view*: for each of its dims, the logical
//     coordinate it holds (a row-major combination of logical dims, so that
//     tensor.collapse_shape / expand_shape of batch dims are views too).
//  2. Everything between the contractions (elementwise ops, broadcasts,
//     reductions, transposes, reshapes, linalg.softmax, their tosa
//     counterparts) is evaluated symbolically into a small expression tree
//     over those coordinates, whatever way the front end split it into ops.
//  3. The tree is matched against softmax(scale * Q K^T + mask): scales,
//     masks, causal predicates over indices and the exp / exp2 forms of the
//     softmax are normalised there, not in the op walk.
//
// Only a chain that passes every check is rewritten; otherwise the reason is
// returned so that the pass can report it.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <deque>
#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNRAISEPASS
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLowestF32 = -3.40282346638528859812e+38;
/// Why a chain with a tensor past attn's element limit stays unfused.
constexpr const char *kTooManyElements =
    "a tensor in the chain holds more than 2^48 elements, the most an attn "
    "op takes";

//===----------------------------------------------------------------------===//
// Logical index space and views
//===----------------------------------------------------------------------===//

std::string typeName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

enum class Role { Batch, Query, Key, HeadDim, ValueDim };

struct LogicalDim {
  Role role;
  int64_t size;
};

/// One term of a coordinate: logical dim `dim` times `stride`.
struct Term {
  unsigned dim;
  int64_t stride;
  bool operator==(const Term &o) const {
    return dim == o.dim && stride == o.stride;
  }
};

/// The coordinate a tensor dim holds: the sum of its terms, sorted by
/// decreasing stride. Empty means the constant 0 (a broadcast unit dim).
using Coord = SmallVector<Term, 2>;

/// The coordinate of every dim of a tensor.
using View = SmallVector<Coord, 4>;

/// The logical dims of one chain. Batch dims come first, in the order of the
/// second contraction's output.
struct Space {
  SmallVector<LogicalDim> dims;
  SmallVector<unsigned> batch;
  unsigned query = 0, key = 0, valueDim = 0, headDim = 0;

  unsigned add(Role role, int64_t size) {
    dims.push_back({role, size});
    return dims.size() - 1;
  }
  int64_t size(unsigned d) const { return dims[d].size; }
};

/// A request to split logical batch dim `dim` into (size / factor, factor):
/// some reshape in the chain cuts it there.
struct Refinement {
  unsigned dim;
  int64_t factor;
};

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

/// A contraction C[out] += ext(A[lhs]) * ext(B[rhs]) with one reduction loop,
/// from a linalg op (named or generic) or tosa.matmul.
struct Contraction {
  Operation *op = nullptr;
  Value operands[2];
  /// Whether the op extends operand i to the accumulator type itself.
  bool extends[2] = {false, false};
  /// Indexing maps of the two operands and the result (projected
  /// permutations of the loops).
  AffineMap maps[3];
  SmallVector<int64_t> loopSizes;
  unsigned reduction = 0;
  /// The accumulator's initial value; null for tosa.matmul (zero).
  Value init;
  Value result;
  Type accType;
};

/// Whether `v` is block argument `arg`, possibly through an arith.extf;
/// sets `extended` accordingly.
bool isArgMaybeExtended(Value v, Value arg, bool &extended) {
  extended = false;
  if (auto ext = v.getDefiningOp<arith::ExtFOp>()) {
    extended = true;
    v = ext.getIn();
  }
  return v == arg;
}

/// Matches a linalg op computing a plain contraction. Returns failure for
/// anything else, without a reason: such ops are not chain candidates.
FailureOr<Contraction> matchLinalgContraction(linalg::LinalgOp op) {
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
FailureOr<Contraction> matchTosaMatmul(tosa::MatMulOp op) {
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

enum class ExprKind {
  // Leaves.
  Scores, // the first contraction's result at a view
  Tensor, // an external tensor at a view
  ConstF,
  ConstI,
  Index, // the coordinate of one logical dim
  Acc,   // a reduction's accumulator, while its body is evaluated
  // Float ops.
  ExtF,
  TruncF,
  Exp,
  Exp2,
  Neg,
  AddF,
  SubF,
  MulF,
  DivF,
  MaxF,
  // Integer and predicate ops.
  AddI,
  SubI,
  MulI,
  IToF,
  CmpI,
  CmpF,
  Select,
  AndI,
  OrI,
  XOrI,
  // Reductions over the key axis and the named softmax.
  RowMax,
  RowSum,
  Softmax,
};

struct Expr {
  ExprKind kind;
  Type type;
  SmallVector<const Expr *, 3> args;
  double f = 0;     // ConstF; reduction init
  int64_t i = 0;    // ConstI; predicate of CmpI/CmpF
  unsigned dim = 0; // Index
  Value value;      // Scores, Tensor
  View view;        // Scores, Tensor
};

bool containsKind(const Expr *e, ExprKind kind);

bool isConstF(const Expr *e, double v) {
  return e->kind == ExprKind::ConstF && e->f == v;
}

/// A value that drives exp to exactly 0: -inf, or the lowest finite f32 (a
/// common stand-in that still underflows whatever the other scores are).
bool isMaskedValue(const Expr *e) {
  return e->kind == ExprKind::ConstF && (e->f == -kInf || e->f == kLowestF32);
}

/// Builds expression trees for the values of a chain.
class ExprBuilder {
public:
  /// In `scoreMode` the builder evaluates the values between the two
  /// contractions: reductions over the key axis are allowed and a
  /// contraction result is the scores leaf. Otherwise it evaluates an
  /// operand of a contraction: only elementwise ops, casts, transposes and
  /// reshapes are seen through, anything else is a tensor leaf.
  ExprBuilder(std::deque<Expr> &pool, const Space &space, bool scoreMode,
              Block *block)
      : space(space), scoreMode(scoreMode), block(block), pool(pool) {}

  FailureOr<const Expr *> build(Value v, const View &view);

  std::string reason;
  std::optional<Refinement> refinement;
  /// Ops evaluated (seen through); in score mode, the chain's ops.
  llvm::SetVector<Operation *> visited;
  /// The first contraction, in score mode.
  Operation *scoresOp = nullptr;

  LogicalResult fail(const Twine &msg) {
    if (reason.empty())
      reason = msg.str();
    return failure();
  }

private:
  const Expr *make(Expr e) {
    pool.push_back(std::move(e));
    return &pool.back();
  }
  const Expr *constF(double v, Type t) {
    Expr e{ExprKind::ConstF, t};
    e.f = v;
    return make(std::move(e));
  }
  const Expr *constI(int64_t v, Type t) {
    Expr e{ExprKind::ConstI, t};
    e.i = v;
    return make(std::move(e));
  }
  const Expr *node(ExprKind kind, Type t, ArrayRef<const Expr *> args) {
    Expr e{kind, t};
    e.args.assign(args.begin(), args.end());
    return make(std::move(e));
  }
  const Expr *coordExpr(const Coord &c, Type indexType);

  FailureOr<const Expr *> buildUncached(Value v, const View &view);
  FailureOr<const Expr *> buildLeaf(Value v, const View &view);
  FailureOr<const Expr *> buildLinalg(linalg::LinalgOp op, OpResult result,
                                      const View &view);
  FailureOr<const Expr *> buildSoftmax(linalg::SoftmaxOp op, const View &view);
  FailureOr<const Expr *> buildTosa(Operation *op, const View &view);
  FailureOr<const Expr *> buildCollapse(Value src, ArrayRef<int64_t> srcShape,
                                        ArrayRef<ReassociationIndices> groups,
                                        const View &view);
  FailureOr<const Expr *> buildExpand(Value src, ArrayRef<int64_t> resultShape,
                                      ArrayRef<ReassociationIndices> groups,
                                      const View &view);
  FailureOr<const Expr *> buildConstant(Attribute attr, Value v,
                                        const View &view);
  FailureOr<const Expr *> applyOp(Operation *op, ArrayRef<const Expr *> args,
                                  Type t);
  FailureOr<const Expr *> buildElementwise(Operation *op, const View &view);
  FailureOr<const Expr *>
  evalScalar(Value v, Region &region,
             function_ref<FailureOr<const Expr *>(BlockArgument)> argExpr,
             function_ref<FailureOr<const Expr *>(int64_t)> indexExpr,
             DenseMap<Value, const Expr *> &memo);

  const Space &space;
  bool scoreMode;
  Block *block;
  std::deque<Expr> &pool;
  std::map<std::pair<void *, std::string>, const Expr *> cache;
};

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
  if (succeeded(e))
    cache[key] = *e;
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
          tensor::ExpandShapeOp>(def) ||
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

FailureOr<const Expr *> ExprBuilder::buildConstant(Attribute attr, Value v,
                                                   const View &view) {
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return buildLeaf(v, view);
  Type elem = dense.getElementType();
  if (isa<FloatType>(elem))
    return constF(dense.getSplatValue<APFloat>().convertToDouble(), elem);
  if (isa<IntegerType, IndexType>(elem))
    return constI(dense.getSplatValue<APInt>().getSExtValue(), elem);
  return buildLeaf(v, view);
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
  SmallVector<std::optional<Coord>> sigma(numLoops);
  for (auto [t, expr] : llvm::enumerate(outMap.getResults())) {
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
  auto binary = [&](ExprKind k) -> FailureOr<const Expr *> {
    // Fold constants so that scales computed in the IR stay constants.
    if (args[0]->kind == ExprKind::ConstF &&
        args[1]->kind == ExprKind::ConstF) {
      double a = args[0]->f, b = args[1]->f;
      switch (k) {
      case ExprKind::AddF:
        return constF(a + b, t);
      case ExprKind::SubF:
        return constF(a - b, t);
      case ExprKind::MulF:
        return constF(a * b, t);
      case ExprKind::DivF:
        return constF(a / b, t);
      default:
        break;
      }
    }
    return node(k, t, args);
  };
  if (isa<arith::AddFOp>(op))
    return binary(ExprKind::AddF);
  if (isa<arith::SubFOp>(op))
    return binary(ExprKind::SubF);
  if (isa<arith::MulFOp>(op))
    return binary(ExprKind::MulF);
  if (isa<arith::DivFOp>(op))
    return binary(ExprKind::DivF);
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op))
    return node(ExprKind::MaxF, t, args);
  if (isa<arith::NegFOp>(op))
    return args[0]->kind == ExprKind::ConstF ? constF(-args[0]->f, t)
                                             : node(ExprKind::Neg, t, args);
  if (isa<math::ExpOp>(op))
    return node(ExprKind::Exp, t, args);
  if (isa<math::Exp2Op>(op))
    return node(ExprKind::Exp2, t, args);
  if (isa<math::SqrtOp>(op) && args[0]->kind == ExprKind::ConstF)
    return constF(std::sqrt(args[0]->f), t);
  if (isa<math::RsqrtOp>(op) && args[0]->kind == ExprKind::ConstF)
    return constF(1.0 / std::sqrt(args[0]->f), t);
  if (isa<arith::ExtFOp>(op))
    return args[0]->kind == ExprKind::ConstF ? constF(args[0]->f, t)
                                             : node(ExprKind::ExtF, t, args);
  if (isa<arith::TruncFOp>(op))
    return node(ExprKind::TruncF, t, args);
  if (isa<arith::AddIOp>(op))
    return node(ExprKind::AddI, t, args);
  if (isa<arith::SubIOp>(op))
    return node(ExprKind::SubI, t, args);
  if (isa<arith::MulIOp>(op))
    return node(ExprKind::MulI, t, args);
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op))
    return args[0];
  if (isa<arith::SIToFPOp, arith::UIToFPOp>(op))
    return node(ExprKind::IToF, t, args);
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
    if (args.size() == 2 && args[0]->kind == ExprKind::ConstF &&
        args[1]->kind == ExprKind::ConstF) {
      double a = args[0]->f, b = args[1]->f;
      if (kind == ExprKind::MulF)
        return constF(a * b, t);
      if (kind == ExprKind::AddF)
        return constF(a + b, t);
      if (kind == ExprKind::SubF)
        return constF(a - b, t);
    }
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
    return node(ExprKind::DivF, t, {constF(1.0, t), *x});
  }
  if (auto sel = dyn_cast<tosa::SelectOp>(op))
    return elementwise(ExprKind::Select,
                       {sel.getInput1(), sel.getInput2(), sel.getInput3()});
  if (auto cast = dyn_cast<tosa::CastOp>(op)) {
    Type from = getElementTypeOrSelf(cast.getInput().getType());
    if (!isa<FloatType>(from) || !isa<FloatType>(t))
      return fail("unsupported tosa.cast");
    if (from.getIntOrFloatBitWidth() < t.getIntOrFloatBitWidth())
      return elementwise(ExprKind::ExtF, {cast.getInput()});
    if (from.getIntOrFloatBitWidth() > t.getIntOrFloatBitWidth())
      return elementwise(ExprKind::TruncF, {cast.getInput()});
    return fail("unsupported tosa.cast");
  }
  if (auto rmax = dyn_cast<tosa::ReduceMaxOp>(op))
    return reduce(ExprKind::RowMax, rmax.getInput(), rmax.getAxis(), -kInf);
  if (auto rsum = dyn_cast<tosa::ReduceSumOp>(op))
    return reduce(ExprKind::RowSum, rsum.getInput(), rsum.getAxis(), 0.0);
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
// Matching the expression against softmax(scale * Q K^T + mask)
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

/// Whether `e` has a node of `kind`, visiting each shared node once.
bool containsKind(const Expr *e, ExprKind kind) {
  llvm::SmallPtrSet<const Expr *, 16> seen;
  SmallVector<const Expr *> worklist = {e};
  while (!worklist.empty()) {
    const Expr *x = worklist.pop_back_val();
    if (x->kind == kind)
      return true;
    for (const Expr *a : x->args)
      if (seen.insert(a).second)
        worklist.push_back(a);
  }
  return false;
}

/// hidden(i, j) iff ai * i + aj * j + c > 0.
struct Linear {
  int64_t ai = 0, aj = 0, c = 0;
  Linear operator-(const Linear &o) const {
    return {ai - o.ai, aj - o.aj, c - o.c};
  }
  Linear negated() const { return {-ai, -aj, -c}; }
  Linear plus(int64_t k) const { return {ai, aj, c + k}; }
};

/// What the scores are, from the inside of the softmax out.
struct ScoreForm {
  double alpha = 1.0;
  const Expr *scores = nullptr;
  const Expr *floatMask = nullptr; // Tensor leaf, float
  const Expr *boolMask = nullptr;  // Tensor leaf, i1
  bool boolMaskHidesWhereTrue = false;
  std::optional<Linear> hide; // index predicate
  bool roundedScores = false;
};

class SoftmaxMatcher {
public:
  SoftmaxMatcher(const Space &space) : space(space) {}

  std::string reason;
  LogicalResult fail(const Twine &msg) {
    if (reason.empty())
      reason = msg.str();
    return failure();
  }

  /// Matches P = softmax(x) (any spelling), possibly rounded to a narrow
  /// type. Fills `form` from x and returns the factor the exponent applies
  /// to x (1 for exp(x - max), ln 2 for exp2(x - max), ...).
  FailureOr<double> matchProbs(const Expr *p, ScoreForm &form,
                               bool &roundedProbs);

  LogicalResult matchScores(const Expr *y, ScoreForm &form, bool scaled);

private:
  LogicalResult matchMaskTerm(const Expr *m, ScoreForm &form, bool scaled);
  LogicalResult matchHide(const Expr *cond, bool hideWhenTrue,
                          const Expr *maskedValue, ScoreForm &form);
  FailureOr<Linear> linearize(const Expr *e);
  FailureOr<Linear> linearizeUncached(const Expr *e);
  FailureOr<Linear> predicate(const Expr *e);
  bool containsScores(const Expr *e) {
    return containsKind(e, ExprKind::Scores);
  }

  const Space &space;
  DenseMap<const Expr *, Linear> linearMemo;
};

/// Peels multiplications and divisions by positive constants off `e`.
const Expr *peelScale(const Expr *e, double &scale) {
  while (true) {
    if (e->kind == ExprKind::MulF) {
      const Expr *a = e->args[0], *b = e->args[1];
      if (a->kind == ExprKind::ConstF)
        std::swap(a, b);
      if (b->kind == ExprKind::ConstF && b->f > 0 && std::isfinite(b->f)) {
        scale *= b->f;
        e = a;
        continue;
      }
    }
    if (e->kind == ExprKind::DivF && e->args[1]->kind == ExprKind::ConstF &&
        e->args[1]->f > 0 && std::isfinite(e->args[1]->f)) {
      scale /= e->args[1]->f;
      e = e->args[0];
      continue;
    }
    return e;
  }
}

FailureOr<double> SoftmaxMatcher::matchProbs(const Expr *p, ScoreForm &form,
                                             bool &roundedProbs) {
  roundedProbs = false;
  if (p->kind == ExprKind::TruncF) {
    roundedProbs = true;
    p = p->args[0];
  }
  if (!p->type.isF32())
    return fail("the softmax is computed in " + typeName(p->type) +
                ", not f32");

  if (p->kind == ExprKind::Softmax) {
    if (failed(matchScores(p->args[0], form, /*scaled=*/false)))
      return failure();
    return 1.0;
  }

  // e / sum(e), e * (1 / sum(e)).
  const Expr *e = nullptr, *sum = nullptr;
  if (p->kind == ExprKind::DivF) {
    e = p->args[0];
    sum = p->args[1];
  } else if (p->kind == ExprKind::MulF) {
    for (int s = 0; s < 2 && !e; ++s) {
      const Expr *r = p->args[1 - s];
      if (r->kind == ExprKind::DivF && isConstF(r->args[0], 1.0)) {
        e = p->args[s];
        sum = r->args[1];
      }
    }
  }
  if (!e || sum->kind != ExprKind::RowSum || !exprEqual(sum->args[0], e))
    return fail("the probabilities are not exp(x) divided by its sum over "
                "the key axis");
  if (sum->f != 0.0)
    return fail("the softmax sum does not start from 0");

  double factor = 1.0;
  if (e->kind == ExprKind::Exp2)
    factor = M_LN2;
  else if (e->kind != ExprKind::Exp)
    return fail("the probabilities are not exp(x) divided by its sum over "
                "the key axis");
  if (!e->type.isF32())
    return fail("the softmax is computed in " + typeName(e->type) +
                ", not f32");

  // The exponent: a * (x - max(x)), or a * x - max(a * x), or
  // a * x - a * max(x).
  double a = 1.0;
  const Expr *t = peelScale(e->args[0], a);
  if (t->kind != ExprKind::SubF)
    return fail("the softmax does not subtract the row max: its overflow "
                "behaviour differs from attn.attention");
  const Expr *x = t->args[0], *m = t->args[1];
  double sx = 1.0, sm = 1.0;
  const Expr *mx = peelScale(m, sm);
  if (mx->kind != ExprKind::RowMax)
    return fail("the softmax does not subtract the row max: its overflow "
                "behaviour differs from attn.attention");
  const Expr *y = nullptr;
  if (sm == 1.0 && exprEqual(mx->args[0], x)) {
    y = x;
  } else {
    const Expr *x0 = peelScale(x, sx);
    if (sx == sm && exprEqual(mx->args[0], x0)) {
      a *= sx;
      y = x0;
    }
  }
  if (!y)
    return fail("the softmax subtracts the max of other values than it "
                "exponentiates");
  if (mx->f != -kInf && mx->f != kLowestF32)
    return fail("the softmax max does not start from -inf or the lowest "
                "finite value");
  if (failed(matchScores(y, form, /*scaled=*/false)))
    return failure();
  return a * factor;
}

LogicalResult SoftmaxMatcher::matchScores(const Expr *y, ScoreForm &form,
                                          bool scaled) {
  switch (y->kind) {
  case ExprKind::Scores:
    if (!y->type.isF32())
      return fail("the first contraction does not accumulate in f32");
    form.scores = y;
    return success();
  case ExprKind::MulF:
  case ExprKind::DivF: {
    double s = 1.0;
    const Expr *inner = peelScale(y, s);
    if (inner == y)
      return fail("the scores are multiplied by a non-constant or "
                  "non-positive value");
    form.alpha *= s;
    return matchScores(inner, form, /*scaled=*/true);
  }
  case ExprKind::AddF: {
    bool lhs = containsScores(y->args[0]), rhs = containsScores(y->args[1]);
    if (lhs == rhs)
      return fail("unsupported sum in the scores");
    const Expr *s = lhs ? y->args[0] : y->args[1];
    const Expr *m = lhs ? y->args[1] : y->args[0];
    if (failed(matchMaskTerm(m, form, scaled)))
      return failure();
    return matchScores(s, form, scaled);
  }
  case ExprKind::Select: {
    const Expr *cond = y->args[0], *a = y->args[1], *b = y->args[2];
    if (isMaskedValue(a) && containsScores(b)) {
      if (failed(matchHide(cond, /*hideWhenTrue=*/true, a, form)))
        return failure();
      return matchScores(b, form, scaled);
    }
    if (isMaskedValue(b) && containsScores(a)) {
      if (failed(matchHide(cond, /*hideWhenTrue=*/false, b, form)))
        return failure();
      return matchScores(a, form, scaled);
    }
    return fail("the scores are selected against a value other than -inf "
                "or the lowest finite value");
  }
  case ExprKind::ExtF: {
    const Expr *inner = y->args[0];
    if (inner->kind != ExprKind::TruncF)
      return fail("the scores are computed in " + typeName(inner->type) +
                  ", not f32");
    form.roundedScores = true;
    return matchScores(inner->args[0], form, scaled);
  }
  default:
    break;
  }
  if (!containsScores(y))
    return fail("the softmax input does not depend on the first "
                "contraction");
  return fail("unsupported computation on the scores");
}

LogicalResult SoftmaxMatcher::matchMaskTerm(const Expr *m, ScoreForm &form,
                                            bool scaled) {
  if (m->kind == ExprKind::Select && m->args.size() == 3) {
    const Expr *cond = m->args[0], *a = m->args[1], *b = m->args[2];
    if (isMaskedValue(a) && (isConstF(b, 0.0)))
      return matchHide(cond, /*hideWhenTrue=*/true, a, form);
    if (isMaskedValue(b) && (isConstF(a, 0.0)))
      return matchHide(cond, /*hideWhenTrue=*/false, b, form);
  }
  const Expr *leaf = m;
  if (leaf->kind == ExprKind::ExtF)
    leaf = leaf->args[0];
  if (leaf->kind == ExprKind::Tensor && isa<FloatType>(leaf->type)) {
    if (scaled)
      return fail("the mask is added before the scale");
    if (form.floatMask || form.boolMask)
      return fail("more than one mask tensor");
    form.floatMask = leaf;
    return success();
  }
  if (m->kind == ExprKind::ConstF)
    return fail("a constant is added to the scores");
  return fail("unsupported term added to the scores");
}

LogicalResult SoftmaxMatcher::matchHide(const Expr *cond, bool hideWhenTrue,
                                        const Expr *maskedValue,
                                        ScoreForm &form) {
  // Peel negations: xor with true.
  while (cond->kind == ExprKind::XOrI) {
    const Expr *a = cond->args[0], *b = cond->args[1];
    if (a->kind == ExprKind::ConstI)
      std::swap(a, b);
    if (b->kind != ExprKind::ConstI || (b->i & 1) == 0)
      break;
    hideWhenTrue = !hideWhenTrue;
    cond = a;
  }
  if (cond->kind == ExprKind::Tensor) {
    if (!cond->type.isInteger(1))
      return fail("the mask condition is not a boolean tensor");
    if (maskedValue->f != -kInf)
      return fail("the boolean mask selects the lowest finite value, not "
                  "-inf: fully masked rows would differ");
    if (form.floatMask || form.boolMask)
      return fail("more than one mask tensor");
    form.boolMask = cond;
    form.boolMaskHidesWhereTrue = hideWhenTrue;
    return success();
  }
  FailureOr<Linear> lin = predicate(cond);
  if (failed(lin))
    return failure();
  if (!hideWhenTrue)
    lin = lin->negated().plus(1);
  if (form.hide)
    return fail("more than one index mask");
  form.hide = *lin;
  return success();
}

FailureOr<Linear> SoftmaxMatcher::linearize(const Expr *e) {
  auto it = linearMemo.find(e);
  if (it != linearMemo.end())
    return it->second;
  FailureOr<Linear> l = linearizeUncached(e);
  if (failed(l))
    return failure();
  // Keep products of coefficients far from overflow.
  constexpr int64_t kLimit = int64_t(1) << 30;
  if (std::abs(l->ai) > kLimit || std::abs(l->aj) > kLimit ||
      std::abs(l->c) > kLimit)
    return fail("the index mask uses out-of-range constants");
  linearMemo[e] = *l;
  return l;
}

FailureOr<Linear> SoftmaxMatcher::linearizeUncached(const Expr *e) {
  switch (e->kind) {
  case ExprKind::Index:
    if (e->dim == space.query)
      return Linear{1, 0, 0};
    if (e->dim == space.key)
      return Linear{0, 1, 0};
    return fail("the index mask depends on other indices than the query and "
                "key positions");
  case ExprKind::ConstI:
    if (e->i > (int64_t(1) << 30) || e->i < -(int64_t(1) << 30))
      return fail("the index mask uses out-of-range constants");
    return Linear{0, 0, e->i};
  case ExprKind::ConstF:
    if (e->f != std::floor(e->f) || std::fabs(e->f) > (1 << 24))
      return fail("the index mask compares with a non-integer");
    return Linear{0, 0, static_cast<int64_t>(e->f)};
  case ExprKind::IToF:
    return linearize(e->args[0]);
  case ExprKind::AddI:
  case ExprKind::SubI: {
    FailureOr<Linear> a = linearize(e->args[0]), b = linearize(e->args[1]);
    if (failed(a) || failed(b))
      return failure();
    if (e->kind == ExprKind::AddI)
      return Linear{a->ai + b->ai, a->aj + b->aj, a->c + b->c};
    return *a - *b;
  }
  case ExprKind::MulI: {
    const Expr *x = e->args[0], *k = e->args[1];
    if (x->kind == ExprKind::ConstI)
      std::swap(x, k);
    if (k->kind != ExprKind::ConstI || k->i > (int64_t(1) << 30) ||
        k->i < -(int64_t(1) << 30))
      return fail("the index mask is not linear in the indices");
    FailureOr<Linear> a = linearize(x);
    if (failed(a))
      return failure();
    return Linear{a->ai * k->i, a->aj * k->i, a->c * k->i};
  }
  default:
    return fail("unsupported index computation in a mask");
  }
}

FailureOr<Linear> SoftmaxMatcher::predicate(const Expr *e) {
  if (e->kind != ExprKind::CmpI && e->kind != ExprKind::CmpF)
    return fail("the mask condition is neither a boolean tensor nor an "
                "index comparison");
  FailureOr<Linear> a = linearize(e->args[0]), b = linearize(e->args[1]);
  if (failed(a) || failed(b))
    return failure();
  Linear d = *a - *b;
  int64_t sq = space.size(space.query), sk = space.size(space.key);
  auto nonNegative = [&](Linear l) {
    // The minimum over the box [0, Sq) x [0, Sk).
    int64_t lo = l.c + std::min<int64_t>(0, l.ai * (sq - 1)) +
                 std::min<int64_t>(0, l.aj * (sk - 1));
    return lo >= 0;
  };
  if (e->kind == ExprKind::CmpI) {
    using P = arith::CmpIPredicate;
    auto pred = static_cast<P>(e->i);
    if (pred == P::ugt || pred == P::uge || pred == P::ult || pred == P::ule) {
      if (!nonNegative(*a) || !nonNegative(*b))
        return fail("the index mask compares possibly negative values "
                    "unsigned");
    }
    switch (pred) {
    case P::sgt:
    case P::ugt:
      return d;
    case P::sge:
    case P::uge:
      return d.plus(1);
    case P::slt:
    case P::ult:
      return d.negated();
    case P::sle:
    case P::ule:
      return d.negated().plus(1);
    default:
      return fail("the index mask uses an equality comparison");
    }
  }
  using P = arith::CmpFPredicate;
  switch (static_cast<P>(e->i)) {
  case P::OGT:
  case P::UGT:
    return d;
  case P::OGE:
  case P::UGE:
    return d.plus(1);
  case P::OLT:
  case P::ULT:
    return d.negated();
  case P::OLE:
  case P::ULE:
    return d.negated().plus(1);
  default:
    return fail("unsupported float comparison in the index mask");
  }
}

/// What a contraction operand is: a constant times a tensor, maybe extended
/// from a narrow type.
struct OperandForm {
  double scale = 1.0;
  const Expr *leaf = nullptr;
  /// The type the leaf is extended to f32 from, when it is.
  Type narrow;
};

LogicalResult matchOperand(const Expr *e, OperandForm &form,
                           std::string &reason, StringRef name) {
  double s = 1.0;
  e = peelScale(e, s);
  form.scale *= s;
  if (e->kind == ExprKind::ExtF) {
    if (form.narrow) {
      reason = (name + " is extended twice").str();
      return failure();
    }
    form.narrow = e->args[0]->type;
    return matchOperand(e->args[0], form, reason, name);
  }
  if (e->kind == ExprKind::Tensor) {
    form.leaf = e;
    return success();
  }
  if (e->kind == ExprKind::MulF || e->kind == ExprKind::DivF) {
    reason =
        (name + " is scaled by a non-constant or non-positive value").str();
    return failure();
  }
  reason = (name + " is computed by ops attn-raise does not fold").str();
  return failure();
}

//===----------------------------------------------------------------------===//
// The chain
//===----------------------------------------------------------------------===//

/// Everything the rewrite needs, all checked.
struct Chain {
  /// Owns the expressions below.
  std::shared_ptr<std::deque<Expr>> pool = std::make_shared<std::deque<Expr>>();
  Space space;
  Contraction first, second;
  /// Leaves: the tensors attn.attention reads, with their views.
  const Expr *query = nullptr, *key = nullptr, *value = nullptr;
  const Expr *mask = nullptr;
  bool invertBoolMask = false;
  double scale = 1.0;
  CausalKind causal = CausalKind::None;
  /// The element type attn.attention works in; narrow leaves are extended
  /// when it is f32.
  Type elementType;
  /// The value the attention output replaces and its view.
  Value target;
  View targetView;
  /// Ops to erase once the target is replaced (the chain proper).
  SmallVector<Operation *> chainOps;
};

View applyMap(AffineMap map, ArrayRef<Coord> sigma) {
  View v;
  for (AffineExpr e : map.getResults())
    v.push_back(sigma[cast<AffineDimExpr>(e).getPosition()]);
  return v;
}

/// The view of the result of `op` when it only truncates its one operand,
/// whose view is `view`, elementwise: tosa.cast, or a linalg op whose body
/// is one arith.truncf.
std::optional<View> truncationView(Operation *op, const View &view) {
  if (isa<tosa::CastOp>(op))
    return view;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumDpsInputs() != 1 ||
      linalgOp.getNumDpsInits() != 1 || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumReductionLoops() != 0)
    return std::nullopt;
  Block *body = linalgOp.getBlock();
  if (!body || !llvm::hasSingleElement(body->without_terminator()))
    return std::nullopt;
  auto trunc = dyn_cast<arith::TruncFOp>(body->front());
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
  if (!trunc || trunc.getIn() != body->getArgument(0) ||
      yield.getOperand(0) != trunc.getResult() || !maps[0].isPermutation() ||
      !maps[1].isPermutation())
    return std::nullopt;
  // Result dim r is loop maps[1][r], read from the operand's dim s with
  // maps[0][s] == maps[1][r].
  View result;
  for (AffineExpr e : maps[1].getResults())
    for (auto [s, e0] : llvm::enumerate(maps[0].getResults()))
      if (e0 == e)
        result.push_back(view[s]);
  return result;
}

bool isSupportedFloat(Type t) { return t.isF32() || t.isF16() || t.isBF16(); }

/// Checks a contraction's operands and result for shapes attn-raise handles.
LogicalResult checkShapes(ValueRange values, std::string &reason) {
  for (Value v : values) {
    auto t = cast<RankedTensorType>(v.getType());
    if (!t.hasStaticShape()) {
      reason = "dynamic shapes are not supported";
      return failure();
    }
    if (!getStaticElementCount(t)) {
      reason = kTooManyElements;
      return failure();
    }
    if (t.getNumElements() == 0) {
      reason = "a tensor in the chain has a zero-sized dimension";
      return failure();
    }
  }
  return success();
}

/// Analyses the chain ending in a second contraction whose operand
/// `probsOperand` holds the probabilities.
class ChainAnalysis {
public:
  ChainAnalysis(const Contraction &second, unsigned probsOperand)
      : second(second), pIdx(probsOperand), vIdx(1 - probsOperand) {}

  /// Analyses the chain; on failure `reason` says why.
  FailureOr<Chain> run();

  std::string reason;

private:
  LogicalResult fail(const Twine &msg) {
    if (reason.empty())
      reason = msg.str();
    return failure();
  }
  /// One attempt with the batch loops of the second contraction split into
  /// `factors`; sets `refinement` when a reshape needs a finer split.
  FailureOr<Chain> runWith(SmallVectorImpl<SmallVector<int64_t>> &factors);

  LogicalResult buildSpace(SmallVectorImpl<SmallVector<int64_t>> &factors);
  LogicalResult matchFirst(const ScoreForm &form);
  LogicalResult matchOperand(const Contraction &c, unsigned idx,
                             const View &view, StringRef name,
                             OperandForm &out);
  LogicalResult matchMasks(const ScoreForm &form);
  void matchOutput(Type narrow, SmallVectorImpl<Operation *> &outputOps);
  LogicalResult checkUses(const llvm::SetVector<Operation *> &ops);

  const Contraction &second;
  unsigned pIdx, vIdx;
  std::optional<Refinement> refinement;
  // State of one attempt.
  Chain chain;
  SmallVector<Coord> sigma2;
  Contraction first;
  SmallVector<Coord> sigma1;
  unsigned qIdx = 0, kIdx = 1;
};

FailureOr<Chain> ChainAnalysis::run() {
  // The batch loops of the second contraction, each split into the factors
  // that the reshapes along the chain need.
  SmallVector<SmallVector<int64_t>> factors;
  for (int attempt = 0; attempt < 8; ++attempt) {
    reason.clear();
    refinement.reset();
    chain = Chain();
    FailureOr<Chain> result = runWith(factors);
    if (succeeded(result) || !refinement)
      return result;
    // Logical batch dims are numbered like the flattened factors.
    unsigned seen = 0;
    bool done = false;
    for (SmallVector<int64_t> &list : factors) {
      for (size_t k = 0; k < list.size() && !done; ++k, ++seen) {
        if (seen != refinement->dim)
          continue;
        int64_t n = list[k];
        list[k] = n / refinement->factor;
        list.insert(list.begin() + k + 1, refinement->factor);
        done = true;
      }
    }
    if (!done)
      break;
  }
  reason = "a reshape does not align with the batch dims";
  return failure();
}

LogicalResult
ChainAnalysis::buildSpace(SmallVectorImpl<SmallVector<int64_t>> &factors) {
  const Contraction &c2 = second;
  unsigned numLoops = c2.loopSizes.size();
  AffineMap pMap = c2.maps[pIdx], vMap = c2.maps[vIdx], oMap = c2.maps[2];
  SmallVector<unsigned> queryLike, valueLike;
  SmallVector<bool> isBatch(numLoops, false);
  for (unsigned l = 0; l < numLoops; ++l) {
    if (l == c2.reduction)
      continue;
    bool inP = pMap.isFunctionOfDim(l), inV = vMap.isFunctionOfDim(l);
    if (inP && inV)
      isBatch[l] = true;
    else if (inP)
      queryLike.push_back(l);
    else if (inV)
      valueLike.push_back(l);
    else
      return fail("the second contraction broadcasts into its output");
  }
  if (queryLike.empty() || valueLike.size() != 1)
    return fail("the second contraction is not probabilities times values");
  // The query axis is the last query-like dim of the output; the others are
  // batch dims the values are shared across.
  SmallVector<unsigned> outLoops;
  for (AffineExpr e : oMap.getResults())
    outLoops.push_back(cast<AffineDimExpr>(e).getPosition());
  unsigned queryLoop = queryLike.front();
  for (unsigned l : outLoops)
    if (llvm::is_contained(queryLike, l))
      queryLoop = l;
  for (unsigned l : queryLike)
    if (l != queryLoop)
      isBatch[l] = true;

  // Batch dims first, in output order, so that logical dim k is the k-th
  // factor.
  Space &space = chain.space;
  sigma2.assign(numLoops, Coord());
  unsigned batchLoopNo = 0;
  for (unsigned l : outLoops) {
    if (!isBatch[l])
      continue;
    if (factors.size() <= batchLoopNo)
      factors.push_back({c2.loopSizes[l]});
    SmallVector<Coord> parts;
    for (int64_t f : factors[batchLoopNo]) {
      unsigned d = space.add(Role::Batch, f);
      space.batch.push_back(d);
      parts.push_back(Coord{{d, 1}});
    }
    sigma2[l] = mergeCoords(parts, factors[batchLoopNo]);
    ++batchLoopNo;
  }
  space.query = space.add(Role::Query, c2.loopSizes[queryLoop]);
  sigma2[queryLoop] = Coord{{space.query, 1}};
  space.valueDim = space.add(Role::ValueDim, c2.loopSizes[valueLike.front()]);
  sigma2[valueLike.front()] = Coord{{space.valueDim, 1}};
  space.key = space.add(Role::Key, c2.loopSizes[c2.reduction]);
  sigma2[c2.reduction] = Coord{{space.key, 1}};
  if (space.batch.size() > 2)
    return fail("more than two batch dimensions");
  return success();
}

/// Whether `init` is a tensor of zeros.
bool isZeroInit(std::deque<Expr> &pool, const Space &space, Value init) {
  ExprBuilder builder(pool, space, /*scoreMode=*/false, nullptr);
  View view(cast<RankedTensorType>(init.getType()).getRank());
  FailureOr<const Expr *> e = builder.build(init, view);
  return succeeded(e) && (*e)->kind == ExprKind::ConstF && (*e)->f == 0.0;
}

LogicalResult ChainAnalysis::matchFirst(const ScoreForm &form) {
  Space &space = chain.space;
  FailureOr<Contraction> c1 =
      matchContraction(form.scores->value.getDefiningOp());
  if (failed(c1))
    return fail("the scores are not computed by a contraction");
  first = *c1;
  if (!first.accType.isF32())
    return fail("the first contraction accumulates in " +
                typeName(first.accType) + ", not f32");
  if (failed(checkShapes({first.operands[0], first.operands[1]}, reason)))
    return failure();
  if (first.init && !isZeroInit(*chain.pool, space, first.init))
    return fail("the first contraction accumulates into a non-zero tensor");

  // Loop coordinates from the scores' view.
  unsigned numLoops = first.loopSizes.size();
  SmallVector<std::optional<Coord>> sigma(numLoops);
  for (auto [t, e] : llvm::enumerate(first.maps[2].getResults()))
    sigma[cast<AffineDimExpr>(e).getPosition()] = form.scores->view[t];
  std::optional<unsigned> iLoop, jLoop;
  for (unsigned l = 0; l < numLoops; ++l) {
    if (l == first.reduction)
      continue;
    const Coord &c = *sigma[l];
    if (c.size() == 1 && c[0].dim == space.query && c[0].stride == 1)
      iLoop = l;
    else if (c.size() == 1 && c[0].dim == space.key && c[0].stride == 1)
      jLoop = l;
    else if (llvm::any_of(c, [&](const Term &t) {
               return t.dim == space.query || t.dim == space.key;
             }))
      return fail("the scores are read reshaped across the query and key "
                  "axes");
  }
  if (!iLoop || !jLoop)
    return fail("the scores do not span the query and key axes");
  for (unsigned b : space.batch) {
    bool found = false;
    for (unsigned l = 0; l < numLoops; ++l)
      if (l != first.reduction &&
          llvm::any_of(*sigma[l], [&](const Term &t) { return t.dim == b; }))
        found = true;
    if (!found)
      return fail("the scores are broadcast across a batch dimension");
  }
  space.headDim = space.add(Role::HeadDim, first.loopSizes[first.reduction]);
  sigma[first.reduction] = Coord{{space.headDim, 1}};
  sigma1.clear();
  for (std::optional<Coord> &c : sigma)
    sigma1.push_back(*c);

  bool q0 = first.maps[0].isFunctionOfDim(*iLoop),
       q1 = first.maps[1].isFunctionOfDim(*iLoop);
  if (q0 == q1)
    return fail("the first contraction is not queries times keys");
  qIdx = q0 ? 0 : 1;
  kIdx = 1 - qIdx;
  if (first.maps[qIdx].isFunctionOfDim(*jLoop) ||
      !first.maps[kIdx].isFunctionOfDim(*jLoop))
    return fail("the first contraction is not queries times keys");
  return success();
}

LogicalResult ChainAnalysis::matchOperand(const Contraction &c, unsigned idx,
                                          const View &view, StringRef name,
                                          OperandForm &out) {
  ExprBuilder builder(*chain.pool, chain.space, /*scoreMode=*/false,
                      c.op->getBlock());
  FailureOr<const Expr *> e = builder.build(c.operands[idx], view);
  if (failed(e)) {
    refinement = builder.refinement;
    return fail(builder.reason);
  }
  std::string why;
  if (failed(::matchOperand(*e, out, why, name)))
    return fail(why);
  if (c.extends[idx]) {
    if (out.narrow)
      return fail(name + " is extended twice");
    out.narrow = out.leaf->type;
  }
  Type leaf = out.leaf->type;
  if (!isSupportedFloat(leaf))
    return fail(name + " has element type " + typeName(leaf) +
                ", not f16, bf16 or f32");
  if (out.narrow && !(out.narrow.isF16() || out.narrow.isBF16()))
    return fail(name + " is extended from an unsupported type");
  return success();
}

LogicalResult ChainAnalysis::matchMasks(const ScoreForm &form) {
  const Space &space = chain.space;
  int64_t sq = space.size(space.query), sk = space.size(space.key);
  if (form.hide) {
    Linear h = *form.hide;
    // Hidden iff j - i + c > 0, i.e. j > i + offset.
    if (h.ai != -1 || h.aj != 1)
      return fail("the index mask is not causal");
    int64_t offset = -h.c;
    if (offset == 0)
      chain.causal = CausalKind::TopLeft;
    else if (offset == sk - sq)
      chain.causal = CausalKind::BottomRight;
    else
      return fail("the index mask hides keys after diagonal i + " +
                  Twine(offset) + ", neither top-left (0) nor bottom-right (" +
                  Twine(sk - sq) + ")");
    if (chain.causal == CausalKind::BottomRight && sq > sk)
      return fail("a bottom-right causal mask with Sq > Sk hides whole "
                  "rows, which attn.attention sets to 0");
  }
  if (form.floatMask) {
    if (!isSupportedFloat(form.floatMask->type))
      return fail("the mask has element type " +
                  typeName(form.floatMask->type) + ", not f16, bf16 or f32");
    chain.mask = form.floatMask;
  } else if (form.boolMask) {
    chain.mask = form.boolMask;
    chain.invertBoolMask = form.boolMaskHidesWhereTrue;
  }
  return success();
}

/// Walks from the second contraction's result through single-use reshapes
/// and at most one truncation to `narrow`, updating the chain's target.
void ChainAnalysis::matchOutput(Type narrow,
                                SmallVectorImpl<Operation *> &outputOps) {
  const Space &space = chain.space;
  Block *block = second.op->getBlock();
  bool truncated = false;
  while (chain.target.hasOneUse()) {
    Operation *user = *chain.target.getUsers().begin();
    if (user->getBlock() != block || user->getNumResults() != 1)
      break;
    auto srcType = cast<RankedTensorType>(chain.target.getType());
    auto dstType = dyn_cast<RankedTensorType>(user->getResult(0).getType());
    if (!dstType || !dstType.hasStaticShape())
      break;
    std::optional<View> next;
    auto collapse = [&](ArrayRef<ReassociationIndices> groups) {
      View v;
      for (const ReassociationIndices &group : groups) {
        SmallVector<Coord> coords;
        SmallVector<int64_t> sizes;
        for (int64_t d : group) {
          coords.push_back(chain.targetView[d]);
          sizes.push_back(srcType.getDimSize(d));
        }
        v.push_back(mergeCoords(coords, sizes));
      }
      next = v;
    };
    auto expand = [&](ArrayRef<ReassociationIndices> groups) {
      View v(dstType.getRank());
      for (auto [g, group] : llvm::enumerate(groups)) {
        SmallVector<int64_t> sizes;
        for (int64_t d : group)
          sizes.push_back(dstType.getDimSize(d));
        SmallVector<Coord> parts;
        std::string why;
        // A reshape that cuts a logical batch dim asks for a finer split;
        // one that does not align is left out of the chain.
        if (failed(splitCoord(space, chain.targetView[g], sizes, parts,
                              refinement, why)))
          return;
        for (auto [d, part] : llvm::zip_equal(group, parts))
          v[d] = part;
      }
      next = v;
    };
    if (auto op = dyn_cast<tensor::CollapseShapeOp>(user)) {
      collapse(op.getReassociationIndices());
    } else if (auto op = dyn_cast<tensor::ExpandShapeOp>(user)) {
      expand(op.getReassociationIndices());
    } else if (isa<tosa::ReshapeOp>(user)) {
      if (srcType.getRank() > dstType.getRank()) {
        if (auto groups = getReassociationIndicesForCollapse(
                srcType.getShape(), dstType.getShape()))
          collapse(*groups);
      } else if (srcType.getRank() < dstType.getRank()) {
        if (auto groups = getReassociationIndicesForCollapse(
                dstType.getShape(), srcType.getShape()))
          expand(*groups);
      }
    } else if (!truncated && narrow && dstType.getElementType() == narrow) {
      next = truncationView(user, chain.targetView);
      truncated = next.has_value();
    }
    if (!next)
      break;
    outputOps.push_back(user);
    chain.target = user->getResult(0);
    chain.targetView = *next;
  }
  // Without a truncation the op works in f32 so that O is not rounded.
  chain.elementType =
      truncated ? narrow : Float32Type::get(second.op->getContext());
}

LogicalResult
ChainAnalysis::checkUses(const llvm::SetVector<Operation *> &ops) {
  Block *block = second.op->getBlock();
  // Nothing but the chain may use the scores, probabilities or what lies
  // between them.
  for (Operation *op : ops) {
    if (op->getBlock() != block)
      return fail("the chain spans several blocks");
    for (Operation *user : op->getUsers())
      if (user != second.op && !ops.contains(user))
        return fail("the result of '" + op->getName().getStringRef() +
                    "' in the chain is also used by '" +
                    user->getName().getStringRef() + "' outside it");
  }
  // The tensors the op reads must not be computed from the chain.
  for (auto [leaf, name] :
       {std::make_pair(chain.query, "query"), std::make_pair(chain.key, "key"),
        std::make_pair(chain.value, "value"),
        std::make_pair(chain.mask, "mask")}) {
    if (!leaf)
      continue;
    Operation *def = leaf->value.getDefiningOp();
    if (!def)
      continue;
    SetVector<Operation *> slice;
    BackwardSliceOptions options;
    options.filter = [&](Operation *op) { return op->getBlock() == block; };
    (void)getBackwardSlice(def, &slice, options);
    slice.insert(def);
    if (llvm::any_of(slice, [&](Operation *op) { return ops.contains(op); }))
      return fail(Twine("the ") + name + " is computed from the scores");
  }
  return success();
}

FailureOr<Chain>
ChainAnalysis::runWith(SmallVectorImpl<SmallVector<int64_t>> &factors) {
  const Contraction &c2 = second;
  Block *block = c2.op->getBlock();
  if (!c2.accType.isF32())
    return fail("the second contraction accumulates in " +
                typeName(c2.accType) + ", not f32");
  if (failed(checkShapes({c2.operands[0], c2.operands[1], c2.result}, reason)))
    return failure();
  if (failed(buildSpace(factors)))
    return failure();
  Space &space = chain.space;

  // Stage 2: the probabilities as an expression.
  ExprBuilder scores(*chain.pool, space, /*scoreMode=*/true, block);
  FailureOr<const Expr *> probs =
      scores.build(c2.operands[pIdx], applyMap(c2.maps[pIdx], sigma2));
  if (failed(probs)) {
    refinement = scores.refinement;
    return fail(scores.reason);
  }

  // Stage 3: the softmax and the scores.
  SoftmaxMatcher matcher(space);
  ScoreForm form;
  bool roundedProbs = false;
  FailureOr<double> expFactor = matcher.matchProbs(*probs, form, roundedProbs);
  if (failed(expFactor))
    return fail(matcher.reason);
  if (c2.extends[pIdx] && !roundedProbs)
    return fail("the second contraction extends probabilities that are not "
                "computed in f32");
  if (form.floatMask && std::fabs(*expFactor - 1.0) > 1e-6)
    return fail("the softmax exponent scales the mask");
  if (c2.init && !isZeroInit(*chain.pool, space, c2.init))
    return fail("the second contraction accumulates into a non-zero tensor");
  if (failed(matchFirst(form)))
    return failure();

  // The operands and what they share.
  OperandForm qf, kf, vf;
  if (failed(matchOperand(first, qIdx, applyMap(first.maps[qIdx], sigma1),
                          "the query", qf)) ||
      failed(matchOperand(first, kIdx, applyMap(first.maps[kIdx], sigma1),
                          "the key", kf)) ||
      failed(matchOperand(c2, vIdx, applyMap(c2.maps[vIdx], sigma2),
                          "the value", vf)))
    return failure();
  if (vf.scale != 1.0)
    return fail("the values are scaled");
  for (unsigned b : space.batch)
    if (!viewMentions(qf.leaf->view, b))
      return fail("the query is shared across a batch dimension");
  if (!space.batch.empty()) {
    unsigned heads = space.batch.back();
    for (unsigned b : space.batch) {
      if (b == heads)
        continue;
      if (!viewMentions(kf.leaf->view, b) || !viewMentions(vf.leaf->view, b))
        return fail("the keys or values are shared across the batch");
    }
    if (viewMentions(kf.leaf->view, heads) !=
        viewMentions(vf.leaf->view, heads))
      return fail("the keys and values are not shared alike across heads");
  }
  chain.query = qf.leaf;
  chain.key = kf.leaf;
  chain.value = vf.leaf;

  chain.scale = form.alpha * *expFactor * qf.scale * kf.scale;
  float scale32 = static_cast<float>(chain.scale);
  if (!std::isfinite(scale32) || scale32 <= 0.0f)
    return fail("the folded scale is not a finite positive f32");
  if (failed(matchMasks(form)))
    return failure();

  chain.target = c2.result;
  chain.targetView = applyMap(c2.maps[2], sigma2);
  SmallVector<Operation *> outputOps;
  Type narrow = qf.narrow && qf.narrow == kf.narrow && qf.narrow == vf.narrow
                    ? qf.narrow
                    : Type();
  matchOutput(narrow, outputOps);
  if (refinement)
    return failure();

  llvm::SetVector<Operation *> ops = scores.visited;
  ops.insert(first.op);
  if (failed(checkUses(ops)))
    return failure();
  chain.first = first;
  chain.second = c2;
  chain.chainOps.assign(ops.begin(), ops.end());
  chain.chainOps.push_back(c2.op);
  chain.chainOps.append(outputOps.begin(), outputOps.end());
  return std::move(chain);
}

//===----------------------------------------------------------------------===//
// Rewriting
//===----------------------------------------------------------------------===//

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

/// Whether `c` merges its logical dims row-major; returns its extent.
std::optional<int64_t> rowMajorExtent(const Coord &c, const Space &space) {
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
SmallVector<ReassociationIndices> unitGroups(ArrayRef<bool> keep) {
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

/// The operand orders of attn.attention: [B, H, S, X] or [B, S, H, X] in
/// logical dims, -1 for the unit dims of a problem with fewer batch dims.
SmallVector<int> operandOrder(const Space &space, unsigned seq, unsigned last,
                              Layout layout) {
  SmallVector<int> order;
  if (space.batch.size() == 2 && layout == Layout::BSHD)
    return {static_cast<int>(space.batch[0]), static_cast<int>(seq),
            static_cast<int>(space.batch[1]), static_cast<int>(last)};
  for (size_t k = space.batch.size(); k < 2; ++k)
    order.push_back(-1);
  for (unsigned b : space.batch)
    order.push_back(b);
  order.push_back(seq);
  order.push_back(last);
  return order;
}

/// The logical dims a view holds, in storage order.
SmallVector<int> storedDims(const View &view) {
  SmallVector<int> dims;
  for (const Coord &c : view)
    for (const Term &t : c)
      dims.push_back(t.dim);
  return dims;
}

/// Whether the dims of `view` come in `order` already.
bool storedInOrder(const View &view, ArrayRef<int> order) {
  SmallVector<int> dims = storedDims(view);
  SmallVector<int> filtered;
  for (int d : order)
    if (d >= 0 && llvm::is_contained(dims, d))
      filtered.push_back(d);
  return filtered == dims;
}

/// Emits attn.attention for `chain` and returns the value that replaces the
/// chain's target; with a null builder only checks that it can.
FailureOr<Value> emitAttention(OpBuilder *b, Location loc, const Chain &chain,
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
  Layout layout = space.batch.size() == 2 && storedAs(Layout::BSHD) &&
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
    return emitter.read(v, leaf->view, operandOrder(space, seq, last, layout));
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
  auto oType = RankedTensorType::get(oShape, chain.elementType);
  Emitter::Val o{Value(), oType};
  if (b)
    o.value = AttentionOp::create(
                  *b, loc, oType, Type(), q->value, k->value, v->value, mask,
                  b->getF32FloatAttr(static_cast<float>(chain.scale)),
                  chain.causal, IntegerAttr(), layout)
                  .getOutput();
  FailureOr<Emitter::Val> out =
      emitter.write(o, oOrder, chain.targetView,
                    cast<RankedTensorType>(chain.target.getType()));
  if (failed(out)) {
    reason = "the output's view needs a copy";
    return failure();
  }
  return out->value;
}

/// Replaces `chain` with attn.attention; the chain has been checked with
/// emitAttention(nullptr, ...).
void rewriteChain(RewriterBase &rewriter, const Chain &chain) {
  Operation *anchor = chain.second.op;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(anchor);
  std::string reason;
  Value out = *emitAttention(&rewriter, anchor->getLoc(), chain, reason);
  rewriter.replaceAllUsesWith(chain.target, out);

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

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

/// Whether an op exponentiates: tosa.exp or a body with math.exp / exp2.
bool exponentiates(Operation *op) {
  if (isa<tosa::ExpOp>(op))
    return true;
  bool exps = false;
  op->walk([&](Operation *inner) {
    if (isa<math::ExpOp, math::Exp2Op>(inner))
      exps = true;
  });
  return exps;
}

/// Whether the ops computing `v`, back to the contractions, include a
/// softmax (linalg.softmax or an exponential); adds them to `slice`.
bool feedsFromSoftmax(Value v, llvm::DenseSet<Operation *> &slice) {
  SmallVector<Value> worklist = {v};
  llvm::SmallPtrSet<Operation *, 16> seen;
  bool found = false;
  while (!worklist.empty() && seen.size() < 256) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (!op || !seen.insert(op).second)
      continue;
    if (succeeded(matchContraction(op)))
      continue;
    slice.insert(op);
    if (isa<linalg::SoftmaxOp>(op) || exponentiates(op))
      found = true;
    for (Value operand : op->getOperands())
      worklist.push_back(operand);
  }
  return found;
}

/// Whether `op` is the centre of a softmax: linalg.softmax, or a max
/// reduction whose result is exponentiated within a few ops.
bool isSoftmaxCentre(Operation *op) {
  // attn-raise works on tensors; chains on buffers are no candidates.
  if (op->getNumResults() == 0)
    return false;
  if (isa<linalg::SoftmaxOp>(op))
    return true;
  bool isMax = isa<tosa::ReduceMaxOp>(op);
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    if (linalgOp.getNumReductionLoops() == 1 && linalgOp.getBlock()) {
      auto yield =
          dyn_cast<linalg::YieldOp>(linalgOp.getBlock()->getTerminator());
      isMax = yield && yield.getNumOperands() == 1 &&
              isa_and_nonnull<arith::MaximumFOp, arith::MaxNumFOp>(
                  yield.getOperand(0).getDefiningOp());
    }
  }
  if (!isMax)
    return false;
  SmallVector<std::pair<Operation *, int>> worklist = {{op, 0}};
  while (!worklist.empty()) {
    auto [current, depth] = worklist.pop_back_val();
    if (current != op && exponentiates(current))
      return true;
    if (depth == 3)
      continue;
    for (Operation *user : current->getUsers())
      worklist.push_back({user, depth + 1});
  }
  return false;
}

/// The outcome of trying one candidate.
struct Attempt {
  bool candidate = false;
  bool fused = false;
  std::string reason;
};

Attempt tryRaise(RewriterBase &rewriter, Operation *op,
                 llvm::DenseSet<Operation *> &covered) {
  Attempt attempt;
  FailureOr<Contraction> c2 = matchContraction(op);
  if (failed(c2))
    return attempt;
  std::optional<unsigned> probs;
  for (unsigned i = 0; i < 2; ++i)
    if (feedsFromSoftmax(c2->operands[i], covered) && !probs)
      probs = i;
  if (!probs)
    return attempt;
  attempt.candidate = true;
  ChainAnalysis analysis(*c2, *probs);
  FailureOr<Chain> chain = analysis.run();
  if (failed(chain)) {
    attempt.reason = analysis.reason;
    return attempt;
  }
  if (failed(emitAttention(nullptr, op->getLoc(), *chain, attempt.reason)))
    return attempt;
  rewriteChain(rewriter, *chain);
  attempt.fused = true;
  return attempt;
}

struct RaiseAttentionChain : RewritePattern {
  RaiseAttentionChain(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<linalg::LinalgOp, tosa::MatMulOp>(op))
      return rewriter.notifyMatchFailure(op, "not a contraction");
    llvm::DenseSet<Operation *> covered;
    Attempt attempt = tryRaise(rewriter, op, covered);
    if (attempt.fused)
      return success();
    return rewriter.notifyMatchFailure(
        op, attempt.reason.empty() ? "not an attention chain" : attempt.reason);
  }
};

struct AttnRaisePass : public attn::impl::AttnRaisePassBase<AttnRaisePass> {
  using Base::Base;
  void runOnOperation() override;
};

void AttnRaisePass::runOnOperation() {
  SmallVector<Operation *> candidates;
  getOperation()->walk([&](Operation *op) {
    if (isa<linalg::LinalgOp, tosa::MatMulOp>(op))
      candidates.push_back(op);
  });

  // Ops erased by earlier rewrites must not be visited again.
  struct Listener : RewriterBase::Listener {
    llvm::DenseSet<Operation *> erased;
    void notifyOperationErased(Operation *op) override { erased.insert(op); }
  } listener;
  IRRewriter rewriter(&getContext(), &listener);

  llvm::DenseSet<Operation *> covered;
  for (Operation *op : candidates) {
    if (listener.erased.contains(op))
      continue;
    Attempt attempt = tryRaise(rewriter, op, covered);
    if (!attempt.candidate)
      continue;
    if (attempt.fused) {
      ++numFused;
      continue;
    }
    ++numUnfused;
    if (reportUnfused)
      op->emitRemark() << "attn-raise: not fused: " << attempt.reason;
  }

  // Softmaxes that no candidate chain reached.
  getOperation()->walk([&](Operation *op) {
    if (covered.contains(op) || !isSoftmaxCentre(op))
      return;
    ++numUnfused;
    if (reportUnfused)
      op->emitRemark() << "attn-raise: not fused: no contraction in the same "
                          "block reads the softmax";
  });
}

} // namespace

void attn::populateAttnRaisePatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseAttentionChain>(patterns.getContext());
}
