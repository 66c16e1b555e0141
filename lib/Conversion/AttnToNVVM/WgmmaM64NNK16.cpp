//===- WgmmaM64NNK16.cpp - wgmma for the attention kernel -------*- C++ -*-===//
//
// wgmma.mma_async (sm_90a): a warpgroup of four consecutive warps computes
// a 64 x N tile; warp w % 4 of the group owns rows 16 (w % 4) .. + 15, so a
// warp still owns 16 query rows and the skeleton's per-warp softmax is
// unchanged. Register fragments (PTX ISA, "wgmma .m64nNk16 fragments"), with
// g = lane / 4 and t = lane % 4:
//  * D (f32): d[4i], d[4i+1] at row g, cols 8i + 2t, +1; d[4i+2], d[4i+3]
//    at row g + 8: the mma.m16n8k16 C layout repeated over N / 8 tiles.
//  * A from registers (16-bit): a0..a3 as mma.m16n8k16's A, so the S
//    accumulators of one k16 step, rounded, are P's A fragment.
// B (and Q's A) are read from shared memory through matrix descriptors over
// the 128-byte-swizzled tiles of the skeleton (SharedTileLayout::Swizzle128B):
//  * Q [m, d] and K [n, d] are K-major: 8-row groups 1024 bytes apart (SBO),
//    a k16 step inside a 64-column panel advances the start by 32 bytes, the
//    next panel is `rows * 128` bytes on.
//  * V [n, dv] is B = V, MN-major (transposed, imm-trans-b = 1): 8-key groups
//    1024 bytes apart (SBO), 64-column panels `block_n * 128` bytes apart
//    (LBO), a k16 step (16 keys) is 2048 bytes on.
//
// Each product is one inline-asm statement: wgmma.fence, the chain of
// wgmmas, commit, and for S = Q K^T wait 0. A step's descriptors are
// inputs of the statement in the forward; the backward's statements take
// each operand's descriptor once and add a step's offset next to its wgmma:
// a descriptor input per step keeps every step's 64-bit descriptor live at
// the statement, 32 registers for a D = 128 chain, and the backward's
// D = 128 kernels spilled. The forward's kernels use 1-10 registers fewer
// that way but ran 2-4% slower at D = 128 on the H100 (bench/RESULTS.md).
// Keeping the wait inside the statement that defines the accumulators means no
// instruction can read them early. O += P V is left in flight (hasAsyncOutput):
// the next S chain's wait 0 completes it before the softmax rescales O, and
// waitOutput's statement passes O through itself after its wait, for the
// epilogue.
//
// Why inline PTX and not MLIR's nvvm.wgmma.* ops:
//  * O += P V takes A from registers; nvvm.wgmma.mma_async reads A only
//    through a descriptor.
//  * The waits must pass the accumulators through themselves, or LLVM may
//    schedule a read of them above the wait; the NVVM wait op takes no
//    operands.
//  * S = Q K^T could be nvvm.wgmma.fence.aligned, mma_async (both operands
//    are descriptors), commit.group and a tied wait. Tried (MLIR 22.1, ptxas
//    13.0, the sm_90a kernels of test/Pipelines): each mma_async becomes its
//    own asm statement with its own `setp.ne.b32 p, <imm>, 0` for scale-d,
//    and the accumulators go from statement to statement through tied
//    operands, so that no copy touches them while the chain is in flight is
//    left to LLVM's register coalescer (it did coalesce them) instead of
//    holding by construction; utils/wgmma-check.py, which follows chains
//    that are one statement, no longer sees it. Registers, spills and
//    ptxas warnings were unchanged and the SASS identical for 4 of the 6
//    wgmma kernels; two instructions differed in the two unmasked D = 64
//    ones. The PTX is not the same instruction sequence, so S stays one
//    statement like O.
//
//===----------------------------------------------------------------------===//

#include "NVVMTargetInfo.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
/// Bytes of one 128-byte-swizzled row and of one 8-row swizzle atom.
constexpr int64_t kRowBytes = 128;
constexpr int64_t kAtomBytes = 8 * kRowBytes;
/// Elements (16-bit) of one panel row.
constexpr int64_t kPanelCols = 64;

class WgmmaM64NNK16 : public MmaEmitter {
public:
  explicit WgmmaM64NNK16(const KernelSpec &spec)
      : spec(spec), addOffsetsInChain(spec.backward) {}

  int64_t getRowsPerWarp() const override { return 16; }
  SharedTileLayout getSharedTileLayout() const override {
    return SharedTileLayout::Swizzle128B;
  }
  void emitSharedWritesVisible(OpBuilder &b, Location loc) override {
    // cp.async wrote the tiles through the generic proxy; wgmma reads them
    // through the async proxy.
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  }
  AccLayout getScoreLayout(OpBuilder &b, Location loc, Value lane) override {
    return getM16N8AccLayout(b, loc, lane, /*mTiles=*/1, spec.blockN());
  }
  AccLayout getOutputLayout(OpBuilder &b, Location loc, Value lane) override {
    return getM16N8AccLayout(b, loc, lane, /*mTiles=*/1, spec.tileHeadDimV);
  }
  SmallVector<Value> loadQuery(OpBuilder &b, Location loc, Value lane,
                               const SharedTile &q, Value warpRow) override;
  SmallVector<Value> computeScores(OpBuilder &b, Location loc, Value lane,
                                   ArrayRef<Value> query,
                                   const SharedTile &k) override;
  SmallVector<Value> accumulateOutput(OpBuilder &b, Location loc, Value lane,
                                      ArrayRef<Value> p, const SharedTile &v,
                                      ArrayRef<Value> acc) override;
  SmallVector<Value> packProbabilities(OpBuilder &b, Location loc,
                                       ArrayRef<Value> p) override;
  SmallVector<Value> accumulatePackedOutput(OpBuilder &b, Location loc,
                                            Value lane, ArrayRef<Value> packed,
                                            const SharedTile &v,
                                            ArrayRef<Value> acc) override;
  SmallVector<Value> accumulateSharedOutput(OpBuilder &b, Location loc,
                                            const SharedTile &p,
                                            const SharedTile &v,
                                            ArrayRef<Value> acc) override;
  bool hasAsyncOutput() const override { return true; }
  SmallVector<Value> waitOutput(OpBuilder &b, Location loc, ArrayRef<Value> acc,
                                int64_t pending) override;
  SmallVector<Value> issueScores(OpBuilder &b, Location loc, Value lane,
                                 ArrayRef<Value> query,
                                 const SharedTile &k) override {
    return emitScores(b, loc, k, /*wait=*/false);
  }
  SmallVector<Value> issueScoresOnto(OpBuilder &b, Location loc, Value lane,
                                     ArrayRef<Value> query, const SharedTile &k,
                                     ArrayRef<Value> init) override {
    return emitScores(b, loc, k, /*wait=*/false, init);
  }

private:
  /// An operand's descriptor at each step of a chain: `base` moved on by a
  /// step's bytes, either computed before the statement (`values`) or, with
  /// addOffsetsInChain, inside it (`offsets`).
  struct StepDescs {
    Value base;
    SmallVector<Value> values;
    SmallVector<int64_t> offsets;
  };
  /// Matrix descriptor of a 128-byte-swizzled operand starting at `base`
  /// with the given leading/stride byte offsets.
  Value descriptor(OpBuilder &b, Location loc, Value base, int64_t lbo,
                   int64_t sbo);
  /// `desc` with its start address moved on by `bytes` (a multiple of 16).
  Value advance(OpBuilder &b, Location loc, Value desc, int64_t bytes);
  /// Appends the step `bytes` on from `d.base` to `d`.
  void addStep(OpBuilder &b, Location loc, StepDescs &d, int64_t bytes);
  /// One asm statement: fence, `steps` wgmmas m64n`n`k16 accumulating into
  /// `n / 2` f32 registers per thread, commit, and wait 0 when `wait`.
  /// `aOperands` are per step either four 32-bit registers or none, and
  /// then A is read through `aDescs`' step; B through `bDescs`' step. `acc`
  /// empty means start from zero.
  SmallVector<Value> emitChain(OpBuilder &b, Location loc, int64_t n,
                               ArrayRef<SmallVector<Value>> aOperands,
                               const StepDescs &aDescs, const StepDescs &bDescs,
                               bool transB, ArrayRef<Value> acc, bool wait);
  /// A side-effecting asm statement `body` whose f32 results are `tied`
  /// (read and written in place) plus `inputs` with `inputConstraints`.
  SmallVector<Value> emitAsm(OpBuilder &b, Location loc, StringRef body,
                             ArrayRef<Value> tied, int64_t numResults,
                             ArrayRef<Value> inputs,
                             ArrayRef<std::string> inputConstraints);
  /// S = `init` + Q K^T (zero without `init`) as one statement, waited for
  /// inside it when `wait`.
  SmallVector<Value> emitScores(OpBuilder &b, Location loc, const SharedTile &k,
                                bool wait, ArrayRef<Value> init = {});
  /// O = `acc` + P V as one statement left in flight; `aStep(kk)` gives
  /// P's four A registers of k16 step kk.
  SmallVector<Value>
  emitOutputChain(OpBuilder &b, Location loc, const SharedTile &v,
                  ArrayRef<Value> acc,
                  function_ref<SmallVector<Value>(int64_t)> aStep);
  Value pack(OpBuilder &b, Location loc, Value lo, Value hi) {
    return packPair(b, loc, spec.elemType, lo, hi);
  }

  /// A copy: the backward makes its products' specs as temporaries
  /// (getProductSpec).
  const KernelSpec spec;
  /// Descriptors advanced inside each chain statement (see the top).
  bool addOffsetsInChain;
  Value queryDesc; // this warpgroup's Q rows, k step 0
  int64_t queryPanelBytes = 0;
};
} // namespace

static Value cst32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
}
static Value cst64(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
}

Value WgmmaM64NNK16::descriptor(OpBuilder &b, Location loc, Value base,
                                int64_t lbo, int64_t sbo) {
  // Bits 0-13: start address >> 4; 16-29: LBO >> 4; 32-45: SBO >> 4;
  // 62-63: 1 = 128-byte swizzle. Shared addresses are below 2^18.
  Value addr = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), base);
  Value start = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, addr, cst64(b, loc, 0x3FFFF)),
      cst64(b, loc, 4));
  uint64_t fields = (uint64_t(lbo >> 4) & 0x3FFF) << 16 |
                    (uint64_t(sbo >> 4) & 0x3FFF) << 32 | uint64_t(1) << 62;
  return arith::OrIOp::create(b, loc, start,
                              cst64(b, loc, static_cast<int64_t>(fields)));
}

Value WgmmaM64NNK16::advance(OpBuilder &b, Location loc, Value desc,
                             int64_t bytes) {
  if (bytes == 0)
    return desc;
  return arith::AddIOp::create(b, loc, desc, cst64(b, loc, bytes >> 4));
}

void WgmmaM64NNK16::addStep(OpBuilder &b, Location loc, StepDescs &d,
                            int64_t bytes) {
  if (addOffsetsInChain)
    d.offsets.push_back(bytes);
  else
    d.values.push_back(advance(b, loc, d.base, bytes));
}

SmallVector<Value>
WgmmaM64NNK16::emitAsm(OpBuilder &b, Location loc, StringRef body,
                       ArrayRef<Value> tied, int64_t numResults,
                       ArrayRef<Value> inputs,
                       ArrayRef<std::string> inputConstraints) {
  MLIRContext *ctx = b.getContext();
  // Operands: the results, their tied inputs (when given), then `inputs`.
  SmallVector<std::string> constraints(numResults, "=f");
  SmallVector<Value> operands(tied);
  for (size_t i = 0; i < tied.size(); ++i)
    constraints.push_back(std::to_string(i));
  llvm::append_range(constraints, inputConstraints);
  llvm::append_range(operands, inputs);
  SmallVector<Type> resultTypes(numResults, b.getF32Type());
  auto asmOp = LLVM::InlineAsmOp::create(
      b, loc, LLVM::LLVMStructType::getLiteral(ctx, resultTypes), operands,
      body, llvm::join(constraints, ","),
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  SmallVector<Value> out;
  for (int64_t i = 0; i < numResults; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, asmOp.getResult(0), i));
  return out;
}

SmallVector<Value>
WgmmaM64NNK16::emitChain(OpBuilder &b, Location loc, int64_t n,
                         ArrayRef<SmallVector<Value>> aOperands,
                         const StepDescs &aDescs, const StepDescs &bDescs,
                         bool transB, ArrayRef<Value> acc, bool wait) {
  int64_t nAcc = n / 2;
  bool zeroInit = acc.empty();
  StringRef type = spec.elemType.isF16() ? "f16" : "bf16";

  // $0..$(nAcc-1) are the accumulators; inputs follow them and, when
  // accumulating, their nAcc tied copies.
  int64_t firstInput = zeroInit ? nAcc : 2 * nAcc;
  SmallVector<Value> inputs;
  SmallVector<std::string> inputConstraints;
  auto inputRef = [&](Value v, StringRef constraint) {
    std::string ref = "$" + std::to_string(firstInput + inputs.size());
    inputs.push_back(v);
    inputConstraints.push_back(constraint.str());
    return ref;
  };
  std::string dList = "{";
  for (int64_t i = 0; i < nAcc; ++i)
    dList += (i ? ",$" : "$") + std::to_string(i);
  dList += "}";

  // A step's descriptor: an input of its own, or its operand's base plus
  // the step's offset (16-byte units) added inside the statement.
  std::string body = "{\n";
  if (addOffsetsInChain)
    body += ".reg .b64 da, db;\n";
  std::string aBase =
      addOffsetsInChain && aDescs.base ? inputRef(aDescs.base, "l") : "";
  std::string bBase = addOffsetsInChain ? inputRef(bDescs.base, "l") : "";
  auto stepDesc = [&](StringRef reg, const std::string &base,
                      const StepDescs &d, size_t step) -> std::string {
    if (!addOffsetsInChain)
      return inputRef(d.values[step], "l");
    if (d.offsets[step] == 0)
      return base;
    body += llvm::formatv("add.s64 {0}, {1}, {2};\n", reg, base,
                          d.offsets[step] >> 4);
    return reg.str();
  };
  if (zeroInit)
    body += ".reg .pred p;\nsetp.ne.b32 p, " + inputRef(cst32(b, loc, 0), "r") +
            ", 0;\n";
  body += "wgmma.fence.sync.aligned;\n";
  for (size_t step = 0; step < aOperands.size(); ++step) {
    bool aInRegs = !aOperands[step].empty();
    std::string aRef;
    if (!aInRegs) {
      aRef = stepDesc("da", aBase, aDescs, step);
    } else {
      aRef = "{";
      for (auto [i, v] : llvm::enumerate(aOperands[step]))
        aRef += (i ? "," : "") + inputRef(v, "r");
      aRef += "}";
    }
    std::string bRef = stepDesc("db", bBase, bDescs, step);
    // The first step of a zero-initialized chain ignores D (scale-d false).
    std::string scaleD = zeroInit && step == 0 ? "p" : "1";
    std::string imms = aInRegs ? llvm::formatv("1, 1, {0}", transB ? 1 : 0)
                               : llvm::formatv("1, 1, 0, {0}", transB ? 1 : 0);
    body += llvm::formatv(
        "wgmma.mma_async.sync.aligned.m64n{0}k16.f32.{1}.{1} {2}, {3}, {4}, "
        "{5}, {6};\n",
        n, type, dList, aRef, bRef, scaleD, imms);
  }
  body += "wgmma.commit_group.sync.aligned;\n";
  if (wait)
    body += "wgmma.wait_group.sync.aligned 0;\n";
  body += "}";
  return emitAsm(b, loc, body, acc, nAcc, inputs, inputConstraints);
}

SmallVector<Value> WgmmaM64NNK16::waitOutput(OpBuilder &b, Location loc,
                                             ArrayRef<Value> acc,
                                             int64_t pending) {
  return emitAsm(
      b, loc,
      llvm::formatv("wgmma.wait_group.sync.aligned {0};", pending).str(), acc,
      acc.size(), {}, {});
}

SmallVector<Value> WgmmaM64NNK16::loadQuery(OpBuilder &b, Location loc,
                                            Value lane, const SharedTile &q,
                                            Value warpRow) {
  // The warpgroup's first row: warpRow rounded down to a multiple of 64.
  Value groupRow = arith::AndIOp::create(b, loc, warpRow, cst32(b, loc, ~63));
  Value base =
      LLVM::GEPOp::create(b, loc, q.base.getType(), b.getI8Type(), q.base,
                          ValueRange{arith::MulIOp::create(
                              b, loc, groupRow, cst32(b, loc, kRowBytes))});
  queryDesc = descriptor(b, loc, base, /*lbo=*/16, /*sbo=*/kAtomBytes);
  queryPanelBytes = q.rows * kRowBytes;
  return {};
}

SmallVector<Value> WgmmaM64NNK16::computeScores(OpBuilder &b, Location loc,
                                                Value lane,
                                                ArrayRef<Value> query,
                                                const SharedTile &k) {
  return emitScores(b, loc, k, /*wait=*/true);
}

SmallVector<Value> WgmmaM64NNK16::emitScores(OpBuilder &b, Location loc,
                                             const SharedTile &k, bool wait,
                                             ArrayRef<Value> init) {
  StepDescs aDescs{queryDesc}, bDescs{descriptor(b, loc, k.base, /*lbo=*/16,
                                                 /*sbo=*/kAtomBytes)};
  SmallVector<SmallVector<Value>> a;
  for (int64_t ks = 0; ks < spec.tileHeadDim / 16; ++ks) {
    int64_t panel = ks / (kPanelCols / 16), inPanel = ks % (kPanelCols / 16);
    a.push_back({});
    addStep(b, loc, aDescs, panel * queryPanelBytes + inPanel * 32);
    addStep(b, loc, bDescs, panel * k.rows * kRowBytes + inPanel * 32);
  }
  return emitChain(b, loc, spec.blockN(), a, aDescs, bDescs,
                   /*transB=*/false, init, wait);
}

SmallVector<Value> WgmmaM64NNK16::accumulateOutput(OpBuilder &b, Location loc,
                                                   Value lane,
                                                   ArrayRef<Value> p,
                                                   const SharedTile &v,
                                                   ArrayRef<Value> acc) {
  // S tiles 2kk and 2kk + 1 (row g pair, row g + 8 pair each), packed next
  // to their step.
  return emitOutputChain(b, loc, v, acc, [&](int64_t kk) {
    ArrayRef<Value> pt = p.slice(8 * kk, 8);
    return SmallVector<Value>{
        pack(b, loc, pt[0], pt[1]), pack(b, loc, pt[2], pt[3]),
        pack(b, loc, pt[4], pt[5]), pack(b, loc, pt[6], pt[7])};
  });
}

SmallVector<Value> WgmmaM64NNK16::accumulatePackedOutput(
    OpBuilder &b, Location loc, Value lane, ArrayRef<Value> packed,
    const SharedTile &v, ArrayRef<Value> acc) {
  return emitOutputChain(b, loc, v, acc, [&](int64_t kk) {
    return SmallVector<Value>(packed.slice(4 * kk, 4));
  });
}

SmallVector<Value> WgmmaM64NNK16::emitOutputChain(
    OpBuilder &b, Location loc, const SharedTile &v, ArrayRef<Value> acc,
    function_ref<SmallVector<Value>(int64_t)> aStep) {
  Value vDesc = descriptor(b, loc, v.base, /*lbo=*/v.rows * kRowBytes,
                           /*sbo=*/kAtomBytes);
  StepDescs aDescs, bDescs{vDesc};
  SmallVector<SmallVector<Value>> a;
  for (int64_t kk = 0; kk < spec.blockN() / 16; ++kk) {
    a.push_back(aStep(kk));
    addStep(b, loc, bDescs, kk * 16 * kRowBytes);
  }
  return emitChain(b, loc, spec.tileHeadDimV, a, aDescs, bDescs,
                   /*transB=*/true, acc, /*wait=*/false);
}

SmallVector<Value> WgmmaM64NNK16::accumulateSharedOutput(OpBuilder &b,
                                                         Location loc,
                                                         const SharedTile &p,
                                                         const SharedTile &v,
                                                         ArrayRef<Value> acc) {
  // P is K-major like Q: a k16 step (16 keys) moves 32 bytes inside a
  // 64-key panel, the next panel is `p.rows * 128` bytes on.
  StepDescs aDescs{descriptor(b, loc, p.base, /*lbo=*/16, /*sbo=*/kAtomBytes)},
      bDescs{descriptor(b, loc, v.base, /*lbo=*/v.rows * kRowBytes,
                        /*sbo=*/kAtomBytes)};
  SmallVector<SmallVector<Value>> a;
  for (int64_t kk = 0; kk < spec.blockN() / 16; ++kk) {
    int64_t panel = kk / (kPanelCols / 16), inPanel = kk % (kPanelCols / 16);
    a.push_back({});
    addStep(b, loc, aDescs, panel * p.rows * kRowBytes + inPanel * 32);
    addStep(b, loc, bDescs, kk * 16 * kRowBytes);
  }
  return emitChain(b, loc, spec.tileHeadDimV, a, aDescs, bDescs,
                   /*transB=*/true, acc, /*wait=*/false);
}

SmallVector<Value> WgmmaM64NNK16::packProbabilities(OpBuilder &b, Location loc,
                                                    ArrayRef<Value> p) {
  // Elements 2i and 2i + 1 are adjacent columns of one row; four pairs in
  // order are a k16 step's A registers (accumulateOutput's order).
  SmallVector<Value> packed;
  for (size_t e = 0; e + 1 < p.size(); e += 2)
    packed.push_back(pack(b, loc, p[e], p[e + 1]));
  return packed;
}

std::unique_ptr<MmaEmitter>
attn::createWgmmaM64NNK16Emitter(const KernelSpec &spec) {
  return std::make_unique<WgmmaM64NNK16>(spec);
}
