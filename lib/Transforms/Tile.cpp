//===- Tile.cpp - the attn-tile pass ---------------------------*- C++ -*-===//
//
// A thin driver: every attn.attention and attn.attention_grad is checked
// first, so one bad op reports its diagnostic without leaving the function
// half rewritten.
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
    // The partial results live in per-grid-point scratch.
    if (kvSplits < 1 || kvSplits > 256) {
      emitError(getOperation()->getLoc())
          << "attn-tile: kv-splits must be in [1, 256], got "
          << static_cast<int64_t>(kvSplits);
      return signalPassFailure();
    }
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionGradOp>(op))
        ops.push_back(op);
    });
    bool ok = true;
    for (Operation *op : ops) {
      auto fwd = dyn_cast<AttentionOp>(op);
      ok &= succeeded(fwd ? checkTileable(fwd)
                          : checkTileable(cast<AttentionGradOp>(op)));
    }
    if (!ok)
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      if (auto fwd = dyn_cast<AttentionOp>(op))
        tileAttention(rewriter, fwd, kvSplits);
      else
        tileAttentionGrad(rewriter, cast<AttentionGradOp>(op));
    }
  }
};
} // namespace
