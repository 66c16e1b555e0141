//===- Pipelines.cpp - pipeline registration -------------------*- C++ -*-===//

#include "AttnDialect/Pipelines/Pipelines.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::attn;

void attn::registerAttnPipelines() {
  PassPipelineRegistration<AttnToNVVMPipelineOptions>(
      "attn-to-nvvm",
      "Select a config, tile, and lower attn ops to NVVM kernels serialized "
      "by gpu-module-to-binary",
      buildAttnToNVVMPipeline);
  PassPipelineRegistration<AttnToROCDLPipelineOptions>(
      "attn-to-rocdl",
      "Select a config, tile, and lower attn ops to ROCDL kernels serialized "
      "by gpu-module-to-binary",
      buildAttnToROCDLPipeline);
  PassPipelineRegistration<AttnToCPUPipelineOptions>(
      "attn-to-cpu",
      "Select the host config, tile, and lower attn ops to LLVM for the host",
      buildAttnToCPUPipeline);
}
