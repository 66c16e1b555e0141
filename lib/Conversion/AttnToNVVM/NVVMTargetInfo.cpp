//===- NVVMTargetInfo.cpp - NVIDIA hooks of the attention kernel -*- C++
//-*-===//

#include "NVVMTargetInfo.h"
#include "AttnDialect/Conversion/AttnToGPU/AttentionGradKernel.h"
#include "AttnDialect/Conversion/AttnToGPU/AttentionKernel.h"
#include "AttnDialect/Target/Constraints.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::attn;

Attribute NVVMTargetInfo::getTargetAttr(MLIRContext *ctx) const {
  // PTX 8.0 is the first ISA with sm_90a; every chip here accepts it. 8.1
  // adds the vector reductions (red.global.add.v2.f32) of sm_90.
  return NVVM::NVVMTargetAttr::get(ctx, /*optLevel=*/3, "nvptx64-nvidia-cuda",
                                   chip.name,
                                   chip.hasVectorRedF32() ? "+ptx81" : "+ptx80");
}

LogicalResult NVVMTargetInfo::checkSupported(
    const KernelSpec &spec, Direction direction,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (!spec.elemType.isF16() && !spec.elemType.isBF16() &&
      !spec.elemType.isF32())
    return emitError() << "element type " << spec.elemType
                       << " is not supported by convert-attn-to-nvvm: "
                          "expected f16, bf16 or f32";
  ConfigAttr c = spec.config;
  if (LogicalResult r = checkFmaElementType(spec, direction, emitError);
      failed(r))
    return r;
  if (CheckResult r = checkConfig(chip, c, spec.maxHeadDim(),
                                  spec.maxHeadDimV(), direction))
    return emitError() << "config '" << c.getName()
                       << "' is not supported on " << chip.name << ": " << *r;
  // Both matrix-instruction paths keep O in registers.
  if (!c.getAccInRegisters())
    return emitError() << "config '" << c.getName()
                       << "' has acc_in_registers = false; "
                          "convert-attn-to-nvvm keeps O in registers";
  if (c.getWarps() > 16)
    return emitError() << "config '" << c.getName() << "' has warps = "
                       << c.getWarps()
                       << "; convert-attn-to-nvvm launches at most 16";
  if (c.getMma() == kWgmma)
    return checkWgmmaSupported(spec, emitError);
  if (c.getMma() != kMmaSync && c.getMma() != MatrixInstrKind::Fma)
    return emitError() << "config '" << c.getName() << "' asks for mma = "
                       << stringifyMatrixInstrKind(c.getMma())
                       << "; convert-attn-to-nvvm implements "
                       << stringifyMatrixInstrKind(kMmaSync) << ", "
                       << stringifyMatrixInstrKind(kWgmma) << " and fma";
  if (c.getPipeline() != PipelineKind::CpAsync &&
      c.getPipeline() != PipelineKind::Simple)
    return emitError() << "config '" << c.getName() << "' asks for pipeline = "
                       << stringifyPipelineKind(c.getPipeline())
                       << "; convert-attn-to-nvvm implements simple and "
                          "cp_async (cp_async_ws and tma_ws with wgmma)";
  if (c.getStages() < 1 || c.getStages() > 2 ||
      (c.getPipeline() == PipelineKind::Simple && c.getStages() != 1))
    return emitError() << "config '" << c.getName()
                       << "' has stages = " << c.getStages()
                       << "; expected 1 or 2 (1 with pipeline = simple)";
  return success();
}

LogicalResult NVVMTargetInfo::checkWgmmaSupported(
    const KernelSpec &spec,
    function_ref<InFlightDiagnostic()> emitError) const {
  // The table's entry (checkConfig) already put wgmma on sm_90a only, the
  // tile in whole warpgroups and the head dims in 64-column panels.
  ConfigAttr c = spec.config;
  if (isWarpSpecialized(c.getPipeline())) {
    // A producer warpgroup, then the computing ones; the ring's stages are
    // mbarrier-guarded (WarpSpecializedKernel.cpp). The tables' pipeline rule,
    // then what the lowering adds to it.
    StringRef pipeline = stringifyPipelineKind(c.getPipeline());
    if (CheckResult r = checkPipeline(chip, getConfigCandidate(c)))
      return emitError() << "config '" << c.getName()
                         << "' is not supported on " << chip.name << ": " << *r;
    if (c.getStages() > 4)
      return emitError() << "config '" << c.getName()
                         << "' has stages = " << c.getStages() << "; pipeline "
                         << pipeline << " rings 2 to 4 stages";
    // TMA boxes start at a packed sequence's rows; the cp.async producer
    // and KV caches (pages, splits) have no such form.
    bool packed = spec.layout == SeqLayout::Varlen;
    if (spec.layout != SeqLayout::Dense && !(packed && spec.tensorMaps()))
      return emitError() << "config '" << c.getName() << "': pipeline "
                         << pipeline
                         << (spec.tensorMaps()
                                 ? " serves dense and packed batches only; "
                                   "KV-cache layouts need cp_async"
                                 : " serves dense batches only; packed and "
                                   "KV-cache layouts need cp_async");
    if (c.getPersistent() && spec.layout != SeqLayout::Dense)
      return emitError() << "config '" << c.getName()
                         << "': persistent serves dense batches only (a "
                            "packed batch's workgroups walk its row blocks)";
    if (!spec.tensorMaps())
      return success();
    // A tensor map's box: 64 columns (one 128-byte swizzled panel) by at
    // most 256 rows, from 16-byte aligned rows.
    if (c.getAlignBytes() != 16)
      return emitError() << "config '" << c.getName()
                         << "' has align_bytes = " << c.getAlignBytes()
                         << "; pipeline tma_ws copies 16-byte aligned rows "
                            "(tensor maps)";
    if (spec.blockM() > 256 || spec.blockN() > 256)
      return emitError() << "config '" << c.getName()
                         << "': pipeline tma_ws copies boxes of at most 256 "
                            "rows; block_m = "
                         << spec.blockM() << ", block_n = " << spec.blockN();
    return success();
  }
  if (c.getPipeline() != PipelineKind::CpAsync || c.getStages() != 2)
    return emitError() << "config '" << c.getName() << "' has pipeline = "
                       << stringifyPipelineKind(c.getPipeline())
                       << ", stages = " << c.getStages() << "; \""
                       << stringifyMatrixInstrKind(kWgmma)
                       << "\" is implemented with cp_async (stages = 2), "
                          "cp_async_ws and tma_ws";
  return success();
}

std::unique_ptr<MmaEmitter>
NVVMTargetInfo::createMmaEmitter(const KernelSpec &spec) const {
  if (spec.config.getMma() == kWgmma)
    return createWgmmaM64NNK16Emitter(spec);
  if (spec.config.getMma() == MatrixInstrKind::Fma)
    return createFmaEmitter(spec, chip.warpSize);
  return createMmaM16N8K16Emitter(spec);
}

void NVVMTargetInfo::emitCopyToShared(OpBuilder &b, Location loc, Value dst,
                                      Value src, int64_t bytes,
                                      int64_t alignBytes, Value valid,
                                      Value validBytes) const {
  // cp.async needs a source aligned to its size: below that, load
  // `alignBytes` at a time into registers (synchronously). No branch for
  // whole chunks: on the H100 it cost 20-33% at D = 111 and run-time D.
  if (alignBytes < bytes)
    return emitPiecewiseCopyToShared(b, loc, dst, src, bytes, alignBytes, valid,
                                     validBytes);
  // cp.async reads src-size bytes and zero-fills the rest: 0 writes zeros
  // without reading the source.
  Value full =
      validBytes ? validBytes
                 : arith::ConstantIntOp::create(b, loc, b.getI32Type(), bytes);
  Value none = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
  Value size = arith::SelectOp::create(b, loc, valid, full, none);
  // .cg (L2 only) takes 16-byte copies alone; smaller ones go through L1.
  NVVM::CpAsyncOp::create(b, loc, dst, src, bytes,
                          bytes == 16 ? NVVM::LoadCacheModifierKind::CG
                                      : NVVM::LoadCacheModifierKind::CA,
                          size);
}

void NVVMTargetInfo::annotateKernel(gpu::GPUFuncOp func,
                                    const KernelSpec &spec) const {
  // A kernel for run-time head dims keeps D and its row bytes live beside
  // what the fixed kernel of its tile holds; left alone, ptxas takes the
  // few registers more that halve its occupancy where two workgroups share
  // an SM (measured on the H100: 142 registers and half the speed of the
  // fixed D = 59 kernel's 128). Ask for two where their shared memory and,
  // at 128 registers a thread, their registers fit an SM. Dropout's
  // generator costs the same way, and so do a serving layout's sequence
  // walk (the packed D = 64 wgmma kernel took 148 registers against the
  // dense one's 126 and ran 0.65-0.73x its speed on the same tokens) and
  // the element-aligned twins' copies through registers (130-132).
  if (isWarpSpecialized(spec.config.getPipeline())) {
    // setmaxnreg needs a register cap at entry: one workgroup per SM.
    func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  Builder(func.getContext()).getI32IntegerAttr(1));
    return;
  }
  if (spec.backward) {
    annotateBackwardKernel(func, spec);
    return;
  }
  if (!spec.dynamicHeadDim() && !spec.dropout &&
      spec.layout == SeqLayout::Dense && spec.config.getAlignBytes() >= 16)
    return;
  // Only where two workgroups' share caps registers (below the per-thread
  // maximum): at 128 threads it does not, and the attribute alone moved
  // ptxas's choices (the D = 80 twin spilled 24 bytes).
  int64_t smem = getDynamicSharedMemoryBytes(spec, *this);
  int64_t threads = spec.warps() * getWarpSize();
  if (2 * smem <= chip.smemMaxBytes &&
      2 * threads * 128 <= chip.regsPerBlockMax &&
      chip.regsPerBlockMax / (2 * threads) < chip.regsPerThreadMax)
    func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  Builder(func.getContext()).getI32IntegerAttr(2));
}

void NVVMTargetInfo::annotateBackwardKernel(gpu::GPUFuncOp func,
                                            const KernelSpec &spec) const {
  if (int64_t n = getBackwardWorkgroupsPerSM(spec); n > 1)
    func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  Builder(func.getContext()).getI32IntegerAttr(n));
}

/// A side-effecting inline PTX statement without results, for what no NVVM
/// op expresses (each caller says what).
static void emitPtx(OpBuilder &b, Location loc, ValueRange operands,
                    StringRef ptx, StringRef constraints) {
  LLVM::InlineAsmOp::create(b, loc, TypeRange(), operands, ptx, constraints,
                            /*has_side_effects=*/true, /*is_align_stack=*/false,
                            LLVM::TailCallKind::None, LLVM::AsmDialectAttr(),
                            ArrayAttr());
}

/// The registers a thread of `threads` gets when `n` workgroups share an
/// SM (allocated per thread in multiples of 8).
static int64_t registersPerThread(const ChipSpec &chip, int64_t n,
                                  int64_t threads) {
  return chip.regsPerBlockMax / (n * threads) / 8 * 8;
}

int64_t NVVMTargetInfo::getBackwardRegisterCap(const KernelSpec &spec) const {
  int64_t n = getBackwardWorkgroupsPerSM(spec);
  return n > 1 ? registersPerThread(chip, n, spec.warps() * getWarpSize()) : 0;
}

int64_t
NVVMTargetInfo::getBackwardWorkgroupsPerSM(const KernelSpec &spec) const {
  // As many workgroups per SM as shared memory holds, while the register
  // cap that count sets stays at or above the tables' estimate; only a cap
  // below the per-thread maximum is asked for. On the H100 the D = 64 wgmma
  // main then fits three workgroups at 168 registers (ptxas took 172 and
  // fitted two): 1.03-1.08x the backward (bench/RESULTS.md). The estimate
  // leaves out what dropout, a softcap, the bias gradient and dQ's product
  // in main hold (at 168 the D = 64 main spilled 212 bytes with dropout,
  // needing 227, and 100 with atomic dQ, needing 210): deterministic plans
  // without those only.
  const MatrixInstr *instr = chip.lookupInstr(spec.config.getMma());
  if (!instr || chip.regsPerBlockMax <= 0 || chip.smemMaxBytes <= 0 ||
      spec.dqInMain() || spec.dropout || spec.softcap || spec.dbiasType)
    return 1;
  int64_t threads = spec.warps() * getWarpSize();
  int64_t smem = getBackwardSharedMemoryBytes(spec, *this);
  int64_t regs =
      backwardRegisterEstimate(chip, *instr, spec.blockM(), spec.tileHeadDim,
                               spec.tileHeadDimV, spec.config.getHeadSplit());
  auto cap = [&](int64_t n) { return registersPerThread(chip, n, threads); };
  int64_t n = 1;
  while ((n + 1) * smem <= chip.smemMaxBytes && cap(n + 1) >= regs)
    ++n;
  return n > 1 && cap(n) < chip.regsPerThreadMax ? n : 1;
}

void NVVMTargetInfo::emitCopyCommit(OpBuilder &b, Location loc) const {
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
}

void NVVMTargetInfo::emitCopyWait(OpBuilder &b, Location loc,
                                  int pending) const {
  NVVM::CpAsyncWaitGroupOp::create(b, loc, pending);
}

// Pairs go out as one sm_90 vector reduction: half the atomic instructions
// of the backward's dQ accumulation. No NVVM op has the vector form (LLVM's
// atomicrmw is scalar), hence inline PTX.
void NVVMTargetInfo::emitAtomicAddF32(OpBuilder &b, Location loc, Value ptr,
                                      ArrayRef<Value> values) const {
  if (values.size() != 2 || !chip.hasVectorRedF32())
    return GPUTargetInfo::emitAtomicAddF32(b, loc, ptr, values);
  emitPtx(b, loc, {ptr, values[0], values[1]},
          "red.relaxed.gpu.global.add.v2.f32 [$0], {$1, $2};", "l,f,f");
}

void NVVMTargetInfo::emitBulkReduceAddF32(OpBuilder &b, Location loc, Value dst,
                                          Value src, int64_t bytes,
                                          Value pred) const {
  // MLIR 22 has the tensor-map reductions (nvvm.cp.async.bulk.tensor.reduce)
  // but not this non-tensor form: dq_accum's rows need no tensor map.
  std::string op = llvm::formatv("cp.reduce.async.bulk.global.shared::cta."
                                 "bulk_group.add.f32 [$0], [$1], {0};",
                                 bytes);
  // Shared addresses fit 32 bits.
  SmallVector<Value> operands = {
      dst, LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), src)};
  std::string constraints = "l,r";
  if (pred) {
    operands.push_back(arith::ExtUIOp::create(b, loc, b.getI32Type(), pred));
    op = "{\n.reg .pred p;\nsetp.ne.b32 p, $2, 0;\n@p " + op + "\n}";
    constraints += ",r";
  }
  emitPtx(b, loc, operands, op, constraints);
}

void NVVMTargetInfo::emitBulkCommit(OpBuilder &b, Location loc) const {
  NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
}

void NVVMTargetInfo::emitBulkWait(OpBuilder &b, Location loc, int64_t pending,
                                  bool readOnly) const {
  NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(pending),
                                       readOnly ? b.getUnitAttr() : UnitAttr());
}

void NVVMTargetInfo::emitNamedBarrier(OpBuilder &b, Location loc, Value id,
                                      int64_t threads) const {
  Value n = arith::ConstantIntOp::create(b, loc, b.getI32Type(), threads);
  NVVM::BarrierOp::create(b, loc, Type(), id, n, NVVM::BarrierReductionAttr(),
                          Value());
}

void NVVMTargetInfo::emitNamedBarrierArrive(OpBuilder &b, Location loc,
                                            Value id, int64_t threads) const {
  Value n = arith::ConstantIntOp::create(b, loc, b.getI32Type(), threads);
  NVVM::BarrierArriveOp::create(b, loc, id, n);
}

void NVVMTargetInfo::emitWarpSync(OpBuilder &b, Location loc) const {
  NVVM::SyncWarpOp::create(
      b, loc, arith::ConstantIntOp::create(b, loc, b.getI32Type(), -1));
}

// No NVVM op has acquire/release scoped loads and reductions, nor a loop
// that waits on a global value: inline PTX.
void NVVMTargetInfo::emitWaitForTurn(OpBuilder &b, Location loc, Value counter,
                                     Value turn) const {
  // The proxy fence orders the bulk reductions (async proxy) issued after
  // it behind the acquire; the clobber keeps the compiler from moving
  // memory accesses across either.
  emitPtx(b, loc, {counter, turn},
          "{\n.reg .pred p;\n.reg .b32 v;\nTURN${:uid}:\n"
          "ld.acquire.gpu.global.b32 v, [$0];\nsetp.ne.b32 p, v, $1;\n"
          "@p bra TURN${:uid};\n}\nfence.proxy.async.global;",
          "l,r,~{memory}");
}

void NVVMTargetInfo::emitPassTurn(OpBuilder &b, Location loc,
                                  Value counter) const {
  // The completed bulk reductions wrote through the async proxy: fenced
  // into the generic proxy before the release.
  emitPtx(b, loc, {counter},
          "fence.proxy.async.global;\nred.release.gpu.global.add.s32 [$0], 1;",
          "l,~{memory}");
}

Value NVVMTargetInfo::emitMultiprocessorCount(OpBuilder &b,
                                              Location loc) const {
  return NVVM::SmDimOp::create(b, loc, b.getI32Type());
}

void NVVMTargetInfo::emitBarrierInit(OpBuilder &b, Location loc, Value bar,
                                     int64_t count) const {
  Value n = arith::ConstantIntOp::create(b, loc, b.getI32Type(), count);
  NVVM::MBarrierInitOp::create(b, loc, bar, n, /*predicate=*/Value());
}

void NVVMTargetInfo::emitBarrierArrive(OpBuilder &b, Location loc,
                                       Value bar) const {
  NVVM::MBarrierArriveOp::create(b, loc, b.getI64Type(), bar);
}

void NVVMTargetInfo::emitBarrierWait(OpBuilder &b, Location loc, Value bar,
                                     Value parity) const {
  // The op loops on try_wait until the phase completes; 0 ticks leaves the
  // suspend time to the hardware.
  Value ticks = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
  NVVM::MBarrierTryWaitParityOp::create(b, loc, bar, parity, ticks);
}

void NVVMTargetInfo::emitSetMaxRegisters(OpBuilder &b, Location loc,
                                         int64_t count, bool increase) const {
  NVVM::SetMaxRegisterOp::create(b, loc, count,
                                 increase
                                     ? NVVM::SetMaxRegisterAction::increase
                                     : NVVM::SetMaxRegisterAction::decrease);
}

void NVVMTargetInfo::emitBarrierArriveExpectBytes(OpBuilder &b, Location loc,
                                                  Value bar,
                                                  int64_t bytes) const {
  Value tx = arith::ConstantIntOp::create(b, loc, b.getI32Type(), bytes);
  NVVM::MBarrierArriveExpectTxOp::create(b, loc, Type(), bar, tx,
                                         NVVM::MemScopeKind::CTA,
                                         /*relaxed=*/false,
                                         /*predicate=*/Value());
}

void NVVMTargetInfo::emitTensorTileLoad(OpBuilder &b, Location loc, Value dst,
                                        Value map, ValueRange coords,
                                        Value bar) const {
  // The shared::cluster form, PTX 8.0 (shared::cta needs 8.6): without a
  // cluster launch the CTA's own shared address is its cluster address.
  auto clusterPtr = LLVM::LLVMPointerType::get(
      b.getContext(),
      static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster));
  Value to = LLVM::AddrSpaceCastOp::create(b, loc, clusterPtr, dst);
  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      b, loc, to, map, coords, bar, /*im2colOffsets=*/ValueRange(),
      /*multicastMask=*/Value(), /*l2CacheHint=*/Value(),
      NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false, /*group=*/nullptr,
      /*predicate=*/Value());
}

void NVVMTargetInfo::emitLaunchDependents(OpBuilder &b, Location loc) const {
  NVVM::GriddepcontrolOp::create(b, loc,
                                 NVVM::GridDepActionKind::launch_dependents);
}

// Not nvvm.griddepcontrol wait: LLVM's intrinsic is readnone, so nothing
// keeps the workspace loads below it. A side-effecting asm may touch any
// memory, as CUDA's cudaGridDependencySynchronize (a "memory" clobber).
void NVVMTargetInfo::emitWaitForPrerequisites(OpBuilder &b,
                                              Location loc) const {
  emitPtx(b, loc, ValueRange(), "griddepcontrol.wait;", "~{memory}");
}

AccLayout attn::getM16N8AccLayout(OpBuilder &b, Location loc, Value lane,
                                  int64_t mTiles, int64_t cols) {
  auto cst = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };
  AccLayout l;
  l.laneRow = arith::DivUIOp::create(b, loc, lane, cst(4));
  l.laneCol = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, cst(4)), cst(2));
  l.laneColMultiple = 2;
  l.laneRowBound = 8; // lane / 4
  l.laneColBound = 7; // 2 (lane % 4) <= 6
  l.quadColumnPairs = true;
  // Element (mt, tile, r, c) is at index ((mt * tiles + tile) * 2 + r) * 2
  // + c: row 16 mt + 8 r + lane / 4, column 8 tile + 2 (lane % 4) + c.
  for (int64_t mt = 0; mt < mTiles; ++mt) {
    l.rowSlotOffsets.push_back(16 * mt);
    l.rowSlotOffsets.push_back(16 * mt + 8);
  }
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t tile = 0; tile < cols / 8; ++tile)
      for (unsigned r = 0; r < 2; ++r)
        for (unsigned c = 0; c < 2; ++c) {
          l.rowSlot.push_back(2 * mt + r);
          l.colOffsets.push_back(8 * tile + c);
        }
  l.rowReduceXor = {1, 2};
  return l;
}

Value attn::packPair(OpBuilder &b, Location loc, Type elemType, Value lo,
                     Value hi) {
  Value pair = vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, elemType),
      ValueRange{arith::TruncFOp::create(b, loc, elemType, lo),
                 arith::TruncFOp::create(b, loc, elemType, hi)});
  return LLVM::BitcastOp::create(b, loc, b.getI32Type(), pair);
}

// One MUFU.EX2: libdevice's exp2f adds range fix-ups the softmax does not
// need (its arguments are <= 0, and a flushed denormal probability is 0).
Value NVVMTargetInfo::emitExp2(OpBuilder &b, Location loc, Value v) const {
  return LLVM::CallIntrinsicOp::create(
             b, loc, b.getF32Type(),
             b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f"), ValueRange{v})
      .getResult(0);
}
