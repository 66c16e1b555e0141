//===- Dispatch.h - Check a call and pick the variant or plan to launch ---===//
//
// Pure host logic, shared by the CUDA and HIP backends and testable without a
// GPU: argument validation, then xformers-style dispatch (the first variant or
// plan whose fields match and whose conditions hold), and for plans the sizes
// their grids and workspace are written in.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_DISPATCH_H
#define ATTN_RUNTIME_DISPATCH_H

#include "Bundle.h"

#include <array>

namespace attn {

/// validates the call (ATTN_STATUS_INVALID_ARGUMENT naming the argument),
/// then picks the first matching variant; ATTN_STATUS_NO_VARIANT lists, per
/// variant, why it was passed over.
///
/// With `forced` (a variant name, as attn_bundle_force_variant or
/// ATTN_FORCE_VARIANT give it) only that variant is considered: a name the
/// bundle lacks, or a variant that does not match the call, is
/// ATTN_STATUS_NO_VARIANT saying so, never a launch of the wrong kernel.
/// `skipped`, when given, receives why each earlier variant was passed over
/// (the dispatch log). With `device`, a variant whose chip or shared memory
/// the device cannot run is passed over too (the next one may fit); when
/// only such variants fit the call, ATTN_STATUS_UNSUPPORTED_GPU says why.
Status selectVariant(const BundleInfo &bundle, const attn_fwd_params &params,
                     int &index, const std::string &forced = "",
                     std::string *skipped = nullptr,
                     const DeviceInfo *device = nullptr);

/// The grid of a forward call's (first) kernel on variant `v`: x over row
/// blocks, y over heads (z is batch times splits).
int64_t forwardGridX(const Variant &v, const attn_fwd_params &params);
int64_t forwardGridY(const Variant &v, const attn_fwd_params &params);

/// Row blocks of its sequence each workgroup of a packed-batch tile loop
/// (`tensor_maps`, varlen, head dims up to kPackedPairMaxHeadDim) walks: 2
/// when every sequence has max_seqlen_q rows and half the grid still makes
/// kPackedPairMinWaves waves on `multiprocessors`, so that a workgroup's
/// producer loads its second tile's Q and K/V while the first one's
/// outputs are stored; else 1. Any count is correct (the kernel takes
/// blocks x, x + gridDim.x, ...).
inline constexpr int64_t kPackedPairMinWaves = 4;
inline constexpr int kPackedPairMaxHeadDim = 128;
int packedRowBlocksPerWorkgroup(const Variant &v, const attn_fwd_params &params,
                                int multiprocessors);

/// Split-KV: how many splits `params` (num_splits, or 0: chosen from the
/// grid and `multiprocessors`) gets on variant `v` (1 when it cannot split),
/// and the workspace bytes that needs.
int chooseSplits(const Variant &v, const attn_fwd_params &params,
                 int multiprocessors);
size_t splitWorkspaceBytes(const attn_fwd_params &params, int splits);
/// Checks the caller's workspace for a split call needing `bytes`.
Status checkSplitWorkspace(const attn_fwd_params &params, size_t bytes);

/// The same for a backward call and the bundle's plans. A deterministic call
/// takes only deterministic plans; another prefers the first matching plan
/// that is not and falls back to the first deterministic one. The workspace
/// is not checked here (see checkWorkspace).
Status selectPlan(const BundleInfo &bundle, const attn_bwd_params &params,
                  int &index, const DeviceInfo *device = nullptr);

/// The value of every Dim symbol for a valid backward call.
using DimValues = std::array<int64_t, kNumDims>;
DimValues dimValues(const attn_bwd_params &params);

/// The grid extent `e` stands for: ceil(dim / block), or its constant.
int64_t extentValue(const Extent &e, const DimValues &dims);

/// The bytes of `plan`'s workspace: its buffers in order, each starting at a
/// multiple of kWorkspaceAlignment (the compiler's, KernelABI.h, is the same).
constexpr size_t kWorkspaceAlignment = 256;
Status workspaceSize(const Plan &plan, const DimValues &dims, size_t &bytes);

/// The workspace of a valid call needing `bytes` for `plan`: present, large
/// enough, aligned, and overlapping no tensor of the call.
Status checkWorkspace(const Plan &plan, const attn_bwd_params &params,
                      size_t bytes);

} // namespace attn

#endif // ATTN_RUNTIME_DISPATCH_H
