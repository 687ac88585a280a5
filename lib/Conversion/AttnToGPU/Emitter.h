//===- Emitter.h - scalar code of the GPU kernels ---------------*- C++ -*-===//
//
// A thin layer over OpBuilder for the integer and float scalar code the GPU
// lowering emits: i32 arithmetic for indices, i64 for global element
// offsets, and the special-function unit for exp2/log2.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_EMITTER_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_EMITTER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <limits>

namespace mlir {
namespace attn {

constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;

/// A thin layer over OpBuilder for the integer and float scalar code of the
/// kernels: i32 arithmetic for indices, i64 for global element offsets.
struct Emitter {
  OpBuilder &b;
  Location loc;

  Type i1() { return b.getI1Type(); }
  Type i32() { return b.getI32Type(); }
  Type i64() { return b.getI64Type(); }
  Type f32() { return b.getF32Type(); }

  Value c32(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  }
  Value c64(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }
  Value cf(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value cbool(bool v) {
    return arith::ConstantOp::create(b, loc, b.getBoolAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivSIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemSIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value lt(Value x, Value y) { return cmp(arith::CmpIPredicate::slt, x, y); }
  Value gt(Value x, Value y) { return cmp(arith::CmpIPredicate::sgt, x, y); }
  Value ge(Value x, Value y) { return cmp(arith::CmpIPredicate::sge, x, y); }
  Value eq(Value x, Value y) { return cmp(arith::CmpIPredicate::eq, x, y); }
  Value ne(Value x, Value y) { return cmp(arith::CmpIPredicate::ne, x, y); }
  Value udiv(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value urem(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value shr(Value x, Value y) { return arith::ShRUIOp::create(b, loc, x, y); }
  Value shl(Value x, Value y) { return arith::ShLIOp::create(b, loc, x, y); }
  Value band(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value bxor(Value x, Value y) { return arith::XOrIOp::create(b, loc, x, y); }
  Value bor(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value fsub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value fdiv(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value fmax(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value feq(Value x, Value y) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, y);
  }
  Value negInf() { return cf(-std::numeric_limits<double>::infinity()); }
  Value toI64(Value v) { return arith::ExtSIOp::create(b, loc, i64(), v); }
  Value toI32(Value index) {
    return arith::IndexCastOp::create(b, loc, i32(), index);
  }

  /// ex2.approx / lg2.approx: the special-function unit, no libdevice.
  Value exp2(Value x) {
    return LLVM::CallIntrinsicOp::create(
               b, loc, f32(), b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f"), x)
        .getResult(0);
  }
  Value log2(Value x) {
    return LLVM::CallIntrinsicOp::create(
               b, loc, f32(), b.getStringAttr("llvm.nvvm.lg2.approx.ftz.f"), x)
        .getResult(0);
  }

  /// The global-memory base pointer (with its offset) of a memref argument.
  Value globalBase(Value memref, Type elementType) {
    Value idx = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
    Value i = arith::IndexCastOp::create(b, loc, i64(), idx);
    Value generic = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext()), i);
    Value global = LLVM::AddrSpaceCastOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1), generic);
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
    return gep(global, elementType,
               arith::IndexCastOp::create(b, loc, i64(), meta.getOffset()));
  }
  Value gep(Value ptr, Type elementType, Value offset) {
    return LLVM::GEPOp::create(b, loc, ptr.getType(), elementType, ptr,
                               ValueRange{offset});
  }
  /// Sizes and strides of a memref argument as i32 / i64 values.
  void metadata(Value memref, SmallVectorImpl<Value> &sizes,
                SmallVectorImpl<Value> &strides) {
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
    for (Value s : meta.getSizes())
      sizes.push_back(toI32(s));
    for (Value s : meta.getStrides())
      strides.push_back(arith::IndexCastOp::create(b, loc, i64(), s));
  }
};

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_EMITTER_H
