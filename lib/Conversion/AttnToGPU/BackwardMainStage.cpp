//===- BackwardMainStage.cpp - the backward plan's main kernel -----------===//
//
// The main kernel of a backward plan: per key block, S^T and dP^T
// recomputed from the saved lse and delta, dK and dV accumulated in
// registers, dQ by atomics or its own pass over query blocks. All per-tile
// work is unrolled in C++, as in the forward kernel.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Utils/MaskUtils.h"
#include "BackwardStageEmitters.h"
#include "QuadStores.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// main
//===----------------------------------------------------------------------===//

void MainStageEmitter::emitProbabilities(Value h, Value m0,
                                         MutableArrayRef<Value> s,
                                         SmallVectorImpl<Value> &dsc,
                                         bool shifted) {
  Value negInf = cf(-std::numeric_limits<double>::infinity());
  Value lastQ = sub(sq, c32(1)), lastK = sub(sk, c32(1));
  Value lseBase = gep(arg(kBwdLse), f32,
                      add(mul(ext(batch), arg(kBwdLseStrideB)),
                          mul(ext(h), arg(kBwdLseStrideB + 1))));
  Value biasBase;
  if (spec.biasType)
    biasBase = gep(arg(kBwdBias), spec.biasType,
                   add(mul(ext(batch), arg(kBwdBiasStrideB)),
                       mul(ext(h), arg(kBwdBiasStrideB + 1))));
  Value log2e = cf(M_LOG2E);

  // Per key row slot and per query column, loaded once each.
  SmallVector<Value> keyOfSlot;
  for (int64_t off : sLayout.rowSlotOffsets)
    keyOfSlot.push_back(add(add(n0, warpRow), add(sLayout.laneRow, c32(off))));
  // A query column: its index, the index clamped into [0, Sq) for loads,
  // and its lse in the exp2 domain.
  struct Column {
    Value q, qc, lse2;
  };
  llvm::DenseMap<int64_t, Column> columns;
  auto column = [&](int64_t off) {
    auto it = columns.find(off);
    if (it != columns.end())
      return it->second;
    Value col = add(sLayout.laneCol, c32(off));
    Value q = add(m0, col);
    Value qc = arith::MinSIOp::create(b, loc, q, lastQ);
    Value lse = statsBase ? load(f32, gep(statsBase, f32, col), 4)
                          : load(f32, gep(lseBase, f32, ext(qc)), 4);
    // Rows that saw no key have lse = -inf and contribute nothing.
    return columns[off] = {q, qc, fmul(lse, log2e)};
  };

  for (unsigned e = 0, ne = s.size(); e < ne; ++e) {
    if (shifted) {
      s[e] = target.emitExp2(b, loc, fmul(s[e], score.scaleLog2));
      continue;
    }
    Value key = keyOfSlot[sLayout.rowSlot[e]];
    Column col = column(sLayout.colOffsets[e]);
    Value capDerivative;
    s[e] = probability(s[e], biasBase, col.qc,
                       arith::MinSIOp::create(b, loc, key, lastK), col.lse2,
                       capDerivative);
    if (capDerivative)
      dsc.push_back(capDerivative);
  }

  // Mask only tiles crossing a mask edge or a tail, tested at the corners
  // of this warp's key rows x the block's queries (masks are bands);
  // uniform per warp. Inside, every row sees a key, so its lse is finite.
  Value keyFirst = add(n0, warpRow);
  Value qLast = add(m0, c32(scoreCols - 1));
  Value inside = arith::AndIOp::create(
      b, loc, lt(qLast, sq),
      arith::AndIOp::create(
          b, loc,
          emitKeyVisible(b, loc, score.mask, m0,
                         add(keyFirst, c32(rowsPerWarp - 1)), sq, sk),
          emitKeyVisible(b, loc, score.mask, qLast, keyFirst, sq, sk)));
  auto ifOp = scf::IfOp::create(b, loc, ValueRange(s).getTypes(), inside,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  scf::YieldOp::create(b, loc, SmallVector<Value>(s));
  b.setInsertionPointToStart(ifOp.elseBlock());
  SmallVector<Value> masked;
  for (unsigned e = 0, ne = s.size(); e < ne; ++e) {
    Value key = keyOfSlot[sLayout.rowSlot[e]];
    Column col = column(sLayout.colOffsets[e]);
    Value visible = arith::AndIOp::create(
        b, loc,
        arith::AndIOp::create(
            b, loc, lt(col.q, sq),
            emitKeyVisible(b, loc, score.mask, col.q, key, sq, sk)),
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, col.lse2,
                              negInf));
    masked.push_back(select(visible, s[e], cf(0.0)));
  }
  scf::YieldOp::create(b, loc, masked);
  llvm::copy(ifOp.getResults(), s.begin());
}

void MainStageEmitter::emitBiasGrad(Value h, Value m0, unsigned e, Value ds) {
  Value key = add(
      add(n0, warpRow),
      add(sLayout.laneRow, c32(sLayout.rowSlotOffsets[sLayout.rowSlot[e]])));
  Value q = add(add(m0, sLayout.laneCol), c32(sLayout.colOffsets[e]));
  Value inside = arith::AndIOp::create(b, loc, lt(key, sk), lt(q, sq));
  // Rows summed: main sums them itself (emitRowSums).
  if (biasRowsSummed)
    inside = arith::AndIOp::create(
        b, loc, inside,
        arith::XOrIOp::create(b, loc, biasRowsSummed,
                              arith::ConstantIntOp::create(b, loc, 1, 1)));
  OpBuilder::InsertionGuard guard(b);
  auto ifOp = scf::IfOp::create(b, loc, inside, /*withElse=*/false);
  SmallVector<Value> pos = {batch, h, q, key};
  b.setInsertionPointToStart(ifOp.thenBlock());
  auto direct = [&] {
    store(toDbiasType(ds),
          gep(arg(kBwdDBias), spec.dbiasType, dbiasOffset(*biasGrad, pos)),
          spec.dbiasType.getIntOrFloatBitWidth() / 8);
  };
  auto summed = scf::IfOp::create(b, loc, biasGrad->summed, true);
  b.setInsertionPointToStart(summed.thenBlock());
  // Deterministic plans add nothing by atomics: each element goes to
  // dbias_full once, reduce_dbias sums them in a fixed order.
  if (spec.deterministic)
    store(ds, gep(dbiasAccum, f32, fullIndex(pos)), 4);
  else
    target.emitAtomicAddF32(
        b, loc, gep(dbiasAccum, f32, accumIndex(*biasGrad, pos)), {ds});
  b.setInsertionPointToStart(summed.elseBlock());
  direct();
}

SmallVector<Value> MainStageEmitter::loadScoreGrad(Value rowBase) {
  // Adjacent columns of a row in one load (even column, even row stride:
  // aligned to the pair).
  SmallVector<Value> p;
  Value first = add(rowBase, pLayout.laneRow);
  bool evenStride =
      dsTile.rowStride % 2 == 0 && pLayout.laneColMultiple % 2 == 0;
  for (unsigned e = 0, ne = pLayout.getNumElements(); e < ne;) {
    Value r = add(first, c32(pLayout.rowSlotOffsets[pLayout.rowSlot[e]]));
    Value c = add(pLayout.laneCol, c32(pLayout.colOffsets[e]));
    Value ptr =
        gep(dsTile.base, spec.elemType, add(mul(r, c32(dsTile.rowStride)), c));
    bool pair = evenStride && pLayout.startsColumnPair(e);
    if (!pair) {
      p.push_back(arith::ExtFOp::create(b, loc, f32,
                                        load(spec.elemType, ptr, elemBytes)));
      ++e;
      continue;
    }
    auto pairType = VectorType::get({2}, spec.elemType);
    Value v = load(pairType, ptr, 2 * elemBytes);
    for (int64_t i = 0; i < 2; ++i) {
      Value x = vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i});
      p.push_back(arith::ExtFOp::create(b, loc, f32, x));
    }
    e += 2;
  }
  return p;
}

void MainStageEmitter::emitRowSums(Value h, Value first, Value last,
                                   ArrayRef<Value> sums) {
  // The running sums live in the dS tile, which a deterministic main leaves
  // unused (no dQ here): one f32 per key row of the block, each only ever
  // touched by the lane that owns its row, so no barrier. (As loop-carried
  // registers they made D = 64 spill more on sm_90a and sm_80.)
  assert(spec.blockN() * 4 <= dsTile.rows * dsTile.rowStride * elemBytes &&
         "the dS tile holds a float per key row");
  auto [rowSums, leader] = reduceRowSums(sums);
  OpBuilder::InsertionGuard guard(b);
  auto ifLeader = scf::IfOp::create(b, loc, leader, /*withElse=*/false);
  b.setInsertionPointToStart(ifLeader.thenBlock());
  Value rowFirst = add(warpRow, sLayout.laneRow);
  for (unsigned slot = 0, ns = rowSums.size(); slot < ns; ++slot) {
    Value row = add(rowFirst, c32(sLayout.rowSlotOffsets[slot]));
    Value at = gep(dsTile.base, f32, row);
    Value sum = fadd(select(first, cf(0.0), load(f32, at, 4)), rowSums[slot]);
    store(sum, at, 4);
    Value key = add(n0, row);
    OpBuilder::InsertionGuard inSlot(b);
    auto ifLast = scf::IfOp::create(
        b, loc, arith::AndIOp::create(b, loc, last, lt(key, sk)),
        /*withElse=*/false);
    b.setInsertionPointToStart(ifLast.thenBlock());
    store(sum, gep(dbiasAccum, f32, fullIndex({batch, h, c32(0), key})), 4);
  }
}

std::pair<SmallVector<Value>, Value>
MainStageEmitter::reduceRowSums(ArrayRef<Value> sums) {
  // The lanes of a key row differ in the bits of rowReduceXor; the one with
  // none set stores. fadd commutes, so every lane ends with the same sum.
  int32_t groupBits = 0;
  for (int32_t off : sLayout.rowReduceXor)
    groupBits |= off;
  SmallVector<Value> rowSums;
  for (Value sum : sums) {
    for (int32_t off : sLayout.rowReduceXor)
      sum = fadd(sum, target.emitShuffleXor(b, loc, sum, off));
    rowSums.push_back(sum);
  }
  Value leader = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::AndIOp::create(b, loc, lane, c32(groupBits)), c32(0));
  return {rowSums, leader};
}

void MainStageEmitter::emitRowSumsToWriter(Value stage, ArrayRef<Value> sums) {
  auto [rowSums, leader] = reduceRowSums(sums);
  OpBuilder::InsertionGuard guard(b);
  auto ifLeader = scf::IfOp::create(b, loc, leader, /*withElse=*/false);
  b.setInsertionPointToStart(ifLeader.thenBlock());
  Value rowFirst = add(warpRow, sLayout.laneRow);
  for (auto [slot, sum] : llvm::enumerate(rowSums))
    store(sum,
          rowSumSlot(stage, sliceGroup,
                     add(rowFirst, c32(sLayout.rowSlotOffsets[slot]))),
          4);
}

void MainStageEmitter::emitWriterRowSums(Value t, Value h, Value blocks) {
  // A head's blocks are consecutive pairs (heads outer, either direction).
  Value i = arith::RemUIOp::create(b, loc, t, blocks);
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, i, c32(0));
  Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, i,
                                     sub(blocks, c32(1)));
  Value stage = arith::RemUIOp::create(b, loc, t, c32(spec.stages()));
  int64_t ws = target.getWarpSize();
  Value writerLane = arith::RemUIOp::create(b, loc, tid, c32(ws));
  OpBuilder::InsertionGuard guard(b);
  auto ifSummed = scf::IfOp::create(b, loc, biasRowsSummed, false);
  b.setInsertionPointToStart(ifSummed.thenBlock());
  for (int64_t c = 0; c * ws < spec.blockN(); ++c) {
    Value row = add(writerLane, c32(c * ws));
    // Warpgroup 0's sum, then 1's: the same order every run.
    Value sum = fadd(load(f32, rowSumSlot(stage, c32(0), row), 4),
                     load(f32, rowSumSlot(stage, c32(1), row), 4));
    Value running = runningRowSum(row);
    sum = fadd(select(first, cf(0.0), load(f32, running, 4)), sum);
    store(sum, running, 4);
    Value key = add(n0, row);
    OpBuilder::InsertionGuard inRow(b);
    auto ifLast = scf::IfOp::create(
        b, loc, arith::AndIOp::create(b, loc, last, lt(key, sk)), false);
    b.setInsertionPointToStart(ifLast.thenBlock());
    store(sum, gep(dbiasAccum, f32, fullIndex({batch, h, c32(0), key})), 4);
  }
}

void MainStageEmitter::emitDq(Value h, Value m0) {
  int64_t bm = spec.blockM();
  if (dqMma->hasAsyncOutput()) {
    // Warpgroup products (wgmma): items of 64 query rows x dqChunk columns,
    // each over all block_n keys of dS, dealt to the warpgroups in turn, so
    // that two warpgroups split D = 128 where block_m is one warpgroup's
    // rows. Each starts from zero and is waited for before its atomics.
    int64_t groups = keyRowWarps / 4, groupRows = 4 * rowsPerWarp;
    int64_t chunks = sliceD.width / dqChunk;
    Value group = arith::DivUIOp::create(b, loc, warp, c32(4));
    Value rowInGroup =
        mul(arith::RemUIOp::create(b, loc, warp, c32(4)), c32(rowsPerWarp));
    for (int64_t i = 0, n = bm / groupRows * chunks; i < n; ++i) {
      OpBuilder::InsertionGuard guard(b);
      if (groups > 1) {
        // Uniform per warpgroup.
        auto ifOp = scf::IfOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, group,
                                  c32(i % groups)),
            false);
        b.setInsertionPointToStart(ifOp.thenBlock());
      }
      Value rowBase = add(c32(i / chunks * groupRows), rowInGroup);
      Value chunkFirst = add(sliceColD, c32(i % chunks * dqChunk));
      // dS as the shared operand where the tile is swizzled: its registers
      // stay free for dK's, dV's and dQ's accumulators.
      SmallVector<Value> dq = completed(
          *dqMma,
          dsTile.layout == SharedTileLayout::Swizzle128B
              ? issueDqFromShared(i / chunks * groupRows, c32(i % chunks))
              : dqMma->accumulateOutput(b, loc, lane, loadScoreGrad(rowBase),
                                        columnsAt(kTile, chunkFirst, dqChunk),
                                        {}));
      // Staging needs D % 4 == 0 (getBackwardStageLayout); a chunk's
      // columns past D are not added.
      int64_t cols = std::min<int64_t>(
          dqChunk, spec.headDim - (sliceD.offset + i % chunks * dqChunk));
      if (smem.dqStageRowBytes && cols > 0)
        emitDqBulk(h, m0, c32(i % groups), i / chunks * groupRows,
                   c32(i % chunks), cols, dq);
      else if (!smem.dqStageRowBytes)
        emitDqAtomics(h, m0, rowBase, chunkFirst, dqChunk, dq);
    }
    return;
  }
  int64_t rowsPerPass = rowsPerWarp * keyRowWarps;
  for (int64_t pass = 0; pass * rowsPerPass < bm; ++pass) {
    OpBuilder::InsertionGuard guard(b);
    Value rowBase = add(c32(pass * rowsPerPass), warpRow);
    if ((pass + 1) * rowsPerPass > bm) {
      // Whole warps drop out: the condition is uniform per warp.
      auto ifOp = scf::IfOp::create(b, loc, lt(rowBase, c32(bm)), false);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    // This warp's rows of dS, read back in the score layout of dS K.
    SmallVector<Value> zero(dqLayout.getNumElements(), cf(0.0));
    SmallVector<Value> dq = dqMma->accumulateOutput(
        b, loc, lane, loadScoreGrad(rowBase), columns(kTile, sliceD), zero);
    emitDqAtomics(h, m0, rowBase, sliceColD, sliceD.width, dq);
  }
}

void MainStageEmitter::emitDqUnitsToRing(Value stage) {
  int64_t units = sliceD.width / dqChunk;
  SmallVector<SmallVector<Value>> dq;
  for (int64_t u = 0; u < units; ++u)
    dq.push_back(issueDqFromShared(0, c32(u)));
  for (SmallVector<Value> &acc : dq)
    acc = dqMma->waitOutput(b, loc, acc, /*pending=*/0);
  for (int64_t u = 0; u < units; ++u) {
    // Unit U of the block (columns 64 U..) goes to panel U of this stage's
    // Q (rows 0-31) and dO (rows 32-63): this warpgroup's own columns,
    // which only its completed products read. Units past D are not
    // staged (at D = 129-192 the second warpgroup's would lie past the
    // tile).
    Value unit = add(mul(sliceGroup, c32(units)), c32(u));
    OpBuilder::InsertionGuard guard(b);
    if (slicesEnd(sliceD) > spec.headDim) {
      auto ifOp = scf::IfOp::create(
          b, loc, lt(mul(unit, c32(64)), c32(spec.headDim)), false);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    auto [low, high] = ringUnitHalves(stage, unit);
    storeDqUnit(dq[u], low, high);
  }
  // Published to the bulk copies' proxy; the writer adds them.
  scoresMma->emitSharedWritesVisible(b, loc);
  target.emitNamedBarrierArrive(b, loc, c32(kDqStagedBarrierId),
                                dqWriterBarrierThreads());
}

void MainStageEmitter::emitDqBulk(Value h, Value m0, Value group,
                                  int64_t rowBlock, Value chunkIndex,
                                  int64_t width, ArrayRef<Value> dq) {
  // The item's 64 rows x `width` floats of the staging area, free since the
  // barrier after dS (each thread waited for its reductions' reads): rows
  // of 64-column chunks, or with dq_accum in blocks the chunk's 64 x 64
  // unit in dq_accum's layout (BackwardWorkspace.h: float c of row r at
  // r * 64 + ((c / 4) ^ (r % 8)) * 4 + c % 4, so that a quad's 8-byte
  // stores cover 8 rows' distinct 16-byte pieces: no bank conflicts).
  bool blocked = smem.dqStageBlocked;
  assert((!blocked || (spec.blockM() == 64 && rowBlock == 0 &&
                       sliceD.offset == 0 && dqChunk == 64)) &&
         "whole 64 x 64 units (usesBlockedDqAccum)");
  int64_t rowBytes = smem.dqStageRowBytes;
  Value stage = blocked ? dqUnitStage(chunkIndex)
                        : gep(smemBase, b.getI8Type(),
                              add(c32(smem.dqStageOffset + rowBlock * rowBytes),
                                  mul(chunkIndex, c32(kDqStageChunkBytes))));
  if (blocked)
    storeDqUnit(dq, stage);
  else
    storeDqRows(dq, [&](Value r, Value c) {
      return gep(stage, b.getI8Type(),
                 add(mul(r, c32(rowBytes)), mul(c, c32(4))));
    });
  // Published to the bulk copies' proxy and the warpgroup; then its first
  // thread adds the unit (16 KB) to dq_accum, or one thread a row its row
  // (rows past Sq stay out). Predicated, not branched: dK's product may be
  // in flight (dqBeforeDk), and a branch there would make ptxas serialize
  // the chains.
  scoresMma->emitSharedWritesVisible(b, loc);
  if (dqByWriter()) {
    // The producer's writer adds it (emitDqWriter).
    target.emitNamedBarrierArrive(b, loc, c32(kDqStagedBarrierId),
                                  dqWriterBarrierThreads());
    return;
  }
  target.emitNamedBarrier(b, loc, add(group, c32(1)), 128);
  Value t = arith::RemUIOp::create(b, loc, tid, c32(128));
  Value colFirst = add(sliceColD, mul(chunkIndex, c32(dqChunk)));
  if (blocked) {
    // (Slices on warpgroups stage in the ring instead: emitDqUnitsToRing.)
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t, c32(0));
    target.emitBulkReduceAddF32(b, loc,
                                dqAccumChunk(dqAccum, batch, h, m0, colFirst),
                                stage, kDqUnitBytes, first);
  } else {
    Value q = add(add(m0, c32(rowBlock)), t);
    target.emitBulkReduceAddF32(
        b, loc,
        gep(dqAccumRow(dqAccum, workspaceRow(batch, h, q)), f32, colFirst),
        gep(stage, b.getI8Type(), mul(t, c32(rowBytes))), width * 4,
        arith::AndIOp::create(b, loc, lt(t, c32(64)), lt(q, sq)));
  }
  target.emitBulkCommit(b, loc);
}

void MainStageEmitter::storeDqRows(ArrayRef<Value> dq,
                                   function_ref<Value(Value, Value)> address) {
  Value scale = arg(kBwdScale);
  Value rowFirst =
      add(mul(arith::RemUIOp::create(b, loc, warp, c32(4)), c32(rowsPerWarp)),
          dqLayout.laneRow);
  for (unsigned e = 0, ne = dq.size(); e < ne;) {
    bool pair = dqLayout.startsColumnPair(e);
    Value r = add(rowFirst, c32(dqLayout.rowSlotOffsets[dqLayout.rowSlot[e]]));
    Value c = add(dqLayout.laneCol, c32(dqLayout.colOffsets[e]));
    Value at = address(r, c);
    if (pair) {
      Value v = LLVM::UndefOp::create(b, loc, VectorType::get({2}, f32));
      for (int k = 0; k < 2; ++k)
        v = LLVM::InsertElementOp::create(b, loc, v, fmul(dq[e + k], scale),
                                          c32(k));
      store(v, at, 8);
    } else {
      store(fmul(dq[e], scale), at, 4);
    }
    e += pair ? 2 : 1;
  }
}

void MainStageEmitter::storeDqUnit(ArrayRef<Value> dq, Value low, Value high) {
  // Row slots are 8 rows apart: every row of this thread has the first
  // row's swizzle.
  assert(llvm::all_of(dqLayout.rowSlotOffsets,
                      [](int64_t o) { return o % 8 == 0; }) &&
         "row slots 8 rows apart");
  Value swizzle = arith::RemUIOp::create(
      b, loc,
      add(mul(arith::RemUIOp::create(b, loc, warp, c32(4)), c32(rowsPerWarp)),
          dqLayout.laneRow),
      c32(8));
  storeDqRows(dq, [&](Value r, Value c) {
    Value piece = arith::XOrIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, c, c32(4)), swizzle);
    Value base = low;
    if (high) {
      base = arith::SelectOp::create(b, loc, lt(r, c32(32)), low, high);
      r = arith::RemUIOp::create(b, loc, r, c32(32));
    }
    return gep(
        base, f32,
        add(mul(r, c32(64)), add(mul(piece, c32(4)),
                                 arith::RemUIOp::create(b, loc, c, c32(4)))));
  });
}

SmallVector<Value> MainStageEmitter::issueDqFromShared(int64_t rowBlock,
                                                       Value chunkIndex) {
  // Rows rowBlock.. of the swizzled dS (128-byte rows in each panel) and
  // panel chunkIndex of the slice's K columns, all block_n keys.
  SharedTile ds = dsTile;
  ds.base = gep(dsTile.base, b.getI8Type(), c32(rowBlock * 128));
  SharedTile k = columnsAt(kTile, sliceColD, dqChunk);
  k.base = gep(k.base, b.getI8Type(), mul(chunkIndex, c32(kTile.rows * 128)));
  return dqMma->accumulateSharedOutput(b, loc, ds, k, {});
}

void MainStageEmitter::emitDqAtomics(Value h, Value m0, Value rowBase,
                                     Value colFirst, int64_t width,
                                     ArrayRef<Value> dq) {
  Value scale = arg(kBwdScale);
  Value accumRow0 = workspaceRow(batch, h, c32(0));
  Value qFirst = add(add(m0, rowBase), dqLayout.laneRow);
  forEachRowBelow(dqLayout, qFirst, sq, [&](unsigned slot, Value q) {
    Value rowPtr = dqAccumRow(dqAccum, add(accumRow0, ext(q)));
    // Adjacent columns of a row go out as one atomic where the target
    // has vector atomics (the pair starts at an even column: 8 bytes).
    // dq_accum rows are D floats: a padded tile's columns past D are
    // skipped, and pairs need an even D to stay within a row.
    // A chunk whose first column is a value (slicesOnGroups) may be any
    // slice's.
    int64_t d = spec.headDim;
    std::optional<int64_t> first = getConstantIntValue(colFirst);
    bool tail = first ? d < *first + width : d < slicesEnd(sliceD);
    for (unsigned e = 0, ne = dq.size(); e < ne;) {
      if (dqLayout.rowSlot[e] != slot) {
        ++e;
        continue;
      }
      bool pair = dqLayout.startsColumnPair(e) && d % 2 == 0;
      Value c =
          add(dqLayout.laneCol, add(colFirst, c32(dqLayout.colOffsets[e])));
      SmallVector<Value, 2> vals = {fmul(dq[e], scale)};
      if (pair)
        vals.push_back(fmul(dq[e + 1], scale));
      OpBuilder::InsertionGuard inColumn(b);
      if (tail) {
        auto colIf = scf::IfOp::create(b, loc, lt(c, c32(d)), false);
        b.setInsertionPointToStart(colIf.thenBlock());
      }
      target.emitAtomicAddF32(b, loc, gep(rowPtr, f32, ext(c)), vals);
      e += pair ? 2 : 1;
    }
  });
}

void MainStageEmitter::emitScoresExchange(Value keyFirst, ArrayRef<Value> pt,
                                          ArrayRef<Value> dst) {
  // Both warpgroups have read the last block's tiles (each completed its
  // products before it got here).
  target.emitNamedBarrier(b, loc, c32(kScoresFreeBarrierId),
                          computeWarps * target.getWarpSize());
  for (unsigned e = 0, ne = pt.size(); e < ne; ++e) {
    Value key = add(keyFirst, c32(sLayout.rowSlotOffsets[sLayout.rowSlot[e]]));
    Value q = add(add(sLayout.laneCol, c32(sLayout.colOffsets[e])), scoreCol0);
    for (auto [tile, v] :
         {std::pair(&ptTile, pt[e]), std::pair(&dstTile, dst[e])})
      store(arith::TruncFOp::create(b, loc, spec.elemType, v),
            elementAddress(*tile, key, q), elemBytes);
  }
}

void MainStageEmitter::emitQueryBlock(Value h, Value m0, Value stage,
                                      MutableArrayRef<Value> acc, Value first,
                                      Value last,
                                      function_ref<void()> afterIssue) {
  unsigned nk = dkLayout.getNumElements();
  MutableArrayRef<Value> dk = acc.take_front(nk), dv = acc.drop_front(nk);
  SharedTile qTile = queryTile(stage), doTile = gradOutputTile(stage);
  statsBase = smem.rowStatsStageBytes ? rowStats(stage) : Value();
  // With slices on warpgroups this warpgroup's S^T and dP^T are the query
  // columns from scoreCol0 of the block (qScores, its first query).
  bool split = slicesOnGroups;
  Value mq = m0;
  SharedTile qScores = qTile, doScores = doTile;
  if (split) {
    mq = add(m0, scoreCol0);
    if (statsBase)
      statsBase = gep(statsBase, f32, scoreCol0);
    for (SharedTile *t : {&qScores, &doScores})
      t->base = gep(t->base, b.getI8Type(), mul(scoreCol0, c32(128)));
  }
  MmaEmitter &sMma = split ? *halfScoresMma : *scoresMma;
  MmaEmitter &pMma = split ? *halfDpMma : *dpMma;

  // With asynchronous products dP^T = V dO^T runs while P^T is computed
  // (S^T is waited for alone), and dV's product while dS^T is.
  bool overlap = overlapsScoreGrad(), statsInAcc = statsInAccumulators();
  SmallVector<Value> keys = sMma.loadQuery(b, loc, lane, kTile, warpRow);
  SmallVector<Value> s, dp;
  if (statsInAcc) {
    s = sMma.issueScoresOnto(
        b, loc, lane, keys, qScores,
        columnStats(0,
                    arith::DivFOp::create(b, loc, cf(-1.0), arg(kBwdScale))));
    dp = pMma.issueScoresOnto(b, loc, lane,
                              pMma.loadQuery(b, loc, lane, vTile, warpRow),
                              doScores, columnStats(spec.blockM(), cf(-1.0)));
    s = sMma.waitOutput(b, loc, s, /*pending=*/1);
  } else if (overlap) {
    s = sMma.issueScores(b, loc, lane, keys, qScores);
    dp = pMma.issueScores(b, loc, lane,
                          pMma.loadQuery(b, loc, lane, vTile, warpRow),
                          doScores);
    s = sMma.waitOutput(b, loc, s, /*pending=*/1);
  } else {
    s = sMma.computeScores(b, loc, lane, keys, qScores);
  }
  SmallVector<Value> dsc;
  emitProbabilities(h, mq, s, dsc, statsInAcc);
  // With dropout the forward's O used P * Z: dV takes P * Z, and dP is
  // Z * (dO V^T).
  SmallVector<Value> z, pv(s);
  if (score.dropout) {
    bool aligned = scoreCols % 16 == 0 && spec.blockN() % 16 == 0 &&
                   rowsPerWarp % 16 == 0;
    z = emitDropoutFactors(b, loc, *score.dropout,
                           add(mul(batch, arg(kBwdHeadsQ)), h), sLayout,
                           add(n0, warpRow), mq, aligned, /*transposed=*/true);
    for (unsigned e = 0, ne = s.size(); e < ne; ++e)
      pv[e] = fmul(s[e], z[e]);
  }
  // Split, dV's product reads all of P^T from shared memory (below).
  SmallVector<Value> next;
  if (!split) {
    next = scoresMma->accumulateOutput(
        b, loc, lane, pv, columnsAt(doTile, sliceColDv, sliceDv.width),
        SmallVector<Value>(dv));
    llvm::copy(next, dv.begin());
  }
  if (afterIssue)
    afterIssue();

  if (overlap)
    dp = pMma.waitOutput(b, loc, dp, /*pending=*/split ? 0 : 1);
  else
    dp = pMma.computeScores(b, loc, lane,
                            pMma.loadQuery(b, loc, lane, vTile, warpRow),
                            doScores);
  Value deltaBase = gep(deltaPtr(), f32, workspaceRow(batch, h, c32(0)));
  Value lastQ = sub(sq, c32(1));
  llvm::DenseMap<int64_t, Value> deltas;
  bool toWriter = rowSumsByWriter();
  SmallVector<Value> rowSums(first || toWriter ? sLayout.getNumRowSlots() : 0);
  for (unsigned e = 0, ne = s.size(); e < ne; ++e) {
    int64_t off = sLayout.colOffsets[e];
    // Staged beside lse, else from the workspace; with statsInAcc dP^T
    // started from -delta.
    Value &delta = deltas[off];
    if (!statsInAcc && !delta) {
      Value at = statsBase
                     ? gep(statsBase, f32,
                           add(sLayout.laneCol, c32(spec.blockM() + off)))
                     : gep(deltaBase, f32,
                           ext(arith::MinSIOp::create(
                               b, loc, add(add(mq, sLayout.laneCol), c32(off)),
                               lastQ)));
      delta = load(f32, at, 4);
    }
    // dS = P (dP - delta), times d(capped)/d(uncapped) under a softcap.
    Value dpe = score.dropout ? fmul(dp[e], z[e]) : dp[e];
    s[e] = fmul(s[e], statsInAcc ? dpe : fsub(dpe, delta));
    // The bias is added after the cap: its gradient is dS before the cap's
    // derivative.
    // One slice writes the bias gradient. Masked and out-of-range elements
    // add 0 to the row sums: P is 0 there, and for rows past Sq dP too
    // (their dO rows are zeros).
    if (!rowSums.empty()) {
      Value &sum = rowSums[sLayout.rowSlot[e]];
      sum = sum ? fadd(sum, s[e]) : s[e];
    }
    // Split, each warpgroup has query columns of its own.
    if (biasGrad && slice == 0)
      emitBiasGrad(h, mq, e, s[e]);
    if (spec.softcap)
      s[e] = fmul(s[e], dsc[e]);
  }
  if (!rowSums.empty()) {
    OpBuilder::InsertionGuard guard(b);
    auto ifSummed =
        scf::IfOp::create(b, loc, biasRowsSummed, /*withElse=*/false);
    b.setInsertionPointToStart(ifSummed.thenBlock());
    if (toWriter)
      emitRowSumsToWriter(stage, rowSums);
    else
      emitRowSums(h, first, last, rowSums);
  }
  bool dqFirst = dqBeforeDk();
  if (!dqFirst && !split) {
    next = dkMma->accumulateOutput(b, loc, lane, s,
                                   columnsAt(qTile, sliceColD, sliceD.width),
                                   SmallVector<Value>(dk));
    llvm::copy(next, dk.begin());
  }

  // A deterministic plan computes dQ in its own pass (emitQueryPass) unless
  // it orders its reductions.
  if (spec.dqInMain()) {
    // dS^T -> dS in shared memory (query rows, key columns) for dQ = dS K.
    Value keyFirst = add(warpRow, sLayout.laneRow);
    if (split)
      emitScoresExchange(keyFirst, pv, s);
    for (unsigned e = 0, ne = s.size(); e < ne; ++e) {
      Value key =
          add(keyFirst, c32(sLayout.rowSlotOffsets[sLayout.rowSlot[e]]));
      Value q = add(sLayout.laneCol, c32(sLayout.colOffsets[e]));
      if (split)
        q = add(q, scoreCol0);
      store(arith::TruncFOp::create(b, loc, spec.elemType, s[e]),
            elementAddress(dsTile, q, key), elemBytes);
    }
    if (dsTile.layout == SharedTileLayout::Swizzle128B)
      scoresMma->emitSharedWritesVisible(b, loc);
    // The last block's reductions have read the staging area (the ring's
    // are the writer's, which the producer waits for: dqInRing).
    if (!dqInRing()) {
      if (dqByWriter())
        waitDqStageFree();
      else if (smem.dqStageRowBytes)
        target.emitBulkWait(b, loc, 0, /*readOnly=*/true);
    }
    computeBarrier();
    if (split) {
      // Both halves of P^T and dS^T are in: this warpgroup's slice of dV
      // and dK over all the block's query columns.
      next = scoresMma->accumulateSharedOutput(
          b, loc, ptTile, columnsAt(doTile, sliceColDv, sliceDv.width),
          SmallVector<Value>(dv));
      llvm::copy(next, dv.begin());
      next = dkMma->accumulateSharedOutput(
          b, loc, dstTile, columnsAt(qTile, sliceColD, sliceD.width),
          SmallVector<Value>(dk));
      llvm::copy(next, dk.begin());
    }
    if (dqInRing()) {
      emitDqUnitsToRing(stage);
    } else if (dqFirst) {
      // dQ, then dK behind it: dQ is staged and added while dK runs.
      // Warpgroup g computes dQ's columns g * dqChunk.. of the slice.
      Value group = arith::DivUIOp::create(b, loc, warp, c32(4));
      SmallVector<Value> dq = issueDqFromShared(0, group);
      next = dkMma->accumulateOutput(b, loc, lane, s,
                                     columnsAt(qTile, sliceColD, sliceD.width),
                                     SmallVector<Value>(dk));
      llvm::copy(next, dk.begin());
      dq = dqMma->waitOutput(b, loc, dq, /*pending=*/1);
      emitDqBulk(h, m0, group, 0, group, dqChunk, dq);
    } else {
      emitDq(h, m0);
    }
  }
  // The next block's copies overwrite the Q buffer the dK product reads
  // (already complete where this warpgroup waited for a dQ product).
  if (!afterIssue)
    llvm::copy(completed(*dkMma, SmallVector<Value>(dk)), dk.begin());
}

void MainStageEmitter::emitEpilogue(ArrayRef<Value> acc) {
  unsigned nk = dkLayout.getNumElements();
  Value scale = arg(kBwdScale);
  // Columns of a padded tile past the operand's head dim are not stored.
  // A slice whose first column is a value (slicesOnGroups) may be any of
  // the tile's.
  auto storeRows = [&](const AccLayout &layout, ArrayRef<Value> vals,
                       int64_t cols, HeadSlice s, Value first, unsigned ptrArg,
                       unsigned strideArg, bool scaled) {
    Value keyFirst = add(add(n0, warpRow), layout.laneRow);
    std::optional<int64_t> offset = getConstantIntValue(first);
    // A narrower last slice computes past the tile: those columns stay.
    bool whole = offset ? cols >= *offset + s.width : cols >= slicesEnd(s);
    if (whole && canStoreRowsByQuads(target, layout, spec.elemType, s.width,
                                     spec.config.getAlignBytes())) {
      return storeRowsByQuads(
          b, loc, target, layout, spec.elemType, s.width,
          [&](unsigned slot) {
            return add(keyFirst, c32(layout.rowSlotOffsets[slot]));
          },
          sk,
          [&](Value key) {
            return gep(rowPtr(ptrArg, strideArg, batch, headKV, key),
                       spec.elemType, first);
          },
          [&](unsigned e) -> Value {
            Value x = scaled ? fmul(vals[e], scale) : vals[e];
            return arith::TruncFOp::create(b, loc, spec.elemType, x);
          });
    }
    forEachRowBelow(layout, keyFirst, sk, [&](unsigned slot, Value key) {
      Value rowBase = rowPtr(ptrArg, strideArg, batch, headKV, key);
      for (unsigned e = 0, ne = vals.size(); e < ne; ++e) {
        if (layout.rowSlot[e] != slot)
          continue;
        Value x = scaled ? fmul(vals[e], scale) : vals[e];
        Value c = add(layout.laneCol, add(first, c32(layout.colOffsets[e])));
        OpBuilder::InsertionGuard inColumn(b);
        if (!whole) {
          auto colIf = scf::IfOp::create(b, loc, lt(c, c32(cols)), false);
          b.setInsertionPointToStart(colIf.thenBlock());
        }
        store(arith::TruncFOp::create(b, loc, spec.elemType, x),
              gep(rowBase, spec.elemType, ext(c)), elemBytes);
      }
    });
  };
  storeRows(dkLayout, acc.take_front(nk), spec.headDim, sliceD, sliceColD,
            kBwdDK, kBwdDKStrideB, true);
  storeRows(dvLayout, acc.drop_front(nk), spec.headDimV, sliceDv, sliceColDv,
            kBwdDV, kBwdDVStrideB, false);
  // dq_accum complete before the plan's next stage reads it.
  if (smem.dqStageRowBytes)
    target.emitBulkWait(b, loc, 0, /*readOnly=*/false);
}

void MainStageEmitter::emit() {
  int64_t ws = target.getWarpSize();
  tid = toI32(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  lane = arith::RemUIOp::create(b, loc, tid, c32(ws));
  warp = arith::DivUIOp::create(b, loc, tid, c32(ws));
  warpRow = mul(warp, c32(rowsPerWarp));
  Value keyBlock = blockId(gpu::Dimension::x);
  headKV = blockId(gpu::Dimension::y);
  if (spec.orderedDq()) {
    // Launch order over (key block, head) with the key blocks of G heads
    // alternating, G = SMs / key blocks (at least 1): the key blocks of a
    // head wait for each other's turns in a chain, which runs from the
    // highest in flight; spread over more launches, a key block more often
    // finds the one before it ahead. Higher key blocks of a head come first
    // (their turns come first: no deadlock). On the H100 up to 1.2x the
    // plain order at 1k-8k (bench/RESULTS.md, sixteenth session); causal,
    // G = all heads (the longest walks of every head last, not one head's)
    // ran 0.55-0.94x it (nineteenth session).
    Value nk = gridDim(gpu::Dimension::x), heads = gridDim(gpu::Dimension::y);
    Value interleave = arith::MaxUIOp::create(
        b, loc, c32(1),
        arith::DivUIOp::create(b, loc, target.emitMultiprocessorCount(b, loc),
                               nk));
    Value linear = add(mul(headKV, nk), keyBlock);
    Value first =
        mul(arith::DivUIOp::create(b, loc, linear, mul(nk, interleave)),
            interleave);
    Value inGroup =
        arith::MinUIOp::create(b, loc, interleave, sub(heads, first));
    Value r = sub(linear, mul(first, nk));
    keyBlock = sub(sub(nk, c32(1)), arith::DivUIOp::create(b, loc, r, inGroup));
    headKV = add(first, arith::RemUIOp::create(b, loc, r, inGroup));
  }
  n0 = mul(keyBlock, c32(spec.blockN()));
  batch = blockId(gpu::Dimension::z);
  // emitWarpSpecialized gives each warpgroup its own with slicesOnGroups.
  sliceColD = c32(sliceD.offset);
  sliceColDv = c32(sliceDv.offset);
  sq = arg(kBwdSeqQ);
  sk = arg(kBwdSeqK);
  if (spec.dqInMain())
    dqAccum = dqAccumPtr();

  score = bindScoreParams(b, loc, func.getArguments(), spec, kBwdScale,
                          kBwdDropoutP);
  if (spec.dbiasType) {
    biasGrad = biasGradShape();
    dbiasAccum = spec.deterministic ? dbiasFullPtr() : dbiasAccumPtr();
    if (spec.deterministic)
      biasRowsSummed = rowsSummed(*biasGrad);
  }

  smemBase = getDynamicSharedMemoryBase(b, loc, func,
                                        smem.alignSlack ? smem.alignSlack : 16);
  int64_t bm = spec.blockM(), bn = spec.blockN();
  kTile = tile(smem.kOffset, bn, spec.tileHeadDim, smem.kRowStride);
  vTile = tile(smem.vOffset, bn, spec.tileHeadDimV, smem.vRowStride);
  qTile = tile(smem.qOffset, bm, spec.tileHeadDim, smem.qRowStride);
  doTile = tile(smem.doOffset, bm, spec.tileHeadDimV, smem.doRowStride);
  dsTile = tile(smem.dsOffset, bm, bn, smem.dsRowStride,
                /*padded=*/scoresMma->getSharedTileLayout() !=
                    SharedTileLayout::Swizzle128B);
  if (slicesOnGroups) {
    ptTile = tile(smem.dsOffset + smem.dsStageBytes, bn, bm, bm);
    dstTile = tile(smem.dsOffset + 2 * smem.dsStageBytes, bn, bm, bm);
  }
  scoreCol0 = c32(0);

  sLayout = (slicesOnGroups ? halfScoresMma : scoresMma)
                ->getScoreLayout(b, loc, lane);
  dvLayout = scoresMma->getOutputLayout(b, loc, lane);
  dkLayout = dkMma->getOutputLayout(b, loc, lane);
  pLayout = dqMma->getScoreLayout(b, loc, lane);
  dqLayout = dqMma->getOutputLayout(b, loc, lane);

  // K and V of this key block stay in shared memory throughout.
  copyRows(kTile, spec.headDim, kBwdK, kBwdKStrideB, headKV, n0, sk);
  copyRows(vTile, spec.headDimV, kBwdV, kBwdVStrideB, headKV, n0, sk);
  target.emitCopyCommit(b, loc);
  target.emitCopyWait(b, loc, 0);
  scoresMma->emitSharedWritesVisible(b, loc);

  // Query blocks that see a key of this block (the same for every head).
  Value n1 = arith::MinSIOp::create(b, loc, add(n0, c32(bn)), sk);
  auto [lo, hi] = emitVisibleRowRange(b, loc, score.mask, n0, n1, sq, sk);
  Value iLo = arith::DivUIOp::create(b, loc, lo, c32(bm));
  // No rows (lo == hi, clamped to Sq): no blocks, not the one holding Sq
  // (ordered dQ numbers a block's turns by the key blocks that see it).
  Value iHi = select(
      lt(lo, hi), arith::DivUIOp::create(b, loc, add(hi, c32(bm - 1)), c32(bm)),
      iLo);

  SmallVector<Value> init(dkLayout.getNumElements() + dvLayout.getNumElements(),
                          cf(0.0));
  Value group =
      arith::DivSIOp::create(b, loc, arg(kBwdHeadsQ), arg(kBwdHeadsKV));
  if (warpSpecialized)
    return emitWarpSpecialized(mul(headKV, group), group, iLo, iHi, init);
  auto emitLoop = [&] {
    return emitBlockLoop(mul(headKV, group), group, iLo, iHi, init,
                         /*sumRows=*/bool(biasRowsSummed));
  };
  if (!deferredCompletion()) {
    emitEpilogue(SmallVector<Value>(emitLoop().getResults()));
    return;
  }
  // The loop, then the wait for its last products. A key block that no
  // query block sees skips both: had its zeros met the loop's in-flight
  // accumulators before the wait, ptxas would serialize every wgmma of the
  // kernel (C7515).
  auto ifOp = scf::IfOp::create(b, loc, TypeRange(ValueRange(init)),
                                lt(iLo, iHi), /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(
        b, loc, completed(*dkMma, SmallVector<Value>(emitLoop().getResults())));
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, init);
  }
  emitEpilogue(SmallVector<Value>(ifOp.getResults()));
}

Value MainStageEmitter::emitRowDelta(Value h, Value row,
                                     const AccLayout &layout) {
  // This lane's share: the bits of its lane id the row's lanes differ in.
  int64_t shares = int64_t(1) << layout.rowReduceXor.size();
  Value share = c32(0);
  for (auto [i, m] : llvm::enumerate(layout.rowReduceXor)) {
    assert(llvm::isPowerOf2_32(m) && "row lanes differ in single bits");
    Value bit = arith::ShRUIOp::create(
        b, loc, arith::AndIOp::create(b, loc, lane, c32(m)),
        c32(llvm::Log2_32(m)));
    share = arith::OrIOp::create(b, loc, share,
                                 arith::ShLIOp::create(b, loc, bit, c32(i)));
  }
  Value o = rowPtr(kBwdO, kBwdOStrideB, batch, h, row);
  Value dout = rowPtr(kBwdDO, kBwdDOStrideB, batch, h, row);
  Value sum = sumRowProductsShare(o, dout, share, shares);
  for (int32_t m : layout.rowReduceXor)
    sum = fadd(sum, target.emitShuffleXor(b, loc, sum, m));
  return sum;
}

void MainStageEmitter::emitQueryPass() {
  int64_t ws = target.getWarpSize(), bn = spec.blockN();
  int64_t d = spec.tileHeadDim, dv = spec.tileHeadDimV;
  // Forward roles: S = Q K^T and dQ += dS K (K as the "value" tile), and
  // dP = dO V^T; one emitter's rows per warp, all warps.
  int64_t qRows = getDeterministicQueryRows(spec, target);
  int64_t rows0 = qRows / spec.warps();
  // The emitters keep a reference to their spec: these outlive them.
  KernelSpec sSpec = getProductSpec(spec, qRows, bn, d, d);
  KernelSpec pSpec = getProductSpec(spec, qRows, bn, dv, d);
  std::unique_ptr<MmaEmitter> sMma = target.createMmaEmitter(sSpec);
  std::unique_ptr<MmaEmitter> pMma = target.createMmaEmitter(pSpec);
  tid = toI32(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  lane = arith::RemUIOp::create(b, loc, tid, c32(ws));
  warp = arith::DivUIOp::create(b, loc, tid, c32(ws));
  warpRow = mul(warp, c32(rows0));
  Value m0 = mul(blockId(gpu::Dimension::x), c32(qRows));
  Value h = blockId(gpu::Dimension::y);
  batch = blockId(gpu::Dimension::z);
  sq = arg(kBwdSeqQ);
  sk = arg(kBwdSeqK);
  headKV = arith::DivSIOp::create(
      b, loc, h,
      arith::DivSIOp::create(b, loc, arg(kBwdHeadsQ), arg(kBwdHeadsKV)));
  score = bindScoreParams(b, loc, func.getArguments(), spec, kBwdScale,
                          kBwdDropoutP);
  OpBuilder::InsertionGuard guard(b);
  auto rowsLeft = scf::IfOp::create(b, loc, lt(m0, sq), false);
  b.setInsertionPointToStart(rowsLeft.thenBlock());

  // The main stage's shared memory: K and V in theirs, Q and dO in their
  // buffers (block_m x stages rows each, at least qRows: checked when the
  // plan is made).
  smemBase = getDynamicSharedMemoryBase(b, loc, func,
                                        smem.alignSlack ? smem.alignSlack : 16);
  SharedTile k = tile(smem.kOffset, bn, d, smem.kRowStride);
  SharedTile v = tile(smem.vOffset, bn, dv, smem.vRowStride);
  SharedTile q = tile(smem.qOffset, qRows, d, smem.qRowStride);
  SharedTile dO = tile(smem.doOffset, qRows, dv, smem.doRowStride);
  copyRows(q, spec.headDim, kBwdQ, kBwdQStrideB, h, m0, sq);
  copyRows(dO, spec.headDimV, kBwdDO, kBwdDOStrideB, h, m0, sq);
  target.emitCopyCommit(b, loc);
  AccLayout sl = sMma->getScoreLayout(b, loc, lane);
  AccLayout ol = sMma->getOutputLayout(b, loc, lane);

  // Per row slot: the query position, its lse (exp2 domain) and delta,
  // read while the copies of Q and dO are in flight.
  Value lastQ = sub(sq, c32(1)), lastK = sub(sk, c32(1));
  Value log2e = cf(M_LOG2E),
        negInf = cf(-std::numeric_limits<double>::infinity());
  Value lseBase = gep(arg(kBwdLse), f32,
                      add(mul(ext(batch), arg(kBwdLseStrideB)),
                          mul(ext(h), arg(kBwdLseStrideB + 1))));
  Value deltaBase = gep(deltaPtr(), f32, workspaceRow(batch, h, c32(0)));
  bool computesDelta = queryPassComputesDelta(spec);
  Value firstOfRow;
  if (computesDelta) {
    // The row's first lane (no rowReduceXor bit set) stores its delta.
    int32_t bits = 0;
    for (int32_t m : sl.rowReduceXor)
      bits |= m;
    firstOfRow = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::AndIOp::create(b, loc, lane, c32(bits)), c32(0));
  }
  SmallVector<Value> rowQ, lse2, deltas;
  for (int64_t off : sl.rowSlotOffsets) {
    Value r = add(add(m0, warpRow), add(sl.laneRow, c32(off)));
    Value rc = arith::MinSIOp::create(b, loc, r, lastQ);
    rowQ.push_back(r);
    lse2.push_back(fmul(load(f32, gep(lseBase, f32, ext(rc)), 4), log2e));
    if (!computesDelta) {
      deltas.push_back(load(f32, gep(deltaBase, f32, ext(rc)), 4));
      continue;
    }
    // `_main`, which runs after this pass, reads it.
    deltas.push_back(emitRowDelta(h, rc, sl));
    OpBuilder::InsertionGuard g(b);
    auto ifOp = scf::IfOp::create(
        b, loc, arith::AndIOp::create(b, loc, firstOfRow, lt(r, sq)), false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    store(deltas.back(), gep(deltaBase, f32, ext(r)), 4);
  }
  publishCopies();
  SmallVector<Value> query = sMma->loadQuery(b, loc, lane, q, warpRow);
  SmallVector<Value> gradOut = pMma->loadQuery(b, loc, lane, dO, warpRow);
  Value biasBase;
  if (spec.biasType)
    biasBase = gep(arg(kBwdBias), spec.biasType,
                   add(mul(ext(batch), arg(kBwdBiasStrideB)),
                       mul(ext(h), arg(kBwdBiasStrideB + 1))));

  Value qEnd = arith::MinSIOp::create(b, loc, add(m0, c32(qRows)), sq);
  auto [lo, hi] = emitVisibleKeyRange(b, loc, score.mask, m0, qEnd, sq, sk);
  Value jLo = arith::DivUIOp::create(b, loc, lo, c32(bn));
  Value jHi = arith::DivUIOp::create(b, loc, add(hi, c32(bn - 1)), c32(bn));
  // Key blocks double-buffered where main's second Q and dO buffers are
  // free (this pass's rows fit the first) and hold a K and a V block: block
  // j + 1 is copied while block j computes.
  bool prefetch = spec.stages() >= 2 && qRows <= spec.blockM() &&
                  bn <= spec.blockM() && smem.qRowStride == smem.kRowStride &&
                  smem.doRowStride == smem.vRowStride;
  SharedTile kNext =
                 tile(smem.qOffset + smem.qStageBytes, bn, d, smem.qRowStride),
             vNext = tile(smem.doOffset + smem.doStageBytes, bn, dv,
                          smem.doRowStride);
  auto copyKeys = [&](const SharedTile &kt, const SharedTile &vt, Value j) {
    Value row0 = mul(j, c32(bn));
    copyRows(kt, spec.headDim, kBwdK, kBwdKStrideB, headKV, row0, sk);
    copyRows(vt, spec.headDimV, kBwdV, kBwdVStrideB, headKV, row0, sk);
  };
  if (prefetch) {
    OpBuilder::InsertionGuard guard(b);
    auto any = scf::IfOp::create(b, loc, lt(jLo, jHi), false);
    b.setInsertionPointToStart(any.thenBlock());
    copyKeys(k, v, jLo);
    target.emitCopyCommit(b, loc);
  }
  // With asynchronous products dP runs while P is computed.
  bool overlap = overlapsScoreGrad();
  // Deferred (as main's deferredCompletion, where no register cap
  // applies): block j - 1's dQ product is still in flight when block j
  // starts, and block j + 1's copies are issued once block j's S and dP
  // are, so that they and the wait for dQ run under those products (D =
  // 128 on the H100: +0-4%; D = 64 under its cap: level).
  bool deferred =
      prefetch && overlap && target.getBackwardRegisterCap(spec) == 0;
  SmallVector<Value> init(ol.getNumElements(), cf(0.0));
  auto loop = scf::ForOp::create(b, loc, jLo, jHi, c32(1), init);
  {
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    Value n = mul(j, c32(bn));
    SmallVector<Value> acc(loop.getRegionIterArgs());
    SharedTile kb = k, vb = v;
    // Issues block j + 1's copies into `kt` and `vt`, one group (empty
    // after the last block, so the counts below hold).
    auto loadNext = [&](const SharedTile &kt, const SharedTile &vt) {
      Value next = add(j, c32(1));
      {
        OpBuilder::InsertionGuard g(b);
        auto more = scf::IfOp::create(b, loc, lt(next, jHi), false);
        b.setInsertionPointToStart(more.thenBlock());
        copyKeys(kt, vt, next);
      }
      target.emitCopyCommit(b, loc);
    };
    SharedTile kn, vn;
    if (prefetch) {
      // Block j's buffer by its parity; block j + 1 into the other one
      // (block j - 1's).
      Value odd = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne,
          arith::AndIOp::create(b, loc, sub(j, jLo), c32(1)), c32(0));
      // `whenOdd` for odd blocks, else `whenEven`.
      auto pick = [&](const SharedTile &whenEven, const SharedTile &whenOdd) {
        SharedTile t = whenEven;
        t.base =
            arith::SelectOp::create(b, loc, odd, whenOdd.base, whenEven.base);
        return t;
      };
      kb = pick(k, kNext);
      vb = pick(v, vNext);
      kn = pick(kNext, k);
      vn = pick(vNext, v);
    }
    if (deferred) {
      // Block j's tiles, the one group in flight, have landed.
      publishCopies();
    } else if (prefetch) {
      // Every warp is done with the previous block's K and V; then at most
      // block j + 1's group is in flight.
      barrier();
      loadNext(kn, vn);
      target.emitCopyWait(b, loc, 1);
      scoresMma->emitSharedWritesVisible(b, loc);
      barrier();
    } else {
      // Every warp is done with the previous block's K and V.
      barrier();
      copyKeys(k, v, j);
      target.emitCopyCommit(b, loc);
      publishCopies();
    }
    SmallVector<Value> s, dp;
    if (overlap) {
      s = sMma->issueScores(b, loc, lane, query, kb);
      dp = pMma->issueScores(b, loc, lane, gradOut, vb);
      if (deferred) {
        // Block j - 1's dQ (it read K j - 1), then every warp's share of it
        // before block j + 1 takes that buffer.
        acc = sMma->waitOutput(b, loc, acc, /*pending=*/2);
        barrier();
        loadNext(kn, vn);
      }
      s = sMma->waitOutput(b, loc, s, /*pending=*/1);
    } else {
      s = sMma->computeScores(b, loc, lane, query, kb);
      dp = pMma->computeScores(b, loc, lane, gradOut, vb);
    }
    SmallVector<Value> z;
    if (score.dropout) {
      bool aligned = qRows % 16 == 0 && bn % 16 == 0 && rows0 % 16 == 0;
      z = emitDropoutFactors(b, loc, *score.dropout,
                             add(mul(batch, arg(kBwdHeadsQ)), h), sl,
                             add(m0, warpRow), n, aligned,
                             /*transposed=*/false);
    }
    // dS from P (in s[e]) once dP is there.
    SmallVector<Value> capDerivative(s.size());
    auto scoreGrad = [&](unsigned e) {
      Value dpe = score.dropout ? fmul(dp[e], z[e]) : dp[e];
      Value ds = fmul(s[e], fsub(dpe, deltas[sl.rowSlot[e]]));
      s[e] = spec.softcap ? fmul(ds, capDerivative[e]) : ds;
    };
    auto keyOf = [&](unsigned e) {
      return add(add(n, sl.laneCol), c32(sl.colOffsets[e]));
    };
    for (unsigned e = 0, ne = s.size(); e < ne; ++e) {
      unsigned slot = sl.rowSlot[e];
      s[e] = probability(s[e], biasBase,
                         arith::MinSIOp::create(b, loc, rowQ[slot], lastQ),
                         arith::MinSIOp::create(b, loc, keyOf(e), lastK),
                         lse2[slot], capDerivative[e]);
    }
    // Mask only blocks crossing a mask edge or a tail, tested at the
    // corners of this warp's query rows x the block's keys (masks are
    // bands; main's test, transposed); uniform per warp. Inside, every row
    // sees a key, so its lse is finite.
    Value qFirst = add(m0, warpRow), qLast = add(qFirst, c32(rows0 - 1));
    Value inside = arith::AndIOp::create(
        b, loc, lt(qLast, sq),
        arith::AndIOp::create(
            b, loc,
            emitKeyVisible(b, loc, score.mask, qFirst, add(n, c32(bn - 1)), sq,
                           sk),
            emitKeyVisible(b, loc, score.mask, qLast, n, sq, sk)));
    auto ifOp = scf::IfOp::create(b, loc, ValueRange(s).getTypes(), inside,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      scf::YieldOp::create(b, loc, s);
      b.setInsertionPointToStart(ifOp.elseBlock());
      SmallVector<Value> masked;
      for (unsigned e = 0, ne = s.size(); e < ne; ++e) {
        unsigned slot = sl.rowSlot[e];
        Value visible = arith::AndIOp::create(
            b, loc,
            arith::AndIOp::create(b, loc, lt(rowQ[slot], sq),
                                  emitKeyVisible(b, loc, score.mask, rowQ[slot],
                                                 keyOf(e), sq, sk)),
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, lse2[slot],
                                  negInf));
        masked.push_back(select(visible, s[e], cf(0.0)));
      }
      scf::YieldOp::create(b, loc, masked);
    }
    llvm::copy(ifOp.getResults(), s.begin());
    if (!overlap)
      for (unsigned e = 0, ne = s.size(); e < ne; ++e)
        scoreGrad(e);
    if (overlap) {
      dp = pMma->waitOutput(b, loc, dp, /*pending=*/0);
      for (unsigned e = 0, ne = s.size(); e < ne; ++e)
        scoreGrad(e);
    }
    acc = sMma->accumulateOutput(b, loc, lane, s, kb, acc);
    // Completed before the next block's copies overwrite K (deferred: in
    // the next block, or after the loop).
    if (!deferred)
      acc = completed(*sMma, acc);
    scf::YieldOp::create(b, loc, acc);
  }
  // dq = scale * acc, rows past Sq and columns past D not stored.
  SmallVector<Value> acc(loop.getResults());
  if (deferred)
    acc = completed(*sMma, acc);
  auto scaled = [&](unsigned e) -> Value {
    return arith::TruncFOp::create(b, loc, spec.elemType,
                                   fmul(acc[e], arg(kBwdScale)));
  };
  if (spec.headDim == d && canStoreRowsByQuads(target, ol, spec.elemType, d,
                                               spec.config.getAlignBytes())) {
    return storeRowsByQuads(
        b, loc, target, ol, spec.elemType, d,
        [&](unsigned slot) {
          return add(add(m0, warpRow),
                     add(ol.laneRow, c32(ol.rowSlotOffsets[slot])));
        },
        sq, [&](Value r) { return rowPtr(kBwdDQ, kBwdDQStrideB, batch, h, r); },
        scaled);
  }
  for (unsigned e = 0, ne = acc.size(); e < ne; ++e) {
    Value r = add(add(m0, warpRow),
                  add(ol.laneRow, c32(ol.rowSlotOffsets[ol.rowSlot[e]])));
    Value c = add(ol.laneCol, c32(ol.colOffsets[e]));
    Value ok =
        arith::AndIOp::create(b, loc, lt(r, sq), lt(c, c32(spec.headDim)));
    OpBuilder::InsertionGuard g(b);
    auto ifOp = scf::IfOp::create(b, loc, ok, false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value rowBase = rowPtr(kBwdDQ, kBwdDQStrideB, batch, h, r);
    store(scaled(e), gep(rowBase, spec.elemType, ext(c)), elemBytes);
  }
}

scf::ForOp MainStageEmitter::emitBlockLoop(Value hLo, Value group, Value iLo,
                                           Value iHi, ValueRange init,
                                           bool sumRows) {
  Value blocks = sub(iHi, iLo);
  Value total = mul(group, blocks);
  auto pair = [&](Value t) { return pairAt(hLo, iLo, blocks, t); };
  bool prefetch = spec.stages() > 1;
  if (prefetch) {
    OpBuilder::InsertionGuard guard(b);
    auto ifOp = scf::IfOp::create(b, loc, lt(c32(0), total), false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    auto [h, m0] = pair(c32(0));
    loadQueryBlock(h, m0, c32(0));
  }
  auto loop = scf::ForOp::create(b, loc, c32(0), total, c32(1), init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value t = loop.getInductionVar();
  auto [h, m0] = pair(t);
  Value stage = c32(0);
  bool deferred = deferredCompletion();
  // Issues pair t + 1's copies into pair t - 1's buffer.
  auto loadNext = [&] {
    Value next = add(t, c32(1));
    auto stageNext = [&] {
      return arith::AndIOp::create(b, loc, next, c32(1));
    };
    if (deferred) {
      // Without a branch, which between dV's product and its wait would
      // make ptxas serialize the wgmmas (C7513): past the last pair the
      // copies read nothing (row limit 0) from the last pair's head.
      auto [hn, m0n] =
          pair(arith::MinUIOp::create(b, loc, next, sub(total, c32(1))));
      loadQueryBlock(hn, m0n, stageNext(), select(lt(next, total), sq, c32(0)));
      return;
    }
    OpBuilder::InsertionGuard g(b);
    auto ifOp = scf::IfOp::create(b, loc, lt(next, total), false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    auto [hn, m0n] = pair(next);
    loadQueryBlock(hn, m0n, stageNext());
  };
  if (prefetch) {
    // Pair t's tiles have landed; after the barrier every warp is done with
    // pair t - 1 (deferred: but for its products in flight), so its buffer
    // takes pair t + 1.
    publishCopies();
    stage = arith::AndIOp::create(b, loc, t, c32(1));
    if (!deferred)
      loadNext();
  } else {
    // The previous pair is done with the tiles.
    barrier();
    loadQueryBlock(h, m0, stage);
    publishCopies();
  }
  SmallVector<Value> acc(loop.getRegionIterArgs());
  Value first, last;
  if (sumRows) {
    // Heads are outer: a head's blocks are consecutive pairs.
    Value i = arith::RemUIOp::create(b, loc, t, blocks);
    first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, i, c32(0));
    last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, i,
                                 sub(blocks, c32(1)));
  }
  // Deferred: every warp's share of pair t - 1's dK and dV products has
  // completed (the wait for S^T) before any warp overwrites the Q and dO
  // they read.
  auto afterIssue = [&] {
    barrier();
    loadNext();
  };
  emitQueryBlock(h, m0, stage, acc, first, last,
                 deferred ? function_ref<void()>(afterIssue) : nullptr);
  scf::YieldOp::create(b, loc, acc);
  return loop;
}
