//===- Tile.cpp ----------------------------------------------------*- C++ -*-===//

#include "AttnDialect/Transforms/Passes.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNTILEPASS
#include "AttnDialect/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
struct AttnTilePassImpl : public attn::impl::AttnTilePassBase<AttnTilePassImpl> {
  using Base::Base;
  void runOnOperation() override {
    getOperation()->emitError("AttnTilePass is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
