//===- InitAll.cpp - register everything attn provides ----------*- C++ -*-===//

#include "AttnDialect/InitAll.h"
#include "AttnDialect/Conversion/Passes.h"
#include "AttnDialect/IR/AttnDialect.h"
#include "AttnDialect/IR/BufferizableOpInterfaceImpl.h"
#include "AttnDialect/Pipelines/Pipelines.h"
#include "AttnDialect/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

using namespace mlir;

void attn::registerAllDialects(DialectRegistry &registry) {
  registry.insert<attn::AttnDialect>();
  attn::registerBufferizableOpInterfaceExternalModels(registry);
  // The pipelines go through most of upstream (bufferization, scf, vector,
  // gpu, amdgpu, llvm and their translations), so offer all of it.
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
}

void attn::registerAllPasses() {
  attn::registerAttnPasses();
  attn::registerAttnConversionPasses();
  attn::registerAttnPipelines();
}
