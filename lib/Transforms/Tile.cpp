//===- Tile.cpp - the attn-tile pass ---------------------------*- C++ -*-===//
//
// A thin driver: every attn.attention is checked first, so one bad op
// reports its diagnostic without leaving the function half rewritten. Any
// other attn op is an error too: nothing after attn-tile in attn-to-cpu
// lowers it.
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

/// Errors on every attn op under `root` that attn-tile does not lower (all
/// but attn.attention). attn.attention_grad is one until it has a CPU
/// lowering.
static LogicalResult checkNoUntiledAttnOps(Operation *root) {
  bool ok = true;
  root->walk([&](Operation *op) {
    if (!isa_and_present<AttnDialect>(op->getDialect()) || isa<AttentionOp>(op))
      return;
    ok = false;
    InFlightDiagnostic diag =
        op->emitOpError("is not lowered yet by attn-tile");
    if (isa<AttentionGradOp>(op))
      diag << " (the backward pass has no CPU lowering yet)";
  });
  return success(ok);
}

namespace {
struct AttnTilePassImpl
    : public attn::impl::AttnTilePassBase<AttnTilePassImpl> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    bool ok = succeeded(checkNoUntiledAttnOps(getOperation()));
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
