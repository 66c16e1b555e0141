//===- LaunchUtils.cpp - kernel arguments from memrefs --------------------===//

#include "LaunchUtils.h"
#include "AttnDialect/Conversion/AttnToGPU/AttentionKernel.h"
#include "AttnDialect/Target/Constraints.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::attn;

/// Device pointer (aligned pointer + offset) of a memref, as the kernel's
/// `!llvm.ptr<1>` argument.
Value attn::getDevicePointer(OpBuilder &b, Location loc, Value memref,
                             Type ptrType) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value aligned =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  int64_t eb = cast<MemRefType>(memref.getType()).getElementTypeBitWidth() / 8;
  Value bytes = arith::MulIOp::create(
      b, loc, meta.getOffset(), arith::ConstantIndexOp::create(b, loc, eb));
  Value addr = arith::AddIOp::create(b, loc, aligned, bytes);
  Value addr64 = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), addr);
  return LLVM::IntToPtrOp::create(b, loc, ptrType, addr64);
}

SmallVector<Value> attn::getStrides(OpBuilder &b, Location loc, Value memref,
                                    unsigned count) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  SmallVector<Value> out;
  for (unsigned i = 0; i < count; ++i)
    out.push_back(arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                             meta.getStrides()[i]));
  return out;
}

SmallVector<Value> attn::getBroadcastStrides(OpBuilder &b, Location loc,
                                             Value bias) {
  // A dimension of size 1 broadcasts: stride 0, so the kernel reads index 0
  // whatever the row, key, head or batch. A dynamic one may be 1 at run time.
  SmallVector<Value> strides = getStrides(b, loc, bias, 4);
  auto biasType = cast<MemRefType>(bias.getType());
  Value zero = arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0);
  for (unsigned i = 0; i < 4; ++i) {
    if (biasType.getDimSize(i) == 1) {
      strides[i] = zero;
    } else if (biasType.isDynamicDim(i)) {
      Value one =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                memref::DimOp::create(b, loc, bias, i),
                                arith::ConstantIndexOp::create(b, loc, 1));
      strides[i] = arith::SelectOp::create(b, loc, one, zero, strides[i]);
    }
  }
  return strides;
}

FailureOr<KernelSpec>
attn::getSharedKernelSpec(Operation *op, Value query, Value value, Value output,
                          Value bias, std::optional<ConfigAttr> config,
                          MaskKind mask, bool softcap, ValueRange rows,
                          const GPUTargetInfo &target) {
  auto qType = dyn_cast<MemRefType>(query.getType());
  if (!qType || !isa<MemRefType>(output.getType()))
    return op->emitOpError(
        "expected memref operands (run one-shot-bufferize first)");
  if (!config)
    return op->emitOpError("has no 'config' attribute: run "
                           "attn-select-config or attach a #attn.config");
  KernelSpec spec;
  spec.elemType = qType.getElementType();
  spec.headDim = qType.getDimSize(3);
  spec.headDimV = cast<MemRefType>(value.getType()).getDimSize(3);
  spec.mask = mask;
  spec.softcap = softcap;
  spec.config = *config;
  int64_t elemBytes = spec.elemType.getIntOrFloatBitWidth() / 8;
  if (config->getAlignBytes() < elemBytes)
    return op->emitOpError("config '")
           << config->getName()
           << "' has align_bytes = " << config->getAlignBytes()
           << ", below the " << elemBytes << "-byte elements of "
           << spec.elemType;
  // A dynamic head dim is a kernel argument up to the config's bound.
  int64_t maxD = config->getMaxHeadDim();
  if (spec.dynamicHeadDim() && maxD <= 0)
    return op->emitOpError("has a dynamic head dim; its config '")
           << config->getName()
           << "' needs max_head_dim, the largest D and Dv to serve";
  if (!spec.dynamicHeadDim() && maxD > 0)
    return op->emitOpError("has static head dims; config '")
           << config->getName()
           << "' has max_head_dim, which is for dynamic ones";
  spec.tileHeadDim = spec.maxHeadDim();
  spec.tileHeadDimV = spec.maxHeadDimV();
  // An unknown instruction is checkSupported's error to report.
  if (const MatrixInstr *instr =
          target.getChipSpec().lookupInstr(config->getMma())) {
    spec.tileHeadDim = getTileHeadDim(*instr, spec.maxHeadDim());
    spec.tileHeadDimV = getTileHeadDimV(*instr, spec.maxHeadDimV());
  }
  if (bias) {
    auto t = dyn_cast<MemRefType>(bias.getType());
    int64_t offset;
    SmallVector<int64_t> strides;
    // Any strides will do (the kernels read the bias one element at a
    // time), but they must be expressible as the ABI's four strides.
    if (!t || failed(t.getStridesAndOffset(strides, offset)))
      return op->emitOpError("expected a strided memref bias, got ")
             << bias.getType();
    spec.biasType = t.getElementType();
  }
  for (Value v : rows) {
    auto t = cast<MemRefType>(v.getType());
    int64_t offset;
    SmallVector<int64_t> strides;
    // A dynamic innermost stride is taken to be 1, as the kernel ABIs
    // require; a static one must be.
    if (failed(t.getStridesAndOffset(strides, offset)) ||
        (!ShapedType::isDynamic(strides.back()) && strides.back() != 1))
      return op->emitOpError("expected operands whose last dimension is "
                             "contiguous (stride 1), got ")
             << t;
  }
  return spec;
}

LogicalResult attn::checkSharedMemoryFits(Operation *op, const KernelSpec &spec,
                                          int64_t bytes,
                                          const GPUTargetInfo &target) {
  if (bytes <= target.getMaxSharedMemoryBytes())
    return success();
  return op->emitOpError("config '")
         << spec.config.getName() << "' needs " << bytes
         << " bytes of shared memory; " << target.getChip() << " has "
         << target.getMaxSharedMemoryBytes();
}

FailureOr<gpu::GPUModuleOp> attn::getOrCreateKernelModule(
    PatternRewriter &rewriter, Operation *op, StringRef name, StringRef kernel,
    const GPUTargetInfo &target,
    function_ref<DictionaryAttr(gpu::GPUModuleOp)> build) {
  auto top = op->getParentOfType<ModuleOp>();
  if (!top)
    return op->emitOpError("expected a builtin.module around the op to hold "
                           "its kernels' gpu.module");
  if (Operation *existing = top.lookupSymbol(name)) {
    auto gpuModule = dyn_cast<gpu::GPUModuleOp>(existing);
    if (!gpuModule || !gpuModule.lookupSymbol<gpu::GPUFuncOp>(kernel))
      return op->emitOpError("expected symbol @")
             << name << " to be a gpu.module with a kernel @" << kernel
             << " (a kernel of this op's spec)";
    return gpuModule;
  }
  if (!top->hasAttr(gpu::GPUDialect::getContainerModuleAttrName()))
    rewriter.modifyOpInPlace(top, [&] {
      top->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                   rewriter.getUnitAttr());
    });
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToEnd(top.getBody());
  auto gpuModule = gpu::GPUModuleOp::create(
      rewriter, op->getLoc(), name,
      rewriter.getArrayAttr({target.getTargetAttr(rewriter.getContext())}));
  DictionaryAttr metadata = build(gpuModule);
  rewriter.modifyOpInPlace(top, [&] {
    SmallVector<Attribute> entries;
    if (auto old = top->getAttrOfType<ArrayAttr>(kKernelsAttrName))
      entries.append(old.begin(), old.end());
    entries.push_back(metadata);
    top->setAttr(kKernelsAttrName, rewriter.getArrayAttr(entries));
  });
  return gpuModule;
}
