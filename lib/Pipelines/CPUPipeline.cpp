//===- CPUPipeline.cpp - the attn-to-cpu pipeline ---------------*- C++ -*-===//
//
// attn.attention -> host config -> buffers -> FlashAttention-2 loop nest ->
// LLVM dialect for the host. The grid runs as sequential loops; the inner
// loops stay vectors over the head dimension and the key block, which LLVM
// maps onto the host's SIMD width.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Pipelines/Pipelines.h"
#include "AttnDialect/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::attn;

void attn::buildAttnToCPUPipeline(OpPassManager &pm,
                                  const AttnToCPUPipelineOptions &options) {
  pm.addPass(createAttnSelectConfigPass({"host"}));

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // Callers pass plain row-major buffers; identity layouts keep the function
  // ABI simple and the row reads contiguous.
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());

  AttnTilePassOptions tile;
  tile.kvSplits = options.kvSplits;
  pm.addPass(createAttnTilePass(tile));
  // Host: the grid becomes sequential loops around each grid point. The
  // per-point scratch (static sizes) is then hoisted out of the loops:
  // allocas left in a loop body would grow the stack once per grid point.
  pm.addPass(createForallToForLoopPass());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferLoopHoistingPass());
  pm.addPass(createCSEPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // ceildivui and friends have no direct LLVM lowering. bf16 conversions
  // become integer arithmetic: LLVM's x86 fptrunc to bfloat calls
  // __truncsfbf2, which Debian 12's libgcc (GCC 12) does not have.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));

  ConvertVectorToLLVMPassOptions vectorOptions;
  // Dot products and row sums are tree reductions, not sequential chains.
  vectorOptions.reassociateFPReductions = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorOptions));
  pm.addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (tanh of softcap) becomes a libm call.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}
