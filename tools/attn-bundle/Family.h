//===- Family.h - the kernel family attn-bundle compiles --------*- C++ -*-===//
//
// Which variants a family holds (from the tile tables, as attn-select-config
// would pick their tiles), which combinations asked for the tables cannot
// compile and why, and the module of one variant, built with the op
// builders.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTNBUNDLE_FAMILY_H
#define ATTN_TOOLS_ATTNBUNDLE_FAMILY_H

#include "AttnDialect/Target/TileTable.h"
#include "AttnDialect/Target/Tuning.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include <string>

namespace mlir {
class OpBuilder;
namespace attn {

/// What a variant adds to the scores: nothing, a bias of q's element type,
/// or an f32 bias.
enum class BiasKind { None, Same, F32 };
std::optional<BiasKind> parseBiasKind(llvm::StringRef name);
llvm::StringRef stringifyBiasKind(BiasKind kind);

/// What attn-bundle's options ask for. Every combination of the lists is a
/// variant (in priority order: plain before soft-capped, then the biases,
/// element types, head dims and masks in the order given).
struct FamilyRequest {
  const ChipSpec *chip = nullptr;
  const Profile *profile = nullptr;
  llvm::SmallVector<ElementType> dtypes;
  llvm::SmallVector<int64_t> headDims;
  /// (D, Dv) pairs with Dv != D: dense variants and plans after those of
  /// headDims (values and outputs of another head dim than queries and
  /// keys).
  llvm::SmallVector<std::pair<int64_t, int64_t>> headDimPairs;
  /// Bounds of variants that take D (= Dv) at run time, any up to the
  /// bound: after the fixed head dims of each dtype, dense forward only.
  llvm::SmallVector<int64_t> maxHeadDims;
  llvm::SmallVector<MaskKind> masks;
  llvm::SmallVector<BiasKind> biases;
  bool softcap = false;
  /// Every candidate the tables accept for a combination instead of the ones
  /// attn-select-config would pick.
  bool allCandidates = false;
  /// Also a twin of every variant and plan that assumes only element
  /// alignment (any view), after all the aligned ones so the runtime tries
  /// those first (xformers' aligned/unaligned kernel pairs).
  bool unaligned = false;
  /// Also a backward plan (attn-bwd-v1) of every combination the chip's
  /// table has a backward tile for, after the forward variants.
  bool backward = false;
  /// Also a dropout twin of every dense forward variant (but the
  /// size-specialized ones) and of every backward plan, after those.
  bool dropout = false;
  /// The serving layouts to emit forward variants for besides dense (the
  /// combinations without a bias, with the dense variant's tiles, aligned
  /// only).
  llvm::SmallVector<SeqLayout> layouts;
  /// Lengths dynamic Sq/Sk are expected at: each gets the tile the tables
  /// (or `tuning`) choose there, a variant with that range of lengths ahead
  /// of the general one where it differs (docs/Tuning.md).
  llvm::SmallVector<int64_t> sizeHints;
  /// Measured tiles per size class for this chip, or null.
  const TuningFile *tuning = nullptr;
};

/// The head dims of a family when none are asked for (those the chip's table
/// compiles every combination of): the common ones of today's models. Any
/// other D up to 256 is one --head-dims away (the kernels pad their tiles).
inline constexpr int64_t kDefaultHeadDims[] = {32,  64,  80,  96, 128,
                                               160, 192, 224, 256};
/// And the bounds of its variants for head dims given at run time: every
/// other D up to 256 is served without recompiling.
inline constexpr int64_t kDefaultMaxHeadDims[] = {64, 128, 256};

/// One kernel of the family.
struct Variant {
  ElementType dtype;
  /// D (= Dv unless headDimV); 0 when given at run time, up to maxHeadDim.
  int64_t headDim;
  MaskKind mask;
  BiasKind bias;
  bool softcap;
  const TileCandidate *tile;
  /// The #attn.config's align_bytes: what a contiguous row of D elements
  /// keeps (getRowAlignBytes; 16 for most head dims), or the element size
  /// for its unaligned twin.
  int64_t alignBytes = 16;
  /// A forward variant or a backward plan.
  Direction direction = Direction::Forward;
  /// The serving form of a forward variant (docs/AttnBundle.md).
  SeqLayout layout = SeqLayout::Dense;
  /// The largest head dim of a variant whose headDim is 0.
  int64_t maxHeadDim = 0;
  /// A size-specialized variant: for calls whose Sq and Sk are both in
  /// [seqlenMin, seqlenMax] (0: no bound), ahead of the general one.
  int64_t seqlenMin = 0;
  int64_t seqlenMax = 0;
  /// A decode variant (the tile's kv_cache_seqlen_q_max): for KV-cache calls
  /// whose Sq is at most this, ahead of the general one.
  int64_t seqlenQMax = 0;
  /// And whose grid fills the GPU with at least this many workgroups per
  /// multiprocessor (0: any), as measured (docs/Tuning.md).
  int64_t minBlocksPerSm = 0;
  /// Dropout (p, seed and offset are kernel arguments).
  bool dropout = false;
  /// A backward plan that also computes the bias gradient (in the bias's
  /// element type).
  bool biasGrad = false;
  /// A backward plan without atomics (bit-reproducible).
  bool deterministic = false;
  /// Dv where it differs from D (--head-dim-pairs), else 0.
  int64_t headDimV = 0;

  /// "bf16 D=64 mask=causal bias=f32 softcap", for diagnostics.
  std::string describe() const;
};

/// A combination the request asks for that no candidate of the chip accepts
/// (`variant.tile` is null), with every candidate's verdict.
struct UnsupportedVariant {
  Variant variant;
  llvm::SmallVector<Verdict> verdicts;
};

/// The variants of `request`, in priority order; the combinations the tables
/// reject go to `unsupported`.
/// The forward variants of `request`, then its backward plans when asked
/// for; combinations no forward tile fits go to `unsupported`, those no
/// backward tile fits to `unsupportedBackward` (when not null).
llvm::SmallVector<Variant> enumerateVariants(
    const FamilyRequest &request,
    llvm::SmallVectorImpl<UnsupportedVariant> &unsupported,
    llvm::SmallVectorImpl<UnsupportedVariant> *unsupportedBackward = nullptr);

/// One message per head dim for the combinations `chip` cannot compile:
/// which they are, then each reason the candidates give (a reason the
/// verdicts join with "; " counts apart) with the candidates that give it,
/// most common first.
void printUnsupported(llvm::raw_ostream &os, const ChipSpec &chip,
                      llvm::ArrayRef<UnsupportedVariant> unsupported,
                      bool asWarning);

/// Adds `func.func @name` holding the variant's memref-form attn.attention:
/// B, Sq and Sk dynamic (the kernel takes them, and the heads, as arguments),
/// the variant's tile attached as its #attn.config.
void buildVariantFunc(OpBuilder &builder, Location loc, llvm::StringRef name,
                      const Variant &variant);

/// A module holding `buildVariantFunc(variant)` alone, named for the variant
/// so that diagnostics say which one failed.
OwningOpRef<ModuleOp> buildVariantModule(MLIRContext &context,
                                         const Variant &variant);

} // namespace attn
} // namespace mlir

#endif // ATTN_TOOLS_ATTNBUNDLE_FAMILY_H
