//===- Pipelines.cpp - attn pass pipelines ----------------------*- C++ -*-===//

#include "AttnDialect/Pipelines/Pipelines.h"
#include "AttnDialect/Conversion/Passes.h"
#include "AttnDialect/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::attn;

void attn::buildAttnToNVVMPipeline(OpPassManager &pm,
                                   const AttnToNVVMPipelineOptions &options) {
  pm.addPass(createAttnSelectConfigPass({options.chip}));
  pm.addPass(createConvertAttnToNVVMPass({options.chip}));
}

void attn::buildAttnToROCDLPipeline(OpPassManager &pm,
                                    const AttnToROCDLPipelineOptions &options) {
  pm.addPass(createAttnSelectConfigPass({options.chip}));
  pm.addPass(createConvertAttnToROCDLPass({options.chip}));
}

void attn::buildAttnToCPUPipeline(OpPassManager &pm,
                                  const AttnToCPUPipelineOptions &) {
  pm.addPass(createAttnSelectConfigPass({"host"}));
  pm.addPass(createAttnTilePass());
}

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
