//===- TileTableTest.cpp - the embedded table, parser and selection ------===//

#include "AttnDialect/Target/TileTable.h"
#include "AttnDialect/IR/AttnDialect.h"
#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

TEST(EmbeddedTable, HasEveryChip) {
  for (llvm::StringRef name :
       {"sm_80", "sm_86", "sm_89", "sm_90a", "gfx90a", "gfx942", "gfx950",
        "gfx1100", "gfx1201", "host"})
    EXPECT_NE(lookupChip(name), nullptr) << name.str();
  EXPECT_EQ(lookupChip("sm_75"), nullptr);
  EXPECT_EQ(getAllChips().size(), 10u);
}

TEST(EmbeddedTable, CapabilitiesComeFromTheData) {
  const ChipSpec *h100 = lookupChip("sm_90a");
  ASSERT_TRUE(h100);
  EXPECT_TRUE(h100->hasTma());
  EXPECT_TRUE(h100->hasWgmma());
  EXPECT_TRUE(h100->hasCpAsync());
  EXPECT_EQ(h100->smemMaxBytes, 232448);
  const ChipSpec *a100 = lookupChip("sm_80");
  EXPECT_FALSE(a100->hasTma());
  EXPECT_EQ(a100->smemMaxBytes, 166912);
  const ChipSpec *mi300 = lookupChip("gfx942");
  EXPECT_EQ(mi300->warpSize, 64);
  EXPECT_TRUE(mi300->hasMfma());
  EXPECT_EQ(mi300->regsPerThreadMax, 512);
  const ChipSpec *rdna3 = lookupChip("gfx1100");
  EXPECT_EQ(rdna3->warpSize, 32);
  EXPECT_TRUE(rdna3->hasWmma());
  EXPECT_EQ(lookupChip("gfx950")->smemMaxBytes, 163840);
}

TEST(EmbeddedTable, AlignedVariantsAreExpanded) {
  const ChipSpec *chip = lookupChip("sm_80");
  const TileCandidate *a = chip->lookupCandidate("mma_d128_m128n64w8_aligned");
  const TileCandidate *u = chip->lookupCandidate("mma_d128_m128n64w8");
  ASSERT_TRUE(a && u);
  EXPECT_TRUE(a->aligned);
  EXPECT_FALSE(u->aligned);
}

AttentionProblem problem(ElementType t, int64_t d) {
  AttentionProblem p;
  p.elementType = t;
  p.headDim = p.headDimV = d;
  return p;
}

TEST(Selection, SharedMemoryDecidesPerChip) {
  AttentionProblem p = problem(ElementType::F16, 128);
  // 4 warps x 32 rows, measured fastest on the H100 (bench/RESULTS.md).
  EXPECT_EQ(selectCandidate(*lookupChip("sm_80"), p)->name,
            "mma_d128_m128n64w4");
  // 104448 bytes do not fit 99 KiB; the sm_86-only tile keeps block_m 128.
  EXPECT_EQ(selectCandidate(*lookupChip("sm_86"), p)->name,
            "mma_d128_m128n32w8");
  // sm_90a: the warp-specialized wgmma tile in its TMA form (priority -1,
  // listed first) ahead of every mma.sync tile; its cp.async form is the
  // cp_async_ws candidate of the same geometry.
  const ChipSpec &sm90a = *lookupChip("sm_90a");
  const TileCandidate *tma = selectCandidate(sm90a, p);
  ASSERT_NE(tma, nullptr);
  EXPECT_EQ(tma->name, "tma_d128_m128n128w12s3");
  const TileCandidate *copy =
      sm90a.lookupCopyForm(*tma, PipelineKind::CpAsyncWarpSpecialized);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->name, "ws_d128_m128n128w12s3");
  // ... even the aligned ones, when the shapes allow those.
  p.seqQ = p.seqK = 4096;
  EXPECT_EQ(selectCandidate(sm90a, p)->name, "tma_d128_m128n128w12s3");
}

TEST(Selection, MasksRestrictCandidates) {
  AttentionProblem p = problem(ElementType::BF16, 64);
  const ChipSpec *chip = lookupChip("sm_90a");
  EXPECT_EQ(selectCandidate(*chip, p)->name, "wgmma_d64_m128n64w8");
  auto verdictOf = [&](llvm::StringRef name) {
    for (const Verdict &v : evaluateCandidates(*chip, p))
      if (v.candidate->name == name)
        return v;
    return Verdict();
  };
  // The three-warpgroup tile lists only `none`.
  EXPECT_TRUE(verdictOf("wgmma_d64_m192n128w12").accepted);
  p.mask = MaskKind::Causal;
  EXPECT_EQ(selectCandidate(*chip, p)->name, "wgmma_d64_m128n64w8");
  EXPECT_EQ(verdictOf("wgmma_d64_m192n128w12").reason,
            "mask: used only for none, the op has causal");
}

TEST(Selection, WgmmaRanksLastWhenPaddedTooMuch) {
  // wgmma pads head dims to its 64-column swizzled panels: D = 96 to 128
  // (25% of the work, within its max_padding_percent) stays on wgmma, D = 80
  // to 128 (37.5%) goes to mma.sync, which pads to 16.
  AttentionProblem p = problem(ElementType::BF16, 96);
  EXPECT_EQ(selectCandidate(*lookupChip("sm_90a"), p)->name,
            "tma_d128_m128n128w12s3");
  p = problem(ElementType::BF16, 80);
  EXPECT_EQ(selectCandidate(*lookupChip("sm_90a"), p)->name,
            "mma_d128_m128n64w4");
  p = problem(ElementType::BF16, 59);
  EXPECT_EQ(selectCandidate(*lookupChip("sm_90a"), p)->name,
            "wgmma_d64_m128n64w8");
}

TEST(Selection, AlignedFirstWhenShapesAllow) {
  AttentionProblem p = problem(ElementType::BF16, 64);
  p.seqQ = 1024;
  p.seqK = 1024;
  EXPECT_EQ(selectCandidate(*lookupChip("sm_80"), p)->name,
            "mma_d64_m128n64w4_aligned");
  p.seqK = 1000;
  EXPECT_EQ(selectCandidate(*lookupChip("sm_80"), p)->name,
            "mma_d64_m128n64w4");
}

TEST(Selection, F32OnTheFmaCandidates) {
  AttentionProblem p = problem(ElementType::F32, 64);
  EXPECT_EQ(selectCandidate(*lookupChip("sm_90a"), p)->name,
            "fma_d64_m128n64w4");
  EXPECT_EQ(selectCandidate(*lookupChip("gfx942"), p)->name, "fma_m32n32w4");
  EXPECT_EQ(selectCandidate(*lookupChip("host"), p)->name, "host_m32n64");
  // And only f32 on them.
  const ChipSpec *chip = lookupChip("sm_90a");
  for (const Verdict &v :
       evaluateCandidates(*chip, problem(ElementType::F16, 64)))
    if (v.candidate->mma == MatrixInstrKind::Fma)
      EXPECT_FALSE(v.accepted);
}

TEST(Selection, VerdictsListEveryCandidate) {
  const ChipSpec *chip = lookupChip("sm_90a");
  // D = 300 is above every candidate's bucket.
  auto verdicts = evaluateCandidates(*chip, problem(ElementType::F32, 300));
  EXPECT_EQ(verdicts.size(), chip->candidates.size());
  for (const Verdict &v : verdicts) {
    EXPECT_FALSE(v.accepted);
    EXPECT_FALSE(v.reason.empty());
  }
}

TEST(Selection, ProfilesRestrict) {
  const ChipSpec *host = lookupChip("host");
  const Profile *training = lookupProfile("training");
  ASSERT_TRUE(training);
  EXPECT_EQ(selectCandidate(*host, problem(ElementType::F32, 64), training),
            nullptr);
  EXPECT_NE(selectCandidate(*host, problem(ElementType::F16, 64), training),
            nullptr);
}

TEST(Family, InferenceOnSm80) {
  auto family = enumerateFamily(*lookupChip("sm_80"), "inference", {64, 128});
  // 2 dtypes x 2 head dims x 4 masks x (aligned + general), then f32's
  // 2 head dims x 4 masks (fma: no aligned twin).
  ASSERT_EQ(family.size(), 40u);
  EXPECT_EQ(family[0].candidate->name, "mma_d64_m128n64w4_aligned");
  EXPECT_EQ(family[1].candidate->name, "mma_d64_m128n64w4");
  EXPECT_EQ(family[0].mask, MaskKind::None);
  EXPECT_EQ(family[2].mask, MaskKind::Causal);
  EXPECT_EQ(family[0].elementType, ElementType::F16);
  EXPECT_EQ(family[16].elementType, ElementType::BF16);
  EXPECT_TRUE(enumerateFamily(*lookupChip("sm_80"), "nope", {64}).empty());
}

TEST(Family, OneMemberPerMaskOnSm90a) {
  // Each (dtype, mask) pair is its own member, chosen with its mask;
  // wgmma has no aligned twin.
  auto family = enumerateFamily(*lookupChip("sm_90a"), "inference", {64},
                                {MaskKind::None, MaskKind::Causal});
  // f16, bf16, then f32 (fma).
  ASSERT_EQ(family.size(), 6u);
  EXPECT_EQ(family[4].candidate->name, "fma_d64_m128n64w4");
  EXPECT_EQ(family[0].candidate->name, "wgmma_d64_m128n64w8");
  EXPECT_EQ(family[0].mask, MaskKind::None);
  EXPECT_EQ(family[1].candidate->name, "wgmma_d64_m128n64w8");
  EXPECT_EQ(family[1].mask, MaskKind::Causal);
  EXPECT_EQ(family[2].elementType, ElementType::BF16);
}

TEST(ConfigAttr, FromCandidate) {
  MLIRContext ctx;
  ctx.loadDialect<AttnDialect>();
  const TileCandidate *c =
      lookupChip("sm_80")->lookupCandidate("mma_d64_m64n64w4");
  ConfigAttr attr = toConfigAttr(&ctx, *c, AttentionProblem());
  EXPECT_EQ(attr.getBlockM(), 64);
  EXPECT_EQ(attr.getWarps(), 4);
  EXPECT_EQ(attr.getPipeline(), PipelineKind::CpAsync);
  EXPECT_EQ(attr.getMma(), MatrixInstrKind::MmaM16N8K16);
}

//===----------------------------------------------------------------------===//
// Parser errors name the entry and field
//===----------------------------------------------------------------------===//

/// A valid one-chip table with `extra` spliced into its candidate.
std::string tableWith(llvm::StringRef candExtra, llvm::StringRef chipExtra = "",
                      llvm::StringRef secondCand = "") {
  return llvm::formatv(R"({{
  "schema": "attn-tile-tables", "version": 1, "reason": "test",
  "profiles": {{"all": {{"reason": "r", "directions": ["forward"],
                          "dtypes": ["f16"]}},
  "instruction_sets": {{"s": [{{"name": "fma", "reason": "r", "m": 1,
     "n": 1, "k": 1, "operand_types": ["f16"], "acc_type": "f32",
     "rows_per_warp": 0, "block_n_multiple": 8, "head_dim_multiple": 8,
     "head_dim_max": 256}]},
  "candidate_sets": {{"c": [{{"name": "a", "reason": "r", "block_m": 16,
     "block_n": 32, "warps": 1, "stages": 1, "pipeline": "simple",
     "acc_in_registers": true, "mma": "fma", "dtypes": ["f16"],
     "head_dim_max": 256 {0}} {2}]},
  "chips": [{{"name": "x", "vendor": "host", "reason": "r", "warp_size": 1,
     "max_threads_per_block": 1, "smem_default_bytes": 0,
     "smem_max_bytes": 0, "smem_row_pad_elems": 0,
     "regs_per_thread_max": 0, "regs_per_block_max": 0, "regs_overhead": 0,
     "features": [], "dtypes": ["f16"], "head_dim_max": 256,
     "instruction_sets": ["s"], "candidate_sets": ["c"] {1}}]
})",
                       candExtra, chipExtra, secondCand)
      .str();
}

std::string parseError(const std::string &text) {
  llvm::Expected<TileTable> t = parseTileTable(text);
  if (t)
    return "";
  return llvm::toString(t.takeError());
}

TEST(Parser, AcceptsAValidTable) {
  llvm::Expected<TileTable> t = parseTileTable(tableWith(""));
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  ASSERT_EQ(t->chips.size(), 1u);
  EXPECT_EQ(t->chips[0].candidates.size(), 1u);
}

TEST(Parser, UnknownField) {
  EXPECT_EQ(parseError(tableWith(", \"blok_m\": 3")),
            "candidate_sets.c[0]: unknown field 'blok_m'");
}

TEST(Parser, MissingField) {
  EXPECT_EQ(parseError(tableWith("", ", \"vendor2\": 1")),
            "chips[0]: unknown field 'vendor2'");
  std::string noWarps = tableWith("");
  noWarps.replace(noWarps.find("\"warps\": 1,"), 11, "");
  EXPECT_EQ(parseError(noWarps), "candidate_sets.c[0]: missing field 'warps'");
}

TEST(Parser, WrongTypeAndBadEnum) {
  EXPECT_EQ(parseError(tableWith(", \"priority\": \"high\"")),
            "candidate_sets.c[0]: field 'priority': expected an integer");
  std::string badPipe = tableWith("");
  badPipe.replace(badPipe.find("\"simple\""), 8, "\"fast\"");
  EXPECT_NE(parseError(badPipe).find("unknown pipeline 'fast'"),
            std::string::npos);
  EXPECT_EQ(parseError(tableWith(", \"masks\": [\"diagonal\"]")),
            "candidate_sets.c[0]: field 'masks': unknown mask 'diagonal' "
            "(known: none, causal, causal_bottom_right, sliding_window)");
}

TEST(Parser, MasksAndSharedOperands) {
  llvm::Expected<TileTable> t =
      parseTileTable(tableWith(", \"masks\": [\"none\", \"causal\"]"));
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->chips[0].candidates[0].masks,
            (llvm::SmallVector<MaskKind>{MaskKind::None, MaskKind::Causal}));
  EXPECT_FALSE(t->chips[0].instructions[0].sharedOperands);
}

TEST(Parser, SizeHintAndPaddingBound) {
  llvm::Expected<TileTable> t =
      parseTileTable(tableWith(", \"seqlen_min\": 8192"));
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->chips[0].candidates[0].seqlenMin, 8192);
  EXPECT_EQ(t->chips[0].instructions[0].maxPaddingPercent, 100);
  EXPECT_NE(parseError(tableWith(", \"seqlen_min\": -1"))
                .find("seqlen_min must not be negative"),
            std::string::npos);
  std::string badPad = tableWith("");
  badPad.replace(badPad.find("\"head_dim_multiple\": 8,"), 23,
                 "\"head_dim_multiple\": 8, \"max_padding_percent\": 101,");
  EXPECT_NE(parseError(badPad).find("max_padding_percent must be in [0, 100]"),
            std::string::npos);
}

TEST(Parser, OrderedDqSeqlenMin) {
  // sm_90a's producer tile orders deterministic dQ from 4096.
  const ChipSpec *h100 = lookupChip("sm_90a");
  ASSERT_TRUE(h100);
  const TileCandidate *ws = h100->lookupCandidate("bwd_wgmma_d128_m64n128w12");
  ASSERT_TRUE(ws);
  EXPECT_EQ(ws->orderedDqSeqlenMin, 4096);
  // Only on backward tiles with a producer warpgroup.
  EXPECT_NE(parseError(tableWith(", \"ordered_dq_seqlen_min\": 8192"))
                .find("ordered_dq_seqlen_min must not be negative, and 0 "
                      "unless the tile is a backward one with a producer "
                      "warpgroup"),
            std::string::npos);
}

TEST(Parser, HeadSplit) {
  std::string backward = ", \"direction\": \"backward\", \"head_split\": 2";
  llvm::Expected<TileTable> t = parseTileTable(tableWith(backward));
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->chips[0].candidates[0].headSplit, 2);
  EXPECT_NE(parseError(tableWith(", \"head_split\": 2")).find("head_split"),
            std::string::npos);
  EXPECT_NE(
      parseError(tableWith(", \"direction\": \"backward\", \"head_split\": 5"))
          .find("head_split must be in [1, 4]"),
      std::string::npos);
}

TEST(Parser, DuplicateCandidate) {
  std::string second = R"(, {"name": "a", "reason": "r", "block_m": 16,
     "block_n": 32, "warps": 1, "stages": 1, "pipeline": "simple",
     "acc_in_registers": true, "mma": "fma", "dtypes": ["f16"],
     "head_dim_max": 256})";
  EXPECT_EQ(parseError(tableWith("", "", second)),
            "chips[0]: duplicate candidate name 'a'");
}

TEST(Parser, DanglingReferences) {
  std::string badMma = tableWith("");
  badMma.replace(badMma.find("\"mma\": \"fma\""), 12,
                 "\"mma\": \"mma.m16n8k16\"");
  EXPECT_EQ(parseError(badMma), "chips[0]: candidate 'a' uses matrix "
                                "instruction 'mma.m16n8k16' that the chip "
                                "does not list");
  EXPECT_EQ(parseError(tableWith(", \"only_on\": [\"sm_1\"]")),
            "candidate 'a': only_on names unknown chip 'sm_1'");
}

} // namespace
