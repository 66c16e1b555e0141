//===- TileTable.cpp - the embedded tile table and its lookups --*- C++ -*-===//

#include "AttnDialect/Target/TileTable.h"
#include "AttnDialect/IR/AttnOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include <tuple>

using namespace mlir;
using namespace mlir::attn;

// TileTables.json as a NUL-terminated char array, generated at build time.
static const char kTileTablesJSON[] = {
#include "TileTables.json.inc"
};

std::optional<ElementType> mlir::attn::getElementType(Type type) {
  if (type.isF16())
    return ElementType::F16;
  if (type.isBF16())
    return ElementType::BF16;
  if (type.isF32())
    return ElementType::F32;
  return std::nullopt;
}

int64_t mlir::attn::getElementBytes(ElementType type) {
  return type == ElementType::F32 ? 4 : 2;
}

bool ChipSpec::hasFeature(llvm::StringRef feature) const {
  return llvm::is_contained(features, feature);
}

bool ChipSpec::supportsElementType(ElementType type) const {
  return llvm::is_contained(dtypes, type);
}

const MatrixInstr *ChipSpec::lookupInstr(MatrixInstrKind kind) const {
  auto it = llvm::find_if(instructions,
                          [&](const MatrixInstr &i) { return i.kind == kind; });
  return it == instructions.end() ? nullptr : &*it;
}

const TileCandidate *ChipSpec::lookupCandidate(llvm::StringRef cand) const {
  return findByName(llvm::ArrayRef<TileCandidate>(candidates), cand);
}

const TileCandidate *ChipSpec::lookupCopyForm(const TileCandidate &cand,
                                              PipelineKind pipeline) const {
  if (!isWarpSpecialized(cand.pipeline) || !isWarpSpecialized(pipeline))
    return nullptr;
  if (cand.pipeline == pipeline)
    return &cand;
  auto tile = [](const TileCandidate &c) {
    return std::make_tuple(
        c.direction, c.blockM, c.blockN, c.warps, c.stages, c.accInRegisters,
        c.mma, c.dtypes, c.headDimMax, c.aligned, c.supportsBias, c.onlyOn,
        c.masks, c.seqlenMin, c.kvCacheSeqlenQMax, c.headSplit, c.dqPass);
  };
  auto it = llvm::find_if(candidates, [&](const TileCandidate &c) {
    return c.pipeline == pipeline && c.implemented && tile(c) == tile(cand);
  });
  return it == candidates.end() ? nullptr : &*it;
}

bool Profile::includes(Direction direction) const {
  return llvm::is_contained(directions, direction);
}

bool Profile::includes(ElementType type) const {
  return llvm::is_contained(dtypes, type);
}

const ChipSpec *TileTable::lookupChip(llvm::StringRef name) const {
  return findByName(llvm::ArrayRef<ChipSpec>(chips), name);
}

const Profile *TileTable::lookupProfile(llvm::StringRef name) const {
  return findByName(llvm::ArrayRef<Profile>(profiles), name);
}

llvm::StringRef mlir::attn::getTileTableJSON() {
  return llvm::StringRef(kTileTablesJSON);
}

const TileTable &mlir::attn::getTileTable() {
  // Parsed on first use; the build validated the text, so failing here is a
  // bug in the validator or the parser, not in user input.
  static const TileTable table = [] {
    llvm::Expected<TileTable> parsed = parseTileTable(getTileTableJSON());
    if (!parsed)
      llvm::report_fatal_error(
          llvm::Twine("embedded TileTables.json is invalid: ") +
          llvm::toString(parsed.takeError()));
    return std::move(*parsed);
  }();
  return table;
}

const ChipSpec *mlir::attn::lookupChip(llvm::StringRef name) {
  return getTileTable().lookupChip(name);
}

llvm::ArrayRef<ChipSpec> mlir::attn::getAllChips() {
  return getTileTable().chips;
}

const Profile *mlir::attn::lookupProfile(llvm::StringRef name) {
  return getTileTable().lookupProfile(name);
}

std::string mlir::attn::getKnownChipNames() { return joinNames(getAllChips()); }

std::string mlir::attn::getKnownChipNames(Vendor vendor) {
  std::string names;
  for (const ChipSpec &c : getAllChips())
    if (c.vendor == vendor)
      names += (names.empty() ? "" : ", ") + c.name;
  return names;
}

FailureOr<AttentionProblem> mlir::attn::getAttentionProblem(Operation *op) {
  AttentionProblem p;
  Value query, key, value;
  if (auto fwd = dyn_cast<AttentionOp>(op)) {
    query = fwd.getQuery();
    key = fwd.getKey();
    value = fwd.getValue();
    p.hasBias = static_cast<bool>(fwd.getBias());
    p.wantsLse = static_cast<bool>(fwd.getLse());
    p.mask = fwd.getMask();
    p.hasSoftcap = fwd.getSoftcap().has_value();
    p.direction = Direction::Forward;
    p.servingLayout =
        static_cast<bool>(fwd.getCuSeqlensQ()) || fwd.getSeqlensK();
    p.kvCache = static_cast<bool>(fwd.getSeqlensK());
  } else if (auto bwd = dyn_cast<AttentionGradOp>(op)) {
    query = bwd.getQuery();
    key = bwd.getKey();
    value = bwd.getValue();
    p.hasBias = static_cast<bool>(bwd.getBias());
    p.biasGrad = static_cast<bool>(bwd.getGradBias());
    p.dropout = bwd.hasDropout();
    p.wantsLse = true;
    p.mask = bwd.getMask();
    p.hasSoftcap = bwd.getSoftcap().has_value();
    p.direction = Direction::Backward;
  } else {
    return op->emitError("expected attn.attention or attn.attention_grad");
  }
  auto qType = dyn_cast<ShapedType>(query.getType());
  auto kType = dyn_cast<ShapedType>(key.getType());
  auto vType = dyn_cast<ShapedType>(value.getType());
  // The op verifier guarantees rank 4 and static D, Dv; stay defensive so a
  // pass run without verification never crashes.
  if (!qType || !kType || !vType || !qType.hasRank() || !kType.hasRank() ||
      !vType.hasRank() || qType.getRank() != 4 || kType.getRank() != 4 ||
      vType.getRank() != 4 || qType.isDynamicDim(3) || vType.isDynamicDim(3))
    return op->emitError("query, key and value must be ranked 4-D with static "
                         "head dims for the tile tables to choose a tile; "
                         "a dynamic head dim needs a #attn.config with "
                         "max_head_dim (attn-bundle's any-D variants)");
  std::optional<ElementType> et = getElementType(qType.getElementType());
  if (!et)
    return op->emitError("query element type ")
           << qType.getElementType()
           << " has no tile-table entries; expected f16, bf16 or f32";
  p.elementType = *et;
  p.headDim = qType.getDimSize(3);
  p.headDimV = vType.getDimSize(3);
  if (!qType.isDynamicDim(2))
    p.seqQ = qType.getDimSize(2);
  if (!kType.isDynamicDim(2))
    p.seqK = kType.getDimSize(2);
  return p;
}

ConfigAttr mlir::attn::toConfigAttr(MLIRContext *context,
                                    const TileCandidate &c,
                                    const AttentionProblem &problem) {
  return ConfigAttr::get(context, c.name, c.blockM, c.blockN, c.warps, c.stages,
                         c.pipeline, c.accInRegisters, c.mma,
                         /*alignBytes=*/16, /*maxHeadDim=*/0,
                         /*deterministic=*/c.dqPass, c.headSplit,
                         isPersistentKernel(c, problem), c.overlapSoftmax);
}
