//===- attn-opt.cpp - attn optimizer driver ---------------------*- C++ -*-===//
//
// mlir-opt with the attn dialect, passes and pipelines, plus the upstream
// ones they build on.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/InitAll.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::attn::registerAllPasses();
  mlir::DialectRegistry registry;
  mlir::attn::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "attn optimizer driver\n", registry));
}
