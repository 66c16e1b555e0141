//===- AttentionKernel.cpp - target-independent attention kernel -*- C++
//-*-===//
//
// Emits the body of the FlashAttention-2 forward kernel. All per-tile work is
// unrolled here in C++, so register arrays (scores, probabilities, output
// accumulators) are SSA values indexed by constants only.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Conversion/AttnToGPU/AttentionKernel.h"
#include "AttnDialect/Conversion/AttnToGPU/SharedMemory.h"
#include "AttnDialect/Target/Constraints.h"
#include "AttnDialect/Utils/MaskUtils.h"
#include "DropoutFragment.h"
#include "KernelBuilder.h"
#include "ScoreParams.h"
#include "SplitWorkspace.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {
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
            spec.config.getOverlapSoftmax())),
        kind(kind) {}
};

/// Emission state of one kernel body.
class KernelEmitter : KernelBuilder {
public:
  KernelEmitter(OpBuilder &b, Location loc, Block &entry,
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
    return sharedTile(sharedAt(smem.qBytes, stage, smem.kStageBytes),
                      spec.blockN(), spec.tileHeadDim, smem.kRowStride);
  }
  SharedTile valueTile(Value stage) {
    return sharedTile(sharedAt(smem.qBytes + spec.stages() * smem.kStageBytes,
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
  /// With the softmax overlapped (overlap_softmax), `full` and `empty`
  /// guard a stage's K, and these its V: V of block j is read one block
  /// later than K, and K of block j + stages is loaded meanwhile.
  Value valueFullBarrier(Value stage) {
    return ringBarrier(2 * spec.stages(), stage);
  }
  Value valueEmptyBarrier(Value stage) {
    return ringBarrier(3 * spec.stages(), stage);
  }
  /// A tile loop's Q buffer: `full` when it holds the tile's Q,
  /// `empty` when every S = Q K^T of the previous tile completed.
  Value queryFullBarrier() { return ringBarrier(ringBarriers(), c32(0)); }
  Value queryEmptyBarrier() { return ringBarrier(ringBarriers() + 1, c32(0)); }
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
} // namespace

Value KernelEmitter::sharedAt(int64_t byteOffset, Value stage,
                              int64_t stageBytes) {
  Value off = c32(byteOffset);
  if (stage)
    off = add(off, mul(stage, c32(stageBytes)));
  return gep(smemBase, b.getI8Type(), off);
}

void KernelEmitter::waitCopies(int pending) {
  target.emitCopyWait(b, loc, pending);
  mma->emitSharedWritesVisible(b, loc);
  gpu::BarrierOp::create(b, loc);
}

void KernelEmitter::copyTile(const SharedTile &tile, bool valueRows, Value src,
                             Value rowStart, Value rowLimit, Value rowStride,
                             function_ref<Value(Value)> rowOffset) {
  // A producer warpgroup copies with few registers (fixed columns).
  emitTileCopy(b, loc, target, tile, valueRows ? spec.headDimV : spec.headDim,
               tid, copyThreads, src, rowStart, rowLimit, rowStride,
               spec.config.getAlignBytes(), rowOffset,
               valueRows ? headDimVArg : headDimArg,
               /*fixedColumns=*/copyThreads != threads);
}

Value KernelEmitter::getDynamicHeadDim(int64_t d, unsigned argIndex,
                                       int64_t tileCols) {
  if (!ShapedType::isDynamic(d))
    return Value();
  // The runtime checks D <= max_head_dim; the clamp keeps a bad value from
  // reaching past the tile.
  return arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, arg(argIndex), c32(0)),
      c32(tileCols));
}

Value KernelEmitter::loadClamped(unsigned array, Value i, Value lo, Value hi) {
  Value v = LLVM::LoadOp::create(b, loc, b.getI32Type(),
                                 gep(arg(array), b.getI32Type(), ext(i)), 4);
  return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, v, lo),
                                hi);
}

void KernelEmitter::bindSequence() {
  qRow0 = kRow0 = c32(0);
  switch (spec.layout) {
  case SeqLayout::Dense:
    return;
  case SeqLayout::Varlen: {
    // Sq and Sk arrive as the packed row counts; offsets are clamped into
    // them so that bad offsets touch nothing outside the tensors.
    Value next = add(batch, c32(1));
    qRow0 = loadClamped(kArgCuSeqlensQ, batch, c32(0), sq);
    kRow0 = loadClamped(kArgCuSeqlensK, batch, c32(0), sk);
    sq = arith::SubIOp::create(
        b, loc, loadClamped(kArgCuSeqlensQ, next, qRow0, sq), qRow0);
    sk = arith::SubIOp::create(
        b, loc, loadClamped(kArgCuSeqlensK, next, kRow0, sk), kRow0);
    return;
  }
  case SeqLayout::KVCache:
  case SeqLayout::Paged:
    // Sk is the cache's capacity (pages per batch x page size when paged).
    sk = loadClamped(kArgSeqlensK, batch, c32(0), sk);
    return;
  }
}

Value KernelEmitter::pagedRowOffset(Value row, Value pageStride,
                                    Value rowStride) {
  // Rows past Sk are not copied, but the table is read for them too: clamp.
  Value last = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, sk, c32(1)), c32(0));
  Value r = arith::MinSIOp::create(b, loc, row, last);
  Value pageSize = arg(kArgPageSize);
  Value slot = arith::DivUIOp::create(b, loc, r, pageSize);
  Value at = add(mul(ext(batch), arg(kArgBlockTableStride)), ext(slot));
  Value page = LLVM::LoadOp::create(
      b, loc, b.getI32Type(), gep(arg(kArgBlockTable), b.getI32Type(), at), 4);
  page = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, page, c32(0)),
      arith::SubIOp::create(b, loc, arg(kArgNumPages), c32(1)));
  Value inPage = arith::RemUIOp::create(b, loc, r, pageSize);
  return add(mul(ext(page), pageStride), mul(ext(inPage), rowStride));
}

/// Scores become t * tScale + bias * log2(e) (the exp2 domain, after the
/// softcap as the op defines). Rows and keys past the ends read the last
/// bias element instead (their scores are masked or never stored), so every
/// load is in bounds; broadcast dimensions have stride 0.
void KernelEmitter::addBias(MutableArrayRef<Value> s, Value tScale, Value n0) {
  Value lastRow = arith::SubIOp::create(b, loc, sq, c32(1));
  Value lastCol = arith::SubIOp::create(b, loc, sk, c32(1));
  Value colBase = add(n0, sLayout.laneCol);
  Value log2e = cf(M_LOG2E);
  int64_t bytes = spec.biasType.getIntOrFloatBitWidth() / 8;
  SmallVector<Value> rowPtr;
  for (Value row : rowOfSlot) {
    Value r = arith::MinSIOp::create(b, loc, row, lastRow);
    rowPtr.push_back(
        gep(biasPtr, spec.biasType, mul(ext(r), arg(kArgBiasStrideB + 2))));
  }
  for (unsigned e = 0, ne = s.size(); e < ne; ++e) {
    Value col = arith::MinSIOp::create(
        b, loc, add(colBase, c32(sLayout.colOffsets[e])), lastCol);
    Value ptr = gep(rowPtr[sLayout.rowSlot[e]], spec.biasType,
                    mul(ext(col), arg(kArgBiasStrideB + 3)));
    Value x = LLVM::LoadOp::create(b, loc, spec.biasType, ptr, bytes);
    if (x.getType() != f32)
      x = arith::ExtFOp::create(b, loc, f32, x);
    s[e] = math::FmaOp::create(b, loc, s[e], tScale, fmul(x, log2e));
  }
}

void KernelEmitter::loadQueryTile() {
  if (spec.packGQA())
    copyTile(qTile, false, qPtr, m0, rows, Value(), [&](Value r) {
      return rowOffset(r, arg(kArgQStrideB + 1), arg(kArgQStrideB + 2));
    });
  else
    copyTile(qTile, false, qPtr, m0, sq, arg(kArgQStrideB + 2));
  target.emitCopyCommit(b, loc);
}

void KernelEmitter::loadKV(Value block, Value stage) {
  Value n0 = mul(block, c32(spec.blockN()));
  SharedTile k = keyTile(stage), v = valueTile(stage);
  if (spec.layout == SeqLayout::Paged) {
    // Each row finds its page; kPtr and vPtr hold only the head's offset.
    copyTile(k, false, kPtr, n0, sk, Value(), [&](Value row) {
      return pagedRowOffset(row, arg(kArgKStrideB), arg(kArgKStrideB + 2));
    });
    copyTile(v, true, vPtr, n0, sk, Value(), [&](Value row) {
      return pagedRowOffset(row, arg(kArgVStrideB), arg(kArgVStrideB + 2));
    });
  } else {
    copyTile(k, false, kPtr, n0, sk, arg(kArgKStrideB + 2));
    copyTile(v, true, vPtr, n0, sk, arg(kArgVStrideB + 2));
  }
  target.emitCopyCommit(b, loc);
}

/// One key block: scores, mask, online-softmax update, O += P V.
/// `state` is [m per slot..., l per slot..., O...].
SmallVector<Value> KernelEmitter::emitBlock(Value block, Value stage,
                                            ValueRange state,
                                            function_ref<void()> afterScores) {
  unsigned slots = sLayout.getNumRowSlots();
  SharedTile k = keyTile(stage), v = valueTile(stage);
  SmallVector<Value> s = mma->computeScores(b, loc, lane, query, k);
  if (afterScores)
    afterScores();
  SoftmaxStep step = emitSoftmax(block, s, state.take_front(2 * slots));
  SmallVector<Value> newState(step.stats);
  SmallVector<Value> acc = rescale(state.drop_front(2 * slots), step.alpha);
  llvm::append_range(newState,
                     mma->accumulateOutput(b, loc, lane, step.p, v, acc));
  return newState;
}

SmallVector<Value> KernelEmitter::rescale(ValueRange acc,
                                          ArrayRef<Value> alpha) {
  SmallVector<Value> out;
  for (unsigned e = 0, ne = oLayout.getNumElements(); e < ne; ++e)
    out.push_back(fmul(acc[e], alpha[oLayout.rowSlot[e]]));
  return out;
}

KernelEmitter::SoftmaxStep KernelEmitter::emitSoftmax(Value block,
                                                      SmallVector<Value> s,
                                                      ValueRange state) {
  unsigned slots = sLayout.getNumRowSlots();
  // Scores in the exp2 domain are t * tScale: t is q.k (times scale*log2e)
  // or the soft-capped score (times log2e). Keeping the factor out of the
  // elementwise work makes exp2(t * tScale - m) one fma; it needs
  // tScale > 0 (scale > 0) so that max commutes with it. A bias is added
  // to t * tScale, which then is the score itself (tScale = 1).
  Value tScale = spec.softcap ? score.softcapLog2 : score.scaleLog2;
  Value n0 = mul(block, c32(spec.blockN()));
  if (spec.softcap)
    for (Value &x : s)
      x = math::TanhOp::create(b, loc, fmul(x, score.softcapScale));
  if (spec.biasType) {
    addBias(s, tScale, n0);
    tScale = cf(1.0);
  }

  // Mask only blocks crossing a mask edge or the key tail, tested at the
  // two corners of this warp's rows x block's keys (masks are bands, so
  // both corners visible means everything between is). Uniform per warp.
  Value negInf = cf(-std::numeric_limits<double>::infinity());
  Value rowFirst = queryOf(add(m0, warpRow));
  Value rowLast =
      queryOf(add(add(m0, warpRow), c32(mma->getRowsPerWarp() - 1)));
  Value inside = arith::AndIOp::create(
      b, loc,
      emitKeyVisible(b, loc, score.mask, rowFirst,
                     add(n0, c32(spec.blockN() - 1)), sq, sk),
      emitKeyVisible(b, loc, score.mask, rowLast, n0, sq, sk));
  auto ifOp = scf::IfOp::create(b, loc, ValueRange(s).getTypes(), inside,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, loc, s);
    b.setInsertionPointToStart(ifOp.elseBlock());
    Value colBase = add(n0, sLayout.laneCol);
    SmallVector<Value> masked;
    for (unsigned e = 0, ne = s.size(); e < ne; ++e) {
      Value col = add(colBase, c32(sLayout.colOffsets[e]));
      Value visible = emitKeyVisible(
          b, loc, score.mask, queryOfSlot[sLayout.rowSlot[e]], col, sq, sk);
      masked.push_back(arith::SelectOp::create(b, loc, visible, s[e], negInf));
    }
    scf::YieldOp::create(b, loc, masked);
  }
  s.assign(ifOp.getResults().begin(), ifOp.getResults().end());
  SmallVector<Value> rowMax(slots, negInf);
  for (unsigned e = 0, ne = s.size(); e < ne; ++e)
    rowMax[sLayout.rowSlot[e]] = fmax(rowMax[sLayout.rowSlot[e]], s[e]);

  SmallVector<Value> newState(state.begin(), state.end());
  SmallVector<Value> alpha(slots), negM(slots);
  for (unsigned slot = 0; slot < slots; ++slot) {
    Value mx = rowMax[slot];
    for (int32_t off : sLayout.rowReduceXor)
      mx = fmax(mx, target.emitShuffleXor(b, loc, mx, off));
    Value mNew = fmax(state[slot], fmul(mx, tScale));
    // A row with nothing visible yet keeps m = -inf; subtract 0 instead so
    // exp2 sees -inf (giving 0), never -inf - -inf.
    Value empty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mNew, negInf);
    Value mUse = arith::SelectOp::create(b, loc, empty, cf(0.0), mNew);
    alpha[slot] = exp2(arith::SubFOp::create(b, loc, state[slot], mUse));
    negM[slot] = arith::NegFOp::create(b, loc, mUse);
    newState[slot] = mNew;
  }
  SmallVector<Value> rowSum(slots, cf(0.0));
  for (unsigned e = 0, ne = s.size(); e < ne; ++e) {
    unsigned slot = sLayout.rowSlot[e];
    s[e] = exp2(math::FmaOp::create(b, loc, s[e], tScale, negM[slot]));
    rowSum[slot] = fadd(rowSum[slot], s[e]);
  }
  // l stays a per-lane partial sum; the lanes of a row are summed once, in
  // the epilogue (every lane of a row rescales by the same alpha).
  for (unsigned slot = 0; slot < slots; ++slot)
    newState[slots + slot] =
        fadd(fmul(state[slots + slot], alpha[slot]), rowSum[slot]);
  // Dropout acts on P V only: l sums every probability, kept or not.
  if (score.dropout) {
    bool aligned = spec.blockM() % 16 == 0 && spec.blockN() % 16 == 0 &&
                   mma->getRowsPerWarp() % 16 == 0;
    SmallVector<Value> z =
        emitDropoutFactors(b, loc, *score.dropout, dropoutBH, sLayout,
                           add(m0, warpRow), n0, aligned, /*transposed=*/false);
    for (unsigned e = 0, ne = s.size(); e < ne; ++e)
      s[e] = fmul(s[e], z[e]);
  }
  return {s, alpha, newState};
}

void KernelEmitter::emitEpilogue(ValueRange state) {
  unsigned slots = sLayout.getNumRowSlots();
  Value negInf = cf(-std::numeric_limits<double>::infinity());
  SmallVector<Value> inv(slots), lse(slots);
  for (unsigned slot = 0; slot < slots; ++slot) {
    Value l = state[slots + slot];
    for (int32_t off : sLayout.rowReduceXor)
      l = fadd(l, target.emitShuffleXor(b, loc, l, off));
    Value has =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l, cf(0.0));
    // Rows that saw no key get zeros and lse = -inf.
    Value safeL = arith::SelectOp::create(b, loc, has, l, cf(1.0));
    inv[slot] = arith::SelectOp::create(
        b, loc, has, arith::DivFOp::create(b, loc, cf(1.0), safeL), cf(0.0));
    Value m = arith::SelectOp::create(b, loc, has, state[slot], cf(0.0));
    Value lse2 = fadd(m, math::Log2Op::create(b, loc, safeL));
    lse[slot] =
        arith::SelectOp::create(b, loc, has, fmul(lse2, cf(M_LN2)), negInf);
  }

  auto normalized = [&](unsigned e) {
    return fmul(state[2 * slots + e], inv[oLayout.rowSlot[e]]);
  };
  Value firstCol = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         sLayout.laneCol, c32(0));
  // lse rows: `headStride` apart between packed heads, 1 between rows.
  auto storeLse = [&](Value base, Value headStride, Value enabled) {
    for (unsigned slot = 0; slot < slots; ++slot) {
      Value row = rowOfSlot[slot];
      Value ok = arith::AndIOp::create(
          b, loc, arith::AndIOp::create(b, loc, enabled, firstCol),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row, rows));
      OpBuilder::InsertionGuard guard(b);
      auto ifOp = scf::IfOp::create(b, loc, ok, /*withElse=*/false);
      b.setInsertionPointToStart(ifOp.thenBlock());
      LLVM::StoreOp::create(b, loc, lse[slot],
                            gep(base, f32, rowOffset(row, headStride, c64(1))),
                            4);
    }
  };
  if (spec.splitKV()) {
    // Several splits: this one's rows, normalized by its own sum, and its
    // lse go to the workspace (SplitWorkspace.h) for the _combine kernel.
    Value many = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                       numSplits, c32(1));
    auto ifOp = scf::IfOp::create(b, loc, many, /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      int64_t dv = spec.headDimV;
      SplitWorkspace ws = getSplitWorkspace(b, loc, entry, dv, numSplits);
      Value row0 = getSplitRowIndex(b, loc, entry, split, batch, head);
      Value seq = ext(arg(kArgSeqQ));
      storeRows(
          gep(ws.outputs, f32, mul(row0, c64(dv))),
          [&](Value r) { return mul(rowOffset(r, seq, c64(1)), c64(dv)); }, f32,
          dv % 4 == 0 ? 16 : 4, normalized);
      Value lsePart = gep(ws.lse, f32, row0);
      storeLse(lsePart, seq, arith::ConstantIntOp::create(b, loc, 1, 1));
    }
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.elseBlock());
    storeOutputs(normalized, storeLse);
    return;
  }
  storeOutputs(normalized, storeLse);
}

void KernelEmitter::storeOutputs(
    function_ref<Value(unsigned)> normalized,
    function_ref<void(Value base, Value headStride, Value enabled)> storeLse) {
  storeRows(
      oPtr,
      [&](Value r) {
        return rowOffset(r, arg(kArgOStrideB + 1), arg(kArgOStrideB + 2));
      },
      spec.elemType, spec.config.getAlignBytes(),
      [&](unsigned e) {
        Value x = normalized(e);
        return spec.elemType == f32
                   ? x
                   : arith::TruncFOp::create(b, loc, spec.elemType, x)
                         .getResult();
      });
  // lse, by the lane holding column 0 of each row, when lse is not null.
  Value lsePtr = arg(kArgLse);
  Value null = LLVM::ZeroOp::create(b, loc, lsePtr.getType());
  Value hasLse =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, lsePtr, null);
  // A packed batch's lse rows follow its query rows.
  Value lseBase = add(spec.layout == SeqLayout::Varlen
                          ? ext(qRow0)
                          : mul(ext(batch), arg(kArgLseStrideB)),
                      mul(ext(head), arg(kArgLseStrideB + 1)));
  storeLse(gep(lsePtr, f32, lseBase), arg(kArgLseStrideB + 1), hasLse);
}

Value KernelEmitter::rowOffset(Value r, Value headStride, Value rowStride) {
  if (!spec.packGQA())
    return mul(ext(r), rowStride);
  Value g = arith::RemUIOp::create(b, loc, r, group);
  return add(mul(ext(g), headStride), mul(ext(queryOf(r)), rowStride));
}

void KernelEmitter::storeRows(Value base,
                              function_ref<Value(Value)> rowOffsetOf, Type type,
                              int64_t maxAlign,
                              function_ref<Value(unsigned)> vals) {
  // Runs of adjacent columns of one row become one vector store.
  int64_t bytes = type.getIntOrFloatBitWidth() / 8;
  unsigned ne = oLayout.getNumElements();
  // Runs start at a multiple of their length; with a padded Dv, a length
  // that divides Dv keeps each run wholly before or past it.
  // A dynamic Dv may end anywhere: one element per store.
  int64_t dv = spec.headDimV;
  bool dynamic = ShapedType::isDynamic(dv);
  bool tail = dynamic || dv < spec.tileHeadDimV;
  unsigned maxRun = 16 / bytes;
  if (tail)
    maxRun = dynamic ? 1 : std::min<unsigned>(maxRun, dv & -dv);
  Value dvValue = dynamic ? headDimVArg : c32(dv);
  for (unsigned e = 0; e < ne;) {
    unsigned slot = oLayout.rowSlot[e];
    unsigned run = 1;
    while (e + run < ne && run < maxRun && oLayout.rowSlot[e + run] == slot &&
           oLayout.colOffsets[e + run] == oLayout.colOffsets[e] + run)
      ++run;
    while (run & (run - 1))
      --run; // keep power-of-two runs so the store is naturally aligned
    SmallVector<Value> row;
    for (unsigned i = 0; i < run; ++i)
      row.push_back(vals(e + i));
    Value r = rowOfSlot[slot];
    Value col = add(oLayout.laneCol, c32(oLayout.colOffsets[e]));
    Value inRange =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r, rows);
    if (tail)
      inRange = arith::AndIOp::create(
          b, loc, inRange,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, col,
                                dvValue));
    OpBuilder::InsertionGuard guard(b);
    auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value ptr = gep(base, type, add(rowOffsetOf(r), ext(col)));
    Value vec = vector::FromElementsOp::create(
        b, loc, VectorType::get({(int64_t)run}, type), row);
    LLVM::StoreOp::create(b, loc, vec, ptr,
                          std::min<int64_t>(run * bytes, maxAlign));
    e += run;
  }
}

void KernelEmitter::clampToSplit(Value &jLo, Value &jHi) {
  if (!spec.splitKV())
    return;
  // Split s of n takes key blocks [s * c, (s + 1) * c), c = ceil(blocks /
  // n), of those its rows see; the last splits may get none.
  Value blocks = arith::CeilDivUIOp::create(b, loc, sk, c32(spec.blockN()));
  Value chunk = arith::CeilDivUIOp::create(b, loc, blocks, numSplits);
  Value first = mul(split, chunk);
  jLo = arith::MaxUIOp::create(b, loc, jLo, first);
  jHi = arith::MinUIOp::create(b, loc, jHi, add(first, chunk));
  jHi = arith::MaxUIOp::create(b, loc, jHi, jLo);
}

void KernelEmitter::emit() {
  int64_t warpSize = target.getWarpSize();
  tid = toI32(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  lane = arith::RemUIOp::create(b, loc, tid, c32(warpSize));
  Value warp = arith::DivUIOp::create(b, loc, tid, c32(warpSize));
  // A producer warpgroup owns no rows; it comes first, so computing warp w
  // is warp w + 4 (the producer's own warpRow is never used).
  if (warpSpecialized)
    warp = sub(arith::MaxUIOp::create(b, loc, warp, c32(kProducerWarps)),
               c32(kProducerWarps));
  warpRow = mul(warp, c32(mma->getRowsPerWarp()));
  sq = arg(kArgSeqQ);
  sk = arg(kArgSeqK);
  headDimArg = getDynamicHeadDim(spec.headDim, kArgHeadDim, spec.tileHeadDim);
  headDimVArg =
      getDynamicHeadDim(spec.headDimV, kArgHeadDimV, spec.tileHeadDimV);
  group = arith::DivSIOp::create(b, loc, arg(kArgHeadsQ), arg(kArgHeadsKV));
  if (spec.config.getPersistent()) {
    // Dense batches only (NVVMTargetInfo): the tiles come from forEachTile.
    rows = sq;
    qRow0 = kRow0 = c32(0);
    return emitTileLoop();
  }
  Value mBlock = blockId(gpu::Dimension::x);
  if (isCausal(spec.mask)) {
    // Under a causal mask the last query blocks see the most keys: start
    // them first, so that the grid's tail is made of the cheap blocks.
    Value blocks = gridDim(gpu::Dimension::x);
    mBlock = arith::SubIOp::create(
        b, loc, arith::SubIOp::create(b, loc, blocks, c32(1)), mBlock);
  }
  head = blockId(gpu::Dimension::y);
  batch = blockId(gpu::Dimension::z);
  if (spec.splitKV()) {
    // Grid z is batch x splits, the splits of a batch adjacent.
    numSplits = arith::MaxSIOp::create(b, loc, arg(kArgNumSplits), c32(1));
    split = arith::RemUIOp::create(b, loc, batch, numSplits);
    batch = arith::DivUIOp::create(b, loc, batch, numSplits);
  }
  m0 = mul(mBlock, c32(spec.blockM()));
  if (spec.packGQA()) {
    // Grid y runs over key/value heads; `head` is the group's first.
    headKV = head;
    head = mul(headKV, group);
  } else {
    headKV = arith::DivSIOp::create(b, loc, head, group);
  }
  bindSequence();
  rows = spec.packGQA() ? mul(sq, group) : sq;
  if (spec.layout == SeqLayout::Dense) {
    emitBody();
    return;
  }
  OpBuilder::InsertionGuard guard(b);
  if (spec.layout == SeqLayout::Varlen && warpSpecialized) {
    return emitTileLoop(mBlock);
  }
  if (spec.layout == SeqLayout::Varlen) {
    // The grid is sized by max_seqlen_q, a hint the device cannot check: a
    // workgroup takes row blocks x, x + gridDim.x, ... of its sequence, so
    // a hint below a sequence's length costs time, never rows. Blocks past
    // a short sequence's end do nothing.
    Value blocks = arith::CeilDivUIOp::create(b, loc, rows, c32(spec.blockM()));
    Value step = gridDim(gpu::Dimension::x);
    auto loop = scf::ForOp::create(b, loc, mBlock, blocks, step);
    b.setInsertionPointToStart(loop.getBody());
    // Every warp is done with the previous block's shared tiles (wgmma
    // reads Q from them) before this one's copies overwrite them.
    gpu::BarrierOp::create(b, loc);
    m0 = mul(loop.getInductionVar(), c32(spec.blockM()));
    emitBody();
    return;
  }
  // A block past the (packed) rows has nothing to do.
  Value rowsLeft =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, m0, rows);
  auto ifOp = scf::IfOp::create(b, loc, rowsLeft, /*withElse=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  emitBody();
}

void KernelEmitter::bindPointers() {
  // The sequence's first row: batch * stride_b, or (packed) its offset
  // times the row stride; a paged cache adds each row's page on copy.
  auto base = [&](unsigned ptrArg, unsigned strideArg, Value h, Value row0,
                  bool isCache) {
    Value off = mul(ext(h), arg(strideArg + 1));
    if (spec.layout == SeqLayout::Varlen)
      off = add(off, mul(ext(row0), arg(strideArg + 2)));
    else if (!isCache || spec.layout != SeqLayout::Paged)
      off = add(off, mul(ext(batch), arg(strideArg)));
    return gep(arg(ptrArg), spec.elemType, off);
  };
  qPtr = base(kArgQ, kArgQStrideB, head, qRow0, false);
  kPtr = base(kArgK, kArgKStrideB, headKV, kRow0, true);
  vPtr = base(kArgV, kArgVStrideB, headKV, kRow0, true);
  oPtr = base(kArgO, kArgOStrideB, head, qRow0, false);
  if (spec.biasType)
    biasPtr = gep(arg(kArgBias), spec.biasType,
                  add(mul(ext(batch), arg(kArgBiasStrideB)),
                      mul(ext(head), arg(kArgBiasStrideB + 1))));
  if (spec.dropout)
    dropoutBH = add(mul(batch, arg(kArgHeadsQ)), head);
}

void KernelEmitter::bindTileInvariants() {
  score = bindScoreParams(b, loc, entry.getArguments(), spec, kArgScale,
                          kArgDropoutP);
  smemBase = getDynamicSharedMemoryBase(
      b, loc, cast<gpu::GPUFuncOp>(entry.getParentOp()),
      smem.alignSlack ? smem.alignSlack : 16);
  sLayout = mma->getScoreLayout(b, loc, lane);
  oLayout = mma->getOutputLayout(b, loc, lane);
  qTile =
      sharedTile(smemBase, spec.blockM(), spec.tileHeadDim, smem.qRowStride);
}

void KernelEmitter::bindRows() {
  rowOfSlot.clear();
  queryOfSlot.clear();
  for (int64_t off : sLayout.rowSlotOffsets)
    rowOfSlot.push_back(add(add(m0, warpRow), add(sLayout.laneRow, c32(off))));
  for (Value r : rowOfSlot)
    queryOfSlot.push_back(queryOf(r));
}

std::pair<Value, Value> KernelEmitter::getKeyBlocks() {
  // The query positions of the block's rows: [m0, m0 + block_m), or with
  // packed heads [m0 / G, (m0 + block_m - 1) / G + 1).
  Value qBegin = queryOf(m0);
  Value qEnd = arith::MinSIOp::create(
      b, loc, add(queryOf(add(m0, c32(spec.blockM() - 1))), c32(1)), sq);
  auto [lo, hi] = emitVisibleKeyRange(b, loc, score.mask, qBegin, qEnd, sq, sk);
  Value blockN = c32(spec.blockN());
  Value jLo = arith::DivUIOp::create(b, loc, lo, blockN);
  Value jHi =
      arith::DivUIOp::create(b, loc, add(hi, c32(spec.blockN() - 1)), blockN);
  clampToSplit(jLo, jHi);
  return {jLo, jHi};
}

void KernelEmitter::emitBody() {
  bindPointers();
  bindTileInvariants();
  bindRows();
  // Q: global -> shared -> registers, once (by the producer of a
  // warp-specialized kernel).
  if (!warpSpecialized)
    loadQueryTile();
  // Key blocks any row of this block can see.
  auto [jLo, jHi] = getKeyBlocks();
  if (warpSpecialized)
    return emitWarpSpecialized(jLo, jHi);
  // Block jLo's tiles follow Q; the synchronous loop lets them stay in
  // flight while Q is read into registers.
  bool async = mma->hasAsyncOutput();
  bool prefetch = spec.stages() > 1;
  if (prefetch)
    loadKV(jLo, c32(0));
  waitCopies(prefetch && !async ? 1 : 0);
  query = mma->loadQuery(b, loc, lane, qTile, warpRow);
  SmallVector<Value> init = getInitialState();
  unsigned slots = sLayout.getNumRowSlots();

  scf::ForOp loop =
      async ? emitAsyncKeyLoop(jLo, jHi, init) : emitKeyLoop(jLo, jHi, init);
  SmallVector<Value> state(loop.getResults());
  if (async) {
    SmallVector<Value> acc =
        mma->waitOutput(b, loc, ArrayRef<Value>(state).drop_front(2 * slots));
    llvm::copy(acc, state.begin() + 2 * slots);
  }
  emitEpilogue(state);
}

SmallVector<Value> KernelEmitter::getInitialState() {
  SmallVector<Value> init;
  unsigned slots = sLayout.getNumRowSlots();
  for (unsigned i = 0; i < slots; ++i)
    init.push_back(cf(-std::numeric_limits<double>::infinity()));
  for (unsigned i = 0; i < slots; ++i)
    init.push_back(cf(0.0));
  for (unsigned i = 0; i < oLayout.getNumElements(); ++i)
    init.push_back(cf(0.0));
  return init;
}

/// FlashAttention-3's roles, with cp.async as the copy engine: warpgroup 0
/// produces (Q, then K and V), the others compute; no CTA-wide barrier after
/// the split, so the computing warpgroups drift apart and one's softmax
/// overlaps another's wgmmas. Stage s of block j is (j - jLo) % stages, its use
/// u = (j - jLo) / stages: the producer waits for `empty[s]` of use u - 1
/// (parity (u & 1) ^ 1, which a fresh barrier passes), copies, and arrives
/// on `full[s]` once its copies landed and are fenced for the async proxy;
/// a computing thread waits for `full[s]` of use u (parity u & 1) and
/// arrives on `empty` of block j - 1's stage after S = Q K^T of block j
/// (its wgmma wait also retired P V of block j - 1).
void KernelEmitter::emitWarpSpecialized(Value jLo, Value jHi) {
  emitRoles([&] { emitProducerLoop(jLo, jHi); },
            [&] {
              query = mma->loadQuery(b, loc, lane, qTile, warpRow);
              emitConsumerTile(jLo, jHi);
            });
}

void KernelEmitter::emitRoles(function_ref<void()> produce,
                              function_ref<void()> consume) {
  int64_t producerThreads = kProducerWarps * target.getWarpSize();
  int64_t consumerThreads = threads - producerThreads;
  if (spec.tensorMaps())
    bindTensorMaps();
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, c32(0));
  {
    OpBuilder::InsertionGuard guard(b);
    auto ifOp = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    // With tensor maps one producer thread arrives (its copies complete
    // the transaction count); with cp.async every producer thread does.
    int64_t fullArrivals = spec.tensorMaps() ? 1 : producerThreads;
    for (int64_t st = 0; st < spec.stages(); ++st) {
      target.emitBarrierInit(b, loc, fullBarrier(c32(st)), fullArrivals);
      target.emitBarrierInit(b, loc, emptyBarrier(c32(st)), consumerThreads);
      if (!overlapSoftmax)
        continue;
      target.emitBarrierInit(b, loc, valueFullBarrier(c32(st)), fullArrivals);
      target.emitBarrierInit(b, loc, valueEmptyBarrier(c32(st)),
                             consumerThreads);
    }
    if (tileLoop) {
      target.emitBarrierInit(b, loc, queryFullBarrier(), 1);
      target.emitBarrierInit(b, loc, queryEmptyBarrier(), consumerThreads);
    }
  }
  // Publishes the initialized ring; the last CTA-wide barrier.
  gpu::BarrierOp::create(b, loc);
  WarpRoleRegisters regs = getWarpRoleRegisters(
      spec.warps(), target.getWarpSize(), target.getChipSpec().regsPerBlockMax,
      target.getChipSpec().regsPerThreadMax,
      hasBusyProducer(spec.config.getAlignBytes(), tileLoop, spec.mask));
  Value producer = lt(tid, c32(producerThreads));
  OpBuilder::InsertionGuard guard(b);
  auto roles = scf::IfOp::create(b, loc, producer, /*withElse=*/true);
  b.setInsertionPointToStart(roles.thenBlock());
  target.emitSetMaxRegisters(b, loc, regs.producer, /*increase=*/false);
  copyThreads = producerThreads;
  if (spec.tensorMaps()) {
    // One thread (the one that set the ring up) issues every box; the rest
    // of the warpgroup is done.
    OpBuilder::InsertionGuard guard(b);
    auto ifOp = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    produce();
  } else {
    // Q lands with the first key block: its `full` arrival waits for every
    // copy group before it, and S = Q K^T is Q's first reader.
    loadQueryTile();
    produce();
    // Nothing left in flight when no key block is visible.
    target.emitCopyWait(b, loc, 0);
  }
  b.setInsertionPointToStart(roles.elseBlock());
  target.emitSetMaxRegisters(b, loc, regs.consumer, /*increase=*/true);
  consume();
}

void KernelEmitter::emitConsumerTile(Value jLo, Value jHi) {
  SmallVector<Value> init = getInitialState();
  unsigned slots = sLayout.getNumRowSlots();
  // The key loop, then (async P V) the wait for the last product. A tile
  // without key blocks skips both: had its zeros met the loop's in-flight
  // accumulators before the wait, ptxas would serialize every wgmma of the
  // kernel (C7515; the D = 256 causal tile loops did).
  auto ifOp = scf::IfOp::create(b, loc, TypeRange(ValueRange(init)),
                                lt(jLo, jHi), /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    SmallVector<Value> state;
    if (overlapSoftmax) {
      state = emitOverlappedBlocks(jLo, jHi, init);
    } else {
      scf::ForOp loop = emitConsumerLoop(jLo, jHi, init);
      // Every S = Q K^T of the tile has completed: Q's buffer may be
      // refilled.
      if (tileLoop)
        target.emitBarrierArrive(b, loc, queryEmptyBarrier());
      state.assign(loop.getResults().begin(), loop.getResults().end());
      if (mma->hasAsyncOutput()) {
        SmallVector<Value> acc = mma->waitOutput(
            b, loc, ArrayRef<Value>(state).drop_front(2 * slots));
        llvm::copy(acc, state.begin() + 2 * slots);
      }
    }
    scf::YieldOp::create(b, loc, state);
    b.setInsertionPointToStart(ifOp.elseBlock());
    if (tileLoop)
      target.emitBarrierArrive(b, loc, queryEmptyBarrier());
    scf::YieldOp::create(b, loc, init);
  }
  SmallVector<Value> state(ifOp.getResults());
  // The last block's P V has completed too: its stage goes back to the
  // producer, which may be filling the next tile's blocks (the overlapped
  // blocks released each stage as they went).
  if (tileLoop && !overlapSoftmax)
    releaseStageBefore(jHi, jLo);
  emitEpilogue(state);
}

SmallVector<Value> KernelEmitter::emitOverlappedBlocks(Value jLo, Value jHi,
                                                       ValueRange init) {
  unsigned slots = sLayout.getNumRowSlots();
  auto arrive = [&](Value bar) { target.emitBarrierArrive(b, loc, bar); };
  // Block jLo: S, its wait, the softmax; O is still zero.
  Value first = stageOf(jLo, jLo);
  waitFull(fullBarrier(first), useOf(jLo, jLo));
  SmallVector<Value> s = mma->issueScores(b, loc, lane, query, keyTile(first));
  s = mma->waitOutput(b, loc, s, /*pending=*/0);
  arrive(emptyBarrier(first));
  SoftmaxStep step = emitSoftmax(jLo, s, init.take_front(2 * slots));
  SmallVector<Value> loopInit(step.stats);
  llvm::append_range(loopInit, init.drop_front(2 * slots));
  SmallVector<Value> packed = mma->packProbabilities(b, loc, step.p);
  llvm::append_range(loopInit, packed);
  unsigned numAcc = oLayout.getNumElements(), numP = packed.size();

  auto loop =
      scf::ForOp::create(b, loc, add(jLo, c32(1)), jHi, c32(1), loopInit);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    ValueRange args = loop.getRegionIterArgs();
    ValueRange stats = args.take_front(2 * slots);
    ValueRange acc = args.slice(2 * slots, numAcc);
    ValueRange p = args.take_back(numP);
    // S of block j first, then P V of block j - 1: waiting for all but the
    // last group completes S alone.
    Value stage = stageOf(j, jLo);
    Value prev = sub(j, c32(1));
    Value prevStage = stageOf(prev, jLo);
    waitFull(fullBarrier(stage), useOf(j, jLo));
    waitFull(valueFullBarrier(prevStage), useOf(prev, jLo));
    SmallVector<Value> sj =
        mma->issueScores(b, loc, lane, query, keyTile(stage));
    SmallVector<Value> o = mma->accumulatePackedOutput(
        b, loc, lane, SmallVector<Value>(p), valueTile(prevStage),
        SmallVector<Value>(acc));
    sj = mma->waitOutput(b, loc, sj, /*pending=*/1);
    arrive(emptyBarrier(stage));
    SoftmaxStep next = emitSoftmax(j, sj, stats);
    o = mma->waitOutput(b, loc, o, /*pending=*/0);
    arrive(valueEmptyBarrier(prevStage));
    SmallVector<Value> yield(next.stats);
    llvm::append_range(yield, rescale(o, next.alpha));
    llvm::append_range(yield, mma->packProbabilities(b, loc, next.p));
    scf::YieldOp::create(b, loc, yield);
  }
  // Every S = Q K^T of the tile has completed: Q's buffer may be refilled.
  if (tileLoop)
    arrive(queryEmptyBarrier());
  ValueRange results = loop.getResults();
  Value last = sub(jHi, c32(1));
  Value lastStage = stageOf(last, jLo);
  waitFull(valueFullBarrier(lastStage), useOf(last, jLo));
  SmallVector<Value> o = mma->accumulatePackedOutput(
      b, loc, lane, SmallVector<Value>(results.take_back(numP)),
      valueTile(lastStage),
      SmallVector<Value>(results.slice(2 * slots, numAcc)));
  o = mma->waitOutput(b, loc, o, /*pending=*/0);
  arrive(valueEmptyBarrier(lastStage));
  SmallVector<Value> state(results.take_front(2 * slots));
  llvm::append_range(state, o);
  return state;
}

/// A tma_ws kernel whose workgroups walk tiles (forEachTile: a persistent
/// grid, or a packed sequence's row blocks). The ring's stage and phase
/// counters run on across tiles (`ringBase`: key blocks of the workgroup's
/// earlier tiles), and Q gets a full/empty pair of its own: the producer
/// refills Q once every S = Q K^T of the tile completed, and meanwhile fills
/// the ring with the next tile's K and V, while the computing warpgroups
/// store the outputs.
void KernelEmitter::emitTileLoop(Value firstBlock) {
  bindTileInvariants();
  int64_t qBytes = spec.blockM() * spec.tileHeadDim * elemBytes;
  emitRoles(
      [&] {
        forEachTile(firstBlock, [&](Value jLo, Value jHi, Value tileIndex) {
          waitEmpty(queryEmptyBarrier(), tileIndex);
          target.emitBarrierArriveExpectBytes(b, loc, queryFullBarrier(),
                                              qBytes);
          loadTensorTile(qTile, 0, packedRow(m0, qRow0), head,
                         queryFullBarrier());
          emitProducerLoop(jLo, jHi);
        });
      },
      [&] {
        query = mma->loadQuery(b, loc, lane, qTile, warpRow);
        forEachTile(firstBlock, [&](Value jLo, Value jHi, Value tileIndex) {
          bindPointers();
          bindRows();
          waitFull(queryFullBarrier(), tileIndex);
          emitConsumerTile(jLo, jHi);
        });
      });
}

/// A persistent grid is FlashAttention-3's: unit u of the (query block,
/// head, batch) tiles goes to workgroup u % W of W, query blocks fastest so
/// that the tiles running at once share K and V in L2 (with heads fastest,
/// a causal D = 128 grid at S = 2k read each head's K and V from memory once
/// a tile and ran 0.73x the plain grid; with single causal tiles round
/// robin, 0.60-0.97x).
void KernelEmitter::forEachTile(
    Value firstBlock,
    function_ref<void(Value jLo, Value jHi, Value tileIndex)> body) {
  if (spec.layout == SeqLayout::Varlen) {
    // The workgroup's sequence and head are bound; it takes row blocks x,
    // x + gridDim.x, ... of the sequence (the grid is sized by a hint).
    Value blocks = arith::CeilDivUIOp::create(b, loc, rows, c32(spec.blockM()));
    Value step = gridDim(gpu::Dimension::x);
    auto loop = scf::ForOp::create(b, loc, firstBlock, blocks, step,
                                   ValueRange{c32(0), c32(0)});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    m0 = mul(loop.getInductionVar(), c32(spec.blockM()));
    ringBase = loop.getRegionIterArgs()[0];
    Value tileIndex = loop.getRegionIterArgs()[1];
    auto [jLo, jHi] = getKeyBlocks();
    body(jLo, jHi, tileIndex);
    scf::YieldOp::create(
        b, loc,
        ValueRange{add(ringBase, sub(jHi, jLo)), add(tileIndex, c32(1))});
    ringBase = Value();
    return;
  }
  Value headsQ = arg(kArgHeadsQ);
  Value blocksM = arith::CeilDivUIOp::create(b, loc, sq, c32(spec.blockM()));
  Value headsBatch = mul(headsQ, arg(kArgBatch));
  // Under a causal mask query block i of n sees about i + 1 key blocks: a
  // unit pairs blocks n - 1 - p and p (the longer first), so that every
  // unit costs about n + 1 blocks and a static round robin balances.
  bool causal = isCausal(spec.mask);
  int64_t tilesPerUnit = causal ? 2 : 1;
  Value unitsPerHead =
      arith::CeilDivUIOp::create(b, loc, blocksM, c32(tilesPerUnit));
  Value units = mul(unitsPerHead, headsBatch);
  // The workgroup's linear id and count, whatever the grid's shape.
  using gpu::Dimension;
  Value id = add(blockId(Dimension::x),
                 mul(gridDim(Dimension::x),
                     add(blockId(Dimension::y),
                         mul(gridDim(Dimension::y), blockId(Dimension::z)))));
  Value count = mul(mul(gridDim(Dimension::x), gridDim(Dimension::y)),
                    gridDim(Dimension::z));
  // Slot k of this workgroup is tile k % tilesPerUnit of its unit
  // id + (k / tilesPerUnit) x count: one flat loop (an inner loop over a
  // unit's tiles spilled the producer's 24 registers).
  Value myUnits = arith::CeilDivUIOp::create(
      b, loc, sub(arith::MaxUIOp::create(b, loc, units, id), id), count);
  auto loop =
      scf::ForOp::create(b, loc, c32(0), mul(myUnits, c32(tilesPerUnit)),
                         c32(1), ValueRange{c32(0)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value k = loop.getInductionVar();
  Value slot =
      causal ? arith::ShRUIOp::create(b, loc, k, c32(1)).getResult() : k;
  Value u = add(id, mul(count, slot));
  Value p = arith::RemUIOp::create(b, loc, u, unitsPerHead);
  Value bh = arith::DivUIOp::create(b, loc, u, unitsPerHead);
  head = arith::RemUIOp::create(b, loc, bh, headsQ);
  batch = arith::DivUIOp::create(b, loc, bh, headsQ);
  headKV = arith::DivSIOp::create(b, loc, head, group);
  Value mBlock = p, phantom;
  if (causal) {
    // The second tile of the middle unit (n odd) is past the rows: it
    // sees no key and stores nothing.
    Value longer = sub(sub(blocksM, c32(1)), p);
    Value second = eq(arith::AndIOp::create(b, loc, k, c32(1)), c32(1));
    phantom = arith::AndIOp::create(b, loc, second, eq(p, longer));
    mBlock = arith::SelectOp::create(
        b, loc, second, arith::SelectOp::create(b, loc, phantom, blocksM, p),
        longer);
  }
  m0 = mul(mBlock, c32(spec.blockM()));
  ringBase = loop.getRegionIterArgs()[0];
  auto [jLo, jHi] = getKeyBlocks();
  if (phantom)
    jHi = arith::SelectOp::create(b, loc, phantom, jLo, jHi);
  body(jLo, jHi, k);
  scf::YieldOp::create(b, loc, add(ringBase, sub(jHi, jLo)));
  ringBase = Value();
}

void KernelEmitter::emitProducerLoop(Value jLo, Value jHi) {
  auto loop = scf::ForOp::create(b, loc, jLo, jHi, c32(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  Value stage = stageOf(j, jLo);
  waitEmpty(emptyBarrier(stage), useOf(j, jLo));
  if (spec.tensorMaps())
    return loadTensorTiles(j, jLo, stage);
  loadKV(j, stage);
  // One block in flight per thread: the ring, not the copy groups, keeps
  // the producer ahead of the computing warpgroups.
  target.emitCopyWait(b, loc, 0);
  mma->emitSharedWritesVisible(b, loc);
  target.emitBarrierArrive(b, loc, fullBarrier(stage));
}

void KernelEmitter::loadTensorTiles(Value j, Value jLo, Value stage) {
  // TMA writes through the async proxy, which wgmma reads: no fence. Rows
  // and columns past the tensor's ends arrive as zeros and count toward
  // the transaction like the others.
  Value full = fullBarrier(stage);
  int64_t kBytes = spec.blockN() * spec.tileHeadDim * elemBytes;
  int64_t vBytes = spec.blockN() * spec.tileHeadDimV * elemBytes;
  // With the softmax overlapped V has barriers of its own (below).
  int64_t kvBytes = overlapSoftmax ? kBytes : kBytes + vBytes;
  int64_t qBytes = spec.blockM() * spec.tileHeadDim * elemBytes;
  if (tileLoop) {
    // Q has a barrier of its own (emitTileLoop).
    target.emitBarrierArriveExpectBytes(b, loc, full, kvBytes);
  } else {
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, j, jLo);
    // Q comes with the first key block, on the same barrier.
    OpBuilder::InsertionGuard guard(b);
    auto ifOp = scf::IfOp::create(b, loc, first, /*withElse=*/true);
    b.setInsertionPointToStart(ifOp.thenBlock());
    target.emitBarrierArriveExpectBytes(b, loc, full, qBytes + kvBytes);
    loadTensorTile(qTile, 0, m0, head, full);
    b.setInsertionPointToStart(ifOp.elseBlock());
    target.emitBarrierArriveExpectBytes(b, loc, full, kvBytes);
  }
  Value n0 = packedRow(mul(j, c32(spec.blockN())), kRow0);
  loadTensorTile(keyTile(stage), 1, n0, headKV, full);
  if (!overlapSoftmax)
    return loadTensorTile(valueTile(stage), 2, n0, headKV, full);
  Value valueFull = valueFullBarrier(stage);
  waitEmpty(valueEmptyBarrier(stage), useOf(j, jLo));
  target.emitBarrierArriveExpectBytes(b, loc, valueFull, vBytes);
  loadTensorTile(valueTile(stage), 2, n0, headKV, valueFull);
}

void KernelEmitter::bindTensorMaps() {
  unsigned first = entry.getNumArguments() - kNumTensorMaps;
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  for (unsigned i = 0; i < kNumTensorMaps; ++i) {
    Value slot = LLVM::AllocaOp::create(b, loc, ptrType,
                                        getTensorMapType(b.getContext()),
                                        c32(1), kTensorMapAlign);
    LLVM::StoreOp::create(b, loc, arg(first + i), slot, kTensorMapAlign);
    tensorMaps.push_back(slot);
  }
}

void KernelEmitter::loadTensorTile(const SharedTile &tile, unsigned map,
                                   Value row, Value h, Value bar) {
  // Box p holds columns [64 p, 64 p + 64): the tile's 128-byte panel p.
  Value desc = tensorMaps[map];
  for (int64_t p = 0; p * kTensorMapBoxCols < tile.cols; ++p) {
    Value dst = gep(tile.base, b.getI8Type(),
                    c32(p * tile.rows * kTensorMapBoxCols * elemBytes));
    // A packed batch is one [1, H, total, D] tensor.
    Value b4 = spec.layout == SeqLayout::Varlen ? c32(0) : batch;
    target.emitTensorTileLoad(
        b, loc, dst, desc, ValueRange{c32(p * kTensorMapBoxCols), row, h, b4},
        bar);
  }
}

void KernelEmitter::releaseStageBefore(Value j, Value jLo) {
  Value after =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, j, jLo);
  OpBuilder::InsertionGuard guard(b);
  auto ifOp = scf::IfOp::create(b, loc, after, /*withElse=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  target.emitBarrierArrive(b, loc, emptyBarrier(stageOf(sub(j, c32(1)), jLo)));
}

scf::ForOp KernelEmitter::emitConsumerLoop(Value jLo, Value jHi,
                                           ValueRange init) {
  auto loop = scf::ForOp::create(b, loc, jLo, jHi, c32(1), init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  Value stage = stageOf(j, jLo);
  waitFull(fullBarrier(stage), useOf(j, jLo));
  // S = Q K^T of block j also retired P V of block j - 1.
  auto release = [&] { releaseStageBefore(j, jLo); };
  SmallVector<Value> next =
      emitBlock(j, stage, loop.getRegionIterArgs(), release);
  scf::YieldOp::create(b, loc, next);
  return loop;
}

void KernelEmitter::loadNextKV(Value j, Value jLo, Value jHi) {
  // Buffers alternate from the first visible block on (jLo may be odd).
  Value next = add(j, c32(1));
  Value more =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, next, jHi);
  OpBuilder::InsertionGuard guard(b);
  auto ifOp = scf::IfOp::create(b, loc, more, /*withElse=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  loadKV(next, stageOf(next, jLo));
}

scf::ForOp KernelEmitter::emitKeyLoop(Value jLo, Value jHi, ValueRange init) {
  bool doubleBuffer = spec.stages() > 1;
  auto loop = scf::ForOp::create(b, loc, jLo, jHi, c32(1), init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  Value stage;
  // Every warp must be done with the buffer about to be overwritten.
  gpu::BarrierOp::create(b, loc);
  if (doubleBuffer) {
    loadNextKV(j, jLo, jHi);
    // Commit an empty group on the last block so "wait 1" still means
    // "block j has landed".
    target.emitCopyCommit(b, loc);
    waitCopies(1);
    stage = stageOf(j, jLo);
  } else {
    loadKV(j, Value());
    waitCopies(0);
  }
  SmallVector<Value> next = emitBlock(j, stage, loop.getRegionIterArgs());
  scf::YieldOp::create(b, loc, next);
  return loop;
}

scf::ForOp KernelEmitter::emitAsyncKeyLoop(Value jLo, Value jHi,
                                           ValueRange init) {
  auto loop = scf::ForOp::create(b, loc, jLo, jHi, c32(1), init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  // Block j's tiles, issued one iteration earlier (or above), are visible.
  waitCopies(0);
  auto issueNext = [&] {
    // S = Q K^T completed the previous block's P V in this warp; after the
    // barrier, in every warp, so its buffers (block j + 1's) are free.
    gpu::BarrierOp::create(b, loc);
    loadNextKV(j, jLo, jHi);
  };
  SmallVector<Value> next =
      emitBlock(j, stageOf(j, jLo), loop.getRegionIterArgs(), issueNext);
  scf::YieldOp::create(b, loc, next);
  return loop;
}

int64_t attn::getDynamicSharedMemoryBytes(const KernelSpec &spec,
                                          const GPUTargetInfo &target) {
  SharedTileLayout kind = target.createMmaEmitter(spec)->getSharedTileLayout();
  return SharedLayout(spec, target, kind).totalBytes;
}

gpu::GPUFuncOp attn::buildAttentionKernel(OpBuilder &builder, Location loc,
                                          gpu::GPUModuleOp gpuModule,
                                          StringRef name,
                                          const KernelSpec &spec,
                                          const GPUTargetInfo &target) {
  MLIRContext *ctx = builder.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(gpuModule.getBody());
  declareDynamicSharedMemory(b, loc, gpuModule, target);
  auto func = createKernelFunction(
      b, loc, name,
      getKernelFunctionType(ctx, target.getGlobalAddressSpace(), spec.layout,
                            spec.dynamicHeadDim(), spec.dropout,
                            spec.tensorMaps()),
      spec.warps() * target.getWarpSize());
  target.annotateKernel(func, spec);
  emitKernelBody(b, loc, func, [&](Block &entry) {
    // First thing: the combine's workgroups become resident, and run their
    // prologue, while this grid computes.
    if (usesDependentLaunch(spec, target))
      target.emitLaunchDependents(b, loc);
    KernelEmitter(b, loc, entry, spec, target).emit();
  });
  return func;
}
