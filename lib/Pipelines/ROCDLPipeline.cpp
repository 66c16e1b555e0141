//===- ROCDLPipeline.cpp - the attn-to-rocdl pipeline -----------*- C++ -*-===//
//
// attn ops -> configured -> bufferized -> gpu.module kernels (amdgpu/rocdl)
// -> LLVM -> hsaco (or AMDGPU assembly) through gpu-module-to-binary.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Conversion/Passes.h"
#include "AttnDialect/Pipelines/Pipelines.h"
#include "AttnDialect/Pipelines/RocmToolkit.h"
#include "AttnDialect/Transforms/Passes.h"
#include "TileSelection.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::attn;

/// Lowers the kernels of every gpu.module to the LLVM and ROCDL dialects.
static void buildKernelLowering(OpPassManager &pm, StringRef chip) {
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createSCFToControlFlowPass());
  // amdgpu.mfma / amdgpu.wmma / raw buffer loads need the chip to pick the
  // instruction encoding; convert-gpu-to-rocdl then takes arith, math,
  // memref, vector and cf down to LLVM in the same conversion.
  ConvertAMDGPUToROCDLPassOptions amdgpuOptions;
  amdgpuOptions.chipset = chip.str();
  kernels.addPass(createConvertAMDGPUToROCDLPass(amdgpuOptions));
  ConvertGpuOpsToROCDLOpsOptions gpuOptions;
  gpuOptions.chipset = chip.str();
  // The kernel ABI (docs/BundleFormat.md) passes plain device pointers.
  gpuOptions.useBarePtrCallConv = true;
  gpuOptions.runtime = gpu::amd::Runtime::HIP;
  kernels.addPass(createConvertGpuOpsToROCDLOps(gpuOptions));
  kernels.addPass(createReconcileUnrealizedCastsPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
}

/// Lowers the host side: what launches the kernels.
static void buildHostLowering(OpPassManager &pm) {
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  GpuToLLVMConversionPassOptions hostOptions;
  hostOptions.kernelBarePtrCallConv = true;
  pm.addPass(createGpuToLLVMConversionPass(hostOptions));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void attn::buildAttnToROCDLPipeline(OpPassManager &pm,
                                    const AttnToROCDLPipelineOptions &options) {
  addTileSelection(pm, options);

  // Kernels take memrefs; an identity layout at function boundaries keeps the
  // host side's descriptors simple. A no-op on memref input.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));

  pm.addPass(createConvertAttnToROCDLPass({options.chip}));
  buildKernelLowering(pm, options.chip);
  buildHostLowering(pm);

  GpuModuleToBinaryPassOptions serialize;
  serialize.toolkitPath = options.toolkit.empty()
                              ? std::string(ATTN_ROCM_TOOLKIT_ROOT)
                              : std::string(options.toolkit);
  serialize.compilationTarget = options.format;
  pm.addPass(createGpuModuleToBinaryPass(serialize));
}
