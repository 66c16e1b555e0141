//===- Tile.cpp - the attn-tile pass ---------------------------*- C++ -*-===//
//
// A thin driver: every attn.attention is checked first, so one bad op
// reports its diagnostic without leaving the function half rewritten.
// attn.attention_grad is left for its own lowering.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/IR/AttnOps.h"
#include "AttnDialect/Transforms/Passes.h"
#include "TileAttention.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNTILEPASS
#include "AttnDialect/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {
struct AttnTilePassImpl
    : public attn::impl::AttnTilePassBase<AttnTilePassImpl> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    bool ok = true;
    for (AttentionOp op : ops)
      ok &= succeeded(checkTileable(op));
    if (!ok)
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    for (AttentionOp op : ops)
      tileAttention(rewriter, op);
  }
};
} // namespace
