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
//===----------------------------------------------------------------------===//

#include "TileAttention.h"
#include "AttnDialect/Utils/MaskUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {
constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;
/// Per-grid-point scratch above this is refused: on the host it lives on the
/// stack, on GPUs in registers/private memory.
constexpr int64_t kMaxScratchBytes = 1 << 20;

int64_t staticDim(Value v, unsigned i) {
  return cast<ShapedType>(v.getType()).getDimSize(i);
}

class AttentionTiler {
public:
  AttentionTiler(ImplicitLocOpBuilder &b, AttentionOp op)
      : b(b), op(op), config(*op.getConfig()) {
    f32 = b.getF32Type();
    elemType = cast<ShapedType>(op.getQuery().getType()).getElementType();
    hq = staticDim(op.getQuery(), 1);
    hkv = staticDim(op.getKey(), 1);
    d = staticDim(op.getQuery(), 3);
    dv = staticDim(op.getValue(), 3);
    bm = config.getBlockM();
    bn = config.getBlockN();
    softcap = op.getSoftcap();
    // Softcap and bias act on natural-log scores, so log2(e) can only be
    // folded into the scale when neither is present.
    foldLog2e = !softcap && !op.getBias();
    double scale = op.getScaleValue();
    qScale = foldLog2e ? scale * kLog2e : scale;
  }

  void build();

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value f32Const(double v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
  }
  Value splat(Value scalar, int64_t n) {
    return vector::BroadcastOp::create(b, VectorType::get({n}, f32), scalar);
  }
  Value negInf() { return f32Const(-std::numeric_limits<double>::infinity()); }

  using BodyFn = function_ref<SmallVector<Value>(Value, ValueRange)>;
  /// An scf.for whose body `body` builds with `b` and whose yielded values
  /// it returns.
  scf::ForOp loop(Value lb, Value ub, Value step, ValueRange inits,
                  BodyFn body) {
    return scf::ForOp::create(
        b, lb, ub, step, inits,
        [&](OpBuilder &nb, Location, Value iv, ValueRange args) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          SmallVector<Value> yielded = body(iv, args);
          scf::YieldOp::create(b, yielded);
        });
  }

  /// Reads `len` contiguous elements of the last dimension at `indices`,
  /// extended to f32.
  Value readRow(Value src, ValueRange indices, int64_t len);
  /// The bias element for (row, col), broadcast dimensions read at 0.
  Value biasAt(Value row, Value col);
  /// Index of dimension `dim` of the bias: 0 where the bias broadcasts.
  Value biasIndex(unsigned dim, Value i);

  void buildGridPoint(Value batch, Value head, Value mBlock);
  void buildKeyBlock(Value kb, Value nRows);

  ImplicitLocOpBuilder &b;
  AttentionOp op;
  ConfigAttr config;
  Type f32, elemType;
  int64_t hq, hkv, d, dv, bm, bn;
  std::optional<APFloat> softcap;
  bool foldLog2e;
  double qScale;

  // Values of the grid point being built.
  Value sq, sk, batch, head, kvHead, row0, biasB, biasH;
  Value qTile, accTile, scoreRow, maxRow, sumRow;
  MaskParams mask;
};
} // namespace

Value AttentionTiler::readRow(Value src, ValueRange indices, int64_t len) {
  Type et = cast<ShapedType>(src.getType()).getElementType();
  Value pad = arith::ConstantOp::create(b, b.getZeroAttr(et));
  Value row = vector::TransferReadOp::create(
      b, VectorType::get({len}, et), src, indices, pad, ArrayRef<bool>{true});
  if (et != f32)
    row = arith::ExtFOp::create(b, VectorType::get({len}, f32), row);
  return row;
}

Value AttentionTiler::biasIndex(unsigned dim, Value i) {
  Value bias = op.getBias();
  int64_t size = staticDim(bias, dim);
  if (size == 1)
    return idx(0);
  if (!ShapedType::isDynamic(size))
    return i;
  // A dynamic dimension may still be 1 at run time.
  Value dimV = memref::DimOp::create(b, bias, dim);
  Value isOne =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, dimV, idx(1));
  return arith::SelectOp::create(b, isOne, idx(0), i);
}

Value AttentionTiler::biasAt(Value row, Value col) {
  Value bias = op.getBias();
  Value v = memref::LoadOp::create(
      b, bias, ValueRange{biasB, biasH, biasIndex(2, row), biasIndex(3, col)});
  if (v.getType() != f32)
    v = arith::ExtFOp::create(b, f32, v);
  return v;
}

void AttentionTiler::build() {
  Value q = op.getQuery();
  Value batches = memref::DimOp::create(b, q, 0);
  sq = memref::DimOp::create(b, q, 2);
  sk = memref::DimOp::create(b, op.getKey(), 2);
  Value mBlocks = arith::CeilDivUIOp::create(b, sq, idx(bm));

  mask.kind = op.getMask();
  auto [left, right] = op.getWindowBounds();
  mask.windowLeft = idx(left);
  mask.windowRight = idx(right);

  MLIRContext *ctx = b.getContext();
  ArrayAttr mapping = b.getArrayAttr(
      {gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimZ),
       gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimY),
       gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimX)});
  auto forall = scf::ForallOp::create(
      b, ArrayRef<OpFoldResult>{batches, b.getIndexAttr(hq), mBlocks},
      ValueRange{}, mapping);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  // The scope frees the scratch at the end of every grid point once the
  // grid becomes a sequential loop on the host.
  auto scope = memref::AllocaScopeOp::create(b, TypeRange{});
  Block *scopeBody = b.createBlock(&scope.getBodyRegion());
  b.setInsertionPointToStart(scopeBody);
  ValueRange ivs = forall.getInductionVars();
  buildGridPoint(ivs[0], ivs[1], ivs[2]);
  memref::AllocaScopeReturnOp::create(b, ValueRange{});
}

void AttentionTiler::buildGridPoint(Value batchIv, Value headIv, Value mBlock) {
  batch = batchIv;
  head = headIv;
  kvHead = arith::DivUIOp::create(b, head, idx(hq / hkv));
  row0 = arith::MulIOp::create(b, mBlock, idx(bm));
  Value rowEnd =
      arith::MinSIOp::create(b, arith::AddIOp::create(b, row0, idx(bm)), sq);
  Value nRows = arith::SubIOp::create(b, rowEnd, row0);
  if (op.getBias()) {
    biasB = biasIndex(0, batch);
    biasH = biasIndex(1, head);
  }

  qTile = memref::AllocaOp::create(b, MemRefType::get({bm, d}, f32));
  accTile = memref::AllocaOp::create(b, MemRefType::get({bm, dv}, f32));
  scoreRow = memref::AllocaOp::create(b, MemRefType::get({bn}, f32));
  maxRow = memref::AllocaOp::create(b, MemRefType::get({bm}, f32));
  sumRow = memref::AllocaOp::create(b, MemRefType::get({bm}, f32));

  Value c0 = idx(0), c1 = idx(1);
  // Load the query rows once, scaled (and in the exp2 domain when folded).
  loop(c0, nRows, c1, {}, [&](Value r, ValueRange) {
    Value row = arith::AddIOp::create(b, row0, r);
    Value qv = readRow(op.getQuery(), {batch, head, row, idx(0)}, d);
    qv = arith::MulFOp::create(b, qv, splat(f32Const(qScale), d));
    vector::StoreOp::create(b, qv, qTile, ValueRange{r, idx(0)});
    vector::StoreOp::create(b, splat(f32Const(0.0), dv), accTile,
                            ValueRange{r, idx(0)});
    memref::StoreOp::create(b, negInf(), maxRow, r);
    memref::StoreOp::create(b, f32Const(0.0), sumRow, r);
    return SmallVector<Value>{};
  });

  auto [lo, hi] =
      emitVisibleKeyRange(b, b.getLoc(), mask, row0, rowEnd, sq, sk);
  Value firstBlock =
      arith::MulIOp::create(b, arith::DivUIOp::create(b, lo, idx(bn)), idx(bn));
  loop(firstBlock, hi, idx(bn), {}, [&](Value kb, ValueRange) {
    buildKeyBlock(kb, nRows);
    return SmallVector<Value>{};
  });

  // Normalize by 1/l; rows that saw no key get 0 and lse = -inf.
  loop(c0, nRows, c1, {}, [&](Value r, ValueRange) {
    Value row = arith::AddIOp::create(b, row0, r);
    Value l = memref::LoadOp::create(b, sumRow, r);
    Value empty =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, l, f32Const(0.0));
    Value inv = arith::SelectOp::create(
        b, empty, f32Const(0.0), arith::DivFOp::create(b, f32Const(1.0), l));
    Value acc = vector::LoadOp::create(b, VectorType::get({dv}, f32), accTile,
                                       ValueRange{r, idx(0)});
    Value o = arith::MulFOp::create(b, acc, splat(inv, dv));
    if (elemType != f32)
      o = arith::TruncFOp::create(b, VectorType::get({dv}, elemType), o);
    vector::TransferWriteOp::create(b, o, op.getOutput(),
                                    ValueRange{batch, head, row, idx(0)},
                                    ArrayRef<bool>{true});
    if (Value lse = op.getLse()) {
      Value m = memref::LoadOp::create(b, maxRow, r);
      Value log2l = math::Log2Op::create(b, l);
      Value v = arith::MulFOp::create(b, arith::AddFOp::create(b, m, log2l),
                                      f32Const(kLn2));
      v = arith::SelectOp::create(b, empty, negInf(), v);
      memref::StoreOp::create(b, v, lse, ValueRange{batch, head, row});
    }
    return SmallVector<Value>{};
  });
}

void AttentionTiler::buildKeyBlock(Value kb, Value nRows) {
  Value c0 = idx(0), c1 = idx(1);
  Value lastKey = arith::SubIOp::create(b, sk, c1);
  auto reassoc = arith::FastMathFlags::reassoc;
  loop(c0, nRows, c1, {}, [&](Value r, ValueRange) {
    Value row = arith::AddIOp::create(b, row0, r);
    Value qv = vector::LoadOp::create(b, VectorType::get({d}, f32), qTile,
                                      ValueRange{r, idx(0)});
    // Scores of this row against the block_n keys of the block.
    loop(c0, idx(bn), c1, {}, [&](Value c, ValueRange) {
      Value col = arith::AddIOp::create(b, kb, c);
      Value key = arith::MinSIOp::create(b, col, lastKey);
      Value kv = readRow(op.getKey(), {batch, kvHead, key, idx(0)}, d);
      Value s = vector::ReductionOp::create(b, vector::CombiningKind::ADD,
                                            arith::MulFOp::create(b, qv, kv),
                                            reassoc);
      if (softcap) {
        double cap = softcap->convertToDouble();
        Value t = math::TanhOp::create(
            b, arith::MulFOp::create(b, s, f32Const(1.0 / cap)));
        s = arith::MulFOp::create(b, t, f32Const(cap));
      }
      if (op.getBias())
        s = arith::AddFOp::create(b, s, biasAt(row, key));
      if (!foldLog2e)
        s = arith::MulFOp::create(b, s, f32Const(kLog2e));
      Value visible = emitKeyVisible(b, b.getLoc(), mask, row, col, sq, sk);
      s = arith::SelectOp::create(b, visible, s, negInf());
      memref::StoreOp::create(b, s, scoreRow, c);
      return SmallVector<Value>{};
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
    Value pSum =
        vector::ReductionOp::create(b, vector::CombiningKind::ADD, p, reassoc);
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
      Value vv = readRow(op.getValue(), {batch, kvHead, key, idx(0)}, dv);
      Value next = vector::FMAOp::create(b, splat(pc, dv), vv, args.front());
      return SmallVector<Value>{next};
    });
    vector::StoreOp::create(b, pv.getResult(0), accTile, ValueRange{r, idx(0)});
    return SmallVector<Value>{};
  });
}

LogicalResult attn::checkTileable(AttentionOp op) {
  if (op.hasPureTensorSemantics())
    return op.emitOpError() << "output: attn-tile expects the memref form; run "
                               "one-shot-bufferize first";
  std::optional<ConfigAttr> config = op.getConfig();
  if (!config)
    return op.emitOpError() << "config: attn-tile needs a #attn.config "
                               "attribute; run attn-select-config first";
  if (config->getBlockM() <= 0 || config->getBlockN() <= 0)
    return op.emitOpError()
           << "config: expected positive block_m and "
              "block_n, got block_m = "
           << config->getBlockM() << ", block_n = " << config->getBlockN();
  int64_t d = staticDim(op.getQuery(), 3), dv = staticDim(op.getValue(), 3);
  int64_t bm = config->getBlockM(), bn = config->getBlockN();
  int64_t bytes = 4 * (bm * (d + dv + 2) + bn);
  if (bytes > kMaxScratchBytes)
    return op.emitOpError()
           << "config: block_m = " << bm << " and block_n = " << bn
           << " with D = " << d << ", Dv = " << dv << " need " << bytes
           << " bytes of scratch per block; expected at most "
           << kMaxScratchBytes;
  return success();
}

void attn::tileAttention(RewriterBase &rewriter, AttentionOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  ImplicitLocOpBuilder b(op.getLoc(), rewriter);
  AttentionTiler(b, op).build();
  rewriter.eraseOp(op);
}
