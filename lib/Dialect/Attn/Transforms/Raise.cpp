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
// returned so that the pass can report it. Raise.h says which file holds
// which stage; this file is the pass.
//
//===----------------------------------------------------------------------===//

#include "Raise.h"

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNRAISEPASS
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

namespace {

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
                 llvm::DenseSet<Operation *> &covered, bool strictSoftmax) {
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
  FailureOr<Chain> chain = analyzeChain(*c2, *probs, attempt.reason);
  if (failed(chain))
    return attempt;
  if (failed(emitAttention(nullptr, op->getLoc(), *chain, attempt.reason)))
    return attempt;
  if (!chain->changes.empty()) {
    if (strictSoftmax) {
      attempt.reason = "strict-softmax: " + chain->changes.front();
      return attempt;
    }
    InFlightDiagnostic remark = op->emitRemark() << "attn-raise: fused; ";
    llvm::interleave(chain->changes, remark, "; ");
  }
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
    Attempt attempt = tryRaise(rewriter, op, covered, /*strictSoftmax=*/false);
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
    Attempt attempt = tryRaise(rewriter, op, covered, strictSoftmax);
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
