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

/// Shared memory (LDS) bytes of a forward kernel: `stages` buffers of a K
/// tile and a V tile (block_n rows of D and Dv elements) plus the Q tile
/// (block_m rows of D), every row padded by `padElems` elements against bank
/// conflicts:
///   stages * block_n * (D + Dv + 2 * pad) * bytes + block_m * (D + pad) *
///   bytes
int64_t smemBytes(int64_t blockM, int64_t blockN, int64_t stages,
                  int64_t elemBytes, int64_t headDim, int64_t headDimV,
                  int64_t padElems);

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

/// Matrix instructions one warp issues per key block for S = Q K^T.
int64_t mmaPerIteration(const MatrixInstr &instr, int64_t blockN,
                        int64_t headDim);

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
CheckResult checkMask(const TileCandidate &cand,
                      const AttentionProblem &problem);
/// The backend for the chip's vendor lowers the candidate's pipeline.
CheckResult checkImplemented(const ChipSpec &chip, const TileCandidate &cand);
CheckResult checkElementType(const ChipSpec &chip, const TileCandidate &cand,
                             const MatrixInstr &instr, ElementType type);
/// The chip has what the pipeline needs, with a stage count it allows.
CheckResult checkPipeline(const ChipSpec &chip, const TileCandidate &cand);
/// D and Dv: multiples of 8 and of the instruction's head_dim_multiple (Dv
/// also of its N), within the chip's,
/// the instruction's and the candidate's maximum.
CheckResult checkHeadDim(const ChipSpec &chip, const TileCandidate &cand,
                         const MatrixInstr &instr, int64_t headDim,
                         int64_t headDimV);
/// block_m == rowsPerWarp * warps, block_n a multiple of (and one of the
/// allowed values of) the instruction, enough instructions per iteration.
CheckResult checkMmaDivisibility(const TileCandidate &cand,
                                 const MatrixInstr &instr, int64_t headDim);
CheckResult checkThreads(const ChipSpec &chip, const TileCandidate &cand);
CheckResult checkSharedMemory(const ChipSpec &chip, const TileCandidate &cand,
                              const MatrixInstr &instr,
                              const AttentionProblem &problem, int64_t &bytes);
CheckResult checkRegisters(const ChipSpec &chip, const TileCandidate &cand,
                           const MatrixInstr &instr,
                           const AttentionProblem &problem, int64_t &regs);
/// Aligned variants need static sequence lengths that are multiples of the
/// block sizes.
CheckResult checkAlignment(const TileCandidate &cand,
                           const AttentionProblem &problem);
CheckResult checkBias(const TileCandidate &cand,
                      const AttentionProblem &problem);

} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_TARGET_CONSTRAINTS_H
