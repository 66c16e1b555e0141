//===- FmaEmitter.cpp - float32 attention on scalar FMA ---------*- C++ -*-===//
//
// The `fma` instruction of the tile tables' gpu_fma set: float32 attention
// in float32 (no TF32, no XF32) on any GPU. A warp's lanes form 8 columns x
// (warp size / 8) rows; lane (r, c) owns query rows r + R i of the warp's
// (R = warp size / 8) and, of S = Q K^T, keys c + 8 j; of O = P V the
// four columns 4 c .. 4 c + 3 of every 32. S reads Q and K from shared
// memory four head-dim elements at a time; P V broadcasts each probability
// from the lane that holds it (a shuffle) and reads V four columns at a
// time. Both products loop over their reduction dimension with scf.for, so
// the code does not grow with D or block_n.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Conversion/AttnToGPU/GPUTargetInfo.h"
#include "KernelBuilder.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
/// Lanes per row of the warp's lane grid (its column count).
constexpr int64_t kLaneCols = 8;
/// Elements one shared-memory load reads (16 bytes of f32).
constexpr int64_t kVec = 4;

/// KernelBuilder's helpers for one call's builder and location.
struct Ops : KernelBuilder {
  Ops(OpBuilder &b, Location loc) : KernelBuilder(b, loc) {}
  using KernelBuilder::add;
  using KernelBuilder::b;
  using KernelBuilder::c32;
  using KernelBuilder::cf;
  using KernelBuilder::f32;
  using KernelBuilder::gep;
  using KernelBuilder::loc;
  using KernelBuilder::mul;
};

class FmaEmitter final : public MmaEmitter {
public:
  FmaEmitter(const KernelSpec &spec, int64_t warpSize)
      : spec(spec), warpSize(warpSize), laneRows(warpSize / kLaneCols),
        rowsPerWarp(spec.blockM() / spec.warps()),
        rowsPerLane(rowsPerWarp / laneRows),
        keysPerLane(spec.blockN() / kLaneCols),
        colGroups(spec.tileHeadDimV / (kLaneCols * kVec)) {}

  int64_t getRowsPerWarp() const override { return rowsPerWarp; }

  AccLayout getScoreLayout(OpBuilder &b, Location l, Value lane) override {
    AccLayout layout = base(b, l, lane);
    layout.laneCol = laneCol;
    layout.laneColBound = kLaneCols;
    for (int64_t i = 0; i < rowsPerLane; ++i)
      for (int64_t j = 0; j < keysPerLane; ++j) {
        layout.rowSlot.push_back(i);
        layout.colOffsets.push_back(kLaneCols * j);
      }
    return layout;
  }

  AccLayout getOutputLayout(OpBuilder &b, Location l, Value lane) override {
    AccLayout layout = base(b, l, lane);
    Ops o(b, l);
    layout.laneCol = o.mul(laneCol, o.c32(kVec));
    layout.laneColMultiple = kVec;
    for (int64_t i = 0; i < rowsPerLane; ++i)
      for (int64_t g = 0; g < colGroups; ++g)
        for (int64_t e = 0; e < kVec; ++e) {
          layout.rowSlot.push_back(i);
          layout.colOffsets.push_back(kLaneCols * kVec * g + e);
        }
    return layout;
  }

  SmallVector<Value> loadQuery(OpBuilder &, Location, Value lane,
                               const SharedTile &q, Value warpRow) override {
    // Q stays in shared memory: computeScores reads it with K.
    qTile = q;
    qRow0 = warpRow;
    return {};
  }

  SmallVector<Value> computeScores(OpBuilder &b, Location loc, Value lane,
                                   ArrayRef<Value>,
                                   const SharedTile &k) override {
    Ops o(b, loc);
    setLane(o, lane);
    SmallVector<Value> init(rowsPerLane * keysPerLane, o.cf(0.0));
    auto loop = scf::ForOp::create(b, loc, o.c32(0), o.c32(spec.tileHeadDim),
                                   o.c32(kVec), init);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value d = loop.getInductionVar();
    SmallVector<Value> q, kv;
    for (int64_t i = 0; i < rowsPerLane; ++i)
      q.push_back(loadVec(
          o, qTile, o.add(qRow0, o.add(laneRow, o.c32(laneRows * i))), d));
    for (int64_t j = 0; j < keysPerLane; ++j)
      kv.push_back(loadVec(o, k, o.add(laneCol, o.c32(kLaneCols * j)), d));
    SmallVector<Value> acc(loop.getRegionIterArgs());
    for (int64_t i = 0; i < rowsPerLane; ++i)
      for (int64_t j = 0; j < keysPerLane; ++j) {
        Value &s = acc[i * keysPerLane + j];
        for (int64_t e = 0; e < kVec; ++e)
          s = math::FmaOp::create(b, loc, element(o, q[i], e),
                                  element(o, kv[j], e), s);
      }
    scf::YieldOp::create(b, loc, acc);
    return SmallVector<Value>(loop.getResults());
  }

  SmallVector<Value> accumulateOutput(OpBuilder &b, Location loc, Value lane,
                                      ArrayRef<Value> p, const SharedTile &v,
                                      ArrayRef<Value> acc) override {
    Ops o(b, loc);
    setLane(o, lane);
    SmallVector<Value> out(acc);
    // Keys 8 j .. 8 j + 7 are in slot j of the eight lanes of each lane
    // row: lane (r, t) holds key 8 j + t.
    for (int64_t j = 0; j < keysPerLane; ++j) {
      auto loop =
          scf::ForOp::create(b, loc, o.c32(0), o.c32(kLaneCols), o.c32(1), out);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value t = loop.getInductionVar();
      Value src = o.add(o.mul(laneRow, o.c32(kLaneCols)), t);
      SmallVector<Value> prob;
      for (int64_t i = 0; i < rowsPerLane; ++i)
        prob.push_back(gpu::ShuffleOp::create(b, loc, p[i * keysPerLane + j],
                                              src, o.c32(warpSize),
                                              gpu::ShuffleMode::IDX)
                           .getShuffleResult());
      Value key = o.add(o.c32(kLaneCols * j), t);
      SmallVector<Value> vals;
      for (int64_t g = 0; g < colGroups; ++g)
        vals.push_back(loadVec(
            o, v, key,
            o.add(o.mul(laneCol, o.c32(kVec)), o.c32(kLaneCols * kVec * g))));
      SmallVector<Value> next(loop.getRegionIterArgs());
      for (int64_t i = 0; i < rowsPerLane; ++i)
        for (int64_t g = 0; g < colGroups; ++g)
          for (int64_t e = 0; e < kVec; ++e) {
            Value &acc = next[(i * colGroups + g) * kVec + e];
            acc = math::FmaOp::create(b, loc, prob[i], element(o, vals[g], e),
                                      acc);
          }
      scf::YieldOp::create(b, loc, next);
      out.assign(loop.getResults().begin(), loop.getResults().end());
    }
    return out;
  }

private:
  /// Lane row and column (computed once per lane value).
  void setLane(Ops &o, Value lane) {
    if (lane == cachedLane)
      return;
    cachedLane = lane;
    laneRow = arith::DivUIOp::create(o.b, o.loc, lane, o.c32(kLaneCols));
    laneCol = arith::RemUIOp::create(o.b, o.loc, lane, o.c32(kLaneCols));
  }
  /// What both layouts share: lane row, row slots, the reduction over the
  /// eight lanes of a row.
  AccLayout base(OpBuilder &b, Location loc, Value lane) {
    Ops o(b, loc);
    setLane(o, lane);
    AccLayout layout;
    layout.laneRow = laneRow;
    layout.laneRowBound = laneRows;
    for (int64_t i = 0; i < rowsPerLane; ++i)
      layout.rowSlotOffsets.push_back(laneRows * i);
    for (int32_t x = 1; x < kLaneCols; x *= 2)
      layout.rowReduceXor.push_back(x);
    return layout;
  }
  /// Four f32 of `tile` at (row, col), col a multiple of four.
  static Value loadVec(Ops &o, const SharedTile &tile, Value row, Value col) {
    Value at = o.add(o.mul(row, o.c32(tile.rowStride)), col);
    return LLVM::LoadOp::create(o.b, o.loc, VectorType::get({kVec}, o.f32),
                                o.gep(tile.base, o.f32, at), 16);
  }
  static Value element(Ops &o, Value vec, int64_t e) {
    return vector::ExtractOp::create(o.b, o.loc, vec, ArrayRef<int64_t>{e});
  }

  /// A copy: the backward makes its products' specs as temporaries
  /// (getProductSpec).
  const KernelSpec spec;
  int64_t warpSize, laneRows, rowsPerWarp, rowsPerLane, keysPerLane, colGroups;
  SharedTile qTile;
  Value qRow0, cachedLane, laneRow, laneCol;
};
} // namespace

std::unique_ptr<MmaEmitter> attn::createFmaEmitter(const KernelSpec &spec,
                                                   int64_t warpSize) {
  return std::make_unique<FmaEmitter>(spec, warpSize);
}
