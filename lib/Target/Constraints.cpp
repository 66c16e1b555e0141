//===- Constraints.cpp - checks a tile candidate must pass ------*- C++ -*-===//
//
// Every rule a backend relies on when lowering a config is a check here, so
// that selection never hands a backend something it cannot lower.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Target/Constraints.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;
using llvm::formatv;

static std::string joinTypes(llvm::ArrayRef<ElementType> types) {
  std::string s;
  for (ElementType t : types) {
    if (!s.empty())
      s += ", ";
    s += stringifyElementType(t);
  }
  return s;
}

static llvm::StringRef lowering(Vendor vendor) {
  switch (vendor) {
  case Vendor::Nvidia:
    return "NVVM";
  case Vendor::Amd:
    return "ROCDL";
  case Vendor::Host:
    return "host";
  }
  llvm_unreachable("unknown vendor");
}

//===----------------------------------------------------------------------===//
// Formulas
//===----------------------------------------------------------------------===//

SharedMemoryLayout mlir::attn::getSharedMemoryLayout(
    int64_t blockM, int64_t blockN, int64_t stages, int64_t elemBytes,
    int64_t headDim, int64_t headDimV, int64_t padElems, bool swizzled,
    bool ringBarriers, bool queryBarriers, bool valueBarriers,
    int64_t smemMaxBytes) {
  // The table's padding counts 16-bit elements: the same bytes for f32
  // (16 bytes keeps the f32 kernel's 16-byte row loads of eight rows on
  // eight distinct bank groups).
  int64_t pad = swizzled ? 0 : padElems * 2 / elemBytes;
  SharedMemoryLayout l;
  l.qRowStride = headDim + pad;
  l.kRowStride = headDim + pad;
  l.vRowStride = headDimV + pad;
  l.qBytes = blockM * l.qRowStride * elemBytes;
  l.kStageBytes = blockN * l.kRowStride * elemBytes;
  l.vStageBytes = blockN * l.vRowStride * elemBytes;
  l.alignSlack = swizzled ? kSwizzleAlignBytes : 0;
  auto carve = [&](int64_t queryBuffers) {
    l.queryBuffers = queryBuffers;
    l.kOffset = queryBuffers * l.qBytes;
    l.barrierOffset = l.kOffset + stages * (l.kStageBytes + l.vStageBytes);
    // A full and an empty mbarrier (8 bytes each) per stage (and per Q
    // buffer).
    l.barrierBytes = ringBarriers ? 16 * (stages * (1 + valueBarriers) +
                                          (queryBarriers ? queryBuffers : 0))
                                  : 0;
    l.totalBytes = l.alignSlack + l.barrierOffset + l.barrierBytes;
  };
  carve(2);
  if (!queryBarriers || smemMaxBytes <= 0 || l.totalBytes > smemMaxBytes)
    carve(1);
  return l;
}

int64_t mlir::attn::registerEstimate(int64_t rowsPerWarp, int64_t warpSize,
                                     int64_t blockN, int64_t headDim,
                                     int64_t headDimV, int64_t overhead,
                                     bool queryInRegisters) {
  int64_t sAcc = llvm::divideCeil(rowsPerWarp * blockN, warpSize);
  int64_t oAcc = llvm::divideCeil(rowsPerWarp * headDimV, warpSize);
  // Two 16-bit values per 32-bit register.
  int64_t qFrag = queryInRegisters
                      ? llvm::divideCeil(rowsPerWarp * headDim, 2 * warpSize)
                      : 0;
  return sAcc + oAcc + qFrag + overhead;
}

/// The GPU backward kernel's rules apply: the host lowers its backward
/// with the forward's loop nest and tiles.
static bool isGPUBackward(const ChipSpec &chip, const TileCandidate &cand) {
  return cand.direction == Direction::Backward && chip.vendor != Vendor::Host;
}

BackwardSharedMemoryLayout mlir::attn::getBackwardSharedMemoryLayout(
    int64_t blockM, int64_t blockN, int64_t stages, int64_t elemBytes,
    int64_t headDim, int64_t headDimV, int64_t padElems, bool swizzled,
    int64_t dqStageCols, int64_t smemMaxBytes, bool warpSpecialized,
    bool blockedDq, bool sharedScores, bool keyRowSums) {
  BackwardSharedMemoryLayout l;
  int64_t pad = swizzled ? 0 : padElems;
  l.kRowStride = headDim + pad;
  l.vRowStride = headDimV + pad;
  l.qRowStride = headDim + pad;
  l.doRowStride = headDimV + pad;
  // Swizzled, dS is a matrix operand too (dQ = dS K reads it as wgmma's A).
  l.dsRowStride = blockN + pad;
  // Swizzled tiles are whole 8-row x 128-byte atoms (rows a multiple of 8,
  // head dims of 64), so every offset below stays 1024-byte aligned.
  l.alignSlack = swizzled ? kSwizzleAlignBytes : 0;
  l.kOffset = 0;
  l.vOffset = l.kOffset + blockN * l.kRowStride * elemBytes;
  l.qOffset = l.vOffset + blockN * l.vRowStride * elemBytes;
  l.qStageBytes = blockM * l.qRowStride * elemBytes;
  l.doStageBytes = blockM * l.doRowStride * elemBytes;
  l.doOffset = l.qOffset + stages * l.qStageBytes;
  l.dsOffset = l.doOffset + stages * l.doStageBytes;
  l.dsBuffers = sharedScores ? 3 : warpSpecialized ? 2 : 1;
  l.dsStageBytes = blockM * l.dsRowStride * elemBytes;
  auto carve = [&](int64_t dsEnd) {
    l.rowStatsOffset = llvm::alignTo(dsEnd, 16);
    l.rowStatsStageBytes = swizzled ? 2 * blockM * 4 : 0;
    l.totalBytes =
        l.alignSlack + l.rowStatsOffset + stages * l.rowStatsStageBytes;
    if (warpSpecialized) {
      l.barrierOffset = llvm::alignTo(l.totalBytes - l.alignSlack, 8);
      l.totalBytes = l.alignSlack + l.barrierOffset + 2 * stages * 8;
    }
  };
  int64_t dsEnd = l.dsOffset + l.dsBuffers * l.dsStageBytes;
  carve(dsEnd);
  if (sharedScores) {
    // No staging area: the slices' units of dQ are staged in the Q/dO ring
    // buffer of their block (MainStageEmitter::dqInRing); blocked only.
    if (dqStageCols <= 0 || !swizzled || !blockedDq)
      return l;
    l.dqStageRowBytes = dqStageCols * 4;
    l.dqStageBlocked = true;
    if (keyRowSums) {
      // Two warpgroups' sums a buffer, then the writer's running sums.
      l.rowSumOffset = llvm::alignTo(l.totalBytes - l.alignSlack, 16);
      l.rowSumStageBytes = 2 * blockN * 4;
      l.totalBytes = l.alignSlack + l.rowSumOffset +
                     stages * l.rowSumStageBytes + blockN * 4;
    }
    return l;
  }
  if (dqStageCols > 0 && swizzled) {
    // Chunks of 64 floats, each row's padded by 16 bytes: the quads' 8-byte
    // stores of a chunk then fall on distinct banks for two rows at a time.
    // Blocked, the chunks are dq_accum's units, swizzled instead.
    int64_t rowBytes =
        blockedDq ? dqStageCols * 4
                  : llvm::divideCeil(dqStageCols, 64) * kDqStageChunkBytes;
    int64_t offset = llvm::alignTo(l.totalBytes - l.alignSlack, 16);
    int64_t total = l.alignSlack + offset + blockM * rowBytes;
    if (smemMaxBytes > 0 && total <= smemMaxBytes) {
      l.dqStageOffset = offset;
      l.dqStageRowBytes = rowBytes;
      l.dqStageBlocked = blockedDq;
      l.totalBytes = total;
    }
  }
  return l;
}

int64_t mlir::attn::backwardRegisterEstimate(
    int64_t rowsPerWarp, int64_t warpSize, int64_t blockM, int64_t headDim,
    int64_t headDimV, int64_t overhead, int64_t headSplit,
    int64_t headDimMultiple, bool sharedOperands) {
  int64_t sliceD = getHeadSlice(headDim, headSplit, headDimMultiple, 0).width,
          sliceDv = getHeadSlice(headDimV, headSplit, headDimMultiple, 0).width;
  int64_t acc = llvm::divideCeil(rowsPerWarp * (sliceD + sliceDv), warpSize);
  int64_t scores = 2 * llvm::divideCeil(rowsPerWarp * blockM, warpSize);
  // The K or the V rows as packed 16-bit operands while a product runs;
  // past 128 columns ptxas loads them near their MMAs (D = 256: 253
  // registers used, no spills, where all of K's would be 64 more).
  // Instructions reading both operands from shared memory (wgmma) hold none.
  int64_t frags = sharedOperands
                      ? 0
                      : llvm::divideCeil(
                            rowsPerWarp * std::min<int64_t>(
                                              std::max(headDim, headDimV), 128),
                            2 * warpSize);
  // lse and delta of each query column a lane holds (a lane holds 8 rows'
  // worth of columns per row slot), unless they are read from shared
  // memory where they are used (wgmma: each block's are copied there).
  int64_t columns = sharedOperands
                        ? 0
                        : 2 * llvm::divideCeil(rowsPerWarp * blockM,
                                               warpSize * rowsPerWarp / 8);
  return acc + scores + frags + columns + overhead;
}

int64_t mlir::attn::backwardRegisterEstimate(const ChipSpec &chip,
                                             const MatrixInstr &instr,
                                             int64_t blockM, int64_t headDim,
                                             int64_t headDimV,
                                             int64_t headSplit) {
  return backwardRegisterEstimate(instr.rowsPerWarp, chip.warpSize, blockM,
                                  headDim, headDimV, chip.regsOverhead,
                                  headSplit, instr.headDimMultiple,
                                  instr.sharedOperands);
}

HeadSlice mlir::attn::getHeadSlice(int64_t tileDim, int64_t split,
                                   int64_t multiple, int64_t index) {
  int64_t width = llvm::alignTo(llvm::divideCeil(tileDim, split), multiple);
  int64_t offset = std::min(index * width, tileDim);
  return {offset, std::min(width, tileDim - offset)};
}

int64_t mlir::attn::mmaPerIteration(const MatrixInstr &instr, int64_t blockN,
                                    int64_t headDim) {
  int64_t rows = std::max<int64_t>(instr.rowsPerWarp, instr.m);
  return (rows / instr.m) * (blockN / instr.n) * (headDim / instr.k);
}

std::optional<int64_t>
mlir::attn::headDimBucket(llvm::ArrayRef<int64_t> buckets, int64_t headDim) {
  std::optional<int64_t> best;
  for (int64_t b : buckets)
    if (b >= headDim && (!best || b < *best))
      best = b;
  return best;
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

CheckResult mlir::attn::checkDirection(const TileCandidate &cand,
                                       const AttentionProblem &problem) {
  if (cand.direction == problem.direction)
    return std::nullopt;
  return formatv("direction: a {0} kernel, the op needs {1}",
                 stringifyDirection(cand.direction),
                 stringifyDirection(problem.direction))
      .str();
}

CheckResult mlir::attn::checkProfile(const Profile &profile,
                                     const TileCandidate &cand,
                                     const AttentionProblem &problem) {
  if (!profile.includes(cand.direction))
    return formatv("profile {0}: excludes {1} kernels", profile.name,
                   stringifyDirection(cand.direction))
        .str();
  if (!profile.includes(problem.elementType))
    return formatv("profile {0}: excludes element type {1}", profile.name,
                   stringifyElementType(problem.elementType))
        .str();
  return std::nullopt;
}

CheckResult mlir::attn::checkDispatch(const ChipSpec &chip,
                                      const TileCandidate &cand) {
  if (cand.onlyOn.empty() || llvm::is_contained(cand.onlyOn, chip.name))
    return std::nullopt;
  return formatv("dispatch: used only on {0}", llvm::join(cand.onlyOn, ", "))
      .str();
}

/// Why Sq and Sk (static, or the size hint where dynamic) are not both at
/// least `min`, each reason starting with `what`.
static CheckResult checkLengthsAtLeast(int64_t min, StringRef what,
                                       const AttentionProblem &problem) {
  auto check = [&](StringRef dim, std::optional<int64_t> len) -> CheckResult {
    if (!len && !problem.seqHint)
      return formatv("{0}: for Sq and Sk >= {1}; the op's {2} is dynamic "
                     "(attn-bundle adds it for that range)",
                     what, min, dim)
          .str();
    if (!len && *problem.seqHint < min)
      return formatv("{0}: for Sq and Sk >= {1}; the op's {2} is dynamic and "
                     "the size hint {3}",
                     what, min, dim, *problem.seqHint)
          .str();
    if (len && *len < min)
      return formatv("{0}: for Sq and Sk >= {1}; the op's {2} is {3}", what,
                     min, dim, *len)
          .str();
    return std::nullopt;
  };
  if (CheckResult r = check("Sq", problem.seqQ))
    return r;
  return check("Sk", problem.seqK);
}

CheckResult mlir::attn::checkSizeHint(const TileCandidate &cand,
                                      const AttentionProblem &problem) {
  if (cand.seqlenMin <= 0 || problem.sizeMeasured)
    return std::nullopt;
  return checkLengthsAtLeast(cand.seqlenMin, "size hint", problem);
}

CheckResult mlir::attn::checkMask(const TileCandidate &cand,
                                  const AttentionProblem &problem) {
  if (cand.masks.empty() || llvm::is_contained(cand.masks, problem.mask))
    return std::nullopt;
  llvm::SmallVector<std::string> names;
  for (MaskKind m : cand.masks)
    names.push_back(stringifyMaskKind(m).str());
  return formatv("mask: used only for {0}, the op has {1}",
                 llvm::join(names, ", "), stringifyMaskKind(problem.mask))
      .str();
}

CheckResult mlir::attn::checkImplemented(const ChipSpec &chip,
                                         const TileCandidate &cand) {
  if (cand.implemented)
    return std::nullopt;
  return formatv("pipeline {0}: not yet implemented by the {1} lowering",
                 stringifyPipelineKind(cand.pipeline), lowering(chip.vendor))
      .str();
}

CheckResult mlir::attn::checkElementType(const ChipSpec &chip,
                                         const TileCandidate &cand,
                                         const MatrixInstr &instr,
                                         ElementType type) {
  llvm::StringRef name = stringifyElementType(type);
  if (!chip.supportsElementType(type)) {
    std::string r = formatv("element type {0}: {1} supports {2}", name,
                            chip.name, joinTypes(chip.dtypes))
                        .str();
    if (!chip.dtypeNote.empty())
      r += "; " + chip.dtypeNote;
    return r;
  }
  if (type == ElementType::BF16 && !chip.hasBF16())
    return formatv("element type bf16: {0} has no bf16 support", chip.name)
        .str();
  if (!llvm::is_contained(cand.dtypes, type))
    return formatv("element type {0}: the candidate handles {1}", name,
                   joinTypes(cand.dtypes))
        .str();
  if (!llvm::is_contained(instr.operandTypes, type))
    return formatv("element type {0}: {1} takes {2}", name, instr.getName(),
                   joinTypes(instr.operandTypes))
        .str();
  return std::nullopt;
}

CheckResult mlir::attn::checkPipeline(const ChipSpec &chip,
                                      const TileCandidate &cand) {
  llvm::StringRef p = stringifyPipelineKind(cand.pipeline);
  switch (cand.pipeline) {
  case PipelineKind::Simple:
    if (cand.stages != 1)
      return formatv("pipeline {0}: needs stages = 1, got {1}", p, cand.stages)
          .str();
    break;
  case PipelineKind::CpAsync:
    if (!chip.hasCpAsync())
      return formatv("pipeline {0}: {1} has no cp.async", p, chip.name).str();
    if (cand.stages < 2)
      return formatv("pipeline {0}: needs stages >= 2, got {1}", p, cand.stages)
          .str();
    break;
  case PipelineKind::TmaWarpSpecialized:
  case PipelineKind::CpAsyncWarpSpecialized:
    if (cand.pipeline == PipelineKind::TmaWarpSpecialized &&
        (!chip.hasTma() || !chip.hasWgmma()))
      return formatv("pipeline {0}: {1} has no TMA/wgmma", p, chip.name).str();
    if (cand.pipeline == PipelineKind::CpAsyncWarpSpecialized &&
        (!chip.hasCpAsync() || !chip.hasWgmma()))
      return formatv("pipeline {0}: {1} has no cp.async/wgmma", p, chip.name)
          .str();
    if (cand.stages < 2)
      return formatv("pipeline {0}: needs stages >= 2, got {1}", p, cand.stages)
          .str();
    if (cand.warps < 2 * kProducerWarps || cand.warps % kProducerWarps != 0)
      return formatv("pipeline {0}: needs whole warpgroups, a producer and at "
                     "least one that computes; got {1} warps",
                     p, cand.warps)
          .str();
    break;
  case PipelineKind::LdsDoubleBuffer:
    if (chip.vendor != Vendor::Amd)
      return formatv("pipeline {0}: only on AMD chips", p).str();
    if (cand.stages != 2)
      return formatv("pipeline {0}: needs stages = 2, got {1}", p, cand.stages)
          .str();
    break;
  }
  return std::nullopt;
}

int64_t mlir::attn::getTileHeadDim(const MatrixInstr &instr, int64_t headDim) {
  return llvm::alignTo(headDim, std::max<int64_t>(instr.headDimMultiple, 1));
}

int64_t mlir::attn::getTileHeadDimV(const MatrixInstr &instr,
                                    int64_t headDimV) {
  // Dv is an output dim of O = P V: whole instruction N tiles.
  return llvm::alignTo(headDimV,
                       std::max<int64_t>({instr.headDimMultiple, instr.n, 1}));
}

int64_t mlir::attn::getRowAlignBytes(int64_t elemBytes, int64_t cols) {
  int64_t bytes = elemBytes * cols;
  return bytes <= 0 ? 16 : std::min<int64_t>(16, bytes & -bytes);
}

AttentionProblem mlir::attn::getTiledProblem(const MatrixInstr &instr,
                                             const AttentionProblem &problem) {
  AttentionProblem tiled = problem;
  tiled.headDim = getTileHeadDim(instr, problem.headDim);
  tiled.headDimV = getTileHeadDimV(instr, problem.headDimV);
  return tiled;
}

CheckResult mlir::attn::checkHeadDim(const ChipSpec &chip,
                                     const TileCandidate &cand,
                                     const MatrixInstr &instr, int64_t headDim,
                                     int64_t headDimV) {
  std::string reasons;
  auto check = [&](llvm::StringRef what, int64_t d, int64_t tiled) {
    auto add = [&](const std::string &r) {
      if (!reasons.empty())
        reasons += "; ";
      reasons += r;
    };
    if (d <= 0) {
      add(formatv("head dim {0} = {1}: must be positive", what, d));
      return;
    }
    std::string padded =
        tiled == d
            ? std::string()
            : formatv(" (padded to {0} for {1})", tiled, instr.getName()).str();
    int64_t max = std::min(chip.headDimMax, instr.headDimMax);
    if (tiled > max)
      add(formatv("head dim {0} = {1}{2}: {3} handles at most {4}", what, d,
                  padded, chip.name, max));
    else if (tiled > cand.headDimMax)
      add(formatv("head dim {0} = {1}{2}: above the candidate's bucket {3}",
                  what, d, padded, cand.headDimMax));
  };
  int64_t tiled = getTileHeadDim(instr, headDim);
  int64_t tiledV = getTileHeadDimV(instr, headDimV);
  check("D", headDim, tiled);
  if (headDimV != headDim || tiledV != tiled)
    check("Dv", headDimV, tiledV);
  if (reasons.empty())
    return std::nullopt;
  return reasons;
}

CheckResult mlir::attn::checkMmaDivisibility(const TileCandidate &cand,
                                             const MatrixInstr &instr,
                                             int64_t headDim) {
  if (instr.rowsPerWarp > 0) {
    int64_t maxRows = std::max(instr.maxRowsPerWarp, instr.rowsPerWarp);
    int64_t warps = getComputeWarps(cand.pipeline, cand.warps);
    if (warps <= 0)
      return formatv("tile: pipeline {0} gives {1} warps to its producer "
                     "warpgroup and needs more that compute; got {2}",
                     stringifyPipelineKind(cand.pipeline), kProducerWarps,
                     cand.warps)
          .str();
    if (cand.blockM % warps != 0)
      return formatv("tile: block_m {0} is not a multiple of {1} computing "
                     "warps",
                     cand.blockM, warps)
          .str();
    int64_t rows = cand.blockM / warps;
    if (rows % instr.rowsPerWarp != 0 || rows > maxRows)
      return formatv("tile: block_m {0} over {1} warps gives {2} rows per "
                     "warp; {3} needs a multiple of {4}, at most {5}",
                     cand.blockM, warps, rows, instr.getName(),
                     instr.rowsPerWarp, maxRows)
          .str();
  }
  // An instruction tile wider than one warp's rows (wgmma: a warpgroup of
  // four warps owns 64 rows) needs whole instruction tiles of rows.
  if (instr.m > instr.rowsPerWarp && instr.rowsPerWarp > 0 &&
      cand.blockM % instr.m != 0)
    return formatv("tile: block_m {0} is not a multiple of {1}'s M = {2} "
                   "(whole warpgroups)",
                   cand.blockM, instr.getName(), instr.m)
        .str();
  if (cand.blockN % instr.blockNMultiple != 0)
    return formatv("tile: block_n {0} is not a multiple of {1} ({2})",
                   cand.blockN, instr.blockNMultiple, instr.getName())
        .str();
  if (instr.blockNMax > 0 && cand.blockN > instr.blockNMax)
    return formatv("tile: block_n {0} > {1}, the most the {2} kernel handles",
                   cand.blockN, instr.blockNMax, instr.getName())
        .str();
  if (!instr.blockNAllowed.empty() &&
      !llvm::is_contained(instr.blockNAllowed, cand.blockN)) {
    std::string allowed;
    for (int64_t n : instr.blockNAllowed)
      allowed += (allowed.empty() ? "" : ", ") + std::to_string(n);
    return formatv("tile: block_n {0} not in {{{1}} handled by the {2} kernel",
                   cand.blockN, allowed, instr.getName())
        .str();
  }
  if (instr.minMmaPerIteration > 0 && headDim > 0) {
    int64_t count = mmaPerIteration(instr, cand.blockN, headDim);
    if (count < instr.minMmaPerIteration)
      return formatv("tile: {0} {1} per warp per key block, fewer than the {2} "
                     "needed to hide shared-memory latency",
                     count, instr.getName(), instr.minMmaPerIteration)
          .str();
  }
  return std::nullopt;
}

CheckResult mlir::attn::checkBackwardTile(const TileCandidate &cand,
                                          const MatrixInstr &instr) {
  // Matrix instructions of a warpgroup (wgmma): the dQ product takes the
  // block's query rows a warpgroup (64 rows) at a time, with every warp of it.
  if (instr.sharedOperands) {
    int64_t groupRows = instr.m;
    if (cand.warps % 4 != 0)
      return formatv("tile: {0} warps are not whole warpgroups of 4 ({1})",
                     cand.warps, instr.getName())
          .str();
    if (cand.blockM % groupRows != 0)
      return formatv("tile: block_m {0} is not a multiple of the {1} rows of "
                     "a {2} warpgroup (the dQ product)",
                     cand.blockM, groupRows, instr.getName())
          .str();
  }
  // A producer warpgroup (cp_async_ws) copies Q, dO and the row stats;
  // the others own the key rows.
  if (isWarpSpecialized(cand.pipeline) &&
      (cand.pipeline != PipelineKind::CpAsyncWarpSpecialized ||
       !instr.sharedOperands))
    return formatv("tile: pipeline {0} in the backward: only cp_async_ws, "
                   "with a warpgroup instruction (wgmma)",
                   stringifyPipelineKind(cand.pipeline))
        .str();
  // With slices on warpgroups every slice's warpgroup owns the key rows.
  if (slicesOnWarpgroups(cand.pipeline, cand.headSplit) &&
      getComputeWarps(cand.pipeline, cand.warps) != 4 * cand.headSplit)
    return formatv("tile: head_split {0} on a producer tile takes one "
                   "computing warpgroup a slice, {1} computing warps given",
                   cand.headSplit, getComputeWarps(cand.pipeline, cand.warps))
        .str();
  int64_t warps = getKeyRowWarps(cand.pipeline, cand.warps, cand.headSplit);
  if (instr.rowsPerWarp <= 0 || cand.blockN % warps != 0 ||
      cand.blockN / warps != instr.rowsPerWarp)
    return formatv("tile: block_n {0} over {1} computing warps must give the "
                   "{2} key rows per warp of {3}",
                   cand.blockN, warps, instr.rowsPerWarp, instr.getName())
        .str();
  // block_m is the width of the transposed scores (the forward's block_n)
  // and the row count of the dQ product, 16 rows per warp at a time.
  int64_t multiple = std::max<int64_t>(instr.blockNMultiple, 16);
  if (cand.blockM % multiple != 0)
    return formatv("tile: block_m {0} is not a multiple of {1} ({2} "
                   "backward)",
                   cand.blockM, multiple, instr.getName())
        .str();
  if (!instr.blockNAllowed.empty() &&
      !llvm::is_contained(instr.blockNAllowed, cand.blockM))
    return formatv("tile: block_m {0} is a score width {1} does not handle",
                   cand.blockM, instr.getName())
        .str();
  if (cand.stages != 1 && cand.stages != 2)
    return formatv("tile: the backward kernel has one or two stages (Q and "
                   "dO buffers), got {0}",
                   cand.stages)
        .str();
  return std::nullopt;
}

CheckResult mlir::attn::checkHeadSlices(const TileCandidate &cand,
                                        const MatrixInstr &instr,
                                        int64_t headDim, int64_t headDimV) {
  if (cand.direction != Direction::Backward || cand.headSplit <= 1)
    return std::nullopt;
  if (!slicesOnWarpgroups(cand.pipeline, cand.headSplit)) {
    // Kernels of their own: each slice's kernel needs columns of both.
    for (int64_t d : {headDim, headDimV})
      if (getHeadSlice(d, cand.headSplit, instr.headDimMultiple,
                       cand.headSplit - 1)
              .width <= 0)
        return formatv("tile: head_split {0} leaves the last slice of D = {1} "
                       "(as tiled) empty",
                       cand.headSplit, d)
            .str();
    return std::nullopt;
  }
  // The warpgroups run one code with their slice's first column as a value:
  // every slice computes slice 0's width. A narrower last slice (D = 192:
  // 128 and 64 columns) reads its operands past the tile, into the next
  // tile of shared memory, for columns that are neither stored nor added;
  // one panel (the instruction's head-dim step) past at most.
  for (int64_t d : {headDim, headDimV}) {
    int64_t first =
                getHeadSlice(d, cand.headSplit, instr.headDimMultiple, 0).width,
            last = getHeadSlice(d, cand.headSplit, instr.headDimMultiple,
                                cand.headSplit - 1)
                       .width;
    if (last <= 0 || first - last > instr.headDimMultiple)
      return formatv("tile: head_split {0} on computing warpgroups computes "
                     "slices of {1} columns; D = {2} (as tiled) leaves the "
                     "last {3} (empty, or more than {4} short)",
                     cand.headSplit, first, d, last, instr.headDimMultiple)
          .str();
  }
  // dQ's 64 x 64 units are staged in the block's Q/dO ring buffer, half a
  // unit in a 64-column panel of Q and half in one of dO
  // (MainStageEmitter::dqInRing): dO needs as many panels as dQ has units.
  int64_t units = llvm::divideCeil(headDim, 64),
          panels = llvm::divideCeil(headDimV, 64);
  if (units > panels)
    return formatv("tile: slices on warpgroups stage dQ's {0} units of 64 "
                   "columns (D = {1}) in the Q/dO ring, half of each in a "
                   "64-column panel of dO, and Dv = {2} has {3}",
                   units, headDim, headDimV, panels)
        .str();
  return std::nullopt;
}

CheckResult mlir::attn::checkTileShape(const ChipSpec &chip,
                                       const TileCandidate &cand,
                                       const MatrixInstr &instr,
                                       int64_t headDim) {
  if (isGPUBackward(chip, cand))
    return checkBackwardTile(cand, instr);
  return checkMmaDivisibility(cand, instr, headDim);
}

CheckResult mlir::attn::checkThreads(const ChipSpec &chip,
                                     const TileCandidate &cand) {
  int64_t threads = cand.warps * chip.warpSize;
  if (chip.maxThreadsPerBlock > 0 && threads > chip.maxThreadsPerBlock)
    return formatv("threads: {0} warps x {1} = {2} > {3} per block", cand.warps,
                   chip.warpSize, threads, chip.maxThreadsPerBlock)
        .str();
  return std::nullopt;
}

CheckResult mlir::attn::checkSharedMemory(const ChipSpec &chip,
                                          const TileCandidate &cand,
                                          const MatrixInstr &instr,
                                          const AttentionProblem &problem,
                                          int64_t &bytes) {
  if (isGPUBackward(chip, cand)) {
    bool slices = slicesOnWarpgroups(cand.pipeline, cand.headSplit);
    bool staged = usesBulkDq(instr.sharedOperands,
                             (problem.deterministic || cand.dqPass) &&
                                 !usesOrderedDq(true, cand.pipeline),
                             getComputeWarps(cand.pipeline, cand.warps),
                             problem.headDim, slices);
    bytes = getBackwardSharedMemoryLayout(
                cand.blockM, cand.blockN, cand.stages,
                getElementBytes(problem.elementType), problem.headDim,
                problem.headDimV, chip.smemRowPadElems, instr.sharedOperands,
                staged ? getHeadSlice(problem.headDim, cand.headSplit,
                                      instr.headDimMultiple, 0)
                             .width
                       : 0,
                chip.smemMaxBytes, isWarpSpecialized(cand.pipeline),
                usesBlockedDqAccum(problem.headDim, cand.headSplit, cand.blockM,
                                   slices),
                slices, slices && problem.deterministic && problem.biasGrad)
                .totalBytes;
    if (chip.smemMaxBytes <= 0 || bytes <= chip.smemMaxBytes)
      return std::nullopt;
    return formatv("shared memory: {0} bytes > {1} max of {2} (block_n {3} x "
                   "(D {4} + Dv {5}) + block_m {6} x ({7} x (D + Dv) + "
                   "block_n), rows padded)",
                   bytes, chip.smemMaxBytes, chip.name, cand.blockN,
                   problem.headDim, problem.headDimV, cand.blockM, cand.stages)
        .str();
  }
  // Operands read from shared memory by descriptor (wgmma) are swizzled.
  bytes = getSharedMemoryLayout(
              cand.blockM, cand.blockN, cand.stages,
              getElementBytes(problem.elementType), problem.headDim,
              problem.headDimV, chip.smemRowPadElems, instr.sharedOperands,
              isWarpSpecialized(cand.pipeline), walksTiles(cand, problem),
              cand.overlapSoftmax, chip.smemMaxBytes)
              .totalBytes;
  if (chip.smemMaxBytes <= 0 || bytes <= chip.smemMaxBytes)
    return std::nullopt;
  return formatv("shared memory: {0} bytes > {1} max of {2} ({3} stages x "
                 "block_n {4} x (D {5} + Dv {6} + pad) + block_m {7} x Q row)",
                 bytes, chip.smemMaxBytes, chip.name, cand.stages, cand.blockN,
                 problem.headDim, problem.headDimV, cand.blockM)
      .str();
}

CheckResult mlir::attn::checkRegisters(const ChipSpec &chip,
                                       const TileCandidate &cand,
                                       const MatrixInstr &instr,
                                       const AttentionProblem &problem,
                                       int64_t &regs) {
  regs = 0;
  if (chip.regsPerThreadMax <= 0 || instr.rowsPerWarp <= 0)
    return std::nullopt;
  if (isGPUBackward(chip, cand)) {
    regs = backwardRegisterEstimate(chip, instr, cand.blockM, problem.headDim,
                                    problem.headDimV, cand.headSplit);
  } else {
    int64_t warps =
        std::max<int64_t>(getComputeWarps(cand.pipeline, cand.warps), 1);
    int64_t rows = std::max(instr.rowsPerWarp, cand.blockM / warps);
    regs = registerEstimate(rows, chip.warpSize, cand.blockN, problem.headDim,
                            problem.headDimV, chip.regsOverhead,
                            /*queryInRegisters=*/!instr.sharedOperands &&
                                rows <= instr.rowsPerWarp);
  }
  if (isWarpSpecialized(cand.pipeline) && chip.regsPerBlockMax > 0) {
    // setmaxnreg hands the computing warpgroups what the producer frees.
    int64_t cap = getWarpRoleRegisters(
                      cand.warps, chip.warpSize, chip.regsPerBlockMax,
                      chip.regsPerThreadMax,
                      hasBusyProducer(/*alignBytes=*/16,
                                      walksTiles(cand, problem), problem.mask))
                      .consumer;
    if (regs > cap)
      return formatv("registers: estimated {0} per computing thread > the {1} "
                     "setmaxnreg leaves them beside the producer",
                     regs, cap)
          .str();
    return std::nullopt;
  }
  if (regs > chip.regsPerThreadMax)
    return formatv("registers: estimated {0} per thread > {1} max of {2}", regs,
                   chip.regsPerThreadMax, chip.name)
        .str();
  int64_t perBlock = regs * cand.warps * chip.warpSize;
  if (chip.regsPerBlockMax > 0 && perBlock > chip.regsPerBlockMax)
    return formatv("registers: estimated {0} per block > {1} max of {2}",
                   perBlock, chip.regsPerBlockMax, chip.name)
        .str();
  return std::nullopt;
}

WarpRoleRegisters mlir::attn::getWarpRoleRegisters(int64_t warps,
                                                   int64_t warpSize,
                                                   int64_t regsPerBlock,
                                                   int64_t regsPerThreadMax,
                                                   bool busyProducer) {
  // setmaxnreg moves registers between the warpgroups of a CTA, within
  // what the CTA got at launch (its threads x the per-thread cap, a
  // multiple of 8): the producer gives up what the others take, and an
  // increase beyond that waits forever. The producer only computes
  // addresses, of fixed chunk columns (emitTileCopy): 24 registers, as
  // FlashAttention-3's TMA producer, hold every 16-byte cp.async kernel of
  // the sm_90a family without spills (ptxas); element-wise copies keep
  // their loads in registers, and a persistent causal schedule its pairs of
  // tiles, and get 32 (24 spilled 4-12 bytes). setmaxnreg counts in
  // multiples of 8.
  WarpRoleRegisters r;
  r.producer = busyProducer ? 32 : 24;
  int64_t threads = warps * warpSize;
  int64_t consumerThreads = threads - kProducerWarps * warpSize;
  if (consumerThreads <= 0 || threads <= 0)
    return r;
  int64_t atLaunch = std::min(regsPerBlock / threads, regsPerThreadMax) / 8 * 8;
  int64_t left = atLaunch * threads - r.producer * kProducerWarps * warpSize;
  r.consumer = std::min<int64_t>(left / consumerThreads / 8 * 8,
                                 regsPerThreadMax / 8 * 8);
  return r;
}

CheckResult mlir::attn::checkLayout(const TileCandidate &cand,
                                    const AttentionProblem &problem) {
  if (int64_t most = cand.kvCacheSeqlenQMax) {
    std::string why =
        !problem.kvCache ? "the op has no KV cache"
        : !problem.seqQ
            ? "the op's Sq is dynamic (attn-bundle adds it for that range)"
        : *problem.seqQ > most
            ? formatv("the op's Sq is {0}", *problem.seqQ).str()
            : "";
    if (!why.empty())
      return formatv("layout: a decode tile, for KV-cache calls with Sq <= "
                     "{0}; {1}",
                     most, why)
          .str();
  }
  if (problem.noTensorMaps && cand.pipeline == PipelineKind::TmaWarpSpecialized)
    return std::string("layout: a fallback for calls tensor maps cannot "
                       "describe");
  if (!problem.servingLayout || !isWarpSpecialized(cand.pipeline))
    return std::nullopt;
  // TMA boxes at a sequence's packed rows serve packed batches; a KV cache
  // (paged or split) keeps the cp_async kernels.
  if (cand.pipeline == PipelineKind::TmaWarpSpecialized && !problem.kvCache)
    return std::nullopt;
  return formatv("layout: pipeline {0} serves dense {1}batches only (KV-cache "
                 "layouts keep the cp_async kernels)",
                 stringifyPipelineKind(cand.pipeline),
                 cand.pipeline == PipelineKind::TmaWarpSpecialized
                     ? "and packed "
                     : "")
      .str();
}

CheckResult mlir::attn::checkAlignment(const TileCandidate &cand,
                                       const AttentionProblem &problem) {
  if (!cand.aligned)
    return std::nullopt;
  auto check = [](llvm::StringRef what, std::optional<int64_t> len,
                  int64_t block) -> CheckResult {
    if (!len)
      return formatv("aligned variant: {0} is dynamic, needs a static "
                     "multiple of {1}",
                     what, block)
          .str();
    if (*len % block != 0)
      return formatv("aligned variant: {0} = {1} is not a multiple of {2}",
                     what, *len, block)
          .str();
    return std::nullopt;
  };
  if (CheckResult r = check("Sq", problem.seqQ, cand.blockM))
    return r;
  return check("Sk", problem.seqK, cand.blockN);
}

int64_t mlir::attn::getDeterministicQueryRows(const MatrixInstr &instr,
                                              int64_t warps) {
  return (instr.rowsPerWarp > 0 ? instr.rowsPerWarp : 16) * warps;
}

CheckResult mlir::attn::checkOrderedDq(const TileCandidate &cand,
                                       const MatrixInstr &instr,
                                       const AttentionProblem &problem) {
  StringRef p = stringifyPipelineKind(cand.pipeline);
  int64_t groups = getComputeWarps(cand.pipeline, cand.warps) / 4;
  bool slices = slicesOnWarpgroups(cand.pipeline, cand.headSplit);
  if (!usesBulkDq(instr.sharedOperands, /*deterministic=*/false, groups * 4,
                  problem.headDim, slices) ||
      !usesBlockedDqAccum(problem.headDim, cand.headSplit, cand.blockM, slices))
    return formatv("deterministic: pipeline {0} orders whole 64 x 64 units "
                   "of dQ (block_m 64, two or more computing warpgroups, D a "
                   "multiple of 64, or any D with head_split on the "
                   "warpgroups); D = {1}",
                   p, problem.headDim)
        .str();
  // One unit per computing warpgroup: with fewer (D = 64 on two) the
  // ordered plan runs 0.86-0.92x the atomic plan, at or below the dQ pass
  // plans (the turns cost a block of half D = 128's work about 9%). With
  // dropout, whose dQ pass plans run 0.64-0.87x, the ordered plans lead at
  // D = 64 too (0.98-1.02x) and at every length (bench/RESULTS.md).
  // With slices on warpgroups each orders its slice's units itself.
  int64_t units = problem.headDim / 64;
  if (!slices && (units > groups || (units < groups && !problem.dropout)))
    return formatv(
               "deterministic: pipeline {0} orders one 64-column unit of "
               "dQ per computing warpgroup{1}, and D = {2} has {3}, the tile "
               "{4} warpgroups",
               p, problem.dropout ? " or fewer" : " (fewer with dropout)",
               problem.headDim, units, groups)
        .str();
  // Where the tables measured it ahead of the dQ pass.
  if (cand.orderedDqSeqlenMin > 0 && !problem.sizeMeasured && !problem.dropout)
    if (CheckResult r = checkLengthsAtLeast(
            cand.orderedDqSeqlenMin,
            ("deterministic: pipeline " + p + " orders dQ").str(), problem))
      return r;
  // The bias gradient's sums over query rows: slices hand theirs to the
  // dQ writer (MainStageEmitter::emitRowSumsToWriter); the other tiles sum
  // in the dS tile, which an ordered plan's dQ product reads.
  if (problem.biasGrad && !slices)
    return formatv("deterministic: pipeline {0} orders dQ from its dS tile, "
                   "where the bias gradient's sums over query rows would be "
                   "kept (the dQ pass plans compute it)",
                   p)
        .str();
  return std::nullopt;
}

CheckResult mlir::attn::checkDeterministic(const TileCandidate &cand,
                                           const MatrixInstr &instr,
                                           const AttentionProblem &problem) {
  // A dq_pass tile's plans are deterministic whatever the call allows.
  if ((!problem.deterministic && !cand.dqPass) ||
      problem.direction != Direction::Backward)
    return std::nullopt;
  if (cand.headSplit > 1 && !slicesOnWarpgroups(cand.pipeline, cand.headSplit))
    return formatv("deterministic: head_split {0} in kernels of their own is "
                   "for the plans with atomics (the dQ pass keeps whole rows "
                   "of dQ in registers)",
                   cand.headSplit)
        .str();
  if (usesOrderedDq(true, cand.pipeline))
    return checkOrderedDq(cand, instr, problem);
  int64_t need = getDeterministicQueryRows(instr, cand.warps);
  if (cand.blockM * cand.stages >= need)
    return std::nullopt;
  return formatv("deterministic: block_m x stages = {0} query rows of shared "
                 "memory, the dQ pass needs {1}",
                 cand.blockM * cand.stages, need)
      .str();
}

CheckResult mlir::attn::checkBias(const TileCandidate &cand,
                                  const AttentionProblem &problem) {
  if (problem.hasBias && !cand.supportsBias)
    return std::string("bias: the candidate has no bias support");
  return std::nullopt;
}

TileCandidate mlir::attn::getConfigCandidate(ConfigAttr config) {
  TileCandidate cand;
  cand.name = config.getName().str();
  cand.blockM = config.getBlockM();
  cand.blockN = config.getBlockN();
  cand.warps = config.getWarps();
  cand.stages = config.getStages();
  cand.pipeline = config.getPipeline();
  cand.accInRegisters = config.getAccInRegisters();
  cand.mma = config.getMma();
  cand.headSplit = config.getHeadSplit();
  return cand;
}

CheckResult mlir::attn::checkConfig(const ChipSpec &chip, ConfigAttr config,
                                    int64_t headDim, int64_t headDimV,
                                    Direction direction) {
  const MatrixInstr *instr = chip.lookupInstr(config.getMma());
  if (!instr) {
    std::string known;
    for (const MatrixInstr &i : chip.instructions)
      known += (known.empty() ? "" : ", ") + i.getName().str();
    return formatv("mma {0}: {1} has no such instruction in the tile tables "
                   "(it has {2})",
                   stringifyMatrixInstrKind(config.getMma()), chip.name, known)
        .str();
  }
  TileCandidate cand = getConfigCandidate(config);
  // A config carries no head-dim bucket: the instruction's limit applies.
  cand.headDimMax = instr->headDimMax;
  if (CheckResult r = checkHeadDim(chip, cand, *instr, headDim, headDimV))
    return r;
  cand.direction = direction;
  // The MMA-count rule is a speed heuristic for choosing, not a limit.
  if (CheckResult r = checkTileShape(chip, cand, *instr, /*headDim=*/0))
    return r;
  AttentionProblem problem;
  problem.headDim = headDim;
  problem.headDimV = headDimV;
  AttentionProblem tiled = getTiledProblem(*instr, problem);
  if (CheckResult r =
          checkHeadSlices(cand, *instr, tiled.headDim, tiled.headDimV))
    return r;
  return checkThreads(chip, cand);
}
