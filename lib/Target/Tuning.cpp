//===- Tuning.cpp - size hints and tuning files -----------------*- C++ -*-===//
//
// The tuning-file reader (docs/Tuning.md) and the size classes attn-bundle
// writes variants for. A tuned tile is only ever a choice among the tables'
// candidates: the reader runs the tables' checks on every entry.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Target/Tuning.h"
#include "FieldReader.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include <cmath>

using namespace mlir;
using namespace mlir::attn;
namespace json = llvm::json;

static constexpr llvm::StringLiteral kSchema = "attn-tuning";
static constexpr int64_t kVersion = 1;

std::string SeqlenRange::str() const {
  return isUnbounded() ? llvm::formatv("{0}..", min).str()
                       : llvm::formatv("{0}..{1}", min, max).str();
}

bool TuningEntry::matches(const AttentionProblem &problem) const {
  return direction == problem.direction && elementType == problem.elementType &&
         headDim == problem.headDim && headDimV == problem.headDimV &&
         mask == problem.mask;
}

std::string TuningEntry::describe() const {
  std::string d =
      llvm::formatv("{0}{1} D={2}",
                    direction == Direction::Backward ? "backward " : "",
                    stringifyElementType(elementType).lower(), headDim)
          .str();
  if (headDimV != headDim)
    d += " Dv=" + std::to_string(headDimV);
  return d + " mask " + stringifyMaskKind(mask).str() + " S " + range.str();
}

llvm::SmallVector<const TuningEntry *>
TuningFile::lookup(const AttentionProblem &problem) const {
  llvm::SmallVector<const TuningEntry *> found;
  for (const TuningEntry &e : entries)
    if (e.matches(problem))
      found.push_back(&e);
  llvm::sort(found, [](const TuningEntry *a, const TuningEntry *b) {
    return a->range.min < b->range.min;
  });
  return found;
}

const TuningEntry *
TuningFile::lookupLength(const AttentionProblem &problem) const {
  for (const TuningEntry *e : lookup(problem)) {
    if (problem.seqQ && problem.seqK) {
      if (e->range.contains(*problem.seqQ) && e->range.contains(*problem.seqK))
        return e;
    } else if (problem.seqHint && e->range.contains(*problem.seqHint)) {
      return e;
    }
  }
  return nullptr;
}

std::string mlir::attn::getToolchainName() {
  return "LLVM " LLVM_VERSION_STRING;
}

/// `problem` for a tile measured at its lengths: the size-hint rule gives
/// way to the measurement.
static AttentionProblem asMeasured(AttentionProblem problem) {
  problem.sizeMeasured = true;
  return problem;
}

namespace {
/// Reads one entry; `error` gets the first problem.
TuningEntry parseEntry(const ChipSpec &chip, const json::Value &value,
                       const std::string &where, std::string &error) {
  TuningEntry e;
  FieldReader r(&value, where, error);
  std::string dir = r.getString("direction");
  std::string dtype = r.getString("dtype");
  e.headDim = r.getInt("head_dim");
  e.headDimV = r.getInt("head_dim_v", /*required=*/false, e.headDim);
  std::string mask = r.getString("mask");
  e.range.min = r.getInt("seqlen_min");
  e.range.max =
      r.getInt("seqlen_max", /*required=*/false, SeqlenRange::kUnbounded);
  e.minBlocksPerSm = r.getInt("min_blocks_per_sm", /*required=*/false, 0);
  const json::Value *config = r.get("config", /*required=*/true);
  // The evidence: for people and the next tuning run, not the compiler.
  r.get("measured", /*required=*/false);
  r.get("runner_up", /*required=*/false);
  r.finish();
  if (!r.ok())
    return e;
  if (std::optional<Direction> d = symbolizeDirection(dir))
    e.direction = *d;
  else
    r.fail("direction '" + dir + "': expected 'forward' or 'backward'");
  if (std::optional<ElementType> t = symbolizeElementType(dtype))
    e.elementType = *t;
  else
    r.fail("dtype '" + dtype + "': expected f16, bf16 or f32");
  if (std::optional<MaskKind> m = symbolizeMaskKind(mask))
    e.mask = *m;
  else
    r.fail("mask '" + mask +
           "': expected none, causal, causal_bottom_right or sliding_window");
  if (e.headDim <= 0 || e.headDimV <= 0)
    r.fail("head_dim and head_dim_v must be positive");
  if (e.minBlocksPerSm < 0)
    r.fail("min_blocks_per_sm must not be negative");
  // Bundle conditions hold lengths up to 2^30 (docs/BundleFormat.md).
  constexpr int64_t kMaxLength = int64_t(1) << 30;
  bool bounded = e.range.max != SeqlenRange::kUnbounded;
  if (e.range.min < 1 || e.range.max < e.range.min ||
      e.range.min > kMaxLength || (bounded && e.range.max > kMaxLength))
    r.fail(llvm::formatv("seqlen_min {0} and seqlen_max {1}: expected "
                         "1 <= seqlen_min <= seqlen_max <= {2}",
                         e.range.min, bounded ? e.range.max : kMaxLength,
                         kMaxLength));
  if (e.minBlocksPerSm > (int64_t(1) << 20))
    r.fail("min_blocks_per_sm: at most 1048576");
  if (!r.ok())
    return e;

  FieldReader c(config, where + ".config", error);
  std::string name = c.getString("candidate");
  int64_t blockM = c.getInt("block_m"), blockN = c.getInt("block_n");
  int64_t warps = c.getInt("warps"), stages = c.getInt("stages");
  c.finish();
  if (!c.ok())
    return e;
  e.candidate = chip.lookupCandidate(name);
  if (!e.candidate) {
    c.fail("candidate '" + name + "' is not in the " + chip.name +
           " table (the tables changed since the file was measured?)");
    return e;
  }
  auto same = [&](llvm::StringRef field, int64_t file, int64_t table) {
    if (file != table)
      c.fail(llvm::formatv("{0} {1}, but the table's '{2}' has {3}: the "
                           "tables changed since the file was measured",
                           field, file, name, table));
  };
  same("block_m", blockM, e.candidate->blockM);
  same("block_n", blockN, e.candidate->blockN);
  same("warps", warps, e.candidate->warps);
  same("stages", stages, e.candidate->stages);
  if (!c.ok())
    return e;

  // The problem the tile was measured on: dynamic lengths (the bundles'
  // kernels), lse written, no bias.
  AttentionProblem p;
  p.direction = e.direction;
  p.elementType = e.elementType;
  p.headDim = e.headDim;
  p.headDimV = e.headDimV;
  p.mask = e.mask;
  p.wantsLse = true;
  p.seqHint = e.range.min;
  Verdict v = evaluateCandidate(chip, *e.candidate, asMeasured(p),
                                /*profile=*/nullptr, /*exhaustive=*/true);
  if (!v.accepted)
    c.fail("the " + chip.name + " tables reject candidate '" + name + "' for " +
           e.describe() + ": " + v.reason);
  // An entry picks a tile; its copy engine is the tables' first choice: the
  // TMA form where the tables list one (attn-bundle keeps the cp.async form
  // after it for calls TMA cannot describe).
  if (const TileCandidate *tma =
          chip.lookupCopyForm(*e.candidate, PipelineKind::TmaWarpSpecialized))
    e.candidate = tma;
  return e;
}
} // namespace

llvm::Expected<TuningFile>
mlir::attn::parseTuningFile(llvm::StringRef text, llvm::StringRef path,
                            llvm::SmallVectorImpl<std::string> &warnings) {
  auto fail = [&](const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": " + msg);
  };
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed)
    return fail("not JSON: " + llvm::toString(parsed.takeError()));
  TuningFile file;
  file.path = path.str();
  std::string error;
  FieldReader top(&*parsed, path.str(), error);
  std::string schema = top.getString("schema");
  int64_t version = top.getInt("version");
  std::string chipName = top.getString("chip");
  file.device = top.getString("device", /*required=*/false);
  file.toolchain = top.getString("toolchain");
  for (llvm::StringRef info : {"date", "command", "method"})
    top.getString(info, /*required=*/false);
  const json::Value *entries = top.get("entries", /*required=*/true);
  top.finish();
  if (!top.ok())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
  if (schema != kSchema)
    return fail("schema '" + schema + "': expected '" + kSchema + "'");
  if (version < 1 || version > kVersion)
    return fail(llvm::formatv("version {0}: this reader knows 1 to {1}",
                              version, kVersion));
  file.chip = lookupChip(chipName);
  if (!file.chip)
    return fail("unknown chip '" + chipName +
                "'; known chips: " + getKnownChipNames());
  if (file.toolchain != getToolchainName())
    warnings.push_back(
        (path + ": measured with kernels of '" + file.toolchain +
         "', this is '" + getToolchainName() +
         "': the kernels and their timings may have changed since "
         "(re-run bench/autotune.py); its entries are used as they are")
            .str());
  const json::Array *list = entries->getAsArray();
  if (!list)
    return fail("field 'entries': expected a list");
  for (auto [i, value] : llvm::enumerate(*list)) {
    std::string where = llvm::formatv("{0}: entries[{1}]", path, i).str();
    TuningEntry e = parseEntry(*file.chip, value, where, error);
    if (!error.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
    for (const TuningEntry &other : file.entries)
      if (other.direction == e.direction &&
          other.elementType == e.elementType && other.headDim == e.headDim &&
          other.headDimV == e.headDimV && other.mask == e.mask &&
          other.range.min <= e.range.max && e.range.min <= other.range.max)
        return fail(llvm::formatv("entries[{0}] ({1}) overlaps an earlier "
                                  "entry ({2})",
                                  i, e.describe(), other.describe()));
    file.entries.push_back(std::move(e));
  }
  return file;
}

llvm::Expected<TuningFile>
mlir::attn::loadTuningFile(llvm::StringRef path,
                           llvm::SmallVectorImpl<std::string> &warnings) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "cannot read tuning file '" + path +
                                       "': " + buffer.getError().message());
  return parseTuningFile((*buffer)->getBuffer(), path, warnings);
}

namespace {
struct EmbeddedTuning {
  const char *name;
  const char *json;
};
#include "Tunings.inc"
} // namespace

/// The built-in files, each parsed (a warning, such as another toolchain,
/// is not an error for them).
static std::vector<llvm::Expected<TuningFile>> parseBuiltinTunings() {
  std::vector<llvm::Expected<TuningFile>> files;
  for (const EmbeddedTuning &t : kEmbeddedTunings) {
    llvm::SmallVector<std::string> warnings;
    files.push_back(parseTuningFile(
        t.json, (llvm::Twine("built-in tuning file ") + t.name).str(),
        warnings));
  }
  return files;
}

llvm::Error mlir::attn::checkBuiltinTunings() {
  for (llvm::Expected<TuningFile> &file : parseBuiltinTunings())
    if (!file)
      return file.takeError();
  return llvm::Error::success();
}

const TuningFile *mlir::attn::getBuiltinTuning(const ChipSpec &chip) {
  // Parsed on first use; the build checked them, so failing here is a bug.
  static const std::vector<TuningFile> files = [] {
    std::vector<TuningFile> parsed;
    for (llvm::Expected<TuningFile> &file : parseBuiltinTunings()) {
      if (!file)
        llvm::report_fatal_error(llvm::Twine("invalid built-in tuning: ") +
                                 llvm::toString(file.takeError()));
      parsed.push_back(std::move(*file));
    }
    return parsed;
  }();
  for (const TuningFile &file : files)
    if (file.chip == &chip)
      return &file;
  return nullptr;
}

const TileCandidate *mlir::attn::selectTunedCandidate(
    const ChipSpec &chip, const AttentionProblem &problem,
    const Profile *profile, const TuningFile *tuning) {
  const TuningEntry *entry =
      tuning && tuning->chip == &chip ? tuning->lookupLength(problem) : nullptr;
  if (entry) {
    AttentionProblem p = asMeasured(problem);
    // Static lengths the aligned twin of the tile serves take it: the same
    // tile without tail masking.
    if (const TileCandidate *aligned =
            chip.lookupCandidate(entry->candidate->name + "_aligned"))
      if (evaluateCandidate(chip, *aligned, p, profile).accepted)
        return aligned;
    if (evaluateCandidate(chip, *entry->candidate, p, profile).accepted)
      return entry->candidate;
  }
  return selectCandidate(chip, problem, profile);
}

/// floor(sqrt(a * b)): where the lengths of two size hints meet.
static int64_t geometricMidpoint(int64_t a, int64_t b) {
  auto r = static_cast<int64_t>(std::sqrt(double(a) * double(b)));
  while (r * r > a * b)
    --r;
  while ((r + 1) * (r + 1) <= a * b)
    ++r;
  return r;
}

llvm::SmallVector<SizeClass> mlir::attn::getSizeClasses(
    const ChipSpec &chip, const AttentionProblem &problem,
    const TileCandidate *general, llvm::ArrayRef<int64_t> hints,
    const TuningFile *tuning, const Profile *profile,
    llvm::SmallVectorImpl<SizeClass> *dropped) {
  llvm::SmallVector<SizeClass> classes;
  llvm::SmallVector<const TuningEntry *> entries;
  if (tuning && tuning->chip == &chip)
    entries = tuning->lookup(problem);
  if (!entries.empty()) {
    for (const TuningEntry *e : entries) {
      AttentionProblem p = asMeasured(problem);
      p.seqHint = e->range.min;
      if (evaluateCandidate(chip, *e->candidate, p, profile).accepted)
        classes.push_back({e->range, e->candidate, e->minBlocksPerSm});
    }
  } else {
    llvm::SmallVector<int64_t> sorted(hints);
    llvm::sort(sorted);
    sorted.erase(llvm::unique(sorted), sorted.end());
    llvm::erase_if(sorted, [](int64_t h) { return h < 1; });
    for (auto [i, hint] : llvm::enumerate(sorted)) {
      SeqlenRange range;
      if (i > 0)
        range.min = geometricMidpoint(sorted[i - 1], hint) + 1;
      if (i + 1 < sorted.size())
        range.max = geometricMidpoint(hint, sorted[i + 1]);
      AttentionProblem p = problem;
      p.seqHint = hint;
      const TileCandidate *c = selectCandidate(chip, p, profile);
      if (!c)
        continue;
      range.min = std::max(range.min, c->seqlenMin);
      if (range.min <= range.max)
        classes.push_back({range, c});
    }
  }
  // Adjacent classes of one tile are one range, measured down to the
  // fewest workgroups per SM of either (as autotune.py merges lengths; 0,
  // any grid, stays 0).
  llvm::SmallVector<SizeClass> merged;
  for (const SizeClass &c : classes) {
    if (!merged.empty() && merged.back().candidate == c.candidate &&
        merged.back().range.max != SeqlenRange::kUnbounded &&
        merged.back().range.max + 1 == c.range.min) {
      merged.back().range.max = c.range.max;
      merged.back().minBlocksPerSm =
          std::min(merged.back().minBlocksPerSm, c.minBlocksPerSm);
      continue;
    }
    merged.push_back(c);
  }
  // The general tile serves its lengths without a condition; a kernel has
  // one range.
  llvm::SmallVector<SizeClass> out;
  for (const SizeClass &c : merged) {
    if (c.candidate == general)
      continue;
    if (llvm::none_of(out, [&](const SizeClass &o) {
          return o.candidate == c.candidate;
        }))
      out.push_back(c);
    else if (dropped)
      dropped->push_back(c);
  }
  return out;
}
