//===- KernelCache.h - compiled modules kept on disk ------------*- C++ -*-===//
//
// The kernels of a compiled module, keyed by a hash of everything that
// decides them: the module's IR, the pipeline with its options, this
// compiler's build (LLVM version and the attn-bundle executable itself) and
// the toolkit (ptxas --version; the ROCm device libraries and ld.lld). An
// entry is an LLVM cache file ("llvmcache-<key>", written to a temporary
// and renamed, as ThinLTO's cache is), so concurrent attn-bundle runs share
// a directory safely and LLVM's cache pruning bounds it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTNBUNDLE_KERNELCACHE_H
#define ATTN_TOOLS_ATTNBUNDLE_KERNELCACHE_H

#include "AttnDialect/Transforms/Bundle.h"
#include "llvm/Support/Caching.h"
#include "llvm/Support/MemoryBuffer.h"
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace attn {
struct CompileOptions;

class KernelCache {
public:
  /// A cache in `dir` for `numTasks` modules compiled through `pipeline`
  /// (its textual form, options included) with `options`' toolkit.
  static llvm::Expected<std::unique_ptr<KernelCache>>
  open(llvm::StringRef dir, unsigned numTasks, const CompileOptions &options,
       llvm::StringRef pipeline);

  /// The key of a module whose IR (without locations) is `ir`.
  std::string getKey(llvm::StringRef ir) const;

  /// The kernels stored under `key`, if any. `task` (below numTasks) names
  /// the caller; tasks may look up and store concurrently.
  std::optional<std::vector<BundleKernel>> lookup(unsigned task,
                                                  llvm::StringRef key);
  llvm::Error store(unsigned task, llvm::StringRef key,
                    llvm::ArrayRef<BundleKernel> kernels);

  /// Removes entries unused for a month, keeping the directory under 2 GiB.
  void prune();

private:
  KernelCache(std::string dir, unsigned numTasks, std::string salt);

  std::string dir;
  /// The hit of each task, handed over by the FileCache.
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> hits;
  /// What every key hashes besides the module: build, toolkit, pipeline.
  std::string salt;
  llvm::FileCache cache;
};

} // namespace attn
} // namespace mlir

#endif // ATTN_TOOLS_ATTNBUNDLE_KERNELCACHE_H
