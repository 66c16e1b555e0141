//===- LaunchUtils.h - kernel arguments from memrefs ------------*- C++ -*-===//
//
// The host side of every launch the GPU lowering creates: device pointers and
// strides of memref operands, as the kernel ABIs take them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_LAUNCHUTILS_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_LAUNCHUTILS_H

#include "AttnDialect/Conversion/AttnToGPU/GPUTargetInfo.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {

/// Device pointer (aligned pointer + offset) of a memref, as a bare pointer
/// of type `ptrType`.
Value getDevicePointer(OpBuilder &b, Location loc, Value memref, Type ptrType);

/// The first `count` strides of a memref, as i64.
SmallVector<Value> getStrides(OpBuilder &b, Location loc, Value memref,
                              unsigned count);

/// The four strides of a bias memref with 0 on every dimension of size 1,
/// static or found at run time (it broadcasts).
SmallVector<Value> getBroadcastStrides(OpBuilder &b, Location loc, Value bias);

/// Adds the attn.attention_grad pattern (LaunchAttentionGrad.cpp);
/// populateAttnToGPUConversionPatterns calls it.
void populateAttentionGradToGPUPattern(RewritePatternSet &patterns,
                                       const GPUTargetInfo &target);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_LAUNCHUTILS_H
