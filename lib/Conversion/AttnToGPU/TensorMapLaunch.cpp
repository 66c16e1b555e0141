//===- TensorMapLaunch.cpp - tensor maps for a launch from IR ---*- C++ -*-===//
//
// A gpu.launch_func of an attn-fwd-v2 kernel passes the tensor maps of q, k
// and v by value. The host code makes them as the runtime does
// (docs/BundleFormat.md): cuTensorMapEncodeTiled of the CUDA driver, which
// a program running the launch links anyway; a failed encode stops the
// program with a message (cf.assert) rather than launch with a bad map.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Conversion/AttnToGPU/KernelABI.h"
#include "LaunchUtils.h"
// cuda.h's enumerators as the runtime passes them (checked against cuda.h
// there, runtime/lib/CudaAbiCheck.cpp): one copy for both encoders.
#include "../../../runtime/lib/CudaConstants.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::attn;

static constexpr StringLiteral kEncodeName = "cuTensorMapEncodeTiled";

/// The driver's entry point, declared once in `module`.
static LLVM::LLVMFuncOp getEncodeFunction(OpBuilder &builder, Location loc,
                                          ModuleOp module) {
  if (auto f = module.lookupSymbol<LLVM::LLVMFuncOp>(kEncodeName))
    return f;
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToStart(module.getBody());
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i32 = b.getI32Type();
  // (map, dtype, rank, address, dims, strides, box, element strides,
  //  interleave, swizzle, L2 promotion, OOB fill) -> CUresult
  auto type = LLVM::LLVMFunctionType::get(
      i32, {ptr, i32, i32, ptr, ptr, ptr, ptr, ptr, i32, i32, i32, i32});
  return LLVM::LLVMFuncOp::create(b, loc, kEncodeName, type);
}

Value mlir::attn::encodeTensorMap(OpBuilder &b, Location loc, Operation *op,
                                  Value memref, Value devicePtr,
                                  int64_t boxRows) {
  MLIRContext *ctx = b.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto cI32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  };
  auto cI64 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  /// A stack array of `values` (all of `type`).
  auto array = [&](Type type, ArrayRef<Value> values) -> Value {
    Value slot = LLVM::AllocaOp::create(
        b, loc, ptr, LLVM::LLVMArrayType::get(type, values.size()), cI32(1), 8);
    for (auto [i, v] : llvm::enumerate(values)) {
      Value at = LLVM::GEPOp::create(b, loc, ptr, type, slot,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
      LLVM::StoreOp::create(b, loc, v, at);
    }
    return slot;
  };
  auto type = cast<MemRefType>(memref.getType());
  Type elem = type.getElementType();
  int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8;
  // Dims innermost first: {D, S, H, B}; strides of S, H and B in bytes.
  SmallVector<Value> dims;
  for (int64_t d = 3; d >= 0; --d)
    dims.push_back(arith::IndexCastOp::create(
        b, loc, i64, memref::DimOp::create(b, loc, memref, d)));
  SmallVector<Value> strides = getStrides(b, loc, memref, 3);
  SmallVector<Value> byteStrides;
  for (int64_t d = 2; d >= 0; --d)
    byteStrides.push_back(
        arith::MulIOp::create(b, loc, strides[d], cI64(elemBytes)));
  Value map = LLVM::AllocaOp::create(b, loc, ptr, getTensorMapType(ctx),
                                     cI32(1), kTensorMapAlign);
  auto module = op->getParentOfType<ModuleOp>();
  Value address = LLVM::AddrSpaceCastOp::create(b, loc, ptr, devicePtr);
  Value result =
      LLVM::CallOp::create(
          b, loc, getEncodeFunction(b, loc, module),
          ValueRange{map,
                     cI32(elem.isBF16() ? ::attn::cuda::kTensorMapBFloat16
                                        : ::attn::cuda::kTensorMapFloat16),
                     cI32(4), address, array(i64, dims),
                     array(i64, byteStrides),
                     array(i32, {cI32(kTensorMapBoxCols), cI32(boxRows),
                                 cI32(1), cI32(1)}),
                     array(i32, {cI32(1), cI32(1), cI32(1), cI32(1)}),
                     cI32(::attn::cuda::kTensorMapInterleaveNone),
                     cI32(::attn::cuda::kTensorMapSwizzle128B),
                     cI32(::attn::cuda::kTensorMapL2Promotion128B),
                     cI32(::attn::cuda::kTensorMapOobFillNone)})
          .getResult();
  Value ok =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, result, cI32(0));
  cf::AssertOp::create(b, loc, ok,
                       "cuTensorMapEncodeTiled failed: the tensor's base "
                       "or strides are not 16-byte aligned, or the driver "
                       "is older than CUDA 12");
  return LLVM::LoadOp::create(b, loc, getTensorMapType(ctx), map,
                              kTensorMapAlign);
}
