//===- AttentionKernel.cpp - target-independent attention kernel -*- C++
//-*-===//
//
// Emits the body of the FlashAttention-2 forward kernel. All per-tile work is
// unrolled here in C++, so register arrays (scores, probabilities, output
// accumulators) are SSA values indexed by constants only. The warp-
// specialized pipelines' roles and ring are in WarpSpecializedKernel.cpp.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Conversion/AttnToGPU/AttentionKernel.h"
#include "AttnDialect/Conversion/AttnToGPU/SharedMemory.h"
#include "AttnDialect/Target/Constraints.h"
#include "AttnDialect/Utils/MaskUtils.h"
#include "DropoutFragment.h"
#include "ForwardKernelEmitter.h"
#include "QuadStores.h"
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

Value ForwardKernelEmitter::sharedAt(int64_t byteOffset, Value stage,
                                     int64_t stageBytes) {
  Value off = c32(byteOffset);
  if (stage)
    off = add(off, mul(stage, c32(stageBytes)));
  return gep(smemBase, b.getI8Type(), off);
}

void ForwardKernelEmitter::waitCopies(int pending) {
  target.emitCopyWait(b, loc, pending);
  mma->emitSharedWritesVisible(b, loc);
  gpu::BarrierOp::create(b, loc);
}

void ForwardKernelEmitter::copyTile(const SharedTile &tile, bool valueRows,
                                    Value src, Value rowStart, Value rowLimit,
                                    Value rowStride,
                                    function_ref<Value(Value)> rowOffset) {
  // A producer warpgroup copies with few registers (fixed columns).
  emitTileCopy(b, loc, target, tile, valueRows ? spec.headDimV : spec.headDim,
               tid, copyThreads, src, rowStart, rowLimit, rowStride,
               spec.config.getAlignBytes(), rowOffset,
               valueRows ? headDimVArg : headDimArg,
               /*fixedColumns=*/copyThreads != threads);
}

Value ForwardKernelEmitter::getDynamicHeadDim(int64_t d, unsigned argIndex,
                                              int64_t tileCols) {
  if (!ShapedType::isDynamic(d))
    return Value();
  // The runtime checks D <= max_head_dim; the clamp keeps a bad value from
  // reaching past the tile.
  return arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, arg(argIndex), c32(0)),
      c32(tileCols));
}

Value ForwardKernelEmitter::loadClamped(unsigned array, Value i, Value lo,
                                        Value hi) {
  Value v = LLVM::LoadOp::create(b, loc, b.getI32Type(),
                                 gep(arg(array), b.getI32Type(), ext(i)), 4);
  return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, v, lo),
                                hi);
}

void ForwardKernelEmitter::bindSequence() {
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
    if (spec.layout == SeqLayout::Paged)
      bindPageDivision();
    return;
  }
}

void ForwardKernelEmitter::bindPageDivision() {
  // Granlund and Montgomery: with l = ceil(log2 d) and m = ceil(2^(32 + l)
  // / d), at most 2^33, floor(n / d) = (n m) >> (32 + l) for every n below
  // 2^32, and n m stays below 2^64 for the rows (below 2^31). One 64-bit
  // division here instead of a 32-bit one per copied row (the run-time
  // page size is no constant LLVM could fold; bench/RESULTS.md).
  Type i64 = b.getI64Type();
  pageSize = arith::MaxSIOp::create(b, loc, arg(kArgPageSize), c32(1));
  Value ceilLog2 = arith::SubIOp::create(
      b, loc, c32(32),
      math::CountLeadingZerosOp::create(b, loc, sub(pageSize, c32(1))));
  pageShift = arith::ExtUIOp::create(b, loc, i64, add(ceilLog2, c32(32)));
  Value d = arith::ExtUIOp::create(b, loc, i64, pageSize);
  Value pow = arith::ShLIOp::create(
      b, loc, arith::ConstantIntOp::create(b, loc, i64, 1), pageShift);
  pageMagic = arith::DivUIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc, pow,
          arith::SubIOp::create(b, loc, d,
                                arith::ConstantIntOp::create(b, loc, i64, 1))),
      d);
}

Value ForwardKernelEmitter::pagedRowOffset(Value row, Value pageStride,
                                           Value rowStride) {
  // Rows past Sk are not copied, but the table is read for them too: clamp.
  Value last = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, sk, c32(1)), c32(0));
  Value r = arith::MinSIOp::create(b, loc, row, last);
  Type i64 = b.getI64Type();
  Value slot = arith::TruncIOp::create(
      b, loc, b.getI32Type(),
      arith::ShRUIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i64, r),
                                pageMagic),
          pageShift));
  Value at = add(mul(ext(batch), arg(kArgBlockTableStride)), ext(slot));
  Value page = LLVM::LoadOp::create(
      b, loc, b.getI32Type(), gep(arg(kArgBlockTable), b.getI32Type(), at), 4);
  page = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, page, c32(0)),
      arith::SubIOp::create(b, loc, arg(kArgNumPages), c32(1)));
  Value inPage = sub(r, mul(slot, pageSize));
  return add(mul(ext(page), pageStride), mul(ext(inPage), rowStride));
}

/// Scores become t * tScale + bias * log2(e) (the exp2 domain, after the
/// softcap as the op defines). Rows and keys past the ends read the last
/// bias element instead (their scores are masked or never stored), so every
/// load is in bounds; broadcast dimensions have stride 0.
void ForwardKernelEmitter::addBias(MutableArrayRef<Value> s, Value tScale,
                                   Value n0) {
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

void ForwardKernelEmitter::loadQueryTile() {
  if (spec.packGQA())
    copyTile(qTile, false, qPtr, m0, rows, Value(), [&](Value r) {
      return rowOffset(r, arg(kArgQStrideB + 1), arg(kArgQStrideB + 2));
    });
  else
    copyTile(qTile, false, qPtr, m0, sq, arg(kArgQStrideB + 2));
  target.emitCopyCommit(b, loc);
}

void ForwardKernelEmitter::loadKV(Value block, Value stage) {
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
SmallVector<Value>
ForwardKernelEmitter::emitBlock(Value block, Value stage, ValueRange state,
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

SmallVector<Value> ForwardKernelEmitter::rescale(ValueRange acc,
                                                 ArrayRef<Value> alpha) {
  SmallVector<Value> out;
  for (unsigned e = 0, ne = oLayout.getNumElements(); e < ne; ++e)
    out.push_back(fmul(acc[e], alpha[oLayout.rowSlot[e]]));
  return out;
}

ForwardKernelEmitter::SoftmaxStep
ForwardKernelEmitter::emitSoftmax(Value block, SmallVector<Value> s,
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

void ForwardKernelEmitter::emitEpilogue(ValueRange state) {
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

void ForwardKernelEmitter::storeOutputs(
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

Value ForwardKernelEmitter::rowOffset(Value r, Value headStride,
                                      Value rowStride) {
  if (!spec.packGQA())
    return mul(ext(r), rowStride);
  Value g = arith::RemUIOp::create(b, loc, r, group);
  return add(mul(ext(g), headStride), mul(ext(queryOf(r)), rowStride));
}

void ForwardKernelEmitter::storeRows(Value base,
                                     function_ref<Value(Value)> rowOffsetOf,
                                     Type type, int64_t maxAlign,
                                     function_ref<Value(unsigned)> vals) {
  int64_t dvStatic = spec.headDimV;
  if (!ShapedType::isDynamic(dvStatic) && dvStatic == spec.tileHeadDimV &&
      canStoreRowsByQuads(target, oLayout, type, dvStatic, maxAlign)) {
    // Four-byte pairs cost the tile loops about a key block a tile.
    return storeRowsByQuads(
        b, loc, target, oLayout, type, dvStatic,
        [&](unsigned slot) { return rowOfSlot[slot]; }, rows,
        [&](Value r) { return gep(base, type, rowOffsetOf(r)); }, vals);
  }
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

void ForwardKernelEmitter::clampToSplit(Value &jLo, Value &jHi) {
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

void ForwardKernelEmitter::emit() {
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

void ForwardKernelEmitter::bindPointers() {
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

void ForwardKernelEmitter::bindTileInvariants() {
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

void ForwardKernelEmitter::bindRows() {
  rowOfSlot.clear();
  queryOfSlot.clear();
  for (int64_t off : sLayout.rowSlotOffsets)
    rowOfSlot.push_back(add(add(m0, warpRow), add(sLayout.laneRow, c32(off))));
  for (Value r : rowOfSlot)
    queryOfSlot.push_back(queryOf(r));
}

std::pair<Value, Value> ForwardKernelEmitter::getKeyBlocks() {
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

void ForwardKernelEmitter::emitBody() {
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

SmallVector<Value> ForwardKernelEmitter::getInitialState() {
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

void ForwardKernelEmitter::loadNextKV(Value j, Value jLo, Value jHi) {
  // Buffers alternate from the first visible block on (jLo may be odd).
  Value next = add(j, c32(1));
  Value more =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, next, jHi);
  OpBuilder::InsertionGuard guard(b);
  auto ifOp = scf::IfOp::create(b, loc, more, /*withElse=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  loadKV(next, stageOf(next, jLo));
}

scf::ForOp ForwardKernelEmitter::emitBlockLoop(
    Value jLo, Value jHi, ValueRange init,
    function_ref<SmallVector<Value>(Value j, ValueRange state)> body) {
  auto loop = scf::ForOp::create(b, loc, jLo, jHi, c32(1), init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  scf::YieldOp::create(b, loc,
                       body(loop.getInductionVar(), loop.getRegionIterArgs()));
  return loop;
}

scf::ForOp ForwardKernelEmitter::emitKeyLoop(Value jLo, Value jHi,
                                             ValueRange init) {
  bool doubleBuffer = spec.stages() > 1;
  return emitBlockLoop(jLo, jHi, init, [&](Value j, ValueRange state) {
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
    return emitBlock(j, stage, state);
  });
}

scf::ForOp ForwardKernelEmitter::emitAsyncKeyLoop(Value jLo, Value jHi,
                                                  ValueRange init) {
  return emitBlockLoop(jLo, jHi, init, [&](Value j, ValueRange state) {
    // Block j's tiles, issued one iteration earlier (or above), are visible.
    waitCopies(0);
    auto issueNext = [&] {
      // S = Q K^T completed the previous block's P V in this warp; after
      // the barrier, in every warp, so its buffers (block j + 1's) are free.
      gpu::BarrierOp::create(b, loc);
      loadNextKV(j, jLo, jHi);
    };
    return emitBlock(j, stageOf(j, jLo), state, issueNext);
  });
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
    ForwardKernelEmitter(b, loc, entry, spec, target).emit();
  });
  return func;
}
