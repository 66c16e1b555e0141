//===- AMDTargetInfo.h - AMD hooks of the attention kernel ------*- C++ -*-===//
//
// The AMD half of the GPUTargetInfo interface: wave size, LDS limits and the
// #rocdl.target come from the tile tables (AttnDialect/Target/TileTable.h);
// the matrix cores (MFMA on CDNA, WMMA on RDNA3/RDNA4) are described by
// MatrixCoreShape and emitted by MatrixCoreEmitter.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOROCDL_AMDTARGETINFO_H
#define ATTN_LIB_CONVERSION_ATTNTOROCDL_AMDTARGETINFO_H

#include "AttnDialect/Conversion/AttnToGPU/GPUTargetInfo.h"
#include "AttnDialect/Target/TileTable.h"

namespace mlir {
namespace attn {

/// How the f32 accumulator of a matrix instruction is spread over a wave.
/// With N x N accumulator tiles, lane `l` holds column `l % N`; its element
/// `i` is in row `rowBase(l / N) + rowOffset(i)`:
///  * Mfma:      rowBase = 4 g, rowOffset = 4 G (i / 4) + i % 4, G = 64 / N
///               (CDNA3 ISA guide, "dependency table" of v_mfma_*).
///  * WmmaGfx11: rowBase = g,   rowOffset = 2 i (RDNA3 ISA guide 7.9).
///  * WmmaGfx12: rowBase = 8 g, rowOffset = i   (RDNA4 ISA guide 7.9).
enum class AccRowKind { Mfma, WmmaGfx11, WmmaGfx12 };

/// One matrix instruction as the kernel uses it: D[N x N] += A[N x K] B[K x N]
/// with A and B given per lane as `kPerLane` consecutive K-elements of one
/// row (A) / column (B): lane `l` holds row/column `l % N` and K-elements
/// `kPerLane * ((l / N) % (K / kPerLane)) + j`. (On gfx11 kPerLane == K and
/// the upper half-wave repeats the lower one.)
struct MatrixCoreShape {
  MatrixInstrKind kind;
  bool wmma = false;
  int64_t n = 0;
  int64_t k = 0;
  int64_t kPerLane = 0;
  AccRowKind accRows = AccRowKind::Mfma;

  int64_t accPerLane(int64_t waveSize) const { return n * n / waveSize; }
  int64_t kGroups() const { return k / kPerLane; }
};

/// The instruction a chip runs for `mma` (the config's), or null.
const MatrixCoreShape *lookupMatrixCore(const ChipSpec &chip,
                                        MatrixInstrKind mma);

/// Names of the instructions `chip` runs, for diagnostics.
std::string getMatrixCoreNames(const ChipSpec &chip);

class AMDTargetInfo : public GPUTargetInfo {
public:
  explicit AMDTargetInfo(const ChipSpec &chip) : GPUTargetInfo(chip) {}

  StringRef getPlatform() const override { return "hip"; }
  Attribute getTargetAttr(MLIRContext *ctx) const override;
  LogicalResult
  checkSupported(const KernelSpec &spec, Direction direction,
                 function_ref<InFlightDiagnostic()> emitError) const override;
  std::unique_ptr<MmaEmitter>
  createMmaEmitter(const KernelSpec &spec) const override;
  bool lowersBackward() const override { return true; }
  void emitCopyToShared(OpBuilder &b, Location loc, Value dst, Value src,
                        int64_t bytes, int64_t alignBytes, Value valid,
                        Value validBytes) const override;
  void emitAtomicAddF32(OpBuilder &b, Location loc, Value ptr,
                        ArrayRef<Value> values) const override;
};

/// The emitter of MFMA / WMMA kernels for `shape` on a wave of `waveSize`.
std::unique_ptr<MmaEmitter>
createMatrixCoreEmitter(const MatrixCoreShape &shape, int64_t waveSize,
                        const KernelSpec &spec);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOROCDL_AMDTARGETINFO_H
