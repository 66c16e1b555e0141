//===- KernelABI.h - the attn-fwd-v1 and attn-bwd-v1 ABIs ------*- C++ -*-===//
//
// The argument lists every forward kernel and every stage of a backward plan
// take (docs/BundleFormat.md), shared by the NVIDIA and AMD lowerings so the
// runtime launches any variant or plan alike.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNDIALECT_CONVERSION_ATTNTOGPU_KERNELABI_H
#define ATTNDIALECT_CONVERSION_ATTNTOGPU_KERNELABI_H

#include "AttnDialect/IR/AttnAttrs.h"
#include "AttnDialect/Target/TileTable.h"
#include "mlir/IR/BuiltinTypes.h"
#include <string>

namespace mlir {
namespace attn {

/// Positions of the attn-fwd-v1 kernel arguments.
enum KernelArg : unsigned {
  kArgQ = 0,
  kArgK,
  kArgV,
  kArgO,
  kArgLse,
  kArgBias,
  kArgBatch,
  kArgHeadsQ,
  kArgHeadsKV,
  kArgSeqQ,
  kArgSeqK,
  kArgQStrideB, // q, k, v, o: (b, h, s) strides in elements
  kArgKStrideB = kArgQStrideB + 3,
  kArgVStrideB = kArgKStrideB + 3,
  kArgOStrideB = kArgVStrideB + 3,
  kArgLseStrideB = kArgOStrideB + 3,    // lse: (b, h)
  kArgBiasStrideB = kArgLseStrideB + 2, // bias: (b, h, q, k)
  kArgScale = kArgBiasStrideB + 4,
  kArgSoftcap,
  kArgWindowLeft,
  kArgWindowRight,
  kNumKernelArgs,
  // Kernels of the serving forms (SeqLayout other than dense) take nine
  // more: the i32 arrays cu_seqlens_q/k ([B + 1]), seqlens_k ([B]) and
  // block_table ([B, P]; null unless paged), the block table's row stride
  // (elements), page_size and num_pages (0 unless paged), then the split-KV
  // workspace and the number of splits (KV caches; 1 and null otherwise).
  kArgCuSeqlensQ = kNumKernelArgs,
  kArgCuSeqlensK,
  kArgSeqlensK,
  kArgBlockTable,
  kArgBlockTableStride,
  kArgPageSize,
  kArgNumPages,
  kArgWorkspace,
  kArgNumSplits,
  kNumServingKernelArgs,
  // Dense kernels for dynamic head dims (a config's max_head_dim) take two
  // more instead: D and Dv (i32).
  kArgHeadDim = kNumKernelArgs,
  kArgHeadDimV,
  kNumAnyHeadDimKernelArgs,
  // Dense kernels with dropout take D and Dv (used only when dynamic) and
  // then dropout_p (f32), the seed (i64) and the offset (i32).
  kArgDropoutP = kNumAnyHeadDimKernelArgs,
  kArgDropoutSeed,
  kArgDropoutOffset,
  kNumDropoutKernelArgs
};
static_assert(kNumKernelArgs == 33, "attn-fwd-v1 has 33 arguments");
static_assert(kNumServingKernelArgs == 42, "serving kernels have 42");
static_assert(kNumAnyHeadDimKernelArgs == 35, "any-D kernels have 35");
static_assert(kNumDropoutKernelArgs == 38, "dropout kernels have 38");

/// ABI attn-fwd-v2: kernels whose producer loads tiles by TMA (pipeline
/// tma_ws) take, after their attn-fwd-v1 arguments, the tensor maps of q, k
/// and v by value (CUtensorMap: 128 bytes, 64-byte aligned; the runtime
/// encodes them per call). In the gpu.func and on gpu.launch_func each is an
/// `!llvm.array<16 x i64>` value (getTensorMapType) that the kernel stores
/// to a stack slot and addresses there; after the conversion to the NVVM
/// dialect attn-nvvm-tensor-map-args makes it a byval grid constant read in
/// place.
inline constexpr unsigned kNumTensorMaps = 3;
inline constexpr int64_t kTensorMapBytes = 128;
inline constexpr int64_t kTensorMapAlign = 64;
/// The columns of one TMA box: one 128-byte swizzled panel of 16-bit
/// elements.
inline constexpr int64_t kTensorMapBoxCols = 64;
/// `!llvm.array<16 x i64>`: a tensor map passed by value.
Type getTensorMapType(MLIRContext *ctx);

/// Positions of the attn-bwd-v1 kernel arguments: every stage of a backward
/// plan takes all of them.
enum BackwardKernelArg : unsigned {
  kBwdQ = 0,
  kBwdK,
  kBwdV,
  kBwdO,
  kBwdDO,
  kBwdLse,
  kBwdBias,
  kBwdDQ,
  kBwdDK,
  kBwdDV,
  kBwdDBias,
  kBwdWorkspace,
  kBwdBatch,
  kBwdHeadsQ,
  kBwdHeadsKV,
  kBwdSeqQ,
  kBwdSeqK,
  kBwdQStrideB, // q, k, v, o, do, dq, dk, dv: (b, h, s) strides in elements
  kBwdKStrideB = kBwdQStrideB + 3,
  kBwdVStrideB = kBwdKStrideB + 3,
  kBwdOStrideB = kBwdVStrideB + 3,
  kBwdDOStrideB = kBwdOStrideB + 3,
  kBwdDQStrideB = kBwdDOStrideB + 3,
  kBwdDKStrideB = kBwdDQStrideB + 3,
  kBwdDVStrideB = kBwdDKStrideB + 3,
  kBwdLseStrideB = kBwdDVStrideB + 3,     // lse: (b, h)
  kBwdBiasStrideB = kBwdLseStrideB + 2,   // bias: (b, h, q, k)
  kBwdDBiasStrideB = kBwdBiasStrideB + 4, // dbias: (b, h, q, k)
  kBwdScale = kBwdDBiasStrideB + 4,
  kBwdSoftcap,
  kBwdWindowLeft,
  kBwdWindowRight,
  kNumBackwardKernelArgs,
  // The stages of a plan with dropout take three more: dropout_p (f32), the
  // seed (i64) and the offset (i32).
  kBwdDropoutP = kNumBackwardKernelArgs,
  kBwdDropoutSeed,
  kBwdDropoutOffset,
  kNumDropoutBackwardKernelArgs
};
static_assert(kNumBackwardKernelArgs == 55, "attn-bwd-v1 has 55 arguments");
static_assert(kNumDropoutBackwardKernelArgs == 58,
              "attn-bwd-v1 with dropout has 58");

/// Workspace buffers (a backward plan's, split-KV's partial results) start
/// at multiples of this many bytes; the runtime sizes workspaces the same
/// way (runtime/lib/Dispatch.h).
inline constexpr int64_t kWorkspaceAlignment = 256;

/// What one compiled kernel computes; two ops with equal specs share a
/// kernel. Heads, batch and sequence lengths are kernel arguments.
struct KernelSpec {
  Type elemType;
  /// The op's D and Dv; ShapedType::kDynamic when the kernel takes them as
  /// arguments (up to the config's max_head_dim).
  int64_t headDim = 0;
  int64_t headDimV = 0;
  /// D and Dv of the kernel's tiles: the op's, padded to the matrix
  /// instruction (getTileHeadDim). Columns past headDim and headDimV are
  /// zero-filled in shared memory and never stored.
  int64_t tileHeadDim = 0;
  int64_t tileHeadDimV = 0;
  MaskKind mask = MaskKind::None;
  bool softcap = false;
  /// Element type of the additive bias (elemType or f32); null without one.
  Type biasType;
  /// Backward plans: the element type of the bias gradient the plan writes
  /// (grad_bias); null when it computes none.
  Type dbiasType;
  /// Backward plans without atomics (bit-reproducible): dQ by a pass over
  /// query blocks (`_main_q`) instead of atomic adds from `_main`.
  bool deterministic = false;
  /// A deterministic plan whose main adds dQ in key-block order
  /// (usesOrderedDq): no `_main_q`.
  bool orderedDq() const {
    return usesOrderedDq(deterministic, config.getPipeline());
  }
  /// Whether `_main` computes dQ (by atomics or ordered reductions).
  bool dqInMain() const { return !deterministic || orderedDq(); }
  /// The kernels of a backward plan (attn.attention_grad), not a forward.
  bool backward = false;
  ConfigAttr config;
  /// Where the sequences live (attn.attention's serving operands).
  SeqLayout layout = SeqLayout::Dense;
  /// Dropout (dense layouts): probabilities kept by the Philox mask of
  /// AttnDialect/Utils/Dropout.h; p, seed and offset are arguments.
  bool dropout = false;

  /// KV-cache kernels may split the keys over several workgroups (split-KV,
  /// FlashDecoding): then each writes a partial output and LSE to the
  /// workspace and the `_combine` kernel merges them.
  bool splitKV() const {
    return layout == SeqLayout::KVCache || layout == SeqLayout::Paged;
  }
  /// KV-cache kernels also pack the query heads of a GQA group into the
  /// tile's rows (row r is query r / G of head r % G of the group), so that
  /// each key/value head is read once per query block rather than G times
  /// (FlashAttention's PackGQA): one workgroup per (row block, key/value
  /// head, batch).
  bool packGQA() const { return splitKV(); }

  /// Whether D or Dv is a kernel argument (ABI: kArgHeadDim, kArgHeadDimV).
  bool dynamicHeadDim() const {
    return ShapedType::isDynamic(headDim) || ShapedType::isDynamic(headDimV);
  }
  /// The largest D and Dv the kernel serves: the op's, or max_head_dim.
  int64_t maxHeadDim() const {
    return ShapedType::isDynamic(headDim) ? config.getMaxHeadDim() : headDim;
  }
  int64_t maxHeadDimV() const {
    return ShapedType::isDynamic(headDimV) ? config.getMaxHeadDim() : headDimV;
  }

  /// Whether the kernel takes tensor maps (ABI attn-fwd-v2).
  bool tensorMaps() const {
    return config.getPipeline() == PipelineKind::TmaWarpSpecialized;
  }
  /// Whether its workgroups walk several tiles, Q with mbarriers of its own
  /// (a persistent grid, or a packed sequence's row blocks by TMA).
  bool walksTiles() const {
    return attn::walksTiles(config.getPipeline(), config.getPersistent(),
                            layout == SeqLayout::Varlen);
  }

  int64_t blockM() const { return config.getBlockM(); }
  int64_t blockN() const { return config.getBlockN(); }
  int64_t warps() const { return config.getWarps(); }
  int64_t stages() const { return config.getStages(); }
};

/// "f16", "bf16" or "f32".
std::string getDTypeName(Type elemType);

/// The bundle name of a mask kind ("none", "causal", ...).
std::string getMaskName(MaskKind kind);

/// The bundle name of the spec's bias: "none", "same" (q's element type) or
/// "f32".
std::string getBiasName(const KernelSpec &spec);

/// Deterministic kernel name from the problem and the config, e.g.
/// fwd_bf16_d128_causal_m64n64w4s2 (`dmax64` for a head dim given at run
/// time, up to 64; Dv is spelled out only when != D;
/// `_softcap`, `_bias` or `_biasf32`, `_dbias` (a plan computing the bias
/// gradient), `_det` (a deterministic plan), then `_dropout`, follow the
/// mask when present, then
/// `_varlen`, `_kvcache` or `_paged` for a serving layout; `ws` ends the
/// tile of a warp-specialized pipeline (`tma` when it copies by TMA),
/// `_align<N>` follows the tile when the config assumes less than 16-byte
/// alignment).
std::string getKernelName(const KernelSpec &spec);

/// The backward plan's name: the kernel name with `bwd_` for `fwd_`, and
/// `h<N>` for a head_split of N > 1; its stage kernels append `_pre`,
/// `_main` (`_main_<s>` for the other slices) and `_dq`.
std::string getBackwardPlanName(const KernelSpec &spec);

/// How many arguments a forward kernel takes: attn-fwd-v1's 33, with the
/// nine of a serving layout, the two of a dense kernel for dynamic head dims,
/// or the five (those two and three) of a dense kernel with dropout; with
/// `tensorMaps` (attn-fwd-v2) three more at the end.
unsigned getNumKernelArgs(SeqLayout layout, bool dynamicHeadDim,
                          bool dropout = false, bool tensorMaps = false);

/// The kernel's function type: pointers are `!llvm.ptr<globalAddrSpace>`
/// (bare device pointers), then i32 / i64 / f32 scalars as in the ABI table;
/// a serving layout appends its nine arguments, a dense kernel for dynamic
/// head dims its two, a dense kernel with dropout its five, and a kernel
/// with `tensorMaps` its three tensor maps (getTensorMapType).
FunctionType getKernelFunctionType(MLIRContext *ctx, unsigned globalAddrSpace,
                                   SeqLayout layout = SeqLayout::Dense,
                                   bool dynamicHeadDim = false,
                                   bool dropout = false,
                                   bool tensorMaps = false);

/// The same for attn-bwd-v1 (three more arguments with dropout).
FunctionType getBackwardKernelFunctionType(MLIRContext *ctx,
                                           unsigned globalAddrSpace,
                                           bool dropout = false);

} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_CONVERSION_ATTNTOGPU_KERNELABI_H
