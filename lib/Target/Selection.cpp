//===- Selection.cpp - candidate verdicts in priority order -----*- C++ -*-===//

#include "AttnDialect/Target/Constraints.h"
#include "AttnDialect/Target/TileTable.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include <tuple>

using namespace mlir;
using namespace mlir::attn;

Verdict mlir::attn::evaluateCandidate(const ChipSpec &chip,
                                      const TileCandidate &cand,
                                      const AttentionProblem &problem,
                                      const Profile *profile, bool exhaustive) {
  Verdict v;
  v.candidate = &cand;
  llvm::SmallVector<std::string> reasons;
  auto add = [&](CheckResult r) {
    if (r)
      reasons.push_back(std::move(*r));
  };
  // Cheap, decisive checks first: a kernel for the other direction, outside
  // the profile or the dispatch condition needs no further explanation.
  add(checkDirection(cand, problem));
  if (profile)
    add(checkProfile(*profile, cand, problem));
  add(checkDispatch(chip, cand));
  add(checkMask(cand, problem));
  add(checkSizeHint(cand, problem));
  add(checkImplemented(chip, cand));
  if (reasons.empty() || exhaustive) {
    const MatrixInstr *instr = chip.lookupInstr(cand.mma);
    // The parser rejects tables where this happens; keep going regardless.
    if (!instr) {
      reasons.push_back(("mma: " + stringifyMatrixInstrKind(cand.mma) +
                         " is not an instruction of " + chip.name)
                            .str());
    } else {
      add(checkElementType(chip, cand, *instr, problem.elementType));
      add(checkPipeline(chip, cand));
      add(checkHeadDim(chip, cand, *instr, problem.headDim, problem.headDimV));
      // Resources are those of the padded tiles the kernel computes on.
      AttentionProblem tiled = getTiledProblem(*instr, problem);
      add(checkTileShape(chip, cand, *instr, tiled.headDim));
      add(checkHeadSlices(cand, *instr, tiled.headDim, tiled.headDimV));
      add(checkThreads(chip, cand));
      add(checkSharedMemory(chip, cand, *instr, tiled, v.smemBytes));
      add(checkRegisters(chip, cand, *instr, tiled, v.registers));
      add(checkLayout(cand, problem));
      add(checkAlignment(cand, problem));
      add(checkBias(cand, problem));
      add(checkDeterministic(cand, *instr, problem));
    }
  }
  v.accepted = reasons.empty();
  if (v.accepted) {
    v.reason = llvm::formatv("fits: {0} bytes of shared memory", v.smemBytes);
    if (v.registers > 0)
      v.reason +=
          llvm::formatv(", about {0} registers per thread", v.registers);
  } else {
    v.reason = llvm::join(reasons, "; ");
  }
  return v;
}

/// Whether `c`'s instruction pads the problem's head dims by more than it
/// tolerates (max_padding_percent of the padded D + Dv).
static bool isOverPadded(const ChipSpec &chip, const TileCandidate &c,
                         const AttentionProblem &problem) {
  const MatrixInstr *instr = chip.lookupInstr(c.mma);
  if (!instr || problem.headDim <= 0 || problem.headDimV <= 0)
    return false;
  AttentionProblem tiled = getTiledProblem(*instr, problem);
  int64_t padded = tiled.headDim + tiled.headDimV;
  int64_t pad = padded - problem.headDim - problem.headDimV;
  return pad * 100 > instr->maxPaddingPercent * padded;
}

/// The priority key, smaller first, as xformers' sort_index: candidates
/// whose instruction pads the head dims more than it tolerates last, then
/// the table's explicit priority (a faster kernel family ranks ahead of even
/// the aligned variants of a slower one), aligned variants, output kept in
/// registers, the smallest head-dim bucket, a size-specialized tile
/// (seqlen_min; rejected where its lengths do not hold) ahead of the
/// general one, no bias support unless the op has a bias, then the table
/// order (larger tiles are listed first).
static auto priorityKey(const ChipSpec &chip, const TileCandidate &c,
                        const AttentionProblem &problem) {
  bool biasMismatch = c.supportsBias != problem.hasBias;
  return std::make_tuple(isOverPadded(chip, c, problem), c.priority, !c.aligned,
                         !c.accInRegisters, c.headDimMax, c.seqlenMin == 0,
                         biasMismatch, c.tableIndex);
}

llvm::SmallVector<Verdict>
mlir::attn::evaluateCandidates(const ChipSpec &chip,
                               const AttentionProblem &problem,
                               const Profile *profile) {
  llvm::SmallVector<const TileCandidate *> order;
  for (const TileCandidate &c : chip.candidates)
    order.push_back(&c);
  llvm::stable_sort(order, [&](const TileCandidate *a, const TileCandidate *b) {
    return priorityKey(chip, *a, problem) < priorityKey(chip, *b, problem);
  });
  llvm::SmallVector<Verdict> verdicts;
  for (const TileCandidate *c : order)
    verdicts.push_back(evaluateCandidate(chip, *c, problem, profile));
  return verdicts;
}

const TileCandidate *
mlir::attn::selectCandidate(const ChipSpec &chip,
                            const AttentionProblem &problem,
                            const Profile *profile) {
  for (const Verdict &v : evaluateCandidates(chip, problem, profile))
    if (v.accepted)
      return v.candidate;
  return nullptr;
}

llvm::SmallVector<FamilyMember>
mlir::attn::enumerateFamily(const ChipSpec &chip, llvm::StringRef profileName,
                            llvm::ArrayRef<int64_t> headDims,
                            llvm::ArrayRef<MaskKind> masks) {
  llvm::SmallVector<FamilyMember> family;
  const Profile *profile = lookupProfile(profileName);
  if (!profile)
    return family;
  llvm::SmallVector<MaskKind> allMasks = {MaskKind::None, MaskKind::Causal,
                                          MaskKind::CausalBottomRight,
                                          MaskKind::SlidingWindow};
  if (masks.empty())
    masks = allMasks;
  // A sequence length every block size divides (three warpgroups of 64
  // rows included), for the aligned problem.
  constexpr int64_t kAlignedSeqLen = 3 << 16;
  for (Direction dir : profile->directions) {
    for (ElementType type : profile->dtypes) {
      for (int64_t d : headDims) {
        for (MaskKind mask : masks) {
          AttentionProblem p;
          p.elementType = type;
          p.headDim = p.headDimV = d;
          p.direction = dir;
          p.mask = mask;
          p.seqQ = p.seqK = kAlignedSeqLen;
          // The aligned pick stands for every length: a size-specialized
          // tile is added per size class (Tuning.h), not here.
          const TileCandidate *aligned = nullptr;
          for (const Verdict &v : evaluateCandidates(chip, p, profile))
            if (v.accepted && v.candidate->seqlenMin == 0) {
              aligned = v.candidate;
              break;
            }
          p.seqQ = p.seqK = std::nullopt;
          const TileCandidate *general = selectCandidate(chip, p, profile);
          if (aligned)
            family.push_back({type, d, aligned, dir, mask});
          if (general && general != aligned)
            family.push_back({type, d, general, dir, mask});
        }
      }
    }
  }
  return family;
}
