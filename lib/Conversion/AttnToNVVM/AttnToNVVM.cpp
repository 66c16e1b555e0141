//===- AttnToNVVM.cpp - the convert-attn-to-nvvm pass -----------*- C++ -*-===//
//
// A thin driver: the kernel skeleton lives in AttnToGPU, the NVIDIA parts in
// NVVMTargetInfo and MmaM16N8K16.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Conversion/AttnToGPU/AttentionKernel.h"
#include "AttnDialect/Conversion/Passes.h"
#include "NVVMTargetInfo.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_CONVERTATTNTONVVMPASS
#include "AttnDialect/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {
struct ConvertAttnToNVVMPass
    : public attn::impl::ConvertAttnToNVVMPassBase<ConvertAttnToNVVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp top = getOperation();
    // Chips and their limits come from the tile tables.
    const ChipSpec *spec = lookupChip(chip);
    if (!spec || spec->vendor != Vendor::Nvidia) {
      top.emitError("convert-attn-to-nvvm: unsupported chip '")
          << chip << "'; expected one of " << getKnownChipNames(Vendor::Nvidia);
      return signalPassFailure();
    }
    NVVMTargetInfo target(*spec);
    SmallVector<AttentionOp> ops;
    top.walk([&](AttentionOp op) { ops.push_back(op); });
    bool failed = false;
    for (AttentionOp op : ops)
      if (mlir::failed(lowerAttentionToGPU(op, top, target)))
        failed = true;
    if (failed)
      signalPassFailure();
  }
};
} // namespace
