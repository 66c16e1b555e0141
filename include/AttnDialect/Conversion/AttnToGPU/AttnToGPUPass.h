//===- AttnToGPUPass.h - the pass of every GPU lowering ---------*- C++ -*-===//
//
// convert-attn-to-nvvm and convert-attn-to-rocdl differ only in whose chips
// they accept and which GPUTargetInfo they build; this base is the rest of
// both: the chip looked up once, in initialize(), the pattern set built
// there, and one failure policy (applyAttnToGPUConversion) per run.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNDIALECT_CONVERSION_ATTNTOGPU_ATTNTOGPUPASS_H
#define ATTNDIALECT_CONVERSION_ATTNTOGPU_ATTNTOGPUPASS_H

#include "AttnDialect/Conversion/AttnToGPU/AttnToGPU.h"
#include "AttnDialect/Target/TileTable.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include <memory>

namespace mlir {
namespace attn {

/// A GPU lowering pass over the ODS base `PassBaseT` (which declares the
/// `chip` option). `DerivedT` provides
///   static constexpr Vendor kVendor;   // the chips it accepts
///   static std::unique_ptr<GPUTargetInfo> createTargetInfo(const ChipSpec &);
template <typename DerivedT, template <typename> class PassBaseT>
class AttnToGPUPassBase : public PassBaseT<DerivedT> {
public:
  using PassBaseT<DerivedT>::PassBaseT;

  LogicalResult initialize(MLIRContext *ctx) override {
    // Chips and their limits come from the tile tables. No op exists yet:
    // the error has no location.
    const ChipSpec *spec = lookupChip(this->chip);
    if (!spec || spec->vendor != DerivedT::kVendor)
      return emitError(UnknownLoc::get(ctx))
             << this->getArgument() << ": unsupported chip '" << this->chip
             << "'; expected one of " << getKnownChipNames(DerivedT::kVendor);
    target = DerivedT::createTargetInfo(*spec);
    RewritePatternSet set(ctx);
    populateAttnToGPUConversionPatterns(set, *target);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    if (failed(applyAttnToGPUConversion(this->getOperation(), patterns,
                                        this->getArgument())))
      this->signalPassFailure();
  }

private:
  // Shared with the clones the pass manager makes; the patterns hold a
  // reference to the target.
  std::shared_ptr<const GPUTargetInfo> target;
  FrozenRewritePatternSet patterns;
};

} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_CONVERSION_ATTNTOGPU_ATTNTOGPUPASS_H
