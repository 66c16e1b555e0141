//===- GPUTargetInfo.cpp - default per-target hooks -------------*- C++ -*-===//

#include "AttnDialect/Conversion/AttnToGPU/GPUTargetInfo.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

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
