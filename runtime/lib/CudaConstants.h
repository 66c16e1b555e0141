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
// cuTensorMapEncodeTiled's enums (CUtensorMapDataType, ...).
constexpr int kTensorMapFloat16 = 6;        // CU_TENSOR_MAP_DATA_TYPE_FLOAT16
constexpr int kTensorMapBFloat16 = 9;       // CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
constexpr int kTensorMapInterleaveNone = 0; // CU_TENSOR_MAP_INTERLEAVE_NONE
constexpr int kTensorMapSwizzle128B = 3;    // CU_TENSOR_MAP_SWIZZLE_128B
constexpr int kTensorMapL2Promotion128B =
    2;                                   // CU_TENSOR_MAP_L2_PROMOTION_L2_128B
constexpr int kTensorMapOobFillNone = 0; // CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE
/// Kernels may use up to 48 KiB of dynamic shared memory without opting in.
constexpr int64_t kDefaultSmemLimit = 48 * 1024;

// cuLaunchKernelEx's configuration (CUlaunchConfig, CUlaunchAttribute).
constexpr int kLaunchAttrProgrammaticStreamSerialization =
    6; // CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION

/// CUlaunchAttribute: the id padded to 8 bytes, then a 64-byte union.
struct LaunchAttribute {
  int id;
  char pad[4];
  union {
    int programmaticStreamSerializationAllowed;
    /// The union's size and alignment (other members hold pointers).
    alignas(8) char bytes[64];
  } value;
};

/// CUlaunchConfig.
struct LaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  void *stream; // CUstream
  LaunchAttribute *attrs;
  unsigned numAttrs;
};

} // namespace attn::cuda

#endif // ATTN_RUNTIME_CUDACONSTANTS_H
