//===- main.cpp - embeds attn through its installed CMake package ---------===//
//
// Registers attn explicitly (no static initializers), parses an
// attn.attention, verifies and prints it, and looks up attn passes and
// pipelines by name.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/IR/AttnOps.h"
#include "AttnDialect/InitAll.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

static const char *kModule = R"mlir(
func.func @f(%q: memref<1x4x8x16xf16>, %k: memref<1x2x8x16xf16>,
             %o: memref<1x4x8x16xf16>) {
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x2x8x16xf16>)
      v(%k : memref<1x2x8x16xf16>) outs(%o : memref<1x4x8x16xf16>)
      {mask = #attn.mask<causal>}
  return
}
)mlir";

int main() {
  mlir::DialectRegistry registry;
  mlir::attn::registerAllDialects(registry);
  mlir::attn::registerAllPasses();
  mlir::MLIRContext context(registry);

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kModule, &context);
  if (!module || mlir::failed(mlir::verify(*module))) {
    llvm::errs() << "FAIL: parse or verify\n";
    return 1;
  }
  module->print(llvm::outs());
  llvm::outs() << "\n";
  module->walk([](mlir::attn::AttentionOp op) {
    llvm::outs() << "scale = " << op.getScaleValue() << "\n";
  });

  int missing = 0;
  for (const char *name : {"attn-select-config", "attn-tile"}) {
    bool found = mlir::PassInfo::lookup(name) != nullptr;
    llvm::outs() << "pass " << name << ": " << (found ? "found" : "missing")
                 << "\n";
    missing += !found;
  }
  for (const char *name : {"attn-to-cpu", "attn-to-nvvm", "attn-to-rocdl"}) {
    bool found = mlir::PassPipelineInfo::lookup(name) != nullptr;
    llvm::outs() << "pipeline " << name << ": "
                 << (found ? "found" : "missing") << "\n";
    missing += !found;
  }
  return missing ? 1 : 0;
}
