//===- NVVMPipeline.cpp - the attn-to-nvvm pipeline -----------------*- C++ -*-===//

#include "AttnDialect/Pipelines/Pipelines.h"
#include "AttnDialect/Conversion/Passes.h"
#include "AttnDialect/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::attn;

void attn::buildAttnToNVVMPipeline(OpPassManager &pm,
                                   const AttnToNVVMPipelineOptions &options) {
  pm.addPass(createAttnSelectConfigPass({options.chip}));
  pm.addPass(createConvertAttnToNVVMPass({options.chip}));
}
