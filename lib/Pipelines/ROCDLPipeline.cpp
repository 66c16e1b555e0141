//===- ROCDLPipeline.cpp - the attn-to-rocdl pipeline -----------------*- C++ -*-===//

#include "AttnDialect/Pipelines/Pipelines.h"
#include "AttnDialect/Conversion/Passes.h"
#include "AttnDialect/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::attn;

void attn::buildAttnToROCDLPipeline(OpPassManager &pm,
                                    const AttnToROCDLPipelineOptions &options) {
  pm.addPass(createAttnSelectConfigPass({options.chip}));
  pm.addPass(createConvertAttnToROCDLPass({options.chip}));
}
