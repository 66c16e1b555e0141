//===- AttnOps.cpp - attn operations ----------------------------*- C++ -*-===//
//
// Verifiers name the operand and what was expected, so a user can fix the
// input without reading the op definition.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/IR/AttnOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Shape checking helpers shared by the forward and backward ops
//===----------------------------------------------------------------------===//

namespace {
/// Symbolic sizes every operand is checked against. A dynamic size stays
/// unknown until an operand fixes it.
struct AttnDims {
  int64_t b = ShapedType::kDynamic, hq = ShapedType::kDynamic,
          hkv = ShapedType::kDynamic, sq = ShapedType::kDynamic,
          sk = ShapedType::kDynamic, d = ShapedType::kDynamic,
          dv = ShapedType::kDynamic;
};

class ShapeChecker {
public:
  explicit ShapeChecker(Operation *op) : op(op) {}

  /// Checks `v` is a ranked shaped value of `rank` and binds each dimension to
  /// the symbolic size in `syms` (named in `layout` for the message).
  LogicalResult check(Value v, StringRef name, StringRef layout,
                      ArrayRef<int64_t *> syms, ArrayRef<StringRef> symNames) {
    auto type = dyn_cast<ShapedType>(v.getType());
    if (!type || !type.hasRank())
      return op->emitOpError() << name << ": expected a ranked tensor or memref "
                               << layout << ", got " << v.getType();
    if (type.getRank() != static_cast<int64_t>(syms.size()))
      return op->emitOpError()
             << name << ": expected rank " << syms.size() << " " << layout
             << ", got rank " << type.getRank() << " (" << v.getType() << ")";
    for (auto [i, sym] : llvm::enumerate(syms)) {
      int64_t size = type.getDimSize(i);
      if (ShapedType::isDynamic(size))
        continue;
      if (ShapedType::isDynamic(*sym)) {
        *sym = size;
        continue;
      }
      if (*sym != size)
        return op->emitOpError()
               << name << ": dimension " << i << " (" << symNames[i]
               << ") is " << size << " but another operand fixes " << symNames[i]
               << " = " << *sym;
    }
    return success();
  }

  /// Bias dimensions are the full size or 1 (broadcast).
  LogicalResult checkBias(Value bias, const AttnDims &dims) {
    auto type = dyn_cast<ShapedType>(bias.getType());
    if (!type || !type.hasRank() || type.getRank() != 4)
      return op->emitOpError()
             << "bias: expected rank 4, broadcastable to [B, Hq, Sq, Sk], got "
             << bias.getType();
    int64_t full[4] = {dims.b, dims.hq, dims.sq, dims.sk};
    const char *names[4] = {"B", "Hq", "Sq", "Sk"};
    for (int i = 0; i < 4; ++i) {
      int64_t size = type.getDimSize(i);
      if (ShapedType::isDynamic(size) || size == 1 ||
          ShapedType::isDynamic(full[i]) || size == full[i])
        continue;
      return op->emitOpError()
             << "bias: dimension " << i << " is " << size
             << ", expected 1 or " << names[i] << " = " << full[i]
             << " to broadcast to [B, Hq, Sq, Sk]";
    }
    return success();
  }

private:
  Operation *op;
};

bool isSupportedElementType(Type t) { return t.isF16() || t.isBF16() || t.isF32(); }

/// Either every operand is a tensor or every operand is a memref.
LogicalResult checkUniformKind(Operation *op, ValueRange values,
                               ArrayRef<StringRef> names, bool &isTensor) {
  std::optional<bool> tensor;
  StringRef first;
  for (auto [v, name] : llvm::zip(values, names)) {
    if (!v)
      continue;
    bool t = isa<TensorType>(v.getType());
    if (!tensor) {
      tensor = t;
      first = name;
    } else if (*tensor != t) {
      return op->emitOpError()
             << name << ": expected a " << (*tensor ? "tensor" : "memref")
             << " like " << first << ", got " << v.getType()
             << " (operands must be all tensors or all memrefs)";
    }
  }
  isTensor = tensor.value_or(false);
  return success();
}

LogicalResult checkElementType(Operation *op, Value v, StringRef name,
                               Type expected) {
  Type t = getElementTypeOrSelf(v.getType());
  if (t != expected)
    return op->emitOpError() << name << ": expected element type " << expected
                             << ", got " << t;
  return success();
}

/// The attributes both ops share: scale, mask/window, softcap.
LogicalResult verifySemanticAttrs(Operation *op, std::optional<float> scale,
                                  MaskKind mask,
                                  std::optional<ArrayRef<int64_t>> window,
                                  std::optional<float> softcap) {
  if (scale && (!std::isfinite(*scale) || *scale <= 0.0f))
    return op->emitOpError() << "scale: expected a finite positive value, got "
                             << *scale;
  if (softcap && (!std::isfinite(*softcap) || *softcap <= 0.0f))
    return op->emitOpError()
           << "softcap: expected a finite positive value, got " << *softcap;
  if (mask == MaskKind::SlidingWindow) {
    if (!window)
      return op->emitOpError()
             << "window: mask sliding_window requires window = array<i64: "
                "left, right>";
    if (window->size() != 2)
      return op->emitOpError()
             << "window: expected 2 values [left, right], got "
             << window->size();
    if ((*window)[0] < 0 && (*window)[1] < 0)
      return op->emitOpError()
             << "window: both bounds unbounded; use mask none instead";
  } else if (window) {
    return op->emitOpError() << "window: only valid with mask sliding_window, "
                                "but mask is "
                             << stringifyMaskKind(mask);
  }
  return success();
}

/// Checks the tensor-form results match the inits, or that the memref form
/// has none.
LogicalResult checkResults(Operation *op, bool isTensor, ValueRange inits,
                           TypeRange results) {
  if (!isTensor) {
    if (!results.empty())
      return op->emitOpError()
             << "results: the memref form has no results, got "
             << results.size();
    return success();
  }
  if (results.size() != inits.size())
    return op->emitOpError() << "results: expected " << inits.size()
                             << " results (one per init), got "
                             << results.size();
  for (auto [i, pair] : llvm::enumerate(llvm::zip(inits, results))) {
    auto [init, res] = pair;
    if (init.getType() != res)
      return op->emitOpError() << "results: result " << i << " has type "
                               << res << " but its init has type "
                               << init.getType();
  }
  return success();
}

LogicalResult checkForwardShapes(Operation *op, ShapeChecker &sc,
                                 AttnDims &d, Value q, Value k, Value v,
                                 Value out) {
  if (failed(sc.check(q, "query", "[B, Hq, Sq, D]", {&d.b, &d.hq, &d.sq, &d.d},
                      {"B", "Hq", "Sq", "D"})) ||
      failed(sc.check(k, "key", "[B, Hkv, Sk, D]", {&d.b, &d.hkv, &d.sk, &d.d},
                      {"B", "Hkv", "Sk", "D"})) ||
      failed(sc.check(v, "value", "[B, Hkv, Sk, Dv]",
                      {&d.b, &d.hkv, &d.sk, &d.dv}, {"B", "Hkv", "Sk", "Dv"})) ||
      failed(sc.check(out, "output", "[B, Hq, Sq, Dv]",
                      {&d.b, &d.hq, &d.sq, &d.dv}, {"B", "Hq", "Sq", "Dv"})))
    return failure();
  auto requireStatic = [&](int64_t size, StringRef sym,
                           StringRef where) -> LogicalResult {
    if (ShapedType::isDynamic(size))
      return op->emitOpError() << where << ": " << sym
                               << " must be static";
    if (size <= 0)
      return op->emitOpError() << where << ": " << sym
                               << " must be positive, got " << size;
    return success();
  };
  if (failed(requireStatic(d.hq, "Hq (dimension 1)", "query")) ||
      failed(requireStatic(d.hkv, "Hkv (dimension 1)", "key")) ||
      failed(requireStatic(d.d, "head dim D (dimension 3)", "query")) ||
      failed(requireStatic(d.dv, "head dim Dv (dimension 3)", "value")))
    return failure();
  if (d.hq % d.hkv != 0)
    return op->emitOpError() << "key: query heads Hq = " << d.hq
                             << " must be a multiple of key/value heads Hkv = "
                             << d.hkv;
  Type et = getElementTypeOrSelf(q.getType());
  if (!isSupportedElementType(et))
    return op->emitOpError() << "query: expected element type f16, bf16 or "
                                "f32, got "
                             << et;
  if (failed(checkElementType(op, k, "key", et)) ||
      failed(checkElementType(op, v, "value", et)) ||
      failed(checkElementType(op, out, "output", et)))
    return failure();
  return success();
}

LogicalResult checkBiasOperand(Operation *op, ShapeChecker &sc, Value bias,
                               const AttnDims &d, Type et) {
  if (!bias)
    return success();
  if (failed(sc.checkBias(bias, d)))
    return failure();
  Type bt = getElementTypeOrSelf(bias.getType());
  if (bt != et && !bt.isF32())
    return op->emitOpError() << "bias: expected element type " << et
                             << " or f32, got " << bt;
  return success();
}

LogicalResult checkLse(Operation *op, ShapeChecker &sc, Value lse,
                       AttnDims &d) {
  if (failed(sc.check(lse, "lse", "[B, Hq, Sq]", {&d.b, &d.hq, &d.sq},
                      {"B", "Hq", "Sq"})))
    return failure();
  return checkElementType(op, lse, "lse", Float32Type::get(op->getContext()));
}

} // namespace

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

float AttentionOp::getScaleValue() {
  if (auto s = getScale())
    return s->convertToFloat();
  auto qType = cast<ShapedType>(getQuery().getType());
  return 1.0f / std::sqrt(static_cast<float>(qType.getDimSize(3)));
}

std::pair<int64_t, int64_t> AttentionOp::getWindowBounds() {
  if (auto w = getWindow())
    return {(*w)[0], (*w)[1]};
  return {-1, -1};
}

MutableOperandRange AttentionOp::getDpsInitsMutable() {
  // output and lse are adjacent operands.
  return MutableOperandRange(getOperation(),
                             getOutputMutable().getOperandNumber(),
                             getLse() ? 2 : 1);
}

LogicalResult AttentionOp::verify() {
  Operation *op = getOperation();
  bool isTensor = false;
  if (failed(checkUniformKind(
          op, {getQuery(), getKey(), getValue(), getBias(), getOutput(), getLse()},
          {"query", "key", "value", "bias", "output", "lse"}, isTensor)))
    return failure();
  ShapeChecker sc(op);
  AttnDims d;
  if (failed(checkForwardShapes(op, sc, d, getQuery(), getKey(), getValue(),
                                getOutput())))
    return failure();
  if (getLse() && failed(checkLse(op, sc, getLse(), d)))
    return failure();
  if (failed(checkBiasOperand(op, sc, getBias(), d,
                              getElementTypeOrSelf(getQuery().getType()))))
    return failure();
  std::optional<float> scale, softcap;
  if (auto s = getScale())
    scale = s->convertToFloat();
  if (auto s = getSoftcap())
    softcap = s->convertToFloat();
  if (failed(verifySemanticAttrs(op, scale, getMask(), getWindow(), softcap)))
    return failure();
  SmallVector<Value> inits = {getOutput()};
  if (getLse())
    inits.push_back(getLse());
  return checkResults(op, isTensor, inits, getResultTypes());
}

void AttentionOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  for (OpOperand &operand : getOperation()->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    bool isInit = operand.getOperandNumber() >=
                  getOutputMutable().getOperandNumber();
    if (isInit)
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
    else
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}

//===----------------------------------------------------------------------===//
// AttentionGradOp
//===----------------------------------------------------------------------===//

float AttentionGradOp::getScaleValue() {
  if (auto s = getScale())
    return s->convertToFloat();
  auto qType = cast<ShapedType>(getQuery().getType());
  return 1.0f / std::sqrt(static_cast<float>(qType.getDimSize(3)));
}

MutableOperandRange AttentionGradOp::getDpsInitsMutable() {
  return MutableOperandRange(getOperation(),
                             getGradQueryMutable().getOperandNumber(), 3);
}

LogicalResult AttentionGradOp::verify() {
  Operation *op = getOperation();
  bool isTensor = false;
  if (failed(checkUniformKind(
          op,
          {getQuery(), getKey(), getValue(), getOutput(), getGradOutput(),
           getLse(), getBias(), getGradQuery(), getGradKey(), getGradValue()},
          {"query", "key", "value", "output", "grad_output", "lse", "bias",
           "grad_query", "grad_key", "grad_value"},
          isTensor)))
    return failure();
  ShapeChecker sc(op);
  AttnDims d;
  if (failed(checkForwardShapes(op, sc, d, getQuery(), getKey(), getValue(),
                                getOutput())))
    return failure();
  Type et = getElementTypeOrSelf(getQuery().getType());
  if (failed(sc.check(getGradOutput(), "grad_output", "[B, Hq, Sq, Dv]",
                      {&d.b, &d.hq, &d.sq, &d.dv}, {"B", "Hq", "Sq", "Dv"})) ||
      failed(checkElementType(op, getGradOutput(), "grad_output", et)) ||
      failed(checkLse(op, sc, getLse(), d)) ||
      failed(sc.check(getGradQuery(), "grad_query", "[B, Hq, Sq, D]",
                      {&d.b, &d.hq, &d.sq, &d.d}, {"B", "Hq", "Sq", "D"})) ||
      failed(sc.check(getGradKey(), "grad_key", "[B, Hkv, Sk, D]",
                      {&d.b, &d.hkv, &d.sk, &d.d}, {"B", "Hkv", "Sk", "D"})) ||
      failed(sc.check(getGradValue(), "grad_value", "[B, Hkv, Sk, Dv]",
                      {&d.b, &d.hkv, &d.sk, &d.dv}, {"B", "Hkv", "Sk", "Dv"})))
    return failure();
  for (auto [v, name] :
       llvm::zip(ValueRange{getGradQuery(), getGradKey(), getGradValue()},
                 ArrayRef<StringRef>{"grad_query", "grad_key", "grad_value"}))
    if (failed(checkElementType(op, v, name, et)))
      return failure();
  if (failed(checkBiasOperand(op, sc, getBias(), d, et)))
    return failure();
  std::optional<float> scale, softcap;
  if (auto s = getScale())
    scale = s->convertToFloat();
  if (auto s = getSoftcap())
    softcap = s->convertToFloat();
  if (failed(verifySemanticAttrs(op, scale, getMask(), getWindow(), softcap)))
    return failure();
  return checkResults(op, isTensor,
                      {getGradQuery(), getGradKey(), getGradValue()},
                      getResultTypes());
}

void AttentionGradOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  unsigned firstInit = getGradQueryMutable().getOperandNumber();
  for (OpOperand &operand : getOperation()->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    if (operand.getOperandNumber() >= firstInit)
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
    else
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}

#define GET_OP_CLASSES
#include "AttnDialect/IR/AttnOps.cpp.inc"
