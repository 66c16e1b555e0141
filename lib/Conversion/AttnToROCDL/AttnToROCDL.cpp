//===- AttnToROCDL.cpp ----------------------------------------------*- C++ -*-===//

#include "AttnDialect/Conversion/Passes.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_CONVERTATTNTOROCDLPASS
#include "AttnDialect/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
struct ConvertAttnToROCDLPassImpl : public attn::impl::ConvertAttnToROCDLPassBase<ConvertAttnToROCDLPassImpl> {
  using Base::Base;
  void runOnOperation() override {
    getOperation()->emitError("ConvertAttnToROCDLPass is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
