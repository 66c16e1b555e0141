//===- TileSelection.h - the GPU pipelines' first passes --------*- C++ -*-===//

#ifndef ATTN_LIB_PIPELINES_TILESELECTION_H
#define ATTN_LIB_PIPELINES_TILESELECTION_H

#include "AttnDialect/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"

namespace mlir {
namespace attn {

/// Adds what picks the tiles of `chip`: attn-specialize-sizes when size
/// hints or a tuning file are given (a copy of an op per size class), then
/// attn-select-config for every op still without a config.
template <typename Options>
void addTileSelection(OpPassManager &pm, const Options &options) {
  if (!options.sizeHints.empty() || !options.tuning.empty()) {
    AttnSpecializeSizesPassOptions sizes;
    sizes.target = options.chip;
    sizes.sizeHints.assign(options.sizeHints.begin(), options.sizeHints.end());
    sizes.tuning = options.tuning;
    sizes.smCount = options.smCount;
    pm.addPass(createAttnSpecializeSizesPass(sizes));
  }
  AttnSelectConfigPassOptions select;
  select.target = options.chip;
  select.tuning = options.tuning;
  pm.addPass(createAttnSelectConfigPass(select));
}

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_PIPELINES_TILESELECTION_H
