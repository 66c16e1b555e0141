//===- GPUTargetInfo.cpp - default per-target hooks -------------*- C++ -*-===//

#include "AttnDialect/Conversion/AttnToGPU/GPUTargetInfo.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;

MmaEmitter::~MmaEmitter() = default;
GPUTargetInfo::~GPUTargetInfo() = default;

Value GPUTargetInfo::emitShuffleXor(OpBuilder &b, Location loc, Value v,
                                    int32_t offset) const {
  return gpu::ShuffleOp::create(b, loc, v, offset, getWarpSize(),
                                gpu::ShuffleMode::XOR)
      .getShuffleResult();
}

Value GPUTargetInfo::emitExp2(OpBuilder &b, Location loc, Value v) const {
  return math::Exp2Op::create(b, loc, v);
}

void GPUTargetInfo::emitAtomicAddF32(OpBuilder &b, Location loc, Value ptr,
                                     ArrayRef<Value> values) const {
  for (auto [i, v] : llvm::enumerate(values)) {
    Value at = LLVM::GEPOp::create(
        b, loc, ptr.getType(), b.getF32Type(), ptr,
        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
    LLVM::AtomicRMWOp::create(b, loc, LLVM::AtomicBinOp::fadd, at, v,
                              LLVM::AtomicOrdering::monotonic);
  }
}

void GPUTargetInfo::emitPiecewiseCopyToShared(OpBuilder &b, Location loc,
                                              Value dst, Value src,
                                              int64_t bytes, int64_t alignBytes,
                                              Value valid,
                                              Value validBytes) const {
  Type word = b.getIntegerType(8 * alignBytes);
  auto vecType = VectorType::get({bytes / alignBytes}, word);
  Value zero = arith::ConstantOp::create(
      b, loc, vecType, cast<TypedAttr>(b.getZeroAttr(vecType)));
  if (!validBytes) {
    // Invalid chunks point at a readable address: load, then select.
    Value data = LLVM::LoadOp::create(b, loc, vecType, src, alignBytes);
    data = arith::SelectOp::create(b, loc, valid, data, zero);
    LLVM::StoreOp::create(b, loc, data, dst, bytes);
    return;
  }
  // Pieces past validBytes read the chunk's first one instead (readable
  // when the chunk is valid) and keep their zeros.
  Value data = zero;
  for (int64_t i = 0, e = bytes / alignBytes; i < e; ++i) {
    Value in = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sgt, validBytes,
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), i * alignBytes));
    in = arith::AndIOp::create(b, loc, valid, in);
    Value at = LLVM::GEPOp::create(
        b, loc, src.getType(), b.getI8Type(), src,
        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i * alignBytes)});
    at = arith::SelectOp::create(b, loc, in, at, src);
    Value x = LLVM::LoadOp::create(b, loc, word, at, alignBytes);
    x = arith::SelectOp::create(b, loc, in, x,
                                arith::ConstantIntOp::create(b, loc, word, 0));
    data = vector::InsertOp::create(b, loc, x, data, ArrayRef<int64_t>{i});
  }
  LLVM::StoreOp::create(b, loc, data, dst, bytes);
}
