//===- ModRegions.cpp - score and mask modifications ----------------------===//

#include "attn/Dialect/Attn/IR/ModRegions.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;

/// Whether `region` is a score modification (it takes the score after the
/// index arguments).
static bool isScoreMod(Region &region) { return region.getRegionNumber() == 0; }

/// The arguments before the tensors of `mod_operands`.
static unsigned scalarArgs(Region &region) {
  return kModIndexArgs + (isScoreMod(region) ? 1 : 0);
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

static LogicalResult verifyRegion(Operation *op, Region &region, StringRef name,
                                  ValueRange modOperands) {
  Block &block = region.front();
  MLIRContext *ctx = op->getContext();
  Builder b(ctx);
  SmallVector<Type> expected(kModIndexArgs, b.getIndexType());
  if (isScoreMod(region))
    expected.push_back(b.getF32Type());
  llvm::append_range(expected, modOperands.getTypes());
  if (block.getArgumentTypes() != TypeRange(expected)) {
    std::string want;
    llvm::raw_string_ostream os(want);
    os << "(b, h, i, j: index" << (isScoreMod(region) ? ", score: f32" : "");
    for (Type t : modOperands.getTypes())
      os << ", " << t;
    os << ")";
    return op->emitOpError() << "'" << name << "' must take the arguments "
                             << want << ", got " << block.getNumArguments()
                             << " of types " << block.getArgumentTypes();
  }
  Type yielded =
      isScoreMod(region) ? Type(b.getF32Type()) : Type(b.getI1Type());
  // The op's verifier runs before the verifier checks the region's ops and
  // terminator: the block may be empty or end in a malformed attn.yield.
  auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
  if (!yield || yield->getNumOperands() != 1 ||
      yield.getValue().getType() != yielded)
    return op->emitOpError()
           << "'" << name << "' must end in attn.yield of " << yielded;
  unsigned firstTensor = scalarArgs(region);
  for (BlockArgument arg : block.getArguments().drop_front(firstTensor))
    for (Operation *user : arg.getUsers())
      if (!isa<tensor::ExtractOp>(user))
        return op->emitOpError()
               << "'" << name << "' uses mod operand "
               << arg.getArgNumber() - firstTensor << " in '" << user->getName()
               << "'; it may only be read by "
               << "tensor.extract";
  for (Operation &inner : block.without_terminator()) {
    auto describe = [&]() {
      InFlightDiagnostic d = op->emitOpError() << "'" << name << "' holds '"
                                               << inner.getName() << "', ";
      d.attachNote(inner.getLoc()) << "here";
      return d;
    };
    for (Value operand : inner.getOperands())
      if (operand.getParentRegion() != &region)
        return describe() << "which uses a value defined outside the region "
                             "(pass tensors through mod_operands and define "
                             "constants inside)";
    if (inner.getNumRegions())
      return describe() << "an op with regions (write branches as "
                           "arith.select)";
    if (!isMemoryEffectFree(&inner))
      return describe() << "an op with side effects";
    if (isa<tensor::ExtractOp>(inner)) {
      // Not through the accessor: the verifier has yet to check that the
      // op has its operands.
      auto arg = inner.getNumOperands()
                     ? dyn_cast<BlockArgument>(inner.getOperand(0))
                     : BlockArgument();
      if (!arg || arg.getOwner() != &block || arg.getArgNumber() < firstTensor)
        return describe() << "which reads a tensor that is not one of "
                             "mod_operands";
      continue;
    }
    auto isScalar = [](Type t) { return t.isIntOrIndexOrFloat(); };
    if (!llvm::all_of(inner.getOperandTypes(), isScalar) ||
        !llvm::all_of(inner.getResultTypes(), isScalar))
      return describe() << "whose operands and results are not all scalars "
                           "(the region's ops work on index, integer and "
                           "float scalars; tensors are read with "
                           "tensor.extract)";
  }
  return success();
}

LogicalResult attn::verifyModRegions(Operation *op, Region &scoreMod,
                                     Region &maskMod, ValueRange modOperands,
                                     StringAttr modName, bool needDerivative) {
  if (!modOperands.empty() && scoreMod.empty() && maskMod.empty())
    return op->emitOpError() << "has mod_operands but neither a score_mod "
                                "nor a mask_mod to read them";
  if (modName) {
    if (scoreMod.empty() && maskMod.empty())
      return op->emitOpError() << "has a mod_name but neither a score_mod "
                                  "nor a mask_mod";
    StringRef name = modName.getValue();
    if (name.empty() || name.size() > 64 || !llvm::all_of(name, [](char c) {
          return llvm::isAlnum(c) || c == '_';
        }))
      return op->emitOpError() << "'mod_name' must be 1 to 64 letters, digits "
                                  "or '_' (it names GPU kernels), got \""
                               << name << "\"";
  }
  if (!scoreMod.empty() &&
      failed(verifyRegion(op, scoreMod, "score_mod", modOperands)))
    return failure();
  if (!maskMod.empty() &&
      failed(verifyRegion(op, maskMod, "mask_mod", modOperands)))
    return failure();
  if (needDerivative && !scoreMod.empty())
    if (Operation *bad = findUndifferentiableOp(scoreMod)) {
      InFlightDiagnostic d = op->emitOpError()
                             << "'score_mod' holds '" << bad->getName()
                             << "', which depends on the score and has no "
                                "derivative rule, so the gradient cannot "
                                "flow through it";
      d.attachNote(bad->getLoc()) << "here";
      return d;
    }
  return success();
}

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

namespace {
/// Emits a region's ops; `onOp` sees each clone after it is made.
struct RegionEmitter {
  OpBuilder &b;
  Region &region;
  ModOperandReader read;
  IRMapping map;

  RegionEmitter(OpBuilder &b, Region &region, ValueRange args,
                ModOperandReader read)
      : b(b), region(region), read(read) {
    Block &block = region.front();
    for (auto [arg, value] : llvm::zip(block.getArguments(), args))
      map.map(arg, value);
  }

  /// Emits `op` and returns its clone (null for a read of a mod operand).
  Operation *emit(Operation &op) {
    if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
      auto arg = cast<BlockArgument>(extract.getTensor());
      // An index defined outside the region is a constant that a greedy
      // rewrite (attn-decompose's) hoisted out of it: used as it is, as
      // clone() uses the other ops' operands.
      SmallVector<Value> indices =
          llvm::map_to_vector(extract.getIndices(),
                              [&](Value v) { return map.lookupOrDefault(v); });
      map.map(extract.getResult(),
              read(b, extract.getLoc(), arg.getArgNumber() - scalarArgs(region),
                   indices));
      return nullptr;
    }
    return b.clone(op, map);
  }

  Value yielded() {
    return map.lookupOrDefault(
        cast<YieldOp>(region.front().getTerminator()).getValue());
  }
};
} // namespace

Value attn::emitModRegion(OpBuilder &b, Region &region, ValueRange args,
                          ModOperandReader read) {
  RegionEmitter e(b, region, args, read);
  for (Operation &op : region.front().without_terminator())
    e.emit(op);
  return e.yielded();
}

namespace {
/// Forward-mode derivative rules: the tangent of `op`'s (float) result from
/// the primal values `x` (mapped operands), `r` (the result) and the
/// operands' tangents `t` (null: zero). Null when `op` has no rule.
struct Tangents {
  OpBuilder &b;
  Location loc;

  Value cst(Type type, double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, v));
  }
  Value mul(Value x, Value y) {
    if (!x || !y)
      return Value();
    return arith::MulFOp::create(b, loc, x, y);
  }
  Value add(Value x, Value y) {
    if (!x)
      return y;
    if (!y)
      return x;
    return arith::AddFOp::create(b, loc, x, y);
  }
  Value neg(Value x) {
    return x ? Value(arith::NegFOp::create(b, loc, x)) : Value();
  }
  Value div(Value x, Value y) {
    return x ? Value(arith::DivFOp::create(b, loc, x, y)) : Value();
  }
  /// select(c, x, y) of tangents, a null one standing for zero.
  Value select(Value c, Value x, Value y, Type type) {
    if (!x && !y)
      return Value();
    return arith::SelectOp::create(b, loc, c, x ? x : cst(type, 0.0),
                                   y ? y : cst(type, 0.0));
  }

  /// The rule for `op`, or failure when there is none.
  FailureOr<Value> rule(Operation *op, ArrayRef<Value> x, Value r,
                        ArrayRef<Value> t) {
    Type type = r ? r.getType() : Type();
    double ln2 = llvm::numbers::ln2;
    return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
        .Case([&](arith::AddFOp) { return add(t[0], t[1]); })
        .Case([&](arith::SubFOp) { return add(t[0], neg(t[1])); })
        .Case([&](arith::MulFOp) {
          return add(mul(t[0], x[1]), mul(x[0], t[1]));
        })
        .Case([&](arith::DivFOp) {
          // (t0 - r t1) / x1
          return div(add(t[0], neg(mul(r, t[1]))), x[1]);
        })
        .Case([&](arith::NegFOp) { return neg(t[0]); })
        .Case<arith::MaximumFOp, arith::MaxNumFOp>([&](Operation *) {
          Value c = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE,
                                          x[0], x[1]);
          return select(c, t[0], t[1], type);
        })
        .Case<arith::MinimumFOp, arith::MinNumFOp>([&](Operation *) {
          Value c = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE,
                                          x[0], x[1]);
          return select(c, t[0], t[1], type);
        })
        .Case([&](arith::SelectOp) { return select(x[0], t[1], t[2], type); })
        .Case([&](arith::ExtFOp) -> Value {
          return arith::ExtFOp::create(b, loc, type, t[0]);
        })
        .Case([&](arith::TruncFOp) -> Value {
          return arith::TruncFOp::create(b, loc, type, t[0]);
        })
        .Case([&](math::ExpOp) { return mul(r, t[0]); })
        .Case([&](math::Exp2Op) { return mul(mul(r, cst(type, ln2)), t[0]); })
        .Case([&](math::ExpM1Op) { return mul(add(r, cst(type, 1.0)), t[0]); })
        .Case([&](math::LogOp) { return div(t[0], x[0]); })
        .Case(
            [&](math::Log2Op) { return div(t[0], mul(x[0], cst(type, ln2))); })
        .Case(
            [&](math::Log1pOp) { return div(t[0], add(x[0], cst(type, 1.0))); })
        .Case([&](math::TanhOp) {
          Value one = cst(type, 1.0);
          return mul(arith::SubFOp::create(b, loc, one, mul(r, r)), t[0]);
        })
        .Case([&](math::SqrtOp) { return div(t[0], mul(cst(type, 2.0), r)); })
        .Case([&](math::RsqrtOp) {
          // -r^3 / 2
          return mul(mul(cst(type, -0.5), mul(r, mul(r, r))), t[0]);
        })
        .Case([&](math::AbsFOp) {
          Value c = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                          x[0], cst(type, 0.0));
          return select(c, neg(t[0]), t[0], type);
        })
        .Case([&](math::SinOp) {
          return mul(math::CosOp::create(b, loc, x[0]), t[0]);
        })
        .Case([&](math::CosOp) {
          return neg(mul(math::SinOp::create(b, loc, x[0]), t[0]));
        })
        .Case([&](math::FmaOp) {
          return add(add(mul(t[0], x[1]), mul(x[0], t[1])), t[2]);
        })
        .Default([&](Operation *) { return failure(); });
  }
};
} // namespace

/// The ops of a score modification that depend on the score and have a
/// float result, in order: the ones that need a derivative rule.
static bool needsRule(Operation &op, const llvm::DenseSet<Value> &onScore) {
  return llvm::any_of(op.getResultTypes(),
                      [](Type t) { return isa<FloatType>(t); }) &&
         llvm::any_of(op.getOperands(),
                      [&](Value v) { return onScore.contains(v); });
}

/// Whether Tangents::rule has a rule for `op` (the same list).
static bool hasRule(Operation &op) {
  return isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
             arith::NegFOp, arith::MaximumFOp, arith::MaxNumFOp,
             arith::MinimumFOp, arith::MinNumFOp, arith::SelectOp,
             arith::ExtFOp, arith::TruncFOp, math::ExpOp, math::Exp2Op,
             math::ExpM1Op, math::LogOp, math::Log2Op, math::Log1pOp,
             math::TanhOp, math::SqrtOp, math::RsqrtOp, math::AbsFOp,
             math::SinOp, math::CosOp, math::FmaOp>(op);
}

Operation *attn::findUndifferentiableOp(Region &scoreMod) {
  Block &block = scoreMod.front();
  llvm::DenseSet<Value> onScore = {block.getArgument(kModIndexArgs)};
  for (Operation &op : block.without_terminator()) {
    if (!needsRule(op, onScore))
      continue;
    if (!hasRule(op))
      return &op;
    for (Value r : op.getResults())
      onScore.insert(r);
  }
  return nullptr;
}

Value attn::emitScoreModDerivative(OpBuilder &b, Region &region,
                                   ValueRange args, ModOperandReader read) {
  RegionEmitter e(b, region, args, read);
  Block &block = region.front();
  Location loc = region.getLoc();
  Tangents rules{b, loc};
  // Tangents of the region's values (by their original); none: zero.
  llvm::DenseMap<Value, Value> tangent;
  tangent[block.getArgument(kModIndexArgs)] = rules.cst(b.getF32Type(), 1.0);
  llvm::DenseSet<Value> onScore = {block.getArgument(kModIndexArgs)};
  for (Operation &op : block.without_terminator()) {
    Operation *clone = e.emit(op);
    if (!clone || !needsRule(op, onScore))
      continue;
    SmallVector<Value> x(clone->getOperands());
    SmallVector<Value> t = llvm::map_to_vector(
        op.getOperands(), [&](Value v) { return tangent.lookup(v); });
    rules.loc = op.getLoc();
    FailureOr<Value> dr = rules.rule(&op, x, clone->getResult(0), t);
    assert(succeeded(dr) && "the verifier admits only ops with a rule");
    tangent[op.getResult(0)] = *dr;
    onScore.insert(op.getResult(0));
  }
  Value result = cast<YieldOp>(block.getTerminator()).getValue();
  if (Value t = tangent.lookup(result))
    return t;
  return rules.cst(b.getF32Type(), 0.0);
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

std::string attn::getModHash(Operation *op) {
  // Regions 0 and 1 of the forward, split-KV and gradient ops.
  if (op->getNumRegions() < 2 ||
      (op->getRegion(0).empty() && op->getRegion(1).empty()))
    return "";
  // FNV-1a over the regions' ops written with values numbered within
  // them (block arguments first, then results in order): the same regions
  // hash the same whatever the op and the function around them. A mod
  // operand counts by its element type and rank, its sizes written as
  // dynamic: the kernels take it with dynamic sizes, so regions that read
  // tensors of other static sizes are the same modification.
  std::string text;
  llvm::raw_string_ostream os(text);
  for (unsigned i = 0; i < 2; ++i) {
    os << "region " << i << "\n";
    llvm::DenseMap<Value, unsigned> ids;
    for (Block &block : op->getRegion(i)) {
      for (BlockArgument arg : block.getArguments()) {
        ids[arg] = ids.size();
        Type type = arg.getType();
        if (auto tensor = dyn_cast<RankedTensorType>(type))
          type = RankedTensorType::get(
              SmallVector<int64_t>(tensor.getRank(), ShapedType::kDynamic),
              tensor.getElementType());
        os << type << ",";
      }
      os << "\n";
      for (Operation &inner : block) {
        os << inner.getName() << "(";
        for (Value operand : inner.getOperands())
          os << ids.lookup(operand) << ",";
        os << ")" << inner.getRawDictionaryAttrs() << "->";
        for (Value result : inner.getResults()) {
          ids[result] = ids.size();
          os << result.getType() << ",";
        }
        os << "\n";
      }
    }
  }
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return llvm::utohexstr(hash, /*LowerCase=*/true, /*Width=*/16);
}

std::string attn::getModName(Operation *op) {
  if (auto name = op->getAttrOfType<StringAttr>("mod_name"))
    return name.str();
  std::string hash = getModHash(op);
  return hash.empty() ? hash : "h" + hash;
}
