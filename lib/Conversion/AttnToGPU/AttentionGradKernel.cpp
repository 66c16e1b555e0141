//===- AttentionGradKernel.cpp - the kernels of a backward plan -----------===//
//
// All per-tile work is unrolled here in C++, as in the forward kernel: the
// register arrays (scores, dK and dV accumulators) are SSA values indexed by
// constants only. This file holds the row stages and the entry points; the
// main kernel is in BackwardMainStage.cpp, the emitters' classes in
// BackwardStageEmitters.h.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Conversion/AttnToGPU/AttentionGradKernel.h"
#include "AttnDialect/Conversion/AttnToGPU/SharedMemory.h"
#include "AttnDialect/Target/Constraints.h"
#include "AttnDialect/Utils/MaskUtils.h"
#include "BackwardStageEmitters.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/DenseMap.h"
#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

/// Whether the config's matrix instruction reads its operands from
/// swizzled shared memory (wgmma), as the tables say.
static bool readsSharedOperands(const KernelSpec &spec,
                                const GPUTargetInfo &target) {
  const MatrixInstr *instr =
      target.getChipSpec().lookupInstr(spec.config.getMma());
  return instr && instr->sharedOperands;
}

BackwardSharedMemoryLayout
attn::getBackwardStageLayout(const KernelSpec &spec,
                             const GPUTargetInfo &target) {
  bool swizzled = readsSharedOperands(spec, target);
  PipelineKind pipeline = spec.config.getPipeline();
  int64_t split = spec.config.getHeadSplit();
  bool slices = slicesOnWarpgroups(pipeline, split);
  bool staged =
      target.hasBulkReduceF32() &&
      usesBulkDq(swizzled, !spec.dqInMain(),
                 getComputeWarps(pipeline, spec.warps()), spec.headDim, slices);
  return getBackwardSharedMemoryLayout(
      spec.blockM(), spec.blockN(), spec.stages(),
      spec.elemType.getIntOrFloatBitWidth() / 8, spec.tileHeadDim,
      spec.tileHeadDimV, target.getSharedRowPadding(), swizzled,
      staged ? getBackwardHeadSlice(spec, target, spec.tileHeadDim, 0).width
             : 0,
      target.getChipSpec().smemMaxBytes, isWarpSpecialized(pipeline),
      usesBlockedDqAccum(spec.headDim, split, spec.blockM(), slices), slices,
      slices && spec.deterministic && spec.dbiasType);
}

bool attn::usesBlockedDqAccum(const KernelSpec &spec,
                              const GPUTargetInfo &target) {
  return getBackwardStageLayout(spec, target).dqStageBlocked;
}

int64_t attn::getBackwardSharedMemoryBytes(const KernelSpec &spec,
                                           const GPUTargetInfo &target) {
  return getBackwardStageLayout(spec, target).totalBytes;
}

/// `spec` with its tile read as one product of the backward: `rows` rows
/// (the forward's block_m) by `cols` score columns (its block_n), a
/// contraction of `inner` (its D) and an output of `outer` columns (its Dv),
/// both tile (padded) head dims.
KernelSpec attn::getProductSpec(const KernelSpec &spec, int64_t rows,
                                int64_t cols, int64_t inner, int64_t outer) {
  ConfigAttr c = spec.config;
  KernelSpec p = spec;
  p.headDim = p.tileHeadDim = inner;
  p.headDimV = p.tileHeadDimV = outer;
  p.config = ConfigAttr::get(
      c.getContext(), c.getName(), rows, cols, c.getWarps(), c.getStages(),
      c.getPipeline(), c.getAccInRegisters(), c.getMma(), c.getAlignBytes(),
      c.getMaxHeadDim(), c.getDeterministic(), c.getHeadSplit(),
      c.getPersistent(), c.getOverlapSoftmax());
  return p;
}

//===----------------------------------------------------------------------===//
// pre and dq
//===----------------------------------------------------------------------===//

void RowStageEmitter::enterRow() {
  Value tid = toI32(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  int64_t ws = target.getWarpSize();
  lane = arith::RemUIOp::create(b, loc, tid, c32(ws));
  Value warp = arith::DivUIOp::create(b, loc, tid, c32(ws));
  row = add(mul(blockId(gpu::Dimension::x), c32(kBackwardRowWarps)), warp);
  head = blockId(gpu::Dimension::y);
  batch = blockId(gpu::Dimension::z);
  auto ifOp = scf::IfOp::create(b, loc, lt(row, arg(kBwdSeqQ)), false);
  b.setInsertionPointToStart(ifOp.thenBlock());
}

void RowStageEmitter::emitPre() {
  OpBuilder::InsertionGuard guard(b);
  enterRow();
  Value o = rowPtr(kBwdO, kBwdOStrideB, batch, head, row);
  Value dout = rowPtr(kBwdDO, kBwdDOStrideB, batch, head, row);
  int64_t ws = target.getWarpSize();
  // One warp a row: lane l sums chunks l, l + warp size, ... (16 bytes a
  // chunk where the rows allow: 32 lanes read 512 contiguous bytes a load).
  Value sum = sumRowProductsShare(o, dout, lane, ws);
  for (int64_t off = ws / 2; off >= 1; off /= 2)
    sum = fadd(sum, target.emitShuffleXor(b, loc, sum, off));
  Value r = workspaceRow(batch, head, row);
  {
    OpBuilder::InsertionGuard g(b);
    auto ifOp = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, c32(0)),
        false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    store(sum, gep(deltaPtr(), f32, r), 4);
  }
  if (spec.orderedDq()) {
    // Each block of 64 rows starts with no key block counted.
    OpBuilder::InsertionGuard g(b);
    auto ifOp = scf::IfOp::create(
        b, loc,
        arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                  c32(0)),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                  arith::RemUIOp::create(b, loc, row, c32(64)),
                                  c32(0))),
        false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    store(c32(0), dqOrderCounter(batch, head, row), 4);
  }
  if (spec.dqInMain()) {
    // Rows of f32 that start 16-byte aligned (BackwardWorkspace.h); in
    // blocks, runs of 4 floats.
    Value accum = dqAccumPtr();
    Value zeros = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(VectorType::get({4}, f32), 0.0f));
    forEachLaneChunk(lane, spec.headDim, 4, [&](Value d, int64_t width) {
      store(width > 1 ? zeros : cf(0.0),
            dqAccumChunk(accum, batch, head, row, d), 4 * width);
    });
  }
  if (!spec.dbiasType)
    return;
  // A bias gradient written directly (summed over nothing), or a
  // deterministic plan's dbias_full: main skips the masked-out blocks, so
  // the row starts as zeros.
  BiasGradShape g = biasGradShape();
  auto direct = scf::IfOp::create(
      b, loc,
      arith::XOrIOp::create(b, loc, g.summed,
                            arith::ConstantIntOp::create(b, loc, 1, 1)),
      spec.deterministic);
  auto zeroRow = [&](Type type, function_ref<Value(Value)> address) {
    Value zero = type == f32 ? cf(0.0) : toDbiasType(cf(0.0));
    auto loop = scf::ForOp::create(b, loc, lane, arg(kBwdSeqK),
                                   c32(target.getWarpSize()));
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    store(zero, address(loop.getInductionVar()),
          type.getIntOrFloatBitWidth() / 8);
  };
  b.setInsertionPointToStart(direct.thenBlock());
  zeroRow(spec.dbiasType, [&](Value j) {
    return gep(arg(kBwdDBias), spec.dbiasType,
               dbiasOffset(g, {batch, head, row, j}));
  });
  if (!spec.deterministic)
    return;
  b.setInsertionPointToStart(direct.elseBlock());
  // With the rows summed in main, only row 0 is used: zeros for the key
  // blocks no query row sees, which main does not write.
  Value used = arith::OrIOp::create(
      b, loc,
      arith::XOrIOp::create(b, loc, rowsSummed(g),
                            arith::ConstantIntOp::create(b, loc, 1, 1)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, row, c32(0)));
  auto ifUsed = scf::IfOp::create(b, loc, used, /*withElse=*/false);
  b.setInsertionPointToStart(ifUsed.thenBlock());
  Value full = dbiasFullPtr();
  zeroRow(f32, [&](Value j) {
    return gep(full, f32, fullIndex({batch, head, row, j}));
  });
}

void RowStageEmitter::emitConvertDq() {
  OpBuilder::InsertionGuard guard(b);
  enterRow();
  Value accum = dqAccumPtr();
  Value dq = rowPtr(kBwdDQ, kBwdDQStrideB, batch, head, row);
  // Four f32 in (16 bytes), four of the input type out, where dq's rows
  // are aligned for it.
  int64_t vec = spec.config.getAlignBytes() >= 4 * elemBytes ? 4 : 1;
  forEachLaneChunk(lane, spec.headDim, vec, [&](Value d, int64_t width) {
    Value x = load(chunkType(f32, width),
                   dqAccumChunk(accum, batch, head, row, d), 4 * width);
    store(arith::TruncFOp::create(b, loc, chunkType(spec.elemType, width), x),
          gep(dq, spec.elemType, ext(d)), elemBytes * width);
  });
}

HeadSlice attn::getBackwardHeadSlice(const KernelSpec &spec,
                                     const GPUTargetInfo &target,
                                     int64_t tileDim, int64_t slice) {
  // Slices are whole multiples of the instruction's head-dim step.
  const MatrixInstr *instr =
      target.getChipSpec().lookupInstr(spec.config.getMma());
  int64_t multiple = instr ? instr->headDimMultiple : 16;
  return getHeadSlice(tileDim, spec.config.getHeadSplit(), multiple, slice);
}

int64_t attn::getDeterministicQueryRows(const KernelSpec &spec,
                                        const GPUTargetInfo &target) {
  // The tables' rule (checkDeterministic), so both say the same.
  const MatrixInstr *instr =
      target.getChipSpec().lookupInstr(spec.config.getMma());
  return instr ? mlir::attn::getDeterministicQueryRows(*instr, spec.warps())
               : 16 * spec.warps();
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

FailureOr<KernelSpec> attn::getBackwardKernelSpec(AttentionGradOp op,
                                                  const GPUTargetInfo &target) {
  FailureOr<KernelSpec> spec = getSharedKernelSpec(
      op, op.getQuery(), op.getValue(), op.getGradQuery(), op.getBias(),
      op.getConfig(), op.getMask(), op.getSoftcap().has_value(),
      {op.getQuery(), op.getKey(), op.getValue(), op.getOutput(),
       op.getGradOutput(), op.getGradQuery(), op.getGradKey(),
       op.getGradValue()},
      target);
  if (failed(spec))
    return failure();
  if (spec->dynamicHeadDim())
    return op.emitOpError("has a dynamic head dim; backward plans need "
                          "static D and Dv");
  spec->dropout = op.hasDropout();
  spec->backward = true;
  if (Value gradBias = op.getGradBias())
    spec->dbiasType = cast<ShapedType>(gradBias.getType()).getElementType();
  spec->deterministic = spec->config.getDeterministic();
  int64_t split = spec->config.getHeadSplit();
  if (split > 1 && spec->deterministic && !spec->orderedDq())
    return op.emitOpError("config '")
           << spec->config.getName() << "' has head_split " << split
           << "; the deterministic dQ pass keeps whole rows of dQ";
  for (int64_t s = 0; s < split; ++s)
    if (getBackwardHeadSlice(*spec, target, spec->tileHeadDim, s).width <= 0 ||
        getBackwardHeadSlice(*spec, target, spec->tileHeadDimV, s).width <= 0)
      return op.emitOpError("config '")
             << spec->config.getName() << "' has head_split " << split
             << ", which leaves slice " << s << " of D = " << spec->headDim
             << " or Dv = " << spec->headDimV << " empty";
  // As the tables' checkOrderedDq says: the producer warpgroup's main
  // orders whole units of dQ.
  if (spec->orderedDq()) {
    const MatrixInstr *instr =
        target.getChipSpec().lookupInstr(spec->config.getMma());
    AttentionProblem problem;
    problem.headDim = spec->headDim;
    problem.biasGrad = static_cast<bool>(spec->dbiasType);
    problem.dropout = spec->dropout;
    if (!instr)
      return op.emitOpError("config '")
             << spec->config.getName() << "' names no instruction of the chip";
    if (CheckResult why =
            checkOrderedDq(getConfigCandidate(spec->config), *instr, problem))
      return op.emitOpError("config '")
             << spec->config.getName() << "': " << *why;
  }
  // main_q keeps its Q and dO tiles in main's Q and dO buffers.
  if (!spec->dqInMain() && getDeterministicQueryRows(*spec, target) >
                               spec->blockM() * spec->stages())
    return op.emitOpError("config '")
           << spec->config.getName()
           << "' has block_m x stages = " << spec->blockM() * spec->stages()
           << " query rows of shared memory; its deterministic dQ pass needs "
           << getDeterministicQueryRows(*spec, target);
  if (failed(target.checkSupported(*spec, Direction::Backward,
                                   [&] { return op.emitOpError(); })) ||
      failed(checkSharedMemoryFits(
          op, *spec, getBackwardSharedMemoryBytes(*spec, target), target)))
    return failure();
  return spec;
}

static gpu::GPUFuncOp createStage(OpBuilder &b, Location loc, StringRef name,
                                  int64_t threads, const KernelSpec &spec,
                                  const GPUTargetInfo &target) {
  return createKernelFunction(
      b, loc, name,
      getBackwardKernelFunctionType(
          b.getContext(), target.getGlobalAddressSpace(), spec.dropout),
      threads);
}

BackwardKernels attn::buildBackwardKernels(OpBuilder &builder, Location loc,
                                           gpu::GPUModuleOp gpuModule,
                                           StringRef planName,
                                           const KernelSpec &spec,
                                           const GPUTargetInfo &target) {
  OpBuilder b(builder.getContext());
  b.setInsertionPointToEnd(gpuModule.getBody());
  declareDynamicSharedMemory(b, loc, gpuModule, target);
  int64_t rowThreads = kBackwardRowWarps * target.getWarpSize();
  BackwardKernels k;
  if (!queryPassComputesDelta(spec)) {
    k.pre = createStage(b, loc, (planName + "_pre").str(), rowThreads, spec,
                        target);
    emitKernelBody(b, loc, k.pre, [&](Block &) {
      RowStageEmitter(b, loc, k.pre, spec, target).emitPre();
    });
  }
  // One main kernel per head_split slice: `_main`, then `_main_1`, ...
  // (one for all with slicesOnWarpgroups).
  for (int64_t s = 0; s < getMainKernelCount(spec); ++s) {
    std::string name = (planName + "_main").str();
    if (s)
      name += "_" + std::to_string(s);
    gpu::GPUFuncOp main = createStage(
        b, loc, name, spec.warps() * target.getWarpSize(), spec, target);
    target.annotateKernel(main, spec);
    emitKernelBody(b, loc, main, [&](Block &) {
      MainStageEmitter(b, loc, main, spec, target, s).emit();
    });
    if (s)
      k.mainSlices.push_back(main);
    else
      k.main = main;
  }
  if (!spec.dqInMain()) {
    k.mainQ = createStage(b, loc, (planName + "_main_q").str(),
                          spec.warps() * target.getWarpSize(), spec, target);
    target.annotateKernel(k.mainQ, spec);
    emitKernelBody(b, loc, k.mainQ, [&](Block &) {
      MainStageEmitter(b, loc, k.mainQ, spec, target).emitQueryPass();
    });
  } else {
    k.dq =
        createStage(b, loc, (planName + "_dq").str(), rowThreads, spec, target);
    emitKernelBody(b, loc, k.dq, [&](Block &) {
      RowStageEmitter(b, loc, k.dq, spec, target).emitConvertDq();
    });
  }
  if (!spec.dbiasType)
    return k;
  // A deterministic plan sums dbias_full in a stage of its own (which does
  // nothing when dbias is summed over no dimension: main writes it then).
  if (spec.deterministic) {
    k.convertDbias = createStage(b, loc, (planName + "_dbias").str(),
                                 kReduceColumns * kReduceShares, spec, target);
    emitKernelBody(b, loc, k.convertDbias, [&](Block &) {
      BiasStageEmitter(b, loc, k.convertDbias, spec, target)
          .emitReduce(k.convertDbias);
    });
    return k;
  }
  k.zeroDbias = createStage(b, loc, (planName + "_zero_dbias").str(),
                            kBiasStageThreads, spec, target);
  emitKernelBody(b, loc, k.zeroDbias, [&](Block &) {
    BiasStageEmitter(b, loc, k.zeroDbias, spec, target).emit(false);
  });
  k.convertDbias = createStage(b, loc, (planName + "_dbias").str(),
                               kBiasStageThreads, spec, target);
  emitKernelBody(b, loc, k.convertDbias, [&](Block &) {
    BiasStageEmitter(b, loc, k.convertDbias, spec, target).emit(true);
  });
  return k;
}
