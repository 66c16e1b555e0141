//===- HipBackend.cpp - Launch bundle kernels through HIP -----------------===//
//
// libamdhip64 is opened with dlopen, like the CUDA driver, so one runtime
// binary serves both vendors and a machine without ROCm gets a message.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "KernelCache.h"

using namespace attn;

namespace {

using hipError_t = int;
using hipModule_t = struct ihipModule_t *;
using hipFunction_t = struct ihipModuleSymbol_t *;
using hipStream_t = struct ihipStream_t *;

constexpr hipError_t kHipSuccess = 0;

struct HipRuntime {
#define ATTN_HIP_SYMBOL(member, symbol, ret, params)                           \
  ret(*member) params = nullptr;
#include "HipSymbols.def"
};

Status getRuntime(const HipRuntime *&out) {
  static HipRuntime hip;
  static Status status = [] {
    void *handle = nullptr;
    Status s = openLibrary(
        "HIP runtime", "ATTN_HIP_LIBRARY",
        {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6"}, handle);
    if (!s.isOk())
      return s;
#define ATTN_HIP_SYMBOL(member, symbol, ret, params)                           \
  {                                                                            \
    void *fn = nullptr;                                                        \
    Status ls = lookupSymbol(handle, "HIP runtime", symbol, fn);               \
    if (!ls.isOk())                                                            \
      return ls;                                                               \
    hip.member = reinterpret_cast<ret(*) params>(fn);                          \
  }
#include "HipSymbols.def"
    hipError_t r = hip.hipInit(0);
    if (r != kHipSuccess) {
      const char *text = hip.hipGetErrorString(r);
      return Status::error(ATTN_STATUS_NO_DRIVER,
                           std::string("hipInit failed: ") +
                               (text ? text : "unknown error") +
                               " (hipError_t " + std::to_string(r) + ")");
    }
    return Status::ok();
  }();
  out = &hip;
  return status;
}

std::string errorText(const HipRuntime &hip, hipError_t r) {
  const char *text = hip.hipGetErrorString(r);
  return std::string(text ? text : "unknown error") + " (hipError_t " +
         std::to_string(r) + ")";
}

class HipBackend final : public Backend {
public:
  ~HipBackend() override {
    const HipRuntime *hip = nullptr;
    if (!getRuntime(hip).isOk())
      return;
    int current = 0;
    bool restore = hip->hipGetDevice(&current) == kHipSuccess;
    cache.forEachModule([&](int device, hipModule_t module) {
      hip->hipSetDevice(device);
      hip->hipModuleUnload(module);
    });
    if (restore)
      hip->hipSetDevice(current);
  }

  Status launch(const BundleInfo &bundle, const std::vector<Launch> &launches,
                void *stream) override {
    const HipRuntime *hip = nullptr;
    int device = 0;
    Status s = currentDevice(hip, device);
    if (!s.isOk())
      return s;
    hipError_t r;
    std::vector<hipFunction_t> fns(launches.size());
    for (size_t i = 0; i < launches.size(); ++i) {
      s = getFunction(*hip, bundle, *launches[i].kernel, device, fns[i]);
      if (!s.isOk())
        return s;
    }
    for (size_t i = 0; i < launches.size(); ++i) {
      const LaunchGeometry &g = launches[i].geometry;
      // AMD GPUs need no opt-in for dynamic LDS up to the hardware limit; a
      // larger request fails here with HIP's message.
      r = hip->hipModuleLaunchKernel(
          fns[i], g.gridX, g.gridY, g.gridZ, g.blockX, 1, 1, g.dynamicSmem,
          static_cast<hipStream_t>(stream), launches[i].args, nullptr);
      if (r != kHipSuccess)
        return Status::error(ATTN_STATUS_LAUNCH_FAILED,
                             "hipModuleLaunchKernel of " +
                                 launches[i].kernel->label +
                                 " failed: " + errorText(*hip, r));
    }
    return Status::ok();
  }

  Status multiprocessorCount(void *, int &count) override {
    const HipRuntime *hip = nullptr;
    int device = 0;
    Status s = currentDevice(hip, device);
    if (!s.isOk())
      return s;
    // hipDeviceAttributeMultiprocessorCount in hip_runtime_api.h (ROCm 6).
    constexpr int kAttrCuCount = 63;
    hipError_t r = hip->hipDeviceGetAttribute(&count, kAttrCuCount, device);
    if (r != kHipSuccess)
      return Status::error(ATTN_STATUS_DRIVER_ERROR,
                           "cannot query the CU count: " + errorText(*hip, r));
    return Status::ok();
  }

private:
  /// The runtime and hipGetDevice()'s device.
  Status currentDevice(const HipRuntime *&hip, int &device) {
    Status s = getRuntime(hip);
    if (!s.isOk())
      return s;
    hipError_t r = hip->hipGetDevice(&device);
    if (r != kHipSuccess)
      return Status::error(ATTN_STATUS_DRIVER_ERROR,
                           "hipGetDevice failed: " + errorText(*hip, r));
    return Status::ok();
  }

  Status getFunction(const HipRuntime &hip, const BundleInfo &bundle,
                     const Kernel &kernel, int device, hipFunction_t &fn) {
    return cache.get(device, kernel.id, fn,
                     [&](hipModule_t &module, hipFunction_t &f) {
                       return load(hip, bundle, kernel, module, f);
                     });
  }

  Status load(const HipRuntime &hip, const BundleInfo &bundle, const Kernel &k,
              hipModule_t &module, hipFunction_t &fn) {
    // HIP offers no stable way to read the gfx name without the versioned
    // hipDeviceProp_t, so a code object for another chip is reported by the
    // loader; the message names the bundle's chip for that case.
    hipError_t r = hip.hipModuleLoadData(&module, k.image->data());
    if (r != kHipSuccess)
      return Status::error(ATTN_STATUS_LAUNCH_FAILED,
                           "hipModuleLoadData of '" + k.binary + "' (" +
                               k.label + ", chip " + bundle.chip +
                               ") failed: " + errorText(hip, r) +
                               "; is this GPU a " + bundle.chip + "?");
    r = hip.hipModuleGetFunction(&fn, module, k.entry.c_str());
    if (r != kHipSuccess) {
      hip.hipModuleUnload(module);
      return Status::error(ATTN_STATUS_LAUNCH_FAILED,
                           "cannot find kernel '" + k.entry + "' in '" +
                               k.binary + "' (" + k.label +
                               "): " + errorText(hip, r));
    }
    return Status::ok();
  }

  KernelCache<int, hipModule_t, hipFunction_t> cache;
};

} // namespace

std::unique_ptr<Backend> attn::createHipBackend() {
  return std::make_unique<HipBackend>();
}
