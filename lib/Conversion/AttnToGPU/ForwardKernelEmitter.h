//===- ForwardKernelEmitter.h - the forward kernel's emitter ----*- C++ -*-===//
//
// The emission state of one forward attention kernel and its steps. The
// definitions are in two files: AttentionKernel.cpp (the block's products
// and softmax, the key loops of the plain pipelines, the epilogue) and
// WarpSpecializedKernel.cpp (the producer and computing warpgroups of the
// warp-specialized pipelines, their mbarrier ring and tile loops).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_FORWARDKERNELEMITTER_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_FORWARDKERNELEMITTER_H

#include "AttnDialect/Conversion/AttnToGPU/GPUTargetInfo.h"
#include "AttnDialect/Conversion/AttnToGPU/KernelABI.h"
#include "AttnDialect/Target/Constraints.h"
#include "AttnDialect/Target/TileTable.h"
#include "KernelBuilder.h"
#include "ScoreParams.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir {
namespace attn {

/// Shared-memory carving of one kernel (lib/Target's formula, which the
/// constraint checks use too).
struct SharedLayout : SharedMemoryLayout {
  SharedTileLayout kind;

  SharedLayout(const KernelSpec &spec, const GPUTargetInfo &target,
               SharedTileLayout kind)
      : SharedMemoryLayout(getSharedMemoryLayout(
            spec.blockM(), spec.blockN(), spec.stages(),
            spec.elemType.getIntOrFloatBitWidth() / 8, spec.tileHeadDim,
            spec.tileHeadDimV, target.getSharedRowPadding(),
            kind == SharedTileLayout::Swizzle128B,
            isWarpSpecialized(spec.config.getPipeline()), spec.walksTiles(),
            spec.config.getOverlapSoftmax(),
            target.getChipSpec().smemMaxBytes)),
        kind(kind) {}
};

/// Emission state of one kernel body.
class ForwardKernelEmitter : KernelBuilder {
public:
  ForwardKernelEmitter(OpBuilder &b, Location loc, Block &entry,
                       const KernelSpec &spec, const GPUTargetInfo &target)
      : KernelBuilder(b, loc), entry(entry), spec(spec), target(target),
        mma(target.createMmaEmitter(spec)),
        smem(spec, target, mma->getSharedTileLayout()) {
    elemBytes = spec.elemType.getIntOrFloatBitWidth() / 8;
    threads = spec.warps() * target.getWarpSize();
    copyThreads = threads;
    warpSpecialized = isWarpSpecialized(spec.config.getPipeline());
    overlapSoftmax = spec.config.getOverlapSoftmax();
    tileLoop = spec.walksTiles();
  }

  void emit();

private:
  Value arg(unsigned i) { return entry.getArgument(i); }
  Value exp2(Value v) { return target.emitExp2(b, loc, v); }
  Value sharedAt(int64_t byteOffset, Value stage, int64_t stageBytes);
  SharedTile sharedTile(Value base, int64_t rows, int64_t cols,
                        int64_t rowStride) {
    return {base, rows, cols, rowStride, spec.elemType, smem.kind};
  }
  SharedTile keyTile(Value stage) {
    return sharedTile(sharedAt(smem.kOffset, stage, smem.kStageBytes),
                      spec.blockN(), spec.tileHeadDim, smem.kRowStride);
  }
  SharedTile valueTile(Value stage) {
    return sharedTile(sharedAt(smem.kOffset + spec.stages() * smem.kStageBytes,
                               stage, smem.vStageBytes),
                      spec.blockN(), spec.tileHeadDimV, smem.vRowStride);
  }
  /// Waits for `pending` copy groups, then publishes them to all threads.
  void waitCopies(int pending);

  /// Copies rows of the matrix `src` into `tile`: rows of D elements, or of
  /// Dv with `valueRows` (read from the arguments when dynamic).
  void copyTile(const SharedTile &tile, bool valueRows, Value src,
                Value rowStart, Value rowLimit, Value rowStride,
                function_ref<Value(Value)> rowOffset = {});
  /// The run-time value (i32) of a dynamic head dim `d` (spec.headDim or
  /// spec.headDimV), clamped to the tile's `tileCols`; null when static.
  Value getDynamicHeadDim(int64_t d, unsigned argIndex, int64_t tileCols);
  /// Binds sq, sk and the sequence's row offsets for a serving layout.
  void bindSequence();
  /// A paged cache's page size (pageSize) and the multiplier and shift that
  /// divide a row by it (pageMagic, pageShift).
  void bindPageDivision();
  /// i32 element `i` of the i32 array argument `array`, clamped to [lo, hi].
  Value loadClamped(unsigned array, Value i, Value lo, Value hi);
  /// Element offset of key `row` in a paged cache whose pages are
  /// `pageStride` elements apart and rows `rowStride`.
  Value pagedRowOffset(Value row, Value pageStride, Value rowStride);
  /// Everything after the ids and lengths are bound.
  void emitBody();
  /// The tile's global pointers (and dropout's b * Hq + h).
  void bindPointers();
  /// What every tile of the workgroup shares: score parameters, shared
  /// memory, accumulator layouts.
  void bindTileInvariants();
  /// The tile rows (and query positions) of this thread's row slots.
  void bindRows();
  /// The key blocks [jLo, jHi) any row of the tile sees (of its split).
  std::pair<Value, Value> getKeyBlocks();
  /// Issues (and commits) the copies of this block's Q tile.
  void loadQueryTile();
  void loadKV(Value block, Value stage);
  /// Adds the bias of the key block at n0 to this thread's scores.
  void addBias(MutableArrayRef<Value> s, Value tScale, Value n0);
  /// One key block; `afterScores`, when set, runs right after S = Q K^T.
  SmallVector<Value> emitBlock(Value block, Value stage, ValueRange state,
                               function_ref<void()> afterScores = {});
  /// The online softmax of one key block's scores `s`, from the row state
  /// (m, then l): the probabilities P V takes (dropped out where dropout
  /// applies), the factors that rescale O, and the new m and l.
  struct SoftmaxStep {
    SmallVector<Value> p, alpha, stats;
  };
  SoftmaxStep emitSoftmax(Value block, SmallVector<Value> s, ValueRange state);
  /// O's elements times their row slot's factor.
  SmallVector<Value> rescale(ValueRange acc, ArrayRef<Value> alpha);
  /// A loop over key blocks [jLo, jHi) carrying `init`: `body` emits block
  /// j from the carried state and returns the next.
  scf::ForOp emitBlockLoop(
      Value jLo, Value jHi, ValueRange init,
      function_ref<SmallVector<Value>(Value j, ValueRange state)> body);
  /// The key-block loop over [jLo, jHi): K/V staged in `stages` buffers.
  scf::ForOp emitKeyLoop(Value jLo, Value jHi, ValueRange init);
  /// The same loop for async outputs: the next block's loads are issued
  /// after S = Q K^T (which completes the previous P V) and a barrier.
  scf::ForOp emitAsyncKeyLoop(Value jLo, Value jHi, ValueRange init);
  /// Issues block j + 1's K/V copies into its buffer when j + 1 < jHi.
  void loadNextKV(Value j, Value jLo, Value jHi);
  /// Block j's place in the ring's sequence of blocks.
  Value ringIndex(Value j, Value jLo) {
    Value i = sub(j, jLo);
    return ringBase ? add(i, ringBase) : i;
  }
  Value stageOf(Value j, Value jLo) {
    int64_t n = spec.stages();
    if (llvm::isPowerOf2_64(n))
      return arith::AndIOp::create(b, loc, ringIndex(j, jLo), c32(n - 1));
    return arith::RemUIOp::create(b, loc, ringIndex(j, jLo), c32(n));
  }
  /// How often block j's ring stage was filled before it (the mbarrier
  /// phases the producer and the computing warpgroups wait on).
  Value useOf(Value j, Value jLo) {
    return arith::DivUIOp::create(b, loc, ringIndex(j, jLo),
                                  c32(spec.stages()));
  }
  /// Warp-specialized kernels: a producer warpgroup fills a ring of K/V
  /// stages, the other warpgroups only compute (see emitWarpSpecialized).
  void emitWarpSpecialized(Value jLo, Value jHi);
  /// Initializes the ring and splits the workgroup: `produce` runs in the
  /// producer (one thread of it with tensor maps), `consume` in the
  /// computing warpgroups.
  void emitRoles(function_ref<void()> produce, function_ref<void()> consume);
  /// The computing warpgroups' key loop over [jLo, jHi) and epilogue.
  void emitConsumerTile(Value jLo, Value jHi);
  /// The key blocks [jLo, jHi) (at least one) of a tile with the softmax
  /// overlapped: S of block j and O += P V of block j - 1 in flight
  /// together, the softmax of j under the latter (FlashAttention-3's
  /// intra-warpgroup overlap). Returns the state after the last P V.
  SmallVector<Value> emitOverlappedBlocks(Value jLo, Value jHi,
                                          ValueRange init);
  /// The roles of a kernel whose workgroups walk tiles (forEachTile), each
  /// with its own Q: a persistent grid, or a packed sequence's row blocks
  /// from `firstBlock` (the workgroup's grid x).
  void emitTileLoop(Value firstBlock = Value());
  /// Row `r` of a sequence starting at packed row `row0` (dense: `r`).
  Value packedRow(Value r, Value row0) {
    return spec.layout == SeqLayout::Varlen ? add(r, row0) : r;
  }
  /// Runs `body` for each of the workgroup's tiles with m0, head, headKV,
  /// batch and ringBase bound; `tileIndex` counts the workgroup's tiles.
  /// `firstBlock`: a packed sequence's first row block (else null).
  void
  forEachTile(Value firstBlock,
              function_ref<void(Value jLo, Value jHi, Value tileIndex)> body);
  void emitProducerLoop(Value jLo, Value jHi);
  /// The producer of a tma_ws kernel: one thread issues block j's K and V
  /// boxes (and Q's with the first block) against `full[stage]`.
  void loadTensorTiles(Value j, Value jLo, Value stage);
  /// Copies `tile`'s 64-column panels from the tensor map argument `map`
  /// (ABI attn-fwd-v2) at row `row` of head `h`, completing on `bar`.
  void loadTensorTile(const SharedTile &tile, unsigned map, Value row, Value h,
                      Value bar);
  /// Stores the tensor-map arguments (attn-fwd-v2) to stack slots whose
  /// addresses TMA takes (attn-nvvm-tensor-map-args then reads them in
  /// the parameter space instead).
  void bindTensorMaps();
  scf::ForOp emitConsumerLoop(Value jLo, Value jHi, ValueRange init);
  /// The ring's mbarriers: `full` completes when stage s holds its block,
  /// `empty` when every computing thread is done reading it.
  Value fullBarrier(Value stage) { return ringBarrier(0, stage); }
  Value emptyBarrier(Value stage) { return ringBarrier(spec.stages(), stage); }
  Value ringBarrier(int64_t first, Value stage) {
    return sharedAt(smem.barrierOffset + 8 * first, stage, 8);
  }
  /// Waits for use `use` of a `full` barrier to complete (parity use & 1).
  void waitFull(Value bar, Value use) {
    target.emitBarrierWait(b, loc, bar,
                           arith::AndIOp::create(b, loc, use, c32(1)));
  }
  /// Waits until use `use - 1` of an `empty` barrier completed (parity
  /// (use & 1) ^ 1, which a fresh barrier passes for use 0).
  void waitEmpty(Value bar, Value use) {
    target.emitBarrierWait(
        b, loc, bar,
        arith::XOrIOp::create(
            b, loc, arith::AndIOp::create(b, loc, use, c32(1)), c32(1)));
  }
  /// When j > jLo, arrives on `empty` of block j - 1's stage: its P V
  /// completed, so the producer may refill it.
  void releaseStageBefore(Value j, Value jLo);
  /// In a tile loop, once block j's S = Q K^T completed and j is the tile's
  /// last block: Q's buffer goes back to the producer before the block's
  /// softmax, which the next tile's Q load then runs under. A uniform branch
  /// around one mbarrier arrive (ptxas keeps an overlapped P V in flight
  /// across it: test/Pipelines/nvvm-ptxas-tma-overlap.mlir).
  void releaseQueryAfter(Value j, Value jHi);
  /// With the softmax overlapped (overlap_softmax), `full` and `empty`
  /// guard a stage's K, and these its V: V of block j is read one block
  /// later than K, and K of block j + stages is loaded meanwhile.
  Value valueFullBarrier(Value stage) {
    return ringBarrier(2 * spec.stages(), stage);
  }
  Value valueEmptyBarrier(Value stage) {
    return ringBarrier(3 * spec.stages(), stage);
  }
  /// A tile loop's Q buffer (queryBuffer): `full` when it holds the tile's
  /// Q, `empty` when every S = Q K^T of the tile before that used the
  /// buffer completed.
  Value queryFullBarrier() { return ringBarrier(ringBarriers(), queryBuffer); }
  Value queryEmptyBarrier() {
    return ringBarrier(ringBarriers() + smem.queryBuffers, queryBuffer);
  }
  /// Binds the Q buffer of the workgroup's tile `tileIndex` (qTile,
  /// queryBuffer) and returns how often that buffer was filled before.
  Value bindQueryBuffer(Value tileIndex);
  /// The ring's barriers: full and empty per stage, for K and V apart when
  /// the softmax is overlapped.
  int64_t ringBarriers() const {
    return (overlapSoftmax ? 4 : 2) * spec.stages();
  }
  /// The loop state before the first key block: m = -inf, l = 0, O = 0.
  SmallVector<Value> getInitialState();
  void emitEpilogue(ValueRange state);
  /// Stores the normalized accumulator rows (f32 `vals(e)` of element e)
  /// at `base` + row * rowStride + column, as `type`, runs of adjacent
  /// columns as one vector store of at most `maxAlign` bytes; columns of
  /// the padded tile past Dv are not stored.
  void storeRows(Value base, function_ref<Value(Value)> rowOffset, Type type,
                 int64_t maxAlign, function_ref<Value(unsigned)> vals);
  /// Element offset (i64) of tile row `r` in a q/o-shaped tensor whose head
  /// and row strides are given: r * rowStride, or with packed GQA heads
  /// (r % G) * headStride + (r / G) * rowStride.
  Value rowOffset(Value r, Value headStride, Value rowStride);
  /// The query position of tile row `r` (r / G with packed GQA heads).
  Value queryOf(Value r) {
    return spec.packGQA() ? arith::DivUIOp::create(b, loc, r, group) : r;
  }
  /// The output rows and their lse (when lse is not null), where the op
  /// puts them.
  void storeOutputs(
      function_ref<Value(unsigned)> normalized,
      function_ref<void(Value base, Value headStride, Value enabled)> storeLse);
  /// Restricts [jLo, jHi) to this workgroup's share of the key blocks when
  /// the keys are split (split-KV).
  void clampToSplit(Value &jLo, Value &jHi);

  Block &entry;
  const KernelSpec &spec;
  const GPUTargetInfo &target;
  std::unique_ptr<MmaEmitter> mma;
  SharedLayout smem;
  int64_t elemBytes, threads;
  /// Threads that issue tile copies (all, or a producer warpgroup's).
  int64_t copyThreads;
  bool warpSpecialized;
  /// The softmax of a block runs under the previous block's P V.
  bool overlapSoftmax;
  /// Workgroups walk tiles, Q with barriers of its own (emitTileLoop).
  bool tileLoop;

  // Values computed once at kernel entry.
  Value tid, lane, warpRow, m0, head, headKV, batch, sq, sk, smemBase;
  /// Query heads per key/value head; rows of the tile (G * Sq when packed).
  Value group, rows;
  /// First query and key row of the sequence (packed batches; else 0).
  Value qRow0, kRow0;
  /// Key blocks of the workgroup's earlier tiles (emitTileLoop).
  Value ringBase;
  /// A tile loop's current Q buffer (of smem.queryBuffers).
  Value queryBuffer;
  /// A paged cache's page size and its division (bindPageDivision).
  Value pageSize, pageMagic, pageShift;
  /// Split-KV: the number of splits and this workgroup's one.
  Value numSplits, split;
  /// D and Dv given at run time (null when static).
  Value headDimArg, headDimVArg;
  Value qPtr, kPtr, vPtr, oPtr, biasPtr;
  /// Generic addresses of the q, k and v tensor maps (tma_ws).
  SmallVector<Value> tensorMaps;
  ScoreParams score;
  /// With dropout: b * Hq + h.
  Value dropoutBH;
  SharedTile qTile;
  SmallVector<Value> query;
  AccLayout sLayout, oLayout;
  SmallVector<Value> rowOfSlot;   // absolute tile row of each row slot
  SmallVector<Value> queryOfSlot; // its query position (for masks)
};

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_FORWARDKERNELEMITTER_H
