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

LogicalResult
ConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                   StringRef name, int64_t blockM, int64_t blockN,
                   int64_t warps, int64_t stages, PipelineKind pipeline,
                   bool accInRegisters, StringRef mma) {
  auto positivePow2 = [&](int64_t v, StringRef what) -> LogicalResult {
    if (v <= 0 || (v & (v - 1)) != 0)
      return emitError() << "#attn.config: " << what
                         << " must be a positive power of two, got " << v;
    return success();
  };
  if (failed(positivePow2(blockM, "block_m")) ||
      failed(positivePow2(blockN, "block_n")) ||
      failed(positivePow2(warps, "warps")))
    return failure();
  if (stages < 1 || stages > 8)
    return emitError() << "#attn.config: stages must be in [1, 8], got "
                       << stages;
  return success();
}

void AttnDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "AttnDialect/IR/AttnAttrs.cpp.inc"
      >();
}
