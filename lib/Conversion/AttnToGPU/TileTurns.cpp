//===- TileTurns.cpp - turn counters that order CTAs' reductions ----------===//
//
// tile.await_turn and tile.pass_turn on the GPU (the backward's ordered dQ,
// TileBackward.cpp): thread 0 issues a CTA's bulk reductions into dQ's
// accumulator (TileFragments.cpp), so thread 0 alone takes the turns.
//
// - await: spins on an acquiring load of the counter until it holds the
//   expected code, then a proxy fence orders the acquire before the
//   reductions it issues next (async proxy).
// - pass: waits until its bulk reductions are complete (not only read
//   from shared memory: `cp.async.bulk.wait_group 0`), fences them into
//   the generic proxy, then writes the code with a releasing store; the
//   CTA that acquires it adds after them.
//
// The acquiring load and releasing store are inline PTX (NVVM has no op
// for them), so that the scope and state space the order rests on are
// spelled out in the kernel, as attn-to-ptx-backward-ordered.test pins
// them. On an H200 the backward ran at 0.84x to 0.91x the speed it had
// with relaxed accesses (docs/GPU.md, "The ordered dQ mode"), which would
// leave the order to the hardware rather than to the memory model.
//
//===----------------------------------------------------------------------===//

#include "TileLowering.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::tile_lowering;

/// Inline PTX with side effects; returns its results.
static SmallVector<Value> inlinePtx(OpBuilder &b, Location loc,
                                    TypeRange results, ValueRange operands,
                                    StringRef ptx, StringRef constraints) {
  auto asmOp = LLVM::InlineAsmOp::create(
      b, loc, results, operands, ptx, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  return SmallVector<Value>(asmOp->getResults());
}

Value TileLowering::turnCounter(Operation *op, Value turns,
                                ValueRange indices) {
  Global *g = globals.lookup(turns);
  if (!g || !g->elementType.isInteger(32)) {
    op->emitOpError("takes turns in a buffer that is not an i32 kernel "
                    "parameter");
    return Value();
  }
  SmallVector<Value> idx;
  for (Value i : indices) {
    Value v = scalars.lookupOrNull(i);
    if (!v) {
      op->emitOpError("has an index the GPU lowering did not map");
      return Value();
    }
    idx.push_back(v);
  }
  return LLVM::AddrSpaceCastOp::create(
      b, e.loc, LLVM::LLVMPointerType::get(b.getContext(), 1),
      globalAddress(*g, idx));
}

LogicalResult TileLowering::lowerAwaitTurn(TileAwaitTurnOp op) {
  Value at = turnCounter(op, op.getTurns(), op.getIndices());
  Value expected = scalars.lookupOrNull(op.getExpected());
  if (!at || !expected)
    return failure();
  awaitsTurns = true;
  OpBuilder::InsertionGuard guard(b);
  auto ifFirst = scf::IfOp::create(b, e.loc, e.eq(tid, e.c32(0)), false);
  b.setInsertionPointToStart(ifFirst.thenBlock());
  auto spin = scf::WhileOp::create(b, e.loc, TypeRange(), ValueRange());
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.createBlock(&spin.getBefore());
    SmallVector<Value> seen =
        inlinePtx(b, e.loc, e.i32(), at, "ld.acquire.gpu.global.b32 $0, [$1];",
                  "=r,l");
    scf::ConditionOp::create(b, e.loc, e.ne(seen[0], expected), ValueRange());
    b.createBlock(&spin.getAfter());
    NVVM::NanosleepOp::create(b, e.loc, e.c32(32));
    scf::YieldOp::create(b, e.loc);
  }
  NVVM::FenceProxyOp::create(
      b, e.loc, NVVM::ProxyKind::async_global,
      /*space=*/NVVM::SharedSpaceAttr());
  return success();
}

LogicalResult TileLowering::lowerPassTurn(TilePassTurnOp op) {
  Value at = turnCounter(op, op.getTurns(), op.getIndices());
  Value code = scalars.lookupOrNull(op.getValue());
  if (!at || !code)
    return failure();
  OpBuilder::InsertionGuard guard(b);
  auto ifFirst = scf::IfOp::create(b, e.loc, e.eq(tid, e.c32(0)), false);
  b.setInsertionPointToStart(ifFirst.thenBlock());
  NVVM::CpAsyncBulkWaitGroupOp::create(b, e.loc, 0, /*read=*/nullptr);
  NVVM::FenceProxyOp::create(
      b, e.loc, NVVM::ProxyKind::async_global,
      /*space=*/NVVM::SharedSpaceAttr());
  inlinePtx(b, e.loc, TypeRange(), ValueRange{at, code},
            "st.release.gpu.global.b32 [$0], $1;", "l,r");
  return success();
}
