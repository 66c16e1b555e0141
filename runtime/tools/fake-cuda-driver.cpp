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
//
//===----------------------------------------------------------------------===//

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

constexpr CUresult kSuccess = 0;
constexpr CUresult kFailure = 999; // CUDA_ERROR_UNKNOWN

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
  *text = r == kFailure ? "fake failure" : "fake error";
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
  case 75: // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
    *value = major;
    return kSuccess;
  case 76: // ..._MINOR
    *value = minor;
    return kSuccess;
  case 97: // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    *value = envInt("ATTN_FAKE_CUDA_SMEM_OPTIN", 232448);
    return kSuccess;
  case 16: // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT (an H100's)
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
}
