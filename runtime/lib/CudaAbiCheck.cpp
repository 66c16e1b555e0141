//===- CudaAbiCheck.cpp - Check CudaConstants.h against cuda.h ------------===//
//
// Built only where CUDA headers are found; it has no code, only checks.
//
//===----------------------------------------------------------------------===//

#include "CudaConstants.h"

#include <cuda.h>

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
