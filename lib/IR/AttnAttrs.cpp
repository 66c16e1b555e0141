//===- AttnAttrs.cpp - attn attributes --------------------------*- C++ -*-===//

#include "AttnDialect/IR/AttnAttrs.h"
#include "AttnDialect/IR/AttnDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

#include "AttnDialect/IR/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "AttnDialect/IR/AttnAttrs.cpp.inc"

LogicalResult ConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef name, int64_t blockM, int64_t blockN,
                                 int64_t warps, int64_t stages,
                                 PipelineKind pipeline, bool accInRegisters,
                                 MatrixInstrKind mma, int64_t alignBytes,
                                 int64_t maxHeadDim, bool deterministic,
                                 int64_t headSplit, bool persistent,
                                 bool overlapSoftmax) {
  // Tiles are powers of two or multiples of `multiple` (block_m = 192 is
  // three warpgroups of 64 rows, warps = 12 three warpgroups); the caps keep
  // shared-memory and register footprints (products of these) far from
  // overflow. Which shapes a lowering handles is its own check.
  auto checkSize = [&](int64_t v, StringRef what, int64_t multiple,
                       int64_t max) -> LogicalResult {
    if (v <= 0 || v > max || ((v & (v - 1)) != 0 && v % multiple != 0))
      return emitError() << "#attn.config: " << what
                         << " must be a power of two or a multiple of "
                         << multiple << " in [1, " << max << "], got " << v;
    return success();
  };
  if (name.empty())
    return emitError() << "#attn.config: name must not be empty";
  if (failed(checkSize(blockM, "block_m", 16, 4096)) ||
      failed(checkSize(blockN, "block_n", 16, 4096)) ||
      failed(checkSize(warps, "warps", 4, 32)))
    return failure();
  if (stages < 1 || stages > 8)
    return emitError() << "#attn.config: stages must be in [1, 8], got "
                       << stages;
  if (alignBytes < 1 || alignBytes > 16 || (alignBytes & (alignBytes - 1)))
    return emitError() << "#attn.config: align_bytes must be a power of two "
                          "in [1, 16], got "
                       << alignBytes;
  if (maxHeadDim < 0 || maxHeadDim > 4096)
    return emitError() << "#attn.config: max_head_dim must be in [0, 4096], "
                          "got "
                       << maxHeadDim;
  if (headSplit < 1 || headSplit > 4)
    return emitError() << "#attn.config: head_split must be in [1, 4], got "
                       << headSplit;
  // The producer loads each tile's Q and K/V by tensor maps.
  if (persistent && pipeline != PipelineKind::TmaWarpSpecialized)
    return emitError() << "#attn.config: persistent needs pipeline = tma_ws, "
                          "got "
                       << stringifyPipelineKind(pipeline);
  // K and V get mbarriers of their own in the tensor-map ring.
  if (overlapSoftmax && pipeline != PipelineKind::TmaWarpSpecialized)
    return emitError() << "#attn.config: overlap_softmax needs pipeline = "
                          "tma_ws, got "
                       << stringifyPipelineKind(pipeline);
  return success();
}

void AttnDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "AttnDialect/IR/AttnAttrs.cpp.inc"
      >();
}
