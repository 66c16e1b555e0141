//===- AttnToGPU.cpp - the driver of the GPU lowerings ----------*- C++ -*-===//
//
// One failure policy for convert-attn-to-nvvm and convert-attn-to-rocdl:
// every op that cannot be lowered gets an error, and the pass fails after
// all of them are reported.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Conversion/AttnToGPU/AttnToGPU.h"
#include "AttnDialect/IR/AttnOps.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::attn;

/// Errors on the attn ops the GPU patterns have no lowering for.
static void emitNotLowered(Operation *op, StringRef passName) {
  InFlightDiagnostic diag = op->emitOpError("is not lowered yet by ")
                            << passName;
  if (isa<AttentionGradOp>(op))
    diag << " (this target builds no backward plan)";
}

LogicalResult
attn::applyAttnToGPUConversion(Operation *root,
                               const FrozenRewritePatternSet &patterns,
                               StringRef passName) {
  // A walk that tries the patterns once per op and neither folds nor erases
  // dead ops: the host code around the launches and the kernels appended to
  // the module stay exactly as the pattern built them.
  walkAndApplyPatterns(root, patterns);
  bool lowered = true;
  root->walk([&](Operation *op) {
    if (!isa_and_present<AttnDialect>(op->getDialect()))
      return;
    lowered = false;
    // An op some pattern matches was reported by it.
    if (!patterns.getOpSpecificNativePatterns().count(op->getName()))
      emitNotLowered(op, passName);
  });
  return success(lowered);
}
