//===- CombineKernel.cpp - the split-KV combine kernel --------------------===//
//
// The second kernel of split-KV decode: O = sum_s exp(LSE_s - LSE) O_s over
// the partial results, one thread per four output columns. Written op by
// op; it is the one kernel that does not come from attn-tile's tile form
// yet (attn-tile's combine is linalg on buffers, with no register-tile
// form for a row-parallel kernel).
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/KernelSpec.h"
#include "Emitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The kernel's arguments, by their names in attn_kernel_abi.def.
class KernelArgs {
public:
  KernelArgs(const KernelSpec &spec, gpu::GPUFuncOp func) {
    for (auto [param, arg] : llvm::zip_equal(spec.params(), func.getArguments()))
      byName[param.name] = arg;
  }
  Value operator[](StringRef name) const {
    Value v = byName.lookup(name);
    assert(v && "no such kernel parameter");
    return v;
  }

private:
  llvm::StringMap<Value> byName;
};


/// One thread per 4 consecutive output columns of a row: the max of the
/// split LSEs, then O = sum_s exp(LSE_s - LSE) O_s.
} // namespace

gpu::GPUFuncOp attn::buildCombineKernel(OpBuilder &b, Location loc,
                                        const KernelSpec &spec) {
  Emitter e{b, loc};
  Type f32 = e.f32(), elt = spec.elementType;
  gpu::GPUFuncOp func = createKernelFunc(b, loc, spec);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&func.getBody().front());
  KernelArgs a(spec, func);
  Value poPtr = e.globalBase(a["partial_o"], f32),
        plPtr = e.globalBase(a["partial_lse"], f32);
  Value oPtr = e.globalBase(a["o"], elt), lsePtr = e.globalBase(a["lse"], f32);
  SmallVector<Value> poS, poT, plS, plT, oS, oT, lS, lT;
  e.metadata(a["partial_o"], poS, poT);
  e.metadata(a["partial_lse"], plS, plT);
  e.metadata(a["o"], oS, oT);
  e.metadata(a["lse"], lS, lT);
  Value numSplits = poS[0], batch = poS[1], heads = poS[2], seq = poS[3];

  int64_t lanesPerRow = spec.valueDim / 4;
  Value tid = e.toI32(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  Value bx = e.toI32(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value row = e.add(e.mul(bx, e.c32(spec.rows())), e.div(tid, e.c32(lanesPerRow)));
  Value col = e.mul(e.rem(tid, e.c32(lanesPerRow)), e.c32(4));
  Value total = e.mul(e.mul(batch, heads), seq);
  // When Dv / 4 does not divide the CTA, the last threads have no row.
  Value used = e.lt(tid, e.c32(spec.rows() * lanesPerRow));
  auto inRange =
      scf::IfOp::create(b, loc, e.band(used, e.lt(row, total)), false);
  b.setInsertionPointToStart(inRange.thenBlock());
  Value i = e.rem(row, seq);
  Value h = e.rem(e.div(row, seq), heads);
  Value bb = e.div(e.div(row, seq), heads);
  auto lseAt = [&](Value s) {
    Value off = e.add(e.add(e.mul(e.toI64(s), plT[0]), e.mul(e.toI64(bb), plT[1])),
                      e.add(e.mul(e.toI64(h), plT[2]), e.mul(e.toI64(i), plT[3])));
    return LLVM::LoadOp::create(b, loc, f32, e.gep(plPtr, f32, off), 4)
        .getResult();
  };
  Value zero = e.c32(0), one = e.c32(1);
  auto maxLoop = scf::ForOp::create(b, loc, zero, numSplits, one,
                                    ValueRange{e.negInf()});
  {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(maxLoop.getBody());
    scf::YieldOp::create(b, loc,
                         e.fmax(maxLoop.getRegionIterArgs()[0],
                                lseAt(maxLoop.getInductionVar())));
  }
  Value m = maxLoop.getResult(0);
  Value mSafe = e.select(e.feq(m, e.negInf()), e.cf(0.0), m);
  auto v4 = VectorType::get({4}, f32);
  Value zeros = arith::ConstantOp::create(b, loc, DenseElementsAttr::get(v4, 0.0f));
  auto sumLoop = scf::ForOp::create(b, loc, zero, numSplits, one,
                                    ValueRange{e.cf(0.0), zeros});
  {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(sumLoop.getBody());
    Value s = sumLoop.getInductionVar();
    Value w = e.exp2(e.fmul(e.fsub(lseAt(s), mSafe), e.cf(kLog2e)));
    Value off = e.add(
        e.add(e.mul(e.toI64(s), poT[0]), e.mul(e.toI64(bb), poT[1])),
        e.add(e.add(e.mul(e.toI64(h), poT[2]), e.mul(e.toI64(i), poT[3])),
              e.toI64(col)));
    Value part = LLVM::LoadOp::create(b, loc, v4, e.gep(poPtr, f32, off), 16);
    Value wv = vector::BroadcastOp::create(b, loc, v4, w);
    Value acc = vector::FMAOp::create(b, loc, wv, part,
                                      sumLoop.getRegionIterArgs()[1]);
    scf::YieldOp::create(b, loc,
                         ValueRange{e.fadd(sumLoop.getRegionIterArgs()[0], w), acc});
  }
  Value l = sumLoop.getResult(0);
  Value empty = e.feq(l, e.cf(0.0));
  Value inv = e.select(empty, e.cf(0.0), e.fdiv(e.cf(1.0), l));
  Value out = arith::MulFOp::create(b, loc, sumLoop.getResult(1),
                                    vector::BroadcastOp::create(b, loc, v4, inv));
  Value narrow = arith::TruncFOp::create(b, loc, VectorType::get({4}, elt), out);
  Value oOff = e.add(e.add(e.mul(e.toI64(bb), oT[0]), e.mul(e.toI64(h), oT[1])),
                     e.add(e.mul(e.toI64(i), oT[2]), e.toI64(col)));
  LLVM::StoreOp::create(b, loc, narrow, e.gep(oPtr, elt, oOff), 8);
  Value addr = LLVM::PtrToIntOp::create(b, loc, e.i64(), lsePtr);
  Value writer = e.band(e.eq(col, e.c32(0)), e.ne(addr, e.c64(0)));
  auto ifWriter = scf::IfOp::create(b, loc, writer, false);
  b.setInsertionPointToStart(ifWriter.thenBlock());
  Value lse = e.select(empty, e.negInf(),
                       e.fadd(mSafe, e.fmul(e.log2(l), e.cf(kLn2))));
  Value lOff = e.add(e.add(e.mul(e.toI64(bb), lT[0]), e.mul(e.toI64(h), lT[1])),
                     e.mul(e.toI64(i), lT[2]));
  LLVM::StoreOp::create(b, loc, lse, e.gep(lsePtr, f32, lOff), 4);
  b.setInsertionPointToEnd(&func.getBody().front());
  gpu::ReturnOp::create(b, loc);
  return func;
}

