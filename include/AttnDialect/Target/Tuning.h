//===- Tuning.h - size hints and tuning files -------------------*- C++ -*-===//
//
// A tile per size class of the sequence lengths, as Inductor compiles a
// kernel per size hint: from a tuning file measured on a GPU
// (bench/autotune.py) where it has entries, else from the tile tables at
// each size hint. See docs/Tuning.md.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNDIALECT_TARGET_TUNING_H
#define ATTNDIALECT_TARGET_TUNING_H

#include "AttnDialect/Target/TileTable.h"
#include <cstdint>
#include <limits>

namespace mlir {
namespace attn {

/// Sequence lengths [min, max], inclusive, of both Sq and Sk.
struct SeqlenRange {
  static constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();
  int64_t min = 1;
  int64_t max = kUnbounded;

  bool contains(int64_t n) const { return n >= min && n <= max; }
  bool isUnbounded() const { return max == kUnbounded; }
  /// "1..5792", "8193.." for diagnostics.
  std::string str() const;
};

/// The default size hints: decode-like, short, medium and long sequences.
inline constexpr int64_t kDefaultSizeHints[] = {1, 512, 4096, 16384};

/// One measured choice of a tuning file.
struct TuningEntry {
  Direction direction = Direction::Forward;
  ElementType elementType = ElementType::BF16;
  int64_t headDim = 0, headDimV = 0;
  MaskKind mask = MaskKind::None;
  SeqlenRange range;
  const TileCandidate *candidate = nullptr;
  /// The fewest workgroups per multiprocessor among the measured grids (0:
  /// not recorded): a grid that fills the GPU less may rank tiles otherwise
  /// (a wave's tail), so the tile is used only from this fill on.
  int64_t minBlocksPerSm = 0;

  /// Whether the entry is for `problem`'s direction, dtype, head dims and
  /// mask (at any length).
  bool matches(const AttentionProblem &problem) const;
  /// "bf16 D=128 mask none S 1..5792", for diagnostics.
  std::string describe() const;
};

/// A tuning file, checked against the tile tables of its chip.
struct TuningFile {
  const ChipSpec *chip = nullptr;
  std::string path;
  std::string device;
  std::string toolchain;
  std::vector<TuningEntry> entries;

  /// The entries for `problem`'s combination, by ascending range.
  llvm::SmallVector<const TuningEntry *>
  lookup(const AttentionProblem &problem) const;
  /// The entry for `problem` whose range holds its lengths (static Sq and
  /// Sk, else its size hint), or null.
  const TuningEntry *lookupLength(const AttentionProblem &problem) const;
};

/// "LLVM 22.1.8": the toolchain bundles record (bundle.json's `toolchain`)
/// and tuning files are compared with.
std::string getToolchainName();

/// Parses a tuning file (`path` names it in errors). Every entry's config
/// goes through the tables' checks for its problem; an unknown chip or
/// candidate, a config that differs from the table's or that the tables
/// reject is an error naming the entry. A toolchain other than this one's
/// adds a warning to `warnings`.
llvm::Expected<TuningFile>
parseTuningFile(llvm::StringRef json, llvm::StringRef path,
                llvm::SmallVectorImpl<std::string> &warnings);
llvm::Expected<TuningFile>
loadTuningFile(llvm::StringRef path,
               llvm::SmallVectorImpl<std::string> &warnings);

/// The tuning file built in for `chip` (lib/Target/Tunings, measured on one
/// GPU of the chip), or null. The build checks them (attn-tiles --validate).
const TuningFile *getBuiltinTuning(const ChipSpec &chip);
/// Every built-in tuning file parsed, or the first error.
llvm::Error checkBuiltinTunings();

/// The tile for `problem`: its tuning entry's (the aligned twin when the
/// tables accept that), when `tuning` has one for its lengths and the tile
/// fits the problem, else the tables' choice (which reads the size hint).
const TileCandidate *selectTunedCandidate(const ChipSpec &chip,
                                          const AttentionProblem &problem,
                                          const Profile *profile,
                                          const TuningFile *tuning);

/// The discardable attribute attn-specialize-sizes puts on each copy of an
/// op it makes for a size class: {seqlen_min, seqlen_max (absent:
/// unbounded), min_blocks_per_sm (absent: any grid)}. The GPU lowerings
/// turn it into the kernel's bundle conditions.
inline constexpr llvm::StringLiteral kSizeClassAttrName = "attn.size_class";

/// One size class: the lengths `range` and the tile chosen for them.
struct SizeClass {
  SeqlenRange range;
  const TileCandidate *candidate = nullptr;
  /// The tuning entry's minBlocksPerSm (0 for the tables' choices).
  int64_t minBlocksPerSm = 0;
};

/// The size classes of `problem` (dynamic lengths) whose tile differs from
/// `general` (the tile for any length): from `tuning`'s entries for its
/// combination when it has any, else the tables' choice at each of `hints`
/// (each standing for the lengths up to the geometric midpoints with its
/// neighbours; a candidate's seqlen_min raises its start). Tiles that do not
/// fit `problem` are left out (the general tile serves those lengths);
/// adjacent classes of one tile are merged, and a tile keeps only its first
/// class (one kernel per tile): the later ones go to `dropped` when given
/// (their lengths fall to the general tile).
llvm::SmallVector<SizeClass>
getSizeClasses(const ChipSpec &chip, const AttentionProblem &problem,
               const TileCandidate *general, llvm::ArrayRef<int64_t> hints,
               const TuningFile *tuning, const Profile *profile = nullptr,
               llvm::SmallVectorImpl<SizeClass> *dropped = nullptr);

} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_TARGET_TUNING_H
