//===- SelectConfig.cpp ----------------------------------------------------*- C++ -*-===//

#include "AttnDialect/Transforms/Passes.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNSELECTCONFIGPASS
#include "AttnDialect/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
struct AttnSelectConfigPassImpl : public attn::impl::AttnSelectConfigPassBase<AttnSelectConfigPassImpl> {
  using Base::Base;
  void runOnOperation() override {
    getOperation()->emitError("AttnSelectConfigPass is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
