//===- LaunchUtils.h - kernel arguments from memrefs ------------*- C++ -*-===//
//
// The host side of every launch the GPU lowering creates: device pointers and
// strides of memref operands, as the kernel ABIs take them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_LAUNCHUTILS_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_LAUNCHUTILS_H

#include "AttnDialect/Conversion/AttnToGPU/GPUTargetInfo.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {

/// Device pointer (aligned pointer + offset) of a memref, as a bare pointer
/// of type `ptrType`.
Value getDevicePointer(OpBuilder &b, Location loc, Value memref, Type ptrType);

/// The CUtensorMap (an `!llvm.array<16 x i64>` value) of a [B, H, S, D]
/// memref at `devicePtr` for ABI attn-fwd-v2, boxes of 64 columns by
/// `boxRows` rows, made on the host by the driver's cuTensorMapEncodeTiled
/// (declared in the module around `op`; TensorMapLaunch.cpp).
Value encodeTensorMap(OpBuilder &b, Location loc, Operation *op, Value memref,
                      Value devicePtr, int64_t boxRows);

/// The first `count` strides of a memref, as i64.
SmallVector<Value> getStrides(OpBuilder &b, Location loc, Value memref,
                              unsigned count);

/// The four strides of a bias memref with 0 on every dimension of size 1,
/// static or found at run time (it broadcasts).
SmallVector<Value> getBroadcastStrides(OpBuilder &b, Location loc, Value bias);

/// The trailing scalars of both kernel ABIs: scale, softcap (0: none),
/// window_left and window_right (-1 each unless the mask is a window),
/// written to `out[0..3]`.
template <typename OpT>
void getScalarArgs(OpBuilder &b, Location loc, OpT op,
                   MutableArrayRef<Value> out) {
  auto f32 = [&](float v) -> Value {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(v));
  };
  auto i32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };
  auto [left, right] = op.getMask() == MaskKind::SlidingWindow
                           ? op.getWindowBounds()
                           : std::pair<int64_t, int64_t>{-1, -1};
  out[0] = f32(op.getScaleValue());
  if (!op.hasStaticScale()) {
    // The default 1/sqrt(D) of a dynamic D, at run time.
    Value d = memref::DimOp::create(b, loc, op.getQuery(), 3);
    d = arith::IndexCastOp::create(b, loc, b.getI32Type(), d);
    d = arith::SIToFPOp::create(b, loc, b.getF32Type(), d);
    out[0] = arith::DivFOp::create(b, loc, f32(1.0f),
                                   math::SqrtOp::create(b, loc, d));
  }
  out[1] = f32(op.getSoftcap() ? op.getSoftcap()->convertToFloat() : 0.0f);
  out[2] = i32(left);
  out[3] = i32(right);
}

/// What KernelSpec the forward and the backward op share, read from a
/// memref-form op: element type, D (of `query`), Dv (of `value`) and the
/// tiles' padded head dims for the config's instruction on `target`'s chip,
/// mask, softcap, config and bias type. Fails with an error on `op` for tensor
/// operands (`query` or `output` not a memref), no config, a config assuming
/// less alignment than an element or a max_head_dim that does not fit the
/// op's head dims, a bias that is no strided memref, or an operand of `rows`
/// whose last dimension is not contiguous.
FailureOr<KernelSpec>
getSharedKernelSpec(Operation *op, Value query, Value value, Value output,
                    Value bias, std::optional<ConfigAttr> config, MaskKind mask,
                    bool softcap, ValueRange rows, const GPUTargetInfo &target);

/// Fails with an error on `op` when a kernel of `spec` needs more than the
/// target's `bytes` of shared memory.
LogicalResult checkSharedMemoryFits(Operation *op, const KernelSpec &spec,
                                    int64_t bytes, const GPUTargetInfo &target);

/// The gpu.module `name`, at the end of the builtin.module around `op`, that
/// holds the kernels of `op`'s spec: found, or created with the target's
/// attribute, filled by `build` (which returns the bundle metadata appended
/// to the module's attn.kernels). The module around becomes a
/// gpu.container_module. Fails with an error on `op`, before changing
/// anything, when no builtin.module is around it or `name` is a symbol that
/// is not a gpu.module with a kernel `kernel`.
FailureOr<gpu::GPUModuleOp>
getOrCreateKernelModule(PatternRewriter &rewriter, Operation *op,
                        StringRef name, StringRef kernel,
                        const GPUTargetInfo &target,
                        function_ref<DictionaryAttr(gpu::GPUModuleOp)> build);

/// Adds the attn.attention_grad pattern (LaunchAttentionGrad.cpp);
/// populateAttnToGPUConversionPatterns calls it.
void populateAttentionGradToGPUPattern(RewritePatternSet &patterns,
                                       const GPUTargetInfo &target);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_LAUNCHUTILS_H
