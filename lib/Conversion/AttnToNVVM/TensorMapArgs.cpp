//===- TensorMapArgs.cpp - tensor maps as byval grid constants --*- C++ -*-===//
//
// The attn-nvvm-tensor-map-args pass: generic pointer arguments of NVVM
// kernels (the tensor maps of ABI attn-fwd-v2) become byval grid constants.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Conversion/AttnToGPU/KernelABI.h"
#include "AttnDialect/Conversion/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_NVVMTENSORMAPARGSPASS
#include "AttnDialect/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {
/// Makes argument `i` of `func` (a tensor map the body stored to a stack
/// slot) a byval pointer, and the slot's users read the parameter instead.
LogicalResult passByValue(LLVM::LLVMFuncOp func, unsigned i) {
  BlockArgument arg = func.getArgument(i);
  for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
    auto store = dyn_cast<LLVM::StoreOp>(user);
    auto slot = store ? store.getAddr().getDefiningOp<LLVM::AllocaOp>()
                      : LLVM::AllocaOp();
    if (!slot || store.getValue() != arg)
      return func.emitError() << "tensor map argument " << i
                              << " is used other than by a store to a stack "
                                 "slot";
    for (Operation *slotUser : slot->getUsers())
      if (slotUser != store && isa<LLVM::LoadOp, LLVM::StoreOp>(slotUser))
        return func.emitError() << "the stack slot of tensor map argument " << i
                                << " is read or written";
    store.erase();
    slot.getResult().replaceAllUsesWith(arg);
    slot.erase();
  }
  MLIRContext *ctx = func.getContext();
  Builder b(ctx);
  arg.setType(LLVM::LLVMPointerType::get(ctx));
  func.setArgAttr(
      i, LLVM::LLVMDialect::getByValAttrName(),
      TypeAttr::get(LLVM::LLVMArrayType::get(b.getI8Type(), kTensorMapBytes)));
  func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                  b.getI64IntegerAttr(kTensorMapAlign));
  func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                  b.getUnitAttr());
  return success();
}

struct NVVMTensorMapArgsPass
    : public attn::impl::NVVMTensorMapArgsPassBase<NVVMTensorMapArgsPass> {
  using NVVMTensorMapArgsPassBase::NVVMTensorMapArgsPassBase;

  void runOnOperation() override {
    Type mapType = getTensorMapType(&getContext());
    WalkResult result = getOperation().walk([&](LLVM::LLVMFuncOp func) {
      if (!func->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()))
        return WalkResult::advance();
      bool changed = false;
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
        if (func.getArgument(i).getType() != mapType)
          continue;
        if (failed(passByValue(func, i)))
          return WalkResult::interrupt();
        changed = true;
      }
      if (changed)
        func.setFunctionType(LLVM::LLVMFunctionType::get(
            func.getFunctionType().getReturnType(),
            llvm::to_vector(func.getBody().getArgumentTypes())));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
