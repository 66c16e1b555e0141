//===- SharedMemory.cpp - the kernels' dynamic shared memory --------------===//

#include "AttnDialect/Conversion/AttnToGPU/SharedMemory.h"
#include "AttnDialect/Target/Constraints.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::attn;

static Value c32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
}

static constexpr StringLiteral kSharedGlobalName = "attn_smem";

void attn::declareDynamicSharedMemory(OpBuilder &builder, Location loc,
                                      gpu::GPUModuleOp gpuModule,
                                      const GPUTargetInfo &target) {
  if (SymbolTable::lookupSymbolIn(gpuModule, kSharedGlobalName))
    return;
  OpBuilder b(builder.getContext());
  b.setInsertionPointToStart(gpuModule.getBody());
  LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), 0),
                         /*isConstant=*/false, LLVM::Linkage::External,
                         kSharedGlobalName, Attribute(), /*alignment=*/16,
                         target.getSharedAddressSpace());
}

Value attn::getStaticSharedMemory(OpBuilder &b, Location loc,
                                  gpu::GPUFuncOp kernel, Type elemType,
                                  int64_t count, const GPUTargetInfo &target) {
  LLVM::GlobalOp global;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(
        kernel->getParentOfType<gpu::GPUModuleOp>().getBody());
    global = LLVM::GlobalOp::create(
        b, loc, LLVM::LLVMArrayType::get(elemType, count),
        /*isConstant=*/false, LLVM::Linkage::Internal,
        (kernel.getName() + "_smem").str(), Attribute(), /*alignment=*/16,
        target.getSharedAddressSpace());
  }
  return LLVM::AddressOfOp::create(b, loc, global);
}

Value attn::getDynamicSharedMemoryBase(OpBuilder &b, Location loc,
                                       gpu::GPUFuncOp kernel,
                                       int64_t alignment) {
  auto global = cast<LLVM::GlobalOp>(
      SymbolTable::lookupSymbolIn(kernel->getParentOp(), kSharedGlobalName));
  Value base = LLVM::AddressOfOp::create(b, loc, global);
  if (alignment <= 16)
    return base;
  // Round up: base + (-base & (alignment - 1)).
  Value addr = LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), base);
  Value pad = arith::AndIOp::create(
      b, loc, arith::SubIOp::create(b, loc, c32(b, loc, 0), addr),
      c32(b, loc, alignment - 1));
  return LLVM::GEPOp::create(b, loc, base.getType(), b.getI8Type(), base,
                             ValueRange{pad});
}

Value attn::getSharedChunkAddress(OpBuilder &b, Location loc,
                                  const SharedTile &tile, Value r, Value c) {
  auto mul = [&](Value x, Value y) {
    return arith::MulIOp::create(b, loc, x, y);
  };
  auto add = [&](Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y);
  };
  if (tile.layout == SharedTileLayout::Padded) {
    int64_t vec = 16 / (tile.elemType.getIntOrFloatBitWidth() / 8);
    Value off =
        add(mul(r, c32(b, loc, tile.rowStride)), mul(c, c32(b, loc, vec)));
    return LLVM::GEPOp::create(b, loc, tile.base.getType(), tile.elemType,
                               tile.base, ValueRange{off});
  }
  // Panel c / 8 (128-byte rows), chunk (c % 8) ^ (r % 8) within the row.
  Value panel = arith::DivUIOp::create(b, loc, c, c32(b, loc, 8));
  Value chunk = arith::XOrIOp::create(
      b, loc, arith::AndIOp::create(b, loc, c, c32(b, loc, 7)),
      arith::AndIOp::create(b, loc, r, c32(b, loc, 7)));
  Value off = add(
      add(mul(panel, c32(b, loc, tile.rows * 128)), mul(r, c32(b, loc, 128))),
      mul(chunk, c32(b, loc, 16)));
  return LLVM::GEPOp::create(b, loc, tile.base.getType(), b.getI8Type(),
                             tile.base, ValueRange{off});
}

void attn::emitTileCopy(OpBuilder &b, Location loc, const GPUTargetInfo &target,
                        const SharedTile &tile, int64_t cols, Value tid,
                        int64_t threads, Value src, Value rowStart,
                        Value rowLimit, Value rowStride, int64_t alignBytes,
                        function_ref<Value(Value row)> rowOffset,
                        Value dynamicCols, bool fixedColumns) {
  Type i64 = b.getI64Type();
  int64_t elemBytes = tile.elemType.getIntOrFloatBitWidth() / 8;
  int64_t vec = 16 / elemBytes;
  int64_t chunksPerRow = tile.cols / vec;
  int64_t total = tile.rows * chunksPerRow;
  // A row of the matrix ends inside the tile when the tile is padded
  // (cols < tile.cols): chunks past its end are zeros, and no load crosses
  // it, so loads are at most as wide as the row's bytes are a multiple of.
  int64_t rowBytes = cols * elemBytes;
  int64_t width =
      std::min<int64_t>(alignBytes, getRowAlignBytes(elemBytes, cols));
  bool tail = cols < tile.cols;
  bool partial = rowBytes % 16 != 0;
  Value rowBytesValue;
  if (dynamicCols) {
    // Any row length: a chunk may end anywhere, so loads are element-wide
    // unless the target reads a partial chunk in one copy (cp.async).
    tail = partial = true;
    width = target.readsPartialChunks(alignBytes) ? alignBytes : elemBytes;
    rowBytesValue =
        arith::MulIOp::create(b, loc, dynamicCols, c32(b, loc, elemBytes));
  } else {
    rowBytesValue = c32(b, loc, rowBytes);
  }
  // Threads on `group` chunk columns, rows 8 or more a step apart: rows a
  // multiple of 8 apart share their swizzle (row % 8), chunk columns a
  // multiple of 8 apart their place in a 64-column panel.
  int64_t group = std::min(chunksPerRow, threads / 8);
  if (fixedColumns && !rowOffset &&
      tile.layout == SharedTileLayout::Swizzle128B && group % 8 == 0 &&
      chunksPerRow % group == 0 && threads % group == 0 &&
      tile.rows % (threads / group) == 0) {
    int64_t rowsPerStep = threads / group;
    Value r0 = arith::DivUIOp::create(b, loc, tid, c32(b, loc, group));
    Value c = arith::RemUIOp::create(b, loc, tid, c32(b, loc, group));
    Value to = getSharedChunkAddress(b, loc, tile, r0, c);
    Value row0 = arith::AddIOp::create(b, loc, rowStart, r0);
    Value rowsLeft = arith::SubIOp::create(b, loc, rowLimit, row0);
    Value from = LLVM::GEPOp::create(
        b, loc, src.getType(), tile.elemType, src,
        ValueRange{arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(
                b, loc, arith::ExtSIOp::create(b, loc, i64, row0), rowStride),
            arith::ExtSIOp::create(
                b, loc, i64,
                arith::MulIOp::create(b, loc, c, c32(b, loc, vec))))});
    Value step = arith::MulIOp::create(
        b, loc, arith::ConstantIntOp::create(b, loc, i64, rowsPerStep),
        rowStride);
    // Per chunk column c + k * group: in the row, and its valid bytes.
    SmallVector<Value> colValid, colBytes;
    for (int64_t k = 0; k * group < chunksPerRow; ++k) {
      Value chunkByte = arith::MulIOp::create(
          b, loc, arith::AddIOp::create(b, loc, c, c32(b, loc, k * group)),
          c32(b, loc, 16));
      colValid.push_back(tail ? arith::CmpIOp::create(b, loc,
                                                      arith::CmpIPredicate::slt,
                                                      chunkByte, rowBytesValue)
                                    .getResult()
                              : Value());
      colBytes.push_back(
          partial ? arith::MinSIOp::create(
                        b, loc,
                        arith::SubIOp::create(b, loc, rowBytesValue, chunkByte),
                        c32(b, loc, 16))
                        .getResult()
                  : Value());
    }
    for (int64_t i = 0; i * rowsPerStep < tile.rows; ++i) {
      if (i > 0)
        from = LLVM::GEPOp::create(b, loc, src.getType(), tile.elemType, from,
                                   ValueRange{step});
      Value rowValid =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                c32(b, loc, i * rowsPerStep), rowsLeft);
      for (int64_t k = 0; k * group < chunksPerRow; ++k) {
        Value valid = colValid[k]
                          ? arith::AndIOp::create(b, loc, rowValid, colValid[k])
                                .getResult()
                          : rowValid;
        Value at =
            LLVM::GEPOp::create(b, loc, src.getType(), tile.elemType, from,
                                ValueRange{c32(b, loc, k * group * vec)});
        // Chunk column c + k * group is `k * group / 8` panels on.
        int64_t toBytes = (i * rowsPerStep + k * group / 8 * tile.rows) * 128;
        target.emitCopyToShared(
            b, loc,
            LLVM::GEPOp::create(b, loc, to.getType(), b.getI8Type(), to,
                                ValueRange{c32(b, loc, toBytes)}),
            arith::SelectOp::create(b, loc, valid, at, src), 16, width, valid,
            colBytes[k]);
      }
    }
    return;
  }
  for (int64_t it = 0; it * threads < total; ++it) {
    OpBuilder::InsertionGuard guard(b);
    Value idx = arith::AddIOp::create(b, loc, tid, c32(b, loc, it * threads));
    if ((it + 1) * threads > total) {
      Value inTile = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           idx, c32(b, loc, total));
      auto ifOp = scf::IfOp::create(b, loc, inTile, /*withElse=*/false);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    Value r = arith::DivUIOp::create(b, loc, idx, c32(b, loc, chunksPerRow));
    Value c = arith::RemUIOp::create(b, loc, idx, c32(b, loc, chunksPerRow));
    Value row = arith::AddIOp::create(b, loc, rowStart, r);
    Value valid =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row, rowLimit);
    Value chunkByte = arith::MulIOp::create(b, loc, c, c32(b, loc, 16));
    if (tail)
      valid = arith::AndIOp::create(
          b, loc, valid,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, chunkByte,
                                rowBytesValue));
    Value validBytes;
    if (partial)
      validBytes = arith::MinSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, rowBytesValue, chunkByte),
          c32(b, loc, 16));
    Value rowOff =
        rowOffset
            ? rowOffset(row)
            : arith::MulIOp::create(
                  b, loc, arith::ExtSIOp::create(b, loc, i64, row), rowStride)
                  .getResult();
    Value gOff = arith::AddIOp::create(
        b, loc, rowOff,
        arith::ExtSIOp::create(
            b, loc, i64, arith::MulIOp::create(b, loc, c, c32(b, loc, vec))));
    Value at = LLVM::GEPOp::create(b, loc, src.getType(), tile.elemType, src,
                                   ValueRange{gOff});
    Value from = arith::SelectOp::create(b, loc, valid, at, src);
    Value to = getSharedChunkAddress(b, loc, tile, r, c);
    target.emitCopyToShared(b, loc, to, from, 16, width, valid, validBytes);
  }
}
