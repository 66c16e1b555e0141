//===- TileAttention.h - FlashAttention-2 loop nest builders ----*- C++ -*-===//
//
// Private to the attn-tile pass: the checks and the loop-nest construction
// are separate so the pass reports every unsupported input before it rewrites
// anything.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_TILEATTENTION_H
#define ATTN_LIB_TRANSFORMS_TILEATTENTION_H

#include "AttnDialect/IR/AttnOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {

/// Emits a diagnostic on `op` and fails when attn-tile cannot tile it (tensor
/// form, missing or malformed config).
LogicalResult checkTileable(AttentionOp op);

/// Replaces the memref-form `op` (already checked) by its FlashAttention-2
/// loop nest; a KV-cache op's keys are split in `kvSplits` parts whose
/// partial softmaxes are merged, as the GPU kernels' split-KV does.
void tileAttention(RewriterBase &rewriter, AttentionOp op,
                   int64_t kvSplits = 1);

/// As checkTileable(AttentionOp), for the backward op.
LogicalResult checkTileable(AttentionGradOp op);

/// Replaces the memref-form `op` (already checked) by the three stages of
/// FlashAttention-2's backward pass (TileAttentionGrad.cpp).
void tileAttentionGrad(RewriterBase &rewriter, AttentionGradOp op);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_TRANSFORMS_TILEATTENTION_H
