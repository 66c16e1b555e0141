//===- Constraints.h - checks a tile candidate must pass --------*- C++ -*-===//
//
// Each constraint is a small named function so that its formula can be
// unit-tested against hand-computed numbers (unittests/Target). A check
// returns std::nullopt when the candidate passes and the reason otherwise.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNDIALECT_TARGET_CONSTRAINTS_H
#define ATTNDIALECT_TARGET_CONSTRAINTS_H

#include "AttnDialect/Target/TileTable.h"
#include <optional>
#include <string>

namespace mlir {
namespace attn {

using CheckResult = std::optional<std::string>;

//===----------------------------------------------------------------------===//
// Formulas
//===----------------------------------------------------------------------===//

/// Swizzled shared tiles (wgmma's 128-byte swizzle) start on a 1024-byte
/// boundary: the swizzle pattern repeats every 8 rows of 128 bytes and the
/// matrix descriptors carry no base offset. The dynamic shared-memory base is
/// only 16-byte aligned, so a kernel reserves this much slack up front.
inline constexpr int64_t kSwizzleAlignBytes = 1024;
/// Bytes of one row of a 64-column chunk of the backward's dQ staging area:
/// 64 floats and 16 of padding.
inline constexpr int64_t kDqStageChunkBytes = 64 * 4 + 16;
/// Bytes of one 64 x 64 f32 unit of dQ where dq_accum is in blocks of 64
/// rows (usesBlockedDqAccum): a unit of the staging area, one bulk reduction.
inline constexpr int64_t kDqUnitBytes = 64 * 64 * 4;

/// The shared-memory (LDS) carving of a forward kernel: the Q tile (block_m
/// rows of D; `queryBuffers` of them), then `stages` K tiles (block_n rows
/// of D), then `stages` V tiles (block_n rows of Dv). Padded tiles pad every
/// row by `padElems` elements against bank conflicts; swizzled tiles are
/// dense and preceded by kSwizzleAlignBytes of alignment slack. The
/// constraint checks and the kernels' layout both come from here.
struct SharedMemoryLayout {
  /// Row strides, in elements.
  int64_t qRowStride = 0, kRowStride = 0, vRowStride = 0;
  /// Sizes, in bytes (qBytes: one Q buffer).
  int64_t qBytes = 0, kStageBytes = 0, vStageBytes = 0, alignSlack = 0;
  /// Q buffers: two where a tile loop's workgroup has the room, so that the
  /// producer loads the next tile's Q while the current tile still reads
  /// its own; K starts after them.
  int64_t queryBuffers = 1, kOffset = 0;
  /// The mbarriers of a warp-specialized ring (full, then empty, one 8-byte
  /// word per stage each) after the K/V stages, then (`valueBarriers`: K and
  /// V released apart) V's own full and empty per stage, then (`queryBarriers`,
  /// a tile loop) a full and an empty per Q buffer; 0 bytes without a ring.
  int64_t barrierOffset = 0, barrierBytes = 0;
  int64_t totalBytes = 0;
};
/// With `queryBarriers` and `smemMaxBytes` > 0, Q gets a second buffer when
/// the whole layout still fits in `smemMaxBytes`.
SharedMemoryLayout
getSharedMemoryLayout(int64_t blockM, int64_t blockN, int64_t stages,
                      int64_t elemBytes, int64_t headDim, int64_t headDimV,
                      int64_t padElems, bool swizzled,
                      bool ringBarriers = false, bool queryBarriers = false,
                      bool valueBarriers = false, int64_t smemMaxBytes = 0);

/// 32-bit registers per thread: the f32 score accumulator (rowsPerWarp x
/// block_n), the f32 output accumulator (rowsPerWarp x Dv) and the packed
/// 16-bit Q fragments (rowsPerWarp x D), spread over the warp's lanes, plus a
/// fixed overhead. For mma.m16n8k16 (16 rows, 32 lanes) this is
///   4 * (block_n / 8) + 4 * (Dv / 8) + 4 * (D / 16) + overhead.
/// Without `queryInRegisters` (a warp owning several instruction tiles of
/// rows re-reads Q from shared memory) the Q term is 0.
int64_t registerEstimate(int64_t rowsPerWarp, int64_t warpSize, int64_t blockN,
                         int64_t headDim, int64_t headDimV, int64_t overhead,
                         bool queryInRegisters = true);

/// The shared-memory (LDS) carving of a backward kernel, which keeps one key
/// block (block_n rows) for the whole workgroup and walks the query blocks
/// (block_m rows) that see it: K (block_n x D) and V (block_n x Dv), then Q
/// (block_m x D) and dO (block_m x Dv), `stages` buffers of each (the next
/// query block's load overlaps this one's products), then dS (block_m x
/// block_n, the score gradient handed from the dK to the dQ product), then
/// with `swizzled` per buffer the f32 lse and delta of the block's block_m
/// query rows. Every row is padded by `padElems`; offsets are in bytes,
/// strides in elements. With `swizzled` (operands read by matrix
/// descriptors, wgmma) K, V, Q and dO are 128-byte-swizzled panels without
/// padding, each 1024-byte aligned from a base rounded up within
/// `alignSlack` bytes, and so is dS (query rows x key columns, the A
/// operand of dQ = dS K).
struct BackwardSharedMemoryLayout {
  int64_t kRowStride = 0, vRowStride = 0, qRowStride = 0, doRowStride = 0,
          dsRowStride = 0;
  int64_t kOffset = 0, vOffset = 0, qOffset = 0, doOffset = 0, dsOffset = 0;
  /// Bytes of one Q and one dO buffer.
  int64_t qStageBytes = 0, doStageBytes = 0;
  /// Buffer s holds lse at rowStatsOffset + s * rowStatsStageBytes and
  /// delta block_m floats after it.
  int64_t rowStatsOffset = 0, rowStatsStageBytes = 0;
  /// Where dQ's f32 products wait for the bulk reductions into dq_accum
  /// (block_m rows of dqStageRowBytes, 64-column chunks each padded by 16
  /// bytes); dqStageRowBytes is 0 without (atomics from registers).
  int64_t dqStageOffset = 0, dqStageRowBytes = 0;
  /// With dqStageBlocked the staging area is the block's dQ in dq_accum's
  /// blocked layout (usesBlockedDqAccum): 64-column chunks of 64 x 64 f32,
  /// each added by one bulk reduction. With `sharedScores` there is no
  /// area (dqStageOffset unused): the units are staged in the Q/dO ring.
  bool dqStageBlocked = false;
  /// dS buffers (two with a producer warpgroup: one computing warpgroup may
  /// write block t + 1's while the other's dQ product still reads block
  /// t's; with sharedScores dS, P^T and dS^T, once each), dsStageBytes
  /// apart.
  int64_t dsBuffers = 1, dsStageBytes = 0;
  /// With `keyRowSums` (slices on warpgroups, dQ in the ring, the bias
  /// gradient summed over query rows in a deterministic plan): per Q/dO
  /// buffer each computing warpgroup's block_n sums of its dS^T columns,
  /// rowSumStageBytes apart from rowSumOffset, for the dQ writer; after them
  /// the writer's running sums (block_n floats).
  int64_t rowSumOffset = 0, rowSumStageBytes = 0;
  /// With a producer warpgroup: the full and then the empty mbarrier of
  /// each Q/dO buffer (8 bytes each); 0 without.
  int64_t barrierOffset = 0;
  int64_t alignSlack = 0;
  int64_t totalBytes = 0;
};
/// Whether a backward plan adds dQ by bulk reductions from shared memory
/// instead of atomics from registers: plans with dQ in main (not
/// `deterministic`) on swizzled tiles (`sharedOperands`, wgmma) with two or
/// more computing warpgroups (`computeWarps`: each stages its own chunk
/// while the other computes; with one, an H200 measured 0.73-0.81x the
/// atomics at D = 160-192, bench/RESULTS.md) and rows of dq_accum in
/// 16-byte pieces: D a multiple of 4, or any D with `slicesOnGroups`, whose
/// blocked rows are D rounded up to 64 (usesBlockedDqAccum). The kernel
/// (getBackwardStageLayout) and the tables (checkSharedMemory) both decide
/// by this.
inline bool usesBulkDq(bool sharedOperands, bool deterministic,
                       int64_t computeWarps, int64_t headDim,
                       bool slicesOnGroups = false) {
  return sharedOperands && !deterministic && computeWarps >= 8 &&
         (headDim % 4 == 0 || slicesOnGroups);
}

/// Whether a plan that stages dQ (usesBulkDq) keeps dq_accum in blocks of
/// 64 query rows (its rows rounded up to a multiple of 64, dim seqlen_q_64):
/// each block's 64-column chunks are 64 x 64 f32 units, contiguous, their
/// 16-byte pieces swizzled by row (BackwardWorkspace.h), so that a
/// warpgroup adds its chunk by one 16 KB bulk reduction instead of one a row
/// (the per-row reductions, 13% of the D = 128 main's stall samples on the
/// H100, bench/RESULTS.md). Query blocks of one warpgroup's 64 rows, and
/// whole chunks: D a multiple of 64 in one head slice, or any D in the
/// slices on warpgroups of one kernel (`slicesOnGroups`), whose units
/// cover D rounded up to 64 (the columns past D are added and never read:
/// dim head_dim_64).
inline bool usesBlockedDqAccum(int64_t headDim, int64_t headSplit,
                               int64_t blockM, bool slicesOnGroups = false) {
  return (slicesOnGroups || (headDim % 64 == 0 && headSplit <= 1)) &&
         blockM == 64;
}

/// `dqStageCols` (usesBulkDq: the dQ columns of one kernel) asks for dQ's
/// staging area where it fits in `smemMaxBytes`. `sharedScores`
/// (slicesOnWarpgroups): one dS buffer and the P^T and dS^T tiles the
/// computing warpgroups exchange, instead of a dS buffer each; with
/// `keyRowSums` also the areas of rowSumOffset.
BackwardSharedMemoryLayout getBackwardSharedMemoryLayout(
    int64_t blockM, int64_t blockN, int64_t stages, int64_t elemBytes,
    int64_t headDim, int64_t headDimV, int64_t padElems, bool swizzled = false,
    int64_t dqStageCols = 0, int64_t smemMaxBytes = 0,
    bool warpSpecialized = false, bool blockedDq = false,
    bool sharedScores = false, bool keyRowSums = false);

/// 32-bit registers per thread of a backward kernel: the f32 dK and dV
/// accumulators (rowsPerWarp key rows x D and Dv), the transposed scores
/// and their gradient (rowsPerWarp x block_m each), the packed K or V
/// operand of the product running, lse and delta of each query column a
/// lane holds, plus the fixed overhead. For mma.m16n8k16 (16 rows, 32
/// lanes): (D + Dv) / 2 + block_m + max(D, Dv) / 4 + block_m / 2 + overhead.
/// Against ptxas 13.0 on sm_90a: D = 64, block_m 64: 216 estimated, 254 used,
/// no spills; D = 128, block_m 32: 248 estimated, 4 bytes spilled;
/// D = 128, block_m 64: 296 estimated, 140 bytes spilled. With
/// `headSplit` slices the accumulators hold one slice's columns (the widest,
/// getHeadSlice with the instruction's `headDimMultiple`); the operand term
/// stops at 128 columns (D = 256, block_m 32, two slices: 248 estimated, 253
/// used, no spills). With `sharedOperands` (wgmma: both operands of every
/// product but P^T's and dS^T's from shared memory, lse and delta too) the
/// operand and column terms are 0: D = 64, block_m 64, 4 warps: 168
/// estimated, 172 used (210 with atomic dQ); D = 128: 232 estimated, 239
/// used (255 and 24 bytes spilled with atomic dQ), no spills; 254 since S
/// and dP are in flight together.
int64_t backwardRegisterEstimate(int64_t rowsPerWarp, int64_t warpSize,
                                 int64_t blockM, int64_t headDim,
                                 int64_t headDimV, int64_t overhead,
                                 int64_t headSplit, int64_t headDimMultiple,
                                 bool sharedOperands = false);
/// The same for a backward tile of `chip` on `instr` (its rows per warp,
/// head-dim multiple and operand source, the chip's warp size and register
/// overhead): what the tables check and the NVVM lowering caps registers by.
int64_t backwardRegisterEstimate(const ChipSpec &chip, const MatrixInstr &instr,
                                 int64_t blockM, int64_t headDim,
                                 int64_t headDimV, int64_t headSplit);

/// Columns [offset, offset + width) of slice `index` of a (padded) head dim
/// `tileDim` cut in `split` slices (head_split): each a multiple of
/// `multiple` (the matrix instruction's), the last taking what is left.
struct HeadSlice {
  int64_t offset, width;
};
HeadSlice getHeadSlice(int64_t tileDim, int64_t split, int64_t multiple,
                       int64_t index);

/// Matrix instructions one warp issues per key block for S = Q K^T.
int64_t mmaPerIteration(const MatrixInstr &instr, int64_t blockN,
                        int64_t headDim);

/// The head dims a kernel's tiles use: D rounded up to the instruction's
/// head_dim_multiple, Dv also to its N. The kernels zero-fill the columns
/// past the op's D and Dv in shared memory and never store them, so any
/// head dim lowers; the checks below size shared memory and registers, and
/// count instructions, with these.
int64_t getTileHeadDim(const MatrixInstr &instr, int64_t headDim);
int64_t getTileHeadDimV(const MatrixInstr &instr, int64_t headDimV);
/// The alignment (bytes) every row of a row-major matrix of `cols`
/// elements of `elemBytes` keeps when its base is 16-byte aligned and its
/// rows are contiguous: the largest power of two, at most 16, that divides
/// a row's bytes. The kernels' global loads and stores never cross a row
/// boundary wider than this, and a bundle's first variant for a head dim
/// assumes this much of q, k, v and o (its twin, the element size).
int64_t getRowAlignBytes(int64_t elemBytes, int64_t cols);

/// `problem` with its head dims padded for `instr`.
AttentionProblem getTiledProblem(const MatrixInstr &instr,
                                 const AttentionProblem &problem);

/// Smallest head-dim bucket of `buckets` (ascending or not) that holds
/// `headDim`, or nullopt.
std::optional<int64_t> headDimBucket(llvm::ArrayRef<int64_t> buckets,
                                     int64_t headDim);

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

CheckResult checkDirection(const TileCandidate &cand,
                           const AttentionProblem &problem);
CheckResult checkProfile(const Profile &profile, const TileCandidate &cand,
                         const AttentionProblem &problem);
/// Per-chip dispatch condition (`only_on`).
CheckResult checkDispatch(const ChipSpec &chip, const TileCandidate &cand);
/// A size-hinted candidate (seqlen_min) needs Sq and Sk (static, or the
/// problem's size hint where dynamic) of at least its hint.
CheckResult checkSizeHint(const TileCandidate &cand,
                          const AttentionProblem &problem);
CheckResult checkMask(const TileCandidate &cand,
                      const AttentionProblem &problem);
/// The backend for the chip's vendor lowers the candidate's pipeline.
CheckResult checkImplemented(const ChipSpec &chip, const TileCandidate &cand);
CheckResult checkElementType(const ChipSpec &chip, const TileCandidate &cand,
                             const MatrixInstr &instr, ElementType type);
/// The chip has what the pipeline needs, with a stage count it allows.
CheckResult checkPipeline(const ChipSpec &chip, const TileCandidate &cand);
/// D and Dv: positive, and once padded (getTileHeadDim) within the chip's,
/// the instruction's and the candidate's maximum.
CheckResult checkHeadDim(const ChipSpec &chip, const TileCandidate &cand,
                         const MatrixInstr &instr, int64_t headDim,
                         int64_t headDimV);
/// block_m == rowsPerWarp * warps, block_n a multiple of (and one of the
/// allowed values of) the instruction, enough instructions per iteration.
CheckResult checkMmaDivisibility(const TileCandidate &cand,
                                 const MatrixInstr &instr, int64_t headDim);
/// The backward kernel's tile rules: a warp owns the instruction's
/// rows_per_warp key rows (block_n = rows_per_warp x warps), block_m is a
/// score width the instruction allows and a whole number of row tiles (the
/// dQ product gives each warp 16 query rows at a time), one or two stages
/// (Q and dO buffers), and the instruction reads its operands from
/// registers.
CheckResult checkBackwardTile(const TileCandidate &cand,
                              const MatrixInstr &instr);
/// The tile rules of the kernel `cand` is for: checkBackwardTile for a
/// backward candidate of a GPU chip, checkMmaDivisibility otherwise (the
/// host lowers its backward with the forward's loop nest and tiles).
CheckResult checkTileShape(const ChipSpec &chip, const TileCandidate &cand,
                           const MatrixInstr &instr, int64_t headDim);
/// A backward tile with slicesOnWarpgroups: the last head_split slice of
/// the tiled D and Dv (headDim, headDimV) is at most one head-dim step
/// narrower than the others (every warpgroup computes slice 0's width).
CheckResult checkHeadSlices(const TileCandidate &cand, const MatrixInstr &instr,
                            int64_t headDim, int64_t headDimV);
CheckResult checkThreads(const ChipSpec &chip, const TileCandidate &cand);
CheckResult checkSharedMemory(const ChipSpec &chip, const TileCandidate &cand,
                              const MatrixInstr &instr,
                              const AttentionProblem &problem, int64_t &bytes);
CheckResult checkRegisters(const ChipSpec &chip, const TileCandidate &cand,
                           const MatrixInstr &instr,
                           const AttentionProblem &problem, int64_t &regs);
/// Aligned variants need static sequence lengths that are multiples of the
/// block sizes.
/// Warp-specialized pipelines serve dense layouts only; a decode tile
/// (kv_cache_seqlen_q_max) KV-cache calls of a static Sq up to its bound.
CheckResult checkLayout(const TileCandidate &cand,
                        const AttentionProblem &problem);
CheckResult checkAlignment(const TileCandidate &cand,
                           const AttentionProblem &problem);
/// Query rows the deterministic backward's dQ pass owns per workgroup: the
/// instruction's rows per warp (16 without a rule), every warp.
int64_t getDeterministicQueryRows(const MatrixInstr &instr, int64_t warps);
/// A deterministic backward plan keeps those rows in the Q and dO buffers
/// of block_m x stages rows, or orders dQ (checkOrderedDq).
CheckResult checkDeterministic(const TileCandidate &cand,
                               const MatrixInstr &instr,
                               const AttentionProblem &problem);
/// A deterministic plan of a producer-warpgroup tile (usesOrderedDq): its
/// main adds whole 64 x 64 units of dQ, one per computing warpgroup (or
/// the slices' on the warpgroups), a block's from its last key block down.
CheckResult checkOrderedDq(const TileCandidate &cand, const MatrixInstr &instr,
                           const AttentionProblem &problem);
CheckResult checkBias(const TileCandidate &cand,
                      const AttentionProblem &problem);

/// The table's rules for a config a GPU lowering is handed (selected, forced
/// or written by hand): the chip lists its instruction, and the head dims,
/// the tile and the threads follow that instruction's entry (checkHeadDim,
/// checkMmaDivisibility without the MMA-count rule, checkThreads). The
/// lowerings add only what their own implementation cannot do.
/// A backward config follows checkBackwardTile instead of
/// checkMmaDivisibility.
/// The tile a config names, as a candidate for the checks (its shape,
/// pipeline, instruction and head_split; no dtypes, head-dim bucket or
/// dispatch conditions).
TileCandidate getConfigCandidate(ConfigAttr config);
CheckResult checkConfig(const ChipSpec &chip, ConfigAttr config,
                        int64_t headDim, int64_t headDimV,
                        Direction direction = Direction::Forward);

} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_TARGET_CONSTRAINTS_H
