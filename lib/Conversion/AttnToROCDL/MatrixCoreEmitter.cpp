//===- MatrixCoreEmitter.cpp - MFMA / WMMA attention products ---*- C++ -*-===//
//
// The two products of the attention kernel on AMD matrix cores.
//
// Both are computed transposed: S^T = K Q^T and O^T += V^T P^T. The matrix
// instruction's accumulator columns are then query rows, so each lane holds
// one query row (l % N) and a set of keys (S) or value columns (O). That
// buys two things over the untransposed products:
//  * the online softmax has one row slot per lane, and a row's max and sum
//    are reduced across the (64 / N or 32 / N) lanes of that row only;
//  * the probabilities a lane holds after the softmax are already the B
//    operand of O^T += V^T P^T (same lane, same K positions), so P never
//    goes through LDS. Only RDNA3, whose B operand wants all 16 keys of a
//    column in every lane, needs one exchange with the other half-wave.
// V^T is read column-wise from the row-major V tile in LDS (one element per
// K position); K and Q are read as contiguous runs of each row.
//
//===----------------------------------------------------------------------===//

#include "AMDTargetInfo.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
class MatrixCoreEmitter : public MmaEmitter {
public:
  MatrixCoreEmitter(const MatrixCoreShape &shape, int64_t waveSize,
                    const KernelSpec &spec)
      : shape(shape), waveSize(waveSize), spec(spec),
        accPerLane(shape.accPerLane(waveSize)) {}

  int64_t getRowsPerWarp() const override { return shape.n; }
  AccLayout getScoreLayout(OpBuilder &b, Location loc, Value lane) override {
    return getLayout(b, loc, lane, spec.blockN());
  }
  AccLayout getOutputLayout(OpBuilder &b, Location loc, Value lane) override {
    return getLayout(b, loc, lane, spec.tileHeadDimV);
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
  /// Lane-dependent values, computed once at the first call (kernel entry,
  /// so they dominate every later use).
  void initLane(OpBuilder &b, Location loc, Value lane);
  AccLayout getLayout(OpBuilder &b, Location loc, Value lane, int64_t cols);
  /// Row of accumulator element `i` relative to the lane's accRowBase.
  int64_t getRowOffset(int64_t i) const;
  Value loadShared(OpBuilder &b, Location loc, const SharedTile &tile,
                   Value elemOffset, int64_t count);
  Value mma(OpBuilder &b, Location loc, Value a, Value bOperand, Value acc);
  SmallVector<Value> unpack(OpBuilder &b, Location loc, Value vec);
  Value c32(OpBuilder &b, Location loc, int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }

  /// Whether Q stays in VGPRs for the whole kernel. With large head dims
  /// (D = 256 on RDNA: 128 VGPRs of Q next to 128 of O) it is read from the
  /// LDS tile, which the kernel keeps, once per key block instead.
  bool keepQueryInRegisters() const;
  Value loadQueryChunk(OpBuilder &b, Location loc, int64_t c);

  const MatrixCoreShape &shape;
  int64_t waveSize;
  /// A copy: the backward makes its products' specs as temporaries
  /// (getProductSpec).
  const KernelSpec spec;
  int64_t accPerLane;

  Value laneMod;    // l % N: the query row (and A/B operand row) of the lane
  Value laneGroup;  // l / N
  Value kBase;      // first K position of the lane's A/B operand elements
  Value accRowBase; // first accumulator row of the lane
  SharedTile qTile; // the LDS Q tile and the lane's element offset in it
  Value qLaneOff;
};
} // namespace

void MatrixCoreEmitter::initLane(OpBuilder &b, Location loc, Value lane) {
  if (laneMod)
    return;
  Value n = c32(b, loc, shape.n);
  laneMod = arith::RemUIOp::create(b, loc, lane, n);
  laneGroup = arith::DivUIOp::create(b, loc, lane, n);
  Value kGroup =
      arith::RemUIOp::create(b, loc, laneGroup, c32(b, loc, shape.kGroups()));
  kBase = arith::MulIOp::create(b, loc, kGroup, c32(b, loc, shape.kPerLane));
  int64_t rowBaseScale = shape.accRows == AccRowKind::Mfma        ? 4
                         : shape.accRows == AccRowKind::WmmaGfx12 ? 8
                                                                  : 1;
  accRowBase =
      arith::MulIOp::create(b, loc, laneGroup, c32(b, loc, rowBaseScale));
}

int64_t MatrixCoreEmitter::getRowOffset(int64_t i) const {
  switch (shape.accRows) {
  case AccRowKind::Mfma: {
    int64_t groups = waveSize / shape.n;
    return (i / 4) * 4 * groups + i % 4;
  }
  case AccRowKind::WmmaGfx11:
    return 2 * i;
  case AccRowKind::WmmaGfx12:
    return i;
  }
  llvm_unreachable("unknown accumulator layout");
}

AccLayout MatrixCoreEmitter::getLayout(OpBuilder &b, Location loc, Value lane,
                                       int64_t cols) {
  initLane(b, loc, lane);
  AccLayout layout;
  // Transposed products: accumulator columns are query rows.
  layout.laneRow = laneMod;
  layout.laneCol = accRowBase;
  layout.rowSlotOffsets = {0};
  for (int64_t t = 0; t < cols / shape.n; ++t) {
    for (int64_t i = 0; i < accPerLane; ++i) {
      layout.rowSlot.push_back(0);
      layout.colOffsets.push_back(t * shape.n + getRowOffset(i));
    }
  }
  // The lanes of one query row are l % N + N * g for every group g.
  for (int64_t x = shape.n; x < waveSize; x *= 2)
    layout.rowReduceXor.push_back(x);
  return layout;
}

Value MatrixCoreEmitter::loadShared(OpBuilder &b, Location loc,
                                    const SharedTile &tile, Value elemOffset,
                                    int64_t count) {
  Value ptr = LLVM::GEPOp::create(b, loc, tile.base.getType(), tile.elemType,
                                  tile.base, ValueRange{elemOffset});
  int64_t elemBytes = tile.elemType.getIntOrFloatBitWidth() / 8;
  if (count == 1)
    return LLVM::LoadOp::create(b, loc, tile.elemType, ptr, elemBytes);
  // Rows are padded to 16-byte multiples and runs start at multiples of
  // their length, so runs up to 16 bytes are naturally aligned.
  int64_t align = std::min<int64_t>(count * elemBytes, 16);
  return LLVM::LoadOp::create(b, loc, VectorType::get({count}, tile.elemType),
                              ptr, align);
}

Value MatrixCoreEmitter::mma(OpBuilder &b, Location loc, Value a,
                             Value bOperand, Value acc) {
  uint32_t n = shape.n, k = shape.k;
  if (shape.wmma)
    return amdgpu::WMMAOp::create(b, loc, acc.getType(), n, n, k, a, bOperand,
                                  acc);
  return amdgpu::MFMAOp::create(b, loc, acc.getType(), n, n, k, /*blocks=*/1, a,
                                bOperand, acc);
}

SmallVector<Value> MatrixCoreEmitter::unpack(OpBuilder &b, Location loc,
                                             Value vec) {
  SmallVector<Value> out;
  int64_t size = cast<VectorType>(vec.getType()).getNumElements();
  for (int64_t i = 0; i < size; ++i)
    out.push_back(vector::ExtractOp::create(b, loc, vec, i));
  return out;
}

SmallVector<Value> MatrixCoreEmitter::loadQuery(OpBuilder &b, Location loc,
                                                Value lane, const SharedTile &q,
                                                Value warpRow) {
  initLane(b, loc, lane);
  // B operand of S^T = K Q^T: column = query row, K positions = head dims.
  Value row = arith::AddIOp::create(b, loc, warpRow, laneMod);
  Value rowOff = arith::MulIOp::create(b, loc, row, c32(b, loc, q.rowStride));
  qLaneOff = arith::AddIOp::create(b, loc, rowOff, kBase);
  qTile = q;
  SmallVector<Value> chunks;
  if (!keepQueryInRegisters())
    return chunks;
  for (int64_t c = 0; c < spec.tileHeadDim / shape.k; ++c)
    chunks.push_back(loadQueryChunk(b, loc, c));
  return chunks;
}

bool MatrixCoreEmitter::keepQueryInRegisters() const {
  int64_t elemBytes = spec.elemType.getIntOrFloatBitWidth() / 8;
  int64_t qRegs = spec.tileHeadDim / shape.k * shape.kPerLane * elemBytes / 4;
  int64_t oRegs = spec.tileHeadDimV / shape.n * accPerLane;
  int64_t sRegs = spec.blockN() / shape.n * accPerLane;
  // Q, O, S and P (as f32 and packed) live at once; leave a quarter of the
  // 256 architectural VGPRs for addresses, softmax state and V operands.
  return qRegs + oRegs + 2 * sRegs <= 192;
}

Value MatrixCoreEmitter::loadQueryChunk(OpBuilder &b, Location loc, int64_t c) {
  Value off = arith::AddIOp::create(b, loc, qLaneOff, c32(b, loc, c * shape.k));
  return loadShared(b, loc, qTile, off, shape.kPerLane);
}

SmallVector<Value> MatrixCoreEmitter::computeScores(OpBuilder &b, Location loc,
                                                    Value lane,
                                                    ArrayRef<Value> query,
                                                    const SharedTile &k) {
  initLane(b, loc, lane);
  auto accType = VectorType::get({accPerLane}, b.getF32Type());
  Value zero = arith::ConstantOp::create(
      b, loc, accType, cast<TypedAttr>(b.getZeroAttr(accType)));
  // A operand: row = key, K positions = head dims.
  Value laneOff =
      arith::MulIOp::create(b, loc, laneMod, c32(b, loc, k.rowStride));
  laneOff = arith::AddIOp::create(b, loc, laneOff, kBase);
  SmallVector<Value> scores;
  for (int64_t t = 0; t < spec.blockN() / shape.n; ++t) {
    Value acc = zero;
    for (int64_t c = 0, e = spec.tileHeadDim / shape.k; c < e; ++c) {
      Value off = arith::AddIOp::create(
          b, loc, laneOff,
          c32(b, loc, t * shape.n * k.rowStride + c * shape.k));
      Value a = loadShared(b, loc, k, off, shape.kPerLane);
      Value q = query.empty() ? loadQueryChunk(b, loc, c) : query[c];
      acc = mma(b, loc, a, q, acc);
    }
    llvm::append_range(scores, unpack(b, loc, acc));
  }
  return scores;
}

SmallVector<Value> MatrixCoreEmitter::accumulateOutput(OpBuilder &b,
                                                       Location loc, Value lane,
                                                       ArrayRef<Value> p,
                                                       const SharedTile &v,
                                                       ArrayRef<Value> acc) {
  initLane(b, loc, lane);
  Type elemType = spec.elemType;
  auto operandType = VectorType::get({shape.kPerLane}, elemType);
  int64_t chunks = spec.blockN() / shape.k;

  // B operands (P^T) of each K-chunk, and for each of their K positions the
  // key it stands for, as (lane-dependent base, constant) offsets.
  SmallVector<Value> pOperands;
  SmallVector<SmallVector<int64_t>> keyOffsets(chunks);
  Value keyBase;
  if (shape.kGroups() == 1 && waveSize / shape.n == 2) {
    // RDNA3: a lane needs all K keys of its column but holds the keys of its
    // half-wave's accumulator rows (2 i + g); the other half-wave has the
    // rest.
    Value lowHalf = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          laneGroup, c32(b, loc, 0));
    for (int64_t c = 0; c < chunks; ++c) {
      SmallVector<Value> elems;
      for (int64_t i = 0; i < accPerLane; ++i) {
        Value own = p[c * accPerLane + i];
        Value other = gpu::ShuffleOp::create(b, loc, own, shape.n, waveSize,
                                             gpu::ShuffleMode::XOR)
                          .getShuffleResult();
        Value even = arith::SelectOp::create(b, loc, lowHalf, own, other);
        Value odd = arith::SelectOp::create(b, loc, lowHalf, other, own);
        elems.push_back(arith::TruncFOp::create(b, loc, elemType, even));
        elems.push_back(arith::TruncFOp::create(b, loc, elemType, odd));
      }
      pOperands.push_back(
          vector::FromElementsOp::create(b, loc, operandType, elems));
      for (int64_t kk = 0; kk < shape.k; ++kk)
        keyOffsets[c].push_back(c * shape.k + kk);
    }
    keyBase = c32(b, loc, 0);
  } else {
    // The lane's accumulator elements, in order, are its K positions of
    // consecutive chunks: the same lanes (group g) hold the same keys in
    // both layouts, so A and B agree on which key each K position is.
    for (int64_t c = 0; c < chunks; ++c) {
      SmallVector<Value> elems;
      for (int64_t j = 0; j < shape.kPerLane; ++j) {
        int64_t e = c * shape.kPerLane + j;
        elems.push_back(arith::TruncFOp::create(b, loc, elemType, p[e]));
        keyOffsets[c].push_back((e / accPerLane) * shape.n +
                                getRowOffset(e % accPerLane));
      }
      pOperands.push_back(
          vector::FromElementsOp::create(b, loc, operandType, elems));
    }
    keyBase = accRowBase;
  }

  // A operands (V^T): row = value column l % N of tile u, K positions =
  // keys, read one element at a time down a column of the V tile.
  Value laneOff =
      arith::MulIOp::create(b, loc, keyBase, c32(b, loc, v.rowStride));
  laneOff = arith::AddIOp::create(b, loc, laneOff, laneMod);
  auto accType = VectorType::get({accPerLane}, b.getF32Type());
  SmallVector<Value> out;
  for (int64_t u = 0; u < spec.tileHeadDimV / shape.n; ++u) {
    Value accVec = vector::FromElementsOp::create(
        b, loc, accType, acc.slice(u * accPerLane, accPerLane));
    for (int64_t c = 0; c < chunks; ++c) {
      SmallVector<Value> elems;
      for (int64_t key : keyOffsets[c]) {
        Value off = arith::AddIOp::create(
            b, loc, laneOff, c32(b, loc, key * v.rowStride + u * shape.n));
        elems.push_back(loadShared(b, loc, v, off, 1));
      }
      Value a = vector::FromElementsOp::create(b, loc, operandType, elems);
      accVec = mma(b, loc, a, pOperands[c], accVec);
    }
    llvm::append_range(out, unpack(b, loc, accVec));
  }
  return out;
}

std::unique_ptr<MmaEmitter>
attn::createMatrixCoreEmitter(const MatrixCoreShape &shape, int64_t waveSize,
                              const KernelSpec &spec) {
  return std::make_unique<MatrixCoreEmitter>(shape, waveSize, spec);
}
