//===- TileBuilder.cpp - what the forward and backward tilers share -------===//

#include "TileBuilder.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

int64_t attn::staticDim(Value v, unsigned i) {
  return cast<ShapedType>(v.getType()).getDimSize(i);
}

LogicalResult
attn::checkTileConfig(Operation *op, bool isTensorForm, StringRef init,
                      std::optional<ConfigAttr> config, int64_t d, int64_t dv,
                      function_ref<int64_t(ConfigAttr)> scratchBytes) {
  if (isTensorForm)
    return op->emitOpError() << init
                             << ": attn-tile expects the memref form; run "
                                "one-shot-bufferize first";
  if (!config)
    return op->emitOpError() << "config: attn-tile needs a #attn.config "
                                "attribute; run attn-select-config first";
  // The host loop nest sizes its vectors by D and Dv.
  if (ShapedType::isDynamic(d) || ShapedType::isDynamic(dv))
    return op->emitOpError() << "has a dynamic head dim: attn-tile (the host "
                                "pipeline) needs static D and Dv; the GPU "
                                "lowerings take it with a config's "
                                "max_head_dim";
  if (config->getBlockM() <= 0 || config->getBlockN() <= 0)
    return op->emitOpError()
           << "config: expected positive block_m and "
              "block_n, got block_m = "
           << config->getBlockM() << ", block_n = " << config->getBlockN();
  int64_t bytes = scratchBytes(*config);
  if (bytes > kMaxScratchBytes)
    return op->emitOpError()
           << "config: block_m = " << config->getBlockM()
           << " and block_n = " << config->getBlockN() << " with D = " << d
           << ", Dv = " << dv << " need " << bytes
           << " bytes of scratch per block; expected at most "
           << kMaxScratchBytes;
  return success();
}

TileBuilder::TileBuilder(ImplicitLocOpBuilder &b, const AttentionParams &params)
    : b(b), params(params) {
  f32 = b.getF32Type();
  elemType = cast<ShapedType>(params.query.getType()).getElementType();
  hq = staticDim(params.query, 1);
  hkv = staticDim(params.key, 1);
  d = staticDim(params.query, 3);
  dv = staticDim(params.value, 3);
  bm = params.config.getBlockM();
  bn = params.config.getBlockN();
  // Softcap and bias act on natural-log scores, so log2(e) can only be
  // folded into the scale when neither is present.
  foldLog2e = !params.softcap && !params.bias;
  qScale = foldLog2e ? params.scale * kLog2e : params.scale;
}

void TileBuilder::emitSizes() {
  sq = memref::DimOp::create(b, params.query, 2);
  sk = memref::DimOp::create(b, params.key, 2);
  mask.kind = params.mask;
  mask.windowLeft = idx(params.window.first);
  mask.windowRight = idx(params.window.second);
  if (params.dropoutP)
    dropout = DropoutParams::emit(b, b.getLoc(), params.dropoutP,
                                  params.dropoutSeed, params.dropoutOffset);
}

Value TileBuilder::dropoutFactor(Value batch, Value head, Value row,
                                 Value col) {
  Type i32 = b.getI32Type();
  auto toI32 = [&](Value v) {
    return arith::IndexCastUIOp::create(b, i32, v).getResult();
  };
  Value bh =
      arith::AddIOp::create(b, arith::MulIOp::create(b, batch, idx(hq)), head);
  Value keep = emitDropoutKeep(b, b.getLoc(), *dropout, toI32(bh), toI32(row),
                               toI32(col));
  return arith::SelectOp::create(b, keep, dropout->scale, f32Const(0.0));
}

Value TileBuilder::idx(int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

Value TileBuilder::f32Const(double v) {
  return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
}

Value TileBuilder::splat(Value scalar, int64_t n) {
  return vector::BroadcastOp::create(b, VectorType::get({n}, f32), scalar);
}

Value TileBuilder::negInf() {
  return f32Const(-std::numeric_limits<double>::infinity());
}

Value TileBuilder::dot(Value x, Value y) {
  return vector::ReductionOp::create(b, vector::CombiningKind::ADD,
                                     arith::MulFOp::create(b, x, y),
                                     arith::FastMathFlags::reassoc);
}

scf::ForOp TileBuilder::loop(Value lb, Value ub, Value step, ValueRange inits,
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

void TileBuilder::forEach(Value lb, Value ub, function_ref<void(Value)> body) {
  loop(lb, ub, idx(1), {}, [&](Value iv, ValueRange) {
    body(iv);
    return SmallVector<Value>{};
  });
}

void TileBuilder::grid(ArrayRef<OpFoldResult> sizes,
                       function_ref<void(ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  gpu::MappingId ids[] = {gpu::MappingId::DimZ, gpu::MappingId::DimY,
                          gpu::MappingId::DimX};
  SmallVector<Attribute> mapping;
  for (gpu::MappingId id : ArrayRef(ids).take_back(sizes.size()))
    mapping.push_back(gpu::GPUBlockMappingAttr::get(ctx, id));
  auto forall =
      scf::ForallOp::create(b, sizes, ValueRange{}, b.getArrayAttr(mapping));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  auto scope = memref::AllocaScopeOp::create(b, TypeRange{});
  Block *scopeBody = b.createBlock(&scope.getBodyRegion());
  b.setInsertionPointToStart(scopeBody);
  body(forall.getInductionVars());
  memref::AllocaScopeReturnOp::create(b, ValueRange{});
}

Value TileBuilder::readRow(Value src, ValueRange indices, int64_t len) {
  Type et = cast<ShapedType>(src.getType()).getElementType();
  Value pad = arith::ConstantOp::create(b, b.getZeroAttr(et));
  Value row = vector::TransferReadOp::create(
      b, VectorType::get({len}, et), src, indices, pad, ArrayRef<bool>{true});
  if (et != f32)
    row = arith::ExtFOp::create(b, VectorType::get({len}, f32), row);
  return row;
}

void TileBuilder::writeRow(Value row, Value dst, ValueRange indices) {
  Type et = cast<ShapedType>(dst.getType()).getElementType();
  if (et != f32)
    row = arith::TruncFOp::create(
        b, VectorType::get(cast<VectorType>(row.getType()).getShape(), et),
        row);
  vector::TransferWriteOp::create(b, row, dst, indices, ArrayRef<bool>{true});
}

Value TileBuilder::biasIndex(Value buf, unsigned dim, Value i) {
  int64_t size = staticDim(buf, dim);
  if (size == 1)
    return idx(0);
  if (!ShapedType::isDynamic(size))
    return i;
  // A dynamic dimension may still be 1 at run time.
  Value dimV = memref::DimOp::create(b, buf, dim);
  Value isOne =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, dimV, idx(1));
  return arith::SelectOp::create(b, isOne, idx(0), i);
}

Value TileBuilder::allocF32Like(Value like) {
  auto type = cast<MemRefType>(like.getType());
  SmallVector<Value> dynSizes;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i)
    if (type.isDynamicDim(i))
      dynSizes.push_back(memref::DimOp::create(b, like, i));
  return memref::AllocOp::create(b, MemRefType::get(type.getShape(), f32),
                                 dynSizes);
}

void TileBuilder::setBiasBatchHead(Value batch, Value head) {
  if (!params.bias)
    return;
  biasB = biasIndex(params.bias, 0, batch);
  biasH = biasIndex(params.bias, 1, head);
}

Value TileBuilder::score(Value dotQK, Value row, Value col, Value key,
                         Value *tanh) {
  Value s = dotQK;
  if (params.softcap) {
    double cap = params.softcap->convertToDouble();
    Value t = math::TanhOp::create(
        b, arith::MulFOp::create(b, s, f32Const(1.0 / cap)));
    if (tanh)
      *tanh = t;
    s = arith::MulFOp::create(b, t, f32Const(cap));
  }
  if (Value bias = params.bias) {
    Value v =
        memref::LoadOp::create(b, bias,
                               ValueRange{biasB, biasH, biasIndex(bias, 2, row),
                                          biasIndex(bias, 3, key)});
    if (v.getType() != f32)
      v = arith::ExtFOp::create(b, f32, v);
    s = arith::AddFOp::create(b, s, v);
  }
  if (!foldLog2e)
    s = arith::MulFOp::create(b, s, f32Const(kLog2e));
  Value visible = emitKeyVisible(b, b.getLoc(), mask, row, col, sq, sk);
  return arith::SelectOp::create(b, visible, s, negInf());
}
