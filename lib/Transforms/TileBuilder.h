//===- TileBuilder.h - what the forward and backward tilers share -*- C++
//-*-===//
//
// Private to the attn-tile pass. The forward (TileAttention.cpp) and
// backward (TileAttentionGrad.cpp) loop nests recompute the same scores, so
// the score of one (query row, key) pair -- scale, softcap, bias, mask, exp2
// domain -- is built here once, together with the small loop-nest helpers
// both use and the checks on the config they read.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_TILEBUILDER_H
#define ATTN_LIB_TRANSFORMS_TILEBUILDER_H

#include "AttnDialect/IR/AttnOps.h"
#include "AttnDialect/Utils/Dropout.h"
#include "AttnDialect/Utils/MaskUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <optional>

namespace mlir {
namespace attn {

/// Per-grid-point scratch above this is refused: on the host it lives on the
/// stack, on GPUs in registers/private memory.
constexpr int64_t kMaxScratchBytes = 1 << 20;
constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;

/// The static size of dimension `i` of a shaped value.
int64_t staticDim(Value v, unsigned i);

/// The checks both tilers make before rewriting anything: the op is in
/// memref form (`init` names its first init for the message) and carries a
/// config with positive block sizes whose per-grid-point scratch (in bytes,
/// for head dims `d` and `dv`) fits kMaxScratchBytes.
LogicalResult checkTileConfig(Operation *op, bool isTensorForm, StringRef init,
                              std::optional<ConfigAttr> config, int64_t d,
                              int64_t dv,
                              function_ref<int64_t(ConfigAttr)> scratchBytes);

/// The semantics both ops share, read from either.
struct AttentionParams {
  Value query, key, value, bias;
  double scale;
  std::optional<APFloat> softcap;
  MaskKind mask;
  std::pair<int64_t, int64_t> window;
  ConfigAttr config;
  /// The dropout operands (f32, i64, i32); null without dropout.
  Value dropoutP, dropoutSeed, dropoutOffset;

  template <typename OpTy> static AttentionParams of(OpTy op) {
    return {op.getQuery(),    op.getKey(),          op.getValue(),
            op.getBias(),     op.getScaleValue(),   op.getSoftcap(),
            op.getMask(),     op.getWindowBounds(), *op.getConfig(),
            op.getDropoutP(), op.getDropoutSeed(),  op.getDropoutOffset()};
  }
};

/// Builds the pieces of a FlashAttention loop nest on memrefs.
class TileBuilder {
public:
  TileBuilder(ImplicitLocOpBuilder &b, const AttentionParams &params);

  /// Emits Sq, Sk and the mask bounds at the current insertion point; the
  /// other members need no IR.
  void emitSizes();

  /// One score, as the forward op defines it and every tiler recomputes it:
  /// `dot` is q.k with q already multiplied by queryScale(); then softcap,
  /// bias (at [row, key]), log2(e) unless folded into the scale, and the
  /// mask of (row, col) (col >= Sk is masked too). The result is in the
  /// exp2 domain, -inf where masked. With softcap, `*tanh` receives
  /// tanh(scale * q.k / softcap), whose 1 - tanh^2 is the cap's derivative.
  Value score(Value dot, Value row, Value col, Value key,
              Value *tanh = nullptr);
  /// Binds the bias's batch and head indices for the following score()s.
  void setBiasBatchHead(Value batch, Value head);
  /// What dropout multiplies probability (row, col) of (batch, head) by:
  /// 1 / (1 - p) where kept, 0 where dropped (f32; indices are index).
  Value dropoutFactor(Value batch, Value head, Value row, Value col);

protected:
  Value idx(int64_t v);
  Value f32Const(double v);
  Value splat(Value scalar, int64_t n);
  Value negInf();
  /// Sum of the lanes of a * b, reassociable (a tree, not a chain).
  Value dot(Value a, Value b);

  using BodyFn = function_ref<SmallVector<Value>(Value, ValueRange)>;
  /// An scf.for whose body `body` builds with `b` and whose yielded values
  /// it returns.
  scf::ForOp loop(Value lb, Value ub, Value step, ValueRange inits,
                  BodyFn body);
  /// for (iv = lb; iv < ub; ++iv) body(iv), nothing carried.
  void forEach(Value lb, Value ub, function_ref<void(Value)> body);
  /// An scf.forall over `sizes` mapped to GPU blocks (z, y, x for three
  /// sizes), whose body, built by `body` inside an alloca scope, frees its
  /// scratch at the end of every grid point once the grid becomes a
  /// sequential loop on the host.
  void grid(ArrayRef<OpFoldResult> sizes, function_ref<void(ValueRange)> body);

  /// Reads `len` contiguous elements of the last dimension at `indices`,
  /// extended to f32.
  Value readRow(Value src, ValueRange indices, int64_t len);
  /// Writes the f32 vector `row` at `indices`, rounded to `dst`'s element
  /// type.
  void writeRow(Value row, Value dst, ValueRange indices);
  /// Index of dimension `dim` of the bias-shaped `buf` for index `i` of the
  /// full [B, Hq, Sq, Sk] problem: 0 where `buf` broadcasts.
  Value biasIndex(Value buf, unsigned dim, Value i);
  /// A fresh f32 buffer shaped like the memref `like`.
  Value allocF32Like(Value like);

  ImplicitLocOpBuilder &b;
  AttentionParams params;
  Type f32, elemType;
  int64_t hq, hkv, d, dv, bm, bn;
  /// log2(e) is folded into the scale when no softcap or bias needs the
  /// natural-log score first.
  bool foldLog2e;
  /// What q is multiplied by before the dot product.
  double qScale;
  MaskParams mask;
  Value sq, sk;
  /// The bias's batch and head indices bound by setBiasBatchHead.
  Value biasB, biasH;
  /// Made by emitSizes when the op has dropout.
  std::optional<DropoutParams> dropout;
};

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_TRANSFORMS_TILEBUILDER_H
