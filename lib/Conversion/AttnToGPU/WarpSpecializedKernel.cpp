//===- WarpSpecializedKernel.cpp - producer and computing warpgroups ------===//
//
// The warp-specialized forward pipelines (cp_async_ws, tma_ws): a producer
// warpgroup fills a ring of K/V stages guarded by full/empty mbarriers, the
// computing warpgroups run the key loop (with overlap_softmax, the softmax of
// a block under the previous block's P V), and tile loops walk a persistent
// grid or a packed sequence's row blocks.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Utils/MaskUtils.h"
#include "ForwardKernelEmitter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::attn;

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
void ForwardKernelEmitter::emitWarpSpecialized(Value jLo, Value jHi) {
  emitRoles([&] { emitProducerLoop(jLo, jHi); },
            [&] {
              query = mma->loadQuery(b, loc, lane, qTile, warpRow);
              emitConsumerTile(jLo, jHi);
            });
}

void ForwardKernelEmitter::emitRoles(function_ref<void()> produce,
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
    for (int64_t i = 0; tileLoop && i < smem.queryBuffers; ++i) {
      queryBuffer = c32(i);
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

void ForwardKernelEmitter::emitConsumerTile(Value jLo, Value jHi) {
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
      // The loop releases Q's buffer after the tile's last S = Q K^T.
      scf::ForOp loop = emitConsumerLoop(jLo, jHi, init);
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

SmallVector<Value> ForwardKernelEmitter::emitOverlappedBlocks(Value jLo,
                                                              Value jHi,
                                                              ValueRange init) {
  unsigned slots = sLayout.getNumRowSlots();
  auto arrive = [&](Value bar) { target.emitBarrierArrive(b, loc, bar); };
  // Block jLo: S, its wait, the softmax; O is still zero.
  Value first = stageOf(jLo, jLo);
  waitFull(fullBarrier(first), useOf(jLo, jLo));
  SmallVector<Value> s = mma->issueScores(b, loc, lane, query, keyTile(first));
  s = mma->waitOutput(b, loc, s, /*pending=*/0);
  arrive(emptyBarrier(first));
  releaseQueryAfter(jLo, jHi);
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
    releaseQueryAfter(j, jHi);
    SoftmaxStep next = emitSoftmax(j, sj, stats);
    o = mma->waitOutput(b, loc, o, /*pending=*/0);
    arrive(valueEmptyBarrier(prevStage));
    SmallVector<Value> yield(next.stats);
    llvm::append_range(yield, rescale(o, next.alpha));
    llvm::append_range(yield, mma->packProbabilities(b, loc, next.p));
    scf::YieldOp::create(b, loc, yield);
  }
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
void ForwardKernelEmitter::emitTileLoop(Value firstBlock) {
  bindTileInvariants();
  int64_t qBytes = spec.blockM() * spec.tileHeadDim * elemBytes;
  emitRoles(
      [&] {
        forEachTile(firstBlock, [&](Value jLo, Value jHi, Value tileIndex) {
          Value use = bindQueryBuffer(tileIndex);
          waitEmpty(queryEmptyBarrier(), use);
          target.emitBarrierArriveExpectBytes(b, loc, queryFullBarrier(),
                                              qBytes);
          loadTensorTile(qTile, 0, packedRow(m0, qRow0), head,
                         queryFullBarrier());
          emitProducerLoop(jLo, jHi);
        });
      },
      [&] {
        forEachTile(firstBlock, [&](Value jLo, Value jHi, Value tileIndex) {
          bindPointers();
          bindRows();
          Value use = bindQueryBuffer(tileIndex);
          waitFull(queryFullBarrier(), use);
          query = mma->loadQuery(b, loc, lane, qTile, warpRow);
          emitConsumerTile(jLo, jHi);
        });
      });
}

Value ForwardKernelEmitter::bindQueryBuffer(Value tileIndex) {
  int64_t n = smem.queryBuffers;
  assert(llvm::isPowerOf2_64(n) && "Q buffers: one or two");
  queryBuffer = arith::AndIOp::create(b, loc, tileIndex, c32(n - 1));
  qTile = sharedTile(sharedAt(0, queryBuffer, smem.qBytes), spec.blockM(),
                     spec.tileHeadDim, smem.qRowStride);
  return arith::ShRUIOp::create(b, loc, tileIndex, c32(llvm::Log2_64(n)));
}

/// A persistent grid is FlashAttention-3's: unit u of the (query block,
/// head, batch) tiles goes to workgroup u % W of W, query blocks fastest so
/// that the tiles running at once share K and V in L2 (with heads fastest,
/// a causal D = 128 grid at S = 2k read each head's K and V from memory once
/// a tile and ran 0.73x the plain grid; with single causal tiles round
/// robin, 0.60-0.97x).
void ForwardKernelEmitter::forEachTile(
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

void ForwardKernelEmitter::emitProducerLoop(Value jLo, Value jHi) {
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

void ForwardKernelEmitter::loadTensorTiles(Value j, Value jLo, Value stage) {
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

void ForwardKernelEmitter::bindTensorMaps() {
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

void ForwardKernelEmitter::loadTensorTile(const SharedTile &tile, unsigned map,
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

void ForwardKernelEmitter::releaseQueryAfter(Value j, Value jHi) {
  if (!tileLoop)
    return;
  Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, j,
                                     sub(jHi, c32(1)));
  OpBuilder::InsertionGuard guard(b);
  auto ifOp = scf::IfOp::create(b, loc, last, /*withElse=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  target.emitBarrierArrive(b, loc, queryEmptyBarrier());
}

void ForwardKernelEmitter::releaseStageBefore(Value j, Value jLo) {
  Value after =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, j, jLo);
  OpBuilder::InsertionGuard guard(b);
  auto ifOp = scf::IfOp::create(b, loc, after, /*withElse=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  target.emitBarrierArrive(b, loc, emptyBarrier(stageOf(sub(j, c32(1)), jLo)));
}

scf::ForOp ForwardKernelEmitter::emitConsumerLoop(Value jLo, Value jHi,
                                                  ValueRange init) {
  return emitBlockLoop(jLo, jHi, init, [&](Value j, ValueRange state) {
    Value stage = stageOf(j, jLo);
    waitFull(fullBarrier(stage), useOf(j, jLo));
    // S = Q K^T of block j also retired P V of block j - 1.
    auto release = [&] {
      releaseStageBefore(j, jLo);
      releaseQueryAfter(j, jHi);
    };
    return emitBlock(j, stage, state, release);
  });
}
