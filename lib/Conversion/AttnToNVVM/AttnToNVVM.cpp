//===- AttnToNVVM.cpp - the convert-attn-to-nvvm pass -----------*- C++ -*-===//
//
// A thin driver: the pattern and the kernel skeleton live in AttnToGPU, the
// NVIDIA parts in NVVMTargetInfo, MmaM16N8K16 and WgmmaM64NNK16.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Conversion/AttnToGPU/AttnToGPUPass.h"
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
    : public AttnToGPUPassBase<ConvertAttnToNVVMPass,
                               attn::impl::ConvertAttnToNVVMPassBase> {
  using AttnToGPUPassBase::AttnToGPUPassBase;

  static constexpr Vendor kVendor = Vendor::Nvidia;
  static std::unique_ptr<GPUTargetInfo> createTargetInfo(const ChipSpec &chip) {
    return std::make_unique<NVVMTargetInfo>(chip);
  }
};
} // namespace
