//===- TuningTest.cpp - size classes of hints and tuning files ------------===//

#include "AttnDialect/Target/Tuning.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
AttentionProblem bf16Problem(int64_t d, MaskKind mask = MaskKind::None) {
  AttentionProblem p;
  p.elementType = ElementType::BF16;
  p.headDim = p.headDimV = d;
  p.mask = mask;
  p.wantsLse = true;
  return p;
}

/// A tuning file of sm_90a with one entry per (candidate, min, max) for
/// bf16 D = 128 without a mask.
std::string
tuningJSON(std::initializer_list<std::tuple<const char *, int, int>> entries) {
  std::string json = R"({"schema": "attn-tuning", "version": 1,
    "chip": "sm_90a", "toolchain": ")" +
                     getToolchainName() + R"(", "entries": [)";
  const char *sep = "";
  for (auto [name, min, max] : entries) {
    const TileCandidate *c = lookupChip("sm_90a")->lookupCandidate(name);
    json += std::string(sep) +
            R"({"direction": "forward", "dtype": "bf16", "head_dim": 128,
        "mask": "none", "seqlen_min": )" +
            std::to_string(min) +
            (max ? ", \"seqlen_max\": " + std::to_string(max) : "") +
            R"(, "config": {"candidate": ")" + name + R"(", "block_m": )" +
            std::to_string(c->blockM) + R"(, "block_n": )" +
            std::to_string(c->blockN) + R"(, "warps": )" +
            std::to_string(c->warps) + R"(, "stages": )" +
            std::to_string(c->stages) + "}}";
    sep = ", ";
  }
  return json + "]}";
}
} // namespace

TEST(SizeClasses, HintsMeetAtGeometricMidpoints) {
  const ChipSpec &chip = *lookupChip("sm_90a");
  AttentionProblem p = bf16Problem(64);
  const TileCandidate *general = selectCandidate(chip, p);
  ASSERT_NE(general, nullptr);
  EXPECT_EQ(general->name, "wgmma_d64_m128n64w8");
  // tma_d64_m128n128w12 (seqlen_min 4096; the TMA form of
  // ws_d64_m128n128w12) is the choice at 16384 only; its class starts past
  // sqrt(4096 * 16384) = 8192.
  auto classes = getSizeClasses(chip, p, general, {1, 512, 4096, 16384},
                                /*tuning=*/nullptr);
  ASSERT_EQ(classes.size(), 1u);
  EXPECT_EQ(classes[0].candidate->name, "tma_d64_m128n128w12");
  // 4096 is a hint the tile serves too: its class starts past
  // sqrt(512 * 4096) = 1448, at its seqlen_min.
  EXPECT_EQ(classes[0].range.min, 4096);
  EXPECT_TRUE(classes[0].range.isUnbounded());
  // Hints that meet above seqlen_min: the class starts past their midpoint.
  classes = getSizeClasses(chip, p, general, {2048, 9000}, nullptr);
  ASSERT_EQ(classes.size(), 1u);
  EXPECT_EQ(classes[0].range.min, 4294); // sqrt(2048 * 9000) = 4293.3
  // D = 128 has no size-specialized tile ahead of its general one.
  EXPECT_TRUE(getSizeClasses(chip, bf16Problem(128),
                             selectCandidate(chip, bf16Problem(128)),
                             {1, 512, 4096, 16384}, nullptr)
                  .empty());
}

TEST(SizeClasses, TuningMergesAndKeepsOneRangePerTile) {
  const ChipSpec &chip = *lookupChip("sm_90a");
  AttentionProblem p = bf16Problem(128);
  const TileCandidate *general = selectCandidate(chip, p);
  llvm::SmallVector<std::string> warnings;
  llvm::Expected<TuningFile> file =
      parseTuningFile(tuningJSON({{"wgmma_d128_m192n64w12", 1, 100},
                                  {"wgmma_d128_m192n64w12", 101, 200},
                                  {"ws_d128_m128n128w12s3", 201, 300},
                                  {"mma_d128_m64n64w4", 301, 400},
                                  {"wgmma_d128_m192n64w12", 401, 0}}),
                      "test", warnings);
  ASSERT_TRUE(static_cast<bool>(file)) << llvm::toString(file.takeError());
  EXPECT_TRUE(warnings.empty());
  auto classes = getSizeClasses(chip, p, general, {}, &*file);
  // 1..200 merged; the general tile's range needs no class; m192n64w12's
  // second range is left to the general tile (one kernel, one range).
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0].candidate->name, "wgmma_d128_m192n64w12");
  EXPECT_EQ(classes[0].range.str(), "1..200");
  EXPECT_EQ(classes[1].candidate->name, "mma_d128_m64n64w4");
  EXPECT_EQ(classes[1].range.str(), "301..400");
  // Static lengths pick the entry holding both; a hint stands in for
  // dynamic ones.
  AttentionProblem fixed = p;
  fixed.seqQ = fixed.seqK = 350;
  EXPECT_EQ(selectTunedCandidate(chip, fixed, nullptr, &*file)->name,
            "mma_d128_m64n64w4");
  fixed.seqK = 450;
  EXPECT_EQ(selectTunedCandidate(chip, fixed, nullptr, &*file), general);
  AttentionProblem hinted = p;
  hinted.seqHint = 150;
  EXPECT_EQ(selectTunedCandidate(chip, hinted, nullptr, &*file)->name,
            "wgmma_d128_m192n64w12");
}

TEST(TuningFile, BuiltinFilesParse) {
  EXPECT_FALSE(static_cast<bool>(checkBuiltinTunings()));
  EXPECT_NE(getBuiltinTuning(*lookupChip("sm_90a")), nullptr);
  EXPECT_EQ(getBuiltinTuning(*lookupChip("gfx942")), nullptr);
}
