//===- fake-hip-runtime.cpp - A HIP runtime stand-in for tests ------------===//
//
// Exports the HIP entry points the runtime opens (HipSymbols.def) and answers
// them without a GPU, printing each module load and launch to stderr
// ("fake-hip: ..."), as fake-cuda-driver.cpp does for CUDA. Loaded through
// ATTN_HIP_LIBRARY. ATTN_FAKE_HIP_FAIL names one entry point that fails
// (hipErrorInvalidImage, 200, for hipModuleLoadData; 999 otherwise);
// ATTN_FAKE_ABI=attn-bwd-v1 prints the arguments of backward stages.
// ATTN_FAKE_HIP_GFX=gfxN makes the device that chip: hipModuleLoadData then
// refuses a code object for another (hipErrorNoBinaryForGpu, 209), read from
// an ELF's EF_AMDGPU_MACH or a text image's "amdgcn-amd-amdhsa--gfxN";
// ATTN_FAKE_HIP_LDS sets the LDS per workgroup it reports (65536).
//
//===----------------------------------------------------------------------===//

#include "FakeLaunchTrace.h"

#include <atomic>
#include <cctype>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

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
  if (r == 209)
    return "hipErrorNoBinaryForGpu";
  return r == 200 ? "hipErrorInvalidImage" : "fake failure";
}

namespace {
/// The chip a code object is for: an ELF's EF_AMDGPU_MACH (the chips the
/// tile tables know), or the target triple in a text stand-in.
std::string imageChip(const void *image) {
  const char *bytes = static_cast<const char *>(image);
  if (std::strncmp(bytes, "\177ELF", 4) == 0) {
    uint32_t flags;
    std::memcpy(&flags, bytes + 48, sizeof(flags)); // ELF64 e_flags
    switch (flags & 0xff) {
    case 0x3f:
      return "gfx90a";
    case 0x41:
      return "gfx1100";
    case 0x4c:
      return "gfx942";
    case 0x4e:
      return "gfx1201";
    case 0x4f:
      return "gfx950";
    default:
      return "unknown";
    }
  }
  const char *triple = "amdgcn-amd-amdhsa--";
  const char *at = std::strstr(bytes, triple);
  if (!at)
    return "unknown";
  at += std::strlen(triple);
  size_t n = 0;
  while (std::isalnum(static_cast<unsigned char>(at[n])))
    ++n;
  return std::string(at, n);
}
} // namespace

FAKE_EXPORT hipError_t hipGetDevice(int *device) {
  FAKE_CHECK("hipGetDevice");
  *device = 0;
  return kSuccess;
}

FAKE_EXPORT hipError_t hipSetDevice(int) { return kSuccess; }

FAKE_EXPORT hipError_t hipDeviceGetAttribute(int *value, int attr, int) {
  FAKE_CHECK("hipDeviceGetAttribute");
  if (attr == 74) { // hipDeviceAttributeMaxSharedMemoryPerBlock
    const char *lds = std::getenv("ATTN_FAKE_HIP_LDS");
    *value = lds ? std::atoi(lds) : 65536;
    return kSuccess;
  }
  if (attr != 63) // hipDeviceAttributeMultiprocessorCount
    return 999;
  *value = 304; // an MI300X's CUs
  return kSuccess;
}

FAKE_EXPORT hipError_t hipModuleLoadData(hipModule_t *module,
                                         const void *image) {
  FAKE_CHECK("hipModuleLoadData");
  if (const char *gfx = std::getenv("ATTN_FAKE_HIP_GFX")) {
    std::string chip = imageChip(image);
    if (chip != gfx) {
      trace("hipModuleLoadData: a %s code object on a %s: refused",
            chip.c_str(), gfx);
      return 209;
    }
  }
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
