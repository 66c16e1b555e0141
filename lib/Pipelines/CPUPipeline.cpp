//===- CPUPipeline.cpp - the attn-to-cpu pipeline -----------------*- C++ -*-===//

#include "AttnDialect/Pipelines/Pipelines.h"
#include "AttnDialect/Conversion/Passes.h"
#include "AttnDialect/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::attn;

void attn::buildAttnToCPUPipeline(OpPassManager &pm,
                                  const AttnToCPUPipelineOptions &) {
  pm.addPass(createAttnSelectConfigPass({"host"}));
  pm.addPass(createAttnTilePass());
}
