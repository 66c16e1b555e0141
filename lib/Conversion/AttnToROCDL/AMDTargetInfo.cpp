//===- AMDTargetInfo.cpp - AMD hooks of the attention kernel ----*- C++ -*-===//

#include "AMDTargetInfo.h"
#include "AttnDialect/Target/Constraints.h"
#include "mlir/Dialect/AMDGPU/Utils/Chipset.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"

using namespace mlir;
using namespace mlir::attn;

// The instructions the lowering implements. A chip runs one when the tile
// tables list it among the chip's instructions; the table says which chips
// have which instruction set, this list only how each one is laid out.
static const MatrixCoreShape kMfmaShapes[] = {
    {MatrixInstrKind::Mfma32x32x8, false, 32, 8, 4, AccRowKind::Mfma},
    {MatrixInstrKind::Mfma16x16x16, false, 16, 16, 4, AccRowKind::Mfma},
    {MatrixInstrKind::Mfma32x32x16, false, 32, 16, 8, AccRowKind::Mfma},
    {MatrixInstrKind::Mfma16x16x32, false, 16, 32, 8, AccRowKind::Mfma},
};
// RDNA3 feeds each lane a whole 16-element K row (the upper half-wave repeats
// the lower one); RDNA4 splits K between the half-waves.
static const MatrixCoreShape kWmmaGfx11 = {
    MatrixInstrKind::Wmma16x16x16, true, 16, 16, 16, AccRowKind::WmmaGfx11};
static const MatrixCoreShape kWmmaGfx12 = {
    MatrixInstrKind::Wmma16x16x16, true, 16, 16, 8, AccRowKind::WmmaGfx12};

const MatrixCoreShape *attn::lookupMatrixCore(const ChipSpec &chip,
                                              MatrixInstrKind mma) {
  if (!chip.lookupInstr(mma))
    return nullptr;
  if (chip.hasMfma()) {
    for (const MatrixCoreShape &shape : kMfmaShapes)
      if (shape.kind == mma)
        return &shape;
    return nullptr;
  }
  if (chip.hasWmma() && mma == kWmmaGfx11.kind) {
    FailureOr<amdgpu::Chipset> chipset = amdgpu::Chipset::parse(chip.name);
    if (failed(chipset))
      return nullptr;
    return chipset->majorVersion >= 12 ? &kWmmaGfx12 : &kWmmaGfx11;
  }
  return nullptr;
}

std::string attn::getMatrixCoreNames(const ChipSpec &chip) {
  std::string out;
  for (const MatrixInstr &instr : chip.instructions)
    if (lookupMatrixCore(chip, instr.kind))
      out += ((out.empty() ? "" : ", ") + instr.getName()).str();
  return out;
}

Attribute AMDTargetInfo::getTargetAttr(MLIRContext *ctx) const {
  Builder b(ctx);
  // no_wave64 only matters to the device libraries' wavefront-size control
  // variable; the backend already defaults RDNA to wave32.
  DictionaryAttr flags;
  if (chip.warpSize == 32)
    flags = b.getDictionaryAttr(b.getNamedAttr("no_wave64", b.getUnitAttr()));
  // Code object v5: what the HIP runtimes of ROCm 5.x (Debian's) and later
  // load, and the newest ABI Debian's device libraries carry.
  return ROCDL::ROCDLTargetAttr::get(ctx, /*optLevel=*/3, "amdgcn-amd-amdhsa",
                                     chip.name, /*features=*/"",
                                     /*abiVersion=*/"500", flags);
}

LogicalResult AMDTargetInfo::checkSupported(
    const KernelSpec &spec, Direction direction,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (!spec.elemType.isF16() && !spec.elemType.isBF16() &&
      !spec.elemType.isF32())
    return emitError() << "element type " << spec.elemType
                       << " is not supported by convert-attn-to-rocdl: "
                          "expected f16, bf16 or f32";
  ConfigAttr c = spec.config;
  if (LogicalResult r = checkFmaElementType(spec, direction, emitError);
      failed(r))
    return r;
  const MatrixCoreShape *shape = lookupMatrixCore(chip, c.getMma());
  if (!shape && c.getMma() != MatrixInstrKind::Fma)
    return emitError() << "config '" << c.getName() << "' asks for mma = "
                       << stringifyMatrixInstrKind(c.getMma())
                       << "; convert-attn-to-rocdl implements "
                       << getMatrixCoreNames(chip) << " on " << chip.name;
  // Head dims, tile shape and wave count follow the instruction's entry in
  // the tile tables (block_n a multiple of both N and K: it is the reduction
  // dim of P V).
  if (CheckResult r = checkConfig(chip, c, spec.maxHeadDim(),
                                  spec.maxHeadDimV(), direction))
    return emitError() << "config '" << c.getName()
                       << "' is not supported on " << chip.name << ": " << *r;
  bool simple = c.getPipeline() == PipelineKind::Simple && c.getStages() == 1;
  bool doubleBuffer =
      c.getPipeline() == PipelineKind::LdsDoubleBuffer && c.getStages() == 2;
  if (!simple && !doubleBuffer)
    return emitError() << "config '" << c.getName() << "' has pipeline = "
                       << stringifyPipelineKind(c.getPipeline())
                       << " and stages = " << c.getStages()
                       << "; convert-attn-to-rocdl implements simple with "
                          "stages = 1 and lds_double with stages = 2";
  if (!c.getAccInRegisters())
    return emitError() << "config '" << c.getName()
                       << "' has acc_in_registers = false; "
                          "convert-attn-to-rocdl keeps O in VGPRs";
  return success();
}

std::unique_ptr<MmaEmitter>
AMDTargetInfo::createMmaEmitter(const KernelSpec &spec) const {
  if (spec.config.getMma() == MatrixInstrKind::Fma)
    return createFmaEmitter(spec, chip.warpSize);
  const MatrixCoreShape *shape = lookupMatrixCore(chip, spec.config.getMma());
  assert(shape && "checkSupported accepts only known instructions");
  return createMatrixCoreEmitter(*shape, chip.warpSize, spec);
}

void AMDTargetInfo::emitCopyToShared(OpBuilder &b, Location loc, Value dst,
                                     Value src, int64_t bytes,
                                     int64_t alignBytes, Value valid,
                                     Value validBytes) const {
  // A row's head-dim tail: no load may run past its last valid byte. The
  // whole chunks in a branch of their own keep the piecewise code's scalar
  // registers within gfx9's 102 (a run-time D: 106 and 78 spilled without).
  if (validBytes)
    return emitPiecewiseCopyToShared(b, loc, dst, src, bytes, alignBytes, valid,
                                     validBytes, /*wholeChunkBranch=*/true);
  // A 16-byte global load (global_load_dwordx4 when 16-byte aligned, narrower
  // loads otherwise) then an LDS store. The skeleton points invalid rows at
  // the tile's base, which is in bounds, so the load needs no branch; the
  // zeros come from the select.
  auto vecType = VectorType::get({bytes / 4}, b.getI32Type());
  Value data = LLVM::LoadOp::create(b, loc, vecType, src,
                                    /*alignment=*/std::min(bytes, alignBytes));
  Value zero = arith::ConstantOp::create(
      b, loc, vecType, cast<TypedAttr>(b.getZeroAttr(vecType)));
  data = arith::SelectOp::create(b, loc, valid, data, zero);
  LLVM::StoreOp::create(b, loc, data, dst, /*alignment=*/bytes);
}

// The backward's f32 accumulations (dq_accum, dbias_accum) live in the
// caller's workspace, device memory from hipMalloc: coarse-grained and
// local. Saying so (the metadata LLVM reads) lets CDNA use its native
// global_atomic_add_f32 instead of a compare-and-swap loop; denormals may
// flush in it, which a gradient sum does not notice.
void AMDTargetInfo::emitAtomicAddF32(OpBuilder &b, Location loc, Value ptr,
                                     ArrayRef<Value> values) const {
  MLIRContext *ctx = b.getContext();
  auto *rocdl = ctx->getOrLoadDialect<ROCDL::ROCDLDialect>();
  for (auto [i, v] : llvm::enumerate(values)) {
    Value at =
        LLVM::GEPOp::create(b, loc, ptr.getType(), b.getF32Type(), ptr,
                            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
    auto op = LLVM::AtomicRMWOp::create(b, loc, LLVM::AtomicBinOp::fadd, at, v,
                                        LLVM::AtomicOrdering::monotonic,
                                        /*syncscope=*/"agent");
    rocdl->getNoFineGrainedMemoryAttrHelper().setAttr(op, UnitAttr::get(ctx));
    rocdl->getNoRemoteMemoryAttrHelper().setAttr(op, UnitAttr::get(ctx));
    rocdl->getIgnoreDenormalModeAttrHelper().setAttr(op, UnitAttr::get(ctx));
  }
}
