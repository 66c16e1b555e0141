//===- GPUTargetInfo.cpp - default per-target hooks -------------*- C++ -*-===//

#include "AttnDialect/Conversion/AttnToGPU/GPUTargetInfo.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;

MmaEmitter::~MmaEmitter() = default;

SmallVector<Value> MmaEmitter::issueScoresOnto(OpBuilder &b, Location loc,
                                               Value lane,
                                               ArrayRef<Value> query,
                                               const SharedTile &k,
                                               ArrayRef<Value> init) {
  SmallVector<Value> s = computeScores(b, loc, lane, query, k);
  for (auto [x, c] : llvm::zip_equal(s, init))
    x = arith::AddFOp::create(b, loc, x, c);
  return s;
}

LogicalResult
attn::checkFmaElementType(const KernelSpec &spec, Direction direction,
                          function_ref<InFlightDiagnostic()> emitError) {
  bool fma = spec.config.getMma() == MatrixInstrKind::Fma;
  if (fma && !spec.elemType.isF32())
    return emitError() << "config '" << spec.config.getName()
                       << "' asks for mma = fma, which runs f32 only; "
                       << spec.elemType << " runs on the matrix instructions";
  if (!fma && spec.elemType.isF32())
    return emitError() << "element type f32 needs a config with mma = fma "
                          "(f32 on scalar FMAs, not TF32); config '"
                       << spec.config.getName() << "' asks for mma = "
                       << stringifyMatrixInstrKind(spec.config.getMma());
  if (fma && direction == Direction::Backward)
    return emitError() << "element type f32: the backward plans run on the "
                          "matrix instructions (f16, bf16); f32 gradients "
                          "run on the host pipeline (attn-to-cpu)";
  return success();
}
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

// Only targets whose checkConfig admits a warp-specialized pipeline are
// asked for these.
void GPUTargetInfo::emitBarrierInit(OpBuilder &, Location, Value,
                                    int64_t) const {
  llvm_unreachable("no split barriers on this target");
}
void GPUTargetInfo::emitBarrierArrive(OpBuilder &, Location, Value) const {
  llvm_unreachable("no split barriers on this target");
}
void GPUTargetInfo::emitBarrierWait(OpBuilder &, Location, Value, Value) const {
  llvm_unreachable("no split barriers on this target");
}
void GPUTargetInfo::emitSetMaxRegisters(OpBuilder &, Location, int64_t,
                                        bool) const {
  llvm_unreachable("no setmaxnreg on this target");
}
void GPUTargetInfo::emitBarrierArriveExpectBytes(OpBuilder &, Location, Value,
                                                 int64_t) const {
  llvm_unreachable("no tensor-map copies on this target");
}
void GPUTargetInfo::emitTensorTileLoad(OpBuilder &, Location, Value, Value,
                                       ValueRange, Value) const {
  llvm_unreachable("no tensor-map copies on this target");
}

// Only targets with hasBulkReduceF32 are asked for these.
void GPUTargetInfo::emitBulkReduceAddF32(OpBuilder &, Location, Value, Value,
                                         int64_t, Value) const {
  llvm_unreachable("no bulk reductions on this target");
}
void GPUTargetInfo::emitBulkCommit(OpBuilder &, Location) const {
  llvm_unreachable("no bulk reductions on this target");
}
void GPUTargetInfo::emitBulkWait(OpBuilder &, Location, int64_t, bool) const {
  llvm_unreachable("no bulk reductions on this target");
}
void GPUTargetInfo::emitNamedBarrier(OpBuilder &, Location, Value,
                                     int64_t) const {
  llvm_unreachable("no named barriers on this target");
}
void GPUTargetInfo::emitNamedBarrierArrive(OpBuilder &, Location, Value,
                                           int64_t) const {
  llvm_unreachable("no named barriers on this target");
}
void GPUTargetInfo::emitWarpSync(OpBuilder &, Location) const {
  llvm_unreachable("no warp barrier on this target");
}
void GPUTargetInfo::emitWaitForTurn(OpBuilder &, Location, Value, Value) const {
  llvm_unreachable("no bulk reductions on this target");
}
void GPUTargetInfo::emitPassTurn(OpBuilder &, Location, Value) const {
  llvm_unreachable("no bulk reductions on this target");
}
Value GPUTargetInfo::emitMultiprocessorCount(OpBuilder &, Location) const {
  llvm_unreachable("no ordered reductions on this target");
}

// Only targets with hasDependentLaunch are asked for these.
void GPUTargetInfo::emitLaunchDependents(OpBuilder &, Location) const {
  llvm_unreachable("no programmatic dependent launch on this target");
}
void GPUTargetInfo::emitWaitForPrerequisites(OpBuilder &, Location) const {
  llvm_unreachable("no programmatic dependent launch on this target");
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
                                              Value valid, Value validBytes,
                                              bool wholeChunkBranch) const {
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
  // Piece by piece: those past validBytes read the chunk's first one
  // instead (readable when the chunk is valid) and keep their zeros. With
  // `wholeChunkBranch`, a whole chunk (all but a row's last) takes one load
  // in a branch of its own.
  OpBuilder::InsertionGuard guard(b);
  scf::IfOp ifOp;
  if (wholeChunkBranch) {
    Value whole = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sge, validBytes,
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), bytes));
    ifOp = scf::IfOp::create(b, loc, vecType, whole, /*withElse=*/true);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value full = LLVM::LoadOp::create(b, loc, vecType, src, alignBytes);
    scf::YieldOp::create(
        b, loc, arith::SelectOp::create(b, loc, valid, full, zero).getResult());
    b.setInsertionPointToStart(ifOp.elseBlock());
  }
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
  if (ifOp) {
    scf::YieldOp::create(b, loc, data);
    b.setInsertionPointAfter(ifOp);
    data = ifOp.getResult(0);
  }
  LLVM::StoreOp::create(b, loc, data, dst, bytes);
}
