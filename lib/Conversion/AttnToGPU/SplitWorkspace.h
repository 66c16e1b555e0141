//===- SplitWorkspace.h - where split-KV partial results live ---*- C++ -*-===//
//
// The split-KV kernels write, and the combine kernel reads, one workspace
// (docs/BundleFormat.md, "Split-KV"): partial output rows f32 [splits, B,
// Hq, Sq, Dv], then their lse f32 [splits, B, Hq, Sq] at the next multiple
// of 256 bytes (the runtime sizes it the same way). Both kernels address it
// through this one description.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_SPLITWORKSPACE_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_SPLITWORKSPACE_H

#include "mlir/IR/Builders.h"

namespace mlir {
namespace attn {

struct SplitWorkspace {
  /// f32 partial output rows and f32 partial lse (global pointers).
  Value outputs, lse;
  /// Rows of one split (B * Hq * Sq), i64.
  Value rowsPerSplit;
};

/// The workspace of a serving kernel (its arguments are `entry`'s) with
/// `numSplits` (i32) splits and rows of `headDimV` floats.
SplitWorkspace getSplitWorkspace(OpBuilder &b, Location loc, Block &entry,
                                 int64_t headDimV, Value numSplits);

/// The row index (i64) of query 0 of (`split`, `batch`, `head`) in both
/// parts of the workspace (i32 arguments).
Value getSplitRowIndex(OpBuilder &b, Location loc, Block &entry, Value split,
                       Value batch, Value head);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_SPLITWORKSPACE_H
