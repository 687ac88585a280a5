//===- RaiseChain.cpp - attn-raise's chain analysis
//-------------------------===//
//
// Ties the parts together for one candidate: the logical space from the
// second contraction, the probabilities' expression, the softmax form, the
// first contraction and the operands, the masks, the output; every check
// that decides whether the chain can become one attn.attention.
//
//===----------------------------------------------------------------------===//

#include "Raise.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

static View applyMap(AffineMap map, ArrayRef<Coord> sigma) {
  View v;
  for (AffineExpr e : map.getResults())
    v.push_back(sigma[cast<AffineDimExpr>(e).getPosition()]);
  return v;
}

/// The view of the result of `op` when it only truncates its one operand,
/// whose view is `view`, elementwise: tosa.cast, or a linalg op whose body
/// is one arith.truncf.
static std::optional<View> truncationView(Operation *op, const View &view) {
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

static bool isSupportedFloat(Type t) {
  return t.isF32() || t.isF16() || t.isBF16();
}

/// Checks a contraction's operands and result for shapes attn-raise handles.
static LogicalResult checkShapes(ValueRange values, std::string &reason) {
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

namespace {
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
  LogicalResult checkUses(const llvm::SetVector<Operation *> &ops,
                          const ExprBuilder &scores, SoftmaxMatcher &matcher,
                          const ScoreForm &form, double expFactor);

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
} // namespace

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
  return success();
}

/// Whether `init` is a tensor of zeros.
static bool isZeroInit(std::deque<Expr> &pool, const Space &space, Value init) {
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
  if (failed(raise::matchOperand(*e, out, why, name)))
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
  // Hidden iff ai i + aj j + c > 0: the causal limit is j - i + c > 0
  // (j > i + offset), a window's lower edge i - j + c > 0.
  const Linear *limit = nullptr, *edge = nullptr;
  for (const Linear &h : form.hides) {
    const Linear **slot = h.ai == -1 && h.aj == 1   ? &limit
                          : h.ai == 1 && h.aj == -1 ? &edge
                                                    : nullptr;
    if (!slot)
      return fail("the index mask is neither a causal limit nor a window");
    if (*slot)
      return fail(slot == &limit ? "two causal limits in the index mask"
                                 : "two window edges in the index mask");
    *slot = &h;
  }
  if (edge && !limit)
    return fail("the index mask hides keys before a window but none after "
                "the diagonal: attn.attention has windows only with a causal "
                "limit");
  if (limit) {
    int64_t offset = -limit->c;
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
  if (edge) {
    // Hidden iff j < i + c = diag(i) - window.
    int64_t window = -limit->c - edge->c;
    if (window < 0)
      return fail("the window's lower edge lies after the causal limit");
    chain.window = window;
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

LogicalResult ChainAnalysis::checkUses(const llvm::SetVector<Operation *> &ops,
                                       const ExprBuilder &scores,
                                       SoftmaxMatcher &matcher,
                                       const ScoreForm &form,
                                       double expFactor) {
  Block *block = second.op->getBlock();
  // The ops computed from the scores: the chain proper. The others compute
  // masks or scales, which other code may share (one mask for every layer).
  llvm::SmallPtrSet<Operation *, 16> dependent = {first.op};
  for (bool grew = true; grew;) {
    grew = false;
    for (Operation *op : ops)
      if (!dependent.contains(op) &&
          llvm::any_of(op->getOperands(), [&](Value v) {
            return dependent.contains(v.getDefiningOp());
          }))
        grew = dependent.insert(op).second;
  }
  // Nothing but the chain may use the scores, probabilities or what lies
  // between them.
  for (Operation *op : ops) {
    if (op->getBlock() != block)
      return fail("the chain spans several blocks");
    if (!dependent.contains(op))
      continue;
    for (Operation *user : op->getUsers()) {
      if (user == second.op || ops.contains(user))
        continue;
      // The log-sum-exp of the scores (natural log, f32), which front ends
      // return beside the output: attn.attention's LSE.
      auto it = op->getNumResults() == 1 ? scores.builtAt.find(op->getResult(0))
                                         : scores.builtAt.end();
      if (it != scores.builtAt.end() && expFactor == 1.0 &&
          it->second.first->type.isF32() &&
          (!chain.lse || chain.lse == op->getResult(0)) &&
          !viewMentions(it->second.second, chain.space.key) &&
          matcher.isLogSumExp(it->second.first, form.input)) {
        chain.lse = op->getResult(0);
        chain.lseView = it->second.second;
        continue;
      }
      return fail("the result of '" + op->getName().getStringRef() +
                  "' in the chain is also used by '" +
                  user->getName().getStringRef() + "' outside it");
    }
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
    if (llvm::any_of(slice,
                     [&](Operation *op) { return dependent.contains(op); }))
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
  SoftmaxMatcher matcher(space, *chain.pool);
  ScoreForm form;
  bool roundedProbs = false;
  FailureOr<double> expFactor = matcher.matchProbs(*probs, form, roundedProbs);
  if (failed(expFactor))
    return fail(matcher.reason);
  if (c2.extends[pIdx] && !roundedProbs)
    return fail("the second contraction extends probabilities that are not "
                "computed in f32");
  if (form.softmaxType)
    chain.changes.push_back("the softmax is computed in " +
                            typeName(form.softmaxType) +
                            "; attn.attention computes it in f32");
  if (form.unshifted)
    chain.changes.push_back(
        "the softmax does not subtract the row max; attn.attention does, so "
        "rows whose exp overflowed now give finite results");
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
  // attn.attention's heads merge the batch dims after the first; keys and
  // values vary over the first and over the major head dims only, as many
  // as they have heads (grouped-query attention: query head h reads
  // key/value head h / (Hq / Hkv); none: multi-query attention).
  if (!space.batch.empty()) {
    ArrayRef<unsigned> batch = space.batch;
    ArrayRef<unsigned> heads = batch.size() == 1 ? batch : batch.drop_front();
    if (batch.size() >= 2 && (!viewMentions(kf.leaf->view, batch.front()) ||
                              !viewMentions(vf.leaf->view, batch.front())))
      return fail("the keys or values are shared across the batch");
    for (unsigned h : heads)
      if (viewMentions(kf.leaf->view, h) != viewMentions(vf.leaf->view, h))
        return fail("the keys and values are not shared alike across heads");
    bool prefix = true;
    for (unsigned h : heads) {
      bool mentioned = viewMentions(kf.leaf->view, h);
      if (mentioned && !prefix)
        return fail("the keys and values are repeated across the query "
                    "heads in another order than attn.attention's groups "
                    "(query head h reads key/value head h / (Hq / Hkv))");
      prefix &= mentioned;
    }
  }
  chain.query = qf.leaf;
  chain.key = kf.leaf;
  chain.value = vf.leaf;

  // With a score modification, the softmax's factors apply to what it
  // yields: they join the region, and only a constant on the scores
  // themselves joins the scale.
  if (form.scoreMod) {
    chain.scoreMod = form.scoreMod;
    chain.modScaled = form.modScaled;
    chain.modFactor = form.modAlpha * *expFactor;
    chain.scale = form.modScale * qf.scale * kf.scale;
  } else {
    chain.scale = form.alpha * *expFactor * qf.scale * kf.scale;
  }
  chain.keeps = form.keeps;
  float scale32 = static_cast<float>(chain.scale);
  if (!std::isfinite(scale32) || scale32 <= 0.0f)
    return fail("the folded scale is not a finite positive f32");
  if (scale32 < kMinScale || scale32 > kMaxScale) {
    std::string value;
    llvm::raw_string_ostream(value) << scale32;
    return fail("the folded scale " + value +
                " lies outside attn's range [2^-64, 2^64]");
  }
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
  if (failed(checkUses(ops, scores, matcher, form, *expFactor)))
    return failure();
  chain.first = first;
  chain.second = c2;
  chain.chainOps.assign(ops.begin(), ops.end());
  chain.chainOps.push_back(c2.op);
  chain.chainOps.append(outputOps.begin(), outputOps.end());
  return std::move(chain);
}

FailureOr<Chain> mlir::attn::raise::analyzeChain(const Contraction &second,
                                                 unsigned probsOperand,
                                                 std::string &reason) {
  ChainAnalysis analysis(second, probsOperand);
  FailureOr<Chain> chain = analysis.run();
  if (failed(chain))
    reason = analysis.reason;
  return chain;
}
