//===- GPUTargetInfo.cpp - default per-target hooks -------------*- C++ -*-===//

#include "AttnDialect/Conversion/AttnToGPU/GPUTargetInfo.h"
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
