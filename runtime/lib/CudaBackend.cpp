//===- CudaBackend.cpp - Launch bundle kernels through the CUDA driver ----===//
//
// The Driver API is opened with dlopen; the few types and constants it needs
// are declared here so the runtime builds without CUDA headers.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "CudaConstants.h"
#include "KernelCache.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

using namespace attn;

namespace {

using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUtensorMap = attn::TensorMap;
using CUlaunchConfig = attn::cuda::LaunchConfig;
using cuuint32_t = uint32_t;
using cuuint64_t = uint64_t;

using namespace attn::cuda;

/// griddepcontrol, which the kernels launched early wait with, is sm_90's.
constexpr int kProgrammaticLaunchMajor = 9;

/// ATTN_PROGRAMMATIC_LAUNCH=0 launches every kernel after the one before
/// it completed (to measure what the overlap gains).
bool programmaticLaunchAllowed() {
  static const bool allowed = [] {
    const char *v = std::getenv("ATTN_PROGRAMMATIC_LAUNCH");
    return !v || std::string(v) != "0";
  }();
  return allowed;
}

struct CudaDriver {
#define ATTN_CUDA_SYMBOL(member, symbol, ret, params)                          \
  ret(*member) params = nullptr;
#include "CudaSymbols.def"
};

/// Opens libcuda and runs cuInit once per process; later calls return the
/// same result, failure included.
Status getDriver(const CudaDriver *&out) {
  static CudaDriver driver;
  static Status status = [] {
    void *handle = nullptr;
    Status s = openLibrary("CUDA driver", "ATTN_CUDA_LIBRARY",
                           {"libcuda.so.1", "libcuda.so"}, handle);
    if (!s.isOk())
      return s;
#define ATTN_CUDA_SYMBOL(member, symbol, ret, params)                          \
  {                                                                            \
    void *fn = nullptr;                                                        \
    Status ls = lookupSymbol(handle, "CUDA driver", symbol, fn);               \
    if (!ls.isOk())                                                            \
      return ls;                                                               \
    driver.member = reinterpret_cast<ret(*) params>(fn);                       \
  }
// Left null when missing: what needs it is passed over at dispatch.
#define ATTN_CUDA_OPTIONAL_SYMBOL(member, symbol, ret, params)                 \
  {                                                                            \
    void *fn = nullptr;                                                        \
    (void)lookupSymbol(handle, "CUDA driver", symbol, fn);                     \
    driver.member = reinterpret_cast<ret(*) params>(fn);                       \
  }
#include "CudaSymbols.def"
    CUresult r = driver.cuInit(0);
    if (r != kSuccess) {
      const char *text = nullptr;
      if (driver.cuGetErrorString(r, &text) != kSuccess || !text)
        text = "unknown error";
      return Status::error(ATTN_STATUS_NO_DRIVER,
                           std::string("cuInit failed: ") + text +
                               " (CUresult " + std::to_string(r) + ")");
    }
    return Status::ok();
  }();
  out = &driver;
  return status;
}

std::string errorText(const CudaDriver &d, CUresult r) {
  const char *text = nullptr;
  if (d.cuGetErrorString(r, &text) != kSuccess || !text)
    text = "unknown error";
  return std::string(text) + " (CUresult " + std::to_string(r) + ")";
}

/// Makes `ctx` current for the scope when it is not already.
class ScopedContext {
public:
  ScopedContext(const CudaDriver &d, CUcontext ctx) : d(d) {
    CUcontext current = nullptr;
    if (d.cuCtxGetCurrent(&current) == kSuccess && current == ctx)
      return;
    result = d.cuCtxPushCurrent(ctx);
    pushed = result == kSuccess;
  }
  ~ScopedContext() {
    if (pushed) {
      CUcontext ignored;
      d.cuCtxPopCurrent(&ignored);
    }
  }
  /// CUDA_SUCCESS, or why the context could not be made current.
  CUresult status() const { return result; }

private:
  const CudaDriver &d;
  bool pushed = false;
  CUresult result = kSuccess;
};

class CudaBackend final : public Backend {
public:
  ~CudaBackend() override {
    const CudaDriver *d = nullptr;
    if (!getDriver(d).isOk())
      return;
    // Errors are ignored: at process exit the context may already be gone.
    cache.forEachModule([&](CUcontext ctx, CUmodule module) {
      ScopedContext scope(*d, ctx);
      d->cuModuleUnload(module);
    });
  }

  Status launch(const BundleInfo &bundle, const std::vector<Launch> &launches,
                void *stream) override {
    const CudaDriver *d = nullptr;
    CUcontext ctx = nullptr;
    Status s = streamContext(stream, d, ctx);
    if (!s.isOk())
      return s;
    ScopedContext scope(*d, ctx);
    if (scope.status() != kSuccess)
      return Status::error(ATTN_STATUS_DRIVER_ERROR,
                           "cannot make the stream's context current: " +
                               errorText(*d, scope.status()));
    std::vector<CUfunction> fns(launches.size());
    for (size_t i = 0; i < launches.size(); ++i) {
      s = getFunction(*d, *launches[i].kernel, ctx, fns[i]);
      if (!s.isOk())
        return s;
    }
    for (size_t i = 0; i < launches.size(); ++i) {
      const Launch &l = launches[i];
      const LaunchGeometry &g = l.geometry;
      // Early only after a kernel of ours: never over the caller's work.
      bool early =
          i > 0 && l.kernel->programmaticLaunch && launchesEarly(*d, ctx);
      CUresult r;
      if (early) {
        LaunchAttribute attr = {};
        attr.id = kLaunchAttrProgrammaticStreamSerialization;
        attr.value.programmaticStreamSerializationAllowed = 1;
        LaunchConfig config = {g.gridX, g.gridY,       g.gridZ, g.blockX, 1,
                               1,       g.dynamicSmem, stream,  &attr,    1};
        r = d->cuLaunchKernelEx(&config, fns[i], l.args, nullptr);
      } else {
        r = d->cuLaunchKernel(fns[i], g.gridX, g.gridY, g.gridZ, g.blockX, 1, 1,
                              g.dynamicSmem, static_cast<CUstream>(stream),
                              l.args, nullptr);
      }
      if (r != kSuccess)
        return Status::error(
            ATTN_STATUS_LAUNCH_FAILED,
            std::string(early ? "cuLaunchKernelEx" : "cuLaunchKernel") +
                " of " + l.kernel->label + " failed: " + errorText(*d, r));
    }
    return Status::ok();
  }

  Status encodeTensorMaps(const TensorMapDescs &descs,
                          TensorMap *maps) override {
    const CudaDriver *d = nullptr;
    Status s = getDriver(d);
    if (!s.isOk())
      return s;
    if (!d->cuTensorMapEncodeTiled)
      return Status::error(ATTN_STATUS_LAUNCH_FAILED,
                           "the CUDA driver has no cuTensorMapEncodeTiled "
                           "(tensor maps need CUDA 12)");
    for (int i = 0; i < kNumTensorMaps; ++i) {
      s = tensorMaps.get(descs[i], maps[i],
                         [&](const TensorMapDesc &m, TensorMap &out) {
                           return encode(*d, kTensorMapNames[i], m, out);
                         });
      if (!s.isOk())
        return s;
    }
    return Status::ok();
  }

  /// The device of `stream`'s context, queried once per context.
  Status deviceInfo(const BundleInfo &, void *stream,
                    DeviceInfo &info) override {
    const CudaDriver *d = nullptr;
    CUcontext ctx = nullptr;
    Status s = streamContext(stream, d, ctx);
    if (!s.isOk())
      return s;
    return devices.get(ctx, info, [&](DeviceInfo &out) {
      ScopedContext scope(*d, ctx);
      return queryDevice(*d, out);
    });
  }

private:
  /// The driver and the context `stream` runs in (findContext).
  Status streamContext(void *stream, const CudaDriver *&d, CUcontext &ctx) {
    Status s = getDriver(d);
    if (!s.isOk())
      return s;
    return findContext(*d, static_cast<CUstream>(stream), ctx);
  }

  /// The stream's context; with the default stream, the thread's current
  /// context, or the primary context of device 0 (made current, as the CUDA
  /// runtime does) when the thread has none.
  Status findContext(const CudaDriver &d, CUstream stream, CUcontext &ctx) {
    CUresult r;
    if (stream) {
      r = d.cuStreamGetCtx(stream, &ctx);
      if (r != kSuccess)
        return Status::error(ATTN_STATUS_DRIVER_ERROR,
                             "cuStreamGetCtx failed for the given stream: " +
                                 errorText(d, r));
      return Status::ok();
    }
    r = d.cuCtxGetCurrent(&ctx);
    if (r != kSuccess)
      return Status::error(ATTN_STATUS_DRIVER_ERROR,
                           "cuCtxGetCurrent failed: " + errorText(d, r));
    if (ctx)
      return Status::ok();
    CUdevice dev;
    r = d.cuDeviceGet(&dev, 0);
    if (r == kSuccess)
      r = d.cuDevicePrimaryCtxRetain(&ctx, dev);
    if (r == kSuccess)
      r = d.cuCtxSetCurrent(ctx);
    if (r != kSuccess)
      return Status::error(ATTN_STATUS_DRIVER_ERROR,
                           "no current CUDA context and the primary context "
                           "of device 0 is unavailable: " +
                               errorText(d, r));
    return Status::ok();
  }

  /// Whether a kernel marked programmaticLaunch starts early on the device
  /// of `ctx` (current); else it is launched as any other, its wait then
  /// having nothing left to wait for.
  bool launchesEarly(const CudaDriver &d, CUcontext ctx) {
    DeviceInfo info;
    return devices
               .get(ctx, info,
                    [&](DeviceInfo &out) { return queryDevice(d, out); })
               .isOk() &&
           info.programmaticLaunch;
  }

  /// `kernel` in `ctx` (current), loaded on first use.
  Status getFunction(const CudaDriver &d, const Kernel &kernel, CUcontext ctx,
                     CUfunction &fn) {
    return cache.get(ctx, kernel.id, fn, [&](CUmodule &module, CUfunction &f) {
      return load(d, kernel, module, f);
    });
  }

  /// What the current context's device is (deviceInfo caches it).
  static Status queryDevice(const CudaDriver &d, DeviceInfo &info) {
    CUdevice dev;
    int smem = 0;
    CUresult r = d.cuCtxGetDevice(&dev);
    if (r == kSuccess)
      r = d.cuDeviceGetAttribute(&info.major, kAttrCcMajor, dev);
    if (r == kSuccess)
      r = d.cuDeviceGetAttribute(&info.minor, kAttrCcMinor, dev);
    if (r == kSuccess)
      r = d.cuDeviceGetAttribute(&smem, kAttrMaxSmemOptin, dev);
    if (r == kSuccess)
      r = d.cuDeviceGetAttribute(&info.multiprocessors, kAttrSmCount, dev);
    if (r != kSuccess)
      return Status::error(ATTN_STATUS_DRIVER_ERROR,
                           "cannot query the current device: " +
                               errorText(d, r));
    info.sharedMemory = smem;
    info.tensorMaps = d.cuTensorMapEncodeTiled != nullptr;
    info.programmaticLaunch = d.cuLaunchKernelEx &&
                              info.major >= kProgrammaticLaunchMajor &&
                              programmaticLaunchAllowed();
    return Status::ok();
  }

  /// ABI attn-fwd-v2's encoding of map `name` (docs/BundleFormat.md).
  static Status encode(const CudaDriver &d, const char *name,
                       const TensorMapDesc &m, TensorMap &out) {
    static const cuuint32_t kUnitSteps[4] = {1, 1, 1, 1};
    int dtype =
        m.dtype == ATTN_DTYPE_BF16 ? kTensorMapBFloat16 : kTensorMapFloat16;
    CUresult r = d.cuTensorMapEncodeTiled(
        &out, dtype, 4, const_cast<void *>(m.address), m.dims.data(),
        m.strides.data(), m.box.data(), kUnitSteps, kTensorMapInterleaveNone,
        kTensorMapSwizzle128B, kTensorMapL2Promotion128B,
        kTensorMapOobFillNone);
    if (r != kSuccess)
      return Status::error(ATTN_STATUS_LAUNCH_FAILED,
                           std::string("cuTensorMapEncodeTiled of the ") +
                               name + " map failed: " + errorText(d, r));
    return Status::ok();
  }

  /// Checks the current device against the kernel's chip and shared memory
  /// (dispatch passed over what it cannot run; a forced or direct launch
  /// still gets the reason), then loads the kernel's module and function.
  Status load(const CudaDriver &d, const Kernel &k, CUmodule &module,
              CUfunction &fn) {
    DeviceInfo info;
    Status s = queryDevice(d, info);
    if (!s.isOk())
      return s;
    std::string why = whyNotDevice(k.chip, k.dynamicSmem, info);
    if (!why.empty())
      return Status::error(ATTN_STATUS_UNSUPPORTED_GPU, k.label + ": " + why);
    CUresult r = d.cuModuleLoadData(&module, k.image->data());
    if (r != kSuccess)
      return Status::error(ATTN_STATUS_LAUNCH_FAILED,
                           "cuModuleLoadData of '" + k.binary + "' (" +
                               k.label + ") failed: " + errorText(d, r));
    r = d.cuModuleGetFunction(&fn, module, k.entry.c_str());
    if (r == kSuccess && k.dynamicSmem > kDefaultSmemLimit)
      r = d.cuFuncSetAttribute(fn, kFuncAttrMaxDynamicSmem, int(k.dynamicSmem));
    if (r != kSuccess) {
      d.cuModuleUnload(module);
      return Status::error(ATTN_STATUS_LAUNCH_FAILED,
                           "cannot prepare kernel '" + k.entry + "' of '" +
                               k.binary + "' (" + k.label +
                               "): " + errorText(d, r));
    }
    return Status::ok();
  }

  KernelCache<CUcontext, CUmodule, CUfunction> cache;
  DeviceInfoCache<CUcontext> devices;
  TensorMapCache tensorMaps;
};

} // namespace

std::unique_ptr<Backend> attn::createCudaBackend() {
  return std::make_unique<CudaBackend>();
}
