//===- LaunchAttention.cpp - attn.attention to a kernel launch --*- C++ -*-===//
//
// The pattern of populateAttnToGPUConversionPatterns: replaces a memref-form
// attn.attention by a gpu.launch_func of its kernel, computing the
// attn-fwd-v1 arguments from the memrefs, and records the kernel's bundle
// metadata on the module.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Conversion/AttnToGPU/AttentionKernel.h"
#include "AttnDialect/Conversion/AttnToGPU/AttnToGPU.h"
#include "AttnDialect/Target/Tuning.h"
#include "LaunchUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;

FailureOr<KernelSpec> attn::getKernelSpec(AttentionOp op,
                                          const GPUTargetInfo &target) {
  FailureOr<KernelSpec> shared = getSharedKernelSpec(
      op, op.getQuery(), op.getValue(), op.getOutput(), op.getBias(),
      op.getConfig(), op.getMask(), op.getSoftcap().has_value(),
      {op.getQuery(), op.getKey(), op.getValue(), op.getOutput()}, target);
  if (failed(shared))
    return failure();
  KernelSpec spec = *shared;
  spec.layout = op.getSeqLayout();
  spec.dropout = op.hasDropout();
  if (spec.dynamicHeadDim() && spec.layout != SeqLayout::Dense)
    return op.emitOpError("has a dynamic head dim and a serving layout; "
                          "kernels for dynamic head dims are dense only");
  if (failed(target.checkSupported(spec, Direction::Forward,
                                   [&] { return op.emitOpError(); })))
    return failure();
  if (failed(checkSharedMemoryFits(
          op, spec, getDynamicSharedMemoryBytes(spec, target), target)))
    return failure();
  return spec;
}

namespace {
DictionaryAttr getMetadata(AttentionOp op, StringRef name,
                           const KernelSpec &spec,
                           const GPUTargetInfo &target) {
  MLIRContext *ctx = op.getContext();
  Builder b(ctx);
  std::string config;
  llvm::raw_string_ostream os(config);
  Attribute(spec.config).print(os);
  NamedAttrList attrs;
  attrs.append("name", b.getStringAttr(name));
  attrs.append("entry", b.getStringAttr(name));
  attrs.append("module", b.getStringAttr(name));
  attrs.append("platform", b.getStringAttr(target.getPlatform()));
  attrs.append("chip", b.getStringAttr(target.getChip()));
  attrs.append("dtype", b.getStringAttr(getDTypeName(spec.elemType)));
  // 0: given at run time, up to max_head_dim (two more kernel arguments).
  auto dim = [](int64_t d) { return ShapedType::isDynamic(d) ? 0 : d; };
  attrs.append("head_dim", b.getI64IntegerAttr(dim(spec.headDim)));
  attrs.append("head_dim_v", b.getI64IntegerAttr(dim(spec.headDimV)));
  if (spec.dynamicHeadDim())
    attrs.append("max_head_dim",
                 b.getI64IntegerAttr(spec.config.getMaxHeadDim()));
  attrs.append("mask", b.getStringAttr(getMaskName(spec.mask)));
  attrs.append("bias", b.getStringAttr(getBiasName(spec)));
  attrs.append("softcap", b.getBoolAttr(spec.softcap));
  // Dropout kernels take five more arguments (docs/BundleFormat.md).
  if (spec.dropout)
    attrs.append("dropout", b.getBoolAttr(true));
  attrs.append("block_m", b.getI64IntegerAttr(spec.blockM()));
  attrs.append("block_n", b.getI64IntegerAttr(spec.blockN()));
  attrs.append("threads",
               b.getI64IntegerAttr(spec.warps() * target.getWarpSize()));
  attrs.append("dynamic_smem",
               b.getI64IntegerAttr(getDynamicSharedMemoryBytes(spec, target)));
  // The loads and stores of q, k, v and o assume what the config says.
  attrs.append("align_bytes",
               b.getI64IntegerAttr(spec.config.getAlignBytes()));
  // The kernel reads the bias one element at a time.
  if (spec.biasType)
    attrs.append(
        "bias_align_bytes",
        b.getI64IntegerAttr(spec.biasType.getIntOrFloatBitWidth() / 8));
  // Serving layouts take nine more arguments (docs/BundleFormat.md);
  // absent means dense.
  if (spec.layout != SeqLayout::Dense)
    attrs.append("layout", b.getStringAttr(stringifySeqLayout(spec.layout)));
  // KV caches may split the keys: the runtime then launches the combine
  // kernel after this one (docs/BundleFormat.md, "Split-KV").
  if (spec.splitKV()) {
    attrs.append("combine_entry", b.getStringAttr(name + "_combine"));
    attrs.append("combine_threads", b.getI64IntegerAttr(kCombineThreads));
    // The combine waits for the split kernel itself: launched early, its
    // prologue overlaps the split kernel.
    if (usesDependentLaunch(spec, target))
      attrs.append("combine_programmatic_launch", b.getBoolAttr(true));
  }
  // ABI attn-fwd-v2: three tensor maps follow the arguments
  // (docs/BundleFormat.md).
  if (spec.tensorMaps())
    attrs.append("tensor_maps", b.getBoolAttr(true));
  // Workgroups walk the tiles: any grid is correct, one an SM is the aim.
  if (spec.config.getPersistent())
    attrs.append("persistent", b.getBoolAttr(true));
  // Rows are (query, head of the GQA group) pairs; grid y is Hkv.
  if (spec.packGQA())
    attrs.append("pack_gqa", b.getBoolAttr(true));
  attrs.append("seqlen_q_multiple", b.getI64IntegerAttr(1));
  attrs.append("seqlen_k_multiple", b.getI64IntegerAttr(1));
  // A size class's copy (attn-specialize-sizes) serves its lengths only.
  if (auto range = op->getAttrOfType<DictionaryAttr>(kSizeClassAttrName)) {
    if (Attribute min = range.get("seqlen_min")) {
      attrs.append("seqlen_q_min", min);
      attrs.append("seqlen_k_min", min);
    }
    if (Attribute max = range.get("seqlen_max")) {
      attrs.append("seqlen_q_max", max);
      attrs.append("seqlen_k_max", max);
    }
    if (Attribute fill = range.get("min_blocks_per_sm"))
      attrs.append("grid_min_blocks_per_sm", fill);
  }
  attrs.append("config", b.getStringAttr(config));
  return attrs.getDictionary(ctx);
}

/// attn.attention (memref form, configured) -> gpu.launch_func of its kernel,
/// the kernel built (or found, for an equal spec) in a gpu.module of the
/// op's nearest module.
class AttentionToGPULaunch : public OpRewritePattern<AttentionOp> {
public:
  AttentionToGPULaunch(MLIRContext *ctx, const GPUTargetInfo &target)
      : OpRewritePattern(ctx), target(target) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override;

private:
  /// The gpu.launch_func of `kernel` replacing `op`, before `op`.
  void createLaunch(PatternRewriter &rewriter, AttentionOp op,
                    gpu::GPUFuncOp kernel, const KernelSpec &spec) const;

  const GPUTargetInfo &target;
};
} // namespace

LogicalResult
AttentionToGPULaunch::matchAndRewrite(AttentionOp op,
                                      PatternRewriter &rewriter) const {
  // Every failure is an error on the op: the driver counts on it
  // (applyAttnToGPUConversion reports only the other attn ops it finds).
  FailureOr<KernelSpec> spec = getKernelSpec(op, target);
  if (failed(spec))
    return failure();
  std::string name = getKernelName(*spec);
  FailureOr<gpu::GPUModuleOp> gpuModule = getOrCreateKernelModule(
      rewriter, op, name, name, target, [&](gpu::GPUModuleOp m) {
        buildAttentionKernel(rewriter, op.getLoc(), m, name, *spec, target);
        if (spec->splitKV())
          buildSplitCombineKernel(rewriter, op.getLoc(), m, name + "_combine",
                                  *spec, target);
        return getMetadata(op, name, *spec, target);
      });
  if (failed(gpuModule))
    return failure();
  createLaunch(rewriter, op, gpuModule->lookupSymbol<gpu::GPUFuncOp>(name),
               *spec);
  rewriter.eraseOp(op);
  return success();
}

void AttentionToGPULaunch::createLaunch(PatternRewriter &b, AttentionOp op,
                                        gpu::GPUFuncOp kernel,
                                        const KernelSpec &spec) const {
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  Type ptrType =
      LLVM::LLVMPointerType::get(ctx, target.getGlobalAddressSpace());
  Type i32 = b.getI32Type();
  auto cI32 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  };
  auto cI64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  };
  auto dimI32 = [&](Value memref, int64_t dim) -> Value {
    Value d = memref::DimOp::create(b, loc, memref, dim);
    return arith::IndexCastOp::create(b, loc, i32, d);
  };
  auto qType = cast<MemRefType>(op.getQuery().getType());
  auto kType = cast<MemRefType>(op.getKey().getType());
  Value null = LLVM::ZeroOp::create(b, loc, ptrType);

  bool serving = spec.layout != SeqLayout::Dense;
  SmallVector<Value> args(getNumKernelArgs(spec.layout, spec.dynamicHeadDim(),
                                           spec.dropout, spec.tensorMaps()));
  if ((spec.dynamicHeadDim() || spec.dropout) && !serving) {
    args[kArgHeadDim] = dimI32(op.getQuery(), 3);
    args[kArgHeadDimV] = dimI32(op.getValue(), 3);
  }
  if (spec.dropout) {
    args[kArgDropoutP] = op.getDropoutP();
    args[kArgDropoutSeed] = op.getDropoutSeed();
    args[kArgDropoutOffset] = op.getDropoutOffset();
  }
  args[kArgQ] = getDevicePointer(b, loc, op.getQuery(), ptrType);
  args[kArgK] = getDevicePointer(b, loc, op.getKey(), ptrType);
  args[kArgV] = getDevicePointer(b, loc, op.getValue(), ptrType);
  args[kArgO] = getDevicePointer(b, loc, op.getOutput(), ptrType);
  args[kArgLse] =
      op.getLse() ? getDevicePointer(b, loc, op.getLse(), ptrType) : null;
  args[kArgBias] =
      op.getBias() ? getDevicePointer(b, loc, op.getBias(), ptrType) : null;
  args[kArgBatch] = dimI32(op.getQuery(), 0);
  args[kArgHeadsQ] = cI32(qType.getDimSize(1));
  args[kArgHeadsKV] = cI32(kType.getDimSize(1));
  args[kArgSeqQ] = dimI32(op.getQuery(), 2);
  args[kArgSeqK] = dimI32(op.getKey(), 2);
  unsigned strideBase[] = {kArgQStrideB, kArgKStrideB, kArgVStrideB,
                           kArgOStrideB};
  Value tensors[] = {op.getQuery(), op.getKey(), op.getValue(), op.getOutput()};
  for (unsigned t = 0; t < 4; ++t)
    llvm::copy(getStrides(b, loc, tensors[t], 3), args.begin() + strideBase[t]);
  if (op.getLse()) {
    llvm::copy(getStrides(b, loc, op.getLse(), 2),
               args.begin() + kArgLseStrideB);
  } else {
    args[kArgLseStrideB] = cI64(0);
    args[kArgLseStrideB + 1] = cI64(0);
  }
  if (Value bias = op.getBias()) {
    llvm::copy(getBroadcastStrides(b, loc, bias),
               args.begin() + kArgBiasStrideB);
  } else {
    for (unsigned i = 0; i < 4; ++i)
      args[kArgBiasStrideB + i] = cI64(0);
  }
  getScalarArgs(b, loc, op, MutableArrayRef<Value>(args).slice(kArgScale, 4));
  if (spec.tensorMaps()) {
    // attn-fwd-v2: the maps of q, k and v follow the other arguments.
    unsigned first = args.size() - kNumTensorMaps;
    int64_t boxRows[] = {spec.blockM(), spec.blockN(), spec.blockN()};
    for (unsigned t = 0; t < kNumTensorMaps; ++t)
      args[first + t] =
          encodeTensorMap(b, loc, op, tensors[t], args[kArgQ + t], boxRows[t]);
  }
  Value gridZ = memref::DimOp::create(b, loc, op.getQuery(), 0);
  if (serving) {
    auto ptrOr = [&](Value v) {
      return v ? getDevicePointer(b, loc, v, ptrType) : null;
    };
    args[kArgCuSeqlensQ] = ptrOr(op.getCuSeqlensQ());
    args[kArgCuSeqlensK] = ptrOr(op.getCuSeqlensK());
    args[kArgSeqlensK] = ptrOr(op.getSeqlensK());
    args[kArgBlockTable] = ptrOr(op.getBlockTable());
    args[kArgBlockTableStride] = cI64(0);
    args[kArgPageSize] = cI32(0);
    args[kArgNumPages] = cI32(0);
    // One split: the workgroups write the output directly (the runtime
    // splits; a launch from IR does not).
    args[kArgWorkspace] = null;
    args[kArgNumSplits] = cI32(1);
    if (Value table = op.getBlockTable()) {
      // Sk is the logical capacity: pages per batch times the page size.
      args[kArgBlockTableStride] = getStrides(b, loc, table, 1).front();
      args[kArgPageSize] = dimI32(op.getKey(), 2);
      args[kArgNumPages] = dimI32(op.getKey(), 0);
      args[kArgSeqK] =
          arith::MulIOp::create(b, loc, dimI32(table, 1), args[kArgPageSize]);
    }
    if (Value cu = op.getCuSeqlensQ()) {
      // One grid z per sequence; the rows of the packed batch bound Sq.
      gridZ =
          arith::SubIOp::create(b, loc, memref::DimOp::create(b, loc, cu, 0),
                                arith::ConstantIndexOp::create(b, loc, 1));
      args[kArgBatch] = arith::IndexCastOp::create(b, loc, i32, gridZ);
    }
  }

  // Grid (ceil(Sq / block_m), Hq, B), block (threads, 1, 1).
  auto cIdx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value sqIdx = memref::DimOp::create(b, loc, op.getQuery(), 2);
  int64_t heads = qType.getDimSize(1);
  if (spec.packGQA()) {
    // Rows of a block are (query, head) pairs of one key/value head.
    int64_t group = heads / kType.getDimSize(1);
    sqIdx = arith::MulIOp::create(b, loc, sqIdx, cIdx(group));
    heads = kType.getDimSize(1);
  }
  Value gridX = arith::CeilDivUIOp::create(b, loc, sqIdx, cIdx(spec.blockM()));
  gpu::KernelDim3 grid{gridX, cIdx(heads), gridZ};
  gpu::KernelDim3 block{cIdx(spec.warps() * target.getWarpSize()), cIdx(1),
                        cIdx(1)};
  Value smemBytes = cI32(getDynamicSharedMemoryBytes(spec, target));
  gpu::LaunchFuncOp::create(b, loc, kernel, grid, block, smemBytes, args);
}

void attn::populateAttnToGPUConversionPatterns(RewritePatternSet &patterns,
                                               const GPUTargetInfo &target) {
  patterns.add<AttentionToGPULaunch>(patterns.getContext(), target);
  populateAttentionGradToGPUPattern(patterns, target);
}
