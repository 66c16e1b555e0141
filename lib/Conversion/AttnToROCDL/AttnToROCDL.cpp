//===- AttnToROCDL.cpp - the convert-attn-to-rocdl pass ---------*- C++ -*-===//
//
// A thin driver: the pattern and the kernel skeleton live in AttnToGPU, the
// AMD parts in AMDTargetInfo and MatrixCoreEmitter.
//
//===----------------------------------------------------------------------===//

#include "AMDTargetInfo.h"
#include "AttnDialect/Conversion/AttnToGPU/AttnToGPUPass.h"
#include "AttnDialect/Conversion/Passes.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_CONVERTATTNTOROCDLPASS
#include "AttnDialect/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {
struct ConvertAttnToROCDLPass
    : public AttnToGPUPassBase<ConvertAttnToROCDLPass,
                               attn::impl::ConvertAttnToROCDLPassBase> {
  using AttnToGPUPassBase::AttnToGPUPassBase;

  static constexpr Vendor kVendor = Vendor::Amd;
  static std::unique_ptr<GPUTargetInfo> createTargetInfo(const ChipSpec &chip) {
    return std::make_unique<AMDTargetInfo>(chip);
  }
};
} // namespace
