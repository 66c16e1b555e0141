//===- Passes.h - attn conversion passes ------------------------*- C++ -*-===//

#ifndef ATTNDIALECT_CONVERSION_PASSES_H
#define ATTNDIALECT_CONVERSION_PASSES_H

#include "AttnDialect/IR/AttnDialect.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace attn {

#define GEN_PASS_DECL
#include "AttnDialect/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "AttnDialect/Conversion/Passes.h.inc"

} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_CONVERSION_PASSES_H
