//===- MaskUtils.h - mask arithmetic shared by all lowerings ----*- C++ -*-===//
//
// Every lowering (host loop nest, NVVM, ROCDL) decides which keys a query row
// sees with these helpers, so the mask semantics live in one place.
// They work on any integer type (index on the host, i32 in GPU kernels).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNDIALECT_UTILS_MASKUTILS_H
#define ATTNDIALECT_UTILS_MASKUTILS_H

#include "AttnDialect/IR/AttnAttrs.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir {
namespace attn {

/// A mask as the lowering sees it: the kind, and for sliding_window the two
/// bounds as values of the same integer type as the indices (negative means
/// unbounded).
struct MaskParams {
  MaskKind kind = MaskKind::None;
  Value windowLeft;
  Value windowRight;
};

/// The half-open key range [lo, hi) that query rows [rowBegin, rowEnd) can
/// see, clamped to [0, sk] with hi >= lo. Keys outside it are masked for
/// every row of the block, so whole key blocks outside it are skipped.
std::pair<Value, Value> emitVisibleKeyRange(OpBuilder &b, Location loc,
                                            const MaskParams &mask,
                                            Value rowBegin, Value rowEnd,
                                            Value sq, Value sk);

/// The half-open query-row range [lo, hi) of rows that see at least one key
/// of [colBegin, colEnd) (a non-empty range inside [0, sk)), clamped to
/// [0, sq] with hi >= lo: the transpose of emitVisibleKeyRange, for loops
/// that walk query blocks inside a key block (the backward pass).
std::pair<Value, Value> emitVisibleRowRange(OpBuilder &b, Location loc,
                                            const MaskParams &mask,
                                            Value colBegin, Value colEnd,
                                            Value sq, Value sk);

/// i1 that is true when query row `row` may see key `col`, including the
/// bounds check `col < sk`.
Value emitKeyVisible(OpBuilder &b, Location loc, const MaskParams &mask,
                     Value row, Value col, Value sq, Value sk);

} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_UTILS_MASKUTILS_H
