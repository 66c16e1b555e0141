//===- MmaM16N8K16.cpp - mma.sync m16n8k16 for the attention kernel -*- C++
//-*-===//
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16"), with
// g = lane / 4 and t = lane % 4:
//  * C/D (f32): c0,c1 at row g, cols 2t, 2t+1; c2,c3 at row g + 8.
//  * A (16x16): a0 (row g, k 2t..2t+1), a1 (row g+8), a2 (row g, k 2t+8..),
//    a3 (row g+8, k 2t+8..), each a 32-bit pair.
//  * B (16x8): b0 (k 2t..2t+1, col g), b1 (k 2t+8.., col g).
// ldmatrix.x4 gives lane l the pair at (row l/4, cols 2(l%4)..) of each of
// four 8x8 matrices, whose rows are addressed by lanes 8i..8i+7. Hence:
//  * Q (row-major [m, d]) -> A by ldmatrix.x4;
//  * K (row-major [n, d]) is B "column-major" -> B by plain ldmatrix;
//  * V (row-major [n, dv]) -> B by ldmatrix.x4.trans;
//  * the S accumulators of two adjacent n8 tiles, rounded to 16 bits, are
//    exactly the A fragment of P for one k16 step of P V (no shuffles).
//
//===----------------------------------------------------------------------===//

#include "NVVMTargetInfo.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
class MmaM16N8K16 : public MmaEmitter {
public:
  explicit MmaM16N8K16(const KernelSpec &spec)
      : spec(spec), mTiles(spec.blockM() / (16 * spec.warps())) {}

  int64_t getRowsPerWarp() const override { return 16 * mTiles; }
  AccLayout getScoreLayout(OpBuilder &b, Location loc, Value lane) override {
    return getM16N8AccLayout(b, loc, lane, mTiles, spec.blockN());
  }
  AccLayout getOutputLayout(OpBuilder &b, Location loc, Value lane) override {
    return getM16N8AccLayout(b, loc, lane, mTiles, spec.tileHeadDimV);
  }
  SmallVector<Value> loadQuery(OpBuilder &b, Location loc, Value lane,
                               const SharedTile &q, Value warpRow) override;
  SmallVector<Value> computeScores(OpBuilder &b, Location loc, Value lane,
                                   ArrayRef<Value> query,
                                   const SharedTile &k) override;
  SmallVector<Value> accumulateOutput(OpBuilder &b, Location loc, Value lane,
                                      ArrayRef<Value> p, const SharedTile &v,
                                      ArrayRef<Value> acc) override;

private:
  /// ldmatrix.x4 (optionally .trans) at element offset `off` of `tile`:
  /// four 32-bit registers.
  SmallVector<Value> ldmatrix4(OpBuilder &b, Location loc,
                               const SharedTile &tile, Value off, bool trans);
  /// One mma.sync: d = a * b + c on 4/2/4 registers.
  SmallVector<Value> mma(OpBuilder &b, Location loc, ArrayRef<Value> a,
                         ArrayRef<Value> bOps, ArrayRef<Value> c);
  /// acc tiles (mt, n0) and (mt, n0 + 1) += a[mt] * the two n8 B operands of
  /// one ldmatrix.x4 `r`, for every m tile; acc holds `tilesPerRow` n8 tiles
  /// of 4 values per m tile.
  void mmaTilePair(OpBuilder &b, Location loc, ArrayRef<SmallVector<Value>> a,
                   ArrayRef<Value> r, int64_t tilesPerRow, int64_t n0,
                   SmallVectorImpl<Value> &acc);
  Value pack(OpBuilder &b, Location loc, Value lo, Value hi) {
    return packPair(b, loc, spec.elemType, lo, hi);
  }
  /// A fragment of query rows [16 mt, 16 mt + 16) of this warp, k step ks.
  SmallVector<Value> queryFragment(OpBuilder &b, Location loc,
                                   ArrayRef<Value> query, int64_t mt,
                                   int64_t ks);

  /// A copy: the backward makes its products' specs as temporaries
  /// (getProductSpec).
  const KernelSpec spec;
  /// m16 tiles per warp: with two, every K/V fragment read from shared
  /// memory feeds two MMAs, halving shared-memory traffic per MMA; Q is
  /// then re-read from shared memory each block instead of pinning 2x the
  /// registers.
  int64_t mTiles;
  SharedTile qTile;
  Value qLaneOff;
};
} // namespace

static Value cst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
}

SmallVector<Value> MmaM16N8K16::ldmatrix4(OpBuilder &b, Location loc,
                                          const SharedTile &tile, Value off,
                                          bool trans) {
  MLIRContext *ctx = b.getContext();
  Value ptr = LLVM::GEPOp::create(b, loc, tile.base.getType(), tile.elemType,
                                  tile.base, ValueRange{off});
  Type i32 = b.getI32Type();
  auto resType = LLVM::LLVMStructType::getLiteral(ctx, {i32, i32, i32, i32});
  Value res = NVVM::LdMatrixOp::create(
      b, loc, resType, ptr, b.getI32IntegerAttr(4),
      NVVM::MMALayoutAttr::get(ctx, trans ? NVVM::MMALayout::col
                                          : NVVM::MMALayout::row),
      NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
      NVVM::LdStMatrixEltTypeAttr::get(ctx, NVVM::LdStMatrixEltType::B16));
  SmallVector<Value> regs;
  for (int64_t i = 0; i < 4; ++i)
    regs.push_back(LLVM::ExtractValueOp::create(b, loc, res, i));
  return regs;
}

SmallVector<Value> MmaM16N8K16::mma(OpBuilder &b, Location loc,
                                    ArrayRef<Value> a, ArrayRef<Value> bOps,
                                    ArrayRef<Value> c) {
  MLIRContext *ctx = b.getContext();
  bool f16 = spec.elemType.isF16();
  // f16 operands are <2 x half>; bf16 operands stay 32-bit registers.
  auto operand = [&](Value reg) -> Value {
    if (!f16)
      return reg;
    return LLVM::BitcastOp::create(b, loc, VectorType::get({2}, b.getF16Type()),
                                   reg);
  };
  SmallVector<Value> av, bv;
  for (Value v : a)
    av.push_back(operand(v));
  for (Value v : bOps)
    bv.push_back(operand(v));
  Type f32 = b.getF32Type();
  auto resType = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
  NVVM::MMATypes type = f16 ? NVVM::MMATypes::f16 : NVVM::MMATypes::bf16;
  Value d = NVVM::MmaOp::create(
      b, loc, resType, av, bv, c, {16, 8, 16}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
  return out;
}

/// The lane terms every ldmatrix.x4 address is made of: lanes 8i..8i+7
/// address the rows of matrix i.
struct LaneTerms {
  Value lo8;  // lane % 8: the row within an 8x8 matrix
  Value hi8;  // (lane / 8) % 2 * 8: matrices 1 and 3
  Value hi16; // lane / 16 * 8: matrices 2 and 3
};

static LaneTerms laneTerms(OpBuilder &b, Location loc, Value lane) {
  auto c = [&](int64_t v) { return cst(b, loc, v); };
  Value lo8 = arith::RemUIOp::create(b, loc, lane, c(8));
  Value hi8 = arith::MulIOp::create(
      b, loc,
      arith::RemUIOp::create(b, loc, arith::DivUIOp::create(b, loc, lane, c(8)),
                             c(2)),
      c(8));
  Value hi16 = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, lane, c(16)), c(8));
  return {lo8, hi8, hi16};
}

/// Element offset of (row, col) in `tile`.
static Value laneOffset(OpBuilder &b, Location loc, const SharedTile &tile,
                        Value row, Value col) {
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, row, cst(b, loc, tile.rowStride)),
      col);
}

SmallVector<Value> MmaM16N8K16::loadQuery(OpBuilder &b, Location loc,
                                          Value lane, const SharedTile &q,
                                          Value warpRow) {
  // Lane l addresses row l % 16 and column half l / 16 of each 16x16 block.
  LaneTerms t = laneTerms(b, loc, lane);
  Value row = arith::AddIOp::create(
      b, loc, warpRow, arith::AddIOp::create(b, loc, t.lo8, t.hi8));
  Value laneOff = laneOffset(b, loc, q, row, t.hi16);
  qTile = q;
  qLaneOff = laneOff;
  SmallVector<Value> frags;
  if (mTiles > 1)
    return frags; // re-read per block by queryFragment
  for (int64_t ks = 0; ks < spec.tileHeadDim / 16; ++ks) {
    Value off = arith::AddIOp::create(b, loc, laneOff, cst(b, loc, 16 * ks));
    llvm::append_range(frags, ldmatrix4(b, loc, q, off, /*trans=*/false));
  }
  return frags;
}

SmallVector<Value> MmaM16N8K16::queryFragment(OpBuilder &b, Location loc,
                                              ArrayRef<Value> query, int64_t mt,
                                              int64_t ks) {
  if (!query.empty())
    return SmallVector<Value>(query.slice(4 * ks, 4));
  Value off = arith::AddIOp::create(
      b, loc, qLaneOff, cst(b, loc, 16 * mt * qTile.rowStride + 16 * ks));
  return ldmatrix4(b, loc, qTile, off, /*trans=*/false);
}

SmallVector<Value> MmaM16N8K16::computeScores(OpBuilder &b, Location loc,
                                              Value lane, ArrayRef<Value> query,
                                              const SharedTile &k) {
  // One ldmatrix.x4 = B fragments of two n8 tiles for one k16 step: lanes
  // 0-15 address key rows 0-7 (cols +0, +8), lanes 16-31 key rows 8-15.
  LaneTerms t = laneTerms(b, loc, lane);
  Value laneOff = laneOffset(
      b, loc, k, arith::AddIOp::create(b, loc, t.hi16, t.lo8), t.hi8);

  Value zero =
      arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(0.0f));
  int64_t nTiles = spec.blockN() / 8;
  SmallVector<Value> acc(mTiles * nTiles * 4, zero);
  for (int64_t ks = 0; ks < spec.tileHeadDim / 16; ++ks) {
    SmallVector<SmallVector<Value>> a;
    for (int64_t mt = 0; mt < mTiles; ++mt)
      a.push_back(queryFragment(b, loc, query, mt, ks));
    for (int64_t np = 0; np < nTiles / 2; ++np) {
      Value off = arith::AddIOp::create(
          b, loc, laneOff, cst(b, loc, 16 * np * k.rowStride + 16 * ks));
      SmallVector<Value> r = ldmatrix4(b, loc, k, off, /*trans=*/false);
      mmaTilePair(b, loc, a, r, nTiles, 2 * np, acc);
    }
  }
  return acc;
}

SmallVector<Value> MmaM16N8K16::accumulateOutput(OpBuilder &b, Location loc,
                                                 Value lane, ArrayRef<Value> p,
                                                 const SharedTile &v,
                                                 ArrayRef<Value> accIn) {
  // ldmatrix.x4.trans: matrices (keys 0-7, dv 0-7), (keys 8-15, dv 0-7),
  // (keys 0-7, dv 8-15), (keys 8-15, dv 8-15) = B of two n8 tiles.
  LaneTerms t = laneTerms(b, loc, lane);
  Value laneOff = laneOffset(
      b, loc, v, arith::AddIOp::create(b, loc, t.lo8, t.hi8), t.hi16);

  SmallVector<Value> acc(accIn.begin(), accIn.end());
  int64_t sTiles = spec.blockN() / 8, oTiles = spec.tileHeadDimV / 8;
  for (int64_t kk = 0; kk < spec.blockN() / 16; ++kk) {
    // S tiles 2kk and 2kk+1 of each m tile (4 values each: row g pair, row
    // g+8 pair) are the A fragment of this k16 step.
    SmallVector<SmallVector<Value>> a;
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      ArrayRef<Value> pt = p.slice(4 * (mt * sTiles + 2 * kk), 8);
      a.push_back({pack(b, loc, pt[0], pt[1]), pack(b, loc, pt[2], pt[3]),
                   pack(b, loc, pt[4], pt[5]), pack(b, loc, pt[6], pt[7])});
    }
    for (int64_t dp = 0; dp < spec.tileHeadDimV / 16; ++dp) {
      Value off = arith::AddIOp::create(
          b, loc, laneOff, cst(b, loc, 16 * kk * v.rowStride + 16 * dp));
      SmallVector<Value> r = ldmatrix4(b, loc, v, off, /*trans=*/true);
      mmaTilePair(b, loc, a, r, oTiles, 2 * dp, acc);
    }
  }
  return acc;
}

void MmaM16N8K16::mmaTilePair(OpBuilder &b, Location loc,
                              ArrayRef<SmallVector<Value>> a, ArrayRef<Value> r,
                              int64_t tilesPerRow, int64_t n0,
                              SmallVectorImpl<Value> &acc) {
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t t = 0; t < 2; ++t) {
      int64_t at = 4 * (mt * tilesPerRow + n0 + t);
      SmallVector<Value> d = mma(b, loc, a[mt], {r[2 * t], r[2 * t + 1]},
                                 ArrayRef<Value>(acc).slice(at, 4));
      llvm::copy(d, acc.begin() + at);
    }
}

std::unique_ptr<MmaEmitter>
attn::createMmaM16N8K16Emitter(const KernelSpec &spec) {
  return std::make_unique<MmaM16N8K16>(spec);
}
