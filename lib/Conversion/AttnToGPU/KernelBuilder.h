//===- KernelBuilder.h - helpers of the kernel emitters ---------*- C++ -*-===//
//
// The forward kernel and the backward plan's kernels are emitted op by op
// in C++; this base holds the builder and the one-line helpers both use
// (i32 index math, f32 math, constants, GEPs).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_KERNELBUILDER_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_KERNELBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir {
namespace attn {

class KernelBuilder {
protected:
  KernelBuilder(OpBuilder &b, Location loc)
      : b(b), loc(loc), i32(b.getI32Type()), i64(b.getI64Type()),
        f32(b.getF32Type()) {}

  Value c32(int64_t v) { return arith::ConstantIntOp::create(b, loc, i32, v); }
  Value c64(int64_t v) { return arith::ConstantIntOp::create(b, loc, i64, v); }
  Value cf(double v) {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                          APFloat(static_cast<float>(v)));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value ext(Value v) { return arith::ExtSIOp::create(b, loc, i64, v); }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
  }
  Value eq(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
  }
  Value toI32(Value index) {
    return arith::IndexCastUIOp::create(b, loc, i32, index);
  }
  Value blockId(gpu::Dimension d) {
    return toI32(gpu::BlockIdOp::create(b, loc, d));
  }
  Value gridDim(gpu::Dimension d) {
    return toI32(gpu::GridDimOp::create(b, loc, d));
  }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value fsub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value fmax(Value x, Value y) {
    return arith::MaxNumFOp::create(b, loc, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value gep(Value ptr, Type elem, Value offset) {
    return LLVM::GEPOp::create(b, loc, ptr.getType(), elem, ptr,
                               ValueRange{offset});
  }

  OpBuilder &b;
  Location loc;
  Type i32, i64, f32;
};

/// A gpu.func kernel `name` of `type` at `b`'s insertion point, launched
/// with `threads` threads in x.
inline gpu::GPUFuncOp createKernelFunction(OpBuilder &b, Location loc,
                                           StringRef name, FunctionType type,
                                           int64_t threads) {
  auto func = gpu::GPUFuncOp::create(b, loc, name, type);
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
  return func;
}

/// Emits `func`'s body with `emit` at the start of its entry block, then
/// gpu.return; `b`'s insertion point is restored after.
inline void emitKernelBody(OpBuilder &b, Location loc, gpu::GPUFuncOp func,
                           function_ref<void(Block &entry)> emit) {
  OpBuilder::InsertionGuard guard(b);
  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  emit(entry);
  gpu::ReturnOp::create(b, loc);
}

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_KERNELBUILDER_H
