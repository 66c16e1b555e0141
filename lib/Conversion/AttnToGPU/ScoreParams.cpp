//===- ScoreParams.cpp - run-time values of the score transform -----------===//

#include "ScoreParams.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

static_assert(kArgSoftcap == kArgScale + 1 && kBwdSoftcap == kBwdScale + 1 &&
                  kArgWindowRight == kArgScale + 3 &&
                  kBwdWindowRight == kBwdScale + 3,
              "scale, softcap and the window are consecutive arguments");
static_assert(kArgDropoutOffset == kArgDropoutP + 2 &&
                  kBwdDropoutOffset == kBwdDropoutP + 2,
              "dropout_p, the seed and the offset are consecutive arguments");

ScoreParams attn::bindScoreParams(OpBuilder &b, Location loc, ValueRange args,
                                  const KernelSpec &spec, unsigned scaleArg,
                                  unsigned dropoutArg) {
  Value scale = args[scaleArg], softcap = args[scaleArg + 1];
  Value log2e = arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                               APFloat(float(M_LOG2E)));
  ScoreParams p;
  p.scaleLog2 = arith::MulFOp::create(b, loc, scale, log2e);
  if (spec.softcap) {
    p.softcapScale = arith::DivFOp::create(b, loc, scale, softcap);
    p.softcapLog2 = arith::MulFOp::create(b, loc, softcap, log2e);
  }
  p.mask = {spec.mask, args[scaleArg + 2], args[scaleArg + 3]};
  if (spec.dropout)
    p.dropout = DropoutParams::emit(b, loc, args[dropoutArg],
                                    args[dropoutArg + 1], args[dropoutArg + 2]);
  return p;
}
