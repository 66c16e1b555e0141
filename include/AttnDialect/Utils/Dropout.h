//===- Dropout.h - the dropout mask shared by all lowerings ------*- C++
//-*-===//
//
// Dropout keeps element (b, h, i, j) of the probability matrix by a
// counter-based generator (Philox4x32-10), so the forward and backward
// passes, and every lowering, regenerate the same mask from (seed, offset)
// without storing it. docs/AttnDialect.md defines the mask bit for bit; the
// host loop nest, the NVVM and ROCDL kernels and the runtime's Python
// reference all follow it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNDIALECT_UTILS_DROPOUT_H
#define ATTNDIALECT_UTILS_DROPOUT_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include <array>

namespace mlir {
namespace attn {

/// One op's dropout operands, turned once into what the mask needs.
struct DropoutParams {
  /// i32: a word below it drops the element (floor(p * 2^32), unsigned).
  Value threshold;
  /// i32 halves of the seed (Philox's key) and the offset (counter word 3).
  Value key0, key1, offset;
  /// f32: 1 / (1 - p), what a kept probability is multiplied by.
  Value scale;

  /// From the op's operands: `p` (f32, clamped into [0, 1)), `seed` (i64)
  /// and `offset` (i32).
  static DropoutParams emit(OpBuilder &b, Location loc, Value p, Value seed,
                            Value offset);
};

/// The four i32 words of Philox4x32-10 (Salmon et al., SC'11) for the i32
/// `counter` under the key (key0, key1).
std::array<Value, 4> emitPhilox4x32(OpBuilder &b, Location loc,
                                    std::array<Value, 4> counter, Value key0,
                                    Value key1);

/// Where element (row i, key j) finds its word: rows and keys are grouped in
/// 16 x 16 tiles, and the element at (16a + 8x + r, 16c + 8y + s), r and s
/// below 8, is word `y + 2x` of counter (8c + s, 8a + r, b * Hq + h,
/// offset). The four elements (i, j), (i + 8, j), (i, j + 8), (i + 8, j + 8)
/// of a tile share one counter: the words a GPU thread holds together.
struct DropoutCounter {
  Value c0, c1; // i32 counter words 0 and 1
  Value word;   // i32 in [0, 4)
};
DropoutCounter getDropoutCounter(OpBuilder &b, Location loc, Value row,
                                 Value col);

/// i1: whether `word` keeps its element (word >= threshold, unsigned).
Value emitDropoutKeepWord(OpBuilder &b, Location loc,
                          const DropoutParams &params, Value word);

/// i1: whether element (row, col) of (batch, head) `bh` is kept; all i32.
Value emitDropoutKeep(OpBuilder &b, Location loc, const DropoutParams &params,
                      Value bh, Value row, Value col);

} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_UTILS_DROPOUT_H
