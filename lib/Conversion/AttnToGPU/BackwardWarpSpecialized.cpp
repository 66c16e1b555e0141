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

#include "BackwardStageEmitters.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::attn;

void MainStageEmitter::emitWarpSpecialized(Value hLo, Value group, Value iLo,
                                           Value iHi, ValueRange init) {
  int64_t ws = target.getWarpSize();
  int64_t producerThreads = kProducerWarps * ws;
  int64_t consumerThreads = computeWarps * ws;
  int64_t stages = spec.stages();
  Value isFirst =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, c32(0));
  {
    OpBuilder::InsertionGuard guard(b);
    auto ifOp = scf::IfOp::create(b, loc, isFirst, /*withElse=*/false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    for (int64_t st = 0; st < stages; ++st) {
      // Every producer thread arrives once its own copies landed.
      target.emitBarrierInit(b, loc, fullBarrier(c32(st)), producerThreads);
      target.emitBarrierInit(b, loc, emptyBarrier(c32(st)), consumerThreads);
    }
  }
  // Publishes K, V (copied by every thread) and the ring; the last
  // workgroup-wide barrier.
  barrier();

  // Pair t (pairAt) goes to buffer t % stages for its use t / stages.
  Value blocks = sub(iHi, iLo);
  Value total = mul(group, blocks);
  auto pair = [&](Value t) { return pairAt(hLo, iLo, blocks, t); };
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
    threads = producerThreads;
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
  warpRow = mul(warp, c32(rowsPerWarp));
  Value dsBase = dsTile.base;
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
    dsTile.base = gep(
        dsBase, b.getI8Type(),
        mul(arith::AndIOp::create(b, loc, t, c32(1)), c32(smem.dsStageBytes)));
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
