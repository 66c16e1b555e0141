//===- TileAttentionGrad.cpp - FlashAttention-2 backward loop nest -*- C++
//-*-===//
//
// Builds, for one memref-form attn.attention_grad, the three stages of
// FlashAttention-2's backward pass (Dao, 2023, Algorithm 2), each a grid a
// GPU runs as one kernel:
//
//   Stage 1  scf.forall (b, h, mb) in (B, Hq, ceil(Sq / block_m))
//              delta[b, h, i] = rowsum(dO * O)            (f32 scratch)
//              dQacc[b, h, i, :] = 0                      (f32 scratch)
//            scf.forall over dbias rows: dBacc = 0        (with grad_bias)
//   Stage 2  scf.forall (b, kvh, nb) in (B, Hkv, ceil(Sk / block_n))
//              keys [nb*block_n, min(Sk, (nb+1)*block_n)); K, V tiles (f32)
//              dK, dV tiles = 0
//              [lo, hi) = query rows that see any key of the block (MaskUtils)
//              for each query head h of the group of kvh:
//                scf.for mb = floor(lo / block_m) * block_m to hi step block_m
//                  for each row i of the block, for each key j of the block:
//                    s    = score as the forward (scale, softcap, bias, mask)
//                    p    = exp2(s - lse[i] * log2 e)   (0 when lse = -inf)
//                    dp   = dO[i] . V[j];  ds = p * (dp - delta[i])
//                    (with dropout, dp *= z and dV takes p * z, z the
//                    kept element's 1 / (1 - p_drop), 0 if dropped)
//                    dBacc[bias index of (b, h, i, j)] += ds
//                    ds  *= scale * (1 - tanh^2)     (softcap derivative)
//                    dV[j] += p * dO[i];  dK[j] += ds * Q[i];  dq += ds * K[j]
//                  dQacc[b, h, i, :] += dq         (a GPU adds atomically)
//              dk, dv rows of the block = dK, dV tiles (written once)
//   Stage 3  scf.forall (b, h, mb): dq = dQacc rounded to dq's type
//            scf.forall over dbias rows: dbias = dBacc rounded
//
// The scratch: delta [B, Hq, Sq] f32; dQacc [B, Hq, Sq, D] f32 unless dq is
// f32 (then dq itself accumulates and Stage 3 skips it); dBacc, the shape of
// grad_bias in f32, unless grad_bias is f32 (then it accumulates in place).
// Per grid point of Stage 2, tile-sized: K, V, dK, dV tiles ([block_n, D],
// [block_n, Dv], twice). No [Sq, Sk] buffer exists. Rows with no visible
// key have lse = -inf; their p is 0, so they contribute nothing.
//
//===----------------------------------------------------------------------===//

#include "TileAttention.h"
#include "TileBuilder.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {
class AttentionGradTiler : public TileBuilder {
public:
  AttentionGradTiler(ImplicitLocOpBuilder &b, AttentionGradOp op)
      : TileBuilder(b, AttentionParams::of(op)), op(op) {}

  void build();

private:
  /// Stage 1 at one grid point: delta and zeroed dQacc for its rows.
  void buildPrologue(Value batch, Value head, Value mBlock);
  /// Stage 2 at one grid point: everything one key block receives.
  void buildKeyBlock(Value batch, Value kvHead, Value nBlock);
  /// Stage 2 for one query row against the key block.
  void buildQueryRow(Value head, Value row);
  /// Stage 3 at one grid point: dq rounded from dQacc.
  void buildEpilogue(Value batch, Value head, Value mBlock);
  /// A grid over the rows of the bias-shaped `buf`, calling `body` with the
  /// four indices of every element.
  void forEachBiasElement(Value buf, function_ref<void(ValueRange)> body);
  /// Rows [row0, min(row0 + block_m, Sq)) of query block `mBlock`.
  std::pair<Value, Value> queryRows(Value mBlock);

  AttentionGradOp op;
  Value delta, dqAcc, dbAcc;

  // Values of the Stage 2 grid point being built.
  Value batch, kvHead, col0, nCols;
  Value kTile, vTile, dkTile, dvTile;
};
} // namespace

std::pair<Value, Value> AttentionGradTiler::queryRows(Value mBlock) {
  Value row0 = arith::MulIOp::create(b, mBlock, idx(bm));
  Value rowEnd =
      arith::MinSIOp::create(b, arith::AddIOp::create(b, row0, idx(bm)), sq);
  return {row0, rowEnd};
}

void AttentionGradTiler::build() {
  Value batches = memref::DimOp::create(b, op.getQuery(), 0);
  emitSizes();
  Value mBlocks = arith::CeilDivUIOp::create(b, sq, idx(bm));
  Value nBlocks = arith::CeilDivUIOp::create(b, sk, idx(bn));

  // Accumulators already in f32 accumulate in place.
  delta = allocF32Like(op.getLse());
  Value dq = op.getGradQuery(), dbias = op.getGradBias();
  dqAcc = elemType == f32 ? dq : allocF32Like(dq);
  if (dbias)
    dbAcc = getElementTypeOrSelf(dbias.getType()) == f32 ? dbias
                                                         : allocF32Like(dbias);

  // Stage 1.
  grid({batches, b.getIndexAttr(hq), mBlocks},
       [&](ValueRange ivs) { buildPrologue(ivs[0], ivs[1], ivs[2]); });
  if (dbAcc)
    forEachBiasElement(dbAcc, [&](ValueRange ivs) {
      memref::StoreOp::create(b, f32Const(0.0), dbAcc, ivs);
    });

  // Stage 2.
  grid({batches, b.getIndexAttr(hkv), nBlocks},
       [&](ValueRange ivs) { buildKeyBlock(ivs[0], ivs[1], ivs[2]); });

  // Stage 3.
  if (dqAcc != dq)
    grid({batches, b.getIndexAttr(hq), mBlocks},
         [&](ValueRange ivs) { buildEpilogue(ivs[0], ivs[1], ivs[2]); });
  if (dbAcc && dbAcc != dbias)
    forEachBiasElement(dbAcc, [&](ValueRange ivs) {
      Value v = memref::LoadOp::create(b, dbAcc, ivs);
      v = arith::TruncFOp::create(b, getElementTypeOrSelf(dbias.getType()), v);
      memref::StoreOp::create(b, v, dbias, ivs);
    });

  // Only the scratch this builder allocated: an f32 dq or dbias that
  // accumulated in place may well come from an allocation too, the caller's.
  for (Value buf : {delta, dqAcc, dbAcc})
    if (buf && buf != dq && buf != dbias)
      memref::DeallocOp::create(b, buf);
}

void AttentionGradTiler::forEachBiasElement(
    Value buf, function_ref<void(ValueRange)> body) {
  SmallVector<OpFoldResult> sizes;
  for (unsigned i = 0; i < 3; ++i)
    sizes.push_back(memref::getMixedSize(b, b.getLoc(), buf, i));
  Value cols = memref::DimOp::create(b, buf, 3);
  grid(sizes, [&](ValueRange ivs) {
    forEach(idx(0), cols, [&](Value j) { body({ivs[0], ivs[1], ivs[2], j}); });
  });
}

void AttentionGradTiler::buildPrologue(Value batch, Value head, Value mBlock) {
  auto [row0, rowEnd] = queryRows(mBlock);
  forEach(row0, rowEnd, [&](Value row) {
    SmallVector<Value> at = {batch, head, row, idx(0)};
    Value o = readRow(op.getOutput(), at, dv);
    Value dO = readRow(op.getGradOutput(), at, dv);
    memref::StoreOp::create(b, dot(dO, o), delta, ValueRange{batch, head, row});
    writeRow(splat(f32Const(0.0), d), dqAcc, at);
  });
}

void AttentionGradTiler::buildEpilogue(Value batch, Value head, Value mBlock) {
  auto [row0, rowEnd] = queryRows(mBlock);
  forEach(row0, rowEnd, [&](Value row) {
    SmallVector<Value> at = {batch, head, row, idx(0)};
    writeRow(readRow(dqAcc, at, d), op.getGradQuery(), at);
  });
}

void AttentionGradTiler::buildKeyBlock(Value batchIv, Value kvHeadIv,
                                       Value nBlock) {
  batch = batchIv;
  kvHead = kvHeadIv;
  col0 = arith::MulIOp::create(b, nBlock, idx(bn));
  Value colEnd =
      arith::MinSIOp::create(b, arith::AddIOp::create(b, col0, idx(bn)), sk);
  nCols = arith::SubIOp::create(b, colEnd, col0);

  kTile = memref::AllocaOp::create(b, MemRefType::get({bn, d}, f32));
  vTile = memref::AllocaOp::create(b, MemRefType::get({bn, dv}, f32));
  dkTile = memref::AllocaOp::create(b, MemRefType::get({bn, d}, f32));
  dvTile = memref::AllocaOp::create(b, MemRefType::get({bn, dv}, f32));

  // K and V are read (and converted) once per key block; every query head
  // of the group and every query block reuses them.
  Value c0 = idx(0);
  forEach(c0, nCols, [&](Value c) {
    Value key = arith::AddIOp::create(b, col0, c);
    SmallVector<Value> at = {batch, kvHead, key, idx(0)};
    vector::StoreOp::create(b, readRow(op.getKey(), at, d), kTile,
                            ValueRange{c, idx(0)});
    vector::StoreOp::create(b, readRow(op.getValue(), at, dv), vTile,
                            ValueRange{c, idx(0)});
    vector::StoreOp::create(b, splat(f32Const(0.0), d), dkTile,
                            ValueRange{c, idx(0)});
    vector::StoreOp::create(b, splat(f32Const(0.0), dv), dvTile,
                            ValueRange{c, idx(0)});
  });

  // Query blocks no row of which sees a key of this block are skipped.
  Value lo, hi;
  std::tie(lo, hi) =
      emitVisibleRowRange(b, b.getLoc(), mask, col0, colEnd, sq, sk);
  Value firstBlock =
      arith::MulIOp::create(b, arith::DivUIOp::create(b, lo, idx(bm)), idx(bm));
  int64_t group = hq / hkv;
  forEach(c0, idx(group), [&](Value g) {
    Value head = arith::AddIOp::create(
        b, arith::MulIOp::create(b, kvHead, idx(group)), g);
    setBiasBatchHead(batch, head);
    loop(firstBlock, hi, idx(bm), {}, [&](Value row0, ValueRange) {
      Value rowEnd = arith::MinSIOp::create(
          b, arith::AddIOp::create(b, row0, idx(bm)), sq);
      forEach(row0, rowEnd, [&](Value row) { buildQueryRow(head, row); });
      return SmallVector<Value>{};
    });
  });

  // Every key row of the block is written exactly once, zeros included.
  forEach(c0, nCols, [&](Value c) {
    Value key = arith::AddIOp::create(b, col0, c);
    SmallVector<Value> at = {batch, kvHead, key, idx(0)};
    writeRow(vector::LoadOp::create(b, VectorType::get({d}, f32), dkTile,
                                    ValueRange{c, idx(0)}),
             op.getGradKey(), at);
    writeRow(vector::LoadOp::create(b, VectorType::get({dv}, f32), dvTile,
                                    ValueRange{c, idx(0)}),
             op.getGradValue(), at);
  });
}

void AttentionGradTiler::buildQueryRow(Value head, Value row) {
  SmallVector<Value> at = {batch, head, row, idx(0)};
  VectorType dType = VectorType::get({d}, f32);
  VectorType dvType = VectorType::get({dv}, f32);
  Value qv = readRow(op.getQuery(), at, d);
  // The forward's scaled query, so that the recomputed scores are the ones
  // lse was computed from.
  Value qs = arith::MulFOp::create(b, qv, splat(f32Const(qScale), d));
  Value dO = readRow(op.getGradOutput(), at, dv);
  SmallVector<Value> rowAt = {batch, head, row};
  Value deltaI = memref::LoadOp::create(b, delta, rowAt);
  // lse in the exp2 domain of the scores. A row that saw no key has
  // lse = -inf and only masked (-inf) scores: subtracting 0 keeps its p at
  // exp2(-inf) = 0 where -inf - -inf would be NaN.
  Value lse = memref::LoadOp::create(b, op.getLse(), rowAt);
  Value empty =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, lse, negInf());
  Value lse2 = arith::SelectOp::create(
      b, empty, f32Const(0.0), arith::MulFOp::create(b, lse, f32Const(kLog2e)));
  double scale = params.scale;
  SmallVector<Value> dbAt;
  if (dbAcc)
    dbAt = {biasIndex(dbAcc, 0, batch), biasIndex(dbAcc, 1, head),
            biasIndex(dbAcc, 2, row)};

  auto dqLoop = loop(
      idx(0), nCols, idx(1), {splat(f32Const(0.0), d)},
      [&](Value c, ValueRange args) {
        Value col = arith::AddIOp::create(b, col0, c);
        SmallVector<Value> tileAt = {c, idx(0)};
        Value kv = vector::LoadOp::create(b, dType, kTile, tileAt);
        Value vv = vector::LoadOp::create(b, dvType, vTile, tileAt);
        Value tanh;
        Value s = score(dot(qs, kv), row, col, col, &tanh);
        Value p = math::Exp2Op::create(b, arith::SubFOp::create(b, s, lse2));
        Value dp = dot(dO, vv);
        // With dropout, O used p * z: dV takes p * z and dP is z * (dO . v).
        Value pv = p;
        if (dropout) {
          Value z = dropoutFactor(batch, head, row, col);
          pv = arith::MulFOp::create(b, p, z);
          dp = arith::MulFOp::create(b, dp, z);
        }
        Value ds =
            arith::MulFOp::create(b, p, arith::SubFOp::create(b, dp, deltaI));
        if (dbAcc) {
          // The bias was added after the cap: its gradient is ds itself, summed
          // over the dimensions it broadcasts along.
          SmallVector<Value> bAt(dbAt);
          bAt.push_back(biasIndex(dbAcc, 3, col));
          Value old = memref::LoadOp::create(b, dbAcc, bAt);
          memref::StoreOp::create(b, arith::AddFOp::create(b, old, ds), dbAcc,
                                  bAt);
        }
        Value dsr = arith::MulFOp::create(b, ds, f32Const(scale));
        if (tanh) {
          Value deriv = arith::SubFOp::create(
              b, f32Const(1.0), arith::MulFOp::create(b, tanh, tanh));
          dsr = arith::MulFOp::create(b, dsr, deriv);
        }
        Value dvOld = vector::LoadOp::create(b, dvType, dvTile, tileAt);
        vector::StoreOp::create(
            b, vector::FMAOp::create(b, splat(pv, dv), dO, dvOld), dvTile,
            tileAt);
        Value dkOld = vector::LoadOp::create(b, dType, dkTile, tileAt);
        vector::StoreOp::create(
            b, vector::FMAOp::create(b, splat(dsr, d), qv, dkOld), dkTile,
            tileAt);
        return SmallVector<Value>{
            vector::FMAOp::create(b, splat(dsr, d), kv, args.front())};
      });
  Value acc = readRow(dqAcc, at, d);
  writeRow(arith::AddFOp::create(b, acc, dqLoop.getResult(0)), dqAcc, at);
}

LogicalResult attn::checkTileable(AttentionGradOp op) {
  int64_t d = staticDim(op.getQuery(), 3), dv = staticDim(op.getValue(), 3);
  // K, V and the dK, dV accumulators of one key block.
  return checkTileConfig(
      op, op.hasPureTensorSemantics(), "grad_query", op.getConfig(), d, dv,
      [&](ConfigAttr c) { return 4 * c.getBlockN() * 2 * (d + dv); });
}

void attn::tileAttentionGrad(RewriterBase &rewriter, AttentionGradOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  ImplicitLocOpBuilder b(op.getLoc(), rewriter);
  AttentionGradTiler(b, op).build();
  rewriter.eraseOp(op);
}
