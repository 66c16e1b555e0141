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
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <cstdint>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Shape checking helpers shared by the forward and backward ops
//===----------------------------------------------------------------------===//

namespace {
/// The largest static size accepted for any dimension: the kernel ABI passes
/// extents as i32 (docs/BundleFormat.md), and keeping sizes this small also
/// keeps every product the lowerings form (rows * cols, offsets) inside i64.
constexpr int64_t kMaxDimSize = std::numeric_limits<int32_t>::max();

/// One symbolic size (B, Hq, ...) every operand is checked against. It stays
/// dynamic until an operand fixes it.
struct Sym {
  StringRef name;
  bool mustBeStatic;
  /// Head counts and head dims are never 0 where static.
  bool mustBePositive = mustBeStatic;
  int64_t size = ShapedType::kDynamic;
};

/// The sizes of an attention problem. Head counts must be static because
/// they fix the query-head to key-head mapping; head dims may be dynamic (a
/// kernel with a config's max_head_dim serves any up to it), and so may
/// batch and sequence lengths.
struct AttnDims {
  Sym b{"B", false}, hq{"Hq", true}, hkv{"Hkv", true}, sq{"Sq", false},
      sk{"Sk", false}, d{"D", false, true}, dv{"Dv", false, true};
};

class ShapeChecker {
public:
  explicit ShapeChecker(Operation *op) : op(op) {}

  /// Checks `v` is a ranked shaped value of rank syms.size() and binds each
  /// dimension to its symbolic size. `layout` spells the expected shape for
  /// the message, e.g. "[B, Hq, Sq, D]".
  LogicalResult check(Value v, StringRef name, StringRef layout,
                      ArrayRef<Sym *> syms) {
    auto type = dyn_cast<ShapedType>(v.getType());
    if (!type || !type.hasRank())
      return op->emitOpError()
             << name << ": expected a ranked tensor or memref " << layout
             << ", got " << v.getType();
    if (type.getRank() != static_cast<int64_t>(syms.size()))
      return op->emitOpError()
             << name << ": expected rank " << syms.size() << " " << layout
             << ", got rank " << type.getRank() << " (" << v.getType() << ")";
    for (auto [i, sym] : llvm::enumerate(syms)) {
      int64_t size = type.getDimSize(i);
      if (ShapedType::isDynamic(size)) {
        if (sym->mustBeStatic)
          return op->emitOpError()
                 << name << ": dimension " << i << " (" << sym->name
                 << ") must be static, got " << v.getType();
        continue;
      }
      if (size > kMaxDimSize)
        return op->emitOpError()
               << name << ": dimension " << i << " (" << sym->name << ") is "
               << size << ", expected at most " << kMaxDimSize;
      if (sym->mustBePositive && size == 0)
        return op->emitOpError() << name << ": dimension " << i << " ("
                                 << sym->name << ") must be positive, got 0";
      if (ShapedType::isDynamic(sym->size)) {
        sym->size = size;
        continue;
      }
      if (sym->size != size)
        return op->emitOpError()
               << name << ": dimension " << i << " (" << sym->name << ") is "
               << size << " but another operand fixes " << sym->name << " = "
               << sym->size;
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
    const Sym *full[4] = {&dims.b, &dims.hq, &dims.sq, &dims.sk};
    for (int i = 0; i < 4; ++i) {
      int64_t size = type.getDimSize(i);
      if (ShapedType::isDynamic(size) || size == 1)
        continue;
      if (size > kMaxDimSize)
        return op->emitOpError() << "bias: dimension " << i << " is " << size
                                 << ", expected at most " << kMaxDimSize;
      if (ShapedType::isDynamic(full[i]->size) || size == full[i]->size)
        continue;
      return op->emitOpError()
             << "bias: dimension " << i << " is " << size << ", expected 1 or "
             << full[i]->name << " = " << full[i]->size
             << " to broadcast to [B, Hq, Sq, Sk]";
    }
    return success();
  }

private:
  Operation *op;
};

bool isSupportedElementType(Type t) {
  return t.isF16() || t.isBF16() || t.isF32();
}

/// Every operand is a tensor, or every operand is a memref: the op is either
/// in tensor (value) form or in buffer form, never half of each.
LogicalResult checkUniformKind(Operation *op, ArrayRef<Value> values,
                               ArrayRef<StringRef> names, bool &isTensor) {
  std::optional<bool> tensor;
  StringRef first;
  for (auto [v, name] : llvm::zip(values, names)) {
    if (!v)
      continue;
    Type type = v.getType();
    if (!isa<TensorType, BaseMemRefType>(type))
      return op->emitOpError()
             << name << ": expected a tensor or memref, got " << type;
    bool t = isa<TensorType>(type);
    if (!tensor) {
      tensor = t;
      first = name;
    } else if (*tensor != t) {
      return op->emitOpError()
             << name << ": expected a " << (*tensor ? "tensor" : "memref")
             << " like " << first << ", got " << type
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
    return op->emitOpError()
           << name << ": expected element type " << expected << ", got " << t;
  return success();
}

/// True when `attr` holds a finite value > 0.
bool isFinitePositive(FloatAttr attr) {
  const APFloat &v = attr.getValue();
  return v.isFiniteNonZero() && !v.isNegative();
}

/// The attributes both ops share: scale, mask/window, softcap.
LogicalResult verifySemanticAttrs(Operation *op, FloatAttr scale, MaskKind mask,
                                  std::optional<ArrayRef<int64_t>> window,
                                  FloatAttr softcap) {
  // A zero or negative scale would flip or flatten the softmax; NaN and inf
  // poison every row. None of them is a meaningful attention. The attribute
  // is printed as written so that NaN and inf read back unambiguously.
  if (scale && !isFinitePositive(scale))
    return op->emitOpError()
           << "scale: expected a finite positive f32, got " << scale;
  if (softcap && !isFinitePositive(softcap))
    return op->emitOpError()
           << "softcap: expected a finite positive f32, got " << softcap;
  if (mask != MaskKind::SlidingWindow) {
    if (window)
      return op->emitOpError()
             << "window: only valid with mask sliding_window, but mask is "
             << stringifyMaskKind(mask);
    return success();
  }
  if (!window)
    return op->emitOpError()
           << "window: mask sliding_window requires window = array<i64: "
              "left, right>";
  if (window->size() != 2)
    return op->emitOpError()
           << "window: expected 2 values [left, right], got " << window->size();
  // Bounds travel as i32 (docs/BundleFormat.md); a value outside i32 would
  // silently change meaning when truncated (INT64_MIN would become 0).
  constexpr int64_t kMinBound = std::numeric_limits<int32_t>::min();
  for (auto [i, bound] : llvm::enumerate(*window))
    if (bound > kMaxDimSize || bound < kMinBound)
      return op->emitOpError()
             << "window: " << (i == 0 ? "left" : "right") << " bound is "
             << bound << ", expected a value in [" << kMinBound << ", "
             << kMaxDimSize << "] (negative means unbounded)";
  if ((*window)[0] < 0 && (*window)[1] < 0)
    return op->emitOpError()
           << "window: both bounds are unbounded (negative); use mask none";
  return success();
}

/// Checks the tensor-form results match the inits, or that the memref form
/// has none. Runs before DestinationStyleOpInterface's own (less specific)
/// check, which is a region verifier.
LogicalResult checkResults(Operation *op, bool isTensor, ArrayRef<Value> inits,
                           ArrayRef<StringRef> initNames, TypeRange results) {
  if (!isTensor) {
    if (!results.empty())
      return op->emitOpError()
             << "results: the memref form has no results, got "
             << results.size();
    return success();
  }
  if (results.size() != inits.size())
    return op->emitOpError()
           << "results: expected " << inits.size()
           << " (one per init: " << llvm::join(initNames, ", ") << "), got "
           << results.size();
  for (auto [i, init, name, res] : llvm::enumerate(inits, initNames, results)) {
    if (init.getType() != res)
      return op->emitOpError()
             << "results: result " << i << " has type " << res
             << " but its init " << name << " has type " << init.getType();
  }
  return success();
}

/// `pages`, when given, holds the sizes of a paged key/value cache: key and
/// value are [num_pages, Hkv, page_size, D] rather than [B, Hkv, Sk, D].
LogicalResult checkForwardShapes(Operation *op, ShapeChecker &sc, AttnDims &d,
                                 Value q, Value k, Value v, Value out,
                                 std::pair<Sym, Sym> *pages = nullptr) {
  Sym *kb = pages ? &pages->first : &d.b, *ks = pages ? &pages->second : &d.sk;
  StringRef kLayout =
                pages ? "[num_pages, Hkv, page_size, D]" : "[B, Hkv, Sk, D]",
            vLayout =
                pages ? "[num_pages, Hkv, page_size, Dv]" : "[B, Hkv, Sk, Dv]";
  if (failed(
          sc.check(q, "query", "[B, Hq, Sq, D]", {&d.b, &d.hq, &d.sq, &d.d})) ||
      failed(sc.check(k, "key", kLayout, {kb, &d.hkv, ks, &d.d})) ||
      failed(sc.check(v, "value", vLayout, {kb, &d.hkv, ks, &d.dv})) ||
      failed(sc.check(out, "output", "[B, Hq, Sq, Dv]",
                      {&d.b, &d.hq, &d.sq, &d.dv})))
    return failure();
  if (d.hq.size % d.hkv.size != 0)
    return op->emitOpError()
           << "key: query heads Hq = " << d.hq.size
           << " must be a multiple of key/value heads Hkv = " << d.hkv.size;
  Type et = getElementTypeOrSelf(q.getType());
  if (!isSupportedElementType(et))
    return op->emitOpError()
           << "query: expected element type f16, bf16 or f32, got " << et;
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
    return op->emitOpError()
           << "bias: expected element type " << et << " or f32, got " << bt;
  return success();
}

LogicalResult checkLse(Operation *op, ShapeChecker &sc, Value lse,
                       AttnDims &d) {
  if (failed(sc.check(lse, "lse", "[B, Hq, Sq]", {&d.b, &d.hq, &d.sq})))
    return failure();
  return checkElementType(op, lse, "lse", Float32Type::get(op->getContext()));
}

template <typename OpTy> LogicalResult verifyAttrsOf(OpTy op) {
  return verifySemanticAttrs(op, op.getScaleAttr(), op.getMask(),
                             op.getWindow(), op.getSoftcapAttr());
}

/// dropout_p, dropout_seed and dropout_offset come together (the custom
/// form has one `dropout(...)` group; the generic form could split them).
template <typename OpTy> LogicalResult checkDropout(OpTy op) {
  int n = !!op.getDropoutP() + !!op.getDropoutSeed() + !!op.getDropoutOffset();
  if (n != 0 && n != 3)
    return op.emitOpError() << "dropout: expected dropout_p, dropout_seed and "
                               "dropout_offset together, got "
                            << n << " of them";
  return success();
}

template <typename OpTy> float getDefaultedScale(OpTy op) {
  if (auto s = op.getScale())
    return s->convertToFloat();
  auto qType = cast<ShapedType>(op.getQuery().getType());
  // A dynamic D has no scale before run time: callers check hasStaticScale.
  if (qType.isDynamicDim(3))
    return std::numeric_limits<float>::quiet_NaN();
  return 1.0f / std::sqrt(static_cast<float>(qType.getDimSize(3)));
}

template <typename OpTy>
std::pair<int64_t, int64_t> getWindowBoundsOf(OpTy op) {
  if (auto w = op.getWindow(); w && w->size() == 2)
    return {(*w)[0], (*w)[1]};
  return {-1, -1};
}

/// grad_bias has bias's shape (dimensions equal where both are static) and
/// bias's element type or f32.
LogicalResult checkGradBias(Operation *op, Value gradBias, Value bias) {
  if (!gradBias)
    return success();
  if (!bias)
    return op->emitOpError()
           << "grad_bias: requires a bias operand (it is the gradient of "
              "bias)";
  auto gType = cast<ShapedType>(gradBias.getType());
  auto bType = cast<ShapedType>(bias.getType());
  if (!gType.hasRank() || gType.getRank() != bType.getRank())
    return op->emitOpError()
           << "grad_bias: expected the shape of bias " << bias.getType()
           << ", got " << gradBias.getType();
  for (int64_t i = 0, e = gType.getRank(); i < e; ++i) {
    int64_t g = gType.getDimSize(i), bs = bType.getDimSize(i);
    if (!ShapedType::isDynamic(g) && !ShapedType::isDynamic(bs) && g != bs)
      return op->emitOpError()
             << "grad_bias: dimension " << i << " is " << g << " but bias has "
             << bs << " (grad_bias has the shape of bias)";
  }
  Type gt = gType.getElementType(), bt = bType.getElementType();
  if (gt != bt && !gt.isF32())
    return op->emitOpError() << "grad_bias: expected element type " << bt
                             << " (bias's) or f32, got " << gt;
  return success();
}

/// A rank-1 or rank-2 i32 operand of the serving forms, its sizes bound to
/// `syms`.
LogicalResult checkIndexOperand(Operation *op, ShapeChecker &sc, Value v,
                                StringRef name, StringRef layout,
                                ArrayRef<Sym *> syms) {
  if (failed(sc.check(v, name, layout, syms)))
    return failure();
  return checkElementType(op, v, name, IntegerType::get(op->getContext(), 32));
}

/// The operands of the serving forms (cu_seqlens_q/k, seqlens_k,
/// block_table): which combinations exist and their shapes.
LogicalResult checkSeqLayout(AttentionOp op, ShapeChecker &sc, AttnDims &d) {
  Value cuQ = op.getCuSeqlensQ(), cuK = op.getCuSeqlensK(),
        lens = op.getSeqlensK(), table = op.getBlockTable();
  if (!cuQ && !cuK && !lens && !table)
    return success();
  if (op.getBias())
    return op.emitOpError()
           << "bias: not supported with cu_seqlens, seqlens_k or block_table";
  if (table && !lens)
    return op.emitOpError()
           << "block_table: requires seqlens_k (the keys each batch uses)";
  if (!cuQ != !cuK)
    return op.emitOpError()
           << (cuQ ? "cu_seqlens_k" : "cu_seqlens_q")
           << ": missing; cu_seqlens_q and cu_seqlens_k come together";
  if (cuQ && lens)
    return op.emitOpError() << "seqlens_k: not supported with cu_seqlens "
                               "(a packed batch has its key offsets)";
  if (cuQ) {
    Sym n{"N + 1", false};
    if (failed(
            checkIndexOperand(op, sc, cuQ, "cu_seqlens_q", "[N + 1]", {&n})) ||
        failed(checkIndexOperand(op, sc, cuK, "cu_seqlens_k", "[N + 1]", {&n})))
      return failure();
    if (n.size == 0)
      return op.emitOpError()
             << "cu_seqlens_q: expected at least one offset, got 0";
    if (d.b.size != 1)
      return op.emitOpError()
             << "query: the packed form (cu_seqlens) expects a static batch "
                "B = 1, got "
             << op.getQuery().getType();
    return success();
  }
  Sym pages{"P", false};
  if (failed(checkIndexOperand(op, sc, lens, "seqlens_k", "[B]", {&d.b})))
    return failure();
  if (table && failed(checkIndexOperand(op, sc, table, "block_table", "[B, P]",
                                        {&d.b, &pages})))
    return failure();
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

float AttentionOp::getScaleValue() { return getDefaultedScale(*this); }

std::pair<int64_t, int64_t> AttentionOp::getWindowBounds() {
  return getWindowBoundsOf(*this);
}

MutableOperandRange AttentionOp::getDpsInitsMutable() {
  // output and lse are adjacent operands.
  return MutableOperandRange(
      getOperation(), getOutputMutable().getOperandNumber(), getLse() ? 2 : 1);
}

SeqLayout AttentionOp::getSeqLayout() {
  if (getBlockTable())
    return SeqLayout::Paged;
  if (getSeqlensK())
    return SeqLayout::KVCache;
  if (getCuSeqlensQ() || getCuSeqlensK())
    return SeqLayout::Varlen;
  return SeqLayout::Dense;
}

LogicalResult AttentionOp::verify() {
  Operation *op = getOperation();
  bool isTensor = false;
  if (failed(checkUniformKind(op,
                              {getQuery(), getKey(), getValue(), getBias(),
                               getCuSeqlensQ(), getCuSeqlensK(), getSeqlensK(),
                               getBlockTable(), getOutput(), getLse()},
                              {"query", "key", "value", "bias", "cu_seqlens_q",
                               "cu_seqlens_k", "seqlens_k", "block_table",
                               "output", "lse"},
                              isTensor)))
    return failure();
  ShapeChecker sc(op);
  AttnDims d;
  std::pair<Sym, Sym> pages{{"num_pages", false}, {"page_size", false}};
  if (failed(checkForwardShapes(op, sc, d, getQuery(), getKey(), getValue(),
                                getOutput(),
                                getBlockTable() ? &pages : nullptr)))
    return failure();
  if (getLse() && failed(checkLse(op, sc, getLse(), d)))
    return failure();
  if (failed(checkSeqLayout(*this, sc, d)) || failed(checkDropout(*this)))
    return failure();
  if (hasDropout() && getSeqLayout() != SeqLayout::Dense)
    return emitOpError() << "dropout: not supported with cu_seqlens, "
                            "seqlens_k or block_table";
  if (failed(checkBiasOperand(op, sc, getBias(), d,
                              getElementTypeOrSelf(getQuery().getType()))))
    return failure();
  if (failed(verifyAttrsOf(*this)))
    return failure();
  SmallVector<Value> inits = {getOutput()};
  SmallVector<StringRef> initNames = {"output"};
  if (getLse()) {
    inits.push_back(getLse());
    initNames.push_back("lse");
  }
  return checkResults(op, isTensor, inits, initNames, getResultTypes());
}

void AttentionOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  for (OpOperand &operand : getOperation()->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    bool isInit =
        operand.getOperandNumber() >= getOutputMutable().getOperandNumber();
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

float AttentionGradOp::getScaleValue() { return getDefaultedScale(*this); }

std::pair<int64_t, int64_t> AttentionGradOp::getWindowBounds() {
  return getWindowBoundsOf(*this);
}

MutableOperandRange AttentionGradOp::getDpsInitsMutable() {
  // grad_query, grad_key, grad_value and grad_bias are adjacent operands.
  return MutableOperandRange(getOperation(),
                             getGradQueryMutable().getOperandNumber(),
                             getGradBias() ? 4 : 3);
}

LogicalResult AttentionGradOp::verify() {
  Operation *op = getOperation();
  bool isTensor = false;
  if (failed(checkUniformKind(
          op,
          {getQuery(), getKey(), getValue(), getOutput(), getGradOutput(),
           getLse(), getBias(), getGradQuery(), getGradKey(), getGradValue(),
           getGradBias()},
          {"query", "key", "value", "output", "grad_output", "lse", "bias",
           "grad_query", "grad_key", "grad_value", "grad_bias"},
          isTensor)))
    return failure();
  ShapeChecker sc(op);
  AttnDims d;
  if (failed(checkForwardShapes(op, sc, d, getQuery(), getKey(), getValue(),
                                getOutput())))
    return failure();
  Type et = getElementTypeOrSelf(getQuery().getType());
  if (failed(sc.check(getGradOutput(), "grad_output", "[B, Hq, Sq, Dv]",
                      {&d.b, &d.hq, &d.sq, &d.dv})) ||
      failed(checkElementType(op, getGradOutput(), "grad_output", et)) ||
      failed(checkLse(op, sc, getLse(), d)) ||
      failed(sc.check(getGradQuery(), "grad_query", "[B, Hq, Sq, D]",
                      {&d.b, &d.hq, &d.sq, &d.d})) ||
      failed(sc.check(getGradKey(), "grad_key", "[B, Hkv, Sk, D]",
                      {&d.b, &d.hkv, &d.sk, &d.d})) ||
      failed(sc.check(getGradValue(), "grad_value", "[B, Hkv, Sk, Dv]",
                      {&d.b, &d.hkv, &d.sk, &d.dv})))
    return failure();
  // Named arrays rather than braced temporaries in the range-for: those
  // would die before the loop body runs.
  Value grads[] = {getGradQuery(), getGradKey(), getGradValue()};
  StringRef gradNames[] = {"grad_query", "grad_key", "grad_value"};
  for (auto [v, name] : llvm::zip(grads, gradNames))
    if (failed(checkElementType(op, v, name, et)))
      return failure();
  if (failed(checkBiasOperand(op, sc, getBias(), d, et)) ||
      failed(checkGradBias(op, getGradBias(), getBias())) ||
      failed(checkDropout(*this)))
    return failure();
  if (failed(verifyAttrsOf(*this)))
    return failure();
  SmallVector<Value> inits(std::begin(grads), std::end(grads));
  SmallVector<StringRef> initNames(std::begin(gradNames), std::end(gradNames));
  if (getGradBias()) {
    inits.push_back(getGradBias());
    initNames.push_back("grad_bias");
  }
  return checkResults(op, isTensor, inits, initNames, getResultTypes());
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
