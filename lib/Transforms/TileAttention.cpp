//===- TileAttention.cpp - FlashAttention-2 loop nest builder ---*- C++ -*-===//
//
// Builds, for one memref-form attn.attention, the loop nest of
// FlashAttention-2 (Dao, 2023):
//
//   scf.forall (b, h, mb) in (B, Hq, ceil(Sq / block_m))   // GPU blocks z,y,x
//     rows [mb*block_m, min(Sq, (mb+1)*block_m)), kv head h / (Hq / Hkv)
//     [lo, hi) = keys any row of the block can see (MaskUtils)
//     scf.for kb = floor(lo / block_n) * block_n to hi step block_n
//       for each row: scores of block_n keys, masked in-block;
//         online softmax (running max m, sum l, acc *= exp2(m_old - m_new));
//         acc += p * V
//     out = acc / l, lse = (m + log2 l) * ln 2
//
// Key blocks outside [lo, hi) are never visited, so fully masked blocks cost
// nothing. Scores live in the exp2 domain: log2(e) is folded into the scale
// (or applied after softcap and bias, which must see natural-log scores).
// Scratch is per grid point and tile-sized ([block_m, D], [block_m, Dv],
// [block_n], [block_m]); no [Sq, Sk] buffer exists. Rows and keys past Sq/Sk
// are masked or skipped, never padded in memory: the key loop of a partial
// block reads a clamped key row whose score the mask sets to -inf.
//
// The serving forms change only where a grid point's rows and keys live and
// how many there are: a packed batch (cu_seqlens) runs one grid point per
// (sequence, head, query block) at the sequence's offsets, a KV cache
// bounds each batch's keys by seqlens_k, and a paged cache reads key j of
// batch b from page block_table[b, j / page_size]. Sq and Sk are then the
// grid point's own lengths, so masks align per sequence.
//
//===----------------------------------------------------------------------===//

#include "TileAttention.h"
#include "TileBuilder.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
class AttentionTiler : public TileBuilder {
public:
  AttentionTiler(ImplicitLocOpBuilder &b, AttentionOp op, int64_t kvSplits)
      : TileBuilder(b, AttentionParams::of(op)), op(op), kvSplits(kvSplits) {}

  void build();

private:
  void buildGridPoint(Value batch, Value head, Value mBlock);
  /// Zero accumulators, -inf running maxima, zero sums for the block's rows.
  void resetRows();
  /// The key blocks [from, to) (multiples of block_n) into the running state.
  void runKeys(Value from, Value to);
  /// Per row r: the accumulator normalized by 1/l (0 for a row that saw no
  /// key) and its lse (-inf then), handed to `put(r, out, lse)`.
  void finishRows(function_ref<void(Value r, Value out, Value lse)> put);
  /// Row r's output (and lse, when the op has it) where the op puts them.
  void writeOutput(Value r, Value out, Value lse);
  /// The key loop of a KV-cache grid point split in kvSplits parts, merged.
  void buildSplitKeys(Value firstBlock, Value hi);
  void buildKeyBlock(Value kb);
  /// Binds sq, sk and the offsets of the grid point's sequence.
  void bindSequence();
  /// Indices of `row` of the grid point in query, output ([.., D]) and lse.
  SmallVector<Value> rowIndex(Value row, bool withCol = true);
  /// Indices of key `key` of the grid point in key and value.
  SmallVector<Value> keyIndex(Value key);
  /// i32 element `i` of `buf` as an index clamped to [lo, hi].
  Value loadClamped(Value buf, ValueRange i, Value lo, Value hi);

  AttentionOp op;
  SeqLayout layout;
  int64_t kvSplits;

  // Values of the grid point being built.
  Value batch, head, kvHead, row0, nRows;
  /// Where the sequence's rows start in query/output and in key/value
  /// (packed batches), and its batch index in those memrefs.
  Value qStart, kStart, memBatch, pageSize;
  Value qTile, accTile, scoreRow, maxRow, sumRow;
};
} // namespace

void AttentionTiler::build() {
  layout = op.getSeqLayout();
  // A packed batch has one sequence per offset pair; its grid covers the
  // longest sequence possible (all rows) and skips rows past each one's end.
  Value batches;
  if (layout == SeqLayout::Varlen)
    batches = arith::SubIOp::create(
        b, memref::DimOp::create(b, op.getCuSeqlensQ(), 0), idx(1));
  else
    batches = memref::DimOp::create(b, op.getQuery(), 0);
  emitSizes();
  Value mBlocks = arith::CeilDivUIOp::create(b, sq, idx(bm));
  grid({batches, b.getIndexAttr(hq), mBlocks},
       [&](ValueRange ivs) { buildGridPoint(ivs[0], ivs[1], ivs[2]); });
}

Value AttentionTiler::loadClamped(Value buf, ValueRange i, Value lo, Value hi) {
  Value v = arith::IndexCastOp::create(b, b.getIndexType(),
                                       memref::LoadOp::create(b, buf, i));
  return arith::MinSIOp::create(b, arith::MaxSIOp::create(b, v, lo), hi);
}

void AttentionTiler::bindSequence() {
  Value c0 = idx(0), c1 = idx(1);
  qStart = kStart = c0;
  memBatch = batch;
  switch (layout) {
  case SeqLayout::Dense:
    return;
  case SeqLayout::Varlen: {
    // Offsets are clamped into the packed rows, so bad offsets read and
    // write nothing outside them.
    Value next = arith::AddIOp::create(b, batch, c1);
    Value totalQ = memref::DimOp::create(b, op.getQuery(), 2);
    Value totalK = memref::DimOp::create(b, op.getKey(), 2);
    qStart = loadClamped(op.getCuSeqlensQ(), batch, c0, totalQ);
    kStart = loadClamped(op.getCuSeqlensK(), batch, c0, totalK);
    sq = arith::SubIOp::create(
        b, loadClamped(op.getCuSeqlensQ(), next, qStart, totalQ), qStart);
    sk = arith::SubIOp::create(
        b, loadClamped(op.getCuSeqlensK(), next, kStart, totalK), kStart);
    memBatch = c0;
    return;
  }
  case SeqLayout::KVCache:
    sk = loadClamped(op.getSeqlensK(), batch, c0,
                     memref::DimOp::create(b, op.getKey(), 2));
    return;
  case SeqLayout::Paged: {
    pageSize = memref::DimOp::create(b, op.getKey(), 2);
    Value capacity = arith::MulIOp::create(
        b, memref::DimOp::create(b, op.getBlockTable(), 1), pageSize);
    sk = loadClamped(op.getSeqlensK(), batch, c0, capacity);
    return;
  }
  }
}

SmallVector<Value> AttentionTiler::rowIndex(Value row, bool withCol) {
  SmallVector<Value> i = {memBatch, head,
                          arith::AddIOp::create(b, qStart, row)};
  if (withCol)
    i.push_back(idx(0));
  return i;
}

SmallVector<Value> AttentionTiler::keyIndex(Value key) {
  if (layout != SeqLayout::Paged)
    return {memBatch, kvHead, arith::AddIOp::create(b, kStart, key), idx(0)};
  Value slot = arith::DivUIOp::create(b, key, pageSize);
  Value page =
      loadClamped(op.getBlockTable(), ValueRange{batch, slot}, idx(0),
                  arith::SubIOp::create(
                      b, memref::DimOp::create(b, op.getKey(), 0), idx(1)));
  return {page, kvHead, arith::RemUIOp::create(b, key, pageSize), idx(0)};
}

void AttentionTiler::buildGridPoint(Value batchIv, Value headIv, Value mBlock) {
  batch = batchIv;
  head = headIv;
  kvHead = arith::DivUIOp::create(b, head, idx(hq / hkv));
  bindSequence();
  row0 = arith::MulIOp::create(b, mBlock, idx(bm));
  Value rowEnd =
      arith::MinSIOp::create(b, arith::AddIOp::create(b, row0, idx(bm)), sq);
  // Past a short sequence's end the block has no rows (rowEnd < row0).
  if (layout == SeqLayout::Varlen)
    rowEnd = arith::MaxSIOp::create(b, rowEnd, row0);
  nRows = arith::SubIOp::create(b, rowEnd, row0);
  setBiasBatchHead(batch, head);

  qTile = memref::AllocaOp::create(b, MemRefType::get({bm, d}, f32));
  accTile = memref::AllocaOp::create(b, MemRefType::get({bm, dv}, f32));
  scoreRow = memref::AllocaOp::create(b, MemRefType::get({bn}, f32));
  maxRow = memref::AllocaOp::create(b, MemRefType::get({bm}, f32));
  sumRow = memref::AllocaOp::create(b, MemRefType::get({bm}, f32));

  Value c0 = idx(0);
  // Load the query rows once, scaled (and in the exp2 domain when folded).
  forEach(c0, nRows, [&](Value r) {
    Value row = arith::AddIOp::create(b, row0, r);
    Value qv = readRow(op.getQuery(), rowIndex(row), d);
    qv = arith::MulFOp::create(b, qv, splat(f32Const(qScale), d));
    vector::StoreOp::create(b, qv, qTile, ValueRange{r, idx(0)});
  });

  auto [lo, hi] =
      emitVisibleKeyRange(b, b.getLoc(), mask, row0, rowEnd, sq, sk);
  // A block without rows visits no keys.
  if (layout == SeqLayout::Varlen)
    hi = arith::SelectOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, nRows, c0), lo,
        hi);
  Value firstBlock =
      arith::MulIOp::create(b, arith::DivUIOp::create(b, lo, idx(bn)), idx(bn));
  if (kvSplits > 1 &&
      (layout == SeqLayout::KVCache || layout == SeqLayout::Paged)) {
    buildSplitKeys(firstBlock, hi);
    return;
  }
  resetRows();
  runKeys(firstBlock, hi);
  finishRows([&](Value r, Value out, Value lse) { writeOutput(r, out, lse); });
}

void AttentionTiler::resetRows() {
  forEach(idx(0), nRows, [&](Value r) {
    vector::StoreOp::create(b, splat(f32Const(0.0), dv), accTile,
                            ValueRange{r, idx(0)});
    memref::StoreOp::create(b, negInf(), maxRow, r);
    memref::StoreOp::create(b, f32Const(0.0), sumRow, r);
  });
}

void AttentionTiler::runKeys(Value from, Value to) {
  loop(from, to, idx(bn), {}, [&](Value kb, ValueRange) {
    buildKeyBlock(kb);
    return SmallVector<Value>{};
  });
}

void AttentionTiler::finishRows(
    function_ref<void(Value r, Value out, Value lse)> put) {
  forEach(idx(0), nRows, [&](Value r) {
    Value l = memref::LoadOp::create(b, sumRow, r);
    Value empty =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, l, f32Const(0.0));
    Value inv = arith::SelectOp::create(
        b, empty, f32Const(0.0), arith::DivFOp::create(b, f32Const(1.0), l));
    Value acc = vector::LoadOp::create(b, VectorType::get({dv}, f32), accTile,
                                       ValueRange{r, idx(0)});
    Value m = memref::LoadOp::create(b, maxRow, r);
    Value v = arith::MulFOp::create(
        b, arith::AddFOp::create(b, m, math::Log2Op::create(b, l)),
        f32Const(kLn2));
    put(r, arith::MulFOp::create(b, acc, splat(inv, dv)),
        arith::SelectOp::create(b, empty, negInf(), v));
  });
}

void AttentionTiler::writeOutput(Value r, Value out, Value lseValue) {
  Value row = arith::AddIOp::create(b, row0, r);
  writeRow(out, op.getOutput(), rowIndex(row));
  if (Value lse = op.getLse())
    memref::StoreOp::create(b, lseValue, lse, rowIndex(row, /*withCol=*/false));
}

void AttentionTiler::buildSplitKeys(Value firstBlock, Value hi) {
  // Split s takes key blocks [s * c, (s + 1) * c), c = ceil(blocks /
  // splits), as the GPU kernels do, and leaves its normalized rows and lse;
  // they merge as O = sum_s w_s O_s / sum_s w_s, w_s = exp(lse_s - max).
  int64_t n = kvSplits;
  Value c0 = idx(0), c1 = idx(1);
  Value partAcc =
      memref::AllocaOp::create(b, MemRefType::get({n, bm, dv}, f32));
  Value partLse = memref::AllocaOp::create(b, MemRefType::get({n, bm}, f32));
  Value blocks = arith::CeilDivUIOp::create(b, sk, idx(bn));
  Value chunk = arith::MulIOp::create(
      b, arith::CeilDivUIOp::create(b, blocks, idx(n)), idx(bn));
  forEach(c0, idx(n), [&](Value s) {
    resetRows();
    Value first = arith::MulIOp::create(b, s, chunk);
    runKeys(
        arith::MaxUIOp::create(b, firstBlock, first),
        arith::MinUIOp::create(b, hi, arith::AddIOp::create(b, first, chunk)));
    finishRows([&](Value r, Value out, Value lse) {
      vector::StoreOp::create(b, out, partAcc, ValueRange{s, r, c0});
      memref::StoreOp::create(b, lse, partLse, ValueRange{s, r});
    });
  });
  forEach(c0, nRows, [&](Value r) {
    auto maxLoop = loop(c0, idx(n), c1, {negInf()}, [&](Value s, ValueRange m) {
      Value v = memref::LoadOp::create(b, partLse, ValueRange{s, r});
      return SmallVector<Value>{arith::MaximumFOp::create(b, m[0], v)};
    });
    Value m = maxLoop.getResult(0);
    Value empty =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, m, negInf());
    Value mUse = arith::SelectOp::create(b, empty, f32Const(0.0), m);
    VectorType rowType = VectorType::get({dv}, f32);
    auto sums = loop(
        c0, idx(n), c1, {f32Const(0.0), splat(f32Const(0.0), dv)},
        [&](Value s, ValueRange acc) {
          Value v = memref::LoadOp::create(b, partLse, ValueRange{s, r});
          Value w = math::ExpOp::create(b, arith::SubFOp::create(b, v, mUse));
          Value o =
              vector::LoadOp::create(b, rowType, partAcc, ValueRange{s, r, c0});
          return SmallVector<Value>{
              arith::AddFOp::create(b, acc[0], w),
              vector::FMAOp::create(b, splat(w, dv), o, acc[1])};
        });
    Value sum = sums.getResult(0);
    Value has =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, sum, f32Const(0.0));
    Value inv = arith::SelectOp::create(
        b, has, arith::DivFOp::create(b, f32Const(1.0), sum), f32Const(0.0));
    Value lse = arith::SelectOp::create(
        b, has, arith::AddFOp::create(b, m, math::LogOp::create(b, sum)),
        negInf());
    writeOutput(r, arith::MulFOp::create(b, sums.getResult(1), splat(inv, dv)),
                lse);
  });
}

void AttentionTiler::buildKeyBlock(Value kb) {
  Value c0 = idx(0), c1 = idx(1);
  Value lastKey = arith::SubIOp::create(b, sk, c1);
  forEach(c0, nRows, [&](Value r) {
    Value row = arith::AddIOp::create(b, row0, r);
    Value qv = vector::LoadOp::create(b, VectorType::get({d}, f32), qTile,
                                      ValueRange{r, idx(0)});
    // Scores of this row against the block_n keys of the block.
    forEach(c0, idx(bn), [&](Value c) {
      Value col = arith::AddIOp::create(b, kb, c);
      Value key = arith::MinSIOp::create(b, col, lastKey);
      Value kv = readRow(op.getKey(), keyIndex(key), d);
      memref::StoreOp::create(b, score(dot(qv, kv), row, col, key), scoreRow,
                              c);
    });

    // Online softmax update of this row.
    VectorType rowType = VectorType::get({bn}, f32);
    Value scores = vector::LoadOp::create(b, rowType, scoreRow, c0);
    Value mOld = memref::LoadOp::create(b, maxRow, r);
    Value mBlock =
        vector::ReductionOp::create(b, vector::CombiningKind::MAXIMUMF, scores);
    Value mNew = arith::MaximumFOp::create(b, mOld, mBlock);
    // While every key so far is masked, subtract 0 rather than -inf so the
    // exponentials are exp2(-inf) = 0 instead of NaN.
    Value allMasked =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mNew, negInf());
    Value mSub = arith::SelectOp::create(b, allMasked, f32Const(0.0), mNew);
    Value alpha = math::Exp2Op::create(b, arith::SubFOp::create(b, mOld, mSub));
    Value p = math::Exp2Op::create(
        b, arith::SubFOp::create(b, scores, splat(mSub, bn)));
    vector::StoreOp::create(b, p, scoreRow, c0);
    Value lOld = memref::LoadOp::create(b, sumRow, r);
    Value pSum = vector::ReductionOp::create(b, vector::CombiningKind::ADD, p,
                                             arith::FastMathFlags::reassoc);
    Value lNew =
        arith::AddFOp::create(b, arith::MulFOp::create(b, lOld, alpha), pSum);
    memref::StoreOp::create(b, lNew, sumRow, r);
    memref::StoreOp::create(b, mNew, maxRow, r);

    // acc = acc * alpha + p . V
    VectorType accType = VectorType::get({dv}, f32);
    Value acc =
        vector::LoadOp::create(b, accType, accTile, ValueRange{r, idx(0)});
    acc = arith::MulFOp::create(b, acc, splat(alpha, dv));
    auto pv = loop(c0, idx(bn), c1, {acc}, [&](Value c, ValueRange args) {
      Value key =
          arith::MinSIOp::create(b, arith::AddIOp::create(b, kb, c), lastKey);
      Value pc = memref::LoadOp::create(b, scoreRow, c);
      // The sum l above is of the kept and the dropped probabilities alike.
      if (dropout)
        pc = arith::MulFOp::create(
            b, pc,
            dropoutFactor(batch, head, row, arith::AddIOp::create(b, kb, c)));
      Value vv = readRow(op.getValue(), keyIndex(key), dv);
      Value next = vector::FMAOp::create(b, splat(pc, dv), vv, args.front());
      return SmallVector<Value>{next};
    });
    vector::StoreOp::create(b, pv.getResult(0), accTile, ValueRange{r, idx(0)});
  });
}

LogicalResult attn::checkTileable(AttentionOp op) {
  int64_t d = staticDim(op.getQuery(), 3), dv = staticDim(op.getValue(), 3);
  // Q, the output accumulator, the score row, the running max and sum.
  return checkTileConfig(op, op.hasPureTensorSemantics(), "output",
                         op.getConfig(), d, dv, [&](ConfigAttr c) {
                           return 4 * (c.getBlockM() * (d + dv + 2) +
                                       c.getBlockN());
                         });
}

void attn::tileAttention(RewriterBase &rewriter, AttentionOp op,
                         int64_t kvSplits) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  ImplicitLocOpBuilder b(op.getLoc(), rewriter);
  AttentionTiler(b, op, kvSplits).build();
  rewriter.eraseOp(op);
}
