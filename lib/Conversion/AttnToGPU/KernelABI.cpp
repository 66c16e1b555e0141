//===- KernelABI.cpp - the attn-fwd-v1 and attn-bwd-v1 ABIs -----*- C++ -*-===//

#include "AttnDialect/Conversion/AttnToGPU/KernelABI.h"
#include "AttnDialect/Target/TileTable.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::attn;

std::string attn::getDTypeName(Type elemType) {
  if (elemType.isF16())
    return "f16";
  if (elemType.isBF16())
    return "bf16";
  if (elemType.isF32())
    return "f32";
  return "unknown";
}

std::string attn::getMaskName(MaskKind kind) {
  return stringifyMaskKind(kind).str();
}

std::string attn::getBiasName(const KernelSpec &spec) {
  if (!spec.biasType)
    return "none";
  return spec.biasType == spec.elemType ? "same" : "f32";
}

std::string attn::getKernelName(const KernelSpec &spec) {
  int64_t maxD = spec.config.getMaxHeadDim();
  auto dim = [&](int64_t d) {
    return ShapedType::isDynamic(d) ? "max" + std::to_string(maxD)
                                    : std::to_string(d);
  };
  std::string name =
      "fwd_" + getDTypeName(spec.elemType) + "_d" + dim(spec.headDim);
  if (spec.headDimV != spec.headDim)
    name += "v" + dim(spec.headDimV);
  name += "_" + getMaskName(spec.mask);
  if (spec.softcap)
    name += "_softcap";
  if (spec.biasType)
    name += getBiasName(spec) == "same" ? "_bias" : "_biasf32";
  if (spec.dbiasType)
    name += "_dbias";
  if (spec.deterministic)
    name += "_det";
  if (spec.dropout)
    name += "_dropout";
  if (spec.layout != SeqLayout::Dense)
    name += "_" + stringifySeqLayout(spec.layout).str();
  name += "_m" + std::to_string(spec.blockM()) + "n" +
          std::to_string(spec.blockN()) + "w" + std::to_string(spec.warps()) +
          "s" + std::to_string(spec.stages());
  // A warp-specialized kernel of the same tile: "ws" after the stages, or
  // "tma" when its producer copies by tensor maps ("tmap" over a persistent
  // grid), then "o" when its softmax runs under P V (overlap_softmax): the
  // name is the kernel's key, so configs that differ only there must not
  // share one.
  if (spec.tensorMaps())
    name += spec.config.getPersistent() ? "tmap" : "tma";
  else if (isWarpSpecialized(spec.config.getPipeline()))
    name += "ws";
  if (spec.config.getOverlapSoftmax())
    name += "o";
  if (spec.config.getAlignBytes() != 16)
    name += "_align" + std::to_string(spec.config.getAlignBytes());
  return name;
}

std::string attn::getBackwardPlanName(const KernelSpec &spec) {
  std::string name = "bwd" + getKernelName(spec).substr(3);
  // head_split's slices: "h2" after the stages.
  if (int64_t split = spec.config.getHeadSplit(); split > 1)
    name += "h" + std::to_string(split);
  return name;
}

FunctionType attn::getBackwardKernelFunctionType(MLIRContext *ctx,
                                                 unsigned globalAddrSpace,
                                                 bool dropout) {
  Type ptr = LLVM::LLVMPointerType::get(ctx, globalAddrSpace);
  Type i32 = IntegerType::get(ctx, 32);
  Type i64 = IntegerType::get(ctx, 64);
  Type f32 = Float32Type::get(ctx);
  SmallVector<Type> args(dropout ? kNumDropoutBackwardKernelArgs
                                 : kNumBackwardKernelArgs);
  if (dropout) {
    args[kBwdDropoutP] = f32;
    args[kBwdDropoutSeed] = i64;
    args[kBwdDropoutOffset] = i32;
  }
  for (unsigned i = kBwdQ; i <= kBwdWorkspace; ++i)
    args[i] = ptr;
  for (unsigned i = kBwdBatch; i <= kBwdSeqK; ++i)
    args[i] = i32;
  for (unsigned i = kBwdQStrideB; i < kBwdScale; ++i)
    args[i] = i64;
  args[kBwdScale] = f32;
  args[kBwdSoftcap] = f32;
  args[kBwdWindowLeft] = i32;
  args[kBwdWindowRight] = i32;
  return FunctionType::get(ctx, args, {});
}

Type attn::getTensorMapType(MLIRContext *ctx) {
  return LLVM::LLVMArrayType::get(IntegerType::get(ctx, 64),
                                  kTensorMapBytes / 8);
}

unsigned attn::getNumKernelArgs(SeqLayout layout, bool dynamicHeadDim,
                                bool dropout, bool tensorMaps) {
  unsigned maps = tensorMaps ? kNumTensorMaps : 0;
  if (layout != SeqLayout::Dense)
    return kNumServingKernelArgs + maps;
  if (dropout)
    return kNumDropoutKernelArgs + maps;
  return (dynamicHeadDim ? kNumAnyHeadDimKernelArgs : kNumKernelArgs) + maps;
}

FunctionType attn::getKernelFunctionType(MLIRContext *ctx,
                                         unsigned globalAddrSpace,
                                         SeqLayout layout, bool dynamicHeadDim,
                                         bool dropout, bool tensorMaps) {
  Type ptr = LLVM::LLVMPointerType::get(ctx, globalAddrSpace);
  Type i32 = IntegerType::get(ctx, 32);
  Type i64 = IntegerType::get(ctx, 64);
  Type f32 = Float32Type::get(ctx);
  bool serving = layout != SeqLayout::Dense;
  SmallVector<Type> args(
      getNumKernelArgs(layout, dynamicHeadDim, dropout, tensorMaps));
  if (tensorMaps)
    std::fill(args.end() - kNumTensorMaps, args.end(), getTensorMapType(ctx));
  if ((dynamicHeadDim || dropout) && !serving)
    args[kArgHeadDim] = args[kArgHeadDimV] = i32;
  if (dropout && !serving) {
    args[kArgDropoutP] = f32;
    args[kArgDropoutSeed] = i64;
    args[kArgDropoutOffset] = i32;
  }
  if (serving) {
    for (unsigned i = kArgCuSeqlensQ; i <= kArgBlockTable; ++i)
      args[i] = ptr;
    args[kArgBlockTableStride] = i64;
    args[kArgPageSize] = i32;
    args[kArgNumPages] = i32;
    args[kArgWorkspace] = ptr;
    args[kArgNumSplits] = i32;
  }
  for (unsigned i = kArgQ; i <= kArgBias; ++i)
    args[i] = ptr;
  for (unsigned i = kArgBatch; i <= kArgSeqK; ++i)
    args[i] = i32;
  for (unsigned i = kArgQStrideB; i < kArgScale; ++i)
    args[i] = i64;
  args[kArgScale] = f32;
  args[kArgSoftcap] = f32;
  args[kArgWindowLeft] = i32;
  args[kArgWindowRight] = i32;
  return FunctionType::get(ctx, args, {});
}
