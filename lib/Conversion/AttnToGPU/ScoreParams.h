//===- ScoreParams.h - run-time values of the score transform ---*- C++ -*-===//
//
// Private to the AttnToGPU kernels. The forward kernel and the backward
// plan's stages turn q.k into the same exp2-domain scores (scale, softcap,
// mask, dropout); both read what that needs from their arguments here, so
// the two cannot drift apart.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_SCOREPARAMS_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_SCOREPARAMS_H

#include "AttnDialect/Conversion/AttnToGPU/KernelABI.h"
#include "AttnDialect/Utils/Dropout.h"
#include "AttnDialect/Utils/MaskUtils.h"

#include <optional>

namespace mlir {
namespace attn {

struct ScoreParams {
  /// f32: scale * log2(e); with a softcap also scale / softcap and
  /// softcap * log2(e) (null without).
  Value scaleLog2, softcapScale, softcapLog2;
  MaskParams mask;
  /// Set when `spec.dropout`.
  std::optional<DropoutParams> dropout;
};

/// `spec`'s score parameters from kernel arguments `args`: scale, softcap,
/// window_left and window_right from `scaleArg` on, and with dropout
/// dropout_p, the seed and the offset from `dropoutArg` on (both ABIs of
/// KernelABI.h place them so).
ScoreParams bindScoreParams(OpBuilder &b, Location loc, ValueRange args,
                            const KernelSpec &spec, unsigned scaleArg,
                            unsigned dropoutArg);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_SCOREPARAMS_H
