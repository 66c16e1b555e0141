//===- WriteBundle.cpp - the attn-write-bundle pass -------------*- C++ -*-===//
//
// Writes the serialized kernels of a module and bundle.json
// (docs/BundleFormat.md) from the `attn.kernels` metadata that
// convert-attn-to-nvvm / convert-attn-to-rocdl leave on the module.
// Variants keep the order of that list: it is their priority order.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Transforms/Bundle.h"
#include "AttnDialect/Transforms/Passes.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNWRITEBUNDLEPASS
#include "AttnDialect/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
struct AttnWriteBundlePass
    : public attn::impl::AttnWriteBundlePassBase<AttnWriteBundlePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp top = getOperation();
    if (dir.empty()) {
      top.emitError("attn-write-bundle: option 'dir' (output directory) is "
                    "required");
      return signalPassFailure();
    }
    auto fail = [&](llvm::Error e) {
      top.emitError("attn-write-bundle: ") << llvm::toString(std::move(e));
      signalPassFailure();
    };
    // An unusable directory is reported before anything about the kernels.
    if (llvm::Error e = attn::createBundleDirectory(dir))
      return fail(std::move(e));
    FailureOr<std::vector<attn::BundleKernel>> kernels =
        attn::getBundleKernels(top);
    if (failed(kernels))
      return signalPassFailure();
    if (llvm::Error e = attn::writeBundle(dir, *kernels))
      return fail(std::move(e));
  }
};
} // namespace
