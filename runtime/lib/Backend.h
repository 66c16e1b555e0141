//===- Backend.h - Load modules and launch kernels on one platform --------===//

#ifndef ATTN_RUNTIME_BACKEND_H
#define ATTN_RUNTIME_BACKEND_H

#include "Bundle.h"
#include "TensorMaps.h"

#include <memory>
#include <vector>

namespace attn {

/// Launch geometry of one kernel.
struct LaunchGeometry {
  unsigned gridX, gridY, gridZ, blockX;
  unsigned dynamicSmem;
};

/// One kernel launch: what, how, and the argument block (the array of
/// pointers to the arguments that cuLaunchKernel takes).
struct Launch {
  const Kernel *kernel;
  LaunchGeometry geometry;
  void **args;
};

/// One per loaded bundle: it owns the modules loaded for that bundle, cached
/// per (context or device, kernel), and is safe to call from several threads.
class Backend {
public:
  virtual ~Backend() = default;

  /// Launches `launches` in order on `stream` (null: the default stream of
  /// the current context/device). Every kernel's module is loaded (on first
  /// use) before the first launch, so that a kernel that cannot load leaves
  /// nothing half done.
  virtual Status launch(const BundleInfo &bundle,
                        const std::vector<Launch> &launches, void *stream) = 0;

  /// What dispatch checks a variant against on the device `stream` runs
  /// on (its chip, its shared memory) and what split-KV sizes its grid by
  /// (its multiprocessors); `bundle` is the one this backend launches (HIP
  /// finds the device's chip among its chips). The default knows nothing.
  virtual Status deviceInfo(const BundleInfo &bundle, void *stream,
                            DeviceInfo &info) {
    info = DeviceInfo();
    return Status::ok();
  }

  /// Encodes (or finds in its cache) the maps `descs` describes, for a
  /// variant of ABI attn-fwd-v2 (dispatch checked that TMA can describe
  /// them). The default has no tensor maps.
  virtual Status encodeTensorMaps(const TensorMapDescs &descs,
                                  TensorMap *maps) {
    return Status::error(ATTN_STATUS_LAUNCH_FAILED,
                         "this platform has no tensor maps");
  }
};

std::unique_ptr<Backend> createCudaBackend();
std::unique_ptr<Backend> createHipBackend();

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
