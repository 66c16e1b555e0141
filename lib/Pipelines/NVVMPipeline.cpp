//===- NVVMPipeline.cpp - the attn-to-nvvm pipeline ---------------*- C++
//-*-===//
//
// attn.attention -> (config) -> bufferized -> gpu.func kernels (AttnToGPU +
// NVVM hooks) -> NVVM/LLVM -> gpu.binary (PTX or cubin). The upstream part
// follows mlir/lib/Dialect/GPU/Pipelines/GPUToNVVMPipeline.cpp.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Conversion/Passes.h"
#include "AttnDialect/Pipelines/Pipelines.h"
#include "AttnDialect/Transforms/Passes.h"
#include "TileSelection.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::attn;

void attn::buildAttnToNVVMPipeline(OpPassManager &pm,
                                   const AttnToNVVMPipelineOptions &options) {
  if (options.selectConfig)
    addTileSelection(pm, options);
  bufferization::OneShotBufferizePassOptions bufOpts;
  bufOpts.bufferizeFunctionBoundaries = true;
  // Identity layouts at function boundaries: contiguous rows, as the kernel
  // ABI wants.
  bufOpts.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufOpts));
  pm.addPass(createConvertAttnToNVVMPass({options.chip}));

  // Device code.
  pm.addNestedPass<gpu::GPUModuleOp>(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions gpuOpts;
  gpuOpts.useBarePtrCallConv = true;
  gpuOpts.indexBitwidth = 64;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(gpuOpts));
  pm.addNestedPass<gpu::GPUModuleOp>(createNVVMTensorMapArgsPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertNVVMToLLVMPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());

  // Host code.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  // cf.assert of the tensor maps' host encoding (TensorMapLaunch.cpp).
  pm.addPass(createConvertControlFlowToLLVMPass());
  GpuToLLVMConversionPassOptions hostOpts;
  hostOpts.hostBarePtrCallConv = false;
  hostOpts.kernelBarePtrCallConv = true;
  pm.addPass(createGpuToLLVMConversionPass(hostOpts));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createReconcileUnrealizedCastsPass());

  if (options.format == "llvm")
    return;
  GpuModuleToBinaryPassOptions binOpts;
  binOpts.toolkitPath = options.toolkit;
  binOpts.compilationTarget = options.format;
  pm.addPass(createGpuModuleToBinaryPass(binOpts));
}
