//===- NVVMTargetInfo.h - NVIDIA hooks of the attention kernel ---*- C++
//-*-===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVVM_NVVMTARGETINFO_H
#define ATTN_LIB_CONVERSION_ATTNTONVVM_NVVMTARGETINFO_H

#include "AttnDialect/Conversion/AttnToGPU/GPUTargetInfo.h"
#include "AttnDialect/Target/TileTable.h"

namespace mlir {
namespace attn {

/// The `mma` values of #attn.config this lowering implements.
inline constexpr MatrixInstrKind kMmaSync = MatrixInstrKind::MmaM16N8K16;
inline constexpr MatrixInstrKind kWgmma = MatrixInstrKind::WgmmaM64NNK16;

class NVVMTargetInfo : public GPUTargetInfo {
public:
  explicit NVVMTargetInfo(const ChipSpec &chip) : GPUTargetInfo(chip) {}

  StringRef getPlatform() const override { return "cuda"; }
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
  void annotateKernel(gpu::GPUFuncOp func,
                      const KernelSpec &spec) const override;
  // cp.async's source size: a copy of 16 bytes reads any prefix of them.
  bool readsPartialChunks(int64_t alignBytes) const override {
    return alignBytes >= 16;
  }
  Value emitExp2(OpBuilder &b, Location loc, Value v) const override;
  void emitCopyCommit(OpBuilder &b, Location loc) const override;
  void emitCopyWait(OpBuilder &b, Location loc, int pending) const override;
  void emitAtomicAddF32(OpBuilder &b, Location loc, Value ptr,
                        ArrayRef<Value> values) const override;
  void emitBarrierInit(OpBuilder &b, Location loc, Value bar,
                       int64_t count) const override;
  void emitBarrierArrive(OpBuilder &b, Location loc, Value bar) const override;
  void emitBarrierWait(OpBuilder &b, Location loc, Value bar,
                       Value parity) const override;
  void emitSetMaxRegisters(OpBuilder &b, Location loc, int64_t count,
                           bool increase) const override;
  void emitBarrierArriveExpectBytes(OpBuilder &b, Location loc, Value bar,
                                    int64_t bytes) const override;
  void emitTensorTileLoad(OpBuilder &b, Location loc, Value dst, Value map,
                          ValueRange coords, Value bar) const override;
  bool hasBulkReduceF32() const override { return chip.hasTma(); }
  void emitBulkReduceAddF32(OpBuilder &b, Location loc, Value dst, Value src,
                            int64_t bytes, Value pred = {}) const override;
  void emitBulkCommit(OpBuilder &b, Location loc) const override;
  void emitBulkWait(OpBuilder &b, Location loc, int64_t pending,
                    bool readOnly) const override;
  void emitNamedBarrierArrive(OpBuilder &b, Location loc, Value id,
                              int64_t threads) const override;
  void emitWaitForTurn(OpBuilder &b, Location loc, Value counter,
                       Value turn) const override;
  void emitPassTurn(OpBuilder &b, Location loc, Value counter) const override;
  Value emitMultiprocessorCount(OpBuilder &b, Location loc) const override;
  void emitWarpSync(OpBuilder &b, Location loc) const override;
  void emitNamedBarrier(OpBuilder &b, Location loc, Value id,
                        int64_t threads) const override;
  bool hasDependentLaunch() const override { return chip.hasGridDepControl(); }
  void emitLaunchDependents(OpBuilder &b, Location loc) const override;
  void emitWaitForPrerequisites(OpBuilder &b, Location loc) const override;
  int64_t getBackwardRegisterCap(const KernelSpec &spec) const override;

private:
  /// The backward plan's main kernels: a minimum of workgroups per SM where
  /// it lowers the register cap to what the tables estimate.
  void annotateBackwardKernel(gpu::GPUFuncOp func,
                              const KernelSpec &spec) const;
  /// The workgroups per SM annotateBackwardKernel asks for (1: none).
  int64_t getBackwardWorkgroupsPerSM(const KernelSpec &spec) const;
  LogicalResult
  checkWgmmaSupported(const KernelSpec &spec,
                      function_ref<InFlightDiagnostic()> emitError) const;
};

/// The accumulator layout both NVIDIA emitters share: mma.m16n8k16's C
/// fragment (and wgmma's D, per warp) repeated over `cols / 8` n8 tiles and
/// `mTiles` stacked m16 tiles.
AccLayout getM16N8AccLayout(OpBuilder &b, Location loc, Value lane,
                            int64_t mTiles, int64_t cols);

/// Two f32 -> one 32-bit register holding them as two `elemType` halves
/// (the A-operand register of P).
Value packPair(OpBuilder &b, Location loc, Type elemType, Value lo, Value hi);

/// The mma.sync m16n8k16 emitter (f16/bf16 in, f32 accumulators, ldmatrix
/// fragments).
std::unique_ptr<MmaEmitter> createMmaM16N8K16Emitter(const KernelSpec &spec);

/// The Hopper wgmma.mma_async m64nNk16 emitter (sm_90a; warpgroups of four
/// warps, 128-byte-swizzled shared tiles read through descriptors, P from
/// registers).
std::unique_ptr<MmaEmitter> createWgmmaM64NNK16Emitter(const KernelSpec &spec);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTONVVM_NVVMTARGETINFO_H
