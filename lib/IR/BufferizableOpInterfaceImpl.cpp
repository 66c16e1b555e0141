//===- BufferizableOpInterfaceImpl.cpp - attn bufferization -----*- C++ -*-===//
//
// attn ops are destination-passing: each init aliases its result, so
// bufferizing swaps every tensor operand for its buffer and drops the results.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/IR/BufferizableOpInterfaceImpl.h"
#include "AttnDialect/IR/AttnOps.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;

namespace {
template <typename OpTy>
struct AttnOpBufferization
    : public DstBufferizableOpInterfaceExternalModel<AttnOpBufferization<OpTy>,
                                                     OpTy> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    // Inits are fully overwritten; only the inputs are read.
    return !cast<DestinationStyleOpInterface>(op).isDpsInit(&operand);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto dps = cast<DestinationStyleOpInterface>(op);
    SmallVector<Value> newOperands;
    SmallVector<Value> initBuffers;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<TensorType>(operand.get().getType())) {
        newOperands.push_back(operand.get());
        continue;
      }
      FailureOr<Value> buffer =
          getBuffer(rewriter, operand.get(), options, state);
      if (failed(buffer))
        return failure();
      newOperands.push_back(*buffer);
      if (dps.isDpsInit(&operand))
        initBuffers.push_back(*buffer);
    }
    rewriter.setInsertionPoint(op);
    OperationState newState(op->getLoc(), op->getName(), newOperands,
                            TypeRange{}, op->getAttrs());
    rewriter.create(newState);
    replaceOpWithBufferizedValues(rewriter, op, initBuffers);
    return success();
  }
};
} // namespace

void mlir::attn::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, AttnDialect *) {
    AttentionOp::attachInterface<AttnOpBufferization<AttentionOp>>(*ctx);
    AttentionGradOp::attachInterface<AttnOpBufferization<AttentionGradOp>>(
        *ctx);
  });
}
