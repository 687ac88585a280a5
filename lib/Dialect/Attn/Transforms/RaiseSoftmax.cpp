//===- RaiseSoftmax.cpp - attn-raise's softmax matcher
//----------------------===//
//
// Matches the expression of the probabilities against
// softmax(scale * Q K^T + mask) in its spellings, and the contraction
// operands against a constant times a tensor.
//
//===----------------------------------------------------------------------===//

#include "Raise.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

namespace mlir::attn::raise {

//===----------------------------------------------------------------------===//
// Matching the expression against softmax(scale * Q K^T + mask)
//===----------------------------------------------------------------------===//

/// Peels multiplications and divisions by positive constants off `e`.
static const Expr *peelScale(const Expr *e, double &scale) {
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

/// The max reduction of `m` when it starts from -inf or the lowest finite
/// value (so that it is the row max whatever the scores); null otherwise.
static const Expr *rowMax(const Expr *m) {
  if (m->kind != ExprKind::RowMax || !isLowestValue(m->f, m->type))
    return nullptr;
  return m;
}

/// Whether `m` is the row max of `x` and `log` the log of
/// sum(exp(x - m)).
static bool isMaxAndLogSum(const Expr *x, const Expr *m, const Expr *log) {
  if (!rowMax(m) || log->kind != ExprKind::Log || !exprEqual(m->args[0], x))
    return false;
  const Expr *sum = log->args[0];
  if (sum->kind != ExprKind::RowSum || sum->f != 0.0)
    return false;
  const Expr *e = sum->args[0];
  return e->kind == ExprKind::Exp && e->args[0]->kind == ExprKind::SubF &&
         exprEqual(e->args[0]->args[0], x) && exprEqual(e->args[0]->args[1], m);
}

bool SoftmaxMatcher::isLogSumExp(const Expr *e, const Expr *x) {
  if (e->kind != ExprKind::AddF)
    return false;
  return isMaxAndLogSum(x, e->args[0], e->args[1]) ||
         isMaxAndLogSum(x, e->args[1], e->args[0]);
}

const Expr *SoftmaxMatcher::matchLogSumExp(const Expr *t) {
  if (t->kind != ExprKind::SubF)
    return nullptr;
  // x - (max + log(sum)), x - (log(sum) + max), or (x - max) - log(sum).
  const Expr *a = t->args[0], *b = t->args[1];
  if (b->kind == ExprKind::AddF) {
    if (isMaxAndLogSum(a, b->args[0], b->args[1]) ||
        isMaxAndLogSum(a, b->args[1], b->args[0]))
      return a;
  } else if (a->kind == ExprKind::SubF &&
             isMaxAndLogSum(a->args[0], a->args[1], b)) {
    return a->args[0];
  }
  return nullptr;
}

FailureOr<double> SoftmaxMatcher::matchProbs(const Expr *p, ScoreForm &form,
                                             bool &roundedProbs) {
  roundedProbs = false;
  if (p->kind == ExprKind::TruncF) {
    roundedProbs = true;
    p = p->args[0];
  }
  if (!p->type.isF32()) {
    if (!p->type.isF16() && !p->type.isBF16())
      return fail("the softmax is computed in " + typeName(p->type) +
                  ", not a float type attn.attention has");
    // A softmax in a narrow type: its probabilities are as rounded as a
    // truncated f32 softmax's.
    form.softmaxType = p->type;
    roundedProbs = true;
  }
  auto checkType = [&](const Expr *e) -> LogicalResult {
    if (e->type != p->type)
      return fail("the softmax mixes " + typeName(e->type) + " and " +
                  typeName(p->type));
    return success();
  };

  if (p->kind == ExprKind::Softmax) {
    form.input = p->args[0];
    if (failed(matchScores(p->args[0], form, /*scaled=*/false)))
      return failure();
    return 1.0;
  }

  // exp(x - max - log(sum(exp(x - max)))): the log-sum-exp spelling.
  if (p->kind == ExprKind::Exp) {
    double a = 1.0;
    const Expr *x = matchLogSumExp(peelScale(p->args[0], a));
    if (!x || a != 1.0)
      return fail("the probabilities are exp(x) without a division by its "
                  "sum or a subtraction of its log-sum-exp");
    form.input = x;
    if (failed(matchScores(x, form, /*scaled=*/false)))
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
  if (failed(checkType(e)))
    return failure();

  // The exponent: a * (x - max(x)), or a * x - max(a * x), or
  // a * x - a * max(x); or, unshifted, a * x.
  double a = 1.0;
  const Expr *t = peelScale(e->args[0], a);
  const Expr *y = nullptr;
  double ignored = 1.0;
  if (t->kind == ExprKind::SubF &&
      peelScale(t->args[1], ignored)->kind == ExprKind::RowMax) {
    const Expr *x = t->args[0], *m = t->args[1];
    double sx = 1.0, sm = 1.0;
    const Expr *mx = peelScale(m, sm);
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
    if (!rowMax(mx))
      return fail("the softmax max does not start from -inf or the lowest "
                  "finite value");
  } else {
    // exp(x) / sum(exp(x)): the same values until exp(x) overflows.
    form.unshifted = true;
    y = t;
  }
  form.input = y;
  if (failed(matchScores(y, form, /*scaled=*/false)))
    return failure();
  return a * factor;
}

/// The tensor an expression free of the scores was built from, as a leaf.
const Expr *SoftmaxMatcher::originLeaf(const Expr *e) {
  if (!e->origin || containsScores(e))
    return nullptr;
  Expr leaf{ExprKind::Tensor, e->type};
  leaf.value = e->origin;
  leaf.view = e->originView;
  pool.push_back(std::move(leaf));
  return &pool.back();
}

/// Why `e` cannot be computed by a modification region from the indices
/// and the scores alone: empty if it can. Each shared node is visited
/// once.
static std::string regionProblem(const Expr *e, const Space &space) {
  std::string problem;
  walkExpr(e, [&](const Expr *x) {
    switch (x->kind) {
    case ExprKind::Tensor:
      // Read by tensor.extract from the op's mod_operands.
      for (const Coord &c : x->view)
        for (const Term &t : c)
          if (space.dims[t.dim].role == Role::HeadDim ||
              space.dims[t.dim].role == Role::ValueDim)
            problem = "a score or mask modification reads a tensor along the "
                      "head dimension";
      break;
    case ExprKind::Acc:
    case ExprKind::RowMax:
    case ExprKind::RowSum:
    case ExprKind::Softmax:
      problem = "a score modification reduces over the keys";
      break;
    case ExprKind::Index: {
      Role role = space.dims[x->dim].role;
      if (role == Role::HeadDim || role == Role::ValueDim)
        problem = "a score modification depends on the head dimension";
      break;
    }
    case ExprKind::Scores:
      if (!x->type.isF32())
        problem = "the first contraction does not accumulate in f32";
      break;
    default:
      if (auto ft = dyn_cast<FloatType>(x->type); ft && !ft.isF32())
        problem = "a score or mask modification computes in " +
                  typeName(x->type) + ", not f32";
      break;
    }
    return problem.empty();
  });
  return problem;
}

LogicalResult SoftmaxMatcher::matchScoreMod(const Expr *y, ScoreForm &form,
                                            StringRef otherwise) {
  std::string problem = regionProblem(y, space);
  if (problem.empty() && !y->type.isF32())
    problem = "the scores are modified in " + typeName(y->type) + ", not f32";
  if (!problem.empty())
    return fail(otherwise.empty() ? StringRef(problem) : otherwise);
  // The scores leaves (one view: the builder caches by value and view) and
  // the nodes that use them.
  const Expr *leaf = nullptr;
  SmallVector<const Expr *> users;
  bool oneView = walkExpr(y, [&](const Expr *x) {
    for (const Expr *a : x->args) {
      if (a->kind != ExprKind::Scores)
        continue;
      if (leaf && !exprEqual(leaf, a))
        return false;
      leaf = a;
      users.push_back(x);
    }
    return true;
  });
  if (!oneView)
    return fail("a score modification reads the scores at two views");
  if (!leaf)
    return fail("unsupported computation on the scores");
  // A constant factor on the scores (a negative one stays in the region)
  // within the scale's range: past it the scores leave the magnitudes the
  // kernels keep exact (docs/Limits.md).
  for (const Expr *u : users) {
    if (u->kind != ExprKind::MulF && u->kind != ExprKind::DivF)
      continue;
    for (const Expr *a : u->args) {
      if (a->kind != ExprKind::ConstF || a->f == 0.0)
        continue;
      double factor = std::abs(u->kind == ExprKind::DivF ? 1.0 / a->f : a->f);
      if (factor < kMinScale || factor > kMaxScale)
        return fail("a constant factor on the scores lies outside attn's "
                    "scale range [2^-64, 2^64] in magnitude");
    }
  }
  // A constant factor on the scores where they are used only once joins
  // attn's scale.
  form.modScaled = nullptr;
  form.modScale = 1.0;
  if (users.size() == 1) {
    double c = 1.0;
    if (peelScale(users.front(), c) == leaf && c != 1.0) {
      form.modScaled = users.front();
      form.modScale = c;
    }
  }
  form.scores = leaf;
  form.scoreMod = y;
  form.modAlpha = form.alpha;
  form.alpha = 1.0;
  return success();
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
      return matchScoreMod(y, form,
                           "the scores are multiplied by a non-constant or "
                           "non-positive value");
    form.alpha *= s;
    return matchScores(inner, form, /*scaled=*/true);
  }
  case ExprKind::AddF: {
    bool lhs = containsScores(y->args[0]), rhs = containsScores(y->args[1]);
    if (lhs == rhs)
      return matchScoreMod(y, form, "unsupported sum in the scores");
    const Expr *s = lhs ? y->args[0] : y->args[1];
    const Expr *m = lhs ? y->args[1] : y->args[0];
    // A term that is no mask (a bias computed from indices: ALiBi) makes
    // the sum a score modification.
    ScoreForm before = form;
    std::string reasonBefore = reason;
    if (failed(matchMaskTerm(m, form, scaled))) {
      if (!regionProblem(m, space).empty())
        return failure();
      form = before;
      reason = reasonBefore;
      return matchScoreMod(y, form, "");
    }
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
    return matchScoreMod(y, form,
                         "the scores are selected against a value other "
                         "than -inf or the lowest finite value");
  }
  case ExprKind::TruncF:
    // The scores rounded to the type of a narrow softmax.
    if (!form.softmaxType || y->type != form.softmaxType)
      return fail("the scores are rounded to " + typeName(y->type));
    form.roundedScores = true;
    return matchScores(y->args[0], form, scaled);
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
  return matchScoreMod(y, form, "");
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
  // Any other mask computed from tensors and indices alone (a cast of a
  // boolean mask, a mask built from constants) is read as the tensor the
  // chain computes it into.
  if (const Expr *origin = originLeaf(m)) {
    if (!isa<FloatType>(origin->type))
      return fail("the term added to the scores is not a float tensor");
    if (scaled)
      return fail("the mask is added before the scale");
    if (form.floatMask || form.boolMask)
      return fail("more than one mask tensor");
    form.floatMask = origin;
    return success();
  }
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
  // hide(a || b) = hide(a) and hide(b); keep(a && b) likewise.
  if ((cond->kind == ExprKind::OrI && hideWhenTrue) ||
      (cond->kind == ExprKind::AndI && !hideWhenTrue)) {
    if (failed(matchHide(cond->args[0], hideWhenTrue, maskedValue, form)))
      return failure();
    return matchHide(cond->args[1], hideWhenTrue, maskedValue, form);
  }
  std::optional<Linear> lin;
  if (cond->kind != ExprKind::Tensor) {
    std::string before = reason;
    FailureOr<Linear> l = predicate(cond);
    // A predicate of a tensor over both the queries and the keys (a float
    // mask cast to i1) that the chain computes into a boolean tensor: that
    // tensor, the mask operand.
    const Expr *maskTensor =
        readsScoresSizedTensor(cond) ? originLeaf(cond) : nullptr;
    if (succeeded(l)) {
      lin = *l;
    } else if (maskTensor) {
      reason = before;
      cond = maskTensor;
    } else if (!containsScores(cond) && cond->type.isInteger(1) &&
               regionProblem(cond, space).empty()) {
      // Another predicate of the indices and of tensors (prefix-LM, a
      // pattern, document ids): a mask modification, nothing
      // materialised.
      reason = before;
      if (maskedValue->f != -kInf)
        return fail("the index mask selects the lowest finite value, not "
                    "-inf: fully masked rows would differ");
      if (hideWhenTrue) {
        Expr t{ExprKind::ConstI, cond->type};
        t.i = 1;
        pool.push_back(std::move(t));
        Expr keep{ExprKind::XOrI, cond->type};
        keep.args = {cond, &pool.back()};
        pool.push_back(std::move(keep));
        cond = &pool.back();
      }
      form.keeps.push_back(cond);
      return success();
    } else if (const Expr *origin = originLeaf(cond)) {
      // Not an index comparison (a cast of a float mask, a comparison of
      // tensors): the boolean tensor the chain computes it into.
      reason = before;
      cond = origin;
    } else {
      return failure();
    }
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
  if (!hideWhenTrue)
    lin = lin->negated().plus(1);
  if (form.hides.size() == 2)
    return fail("more than two index masks");
  form.hides.push_back(*lin);
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
  // a > b, a >= b, a < b or a <= b, signed, unsigned or float.
  enum class Relation { Greater, GreaterEq, Less, LessEq, Other };
  Relation rel = Relation::Other;
  if (e->kind == ExprKind::CmpI) {
    using P = arith::CmpIPredicate;
    auto pred = static_cast<P>(e->i);
    if (pred == P::ugt || pred == P::uge || pred == P::ult || pred == P::ule) {
      if (!nonNegative(*a) || !nonNegative(*b))
        return fail("the index mask compares possibly negative values "
                    "unsigned");
    }
    rel = pred == P::sgt || pred == P::ugt   ? Relation::Greater
          : pred == P::sge || pred == P::uge ? Relation::GreaterEq
          : pred == P::slt || pred == P::ult ? Relation::Less
          : pred == P::sle || pred == P::ule ? Relation::LessEq
                                             : Relation::Other;
  } else {
    using P = arith::CmpFPredicate;
    auto pred = static_cast<P>(e->i);
    rel = pred == P::OGT || pred == P::UGT   ? Relation::Greater
          : pred == P::OGE || pred == P::UGE ? Relation::GreaterEq
          : pred == P::OLT || pred == P::ULT ? Relation::Less
          : pred == P::OLE || pred == P::ULE ? Relation::LessEq
                                             : Relation::Other;
  }
  switch (rel) {
  case Relation::Greater:
    return d;
  case Relation::GreaterEq:
    return d.plus(1);
  case Relation::Less:
    return d.negated();
  case Relation::LessEq:
    return d.negated().plus(1);
  case Relation::Other:
    break;
  }
  return fail(e->kind == ExprKind::CmpI
                  ? "the index mask uses an equality comparison"
                  : "unsupported float comparison in the index mask");
}

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

} // namespace mlir::attn::raise
