//===- DropoutFragment.h - dropout factors of a thread's tile -*- C++ -*-===//
//
// Private to the AttnToGPU kernels. The forward and backward kernels drop
// the probabilities a thread holds in accumulator registers; this finds
// each element's Philox counter (AttnDialect/Utils/Dropout.h) and calls the
// generator once per counter the thread holds, not once per element, where
// the layout lets that be seen at compile time.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_DROPOUTFRAGMENT_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_DROPOUTFRAGMENT_H

#include "AttnDialect/Conversion/AttnToGPU/GPUTargetInfo.h"
#include "AttnDialect/Utils/Dropout.h"

namespace mlir {
namespace attn {

/// The dropout factor (f32: 1 / (1 - p) kept, 0 dropped) of every element of
/// `layout`, whose element e sits at tile row rowBase + laneRow +
/// rowSlotOffsets[rowSlot[e]] and column colBase + laneCol + colOffsets[e]
/// (i32 values). The rows are query rows and the columns keys, or the
/// reverse with `transposed` (the backward's K Q^T). `basesAligned16` says
/// that rowBase and colBase are multiples of 16. `bh` is b * Hq + h (i32).
SmallVector<Value> emitDropoutFactors(OpBuilder &b, Location loc,
                                      const DropoutParams &params, Value bh,
                                      const AccLayout &layout, Value rowBase,
                                      Value colBase, bool basesAligned16,
                                      bool transposed);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_DROPOUTFRAGMENT_H
