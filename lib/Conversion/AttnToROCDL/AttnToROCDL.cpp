//===- AttnToROCDL.cpp - attn.attention to AMD kernels ----------*- C++ -*-===//
//
// Thin driver: the kernel is the shared FlashAttention-2 skeleton
// (AttnToGPU) with the AMD hooks of AMDTargetInfo.
//
//===----------------------------------------------------------------------===//

#include "AMDTargetInfo.h"
#include "AttnDialect/Conversion/AttnToGPU/AttentionKernel.h"
#include "AttnDialect/Conversion/Passes.h"
#include "AttnDialect/IR/AttnOps.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_CONVERTATTNTOROCDLPASS
#include "AttnDialect/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {
struct ConvertAttnToROCDLPassImpl
    : public attn::impl::ConvertAttnToROCDLPassBase<
          ConvertAttnToROCDLPassImpl> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    const ChipSpec *spec = lookupChip(chip);
    if (!spec || spec->vendor != Vendor::Amd) {
      module.emitError("convert-attn-to-rocdl: option 'chip' is '")
          << chip << "'; expected one of " << getKnownChipNames(Vendor::Amd);
      return signalPassFailure();
    }
    AMDTargetInfo target(*spec);
    SmallVector<AttentionOp> ops;
    module.walk([&](AttentionOp op) { ops.push_back(op); });
    for (AttentionOp op : ops)
      if (failed(lowerAttentionToGPU(op, module, target)))
        return signalPassFailure();
  }
};
} // namespace
