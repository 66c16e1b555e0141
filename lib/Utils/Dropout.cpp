//===- Dropout.cpp - the dropout mask shared by all lowerings ---*- C++ -*-===//

#include "AttnDialect/Utils/Dropout.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include <cmath>

using namespace mlir;
using namespace mlir::attn;

namespace {
// Philox4x32's multipliers and Weyl key increments (Random123).
constexpr uint32_t kPhiloxM0 = 0xD2511F53, kPhiloxM1 = 0xCD9E8D57;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9, kPhiloxW1 = 0xBB67AE85;
constexpr int kPhiloxRounds = 10;
} // namespace

static Value i32Const(OpBuilder &b, Location loc, uint32_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                      static_cast<int32_t>(v));
}

DropoutParams DropoutParams::emit(OpBuilder &b, Location loc, Value p,
                                  Value seed, Value offset) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto fc = [&](float v) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(v));
  };
  // maxnumf/minnumf also turn a NaN p into 0: nothing dropped.
  Value clamped = arith::MinNumFOp::create(
      b, loc, arith::MaxNumFOp::create(b, loc, p, fc(0.0f)),
      fc(std::nextafter(1.0f, 0.0f)));
  DropoutParams params;
  // p * 2^32 is exact in f32 and below 2^32, so the conversion truncates.
  Value scaled = arith::MulFOp::create(b, loc, clamped, fc(4294967296.0f));
  params.threshold = arith::TruncIOp::create(
      b, loc, i32, arith::FPToUIOp::create(b, loc, i64, scaled));
  params.scale = arith::DivFOp::create(
      b, loc, fc(1.0f), arith::SubFOp::create(b, loc, fc(1.0f), clamped));
  params.key0 = arith::TruncIOp::create(b, loc, i32, seed);
  params.key1 = arith::TruncIOp::create(
      b, loc, i32,
      arith::ShRUIOp::create(b, loc, seed,
                             arith::ConstantIntOp::create(b, loc, i64, 32)));
  params.offset = offset;
  return params;
}

std::array<Value, 4> attn::emitPhilox4x32(OpBuilder &b, Location loc,
                                          std::array<Value, 4> c, Value key0,
                                          Value key1) {
  Value m0 = i32Const(b, loc, kPhiloxM0), m1 = i32Const(b, loc, kPhiloxM1);
  Value w0 = i32Const(b, loc, kPhiloxW0), w1 = i32Const(b, loc, kPhiloxW1);
  auto x = [&](Value a, Value v) {
    return arith::XOrIOp::create(b, loc, a, v).getResult();
  };
  for (int round = 0; round < kPhiloxRounds; ++round) {
    if (round > 0) {
      key0 = arith::AddIOp::create(b, loc, key0, w0);
      key1 = arith::AddIOp::create(b, loc, key1, w1);
    }
    auto p0 = arith::MulUIExtendedOp::create(b, loc, m0, c[0]);
    auto p1 = arith::MulUIExtendedOp::create(b, loc, m1, c[2]);
    c = {x(x(p1.getHigh(), c[1]), key0), p1.getLow(),
         x(x(p0.getHigh(), c[3]), key1), p0.getLow()};
  }
  return c;
}

DropoutCounter attn::getDropoutCounter(OpBuilder &b, Location loc, Value row,
                                       Value col) {
  auto cst = [&](uint32_t v) { return i32Const(b, loc, v); };
  // (16a + 8x + r) -> 8a + r, and x.
  auto split = [&](Value v, Value &low, Value &half) {
    Value tile = arith::ShLIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, v, cst(4)), cst(3));
    low = arith::OrIOp::create(b, loc, tile,
                               arith::AndIOp::create(b, loc, v, cst(7)));
    half = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, v, cst(3)), cst(1));
  };
  DropoutCounter c;
  Value x, y;
  split(row, c.c1, x);
  split(col, c.c0, y);
  c.word =
      arith::OrIOp::create(b, loc, y, arith::ShLIOp::create(b, loc, x, cst(1)));
  return c;
}

Value attn::emitDropoutKeepWord(OpBuilder &b, Location loc,
                                const DropoutParams &params, Value word) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, word,
                               params.threshold);
}

Value attn::emitDropoutKeep(OpBuilder &b, Location loc,
                            const DropoutParams &params, Value bh, Value row,
                            Value col) {
  DropoutCounter c = getDropoutCounter(b, loc, row, col);
  std::array<Value, 4> words = emitPhilox4x32(
      b, loc, {c.c0, c.c1, bh, params.offset}, params.key0, params.key1);
  auto isWord = [&](int32_t i) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c.word,
                                 i32Const(b, loc, i));
  };
  Value w = arith::SelectOp::create(
      b, loc, isWord(0), words[0],
      arith::SelectOp::create(
          b, loc, isWord(1), words[1],
          arith::SelectOp::create(b, loc, isWord(2), words[2], words[3])));
  return emitDropoutKeepWord(b, loc, params, w);
}
