//===- MaskUtils.cpp - mask arithmetic shared by all lowerings --*- C++ -*-===//

#include "AttnDialect/Utils/MaskUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
Value cst(OpBuilder &b, Location loc, Type t, int64_t v) {
  if (t.isIndex())
    return arith::ConstantIndexOp::create(b, loc, v);
  return arith::ConstantIntOp::create(b, loc, t, v);
}

/// Offset aligning query rows to the key axis: 0 for top-left causal,
/// sk - sq for the bottom-right-aligned masks.
Value diagonalOffset(OpBuilder &b, Location loc, MaskKind kind, Value sq,
                     Value sk) {
  if (kind == MaskKind::Causal)
    return cst(b, loc, sq.getType(), 0);
  return arith::SubIOp::create(b, loc, sk, sq);
}

/// `value`, or `unbounded` when the window bound `bound` is negative.
Value unlessUnbounded(OpBuilder &b, Location loc, Value bound, Value value,
                      Value unbounded) {
  Value zero = cst(b, loc, bound.getType(), 0);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, bound, zero);
  return arith::SelectOp::create(b, loc, negative, unbounded, value);
}

/// [lo, hi) clamped to [0, n] with hi >= lo.
std::pair<Value, Value> clampRange(OpBuilder &b, Location loc, Value lo,
                                   Value hi, Value n) {
  Value zero = cst(b, loc, n.getType(), 0);
  hi = arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, hi, zero),
                              n);
  lo = arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, lo, zero),
                              hi);
  return {lo, hi};
}
} // namespace

std::pair<Value, Value> attn::emitVisibleKeyRange(OpBuilder &b, Location loc,
                                                  const MaskParams &mask,
                                                  Value rowBegin, Value rowEnd,
                                                  Value sq, Value sk) {
  Type t = sk.getType();
  Value zero = cst(b, loc, t, 0);
  Value one = cst(b, loc, t, 1);
  if (mask.kind == MaskKind::None)
    return {zero, sk};
  Value off = diagonalOffset(b, loc, mask.kind, sq, sk);
  // The last row of the block sees keys up to (rowEnd - 1) + off + right.
  Value lastRow = arith::SubIOp::create(b, loc, rowEnd, one);
  Value hiDiag = arith::AddIOp::create(b, loc, lastRow, off);
  Value lo = zero;
  Value hi;
  if (mask.kind == MaskKind::SlidingWindow) {
    Value hiWin = arith::AddIOp::create(
        b, loc, arith::AddIOp::create(b, loc, hiDiag, mask.windowRight), one);
    hi = unlessUnbounded(b, loc, mask.windowRight, hiWin, sk);
    Value loWin = arith::SubIOp::create(
        b, loc, arith::AddIOp::create(b, loc, rowBegin, off), mask.windowLeft);
    lo = unlessUnbounded(b, loc, mask.windowLeft, loWin, zero);
  } else {
    hi = arith::AddIOp::create(b, loc, hiDiag, one);
  }
  return clampRange(b, loc, lo, hi, sk);
}

std::pair<Value, Value> attn::emitVisibleRowRange(OpBuilder &b, Location loc,
                                                  const MaskParams &mask,
                                                  Value colBegin, Value colEnd,
                                                  Value sq, Value sk) {
  Type t = sq.getType();
  Value zero = cst(b, loc, t, 0);
  if (mask.kind == MaskKind::None)
    return {zero, sq};
  // Row i sees key j when j <= i + off (+ right), i.e. i >= j - off - right:
  // the first key of the range bounds the first row from below. With a
  // window, j >= i + off - left bounds the last row from above.
  Value off = diagonalOffset(b, loc, mask.kind, sq, sk);
  Value loDiag = arith::SubIOp::create(b, loc, colBegin, off);
  Value lo = loDiag;
  Value hi = sq;
  if (mask.kind == MaskKind::SlidingWindow) {
    Value loWin = arith::SubIOp::create(b, loc, loDiag, mask.windowRight);
    lo = unlessUnbounded(b, loc, mask.windowRight, loWin, zero);
    // The last key, colEnd - 1, is seen by rows up to colEnd - 1 - off + left.
    Value hiWin = arith::AddIOp::create(
        b, loc, arith::SubIOp::create(b, loc, colEnd, off), mask.windowLeft);
    hi = unlessUnbounded(b, loc, mask.windowLeft, hiWin, sq);
  }
  return clampRange(b, loc, lo, hi, sq);
}

Value attn::emitKeyVisible(OpBuilder &b, Location loc, const MaskParams &mask,
                           Value row, Value col, Value sq, Value sk) {
  Value inBounds =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, col, sk);
  if (mask.kind == MaskKind::None)
    return inBounds;
  Value diag = arith::AddIOp::create(b, loc, row,
                                     diagonalOffset(b, loc, mask.kind, sq, sk));
  if (mask.kind != MaskKind::SlidingWindow) {
    Value causal =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, col, diag);
    return arith::AndIOp::create(b, loc, inBounds, causal);
  }
  Value trueV = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  // diag - left <= col, unless left is unbounded.
  Value leftOk = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::sge, col,
      arith::SubIOp::create(b, loc, diag, mask.windowLeft));
  leftOk = unlessUnbounded(b, loc, mask.windowLeft, leftOk, trueV);
  // col <= diag + right, unless right is unbounded.
  Value rightOk = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::sle, col,
      arith::AddIOp::create(b, loc, diag, mask.windowRight));
  rightOk = unlessUnbounded(b, loc, mask.windowRight, rightOk, trueV);
  return arith::AndIOp::create(b, loc, inBounds,
                               arith::AndIOp::create(b, loc, leftOk, rightOk));
}
