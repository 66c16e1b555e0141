//===- fake-hip-runtime.cpp - A HIP runtime stand-in for tests ------------===//
//
// Exports the HIP entry points the runtime opens (HipSymbols.def) and answers
// them without a GPU, printing each module load and launch to stderr
// ("fake-hip: ..."), as fake-cuda-driver.cpp does for CUDA. Loaded through
// ATTN_HIP_LIBRARY. ATTN_FAKE_HIP_FAIL names one entry point that fails
// (hipErrorInvalidImage, 200, for hipModuleLoadData; 999 otherwise);
// ATTN_FAKE_ABI=attn-bwd-v1 prints the arguments of backward stages.
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
using hipError_t = int;
struct Handle {
  int id;
};
using hipModule_t = Handle *;
using hipFunction_t = Handle *;
using hipStream_t = void *;

constexpr hipError_t kSuccess = 0;

std::atomic<int> modulesLoaded{0};
std::mutex printMutex;

hipError_t failure(const char *name) {
  const char *f = std::getenv("ATTN_FAKE_HIP_FAIL");
  if (!f || std::strcmp(f, name) != 0)
    return kSuccess;
  return std::strcmp(name, "hipModuleLoadData") == 0 ? 200 : 999;
}

void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void trace(const char *fmt, ...) {
  std::lock_guard<std::mutex> lock(printMutex);
  std::fputs("fake-hip: ", stderr);
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fputc('\n', stderr);
}
} // namespace

#define FAKE_CHECK(name)                                                       \
  if (hipError_t e = failure(name))                                            \
    return e;
#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_EXPORT hipError_t hipInit(unsigned) {
  FAKE_CHECK("hipInit");
  return kSuccess;
}

FAKE_EXPORT const char *hipGetErrorString(hipError_t r) {
  return r == 200 ? "hipErrorInvalidImage" : "fake failure";
}

FAKE_EXPORT hipError_t hipGetDevice(int *device) {
  FAKE_CHECK("hipGetDevice");
  *device = 0;
  return kSuccess;
}

FAKE_EXPORT hipError_t hipSetDevice(int) { return kSuccess; }

FAKE_EXPORT hipError_t hipDeviceGetAttribute(int *value, int attr, int) {
  FAKE_CHECK("hipDeviceGetAttribute");
  if (attr != 63) // hipDeviceAttributeMultiprocessorCount
    return 999;
  *value = 304; // an MI300X's CUs
  return kSuccess;
}

FAKE_EXPORT hipError_t hipModuleLoadData(hipModule_t *module, const void *) {
  FAKE_CHECK("hipModuleLoadData");
  *module = new Handle{++modulesLoaded};
  trace("hipModuleLoadData -> module %d", (*module)->id);
  return kSuccess;
}

FAKE_EXPORT hipError_t hipModuleUnload(hipModule_t module) {
  delete module;
  return kSuccess;
}

FAKE_EXPORT hipError_t hipModuleGetFunction(hipFunction_t *fn,
                                            hipModule_t module,
                                            const char *name) {
  FAKE_CHECK("hipModuleGetFunction");
  *fn = module;
  trace("hipModuleGetFunction %s", name);
  return kSuccess;
}

FAKE_EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t fn, unsigned gx,
                                             unsigned gy, unsigned gz,
                                             unsigned bx, unsigned by,
                                             unsigned bz, unsigned lds,
                                             hipStream_t, void **params,
                                             void **) {
  FAKE_CHECK("hipModuleLaunchKernel");
  trace("hipModuleLaunchKernel module %d grid (%u, %u, %u) block (%u, %u, "
        "%u) lds %u%s",
        fn->id, gx, gy, gz, bx, by, bz, lds,
        attn::fake::describeArgs(params, "fake-hip:").c_str());
  return kSuccess;
}
