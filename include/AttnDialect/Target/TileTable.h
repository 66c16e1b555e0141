//===- TileTable.h - per-architecture tile tables ---------------*- C++ -*-===//
//
// The chips attn compiles for, their limits and matrix instructions, and the
// tile candidates tried for each, read from lib/Target/TileTables.json (the
// single source of truth, embedded at build time). See docs/TileTables.md.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNDIALECT_TARGET_TILETABLE_H
#define ATTNDIALECT_TARGET_TILETABLE_H

#include "AttnDialect/IR/AttnAttrs.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace attn {

// ElementType, Direction, Vendor and MatrixInstrKind are ODS enums
// (AttnAttrs.td): symbolizeX / stringifyX convert the table's spellings.

/// The table's element type for an MLIR type, if it is one it knows.
std::optional<ElementType> getElementType(Type type);
int64_t getElementBytes(ElementType type);

/// A matrix instruction and the tiling rules a kernel built on it follows.
struct MatrixInstr {
  MatrixInstrKind kind = MatrixInstrKind::Fma;
  std::string reason;
  int64_t m = 0, n = 0, k = 0;
  llvm::SmallVector<ElementType> operandTypes;
  ElementType accType = ElementType::F32;
  /// Query rows of one instruction tile a warp/wave owns: block_m / warps
  /// must be a multiple of it. 0 means no such rule (host).
  int64_t rowsPerWarp = 0;
  /// Most query rows one warp may own (several instruction tiles stacked);
  /// defaults to rowsPerWarp. A warp owning more rows than rowsPerWarp
  /// re-reads Q from shared memory instead of keeping it in registers.
  int64_t maxRowsPerWarp = 0;
  int64_t blockNMultiple = 1;
  /// Largest block_n the lowering handles (0: no limit beyond the config's).
  int64_t blockNMax = 0;
  /// When not empty, the only block_n values the lowering handles.
  llvm::SmallVector<int64_t> blockNAllowed;
  /// Head dims are padded to a multiple of this (getTileHeadDim).
  int64_t headDimMultiple = 1;
  int64_t headDimMax = 0;
  /// Candidates of this instruction whose padded head dims make more than
  /// this percent of the D + Dv work padding rank after every candidate
  /// that pads less (a coarse instruction loses to a finer one there).
  int64_t maxPaddingPercent = 100;
  /// Fewest matrix instructions per wave per key block for S = Q K^T, below
  /// which the lowering cannot hide the LDS latency (CK's MFMA-count rule).
  int64_t minMmaPerIteration = 0;
  /// The instruction reads Q, K and V from shared memory through matrix
  /// descriptors (wgmma): Q is never held in registers, and the tiles are
  /// 128-byte swizzled (no row padding, 1 KiB of alignment slack).
  bool sharedOperands = false;

  /// The table's spelling ("mma.m16n8k16"), for diagnostics.
  llvm::StringRef getName() const { return stringifyMatrixInstrKind(kind); }
};

/// One entry of a chip's candidate list.
struct TileCandidate {
  std::string name;
  std::string reason;
  int64_t blockM = 0, blockN = 0, warps = 0, stages = 0;
  PipelineKind pipeline = PipelineKind::Simple;
  bool accInRegisters = true;
  MatrixInstrKind mma = MatrixInstrKind::Fma;
  llvm::SmallVector<ElementType> dtypes;
  /// Head-dim bucket: the largest D (and Dv) the kernel handles.
  int64_t headDimMax = 0;
  /// Aligned variants assume Sq % block_m == 0 and Sk % block_n == 0 and
  /// skip tail masking; the loader makes one, named "<name>_aligned", for
  /// every entry with aligned_variant.
  bool aligned = false;
  bool supportsBias = true;
  bool implemented = true;
  Direction direction = Direction::Forward;
  /// Dispatch condition: when not empty, the chips this candidate is used on.
  llvm::SmallVector<std::string> onlyOn;
  /// Dispatch condition: when not empty, the masks this candidate is used
  /// for (a tile that wins without a mask may lose on causal's ragged work).
  llvm::SmallVector<MaskKind> masks;
  /// Size hint: the tile is for calls whose Sq and Sk are both at least this
  /// (a kernel tuned for long sequences; attn-bundle adds it ahead of the
  /// general tile with that dispatch condition); 0: any length.
  int64_t seqlenMin = 0;
  /// Backward tiles with a producer warpgroup: the length (Sq and Sk, or
  /// the size hint) from which a deterministic plan without dropout orders
  /// dQ in main (usesOrderedDq); shorter calls take a dQ pass tile. 0: any
  /// length. With dropout they order dQ at any length (checkOrderedDq).
  int64_t orderedDqSeqlenMin = 0;
  /// A decode tile: for KV-cache calls whose Sq is at most this (attn-bundle
  /// adds it ahead of the general KV-cache tile with that dispatch
  /// condition); 0: for any call.
  int64_t kvCacheSeqlenQMax = 0;
  /// Backward: dK, dV and dQ columns in this many slices, one main kernel
  /// each (ConfigAttr's head_split).
  int64_t headSplit = 1;
  /// Backward: dQ by its own pass over query blocks (no atomics), for calls
  /// that allow atomics too: the tile's plans are deterministic
  /// (ConfigAttr's deterministic), as they measured faster than its atomic
  /// ones.
  bool dqPass = false;
  /// Forward (tma_ws): the masks whose kernels of this tile run over a
  /// persistent grid (ConfigAttr's persistent).
  llvm::SmallVector<MaskKind> persistentMasks;
  bool isPersistentFor(MaskKind mask) const {
    return llvm::is_contained(persistentMasks, mask);
  }
  /// Forward (tma_ws): the softmax of a key block runs under the previous
  /// block's P V (ConfigAttr's overlap_softmax).
  bool overlapSoftmax = false;
  /// Lower first; ties keep table order.
  int64_t priority = 0;
  /// Position in the chip's list, for stable ordering.
  unsigned tableIndex = 0;
};

/// Warps of the producer warpgroup of a warp-specialized pipeline.
inline constexpr int64_t kProducerWarps = 4;

inline bool isWarpSpecialized(PipelineKind p) {
  return p == PipelineKind::TmaWarpSpecialized ||
         p == PipelineKind::CpAsyncWarpSpecialized;
}

/// Whether a deterministic plan (`deterministic`) of a tile with `pipeline`
/// adds dQ in its main stage, each 64-row block's units in the order of the
/// key blocks (a producer warpgroup's writer waits for its turn on a
/// counter), instead of computing dQ in a pass of its own (`_main_q`).
inline bool usesOrderedDq(bool deterministic, PipelineKind pipeline) {
  return deterministic && isWarpSpecialized(pipeline);
}

/// Whether a forward kernel's workgroups walk several tiles, each with its
/// own Q (a persistent grid, or the row blocks of a packed sequence by TMA):
/// Q then has a full and an empty mbarrier of its own.
inline bool walksTiles(PipelineKind p, bool persistent, bool packed) {
  return p == PipelineKind::TmaWarpSpecialized && (persistent || packed);
}

/// Whether a warp-specialized producer keeps more than fixed copy
/// addresses live (getWarpRoleRegisters' `busyProducer`): rows copied
/// through registers (`alignBytes` < 16), or a tile loop's causal schedule.
inline bool hasBusyProducer(int64_t alignBytes, bool walksTiles,
                            MaskKind mask) {
  return alignBytes < 16 || (walksTiles && isCausal(mask));
}

/// Warps that compute (own query rows): all but a warp-specialized
/// pipeline's producer warpgroup.
inline int64_t getComputeWarps(PipelineKind p, int64_t warps) {
  return isWarpSpecialized(p) ? warps - kProducerWarps : warps;
}

/// Whether a backward tile's computing warpgroups each compute one
/// head_split slice of dK, dV and dQ in one main kernel (a warp-specialized
/// tile with head_split > 1), sharing the key block and each query block
/// the producer copies, instead of one main kernel per slice that copies
/// them again (D = 256: two slices of 128 columns, each warpgroup's dK and
/// dV 128 registers a thread).
inline bool slicesOnWarpgroups(PipelineKind p, int64_t headSplit) {
  return isWarpSpecialized(p) && headSplit > 1;
}

/// Warps that own a key block's rows between them: the computing warps,
/// or with slicesOnWarpgroups those of one slice.
inline int64_t getKeyRowWarps(PipelineKind p, int64_t warps,
                              int64_t headSplit) {
  int64_t compute = getComputeWarps(p, warps);
  return slicesOnWarpgroups(p, headSplit) ? compute / headSplit : compute;
}

/// Registers per thread a warp-specialized kernel gives its producer and
/// its compute warpgroups (setmaxnreg), out of what a CTA of `warps` gets
/// at launch; `busyProducer`: the producer keeps more than fixed copy
/// addresses live (rows that are not 16-byte aligned, loaded through
/// registers; a persistent causal kernel's tile schedule).
struct WarpRoleRegisters {
  int64_t producer = 0, consumer = 0;
};
WarpRoleRegisters getWarpRoleRegisters(int64_t warps, int64_t warpSize,
                                       int64_t regsPerBlock,
                                       int64_t regsPerThreadMax,
                                       bool busyProducer = false);

struct ChipSpec {
  std::string name;
  Vendor vendor = Vendor::Host;
  std::string reason;
  int64_t warpSize = 0;
  int64_t maxThreadsPerBlock = 0;
  /// Shared memory (LDS) per block without and with the opt-in; 0 = not
  /// modelled.
  int64_t smemDefaultBytes = 0, smemMaxBytes = 0;
  /// Elements each shared-memory row is padded by to avoid bank conflicts.
  int64_t smemRowPadElems = 0;
  /// 32-bit registers per thread (VGPRs incl. AGPRs on CDNA) and per block;
  /// 0 = not modelled.
  int64_t regsPerThreadMax = 0, regsPerBlockMax = 0;
  /// Registers a kernel needs beyond its accumulators and fragments.
  int64_t regsOverhead = 0;
  llvm::SmallVector<std::string> features;
  llvm::SmallVector<ElementType> dtypes;
  /// Why an element type outside `dtypes` is not supported.
  std::string dtypeNote;
  int64_t headDimMax = 0;
  std::vector<MatrixInstr> instructions;
  std::vector<TileCandidate> candidates;

  bool hasFeature(llvm::StringRef feature) const;
  bool hasCpAsync() const { return hasFeature("cp_async"); }
  bool hasLdmatrix() const { return hasFeature("ldmatrix"); }
  bool hasMmaSync() const { return hasFeature("mma_sync"); }
  bool hasTma() const { return hasFeature("tma"); }
  bool hasWgmma() const { return hasFeature("wgmma"); }
  /// Atomic adds of two f32 at once to global memory (sm_90's
  /// red.global.add.v2.f32).
  bool hasVectorRedF32() const { return hasFeature("red_v2_f32"); }
  /// Programmatic dependent launch: a kernel lets the next one on its
  /// stream start early and waits for the one before (sm_90's
  /// griddepcontrol).
  bool hasGridDepControl() const { return hasFeature("griddepcontrol"); }
  bool hasBF16() const { return hasFeature("bf16"); }
  bool hasMfma() const { return hasFeature("mfma"); }
  bool hasWmma() const { return hasFeature("wmma"); }
  bool supportsElementType(ElementType type) const;
  const MatrixInstr *lookupInstr(MatrixInstrKind kind) const;
  const TileCandidate *lookupCandidate(llvm::StringRef name) const;
  /// The same tile with its K/V stages copied by `pipeline` (tma_ws or
  /// cp_async_ws; docs/TileTables.md, "Copy engines"): the candidate whose
  /// fields other than name, reason and pipeline equal `cand`'s; null when
  /// the tables list none or `cand` is not warp-specialized.
  const TileCandidate *lookupCopyForm(const TileCandidate &cand,
                                      PipelineKind pipeline) const;
};

/// A named subset of kernels (e.g. "inference": forward, f16/bf16).
struct Profile {
  std::string name;
  std::string reason;
  llvm::SmallVector<Direction> directions;
  llvm::SmallVector<ElementType> dtypes;
  bool includes(Direction direction) const;
  bool includes(ElementType type) const;
};

/// A whole table: what TileTables.json holds.
struct TileTable {
  std::vector<ChipSpec> chips;
  std::vector<Profile> profiles;
  const ChipSpec *lookupChip(llvm::StringRef name) const;
  const Profile *lookupProfile(llvm::StringRef name) const;
};

/// The entry of `entries` (chips, profiles, candidates) called
/// `name`, or null.
template <typename T>
const T *findByName(llvm::ArrayRef<T> entries, llvm::StringRef name) {
  for (const T &e : entries)
    if (e.name == name)
      return &e;
  return nullptr;
}

/// "a, b, c": the entries' names, for diagnostics.
template <typename T> std::string joinNames(llvm::ArrayRef<T> entries) {
  std::string names;
  for (const T &e : entries)
    names += (names.empty() ? "" : ", ") + e.name;
  return names;
}

/// Parses and checks a table in the TileTables.json schema; the error names
/// the entry and field at fault.
llvm::Expected<TileTable> parseTileTable(llvm::StringRef json);

/// The embedded table, parsed on first use.
const TileTable &getTileTable();
/// The embedded table's JSON text.
llvm::StringRef getTileTableJSON();
const ChipSpec *lookupChip(llvm::StringRef name);
llvm::ArrayRef<ChipSpec> getAllChips();
const Profile *lookupProfile(llvm::StringRef name);
/// "sm_80, sm_86, ..." for diagnostics.
std::string getKnownChipNames();
/// The chips of one vendor, likewise ("gfx90a, gfx942, ...").
std::string getKnownChipNames(Vendor vendor);

/// What one attention op asks of a kernel.
struct AttentionProblem {
  ElementType elementType = ElementType::F16;
  int64_t headDim = 0;
  int64_t headDimV = 0;
  /// Static sequence lengths; nullopt when dynamic.
  std::optional<int64_t> seqQ, seqK;
  /// The length dynamic Sq and Sk are chosen for (a size hint): read by the
  /// size-hint rule only, never taken as a fact about the op.
  std::optional<int64_t> seqHint;
  /// A tuning file measured the tile at these lengths: the tables' size-hint
  /// rule (seqlen_min, a guess from earlier measurements) gives way.
  bool sizeMeasured = false;
  bool hasBias = false;
  MaskKind mask = MaskKind::None;
  bool wantsLse = false;
  bool hasSoftcap = false;
  Direction direction = Direction::Forward;
  /// A backward plan without atomics (its dQ pass keeps query rows in the
  /// main kernel's Q and dO buffers).
  bool deterministic = false;
  /// A backward plan that computes the bias gradient.
  bool biasGrad = false;
  /// Dropout (a backward plan's deterministic form depends on it).
  bool dropout = false;
  /// Packed variable-length batches or a KV cache (attn.attention's serving
  /// operands) instead of dense [B, H, S, D] tensors.
  bool servingLayout = false;
  /// A KV cache (seqlens_k, with or without a block table).
  bool kvCache = false;
  /// For calls TMA cannot describe (the cp.async fallback after a TMA
  /// variant): pipeline tma_ws is refused.
  bool noTensorMaps = false;
};

/// The problem an attn.attention / attn.attention_grad op poses, or failure
/// (with a diagnostic on the op) when its types are outside the table.
FailureOr<AttentionProblem> getAttentionProblem(Operation *op);

/// Whether `c`'s kernel for `problem` runs over a persistent grid
/// (ConfigAttr's persistent): dense batches of a mask the tile lists.
inline bool isPersistentKernel(const TileCandidate &c,
                               const AttentionProblem &problem) {
  return c.isPersistentFor(problem.mask) && !problem.servingLayout;
}

/// walksTiles of `c`'s kernel for `problem`.
inline bool walksTiles(const TileCandidate &c,
                       const AttentionProblem &problem) {
  return walksTiles(c.pipeline, isPersistentKernel(c, problem),
                    problem.servingLayout);
}

struct Verdict {
  const TileCandidate *candidate = nullptr;
  bool accepted = false;
  /// Why it was rejected (every failed check, "; "-separated), or why it is
  /// accepted.
  std::string reason;
  /// The numbers the checks computed, for the JSON export.
  int64_t smemBytes = 0;
  int64_t registers = 0;
};

/// Every candidate of `chip` with its verdict for `problem`, in priority
/// order (see docs/TileTables.md). With a profile, candidates and problems
/// outside it are rejected too.
llvm::SmallVector<Verdict> evaluateCandidates(const ChipSpec &chip,
                                              const AttentionProblem &problem,
                                              const Profile *profile = nullptr);

/// The verdict for one candidate (the checks of evaluateCandidates). The
/// resource checks are skipped when a decisive one (direction, profile,
/// dispatch, mask, implemented) already rejects it, unless `exhaustive`:
/// a forced candidate's error then names everything that is wrong.
Verdict evaluateCandidate(const ChipSpec &chip, const TileCandidate &candidate,
                          const AttentionProblem &problem,
                          const Profile *profile = nullptr,
                          bool exhaustive = false);

/// The first accepted candidate, or null.
const TileCandidate *selectCandidate(const ChipSpec &chip,
                                     const AttentionProblem &problem,
                                     const Profile *profile = nullptr);

/// The config of `candidate` for `problem` (whose mask and layout decide
/// whether its kernel is persistent: dense batches of a persistent mask).
ConfigAttr toConfigAttr(MLIRContext *context, const TileCandidate &candidate,
                        const AttentionProblem &problem);

/// One kernel of a chip's family: an element type, a head dim, a mask and
/// the candidate chosen for them.
struct FamilyMember {
  ElementType elementType;
  int64_t headDim;
  const TileCandidate *candidate;
  Direction direction = Direction::Forward;
  MaskKind mask = MaskKind::None;
};

/// The kernel family a bundle for `chip` and `profile` holds: for each
/// direction and element type of the profile, each head dim and each mask of
/// `masks` (every mask when empty), the first accepted candidate for a
/// problem with static, aligned sequence lengths (its aligned variant, when
/// there is one) and, when different, for dynamic sequence lengths.
/// Combinations nothing accepts are left out, and so is everything for an
/// unknown profile.
llvm::SmallVector<FamilyMember>
enumerateFamily(const ChipSpec &chip, llvm::StringRef profile,
                llvm::ArrayRef<int64_t> headDims,
                llvm::ArrayRef<MaskKind> masks = {});

} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_TARGET_TILETABLE_H
