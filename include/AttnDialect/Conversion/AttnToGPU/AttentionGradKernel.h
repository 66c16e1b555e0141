//===- AttentionGradKernel.h - the kernels of a backward plan ---*- C++ -*-===//
//
// Builds the three stage kernels (ABI attn-bwd-v1, docs/BundleFormat.md) of
// the backward plan of a memref-form, configured attn.attention_grad:
//
//  * pre:  delta = rowsum(dO * O) (f32) into the workspace, and dq_accum
//          zeroed; one warp per query row.
//  * main: FlashAttention-2's backward. One workgroup per (key block,
//          key/value head, batch); each warp owns rows_per_warp key rows and
//          keeps their dK and dV in registers while the query blocks that
//          see the key block stream through shared memory, for every query
//          head of the group (GQA sums in registers). Per query block:
//          S^T = K Q^T, P^T = exp(S^T - lse), dV += P^T dO, dP^T = V dO^T,
//          dS^T = P^T (dP^T - delta), dK += dS^T Q; dS goes through shared
//          memory to dQ = dS K, which is added to dq_accum (f32) atomically.
//          Every product is one of the forward's MmaEmitter products on
//          transposed roles, so each target's matrix instructions serve it.
//  * dq:   dq = dq_accum in the input type; one warp per query row.
//
// The workspace holds delta f32 [B, Hq, Sq], then dq_accum f32
// [B, Hq, Sq, D] at the next multiple of 256 bytes; the kernels compute the
// offsets from their arguments.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNDIALECT_CONVERSION_ATTNTOGPU_ATTENTIONGRADKERNEL_H
#define ATTNDIALECT_CONVERSION_ATTNTOGPU_ATTENTIONGRADKERNEL_H

#include "AttnDialect/Conversion/AttnToGPU/GPUTargetInfo.h"
#include "AttnDialect/IR/AttnOps.h"
#include "AttnDialect/Target/Constraints.h"

namespace mlir {
namespace attn {

/// Warps (query rows) per workgroup of the pre and dq stages.
inline constexpr int64_t kBackwardRowWarps = 4;
/// Threads of the bias-gradient stages: one per row of dbias_accum.
inline constexpr int64_t kBiasStageThreads = 128;
/// reduce_dbias: key columns per workgroup, and the threads that share each
/// column's sums (kReduceColumns x kReduceShares threads).
inline constexpr int64_t kReduceColumns = 32;
inline constexpr int64_t kReduceShares = 8;

/// The spec of `op` (the bias type included), or failure with a diagnostic
/// on `op` naming what the GPU backward does not lower.
FailureOr<KernelSpec> getBackwardKernelSpec(AttentionGradOp op,
                                            const GPUTargetInfo &target);

/// Bytes of dynamic shared memory the main kernel of `spec` uses.
int64_t getBackwardSharedMemoryBytes(const KernelSpec &spec,
                                     const GPUTargetInfo &target);

/// Whether `spec`'s plan keeps dq_accum in blocks of 64 query rows
/// (BackwardSharedMemoryLayout::dqStageBlocked).
bool usesBlockedDqAccum(const KernelSpec &spec, const GPUTargetInfo &target);

/// The plan's stage kernels, in launch order.
struct BackwardKernels {
  gpu::GPUFuncOp pre, main, dq;
  /// With the bias gradient: zero dbias_accum, and dbias = dbias_accum
  /// (both do nothing when dbias is summed over no dimension: main then
  /// writes it directly). Deterministic plans: no zeroDbias; convertDbias
  /// sums dbias_full in a fixed order (reduce_dbias; only row 0 when dbias
  /// is summed over query rows, which main then sums itself).
  gpu::GPUFuncOp zeroDbias, convertDbias;
  /// Deterministic plans: dQ by a pass over query blocks (no dq_accum, no
  /// convert_dq).
  gpu::GPUFuncOp mainQ;
  /// With head_split > 1: the main kernels of slices 1.. (`_main_<s>`),
  /// launched after `main` (slice 0) on the same grid.
  SmallVector<gpu::GPUFuncOp> mainSlices;
};

/// Columns of slice `slice` of a (padded) head dim `tileDim` of `spec`'s
/// head_split (getHeadSlice with the instruction's head-dim multiple).
HeadSlice getBackwardHeadSlice(const KernelSpec &spec,
                               const GPUTargetInfo &target, int64_t tileDim,
                               int64_t slice);

/// Main kernels of `spec`'s plan: one per head_split slice, or one for all
/// where each computing warpgroup computes a slice (slicesOnWarpgroups).
inline int64_t getMainKernelCount(const KernelSpec &spec) {
  int64_t split = spec.config.getHeadSplit();
  return slicesOnWarpgroups(spec.config.getPipeline(), split) ? 1 : split;
}

/// Query rows of one workgroup of a deterministic plan's `_main_q`: the
/// rows per warp of the backward's matrix instruction times its warps.
int64_t getDeterministicQueryRows(const KernelSpec &spec,
                                  const GPUTargetInfo &target);

/// Whether a deterministic plan's `_main_q` computes delta = rowsum(dO * O)
/// of its rows itself (and writes it for `_main`, which then runs after
/// it): the plan has no `_pre` stage, one pass over O and dO fewer. Plans
/// with a bias gradient keep `_pre`, which also zeroes dbias_full.
inline bool queryPassComputesDelta(const KernelSpec &spec) {
  return !spec.dqInMain() && !spec.dbiasType;
}

/// Emits the kernels `<planName>_pre` (unless queryPassComputesDelta),
/// `_main` and `_dq` (deterministic: `_main_q`), and with the bias gradient
/// `_zero_dbias` (atomic plans) and
/// `_dbias`, into `gpuModule`.
BackwardKernels buildBackwardKernels(OpBuilder &b, Location loc,
                                     gpu::GPUModuleOp gpuModule,
                                     StringRef planName, const KernelSpec &spec,
                                     const GPUTargetInfo &target);

} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_CONVERSION_ATTNTOGPU_ATTENTIONGRADKERNEL_H
