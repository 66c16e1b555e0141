//===- LaunchAttentionGrad.cpp - attn.attention_grad to a plan --*- C++ -*-===//
//
// The backward pattern of populateAttnToGPUConversionPatterns: replaces a
// memref-form attn.attention_grad by its backward plan, a workspace
// (gpu.alloc) and the launches of the plan's three stages in order, and
// records the plan's bundle metadata on the module (attn.kernels, with
// kind = "plan").
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Conversion/AttnToGPU/AttentionGradKernel.h"
#include "AttnDialect/Conversion/AttnToGPU/AttentionKernel.h"
#include "AttnDialect/Conversion/AttnToGPU/AttnToGPU.h"
#include "BackwardWorkspace.h"
#include "LaunchUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
/// A grid extent of a plan stage: ceil(dim / block), as bundle.json writes
/// it.
DictionaryAttr getExtent(Builder &b, StringRef dim, int64_t block = 1) {
  NamedAttrList attrs;
  attrs.append("dim", b.getStringAttr(dim));
  if (block != 1)
    attrs.append("block", b.getI64IntegerAttr(block));
  return attrs.getDictionary(b.getContext());
}

DictionaryAttr getStage(Builder &b, StringRef name, StringRef entry,
                        ArrayRef<Attribute> grid, int64_t threads, int64_t smem,
                        StringRef role, ArrayRef<StringRef> buffers) {
  NamedAttrList attrs;
  attrs.append("name", b.getStringAttr(name));
  attrs.append("entry", b.getStringAttr(entry));
  attrs.append("grid", b.getArrayAttr(grid));
  attrs.append("threads", b.getI64IntegerAttr(threads));
  attrs.append("dynamic_smem", b.getI64IntegerAttr(smem));
  SmallVector<Attribute> names;
  for (StringRef buffer : buffers)
    names.push_back(b.getStringAttr(buffer));
  if (!names.empty())
    attrs.append(role, b.getArrayAttr(names));
  return attrs.getDictionary(b.getContext());
}

DictionaryAttr getBuffer(Builder &b, StringRef name, ArrayRef<StringRef> dims,
                         StringRef dtype) {
  SmallVector<Attribute> d;
  for (StringRef dim : dims)
    d.push_back(b.getStringAttr(dim));
  NamedAttrList attrs;
  attrs.append("name", b.getStringAttr(name));
  attrs.append("dtype", b.getStringAttr(dtype));
  attrs.append("dims", b.getArrayAttr(d));
  return attrs.getDictionary(b.getContext());
}

/// The plan's bundle.json entry (docs/BundleFormat.md, "Plans"), less the
/// binary file name, which attn-write-bundle adds to each stage.
DictionaryAttr getPlanMetadata(MLIRContext *ctx, StringRef name,
                               BackwardKernels kernels, const KernelSpec &spec,
                               const GPUTargetInfo &target) {
  Builder b(ctx);
  std::string config;
  llvm::raw_string_ostream os(config);
  Attribute(spec.config).print(os);
  int64_t ws = target.getWarpSize();
  NamedAttrList attrs;
  attrs.append("kind", b.getStringAttr("plan"));
  attrs.append("name", b.getStringAttr(name));
  attrs.append("module", b.getStringAttr(name));
  attrs.append("platform", b.getStringAttr(target.getPlatform()));
  attrs.append("chip", b.getStringAttr(target.getChip()));
  attrs.append("op", b.getStringAttr("backward"));
  attrs.append("abi", b.getStringAttr("attn-bwd-v1"));
  attrs.append("dtype", b.getStringAttr(getDTypeName(spec.elemType)));
  attrs.append("head_dim", b.getI64IntegerAttr(spec.headDim));
  attrs.append("head_dim_v", b.getI64IntegerAttr(spec.headDimV));
  attrs.append("mask", b.getStringAttr(getMaskName(spec.mask)));
  attrs.append("bias", b.getStringAttr(getBiasName(spec)));
  attrs.append("bias_grad", b.getBoolAttr(static_cast<bool>(spec.dbiasType)));
  attrs.append("softcap", b.getBoolAttr(spec.softcap));
  // Each stage takes three more arguments (docs/BundleFormat.md).
  if (spec.dropout)
    attrs.append("dropout", b.getBoolAttr(true));
  // dq_accum is summed by atomic adds in whatever order the blocks run;
  // a deterministic plan computes dQ in a pass of its own.
  attrs.append("deterministic", b.getBoolAttr(spec.deterministic));
  attrs.append("align_bytes", b.getI64IntegerAttr(spec.config.getAlignBytes()));
  if (spec.biasType)
    attrs.append(
        "bias_align_bytes",
        b.getI64IntegerAttr(spec.biasType.getIntOrFloatBitWidth() / 8));
  attrs.append("seqlen_q_multiple", b.getI64IntegerAttr(1));
  attrs.append("seqlen_k_multiple", b.getI64IntegerAttr(1));
  attrs.append("config", b.getStringAttr(config));
  SmallVector<Attribute> buffers;
  for (const WorkspaceBuffer &buffer :
       getBackwardWorkspace(spec, usesBlockedDqAccum(spec, target)))
    buffers.push_back(getBuffer(b, buffer.name, buffer.dims, buffer.dtype));
  Attribute rows[] = {getExtent(b, "seqlen_q", kBackwardRowWarps),
                      getExtent(b, "heads_q"), getExtent(b, "batch")};
  Attribute keys[] = {getExtent(b, "seqlen_k", spec.blockN()),
                      getExtent(b, "heads_kv"), getExtent(b, "batch")};
  SmallVector<Attribute> stages;
  // An ordered plan's main also counts each block's key blocks in dq_order.
  SmallVector<StringRef> dqBuffers = {"dq_accum"};
  if (spec.orderedDq())
    dqBuffers.push_back("dq_order");
  // pre also zeroes what main writes of dbias_full (rows it may skip).
  SmallVector<StringRef> preZeroes(dqBuffers);
  if (spec.dbiasType && spec.deterministic)
    preZeroes.push_back("dbias_full");
  if (spec.dqInMain())
    stages = {getStage(b, "pre", kernels.pre.getName(), rows,
                       kBackwardRowWarps * ws, 0, "zeroes", preZeroes),
              getStage(b, "main", kernels.main.getName(), keys,
                       spec.warps() * ws,
                       getBackwardSharedMemoryBytes(spec, target), "reduces",
                       dqBuffers),
              getStage(b, "convert_dq", kernels.dq.getName(), rows,
                       kBackwardRowWarps * ws, 0, "reads", {"dq_accum"})};
  if (!spec.dqInMain()) {
    // No dq_accum: main computes dK and dV, main_q dQ (one workgroup per
    // block of getDeterministicQueryRows rows).
    Attribute queryBlocks[] = {
        getExtent(b, "seqlen_q", getDeterministicQueryRows(spec, target)),
        getExtent(b, "heads_q"), getExtent(b, "batch")};
    int64_t smem = getBackwardSharedMemoryBytes(spec, target);
    SmallVector<StringRef> zeroed;
    if (spec.dbiasType)
      zeroed.push_back("dbias_full");
    if (queryPassComputesDelta(spec))
      stages = {getStage(b, "main_q", kernels.mainQ.getName(), queryBlocks,
                         spec.warps() * ws, smem, "reduces", {}),
                getStage(b, "main_kv", kernels.main.getName(), keys,
                         spec.warps() * ws, smem, "reads", {"delta"})};
    else
      stages = {getStage(b, "pre", kernels.pre.getName(), rows,
                         kBackwardRowWarps * ws, 0, "zeroes", zeroed),
                getStage(b, "main_kv", kernels.main.getName(), keys,
                         spec.warps() * ws, smem, "reduces", {}),
                getStage(b, "main_q", kernels.mainQ.getName(), queryBlocks,
                         spec.warps() * ws, smem, "reads", {"delta"})};
  }
  // The summed bias gradient (its dims are 0 when it is summed over
  // nothing: main then writes dbias directly and these stages vanish).
  Attribute biasRows[] = {getExtent(b, "bias_seqlen_q", kBiasStageThreads),
                          getExtent(b, "bias_heads"),
                          getExtent(b, "bias_batch")};
  // reduce_dbias: kReduceShares threads per key column of dbias, their
  // partial sums in shared memory.
  Attribute biasColumns[] = {getExtent(b, "bias_seqlen_k", kReduceColumns),
                             getExtent(b, "bias_heads"),
                             getExtent(b, "bias_batch")};
  if (spec.dbiasType && spec.deterministic)
    stages.push_back(getStage(b, "reduce_dbias", kernels.convertDbias.getName(),
                              biasColumns, kReduceColumns * kReduceShares,
                              kReduceColumns * kReduceShares * 4, "reads",
                              {"dbias_full"}));
  if (spec.dbiasType && !spec.deterministic) {
    stages.insert(stages.begin() + 1,
                  getStage(b, "zero_dbias", kernels.zeroDbias.getName(),
                           biasRows, kBiasStageThreads, 0, "zeroes",
                           {"dbias_accum"}));
    // The stage after it (main, slice 0) also adds into dbias_accum.
    stages[2] =
        getStage(b, "main", kernels.main.getName(), keys, spec.warps() * ws,
                 getBackwardSharedMemoryBytes(spec, target), "reduces",
                 {"dq_accum", "dbias_accum"});
    stages.push_back(getStage(b, "convert_dbias",
                              kernels.convertDbias.getName(), biasRows,
                              kBiasStageThreads, 0, "reads", {"dbias_accum"}));
  }
  // head_split: the other slices' main kernels right after main.
  auto mainAt = llvm::find_if(stages, [](Attribute stage) {
    return cast<DictionaryAttr>(stage).getAs<StringAttr>("name").getValue() ==
           "main";
  });
  SmallVector<Attribute> slices;
  for (auto [i, kernel] : llvm::enumerate(kernels.mainSlices))
    slices.push_back(getStage(b, ("main_" + Twine(i + 1)).str(),
                              kernel.getName(), keys, spec.warps() * ws,
                              getBackwardSharedMemoryBytes(spec, target),
                              "reduces", {"dq_accum"}));
  if (!slices.empty())
    stages.insert(std::next(mainAt), slices.begin(), slices.end());
  attrs.append("workspace", b.getArrayAttr(buffers));
  attrs.append("stages", b.getArrayAttr(stages));
  return attrs.getDictionary(ctx);
}

class AttentionGradToGPULaunch : public OpRewritePattern<AttentionGradOp> {
public:
  AttentionGradToGPULaunch(MLIRContext *ctx, const GPUTargetInfo &target)
      : OpRewritePattern(ctx), target(target) {}

  LogicalResult matchAndRewrite(AttentionGradOp op,
                                PatternRewriter &rewriter) const override;

private:
  /// The workspace and the stage launches replacing `op`, before `op`.
  void createLaunches(PatternRewriter &rewriter, AttentionGradOp op,
                      const BackwardKernels &kernels,
                      const KernelSpec &spec) const;

  const GPUTargetInfo &target;
};
} // namespace

LogicalResult
AttentionGradToGPULaunch::matchAndRewrite(AttentionGradOp op,
                                          PatternRewriter &rewriter) const {
  FailureOr<KernelSpec> spec = getBackwardKernelSpec(op, target);
  if (failed(spec))
    return failure();
  std::string name = getBackwardPlanName(*spec);
  FailureOr<gpu::GPUModuleOp> gpuModule = getOrCreateKernelModule(
      rewriter, op, name, name + "_main", target, [&](gpu::GPUModuleOp m) {
        BackwardKernels kernels =
            buildBackwardKernels(rewriter, op.getLoc(), m, name, *spec, target);
        return getPlanMetadata(op.getContext(), name, kernels, *spec, target);
      });
  if (failed(gpuModule))
    return failure();
  auto get = [&](StringRef suffix) {
    return gpuModule->lookupSymbol<gpu::GPUFuncOp>((name + suffix).str());
  };
  BackwardKernels kernels{get("_pre"),        get("_main"),  get("_dq"),
                          get("_zero_dbias"), get("_dbias"), get("_main_q"),
                          /*mainSlices=*/{}};
  for (int64_t s = 1; s < getMainKernelCount(*spec); ++s)
    kernels.mainSlices.push_back(get(("_main_" + Twine(s)).str()));
  createLaunches(rewriter, op, kernels, *spec);
  rewriter.eraseOp(op);
  return success();
}

void AttentionGradToGPULaunch::createLaunches(PatternRewriter &b,
                                              AttentionGradOp op,
                                              const BackwardKernels &kernels,
                                              const KernelSpec &spec) const {
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  Type ptrType =
      LLVM::LLVMPointerType::get(ctx, target.getGlobalAddressSpace());
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto cI32 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  };
  auto cI64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  auto cIdx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto dim = [&](Value memref, int64_t d) -> Value {
    return memref::DimOp::create(b, loc, memref, d);
  };
  auto toI32 = [&](Value index) -> Value {
    return arith::IndexCastOp::create(b, loc, i32, index);
  };
  auto qType = cast<MemRefType>(op.getQuery().getType());
  auto kType = cast<MemRefType>(op.getKey().getType());
  Value null = LLVM::ZeroOp::create(b, loc, ptrType);

  Value batch = dim(op.getQuery(), 0), sq = dim(op.getQuery(), 2),
        sk = dim(op.getKey(), 2);
  // Whether grad_bias is summed over a broadcast dimension: of size 1 where
  // the full size is not.
  Value gradBias = op.getGradBias();
  Value summed = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
  if (gradBias) {
    Value full[] = {batch, cIdx(qType.getDimSize(1)), sq, sk};
    for (int64_t d = 0; d < 4; ++d) {
      Value one = cIdx(1);
      Value broadcast = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                dim(gradBias, d), one),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, full[d],
                                one));
      summed = arith::OrIOp::create(b, loc, summed, broadcast);
    }
  }
  // The workspace (BackwardWorkspace.h), sized from the operands' dims:
  // dbias_accum in grad_bias's shape (its broadcast dimensions are 1).
  Value summedSize = arith::SelectOp::create(b, loc, summed, cIdx(1), cIdx(0));
  WorkspaceArith sizes{
      [&](StringRef d) -> std::optional<int64_t> {
        if (d == "heads_q")
          return qType.getDimSize(1);
        if (d == "head_dim")
          return spec.headDim;
        if (d == "head_dim_64")
          return llvm::alignTo(spec.headDim, 64);
        return std::nullopt;
      },
      [&](StringRef d) -> Value {
        if (d == "batch")
          return batch;
        if (d == "seqlen_q")
          return sq;
        if (d == "seqlen_q_64")
          return arith::MulIOp::create(
              b, loc, arith::CeilDivUIOp::create(b, loc, sq, cIdx(64)),
              cIdx(64));
        if (d == "seqlen_k")
          return sk;
        if (d == "bias_summed")
          return summedSize;
        int64_t i = llvm::StringSwitch<int64_t>(d)
                        .Case("bias_batch", 0)
                        .Case("bias_heads", 1)
                        .Case("bias_seqlen_q", 2)
                        .Default(3);
        return dim(gradBias, i);
      },
      [&](int64_t v) -> Value { return cIdx(v); },
      [&](Value x, Value y) -> Value {
        return arith::MulIOp::create(b, loc, x, y);
      },
      [&](Value x, Value y) -> Value {
        return arith::AddIOp::create(b, loc, x, y);
      },
      [&](Value x, int64_t m) -> Value {
        return arith::MulIOp::create(
            b, loc, arith::CeilDivUIOp::create(b, loc, x, cIdx(m)), cIdx(m));
      }};
  Value bytes = getWorkspaceOffset(
      getBackwardWorkspace(spec, usesBlockedDqAccum(spec, target)), "", sizes);
  auto wsType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type());
  Value workspace =
      gpu::AllocOp::create(b, loc, wsType, /*asyncToken=*/Type(),
                           /*asyncDependencies=*/ValueRange(),
                           ValueRange{bytes}, /*symbolOperands=*/ValueRange())
          .getMemref();

  SmallVector<Value> args(spec.dropout ? kNumDropoutBackwardKernelArgs
                                       : kNumBackwardKernelArgs);
  if (spec.dropout) {
    args[kBwdDropoutP] = op.getDropoutP();
    args[kBwdDropoutSeed] = op.getDropoutSeed();
    args[kBwdDropoutOffset] = op.getDropoutOffset();
  }
  struct Operand {
    unsigned ptr, stride;
    Value memref;
  };
  Operand tensors[] = {{kBwdQ, kBwdQStrideB, op.getQuery()},
                       {kBwdK, kBwdKStrideB, op.getKey()},
                       {kBwdV, kBwdVStrideB, op.getValue()},
                       {kBwdO, kBwdOStrideB, op.getOutput()},
                       {kBwdDO, kBwdDOStrideB, op.getGradOutput()},
                       {kBwdDQ, kBwdDQStrideB, op.getGradQuery()},
                       {kBwdDK, kBwdDKStrideB, op.getGradKey()},
                       {kBwdDV, kBwdDVStrideB, op.getGradValue()}};
  for (const Operand &t : tensors) {
    args[t.ptr] = getDevicePointer(b, loc, t.memref, ptrType);
    llvm::copy(getStrides(b, loc, t.memref, 3), args.begin() + t.stride);
  }
  args[kBwdLse] = getDevicePointer(b, loc, op.getLse(), ptrType);
  llvm::copy(getStrides(b, loc, op.getLse(), 2), args.begin() + kBwdLseStrideB);
  args[kBwdBias] = null;
  args[kBwdDBias] = null;
  for (unsigned i = 0; i < 4; ++i) {
    args[kBwdBiasStrideB + i] = cI64(0);
    args[kBwdDBiasStrideB + i] = cI64(0);
  }
  if (Value bias = op.getBias()) {
    args[kBwdBias] = getDevicePointer(b, loc, bias, ptrType);
    llvm::copy(getBroadcastStrides(b, loc, bias),
               args.begin() + kBwdBiasStrideB);
  }
  if (gradBias) {
    args[kBwdDBias] = getDevicePointer(b, loc, gradBias, ptrType);
    llvm::copy(getBroadcastStrides(b, loc, gradBias),
               args.begin() + kBwdDBiasStrideB);
  }
  args[kBwdWorkspace] = getDevicePointer(b, loc, workspace, ptrType);
  args[kBwdBatch] = toI32(batch);
  args[kBwdHeadsQ] = cI32(qType.getDimSize(1));
  args[kBwdHeadsKV] = cI32(kType.getDimSize(1));
  args[kBwdSeqQ] = toI32(sq);
  args[kBwdSeqK] = toI32(dim(op.getKey(), 2));
  getScalarArgs(b, loc, op, MutableArrayRef<Value>(args).slice(kBwdScale, 4));

  int64_t ws = target.getWarpSize();
  auto launch = [&](gpu::GPUFuncOp kernel, Value gridX, Value gridY,
                    int64_t threads, int64_t smem, Value gridZ = Value()) {
    gpu::KernelDim3 grid{gridX, gridY, gridZ ? gridZ : batch};
    gpu::KernelDim3 block{cIdx(threads), cIdx(1), cIdx(1)};
    gpu::LaunchFuncOp::create(b, loc, kernel, grid, block, cI32(smem), args);
  };
  Value rowBlocks =
      arith::CeilDivUIOp::create(b, loc, sq, cIdx(kBackwardRowWarps));
  Value keyBlocks = arith::CeilDivUIOp::create(b, loc, sk, cIdx(spec.blockN()));
  // The bias-gradient stages: one thread per row of grad_bias (they do
  // nothing when it is summed over no dimension).
  auto launchBias = [&](gpu::GPUFuncOp kernel) {
    launch(kernel,
           arith::CeilDivUIOp::create(b, loc, dim(gradBias, 2),
                                      cIdx(kBiasStageThreads)),
           dim(gradBias, 1), kBiasStageThreads, 0, dim(gradBias, 0));
  };
  auto launchQueryPass = [&] {
    launch(kernels.mainQ,
           arith::CeilDivUIOp::create(
               b, loc, sq, cIdx(getDeterministicQueryRows(spec, target))),
           cIdx(qType.getDimSize(1)), spec.warps() * ws,
           getBackwardSharedMemoryBytes(spec, target));
  };
  // A query pass that computes delta runs first, in place of `pre`.
  bool deltaInQueryPass = queryPassComputesDelta(spec);
  if (deltaInQueryPass)
    launchQueryPass();
  else
    launch(kernels.pre, rowBlocks, cIdx(qType.getDimSize(1)),
           kBackwardRowWarps * ws, 0);
  if (gradBias && !spec.deterministic)
    launchBias(kernels.zeroDbias);
  SmallVector<gpu::GPUFuncOp> mains = {kernels.main};
  llvm::append_range(mains, kernels.mainSlices);
  for (gpu::GPUFuncOp main : mains)
    launch(main, keyBlocks, cIdx(kType.getDimSize(1)), spec.warps() * ws,
           getBackwardSharedMemoryBytes(spec, target));
  if (!spec.dqInMain() && !deltaInQueryPass)
    launchQueryPass();
  else if (spec.dqInMain())
    launch(kernels.dq, rowBlocks, cIdx(qType.getDimSize(1)),
           kBackwardRowWarps * ws, 0);
  if (gradBias && spec.deterministic)
    launch(kernels.convertDbias,
           arith::CeilDivUIOp::create(b, loc, dim(gradBias, 3),
                                      cIdx(kReduceColumns)),
           dim(gradBias, 1), kReduceColumns * kReduceShares,
           kReduceColumns * kReduceShares * 4, dim(gradBias, 0));
  else if (gradBias)
    launchBias(kernels.convertDbias);
  gpu::DeallocOp::create(b, loc, /*asyncToken=*/Type(), ValueRange(),
                         workspace);
}

void attn::populateAttentionGradToGPUPattern(RewritePatternSet &patterns,
                                             const GPUTargetInfo &target) {
  if (target.lowersBackward())
    patterns.add<AttentionGradToGPULaunch>(patterns.getContext(), target);
}
