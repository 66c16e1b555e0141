//===- ConstraintsTest.cpp - constraint formulas vs hand-computed numbers -===//
//
// Each expected number below is worked out by hand in the comment next to
// it, so a change to a formula shows up as a disagreement with arithmetic
// anyone can redo.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Target/Constraints.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Total bytes of a padded (not swizzled) layout.
int64_t smemBytes(int64_t blockM, int64_t blockN, int64_t stages,
                  int64_t elemBytes, int64_t headDim, int64_t headDimV,
                  int64_t padElems) {
  return getSharedMemoryLayout(blockM, blockN, stages, elemBytes, headDim,
                               headDimV, padElems, /*swizzled=*/false)
      .totalBytes;
}

TEST(SmemBytes, NvidiaD128Block128x64TwoStages) {
  // K+V: 2 stages * 64 rows * (128 + 128 + 2*8) * 2 B = 69632
  // Q:   128 rows * (128 + 8) * 2 B                   = 34816
  EXPECT_EQ(smemBytes(128, 64, 2, 2, 128, 128, 8), 104448);
}

TEST(SmemBytes, NvidiaD64Block128x64) {
  // 2 * 64 * 144 * 2 = 36864; 128 * 72 * 2 = 18432
  EXPECT_EQ(smemBytes(128, 64, 2, 2, 64, 64, 8), 55296);
}

TEST(SmemBytes, NvidiaD256Block64x32IsExactlyTheSm86Limit) {
  // 2 * 32 * 528 * 2 = 67584; 64 * 264 * 2 = 33792; sum = 99 KiB
  EXPECT_EQ(smemBytes(64, 32, 2, 2, 256, 256, 8), 101376);
}

TEST(SmemBytes, NvidiaD256Block64x64) {
  // 2 * 64 * 528 * 2 = 135168; 64 * 264 * 2 = 33792
  EXPECT_EQ(smemBytes(64, 64, 2, 2, 256, 256, 8), 168960);
}

TEST(SmemBytes, DifferentValueHeadDim) {
  // 2 * 64 * (128 + 64 + 16) * 2 = 53248; 64 * 136 * 2 = 17408
  EXPECT_EQ(smemBytes(64, 64, 2, 2, 128, 64, 8), 70656);
}

TEST(SmemBytes, F32WithoutPadding) {
  // 1 * 64 * 128 * 4 = 32768; 32 * 64 * 4 = 8192
  EXPECT_EQ(smemBytes(32, 64, 1, 4, 64, 64, 0), 40960);
}

TEST(SmemBytes, SwizzledTilesAreDenseWithAlignmentSlack) {
  // wgmma D = 128, block 128 x 128, 2 stages: no padding (the pad argument
  // is ignored), 1024 bytes of slack.
  // Q: 128 * 128 * 2 = 32768; K, V: 2 * 128 * 128 * 2 * 2 = 131072
  SharedMemoryLayout l = getSharedMemoryLayout(128, 128, 2, 2, 128, 128, 8,
                                               /*swizzled=*/true);
  EXPECT_EQ(l.qRowStride, 128);
  EXPECT_EQ(l.alignSlack, kSwizzleAlignBytes);
  EXPECT_EQ(l.qBytes, 32768);
  EXPECT_EQ(l.kStageBytes, 32768);
  EXPECT_EQ(l.totalBytes, 1024 + 32768 + 131072);
}

TEST(SmemBytes, RingBarriers) {
  // The D = 256 block_n 80 tile (tma_d256_m128n80w12): Q 128 x 256, two
  // stages of K and V 80 x 256, bf16, swizzled. A ring has a full and an
  // empty mbarrier per stage (8 bytes each), a tile loop Q's pair, and
  // overlap_softmax a pair per stage for V.
  auto bytes = [](bool queryBarriers, bool valueBarriers) {
    return getSharedMemoryLayout(128, 80, 2, 2, 256, 256, 0,
                                 /*swizzled=*/true, /*ringBarriers=*/true,
                                 queryBarriers, valueBarriers);
  };
  SharedMemoryLayout plain = bytes(false, false);
  EXPECT_EQ(plain.barrierOffset, 65536 + 2 * (40960 + 40960));
  EXPECT_EQ(plain.barrierBytes, 32);
  EXPECT_EQ(bytes(true, false).barrierBytes, 48);
  EXPECT_EQ(bytes(false, true).barrierBytes, 64);
  SharedMemoryLayout both = bytes(true, true);
  EXPECT_EQ(both.barrierBytes, 80);
  EXPECT_EQ(both.totalBytes, kSwizzleAlignBytes + plain.barrierOffset + 80);
}

TEST(SmemBytes, SecondQueryBufferWhereItFits) {
  // A tile loop's Q gets a second buffer (and barrier pair) when the layout
  // still fits the chip: the D = 64 tile (tma_d64_m192n128w16: Q 192 x 64,
  // two stages of K and V 128 x 64) does within 232448 bytes, the D = 256
  // block_n 80 tile does not.
  SharedMemoryLayout d64 = getSharedMemoryLayout(
      192, 128, 2, 2, 64, 64, 0, /*swizzled=*/true, /*ringBarriers=*/true,
      /*queryBarriers=*/true, /*valueBarriers=*/false, 232448);
  EXPECT_EQ(d64.queryBuffers, 2);
  EXPECT_EQ(d64.kOffset, 2 * 24576);
  EXPECT_EQ(d64.barrierOffset, 2 * 24576 + 2 * (16384 + 16384));
  EXPECT_EQ(d64.barrierBytes, 16 * (2 + 2));
  SharedMemoryLayout d256 = getSharedMemoryLayout(
      128, 80, 2, 2, 256, 256, 0, /*swizzled=*/true, /*ringBarriers=*/true,
      /*queryBarriers=*/true, /*valueBarriers=*/false, 232448);
  EXPECT_EQ(d256.queryBuffers, 1);
  EXPECT_EQ(d256.kOffset, 65536);
  EXPECT_EQ(d256.barrierBytes, 48);
  // Without a tile loop (no Q barriers) Q keeps one buffer.
  EXPECT_EQ(getSharedMemoryLayout(192, 128, 2, 2, 64, 64, 0, true, true,
                                  /*queryBarriers=*/false, false, 232448)
                .queryBuffers,
            1);
}

TEST(SmemBytes, PaddedLayoutOffsets) {
  // The kernel carves [Q][K stages][V stages]: K starts at qBytes, V at
  // qBytes + stages * kStageBytes. D = 64, Dv = 128, pad 8, 2-byte elements.
  SharedMemoryLayout l = getSharedMemoryLayout(64, 32, 2, 2, 64, 128, 8,
                                               /*swizzled=*/false);
  EXPECT_EQ(l.kRowStride, 72);
  EXPECT_EQ(l.vRowStride, 136);
  EXPECT_EQ(l.qBytes, 64 * 72 * 2);
  EXPECT_EQ(l.kStageBytes, 32 * 72 * 2);
  EXPECT_EQ(l.vStageBytes, 32 * 136 * 2);
  EXPECT_EQ(l.alignSlack, 0);
}

TEST(BackwardSmem, ProducerTileDoublesDsAndAddsTheRing) {
  // bwd_wgmma_d128_m64n128w12 at D = Dv = 128, bf16, swizzled: K and V
  // 128 x 128 (32768 each), two Q and two dO buffers of 64 x 128 (16384
  // each), two dS buffers of 64 x 128 (16384 each), two stages of lse and
  // delta (2 * 64 * 4 = 512 each), then the ring: a full and an empty
  // mbarrier per buffer (4 x 8 bytes).
  BackwardSharedMemoryLayout l = getBackwardSharedMemoryLayout(
      64, 128, 2, 2, 128, 128, 0, /*swizzled=*/true, /*dqStageCols=*/0,
      /*smemMaxBytes=*/232448, /*warpSpecialized=*/true);
  EXPECT_EQ(l.dsOffset, 32768 * 2 + 16384 * 4);
  EXPECT_EQ(l.dsBuffers, 2);
  EXPECT_EQ(l.dsStageBytes, 16384);
  EXPECT_EQ(l.rowStatsOffset, 131072 + 2 * 16384);
  EXPECT_EQ(l.barrierOffset, 163840 + 2 * 512);
  EXPECT_EQ(l.totalBytes, kSwizzleAlignBytes + 164864 + 32);
  // Without the producer: one dS buffer, no ring.
  BackwardSharedMemoryLayout w8 = getBackwardSharedMemoryLayout(
      64, 128, 2, 2, 128, 128, 0, true, 0, 232448);
  EXPECT_EQ(w8.dsBuffers, 1);
  EXPECT_EQ(w8.barrierOffset, 0);
  EXPECT_EQ(w8.totalBytes, kSwizzleAlignBytes + 131072 + 16384 + 2 * 512);
}

TEST(BackwardSmem, BlockedDqStagingIsWholeUnits) {
  // dQ's staging for 128 columns after the producer layout above (ends at
  // 164896 past the slack): rows of 64-column chunks padded by 16 bytes
  // (2 * 272 = 544 bytes a row), or in dq_accum's blocks the two 64 x 64
  // f32 units themselves (512 bytes a row, swizzled instead of padded).
  auto staging = [](bool blocked) {
    return getBackwardSharedMemoryLayout(64, 128, 2, 2, 128, 128, 0, true,
                                         /*dqStageCols=*/128, 232448, true,
                                         blocked);
  };
  BackwardSharedMemoryLayout rows = staging(false), units = staging(true);
  EXPECT_EQ(rows.dqStageOffset, 164896);
  EXPECT_EQ(rows.dqStageRowBytes, 544);
  EXPECT_FALSE(rows.dqStageBlocked);
  EXPECT_EQ(rows.totalBytes, kSwizzleAlignBytes + 164896 + 64 * 544);
  EXPECT_EQ(units.dqStageRowBytes, 512);
  EXPECT_TRUE(units.dqStageBlocked);
  EXPECT_EQ(units.totalBytes, kSwizzleAlignBytes + 164896 + 64 * 512);
  // Staging that does not fit is left out (atomics from registers).
  EXPECT_EQ(getBackwardSharedMemoryLayout(64, 128, 2, 2, 128, 128, 0, true, 128,
                                          180000, true, true)
                .dqStageRowBytes,
            0);
}

TEST(BackwardSmem, WhoStagesDqAndInBlocks) {
  // Bulk dQ: plans with dQ in main on swizzled tiles, two or more computing
  // warpgroups, 16-byte rows of dq_accum.
  EXPECT_TRUE(usesBulkDq(true, false, 8, 128));
  EXPECT_FALSE(usesBulkDq(true, /*deterministic=*/true, 8, 128));
  EXPECT_FALSE(usesBulkDq(true, false, /*computeWarps=*/4, 128));
  EXPECT_FALSE(usesBulkDq(/*sharedOperands=*/false, false, 8, 128));
  EXPECT_FALSE(usesBulkDq(true, false, 8, 90));
  // Blocks of 64 rows: whole 64-column chunks, one slice, 64-row blocks.
  EXPECT_TRUE(usesBlockedDqAccum(128, 1, 64));
  EXPECT_TRUE(usesBlockedDqAccum(64, 1, 64));
  EXPECT_FALSE(usesBlockedDqAccum(96, 1, 64));
  EXPECT_FALSE(usesBlockedDqAccum(256, 2, 64));
  EXPECT_FALSE(usesBlockedDqAccum(128, 1, 128));
}

TEST(RegisterEstimate, MmaSyncMatchesThePerFragmentFormula) {
  // 4*(64/8) + 4*(128/8) + 4*(128/16) + 40 = 32 + 64 + 32 + 40
  EXPECT_EQ(registerEstimate(16, 32, 64, 128, 128, 40), 168);
  // 4*(32/8) + 4*(256/8) + 4*(256/16) + 40 = 16 + 128 + 64 + 40
  EXPECT_EQ(registerEstimate(16, 32, 32, 256, 256, 40), 248);
  // 4*(64/8) + 4*(256/8) + 4*(256/16) + 40 = 32 + 128 + 64 + 40 > 255
  EXPECT_EQ(registerEstimate(16, 32, 64, 256, 256, 40), 264);
}

TEST(RegisterEstimate, Mfma32Wave64) {
  // S: 32*64/64 = 32; O: 32*128/64 = 64; Q: 32*128/128 = 32; + 40
  EXPECT_EQ(registerEstimate(32, 64, 64, 128, 128, 40), 168);
}

TEST(RegisterEstimate, QueryReReadFromSharedMemory) {
  // 32 rows per warp: S 4*2*(64/8) = 64, O 4*2*(128/8) = 128, no Q, + 40
  EXPECT_EQ(registerEstimate(32, 32, 64, 128, 128, 40,
                             /*queryInRegisters=*/false),
            232);
}

TEST(RegisterEstimate, RoundsUp) {
  // S: ceil(16*8/32) = 4; O: ceil(16*24/32) = 12; Q: ceil(16*24/64) = 6
  EXPECT_EQ(registerEstimate(16, 32, 8, 24, 24, 0), 22);
}

TEST(MmaPerIteration, Counts) {
  MatrixInstr mfma;
  mfma.kind = MatrixInstrKind::Mfma32x32x8;
  mfma.m = mfma.n = 32;
  mfma.k = 8;
  mfma.rowsPerWarp = 32;
  // (32/32) * (64/32) * (128/8) = 1 * 2 * 16
  EXPECT_EQ(mmaPerIteration(mfma, 64, 128), 32);
  MatrixInstr mma;
  mma.kind = MatrixInstrKind::MmaM16N8K16;
  mma.m = 16;
  mma.n = 8;
  mma.k = 16;
  mma.rowsPerWarp = 16;
  // (16/16) * (64/8) * (64/16) = 1 * 8 * 4
  EXPECT_EQ(mmaPerIteration(mma, 64, 64), 32);
}

TEST(HeadDimBucket, SmallestThatFits) {
  EXPECT_EQ(headDimBucket({256, 64, 128}, 96), 128);
  EXPECT_EQ(headDimBucket({64, 128, 256}, 64), 64);
  EXPECT_EQ(headDimBucket({64, 128, 256}, 8), 64);
  EXPECT_EQ(headDimBucket({64, 128, 256}, 264), std::nullopt);
}

/// A minimal chip and candidate for the checks, independent of the table.
struct ChecksTest : ::testing::Test {
  void SetUp() override {
    chip.name = "test_chip";
    chip.vendor = Vendor::Nvidia;
    chip.warpSize = 32;
    chip.maxThreadsPerBlock = 1024;
    chip.smemMaxBytes = 101376;
    chip.smemRowPadElems = 8;
    chip.regsPerThreadMax = 255;
    chip.regsPerBlockMax = 65536;
    chip.regsOverhead = 40;
    chip.features = {"cp_async", "bf16"};
    chip.dtypes = {ElementType::F16, ElementType::BF16};
    chip.dtypeNote = "f32 runs on the host";
    chip.headDimMax = 256;
    instr.kind = MatrixInstrKind::MmaM16N8K16;
    instr.m = 16;
    instr.n = 8;
    instr.k = 16;
    instr.operandTypes = {ElementType::F16, ElementType::BF16};
    instr.rowsPerWarp = 16;
    instr.blockNMultiple = 16;
    instr.blockNAllowed = {32, 64, 128};
    instr.headDimMultiple = 16;
    instr.headDimMax = 256;
    cand.name = "c";
    cand.blockM = 128;
    cand.blockN = 64;
    cand.warps = 8;
    cand.stages = 2;
    cand.pipeline = PipelineKind::CpAsync;
    cand.mma = instr.kind;
    cand.dtypes = {ElementType::F16, ElementType::BF16};
    cand.headDimMax = 128;
    problem.elementType = ElementType::F16;
    problem.headDim = problem.headDimV = 128;
  }
  ChipSpec chip;
  MatrixInstr instr;
  TileCandidate cand;
  AttentionProblem problem;
};

TEST_F(ChecksTest, SharedMemoryOverTheLimit) {
  int64_t bytes = 0;
  CheckResult r = checkSharedMemory(chip, cand, instr, problem, bytes);
  EXPECT_EQ(bytes, 104448);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("104448 bytes > 101376"), std::string::npos) << *r;
  cand.blockN = 32;
  // 2*32*272*2 = 34816; + 34816
  EXPECT_FALSE(checkSharedMemory(chip, cand, instr, problem, bytes));
  EXPECT_EQ(bytes, 69632);
}

TEST_F(ChecksTest, RegistersOverBudget) {
  int64_t regs = 0;
  problem.headDim = problem.headDimV = 256;
  cand.headDimMax = 256;
  cand.blockM = 64;
  cand.warps = 4;
  CheckResult r = checkRegisters(chip, cand, instr, problem, regs);
  EXPECT_EQ(regs, 264);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("estimated 264 per thread > 255"), std::string::npos);
  cand.blockN = 32;
  EXPECT_FALSE(checkRegisters(chip, cand, instr, problem, regs));
  EXPECT_EQ(regs, 248);
}

TEST_F(ChecksTest, SharedOperandsAreSwizzledAndKeepQOutOfRegisters) {
  // wgmma-style: no row padding but 1 KiB of alignment slack, and Q is read
  // from shared memory instead of registers.
  instr.sharedOperands = true;
  chip.smemMaxBytes = 232448;
  cand.blockN = 128;
  int64_t bytes = 0, regs = 0;
  EXPECT_FALSE(checkSharedMemory(chip, cand, instr, problem, bytes));
  // (2 * 128 * (128 + 128) + 128 * 128) * 2 + 1024
  EXPECT_EQ(bytes, 164864);
  EXPECT_FALSE(checkRegisters(chip, cand, instr, problem, regs));
  // S 128 * 16 / 32 + O 128 * 16 / 32 + 40, no Q fragment.
  EXPECT_EQ(regs, 168);
}

TEST_F(ChecksTest, MaskDispatch) {
  EXPECT_FALSE(checkMask(cand, problem));
  cand.masks = {MaskKind::None};
  EXPECT_FALSE(checkMask(cand, problem));
  problem.mask = MaskKind::SlidingWindow;
  CheckResult r = checkMask(cand, problem);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "mask: used only for none, the op has sliding_window");
}

TEST_F(ChecksTest, RegistersPerBlock) {
  int64_t regs = 0;
  // 168 registers * 8 warps * 32 lanes = 43008 <= 65536
  EXPECT_FALSE(checkRegisters(chip, cand, instr, problem, regs));
  chip.regsPerBlockMax = 40000;
  CheckResult r = checkRegisters(chip, cand, instr, problem, regs);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("43008 per block"), std::string::npos) << *r;
}

TEST_F(ChecksTest, MmaDivisibility) {
  EXPECT_FALSE(checkMmaDivisibility(cand, instr, 128));
  cand.warps = 4; // 128 / 4 = 32 rows per warp > 16
  CheckResult r = checkMmaDivisibility(cand, instr, 128);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("gives 32 rows per warp; mma.m16n8k16 needs a multiple of "
                    "16, at most 16"),
            std::string::npos)
      << *r;
  // Two stacked m16 tiles per warp, when the instruction allows 32 rows.
  instr.maxRowsPerWarp = 32;
  EXPECT_FALSE(checkMmaDivisibility(cand, instr, 128));
  cand.warps = 16; // 8 rows per warp: not a multiple of 16
  r = checkMmaDivisibility(cand, instr, 128);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("gives 8 rows per warp"), std::string::npos) << *r;
  instr.maxRowsPerWarp = 0;
  cand.warps = 8;
  cand.blockN = 48; // a multiple of 16, not an allowed value
  r = checkMmaDivisibility(cand, instr, 128);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("block_n 48 not in {32, 64, 128}"), std::string::npos)
      << *r;
  cand.blockN = 40;
  r = checkMmaDivisibility(cand, instr, 128);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("not a multiple of 16"), std::string::npos);
}

TEST_F(ChecksTest, MmaCountRule) {
  instr.minMmaPerIteration = 64;
  // (16/16) * (64/8) * (128/16) = 64: enough
  EXPECT_FALSE(checkMmaDivisibility(cand, instr, 128));
  // (16/16) * (64/8) * (64/16) = 32 < 64
  CheckResult r = checkMmaDivisibility(cand, instr, 64);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("32 mma.m16n8k16 per warp"), std::string::npos) << *r;
}

TEST_F(ChecksTest, HeadDimRules) {
  EXPECT_FALSE(checkHeadDim(chip, cand, instr, 128, 128));
  EXPECT_FALSE(checkHeadDim(chip, cand, instr, 96, 64));
  // Any positive head dim: the tiles pad it to whole instruction K steps.
  EXPECT_FALSE(checkHeadDim(chip, cand, instr, 100, 100));
  EXPECT_FALSE(checkHeadDim(chip, cand, instr, 1, 59));
  EXPECT_EQ(getTileHeadDim(instr, 100), 112);
  EXPECT_EQ(getTileHeadDim(instr, 1), 16);
  CheckResult r = checkHeadDim(chip, cand, instr, 0, 64);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "head dim D = 0: must be positive");
  EXPECT_FALSE(checkHeadDim(chip, cand, instr, 121, 121));
  r = checkHeadDim(chip, cand, instr, 130, 130);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "head dim D = 130 (padded to 144 for mma.m16n8k16): above "
                "the candidate's bucket 128");
  r = checkHeadDim(chip, cand, instr, 256, 256);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("bucket 128"), std::string::npos);
  r = checkHeadDim(chip, cand, instr, 512, 128);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("at most 256"), std::string::npos);
  r = checkHeadDim(chip, cand, instr, 128, 140);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("head dim Dv = 140"), std::string::npos) << *r;
}

TEST_F(ChecksTest, ValueHeadDimIsWholeInstructionNTiles) {
  instr.kind = MatrixInstrKind::Mfma32x32x8;
  instr.m = instr.n = 32;
  instr.k = 8;
  cand.headDimMax = 96;
  // D = 80 pads to 80 (a multiple of 16) as a reduction dim; Dv = 80 pads
  // to 96, whole N = 32 tiles.
  EXPECT_EQ(getTileHeadDim(instr, 80), 80);
  EXPECT_EQ(getTileHeadDimV(instr, 80), 96);
  EXPECT_FALSE(checkHeadDim(chip, cand, instr, 80, 80));
  CheckResult r = checkHeadDim(chip, cand, instr, 96, 97);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "head dim Dv = 97 (padded to 128 for mfma.32x32x8): above "
                "the candidate's bucket 96");
}

TEST_F(ChecksTest, ElementTypes) {
  EXPECT_FALSE(checkElementType(chip, cand, instr, ElementType::BF16));
  CheckResult r = checkElementType(chip, cand, instr, ElementType::F32);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("f32 runs on the host"), std::string::npos);
  chip.features = {"cp_async"};
  EXPECT_TRUE(checkElementType(chip, cand, instr, ElementType::BF16));
}

TEST_F(ChecksTest, Pipelines) {
  EXPECT_FALSE(checkPipeline(chip, cand));
  cand.stages = 1;
  EXPECT_TRUE(checkPipeline(chip, cand));
  cand.pipeline = PipelineKind::Simple;
  EXPECT_FALSE(checkPipeline(chip, cand));
  cand.pipeline = PipelineKind::TmaWarpSpecialized;
  cand.stages = 2;
  CheckResult r = checkPipeline(chip, cand);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("no TMA/wgmma"), std::string::npos);
  cand.pipeline = PipelineKind::LdsDoubleBuffer;
  EXPECT_TRUE(checkPipeline(chip, cand));
}

TEST_F(ChecksTest, Alignment) {
  EXPECT_FALSE(checkAlignment(cand, problem)); // unaligned variant
  cand.aligned = true;
  CheckResult r = checkAlignment(cand, problem);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("Sq is dynamic"), std::string::npos);
  problem.seqQ = 256;
  problem.seqK = 96; // not a multiple of 64
  r = checkAlignment(cand, problem);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("Sk = 96 is not a multiple of 64"), std::string::npos);
  problem.seqK = 128;
  EXPECT_FALSE(checkAlignment(cand, problem));
}

TEST_F(ChecksTest, DispatchImplementedBiasThreads) {
  EXPECT_FALSE(checkDispatch(chip, cand));
  cand.onlyOn = {"sm_86", "sm_89"};
  CheckResult r = checkDispatch(chip, cand);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "dispatch: used only on sm_86, sm_89");
  cand.implemented = false;
  cand.pipeline = PipelineKind::TmaWarpSpecialized;
  r = checkImplemented(chip, cand);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "pipeline tma_ws: not yet implemented by the NVVM lowering");
  cand.supportsBias = false;
  problem.hasBias = true;
  EXPECT_TRUE(checkBias(cand, problem));
  cand.warps = 64; // 64 * 32 = 2048 threads
  r = checkThreads(chip, cand);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("2048 > 1024"), std::string::npos);
}

} // namespace

TEST(Deterministic, DqPassNeedsRowsPerWarpTimesWarps) {
  const ChipSpec &chip = *lookupChip("sm_90a");
  const MatrixInstr &instr = *chip.lookupInstr(MatrixInstrKind::MmaM16N8K16);
  TileCandidate c;
  c.blockM = 32;
  c.stages = 2;
  c.warps = 8;
  AttentionProblem p;
  p.direction = Direction::Backward;
  EXPECT_FALSE(checkDeterministic(c, instr, p)); // atomic plans: no rule
  p.deterministic = true;
  CheckResult r = checkDeterministic(c, instr, p);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "deterministic: block_m x stages = 64 query rows of shared "
                "memory, the dQ pass needs 128");
  c.warps = 4; // 16 rows x 4 warps fit 32 x 2
  EXPECT_FALSE(checkDeterministic(c, instr, p));
}

TEST(Deterministic, ProducerTileOrdersWholeUnitsFromItsLength) {
  const ChipSpec &chip = *lookupChip("sm_90a");
  const MatrixInstr &instr = *chip.lookupInstr(MatrixInstrKind::WgmmaM64NNK16);
  TileCandidate c;
  c.blockM = 64;
  c.blockN = 128;
  c.stages = 2;
  c.warps = 12;
  c.pipeline = PipelineKind::CpAsyncWarpSpecialized;
  c.orderedDqSeqlenMin = 8192;
  AttentionProblem p;
  p.direction = Direction::Backward;
  p.deterministic = true;
  p.headDim = p.headDimV = 128;
  p.seqQ = p.seqK = 16384;
  // No dQ pass: the rows-per-warp rule (192 query rows) does not apply.
  EXPECT_FALSE(checkDeterministic(c, instr, p));
  auto why = [&] {
    CheckResult r = checkDeterministic(c, instr, p);
    return r ? *r : std::string();
  };
  p.seqQ = 4096;
  EXPECT_EQ(why(), "deterministic: pipeline cp_async_ws orders dQ: for Sq and "
                   "Sk >= 8192; the op's Sq is 4096");
  p.seqQ = p.seqK = std::nullopt;
  p.seqHint = 16384;
  EXPECT_EQ(why(), "");
  p.headDim = 64;
  EXPECT_NE(why().find("D = 64 has 1, the tile 2 warpgroups"),
            std::string::npos);
  p.headDim = 96;
  EXPECT_NE(why().find("orders whole 64 x 64 units"), std::string::npos);
  p.headDim = 128;
  p.biasGrad = true;
  EXPECT_NE(why().find("the bias gradient's sums over query rows"),
            std::string::npos);
  // Atomic plans of the tile: no rule.
  p.deterministic = false;
  EXPECT_EQ(why(), "");
  // Slices on warpgroups hand the sums to the dQ writer.
  p.deterministic = true;
  c.blockN = 64;
  c.headSplit = 2;
  p.headDim = p.headDimV = 256;
  EXPECT_EQ(why(), "");
}

TEST(HeadSplit, SlicesAreInstructionMultiples) {
  // D = 256 in two: 128 + 128; a padded 208 (D = 200): 112 + 96; 144:
  // 80 + 64; one slice is the whole dim.
  EXPECT_EQ(getHeadSlice(256, 2, 16, 0).offset, 0);
  EXPECT_EQ(getHeadSlice(256, 2, 16, 1).offset, 128);
  EXPECT_EQ(getHeadSlice(256, 2, 16, 1).width, 128);
  EXPECT_EQ(getHeadSlice(208, 2, 16, 0).width, 112);
  EXPECT_EQ(getHeadSlice(208, 2, 16, 1).width, 96);
  EXPECT_EQ(getHeadSlice(144, 2, 16, 1).offset, 80);
  EXPECT_EQ(getHeadSlice(144, 2, 16, 1).width, 64);
  EXPECT_EQ(getHeadSlice(96, 1, 16, 0).width, 96);
  // Too many slices for a small dim leave the last empty (the lowering
  // refuses such a config).
  EXPECT_EQ(getHeadSlice(16, 2, 16, 1).width, 0);
}

TEST(HeadSplit, DeterministicPlansDoNotSplit) {
  const ChipSpec &chip = *lookupChip("sm_90a");
  const MatrixInstr &instr = *chip.lookupInstr(MatrixInstrKind::MmaM16N8K16);
  TileCandidate c;
  c.blockM = 32;
  c.stages = 2;
  c.warps = 4;
  c.headSplit = 2;
  AttentionProblem p;
  p.direction = Direction::Backward;
  p.deterministic = true;
  CheckResult r = checkDeterministic(c, instr, p);
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("head_split 2"), std::string::npos);
}

TEST(WarpRoleRegisters, StayWithinWhatTheCtaGetsAtLaunch) {
  // 384 threads get 168 registers each at launch; setmaxnreg only moves
  // them between warpgroups (an increase past them waits forever).
  WarpRoleRegisters r = getWarpRoleRegisters(12, 32, 65536, 255);
  EXPECT_EQ(r.producer, 24);
  EXPECT_EQ(r.consumer, 240);
  EXPECT_LE(r.producer * 128 + r.consumer * 256, 168 * 384);
  r = getWarpRoleRegisters(12, 32, 65536, 255, /*piecewiseCopies=*/true);
  EXPECT_EQ(r.producer, 32);
  EXPECT_EQ(r.consumer, 232);
  // Three computing warpgroups: 512 threads get 128 each.
  r = getWarpRoleRegisters(16, 32, 65536, 255);
  EXPECT_EQ(r.consumer, 160);
  EXPECT_LE(r.producer * 128 + r.consumer * 384, 128 * 512);
}
