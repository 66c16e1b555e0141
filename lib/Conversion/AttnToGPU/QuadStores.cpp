//===- QuadStores.cpp - accumulator rows stored in 16-byte runs -----------===//
//
// Four-byte stores of the forward output's column pairs cost its tile loops
// about a key block a tile on the H100 (bench/RESULTS.md, eleventh session):
// 8 half-sectors a warp instruction. A quad's four lanes exchange their
// pairs in two butterfly rounds so that each stores 16 contiguous bytes:
// whole sectors, a quarter of the instructions.
//
//===----------------------------------------------------------------------===//

#include "QuadStores.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::attn;

/// Per row slot, the element at each column offset of `layout`.
static SmallVector<llvm::DenseMap<int64_t, unsigned>>
getElementsByColumn(const AccLayout &layout) {
  SmallVector<llvm::DenseMap<int64_t, unsigned>> at(layout.getNumRowSlots());
  for (unsigned e = 0, ne = layout.getNumElements(); e < ne; ++e)
    at[layout.rowSlot[e]][layout.colOffsets[e]] = e;
  return at;
}

bool attn::canStoreRowsByQuads(const GPUTargetInfo &target,
                               const AccLayout &layout, Type type,
                               int64_t width, int64_t alignBytes) {
  if (!layout.quadColumnPairs || target.getWarpSize() != 32 ||
      !type.isIntOrFloat() || type.getIntOrFloatBitWidth() != 16 ||
      alignBytes < 16 || width % 32 != 0)
    return false;
  // Each row's elements are exactly the pairs.
  for (const auto &cols : getElementsByColumn(layout)) {
    if (cols.size() != size_t(width / 4))
      return false;
    for (int64_t i = 0; i < width / 8; ++i)
      if (!cols.count(8 * i) || !cols.count(8 * i + 1))
        return false;
  }
  return true;
}

void attn::storeRowsByQuads(OpBuilder &b, Location loc,
                            const GPUTargetInfo &target,
                            const AccLayout &layout, Type type, int64_t width,
                            function_ref<Value(unsigned slot)> rowOf,
                            Value rowLimit,
                            function_ref<Value(Value row)> rowBase,
                            function_ref<Value(unsigned)> vals) {
  SmallVector<llvm::DenseMap<int64_t, unsigned>> at =
      getElementsByColumn(layout);
  unsigned slots = layout.getNumRowSlots();
  SmallVector<Value> bases, valid;
  for (unsigned slot = 0; slot < slots; ++slot) {
    Value r = rowOf(slot);
    bases.push_back(rowBase(r));
    valid.push_back(
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r, rowLimit));
  }
  int64_t groups = width / 8;
  auto c32 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };
  Type i32 = b.getI32Type();
  auto pairType = VectorType::get({2}, type);
  // This lane's place t in its row's quad (laneCol = 2t).
  Value t = arith::ShRUIOp::create(b, loc, layout.laneCol, c32(1));
  Value high[2];
  for (int32_t round = 0; round < 2; ++round)
    high[round] = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, loc, t, c32(1 << round)), c32(0));
  for (unsigned slot = 0; slot < slots; ++slot) {
    for (int64_t m = 0; m < groups / 4; ++m) {
      // x[k]: this lane's pair of column group 4m + k.
      SmallVector<Value> x;
      for (int64_t k = 0; k < 4; ++k) {
        int64_t g = 4 * m + k;
        Value pair = vector::FromElementsOp::create(
            b, loc, pairType,
            ValueRange{vals(at[slot][8 * g]), vals(at[slot][8 * g + 1])});
        x.push_back(LLVM::BitcastOp::create(b, loc, i32, pair));
      }
      // A 4 x 4 transpose over the quad: in round r, lanes 2^r apart swap
      // the pairs whose index differs in bit r; lane t ends with the pairs
      // of lanes 0..3 in group 4m + t, in column order.
      for (int32_t round = 0; round < 2; ++round) {
        int32_t mask = 1 << round;
        for (int64_t k = 0; k < 4; ++k) {
          if (k & mask)
            continue;
          Value send =
              arith::SelectOp::create(b, loc, high[round], x[k], x[k | mask]);
          Value recv = target.emitShuffleXor(b, loc, send, mask);
          Value lo = arith::SelectOp::create(b, loc, high[round], recv, x[k]);
          Value hi =
              arith::SelectOp::create(b, loc, high[round], x[k | mask], recv);
          x[k] = lo;
          x[k | mask] = hi;
        }
      }
      Value vec =
          vector::FromElementsOp::create(b, loc, VectorType::get({4}, i32), x);
      OpBuilder::InsertionGuard guard(b);
      auto ifOp = scf::IfOp::create(b, loc, valid[slot], /*withElse=*/false);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value col = arith::AddIOp::create(
          b, loc, c32(32 * m), arith::MulIOp::create(b, loc, t, c32(8)));
      Value ptr = LLVM::GEPOp::create(
          b, loc, bases[slot].getType(), type, bases[slot],
          ValueRange{arith::ExtSIOp::create(b, loc, b.getI64Type(), col)});
      LLVM::StoreOp::create(b, loc, vec, ptr, 16);
    }
  }
}
