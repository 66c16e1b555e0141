//===- TileTableParser.cpp - TileTables.json to C++ structs -----*- C++ -*-===//
//
// The one validator of the table's schema: the build runs it on the embedded
// table (attn-tiles --validate), and tables given on the command line
// (attn-tiles --table) go through it too. Errors name the entry and field at
// fault (FieldReader.h).
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Target/TileTable.h"
#include "FieldReader.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::attn;
namespace json = llvm::json;

namespace {
TileCandidate parseCandidate(const json::Value &v, const std::string &where,
                             std::string &error) {
  FieldReader r(&v, where, error);
  TileCandidate c;
  c.name = r.getString("name");
  c.reason = r.getString("reason");
  c.blockM = r.getInt("block_m");
  c.blockN = r.getInt("block_n");
  c.warps = r.getInt("warps");
  c.stages = r.getInt("stages");
  std::string pipeline = r.getString("pipeline");
  if (std::optional<PipelineKind> p = symbolizePipelineKind(pipeline))
    c.pipeline = *p;
  else
    r.fail("field 'pipeline': unknown pipeline '" + pipeline +
           "' (known: simple, cp_async, tma_ws, lds_double, cp_async_ws)");
  c.accInRegisters = r.getBool("acc_in_registers");
  std::string mma = r.getString("mma");
  if (std::optional<MatrixInstrKind> kind = symbolizeMatrixInstrKind(mma))
    c.mma = *kind;
  else
    r.fail("field 'mma': unknown matrix instruction '" + mma + "'");
  c.dtypes = r.getElementTypes("dtypes");
  c.headDimMax = r.getInt("head_dim_max");
  c.aligned = false;
  bool alignedVariant = r.getBool("aligned_variant", false, false);
  c.implemented = r.getBool("implemented", false, true);
  c.supportsBias = r.getBool("supports_bias", false, true);
  std::string dir = r.getString("direction", false);
  if (!dir.empty()) {
    if (std::optional<Direction> d = symbolizeDirection(dir))
      c.direction = *d;
    else
      r.fail("field 'direction': expected 'forward' or 'backward'");
  }
  c.onlyOn = r.getStrings("only_on", false);
  for (const std::string &m : r.getStrings("masks", false)) {
    if (std::optional<MaskKind> kind = symbolizeMaskKind(m))
      c.masks.push_back(*kind);
    else
      r.fail("field 'masks': unknown mask '" + m +
             "' (known: none, causal, causal_bottom_right, sliding_window)");
  }
  c.priority = r.getInt("priority", false, 0);
  c.seqlenMin = r.getInt("seqlen_min", false, 0);
  c.orderedDqSeqlenMin = r.getInt("ordered_dq_seqlen_min", false, 0);
  c.kvCacheSeqlenQMax = r.getInt("kv_cache_seqlen_q_max", false, 0);
  c.headSplit = r.getInt("head_split", false, 1);
  c.dqPass = r.getBool("dq_pass", false, false);
  for (const std::string &m : r.getStrings("persistent_masks", false)) {
    if (std::optional<MaskKind> kind = symbolizeMaskKind(m))
      c.persistentMasks.push_back(*kind);
    else
      r.fail("field 'persistent_masks': unknown mask '" + m + "'");
  }
  c.overlapSoftmax = r.getBool("overlap_softmax", false, false);
  r.finish();
  for (int64_t f : {c.blockM, c.blockN, c.warps, c.stages, c.headDimMax})
    if (f <= 0)
      r.fail("block_m, block_n, warps, stages and head_dim_max must be "
             "positive");
  if (c.seqlenMin < 0)
    r.fail("seqlen_min must not be negative");
  if (c.orderedDqSeqlenMin < 0 ||
      (c.orderedDqSeqlenMin &&
       (c.direction != Direction::Backward || !isWarpSpecialized(c.pipeline))))
    r.fail("ordered_dq_seqlen_min must not be negative, and 0 unless the "
           "tile is a backward one with a producer warpgroup");
  if (c.kvCacheSeqlenQMax < 0 ||
      (c.kvCacheSeqlenQMax && c.direction != Direction::Forward))
    r.fail("kv_cache_seqlen_q_max must not be negative, and 0 unless the "
           "direction is forward");
  if (c.headSplit < 1 || c.headSplit > 4 ||
      (c.headSplit > 1 && c.direction != Direction::Backward))
    r.fail("head_split must be in [1, 4], and 1 unless the direction is "
           "backward");
  if (c.dqPass && (c.direction != Direction::Backward || c.headSplit > 1))
    r.fail("dq_pass is for backward tiles without head_split (the dQ pass "
           "keeps whole rows of dQ)");
  if (!c.persistentMasks.empty() &&
      (c.direction != Direction::Forward ||
       c.pipeline != PipelineKind::TmaWarpSpecialized))
    r.fail("persistent_masks is for forward tiles of pipeline tma_ws (its "
           "producer loads the next tile's Q and K/V by tensor maps)");
  if (c.overlapSoftmax && (c.direction != Direction::Forward ||
                           c.pipeline != PipelineKind::TmaWarpSpecialized))
    r.fail("overlap_softmax is for forward tiles of pipeline tma_ws (K and V "
           "get mbarriers of their own in its tensor-map ring)");
  // Stash the flag in `aligned` for the caller to expand.
  c.aligned = alignedVariant;
  return c;
}

MatrixInstr parseInstr(const json::Value &v, const std::string &where,
                       std::string &error) {
  FieldReader r(&v, where, error);
  MatrixInstr i;
  std::string name = r.getString("name");
  if (std::optional<MatrixInstrKind> kind = symbolizeMatrixInstrKind(name))
    i.kind = *kind;
  else
    r.fail("field 'name': unknown matrix instruction '" + name + "'");
  i.reason = r.getString("reason");
  i.m = r.getInt("m");
  i.n = r.getInt("n");
  i.k = r.getInt("k");
  i.operandTypes = r.getElementTypes("operand_types");
  std::string acc = r.getString("acc_type");
  if (std::optional<ElementType> t = symbolizeElementType(acc))
    i.accType = *t;
  else
    r.fail("field 'acc_type': unknown element type '" + acc + "'");
  i.rowsPerWarp = r.getInt("rows_per_warp");
  i.maxRowsPerWarp = r.getInt("max_rows_per_warp", false, i.rowsPerWarp);
  i.blockNMultiple = r.getInt("block_n_multiple");
  i.blockNMax = r.getInt("block_n_max", false, 0);
  i.blockNAllowed = r.getInts("block_n_allowed", false);
  i.headDimMultiple = r.getInt("head_dim_multiple");
  i.headDimMax = r.getInt("head_dim_max");
  i.minMmaPerIteration = r.getInt("min_mma_per_iteration", false, 0);
  i.maxPaddingPercent = r.getInt("max_padding_percent", false, 100);
  i.sharedOperands = r.getBool("shared_operands", false, false);
  r.finish();
  if (i.m <= 0 || i.n <= 0 || i.k <= 0 || i.blockNMultiple <= 0 ||
      i.headDimMultiple <= 0)
    r.fail("m, n, k, block_n_multiple and head_dim_multiple must be positive");
  if (i.maxPaddingPercent < 0 || i.maxPaddingPercent > 100)
    r.fail("max_padding_percent must be in [0, 100]");
  return i;
}

using SetMap = llvm::StringMap<const json::Array *>;

bool parseSets(FieldReader &top, llvm::StringRef key, SetMap &sets) {
  const json::Value *v = top.get(key, true);
  if (!v)
    return false;
  const json::Object *obj = v->getAsObject();
  if (!obj) {
    top.fail("field '" + key + "': expected an object of lists");
    return false;
  }
  for (const auto &kv : *obj) {
    const json::Array *arr = kv.second.getAsArray();
    if (!arr) {
      top.fail(key + "." + kv.first.str() + ": expected a list");
      return false;
    }
    sets[kv.first.str()] = arr;
  }
  return true;
}

ChipSpec parseChip(const json::Value &v, const std::string &where,
                   const SetMap &instrSets, const SetMap &candSets,
                   std::string &error) {
  FieldReader r(&v, where, error);
  ChipSpec chip;
  chip.name = r.getString("name");
  std::string vendor = r.getString("vendor");
  if (std::optional<Vendor> v = symbolizeVendor(vendor))
    chip.vendor = *v;
  else
    r.fail("field 'vendor': expected 'nvidia', 'amd' or 'host'");
  chip.reason = r.getString("reason");
  chip.warpSize = r.getInt("warp_size");
  chip.maxThreadsPerBlock = r.getInt("max_threads_per_block");
  chip.smemDefaultBytes = r.getInt("smem_default_bytes");
  chip.smemMaxBytes = r.getInt("smem_max_bytes");
  chip.smemRowPadElems = r.getInt("smem_row_pad_elems");
  chip.regsPerThreadMax = r.getInt("regs_per_thread_max");
  chip.regsPerBlockMax = r.getInt("regs_per_block_max");
  chip.regsOverhead = r.getInt("regs_overhead");
  chip.features = r.getStrings("features");
  chip.dtypes = r.getElementTypes("dtypes");
  chip.dtypeNote = r.getString("dtype_note", false);
  chip.headDimMax = r.getInt("head_dim_max");
  llvm::SmallVector<std::string> iSetNames = r.getStrings("instruction_sets");
  llvm::SmallVector<std::string> cSetNames = r.getStrings("candidate_sets");
  r.finish();
  if (chip.warpSize <= 0)
    r.fail("field 'warp_size' must be positive");

  for (const std::string &set : iSetNames) {
    auto it = instrSets.find(set);
    if (it == instrSets.end()) {
      r.fail("unknown instruction set '" + set + "'");
      continue;
    }
    for (auto [idx, e] : llvm::enumerate(*it->second))
      chip.instructions.push_back(parseInstr(
          e, llvm::formatv("instruction_sets.{0}[{1}]", set, idx).str(),
          error));
  }
  llvm::StringSet<> names;
  auto add = [&](TileCandidate c) {
    c.tableIndex = chip.candidates.size();
    if (!names.insert(c.name).second)
      r.fail("duplicate candidate name '" + c.name + "'");
    if (!chip.lookupInstr(c.mma))
      r.fail("candidate '" + c.name + "' uses matrix instruction '" +
             stringifyMatrixInstrKind(c.mma) + "' that the chip does not list");
    chip.candidates.push_back(std::move(c));
  };
  for (const std::string &set : cSetNames) {
    auto it = candSets.find(set);
    if (it == candSets.end()) {
      r.fail("unknown candidate set '" + set + "'");
      continue;
    }
    for (auto [idx, e] : llvm::enumerate(*it->second)) {
      TileCandidate c = parseCandidate(
          e, llvm::formatv("candidate_sets.{0}[{1}]", set, idx).str(), error);
      bool alignedVariant = c.aligned;
      c.aligned = false;
      if (alignedVariant) {
        TileCandidate a = c;
        a.name += "_aligned";
        a.aligned = true;
        add(std::move(a));
      }
      add(std::move(c));
    }
  }
  return chip;
}

Profile parseProfile(llvm::StringRef name, const json::Value &v,
                     std::string &error) {
  FieldReader r(&v, ("profiles." + name).str(), error);
  Profile p;
  p.name = name.str();
  p.reason = r.getString("reason");
  for (const std::string &d : r.getStrings("directions")) {
    if (std::optional<Direction> dir = symbolizeDirection(d))
      p.directions.push_back(*dir);
    else
      r.fail("field 'directions': unknown direction '" + d + "'");
  }
  p.dtypes = r.getElementTypes("dtypes");
  r.finish();
  return p;
}
} // namespace

/// The first key that appears twice in one object of `text` (valid JSON),
/// with its line. llvm::json::parse keeps one of the two silently.
static std::optional<std::string> findDuplicateKey(llvm::StringRef text) {
  // One entry per open object or array: the object's keys so far.
  llvm::SmallVector<std::optional<llvm::StringSet<>>> scopes;
  bool expectKey = false;
  int64_t line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
    } else if (c == '{') {
      scopes.emplace_back(llvm::StringSet<>());
      expectKey = true;
    } else if (c == '[') {
      scopes.emplace_back(std::nullopt);
      expectKey = false;
    } else if (c == '}' || c == ']') {
      if (!scopes.empty())
        scopes.pop_back();
      expectKey = false;
    } else if (c == ',') {
      expectKey = !scopes.empty() && scopes.back().has_value();
    } else if (c == '"') {
      size_t start = ++i;
      while (i < text.size() && text[i] != '"')
        i += text[i] == '\\' ? 2 : 1;
      if (expectKey && !scopes.empty() && scopes.back()) {
        llvm::StringRef key = text.slice(start, i);
        if (!scopes.back()->insert(key).second)
          return llvm::formatv("line {0}: duplicate key '{1}' in one object",
                               line, key)
              .str();
      }
      expectKey = false;
    }
  }
  return std::nullopt;
}

llvm::Expected<TileTable> mlir::attn::parseTileTable(llvm::StringRef text) {
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed)
    return parsed.takeError();
  if (std::optional<std::string> dup = findDuplicateKey(text))
    return llvm::createStringError(*dup);
  std::string error;
  FieldReader top(&*parsed, "table", error);
  if (top.getString("schema") != "attn-tile-tables" ||
      top.getInt("version") != 1)
    top.fail("expected schema 'attn-tile-tables' version 1");
  (void)top.getString("reason");
  TileTable table;
  SetMap instrSets, candSets;
  if (const json::Value *profiles = top.get("profiles", true)) {
    if (const json::Object *obj = profiles->getAsObject()) {
      for (const auto &kv : *obj)
        table.profiles.push_back(parseProfile(kv.first, kv.second, error));
      // json::Object is unordered; keep profiles sorted for stable output.
      llvm::sort(table.profiles, [](const Profile &a, const Profile &b) {
        return a.name < b.name;
      });
    } else {
      top.fail("field 'profiles': expected an object");
    }
  }
  parseSets(top, "instruction_sets", instrSets);
  parseSets(top, "candidate_sets", candSets);
  const json::Value *chips = top.get("chips", true);
  top.finish();
  if (!error.empty())
    return llvm::createStringError(error);
  const json::Array *chipArr = chips->getAsArray();
  if (!chipArr)
    return llvm::createStringError("table: field 'chips': expected a list");
  llvm::StringSet<> chipNames;
  for (auto [idx, c] : llvm::enumerate(*chipArr)) {
    std::string where = llvm::formatv("chips[{0}]", idx).str();
    table.chips.push_back(parseChip(c, where, instrSets, candSets, error));
    if (!chipNames.insert(table.chips.back().name).second && error.empty())
      error = where + ": duplicate chip name '" + table.chips.back().name + "'";
  }
  for (const ChipSpec &chip : table.chips)
    for (const TileCandidate &c : chip.candidates)
      for (const std::string &other : c.onlyOn)
        if (!chipNames.contains(other) && error.empty())
          error = "candidate '" + c.name + "': only_on names unknown chip '" +
                  other + "'";
  if (!error.empty())
    return llvm::createStringError(error);
  return table;
}
