//===- AttnToNVVM.cpp ----------------------------------------------*- C++ -*-===//

#include "AttnDialect/Conversion/Passes.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_CONVERTATTNTONVVMPASS
#include "AttnDialect/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
struct ConvertAttnToNVVMPassImpl : public attn::impl::ConvertAttnToNVVMPassBase<ConvertAttnToNVVMPassImpl> {
  using Base::Base;
  void runOnOperation() override {
    getOperation()->emitError("ConvertAttnToNVVMPass is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
