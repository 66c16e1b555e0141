//===- WriteBundle.cpp ----------------------------------------------------*- C++ -*-===//

#include "AttnDialect/Transforms/Passes.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNWRITEBUNDLEPASS
#include "AttnDialect/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
struct AttnWriteBundlePassImpl : public attn::impl::AttnWriteBundlePassBase<AttnWriteBundlePassImpl> {
  using Base::Base;
  void runOnOperation() override {
    getOperation()->emitError("AttnWriteBundlePass is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
