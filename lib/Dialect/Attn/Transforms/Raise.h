//===- Raise.h - the parts of attn-raise
//------------------------------------===//
//
// attn-raise in four parts, each in its own file:
//
//  - RaiseExpr.cpp: the logical index space, views, contractions, and the
//    expression builder that evaluates the ops of a chain symbolically;
//  - RaiseSoftmax.cpp: the softmax matcher (softmax(scale * Q K^T + mask)
//    and the operands' forms);
//  - RaiseChain.cpp: the chain analysis that ties them to one checked Chain;
//  - RaiseEmit.cpp: the emitter of attn.attention and the rewrite.
//
// Raise.cpp is the pass. Raise.cpp's header comment describes the method.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_RAISE_H
#define ATTN_DIALECT_ATTN_TRANSFORMS_RAISE_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <string>

namespace mlir {
namespace attn {
namespace raise {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kLowestF32 = -3.40282346638528859812e+38;
/// Why a chain with a tensor past attn's element limit stays unfused.
inline constexpr const char *kTooManyElements =
    "a tensor in the chain holds more than 2^48 elements, the most an attn "
    "op takes";

/// Whether `v` is -inf or the lowest finite value of f32 or of float type
/// `t`: the values front ends fill masks and max reductions with.
bool isLowestValue(double v, Type t);

std::string typeName(Type t);

//===----------------------------------------------------------------------===//
// Logical index space and views (RaiseExpr.cpp)
//===----------------------------------------------------------------------===//

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

bool viewMentions(const View &view, unsigned dim);
/// The coordinate of a dim that merges `coords` row-major, the dims having
/// `sizes`.
Coord mergeCoords(ArrayRef<Coord> coords, ArrayRef<int64_t> sizes);
std::string printView(const View &view);
/// Splits coordinate `c` of a dim into the coordinates of the dims of
/// `sizes` that merge into it row-major. A logical dim that straddles two of
/// them yields a refinement request.
LogicalResult splitCoord(const Space &space, const Coord &c,
                         ArrayRef<int64_t> sizes, SmallVectorImpl<Coord> &out,
                         std::optional<Refinement> &refinement,
                         std::string &reason);

//===----------------------------------------------------------------------===//
// Contractions (RaiseExpr.cpp)
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

/// A linalg op or tosa.matmul computing a plain contraction; failure for
/// anything else.
FailureOr<Contraction> matchContraction(Operation *op);

//===----------------------------------------------------------------------===//
// Symbolic expressions (RaiseExpr.cpp)
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
  Log,
  Tanh,
  Neg,
  AddF,
  SubF,
  MulF,
  DivF,
  MaxF, // i = 1: arith.maxnumf (a NaN operand is ignored)
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
  /// A tensor value holding this expression at `originView`, when the
  /// expression was built for one (not for an op inside a body): a mask the
  /// matcher cannot reduce to a form of its own is read from there.
  mutable Value origin;
  mutable View originView;
};

/// Calls `visit` on `e` and the nodes below it, each shared node once,
/// until it returns false; returns false if it did.
bool walkExpr(const Expr *e, function_ref<bool(const Expr *)> visit);
/// Whether `e` has a node of `kind`, visiting each shared node once.
bool containsKind(const Expr *e, ExprKind kind);
/// Structural equality.
bool exprEqual(const Expr *a, const Expr *b);
bool isConstF(const Expr *e, double v);
/// A value that drives exp to exactly 0: -inf, or the lowest finite f32 (a
/// common stand-in that still underflows whatever the other scores are).
bool isMaskedValue(const Expr *e);

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
  /// The expression and view each value was first built at.
  DenseMap<Value, std::pair<const Expr *, View>> builtAt;
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
  const Expr *buildIota(DenseElementsAttr dense, const View &view);
  const Expr *buildCausalConstant(DenseElementsAttr dense, const View &view);
  /// `kind` applied to `a` and `b`, folding constants and identities (x + 0,
  /// x - 0, x * 1, x / 1) that front ends leave behind.
  const Expr *binary(ExprKind kind, const Expr *a, const Expr *b, Type t);
  /// A conversion of `x` to type `t`: from or to i1 as a select or a
  /// comparison, between floats as an extension or truncation.
  FailureOr<const Expr *> convert(const Expr *x, Type t);
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

//===----------------------------------------------------------------------===//
// The softmax matcher (RaiseSoftmax.cpp)
//===----------------------------------------------------------------------===//

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
  /// Index predicates, each hiding a key where it holds: a causal limit and
  /// the lower edge of a window.
  SmallVector<Linear, 2> hides;
  bool roundedScores = false;
  /// Spellings that fusing computes more exactly than written: the
  /// softmax's type when it is not f32, and whether it leaves out the row
  /// max subtraction.
  Type softmaxType;
  bool unshifted = false;
  /// The softmax's input x (softmax(x) = exp(x - max) / sum): the scaled,
  /// masked scores.
  const Expr *input = nullptr;
  /// A score modification (attn.attention's `score_mod`): elementwise
  /// computation on the scores that is neither a scale nor a mask, as
  /// written (the scores leaf standing for attn's scaled score), and
  /// `alpha` at the point where it was met (the factors applied to it).
  const Expr *scoreMod = nullptr;
  double modAlpha = 1.0;
  /// The node of `scoreMod` that is the scores times a constant, where
  /// the scores appear only there: that constant joins attn's scale and
  /// the node stands for the scaled score. Null: the scores leaf does.
  const Expr *modScaled = nullptr;
  double modScale = 1.0;
  /// Index predicates that are neither a causal limit nor a window edge,
  /// each true where a key is visible (attn.attention's `mask_mod`).
  SmallVector<const Expr *, 2> keeps;
};

class SoftmaxMatcher {
public:
  SoftmaxMatcher(const Space &space, std::deque<Expr> &pool)
      : space(space), pool(pool) {}

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

  /// Whether `e` is the natural log-sum-exp of `x` over the key axis,
  /// max(x) + log(sum(exp(x - max(x)))).
  bool isLogSumExp(const Expr *e, const Expr *x);

private:
  LogicalResult matchMaskTerm(const Expr *m, ScoreForm &form, bool scaled);
  /// Takes `y`, computation on the scores that no other form matches, as a
  /// score modification when it is elementwise over indices and constants;
  /// if not, fails with `otherwise` (or, if empty, what stops it).
  LogicalResult matchScoreMod(const Expr *y, ScoreForm &form,
                              StringRef otherwise);
  LogicalResult matchHide(const Expr *cond, bool hideWhenTrue,
                          const Expr *maskedValue, ScoreForm &form);
  FailureOr<Linear> linearize(const Expr *e);
  FailureOr<Linear> linearizeUncached(const Expr *e);
  FailureOr<Linear> predicate(const Expr *e);
  /// The exponent of exp(x - (max(x) + log(sum(exp(x - max(x)))))) in its
  /// spellings: x; null if `t` is not one.
  const Expr *matchLogSumExp(const Expr *t);
  /// The tensor an expression free of the scores was built from, as a leaf.
  const Expr *originLeaf(const Expr *e);
  /// Whether `e` reads a tensor at a view over both the queries and the
  /// keys (a mask or bias tensor, rather than a table of a few dims).
  bool readsScoresSizedTensor(const Expr *e) {
    return !walkExpr(e, [&](const Expr *x) {
      return x->kind != ExprKind::Tensor ||
             !viewMentions(x->view, space.query) ||
             !viewMentions(x->view, space.key);
    });
  }
  bool containsScores(const Expr *e) {
    return containsKind(e, ExprKind::Scores);
  }

  const Space &space;
  std::deque<Expr> &pool;
  DenseMap<const Expr *, Linear> linearMemo;
};

/// What a contraction operand is: a constant times a tensor, maybe extended
/// from a narrow type.
struct OperandForm {
  double scale = 1.0;
  const Expr *leaf = nullptr;
  /// The type the leaf is extended to f32 from, when it is.
  Type narrow;
};

LogicalResult matchOperand(const Expr *e, OperandForm &form,
                           std::string &reason, StringRef name);

//===----------------------------------------------------------------------===//
// The chain (RaiseChain.cpp) and its rewrite (RaiseEmit.cpp)
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
  /// The score modification times `modFactor` (`modScaled`, or else the
  /// scores leaf, standing for the scaled score) and the mask predicates
  /// of the regions.
  const Expr *scoreMod = nullptr, *modScaled = nullptr;
  double modFactor = 1.0;
  SmallVector<const Expr *, 2> keeps;
  CausalKind causal = CausalKind::None;
  std::optional<int64_t> window;
  /// A value of the chain that others use and that is the log-sum-exp of
  /// the scores, with its view: attn.attention's LSE replaces it.
  Value lse;
  View lseView;
  /// What fusing changes, for a remark: rounding or overflow that the
  /// fused op computes more exactly than the chain as written.
  SmallVector<std::string> changes;
  /// The element type attn.attention works in; narrow leaves are extended
  /// when it is f32.
  Type elementType;
  /// The value the attention output replaces and its view.
  Value target;
  View targetView;
  /// Ops to erase once the target is replaced (the chain proper).
  SmallVector<Operation *> chainOps;
};

/// Analyses the chain ending in contraction `second`, whose operand
/// `probsOperand` holds the probabilities; on failure `reason` says why.
FailureOr<Chain> analyzeChain(const Contraction &second, unsigned probsOperand,
                              std::string &reason);

/// The values that replace a chain's target and LSE.
struct Replacement {
  Value output, lse;
};

/// Emits attn.attention for `chain` and returns the values that replace the
/// chain's target and LSE; with a null builder only checks that it can.
FailureOr<Replacement> emitAttention(OpBuilder *b, Location loc,
                                     const Chain &chain, std::string &reason);

/// Replaces `chain` with attn.attention; the chain has been checked with
/// emitAttention(nullptr, ...).
void rewriteChain(RewriterBase &rewriter, const Chain &chain);

} // namespace raise
} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_RAISE_H
