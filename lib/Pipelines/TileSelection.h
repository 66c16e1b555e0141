//===- TileSelection.h - the GPU pipelines' first passes --------*- C++ -*-===//

#ifndef ATTN_LIB_PIPELINES_TILESELECTION_H
#define ATTN_LIB_PIPELINES_TILESELECTION_H

#include "AttnDialect/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"

namespace mlir {
namespace attn {

/// Adds what picks the tiles of `chip`: attn-specialize-sizes when size
/// hints are given (a copy of an op per size class, from the tuning file's
/// entries where it has some), then attn-select-config for every op still
/// without a config. A tuning file alone only informs attn-select-config:
/// attn-bundle --input compiles each op of its file into one bundle
/// variant, which copies without length conditions would shadow.
template <typename Options>
void addTileSelection(OpPassManager &pm, const Options &options) {
  if (!options.sizeHints.empty()) {
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
