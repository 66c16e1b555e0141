//===- AttnToGPU.h - attn ops to GPU kernels and launches -------*- C++ -*-===//
//
// The entry points of the GPU lowering. The pattern replaces a memref-form,
// configured attn.attention by a gpu.launch_func of a kernel built for a
// GPUTargetInfo (AttentionKernel.h); the driver applies it and turns every
// attn op left over into an error, so no pipeline passes one through.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNDIALECT_CONVERSION_ATTNTOGPU_ATTNTOGPU_H
#define ATTNDIALECT_CONVERSION_ATTNTOGPU_ATTNTOGPU_H

#include "AttnDialect/Conversion/AttnToGPU/GPUTargetInfo.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
class FrozenRewritePatternSet;

namespace attn {

/// Adds the pattern lowering attn.attention to a launch of its kernel. The
/// kernel goes into a gpu.module named after its KernelSpec at the end of the
/// op's nearest module, which also gets gpu.container_module and an entry in
/// attn.kernels (AttentionKernel.h); ops with equal specs share the kernel.
/// An op the pattern cannot lower (tensor form, no config, a problem or
/// config `target` does not support) gets an error and stays. `target` must
/// outlive `patterns`.
void populateAttnToGPUConversionPatterns(RewritePatternSet &patterns,
                                         const GPUTargetInfo &target);

/// Applies `patterns` once to every op nested in `root` (walkAndApplyPatterns:
/// no folding, and the kernels the patterns create are left as built), then
/// fails if any attn op is left, with an error on each one the patterns did
/// not report themselves. `passName` names the lowering in those errors.
LogicalResult applyAttnToGPUConversion(Operation *root,
                                       const FrozenRewritePatternSet &patterns,
                                       StringRef passName);

} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_CONVERSION_ATTNTOGPU_ATTNTOGPU_H
