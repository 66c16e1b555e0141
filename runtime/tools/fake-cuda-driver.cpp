//===- fake-cuda-driver.cpp - A CUDA driver stand-in for tests ------------===//
//
// Exports the Driver API entry points the runtime opens (CudaSymbols.def)
// and answers them without a GPU, printing each call that matters to stderr
// ("fake-cuda: ..."), so lit tests can check what the runtime asks of the
// driver: which modules it loads and how often, the shared-memory opt-in,
// the launch geometry and the kernel arguments (FakeLaunchTrace.h). Loaded
// through ATTN_CUDA_LIBRARY. Configured by the environment:
//
//   ATTN_FAKE_CUDA_CC          compute capability "major.minor" (9.0)
//   ATTN_FAKE_CUDA_SMEM_OPTIN  opt-in shared memory per block (232448)
//   ATTN_FAKE_CUDA_FAIL        name of one entry point that fails (999)
//   ATTN_FAKE_CUDA_FAIL_AFTER  with ..._FAIL: succeed that many calls first
//   ATTN_FAKE_ABI              attn-bwd-v1: print backward arguments
//   ATTN_FAKE_CUDA_NO_TENSOR_MAPS  set (not 0): dlsym finds no
//                              cuTensorMapEncodeTiled (a pre-12 driver)
//   ATTN_FAKE_CUDA_NO_LAUNCH_EX    set (not 0): dlsym finds no
//                              cuLaunchKernelEx (a pre-12 driver)
//
//===----------------------------------------------------------------------===//

#include "../lib/CudaConstants.h"
#include "FakeLaunchTrace.h"

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {
using CUresult = int;
using CUdevice = int;
struct Handle {
  int id;
};
using CUcontext = Handle *;
using CUmodule = Handle *;
using CUfunction = Handle *;
using CUstream = Handle *;

// cuda.h's CUlaunchConfig, as the runtime declares it (CudaAbiCheck.cpp
// checks that against cuda.h).
using CUlaunchConfig = attn::cuda::LaunchConfig;

constexpr CUresult kSuccess = 0;
constexpr CUresult kInvalidValue = 1; // CUDA_ERROR_INVALID_VALUE
constexpr CUresult kFailure = 999;    // CUDA_ERROR_UNKNOWN

Handle context{1};
thread_local CUcontext current = nullptr;
std::atomic<int> modulesLoaded{0};
std::mutex printMutex;

int envInt(const char *name, int fallback) {
  const char *v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

/// Fails the call named by ATTN_FAKE_CUDA_FAIL, after ATTN_FAKE_CUDA_FAIL_AFTER
/// calls that succeed.
bool fails(const char *name) {
  static std::atomic<int> calls{0};
  const char *f = std::getenv("ATTN_FAKE_CUDA_FAIL");
  return f && std::strcmp(f, name) == 0 &&
         calls++ >= envInt("ATTN_FAKE_CUDA_FAIL_AFTER", 0);
}

void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void trace(const char *fmt, ...) {
  std::lock_guard<std::mutex> lock(printMutex);
  std::fputs("fake-cuda: ", stderr);
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fputc('\n', stderr);
}
} // namespace

#define FAKE_CHECK(name)                                                       \
  if (fails(name))                                                             \
    return kFailure;

extern "C" {
__attribute__((visibility("default"))) CUresult cuInit(unsigned) {
  FAKE_CHECK("cuInit");
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult
cuGetErrorString(CUresult r, const char **text) {
  *text = r == kFailure        ? "fake failure"
          : r == kInvalidValue ? "invalid argument"
                               : "fake error";
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuDeviceGet(CUdevice *dev,
                                                            int ordinal) {
  FAKE_CHECK("cuDeviceGet");
  *dev = ordinal;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult
cuDeviceGetAttribute(int *value, int attr, CUdevice) {
  FAKE_CHECK("cuDeviceGetAttribute");
  const char *cc = std::getenv("ATTN_FAKE_CUDA_CC");
  int major = 9, minor = 0;
  if (cc)
    std::sscanf(cc, "%d.%d", &major, &minor);
  switch (attr) {
  case attn::cuda::kAttrCcMajor:
    *value = major;
    return kSuccess;
  case attn::cuda::kAttrCcMinor:
    *value = minor;
    return kSuccess;
  case attn::cuda::kAttrMaxSmemOptin:
    *value = envInt("ATTN_FAKE_CUDA_SMEM_OPTIN", 232448);
    return kSuccess;
  case attn::cuda::kAttrSmCount: // an H100's
    *value = envInt("ATTN_FAKE_CUDA_SM_COUNT", 132);
    return kSuccess;
  }
  return kFailure;
}

__attribute__((visibility("default"))) CUresult
cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice) {
  FAKE_CHECK("cuDevicePrimaryCtxRetain");
  *ctx = &context;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult
cuCtxGetCurrent(CUcontext *ctx) {
  *ctx = current;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuCtxSetCurrent(CUcontext ctx) {
  current = ctx;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult
cuCtxPushCurrent_v2(CUcontext ctx) {
  current = ctx;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult
cuCtxPopCurrent_v2(CUcontext *ctx) {
  *ctx = current;
  current = nullptr;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuCtxGetDevice(CUdevice *dev) {
  *dev = 0;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuStreamGetCtx(CUstream,
                                                               CUcontext *ctx) {
  FAKE_CHECK("cuStreamGetCtx");
  *ctx = &context;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult
cuModuleLoadData(CUmodule *module, const void *) {
  FAKE_CHECK("cuModuleLoadData");
  *module = new Handle{++modulesLoaded};
  trace("cuModuleLoadData -> module %d", (*module)->id);
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuModuleUnload(CUmodule m) {
  delete m;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult
cuModuleGetFunction(CUfunction *fn, CUmodule module, const char *name) {
  FAKE_CHECK("cuModuleGetFunction");
  *fn = module;
  trace("cuModuleGetFunction %s", name);
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult
cuFuncSetAttribute(CUfunction, int attr, int value) {
  FAKE_CHECK("cuFuncSetAttribute");
  trace("cuFuncSetAttribute %d %d", attr, value);
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult
cuLaunchKernel(CUfunction fn, unsigned gx, unsigned gy, unsigned gz,
               unsigned bx, unsigned by, unsigned bz, unsigned smem, CUstream,
               void **params, void **) {
  FAKE_CHECK("cuLaunchKernel");
  trace("cuLaunchKernel module %d grid (%u, %u, %u) block (%u, %u, %u) smem "
        "%u%s",
        fn->id, gx, gy, gz, bx, by, bz, smem,
        attn::fake::describeArgs(params, "fake-cuda:").c_str());
  return kSuccess;
}

/// Prints the launch as cuLaunchKernel's trace does, with each attribute as
/// id=value, the value's first int (the only value the runtime sets:
/// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, 6).
CUresult fakeLaunchKernelEx(const CUlaunchConfig *config, CUfunction fn,
                            void **params, void **extra) {
  FAKE_CHECK("cuLaunchKernelEx");
  if (!config || (config->numAttrs && !config->attrs) || extra)
    return kInvalidValue;
  std::string attrs;
  for (unsigned i = 0; i < config->numAttrs; ++i)
    attrs += (i ? ", " : "") + std::to_string(config->attrs[i].id) + "=" +
             std::to_string(
                 config->attrs[i].value.programmaticStreamSerializationAllowed);
  trace("cuLaunchKernelEx module %d grid (%u, %u, %u) block (%u, %u, %u) smem "
        "%u attrs [%s]%s",
        fn->id, config->gridDimX, config->gridDimY, config->gridDimZ,
        config->blockDimX, config->blockDimY, config->blockDimZ,
        config->sharedMemBytes, attrs.c_str(),
        attn::fake::describeArgs(params, "fake-cuda:").c_str());
  return kSuccess;
}

using LaunchKernelExFn = decltype(&fakeLaunchKernelEx);

/// No cuLaunchKernelEx under ATTN_FAKE_CUDA_NO_LAUNCH_EX, as with a driver
/// older than CUDA 12.
LaunchKernelExFn resolveLaunchKernelEx() {
  const char *off = std::getenv("ATTN_FAKE_CUDA_NO_LAUNCH_EX");
  return off && *off && std::strcmp(off, "0") ? nullptr : fakeLaunchKernelEx;
}

__attribute__((visibility("default"), ifunc("resolveLaunchKernelEx"))) CUresult
cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction fn, void **params,
                 void **extra);

/// Checks the arguments as the driver documents them (cuda.h), then writes
/// a map the launch trace recognizes (FakeLaunchTrace.h).
CUresult fakeTensorMapEncodeTiled(void *map, int dtype, uint32_t rank,
                                  void *address, const uint64_t *dims,
                                  const uint64_t *strides, const uint32_t *box,
                                  const uint32_t *elementStrides,
                                  int interleave, int swizzle, int l2,
                                  int fill) {
  FAKE_CHECK("cuTensorMapEncodeTiled");
  // Bytes per element of CUtensorMapDataType 0 to 12.
  static const int kSizes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  const char *why = nullptr;
  if (reinterpret_cast<uintptr_t>(map) % 64)
    why = "map not 64-byte aligned";
  else if (dtype < 0 || dtype > 12)
    why = "unknown data type";
  else if (rank < 1 || rank > 5)
    why = "rank not in [1, 5]";
  else if (reinterpret_cast<uintptr_t>(address) % 16)
    why = "address not 16-byte aligned";
  else if (interleave != 0 || swizzle < 0 || swizzle > 3 || l2 < 0 || l2 > 3 ||
           fill < 0 || fill > 1)
    why = "bad interleave, swizzle, L2 promotion or fill";
  for (uint32_t i = 0; !why && i < rank; ++i) {
    if (dims[i] < 1 || dims[i] > (uint64_t(1) << 32))
      why = "dim not in [1, 2^32]";
    else if (i + 1 < rank && (strides[i] == 0 || strides[i] % 16 ||
                              strides[i] >= (uint64_t(1) << 40)))
      why = "stride not a positive multiple of 16 below 2^40";
    else if (box[i] < 1 || box[i] > 256)
      why = "box dim not in [1, 256]";
    else if (elementStrides[i] < 1 || elementStrides[i] > 8)
      why = "element stride not in [1, 8]";
  }
  int innerBytes = why ? 0 : int(box[0]) * kSizes[dtype];
  if (!why && innerBytes % 16)
    why = "inner box not a multiple of 16 bytes";
  // 32B, 64B, 128B swizzles span that many bytes of the inner box at most.
  if (!why && swizzle && innerBytes > (16 << swizzle))
    why = "inner box wider than the swizzle span";
  uint32_t shown = rank < 5 ? rank : 5;
  std::string text = "dtype " + std::to_string(dtype) + " rank " +
                     std::to_string(rank) + " dims [";
  for (uint32_t i = 0; i < shown; ++i)
    text += (i ? ", " : "") + std::to_string(dims[i]);
  text += "] strides [";
  for (uint32_t i = 0; i + 1 < shown; ++i)
    text += (i ? ", " : "") + std::to_string(strides[i]);
  text += "] box [";
  for (uint32_t i = 0; i < shown; ++i)
    text += (i ? ", " : "") + std::to_string(box[i]);
  text += "] swizzle " + std::to_string(swizzle) + " l2 " + std::to_string(l2) +
          " fill " + std::to_string(fill);
  if (why) {
    trace("cuTensorMapEncodeTiled refused (%s): %s", why, text.c_str());
    return kInvalidValue;
  }
  static std::atomic<uint64_t> maps{0};
  uint64_t serial = ++maps;
  attn::fake::writeMap(map, serial);
  trace("cuTensorMapEncodeTiled -> map %llu address 0x%llx %s",
        static_cast<unsigned long long>(serial),
        static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(address)),
        text.c_str());
  return kSuccess;
}

using EncodeTiledFn = decltype(&fakeTensorMapEncodeTiled);

/// cuTensorMapEncodeTiled's resolver: no symbol (dlsym returns null) under
/// ATTN_FAKE_CUDA_NO_TENSOR_MAPS, as with a driver older than CUDA 12.
EncodeTiledFn resolveTensorMapEncodeTiled() {
  const char *off = std::getenv("ATTN_FAKE_CUDA_NO_TENSOR_MAPS");
  return off && *off && std::strcmp(off, "0") ? nullptr
                                              : fakeTensorMapEncodeTiled;
}

__attribute__((visibility("default"), ifunc("resolveTensorMapEncodeTiled")))
CUresult
cuTensorMapEncodeTiled(void *map, int dtype, uint32_t rank, void *address,
                       const uint64_t *dims, const uint64_t *strides,
                       const uint32_t *box, const uint32_t *elementStrides,
                       int interleave, int swizzle, int l2, int fill);
}
