//===- AttnPlugin.cpp - attn as an mlir-opt plugin --------------*- C++ -*-===//
//
// Loads attn into a stock mlir-opt without relinking it:
//
//   mlir-opt --load-dialect-plugin=AttnPlugin.so \
//            --load-pass-plugin=AttnPlugin.so \
//            --pass-pipeline='builtin.module(attn-to-nvvm{chip=sm_90a})'
//
// The plugin links the MLIR and LLVM shared libraries mlir-opt itself uses,
// so every upstream dialect, pass and TypeID has one definition. The dialect
// entry point adds dialects only and the pass entry point passes only: a
// plugin given to both options registers each thing once.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/InitAll.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

using namespace mlir;

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "AttnDialect", LLVM_VERSION_STRING,
          [](DialectRegistry *registry) {
            // attn and the upstream dialects (and their interface models)
            // its pipelines go through; those mlir-opt already has are
            // registered again harmlessly.
            attn::registerAllDialects(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "AttnPasses", LLVM_VERSION_STRING,
          [] { attn::registerAllPasses(); }};
}
