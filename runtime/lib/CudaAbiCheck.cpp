//===- CudaAbiCheck.cpp - Check CudaConstants.h against cuda.h ------------===//
//
// Built only where CUDA headers are found; it has no code, only checks.
//
//===----------------------------------------------------------------------===//

#include "CudaConstants.h"

#include <cuda.h>

#include <cstddef>

using namespace attn::cuda;

static_assert(kSuccess == CUDA_SUCCESS);
static_assert(kAttrCcMajor == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(kAttrCcMinor == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(kAttrMaxSmemOptin ==
              CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
static_assert(kFuncAttrMaxDynamicSmem ==
              CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
static_assert(sizeof(CUdevice) == sizeof(int));
static_assert(sizeof(CUresult) == sizeof(int));
static_assert(kTensorMapFloat16 == CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
static_assert(kTensorMapBFloat16 == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
static_assert(kTensorMapInterleaveNone == CU_TENSOR_MAP_INTERLEAVE_NONE);
static_assert(kTensorMapSwizzle128B == CU_TENSOR_MAP_SWIZZLE_128B);
static_assert(kTensorMapL2Promotion128B == CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
static_assert(kTensorMapOobFillNone == CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
// CudaSymbols.def passes the enums as int and the map as attn::TensorMap
// (128 bytes, TensorMaps.h).
static_assert(sizeof(CUtensorMapDataType) == sizeof(int) &&
              sizeof(CUtensorMapInterleave) == sizeof(int) &&
              sizeof(CUtensorMapSwizzle) == sizeof(int) &&
              sizeof(CUtensorMapL2promotion) == sizeof(int) &&
              sizeof(CUtensorMapFloatOOBfill) == sizeof(int));
static_assert(sizeof(CUtensorMap) == 128);
static_assert(sizeof(cuuint64_t) == sizeof(uint64_t) &&
              sizeof(cuuint32_t) == sizeof(uint32_t));
// cuLaunchKernelEx's configuration, as CudaSymbols.def passes it.
static_assert(kLaunchAttrProgrammaticStreamSerialization ==
              CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
static_assert(sizeof(CUlaunchAttributeID) == sizeof(int));
static_assert(sizeof(LaunchAttribute) == sizeof(CUlaunchAttribute) &&
              alignof(LaunchAttribute) == alignof(CUlaunchAttribute));
static_assert(offsetof(LaunchAttribute, value) ==
                  offsetof(CUlaunchAttribute, value) &&
              sizeof(LaunchAttribute::value) == sizeof(CUlaunchAttributeValue));
static_assert(
    offsetof(CUlaunchAttributeValue, programmaticStreamSerializationAllowed) ==
        0 &&
    sizeof(CUlaunchAttributeValue::programmaticStreamSerializationAllowed) ==
        sizeof(int));
static_assert(sizeof(LaunchConfig) == sizeof(CUlaunchConfig) &&
              alignof(LaunchConfig) == alignof(CUlaunchConfig));
static_assert(
    offsetof(LaunchConfig, gridDimX) == offsetof(CUlaunchConfig, gridDimX) &&
    offsetof(LaunchConfig, blockDimX) == offsetof(CUlaunchConfig, blockDimX) &&
    offsetof(LaunchConfig, blockDimZ) == offsetof(CUlaunchConfig, blockDimZ) &&
    offsetof(LaunchConfig, sharedMemBytes) ==
        offsetof(CUlaunchConfig, sharedMemBytes) &&
    offsetof(LaunchConfig, stream) == offsetof(CUlaunchConfig, hStream) &&
    offsetof(LaunchConfig, attrs) == offsetof(CUlaunchConfig, attrs) &&
    offsetof(LaunchConfig, numAttrs) == offsetof(CUlaunchConfig, numAttrs));
