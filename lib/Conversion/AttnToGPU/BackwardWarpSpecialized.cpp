//===- BackwardWarpSpecialized.cpp - the backward's producer warpgroup ----===//
//
// The main stage of a cp_async_ws backward plan, FlashAttention-3's roles:
// warpgroup 0 copies each query block's Q, dO, lse and delta into a ring of
// two buffers guarded by full/empty mbarriers, the other warpgroups own the
// key rows and compute the five products of each block. The computing
// warpgroups meet once a block, at a named barrier of theirs after dS is in
// shared memory; nothing else waits for the whole workgroup.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Utils/MaskUtils.h"
#include "BackwardStageEmitters.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::attn;

void MainStageEmitter::emitWarpSpecialized(Value hLo, Value group, Value iLo,
                                           Value iHi, ValueRange init) {
  int64_t ws = target.getWarpSize();
  int64_t producerThreads = kProducerWarps * ws;
  // With a dQ writer the producer's last warp adds dQ; two copy (a power
  // of two divides the tiles' 16-byte chunks evenly: three warps' uneven
  // share spilled at 24 registers).
  bool writer = dqByWriter();
  int64_t copyThreads = writer ? producerThreads / 2 : producerThreads;
  int64_t consumerThreads = computeWarps * ws;
  int64_t stages = spec.stages();
  Value isFirst =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, c32(0));
  {
    OpBuilder::InsertionGuard guard(b);
    auto ifOp = scf::IfOp::create(b, loc, isFirst, /*withElse=*/false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    for (int64_t st = 0; st < stages; ++st) {
      // Every copying thread arrives once its own copies landed.
      target.emitBarrierInit(b, loc, fullBarrier(c32(st)), copyThreads);
      // With dQ staged in the ring the writer also arrives once it has
      // read it (dqInRing).
      target.emitBarrierInit(b, loc, emptyBarrier(c32(st)),
                             consumerThreads + (dqInRing() ? 1 : 0));
    }
  }
  // Publishes K, V (copied by every thread) and the ring; the last
  // workgroup-wide barrier.
  barrier();

  // Pair t (pairAt) goes to buffer t % stages for its use t / stages.
  Value blocks = sub(iHi, iLo);
  Value total = mul(group, blocks);
  // Ordered dQ walks the pairs first to last: a block's turns go from its
  // last key block down (emitDqWriter), and key block k + 1 reaches any
  // block of k's a step before k (band masks: its walk starts no earlier,
  // and under GQA it has no more blocks a head), so no turn waits for a
  // walk behind. The writer of a plan with atomics walks last first (as
  // measured).
  bool lastFirst = writer && !spec.orderedDq();
  auto pair = [&](Value t) {
    return pairAt(hLo, iLo, blocks, lastFirst ? sub(sub(total, c32(1)), t) : t);
  };
  auto stageOf = [&](Value t) {
    return arith::RemUIOp::create(b, loc, t, c32(stages));
  };
  auto useParity = [&](Value t) {
    return arith::AndIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, t, c32(stages)), c32(1));
  };

  const ChipSpec &chip = target.getChipSpec();
  WarpRoleRegisters regs = getWarpRoleRegisters(
      spec.warps(), ws, chip.regsPerBlockMax, chip.regsPerThreadMax,
      hasBusyProducer(spec.config.getAlignBytes(), /*walksTiles=*/false,
                      spec.mask));
  OpBuilder::InsertionGuard guard(b);
  auto roles = scf::IfOp::create(b, loc, lt(tid, c32(producerThreads)),
                                 /*withElse=*/true);
  b.setInsertionPointToStart(roles.thenBlock());
  target.emitSetMaxRegisters(b, loc, regs.producer, /*increase=*/false);
  if (writer) {
    auto copies = scf::IfOp::create(b, loc, lt(tid, c32(copyThreads)),
                                    /*withElse=*/true);
    {
      OpBuilder::InsertionGuard inWriter(b);
      b.setInsertionPointToStart(copies.elseBlock());
      auto writer = scf::IfOp::create(
          b, loc, lt(c32(producerThreads - ws - 1), tid), /*withElse=*/false);
      b.setInsertionPointToStart(writer.thenBlock());
      emitDqWriter(blocks, total, pair);
    }
    b.setInsertionPointToStart(copies.thenBlock());
  }
  {
    OpBuilder::InsertionGuard inLoop(b);
    auto loop = scf::ForOp::create(b, loc, c32(0), total, c32(1));
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    Value stage = stageOf(t);
    // Use u waits for the computing warps' release of use u - 1 (parity
    // (u & 1) ^ 1, which a fresh barrier passes).
    target.emitBarrierWait(b, loc, emptyBarrier(stage),
                           arith::XOrIOp::create(b, loc, useParity(t), c32(1)));
    auto [h, m0] = pair(t);
    int64_t all = threads;
    threads = copyThreads;
    loadQueryBlock(h, m0, stage);
    threads = all;
    // One block in flight per thread: the ring keeps the producer ahead.
    target.emitCopyWait(b, loc, 0);
    scoresMma->emitSharedWritesVisible(b, loc);
    target.emitBarrierArrive(b, loc, fullBarrier(stage));
  }

  b.setInsertionPointToStart(roles.elseBlock());
  target.emitSetMaxRegisters(b, loc, regs.consumer, /*increase=*/true);
  // From here on thread and warp indices count the computing warps only.
  tid = sub(tid, c32(producerThreads));
  warp = sub(warp, c32(kProducerWarps));
  Value dsBase = dsTile.base;
  if (slicesOnGroups) {
    // Warpgroup g computes slice g of dK, dV and dQ over all the key rows,
    // and S^T and dP^T for query columns g * scoreCols.. of the block.
    sliceGroup = arith::DivUIOp::create(b, loc, warp, c32(4));
    warp = arith::RemUIOp::create(b, loc, warp, c32(4));
    sliceColD = mul(sliceGroup, c32(sliceD.width));
    sliceColDv = mul(sliceGroup, c32(sliceDv.width));
    scoreCol0 = mul(sliceGroup, c32(scoreCols));
  }
  warpRow = mul(warp, c32(rowsPerWarp));
  auto loop = scf::ForOp::create(b, loc, c32(0), total, c32(1), init);
  {
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    Value stage = stageOf(t);
    target.emitBarrierWait(b, loc, fullBarrier(stage), useParity(t));
    // dS of consecutive blocks in alternate buffers: the barrier after a
    // block's dS is the first that orders it after the other warpgroup's
    // dQ product of the block before.
    dsTile.base = slicesOnGroups
                      ? dsBase
                      : gep(dsBase, b.getI8Type(),
                            mul(arith::AndIOp::create(b, loc, t, c32(1)),
                                c32(smem.dsStageBytes)));
    auto [h, m0] = pair(t);
    SmallVector<Value> acc(loop.getRegionIterArgs());
    emitQueryBlock(h, m0, stage, acc);
    // Every product reading this buffer's Q and dO has completed
    // (emitQueryBlock waits for dK's last).
    target.emitBarrierArrive(b, loc, emptyBarrier(stage));
    scf::YieldOp::create(b, loc, acc);
  }
  emitEpilogue(SmallVector<Value>(loop.getResults()));
}

void MainStageEmitter::emitDqWriter(
    Value blocks, Value total,
    llvm::function_ref<std::pair<Value, Value>(Value)> pair) {
  int64_t ws = target.getWarpSize();
  bool ordered = spec.orderedDq();
  Value writerLane = arith::RemUIOp::create(b, loc, tid, c32(ws));
  Value kb = ordered ? arith::DivUIOp::create(b, loc, n0, c32(spec.blockN()))
                     : Value();
  Value isLeader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         writerLane, c32(0));
  // With dQ in the ring (dqInRing) the ring's empty barriers free it.
  bool ring = dqInRing();
  auto freeStage = [&] {
    target.emitNamedBarrierArrive(b, loc, c32(kDqFreeBarrierId),
                                  dqWriterBarrierThreads());
  };
  if (!ring) {
    // The staging areas start free.
    OpBuilder::InsertionGuard guard(b);
    auto ifOp = scf::IfOp::create(b, loc, lt(c32(0), total), false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    freeStage();
  }
  OpBuilder::InsertionGuard guard(b);
  auto loop = scf::ForOp::create(b, loc, c32(0), total, c32(1));
  b.setInsertionPointToStart(loop.getBody());
  Value t = loop.getInductionVar();
  target.emitNamedBarrier(b, loc, c32(kDqStagedBarrierId),
                          dqWriterBarrierThreads());
  auto [h, m0] = pair(t);
  if (rowSumsByWriter()) {
    emitWriterRowSums(t, h, blocks);
    // Every lane has read the block's sums before the leader frees the
    // buffer.
    target.emitWarpSync(b, loc);
  }
  Value counter = ordered ? dqOrderCounter(batch, h, m0) : Value();
  {
    OpBuilder::InsertionGuard inLeader(b);
    auto ifOp = scf::IfOp::create(b, loc, isLeader, false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    if (ordered) {
      // The block's key blocks take turns from the last that sees it down
      // (masks are bands: they are consecutive), so no key block counts
      // itself in for blocks it does not see.
      Value keysEnd =
          emitVisibleKeyRange(
              b, loc, score.mask, m0,
              arith::MinSIOp::create(b, loc, add(m0, c32(spec.blockM())), sq),
              sq, sk)
              .second;
      Value last = sub(
          arith::DivUIOp::create(b, loc, add(keysEnd, c32(spec.blockN() - 1)),
                                 c32(spec.blockN())),
          c32(1));
      target.emitWaitForTurn(b, loc, counter, sub(last, kb));
    }
    Value stage =
        ring ? arith::RemUIOp::create(b, loc, t, c32(spec.stages())) : Value();
    for (int64_t u = 0; u < dqUnits(); ++u) {
      if (!ring) {
        target.emitBulkReduceAddF32(
            b, loc, dqAccumChunk(dqAccum, batch, h, m0, c32(u * 64)),
            dqUnitStage(c32(u)), kDqUnitBytes);
        continue;
      }
      // In the ring each unit is two halves (8 KB: 32 rows each).
      auto [low, high] = ringUnitHalves(stage, c32(u));
      for (auto [half, src] : llvm::enumerate(SmallVector<Value>{low, high}))
        target.emitBulkReduceAddF32(
            b, loc,
            dqAccumChunk(dqAccum, batch, h,
                         add(m0, c32(32 * static_cast<int64_t>(half))),
                         c32(u * 64)),
            src, kDqUnitBytes / 2);
    }
    target.emitBulkCommit(b, loc);
    target.emitBulkWait(b, loc, 0, /*readOnly=*/true);
    // The producer may refill the ring's buffer.
    if (ring)
      target.emitBarrierArrive(b, loc, emptyBarrier(stage));
  }
  if (!ring) {
    // The last pair's staging area is not staged again.
    OpBuilder::InsertionGuard inFree(b);
    auto ifOp = scf::IfOp::create(b, loc, lt(add(t, c32(1)), total), false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    freeStage();
  }
  // The reductions complete: with ordered dQ before the turn passes on,
  // else once, after the loop (before the plan's next stage reads
  // dq_accum).
  if (!ordered)
    b.setInsertionPointAfter(loop);
  auto ifOp = scf::IfOp::create(b, loc, isLeader, false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  target.emitBulkWait(b, loc, 0, /*readOnly=*/false);
  if (ordered)
    target.emitPassTurn(b, loc, counter);
}
