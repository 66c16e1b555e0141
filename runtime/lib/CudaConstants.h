//===- CudaConstants.h - CUDA Driver API values the runtime passes --------===//
//
// Declared here so the runtime builds without cuda.h; CudaAbiCheck.cpp checks
// them against cuda.h wherever the headers exist.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_CUDACONSTANTS_H
#define ATTN_RUNTIME_CUDACONSTANTS_H

#include <cstdint>

namespace attn::cuda {

constexpr int kSuccess = 0;      // CUDA_SUCCESS
constexpr int kAttrSmCount = 16; // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kAttrCcMajor = 75; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrCcMinor = 76; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
constexpr int kAttrMaxSmemOptin =
    97; // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
constexpr int kFuncAttrMaxDynamicSmem =
    8; // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
/// Kernels may use up to 48 KiB of dynamic shared memory without opting in.
constexpr int64_t kDefaultSmemLimit = 48 * 1024;

} // namespace attn::cuda

#endif // ATTN_RUNTIME_CUDACONSTANTS_H
