//===- Backend.h - Load modules and launch kernels on one platform --------===//

#ifndef ATTN_RUNTIME_BACKEND_H
#define ATTN_RUNTIME_BACKEND_H

#include "Bundle.h"

#include <memory>

namespace attn {

class KernelArgs;

/// One per loaded bundle: it owns the modules loaded for that bundle, cached
/// per (context or device, variant), and is safe to call from several threads.
class Backend {
public:
  virtual ~Backend() = default;

  /// Launches variant `index` of `bundle` on `stream` (null: the default
  /// stream of the current context/device), loading its module on first use.
  virtual Status launch(const BundleInfo &bundle, int index, KernelArgs &args,
                        const attn_fwd_params &params) = 0;
};

std::unique_ptr<Backend> createCudaBackend();
std::unique_ptr<Backend> createHipBackend();

/// Launch geometry of ABI attn-fwd-v1.
struct LaunchGeometry {
  unsigned gridX, gridY, gridZ, blockX;
  unsigned dynamicSmem;
};

inline LaunchGeometry launchGeometry(const Variant &v,
                                     const attn_fwd_params &p) {
  return {unsigned((p.seqlen_q + v.blockM - 1) / v.blockM), unsigned(p.heads_q),
          unsigned(p.batch), unsigned(v.threads), unsigned(v.dynamicSmem)};
}

/// dlopen()s the first of `candidates` that opens, the one named by the
/// environment variable `envVar` instead when it is set. On failure the
/// message names every library tried with dlerror()'s reason.
Status openLibrary(const char *what, const char *envVar,
                   std::initializer_list<const char *> candidates,
                   void *&handle);

/// dlsym() that reports a missing symbol with the library's name.
Status lookupSymbol(void *handle, const char *what, const char *symbol,
                    void *&out);

} // namespace attn

#endif // ATTN_RUNTIME_BACKEND_H
