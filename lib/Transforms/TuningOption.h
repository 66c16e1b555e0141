//===- TuningOption.h - a pass's tuning= option -----------------*- C++ -*-===//
//
// Reads the tuning file a pass option names, for attn-select-config and
// attn-specialize-sizes alike: errors and warnings on the pass's root op.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_TUNINGOPTION_H
#define ATTN_LIB_TRANSFORMS_TUNINGOPTION_H

#include "AttnDialect/Target/Tuning.h"
#include "mlir/IR/Operation.h"

namespace mlir {
namespace attn {

/// The tuning file at `path` for `chip` (nullopt when `path` is empty), or
/// failure after an error on `root` naming `pass`: an unreadable or invalid
/// file, or one for another chip. A file of another toolchain is a warning.
inline FailureOr<std::optional<TuningFile>>
loadTuningOption(Operation *root, llvm::StringRef pass, llvm::StringRef path,
                 const ChipSpec &chip) {
  if (path.empty())
    return std::optional<TuningFile>();
  llvm::SmallVector<std::string> warnings;
  llvm::Expected<TuningFile> file = loadTuningFile(path, warnings);
  if (!file) {
    root->emitError(pass) << ": " << llvm::toString(file.takeError());
    return failure();
  }
  if (file->chip != &chip) {
    root->emitError(pass) << ": tuning file '" << path << "' is for "
                          << file->chip->name << ", not " << chip.name;
    return failure();
  }
  for (const std::string &w : warnings)
    root->emitWarning(pass) << ": " << w;
  return std::optional<TuningFile>(std::move(*file));
}

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_TRANSFORMS_TUNINGOPTION_H
