//===- Compile.h - compile modules into bundle kernels ----------*- C++ -*-===//
//
// attn-bundle compiles each module in its own MLIRContext on LLVM's thread
// pool, through the pipeline of the chip's vendor (attn-to-nvvm or
// attn-to-rocdl, built by their functions), and reuses the kernels of a
// module compiled before from the cache.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTNBUNDLE_COMPILE_H
#define ATTN_TOOLS_ATTNBUNDLE_COMPILE_H

#include "AttnDialect/Target/TileTable.h"
#include "AttnDialect/Transforms/Bundle.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include <functional>
#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;
namespace attn {

struct CompileOptions {
  /// The chip; its vendor in the tables picks the pipeline.
  const ChipSpec *chip = nullptr;
  /// The CUDA or ROCm toolkit root; empty: the pipeline's default.
  std::string toolkit;
  /// Run attn-select-config first (modules whose ops carry no config).
  bool selectConfig = false;
  /// Modules compiled at once; 0: one per hardware thread.
  unsigned jobs = 0;
  /// Where compiled modules are kept; empty: no cache.
  std::string cacheDir;
  /// The chip's tuning file for attn-select-config (--input); empty: none.
  std::string tuningFile;
};

/// Adds the pipeline that compiles a module for `options.chip` to binaries:
/// attn-to-nvvm for NVIDIA chips, attn-to-rocdl for AMD ones. Fails, naming
/// the chip, for a chip of another vendor.
LogicalResult buildBundlePipeline(OpPassManager &pm,
                                  const CompileOptions &options,
                                  llvm::raw_ostream &errors);

/// One module to compile, built by `build` in the compiling thread's context.
struct CompileJob {
  std::string name;
  std::function<OwningOpRef<ModuleOp>(MLIRContext &)> build;
};

struct CompileStats {
  unsigned compiled = 0;
  unsigned cached = 0;
};

/// Compiles every job and returns their kernels in job order (a kernel
/// several jobs produce comes once, where it first appears). On failure,
/// prints each failed job's diagnostics, in job order, and fails. The
/// command line's pass-manager and timing options (registered by the tool)
/// apply to each job; a job's timing report comes with its diagnostics.
FailureOr<std::vector<BundleKernel>>
compileJobs(const DialectRegistry &registry, ArrayRef<CompileJob> jobs,
            const CompileOptions &options, CompileStats &stats);

} // namespace attn
} // namespace mlir

#endif // ATTN_TOOLS_ATTNBUNDLE_COMPILE_H
