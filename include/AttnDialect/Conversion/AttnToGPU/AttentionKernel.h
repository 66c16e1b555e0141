//===- AttentionKernel.h - target-independent attention kernel --*- C++ -*-===//
//
// Builds the gpu.func kernel of the attn-fwd-v1 ABI for a memref-form,
// configured attn.attention, using a GPUTargetInfo for the per-target parts.
// The pattern of AttnToGPU.h builds it and the launch; convert-attn-to-nvvm
// and convert-attn-to-rocdl are thin drivers over that pattern.
//
// The kernel is FlashAttention-2's forward pass: one workgroup per
// (query block, head, batch); each warp owns getRowsPerWarp() query rows,
// holds its O accumulator (and, where the emitter wants them, its Q
// fragments) in registers, walks the visible key blocks (MaskUtils) with K/V
// tiles staged through shared memory (`stages` buffers, padded or swizzled
// as the emitter reads them), and keeps the online softmax (running max and
// sum in the exp2 domain) per row slot of the accumulator layout. Emitters
// whose O += P V completes asynchronously (wgmma) get a loop that reuses a
// K/V buffer only after the next S = Q K^T and a barrier.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNDIALECT_CONVERSION_ATTNTOGPU_ATTENTIONKERNEL_H
#define ATTNDIALECT_CONVERSION_ATTNTOGPU_ATTENTIONKERNEL_H

#include "AttnDialect/Conversion/AttnToGPU/GPUTargetInfo.h"
#include "AttnDialect/IR/AttnOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace attn {

/// Name of the top-module attribute listing the metadata of every kernel
/// (one dictionary per kernel, bundle.json's variant fields), in the order
/// the kernels were created. attn-write-bundle reads it.
inline constexpr StringLiteral kKernelsAttrName = "attn.kernels";

/// The spec of `op`, or failure with a diagnostic on `op` naming what is
/// missing or unsupported (tensor form, no config, bias, element type...).
FailureOr<KernelSpec> getKernelSpec(AttentionOp op,
                                    const GPUTargetInfo &target);

/// Bytes of dynamic shared memory the kernel of `spec` uses.
int64_t getDynamicSharedMemoryBytes(const KernelSpec &spec,
                                    const GPUTargetInfo &target);

/// Emits the kernel `name` for `spec` into `gpuModule`.
gpu::GPUFuncOp buildAttentionKernel(OpBuilder &b, Location loc,
                                    gpu::GPUModuleOp gpuModule, StringRef name,
                                    const KernelSpec &spec,
                                    const GPUTargetInfo &target);

/// Threads of a split-KV combine workgroup (one query row each): 8 per
/// column group of a Dv = 128 row, so that 128 splits are two rounds of
/// eight loads a thread (512 threads, one round, held one workgroup an SM
/// and ran B = 64 rows 1.5x slower; bench/RESULTS.md).
inline constexpr int32_t kCombineThreads = 256;

/// Emits `name`, the kernel that merges the partial outputs of a split-KV
/// kernel of `spec` (spec.splitKV()) into the output and lse; it takes the
/// same arguments, and runs on a grid of (Sq, Hq, B) (CombineKernel.cpp).
gpu::GPUFuncOp buildSplitCombineKernel(OpBuilder &b, Location loc,
                                       gpu::GPUModuleOp gpuModule,
                                       StringRef name, const KernelSpec &spec,
                                       const GPUTargetInfo &target);

/// Whether the combine kernel of `spec` may start while its split kernel
/// runs (programmatic dependent launch): the split kernel then lets it
/// start right away, and it waits for the split kernel's writes before its
/// first read of the workspace. The bundle says so
/// (combine_programmatic_launch), so the runtime launches it early.
inline bool usesDependentLaunch(const KernelSpec &spec,
                                const GPUTargetInfo &target) {
  return spec.splitKV() && target.hasDependentLaunch();
}

} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_CONVERSION_ATTNTOGPU_ATTENTIONKERNEL_H
