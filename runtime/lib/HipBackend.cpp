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

  /// hipGetDevice()'s device, queried once per device (a backend serves one
  /// bundle, whose chips probeChip tries).
  Status deviceInfo(const BundleInfo &bundle, void *,
                    DeviceInfo &info) override {
    const HipRuntime *hip = nullptr;
    int device = 0;
    Status s = currentDevice(hip, device);
    if (!s.isOk())
      return s;
    return devices.get(device, info, [&](DeviceInfo &out) {
      int lds = 0;
      hipError_t r = hip->hipDeviceGetAttribute(&out.multiprocessors,
                                                kAttrCuCount, device);
      if (r == kHipSuccess)
        r = hip->hipDeviceGetAttribute(&lds, kAttrMaxLds, device);
      if (r != kHipSuccess)
        return Status::error(ATTN_STATUS_DRIVER_ERROR,
                             "cannot query HIP device " +
                                 std::to_string(device) + ": " +
                                 errorText(*hip, r));
      out.sharedMemory = lds;
      out.chip = probeChip(*hip, bundle);
      return Status::ok();
    });
  }

private:
  // hipDeviceAttributeMultiprocessorCount and
  // hipDeviceAttributeMaxSharedMemoryPerBlock in hip_runtime_api.h (ROCm 6).
  static constexpr int kAttrCuCount = 63, kAttrMaxLds = 74;

  /// The first of a multi-chip bundle's chips whose code object the current
  /// device loads, kNoBundleChip when none does, "" for a bundle of one chip
  /// (a launch then reports the loader's error). The stable API does not
  /// name the device's gfx (hipDeviceProp_t is versioned), so one code
  /// object per chip is tried.
  static std::string probeChip(const HipRuntime &hip,
                               const BundleInfo &bundle) {
    std::vector<const Kernel *> firstOfChip;
    auto add = [&](const Kernel &k) {
      if (!k.image)
        return;
      for (const Kernel *seen : firstOfChip)
        if (seen->chip == k.chip)
          return;
      firstOfChip.push_back(&k);
    };
    for (const Variant &v : bundle.variants)
      add(v.kernel);
    for (const Plan &p : bundle.plans)
      for (const Stage &stage : p.stages)
        add(stage.kernel);
    if (firstOfChip.size() < 2)
      return "";
    for (const Kernel *k : firstOfChip) {
      hipModule_t module = nullptr;
      if (hip.hipModuleLoadData(&module, k->image->data()) != kHipSuccess)
        continue;
      hip.hipModuleUnload(module);
      return k->chip;
    }
    return kNoBundleChip;
  }

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
  DeviceInfoCache<int> devices;
};

} // namespace

std::unique_ptr<Backend> attn::createHipBackend() {
  return std::make_unique<HipBackend>();
}
