//===- AttentionGradKernel.cpp - the kernels of a backward plan -----------===//
//
// All per-tile work is unrolled here in C++, as in the forward kernel: the
// register arrays (scores, dK and dV accumulators) are SSA values indexed by
// constants only.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Conversion/AttnToGPU/AttentionGradKernel.h"
#include "AttnDialect/Conversion/AttnToGPU/SharedMemory.h"
#include "AttnDialect/Target/Constraints.h"
#include "AttnDialect/Utils/MaskUtils.h"
#include "BackwardWorkspace.h"
#include "DropoutFragment.h"
#include "KernelBuilder.h"
#include "LaunchUtils.h"
#include "ScoreParams.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/DenseMap.h"
#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

/// Whether the config's matrix instruction reads its operands from
/// swizzled shared memory (wgmma), as the tables say.
static bool readsSharedOperands(const KernelSpec &spec,
                                const GPUTargetInfo &target) {
  const MatrixInstr *instr =
      target.getChipSpec().lookupInstr(spec.config.getMma());
  return instr && instr->sharedOperands;
}

static BackwardSharedMemoryLayout getLayout(const KernelSpec &spec,
                                            const GPUTargetInfo &target) {
  return getBackwardSharedMemoryLayout(
      spec.blockM(), spec.blockN(), spec.stages(),
      spec.elemType.getIntOrFloatBitWidth() / 8, spec.tileHeadDim,
      spec.tileHeadDimV, target.getSharedRowPadding(),
      readsSharedOperands(spec, target));
}

int64_t attn::getBackwardSharedMemoryBytes(const KernelSpec &spec,
                                           const GPUTargetInfo &target) {
  return getLayout(spec, target).totalBytes;
}

/// `spec` with its tile read as one product of the backward: `rows` rows
/// (the forward's block_m) by `cols` score columns (its block_n), a
/// contraction of `inner` (its D) and an output of `outer` columns (its Dv),
/// both tile (padded) head dims.
static KernelSpec getProductSpec(const KernelSpec &spec, int64_t rows,
                                 int64_t cols, int64_t inner, int64_t outer) {
  ConfigAttr c = spec.config;
  KernelSpec p = spec;
  p.headDim = p.tileHeadDim = inner;
  p.headDimV = p.tileHeadDimV = outer;
  p.config = ConfigAttr::get(
      c.getContext(), c.getName(), rows, cols, c.getWarps(), c.getStages(),
      c.getPipeline(), c.getAccInRegisters(), c.getMma(), c.getAlignBytes(),
      c.getMaxHeadDim(), c.getDeterministic(), c.getHeadSplit(),
      c.getPersistent(), c.getOverlapSoftmax());
  return p;
}

namespace {
/// What every stage kernel needs: the builder at the kernel's entry and
/// small arithmetic helpers.
class StageEmitter : protected KernelBuilder {
public:
  StageEmitter(OpBuilder &b, Location loc, gpu::GPUFuncOp func,
               const KernelSpec &spec, const GPUTargetInfo &target)
      : KernelBuilder(b, loc), func(func), spec(spec), target(target) {
    elemBytes = spec.elemType.getIntOrFloatBitWidth() / 8;
  }

protected:
  Value arg(unsigned i) { return func.getArgument(i); }
  Value load(Type t, Value ptr, int64_t align) {
    return LLVM::LoadOp::create(b, loc, t, ptr, align);
  }
  void store(Value v, Value ptr, int64_t align) {
    LLVM::StoreOp::create(b, loc, v, ptr, align);
  }
  /// Element (b, h, s) of a [B, H, S, ...] operand whose (b, h, s) strides
  /// are arguments `strideArg`..+2.
  Value rowPtr(unsigned ptrArg, unsigned strideArg, Value batch, Value head,
               Value row) {
    Value off = add(add(mul(ext(batch), arg(strideArg)),
                        mul(ext(head), arg(strideArg + 1))),
                    mul(ext(row), arg(strideArg + 2)));
    return gep(arg(ptrArg), spec.elemType, off);
  }
  /// (b * Hq + h) * Sq + i: the row of delta and dq_accum.
  Value workspaceRow(Value batch, Value head, Value i) {
    return add(mul(add(mul(ext(batch), ext(arg(kBwdHeadsQ))), ext(head)),
                   ext(arg(kBwdSeqQ))),
               ext(i));
  }
  Value deltaPtr() { return arg(kBwdWorkspace); }
  /// Buffer `name` of the plan's workspace (BackwardWorkspace.h).
  Value workspaceBuffer(StringRef name) {
    // Offsets depend on delta's and dq_accum's rows only (dbias_accum and
    // dbias_full are last), and D is a constant.
    WorkspaceArith a{
        [&](StringRef dim) -> std::optional<int64_t> {
          if (dim == "head_dim")
            return spec.headDim;
          return std::nullopt;
        },
        [&](StringRef dim) -> Value {
          unsigned i = dim == "batch"     ? kBwdBatch
                       : dim == "heads_q" ? kBwdHeadsQ
                                          : kBwdSeqQ;
          assert((dim == "batch" || dim == "heads_q" || dim == "seqlen_q") &&
                 "a dim before dbias_accum");
          return ext(arg(i));
        },
        [&](int64_t v) { return c64(v); },
        [&](Value x, Value y) { return mul(x, y); },
        [&](Value x, Value y) { return add(x, y); },
        [&](Value x, int64_t m) {
          return mul(arith::DivUIOp::create(b, loc, add(x, c64(m - 1)), c64(m)),
                     c64(m));
        }};
    return gep(arg(kBwdWorkspace), b.getI8Type(),
               getWorkspaceOffset(getBackwardWorkspace(spec), name, a));
  }
  /// dq_accum's rows are workspace rows (workspaceRow) of D floats.
  Value dqAccumRow(Value dqAccum, Value row) {
    return gep(dqAccum, f32, mul(row, c64(spec.headDim)));
  }
  Value dqAccumPtr() { return workspaceBuffer("dq_accum"); }
  Value dbiasAccumPtr() { return workspaceBuffer("dbias_accum"); }
  Value dbiasFullPtr() { return workspaceBuffer("dbias_full"); }
  /// dbias_full's element of (b, h, i, j): [B, Hq, Sq, Sk], contiguous.
  Value fullIndex(ArrayRef<Value> pos) {
    return add(mul(workspaceRow(pos[0], pos[1], pos[2]), ext(arg(kBwdSeqK))),
               ext(pos[3]));
  }
  /// The summed bias gradient's shape (docs/BundleFormat.md): dbias is
  /// summed over each dimension of size > 1 where its stride is 0; its
  /// extent there is 1, elsewhere the full size. `summed` (i1) says whether
  /// any is; when none is, main writes dbias directly.
  struct BiasGradShape {
    Value summed;
    Value ext[4];    // i64
    Value stride[4]; // dbias strides, i64
  };
  BiasGradShape biasGradShape() {
    BiasGradShape g;
    Value full[] = {ext(arg(kBwdBatch)), ext(arg(kBwdHeadsQ)),
                    ext(arg(kBwdSeqQ)), ext(arg(kBwdSeqK))};
    g.summed = arith::ConstantIntOp::create(b, loc, 0, 1);
    for (int d = 0; d < 4; ++d) {
      g.stride[d] = arg(kBwdDBiasStrideB + d);
      Value broadcast = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, g.stride[d],
                                c64(0)),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, full[d],
                                c64(1)));
      g.ext[d] = select(broadcast, c64(1), full[d]);
      g.summed = arith::OrIOp::create(b, loc, g.summed, broadcast);
    }
    return g;
  }
  /// Deterministic plans: whether dbias is summed, and over query rows (or
  /// Sq = 1), as a key-padding bias's is. main then sums each (b, h)'s rows
  /// itself into row 0 of dbias_full, and reduce_dbias reads row 0 alone.
  Value rowsSummed(const BiasGradShape &g) {
    return arith::AndIOp::create(b, loc, g.summed,
                                 arith::CmpIOp::create(b, loc,
                                                       arith::CmpIPredicate::eq,
                                                       g.ext[2], c64(1)));
  }
  /// dbias_accum's element of the full position (b, h, i, j) (i32 each):
  /// the dimensions dbias is summed over index 0.
  Value accumIndex(const BiasGradShape &g, ArrayRef<Value> pos) {
    Value idx = c64(0);
    for (int d = 0; d < 4; ++d) {
      Value zero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         g.stride[d], c64(0));
      idx = add(mul(idx, g.ext[d]), select(zero, c64(0), ext(pos[d])));
    }
    return idx;
  }
  /// dbias's element offset of (b, h, i, j).
  Value dbiasOffset(const BiasGradShape &g, ArrayRef<Value> pos) {
    Value off = c64(0);
    for (int d = 0; d < 4; ++d)
      off = add(off, mul(ext(pos[d]), g.stride[d]));
    return off;
  }
  /// `x` (f32) as the bias gradient's element type.
  Value toDbiasType(Value x) {
    return spec.dbiasType == f32
               ? x
               : arith::TruncFOp::create(b, loc, spec.dbiasType, x).getResult();
  }

  /// Runs `body(lane + c * warpSize)` for each c covering [0, n), guarded
  /// where the last step passes n.
  void forEachLaneElement(Value lane, int64_t n,
                          function_ref<void(Value)> body) {
    int64_t ws = target.getWarpSize();
    for (int64_t c = 0; c * ws < n; ++c) {
      OpBuilder::InsertionGuard guard(b);
      Value d = add(lane, c32(c * ws));
      if ((c + 1) * ws > n) {
        auto ifOp = scf::IfOp::create(b, loc, lt(d, c32(n)), false);
        b.setInsertionPointToStart(ifOp.thenBlock());
      }
      body(d);
    }
  }

  gpu::GPUFuncOp func;
  const KernelSpec &spec;
  const GPUTargetInfo &target;
  int64_t elemBytes;
};

/// pre and dq: one warp per query row of one (head, batch).
class RowStageEmitter : public StageEmitter {
public:
  using StageEmitter::StageEmitter;

  void emitPre();
  void emitConvertDq();

private:
  /// The row's (batch, head, i) and the guard i < Sq; the builder is left
  /// inside the guard.
  void enterRow();

  Value lane, batch, head, row;
};

/// zero_dbias and convert_dbias: one thread per row (b', h', i') of the
/// summed bias gradient, over its keys; reduce_dbias (deterministic plans):
/// one per key column. Nothing when dbias is summed over no dimension.
class BiasStageEmitter : public StageEmitter {
public:
  using StageEmitter::StageEmitter;

  /// The thread's index `index` along dimension `dim` of the summed dbias
  /// (grid x in blocks of threads), its head `h` (grid y) and batch `bb`
  /// (grid z); leaves the builder where the index is in range and dbias is
  /// summed over some dimension.
  void enterThread(const BiasGradShape &g, int dim, Value &index, Value &h,
                   Value &bb) {
    Value tid = toI32(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
    Value threads = toI32(gpu::BlockDimOp::create(b, loc, gpu::Dimension::x));
    index = add(mul(blockId(gpu::Dimension::x), threads), tid);
    h = blockId(gpu::Dimension::y);
    bb = blockId(gpu::Dimension::z);
    Value active = arith::AndIOp::create(
        b, loc, g.summed,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, ext(index),
                              g.ext[dim]));
    auto ifOp = scf::IfOp::create(b, loc, active, false);
    b.setInsertionPointToStart(ifOp.thenBlock());
  }

  /// reduce_dbias: each element of dbias is the sum of dbias_full over the
  /// dimensions dbias is summed over, in an order fixed by the shape alone.
  /// A workgroup takes kReduceColumns key columns j of one (b', h'), and
  /// kReduceShares threads share each column (adjacent j in a warp: loads
  /// are adjacent). With several rows of dbias (not summed over query rows)
  /// thread c of a column sums rows c, c + kReduceShares, ..., each in index
  /// order over the summed batch and heads. With one row (rowsSummed: main
  /// has summed each (b, h)'s query rows into row 0 of dbias_full), the
  /// summed (b, h) positions of row 0 in index order are cut into
  /// kReduceShares runs, one per thread, whose sums thread 0 adds in run
  /// order.
  void emitReduce(gpu::GPUFuncOp func) {
    OpBuilder::InsertionGuard guard(b);
    BiasGradShape g = biasGradShape();
    Value tid = toI32(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
    Value col = arith::RemUIOp::create(b, loc, tid, c32(kReduceColumns));
    Value share = arith::DivUIOp::create(b, loc, tid, c32(kReduceColumns));
    Value j = add(mul(blockId(gpu::Dimension::x), c32(kReduceColumns)), col);
    Value h = blockId(gpu::Dimension::y);
    Value bb = blockId(gpu::Dimension::z);
    Value active = arith::AndIOp::create(
        b, loc, g.summed,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, ext(j),
                              g.ext[3]));
    Value full = dbiasFullPtr();
    Value sizes[] = {arg(kBwdBatch), arg(kBwdHeadsQ), arg(kBwdSeqQ),
                     arg(kBwdSeqK)};
    Value summed[3];
    for (int d = 0; d < 3; ++d)
      summed[d] = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        g.stride[d], c64(0));
    auto storeOut = [&](Value row, Value sum) {
      store(
          toDbiasType(sum),
          gep(arg(kBwdDBias), spec.dbiasType, dbiasOffset(g, {bb, h, row, j})),
          spec.dbiasType.getIntOrFloatBitWidth() / 8);
    };
    Value rowsOut = arith::TruncIOp::create(b, loc, i32, g.ext[2]);
    Value manyRows = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                           rowsOut, c32(1));
    auto mode = scf::IfOp::create(b, loc, manyRows, /*withElse=*/true);

    // Several rows: whole sums, rows shared round-robin.
    b.setInsertionPointToStart(mode.thenBlock());
    {
      auto ifActive = scf::IfOp::create(b, loc, active, /*withElse=*/false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(ifActive.thenBlock());
      auto rows =
          scf::ForOp::create(b, loc, share, rowsOut, c32(kReduceShares));
      b.setInsertionPointToStart(rows.getBody());
      Value r = rows.getInductionVar();
      SmallVector<Value, 4> own = {bb, h, r, j}, pos(4);
      // Dimension d runs over [0, size) where dbias is summed over it, else
      // over its own index alone.
      std::function<Value(int, Value)> sumFrom = [&](int d,
                                                     Value acc) -> Value {
        if (d == 4)
          return fadd(acc, load(f32, gep(full, f32, fullIndex(pos)), 4));
        Value summedHere =
            d < 3 ? summed[d]
                  : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          g.stride[d], c64(0))
                        .getResult();
        Value lo = select(summedHere, c32(0), own[d]);
        Value hi = select(summedHere, sizes[d], add(own[d], c32(1)));
        auto loop = scf::ForOp::create(b, loc, lo, hi, c32(1), ValueRange{acc});
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(loop.getBody());
        pos[d] = loop.getInductionVar();
        scf::YieldOp::create(b, loc, sumFrom(d + 1, loop.getRegionIterArg(0)));
        return loop.getResult(0);
      };
      storeOut(r, sumFrom(0, cf(0.0)));
    }

    // One row: the summed (b, h) positions of row 0 (main summed the rows)
    // in index order, flattened and cut into runs; dbias is never summed
    // over keys.
    b.setInsertionPointToStart(mode.elseBlock());
    Value ext3[3];
    for (int d = 0; d < 2; ++d)
      ext3[d] = select(summed[d], sizes[d], c32(1));
    ext3[2] = c32(1);
    Value inner = mul(ext3[1], ext3[2]);
    Value count = mul(ext3[0], inner);
    Value run = arith::CeilDivUIOp::create(b, loc, count, c32(kReduceShares));
    Value lo = arith::MinUIOp::create(b, loc, mul(share, run), count);
    Value hi = arith::MinUIOp::create(b, loc, add(lo, run), count);
    auto part = scf::IfOp::create(b, loc, TypeRange{f32}, active,
                                  /*withElse=*/true);
    {
      OpBuilder::InsertionGuard inner2(b);
      b.setInsertionPointToStart(part.thenBlock());
      auto loop =
          scf::ForOp::create(b, loc, lo, hi, c32(1), ValueRange{cf(0.0)});
      b.setInsertionPointToStart(loop.getBody());
      Value idx = loop.getInductionVar();
      Value p[3] = {
          arith::DivUIOp::create(b, loc, idx, inner),
          arith::RemUIOp::create(
              b, loc, arith::DivUIOp::create(b, loc, idx, ext3[2]), ext3[1]),
          arith::RemUIOp::create(b, loc, idx, ext3[2])};
      Value own[3] = {bb, h, c32(0)};
      SmallVector<Value, 4> pos;
      for (int d = 0; d < 3; ++d)
        pos.push_back(select(summed[d], p[d], own[d]));
      pos.push_back(j);
      scf::YieldOp::create(
          b, loc,
          ValueRange{fadd(loop.getRegionIterArg(0),
                          load(f32, gep(full, f32, fullIndex(pos)), 4))});
      b.setInsertionPointAfter(loop);
      scf::YieldOp::create(b, loc, loop.getResults());
      b.setInsertionPointToStart(part.elseBlock());
      scf::YieldOp::create(b, loc, ValueRange{cf(0.0)});
    }
    Value sharedBase = getDynamicSharedMemoryBase(b, loc, func, 16);
    store(part.getResult(0), gep(sharedBase, f32, tid), 4);
    gpu::BarrierOp::create(b, loc);
    Value first = arith::AndIOp::create(
        b, loc, active,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, share, c32(0)));
    auto ifFirst = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    Value sum = cf(0.0);
    for (int64_t c = 0; c < kReduceShares; ++c)
      sum = fadd(sum,
                 load(f32,
                      gep(sharedBase, f32, add(col, c32(c * kReduceColumns))),
                      4));
    storeOut(c32(0), sum);
  }

  void emit(bool convert) {
    OpBuilder::InsertionGuard guard(b);
    BiasGradShape g = biasGradShape();
    Value i, h, bb;
    enterThread(g, 2, i, h, bb);
    Value accum = dbiasAccumPtr();
    Value rowBase =
        mul(add(mul(add(mul(ext(bb), g.ext[1]), ext(h)), g.ext[2]), ext(i)),
            g.ext[3]);
    auto loop = scf::ForOp::create(b, loc, c64(0), g.ext[3], c64(1));
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    Value at = gep(accum, f32, add(rowBase, j));
    if (!convert) {
      store(cf(0.0), at, 4);
      return;
    }
    Value j32 = arith::TruncIOp::create(b, loc, i32, j);
    Value off = dbiasOffset(g, {bb, h, i, j32});
    store(toDbiasType(load(f32, at, 4)),
          gep(arg(kBwdDBias), spec.dbiasType, off),
          spec.dbiasType.getIntOrFloatBitWidth() / 8);
  }
};

/// The main stage.
class MainStageEmitter : public StageEmitter {
public:
  /// `slice` of the config's head_split: the columns of dK, dV and dQ this
  /// kernel computes (getHeadSlice); the scores use the whole head dims.
  MainStageEmitter(OpBuilder &b, Location loc, gpu::GPUFuncOp func,
                   const KernelSpec &spec, const GPUTargetInfo &target,
                   int64_t slice = 0)
      : StageEmitter(b, loc, func, spec, target), smem(getLayout(spec, target)),
        slice(slice),
        sliceD(getBackwardHeadSlice(spec, target, spec.tileHeadDim, slice)),
        sliceDv(getBackwardHeadSlice(spec, target, spec.tileHeadDimV, slice)) {
    int64_t bm = spec.blockM(), bn = spec.blockN(), d = spec.tileHeadDim,
            dv = spec.tileHeadDimV;
    rowsPerWarp = bn / spec.warps();
    // Key rows x query columns for S^T = K Q^T, dV += P^T dO,
    // dP^T = V dO^T and dK += dS^T Q; query rows x key columns for
    // dQ = dS K, whose warps take rowsPerWarp query rows at a time. The
    // outputs (dV, dK, dQ) have this slice's columns.
    specs[0] = getProductSpec(spec, bn, bm, d, sliceDv.width);
    specs[1] = getProductSpec(spec, bn, bm, dv, dv);
    specs[2] = getProductSpec(spec, bn, bm, d, sliceD.width);
    scoresMma = target.createMmaEmitter(specs[0]);
    dpMma = target.createMmaEmitter(specs[1]);
    dkMma = target.createMmaEmitter(specs[2]);
    // dQ's accumulators come on top of dK's and dV's: products of one
    // matrix-descriptor panel (64 columns) at a time keep them to half of
    // D = 128's (wgmma; the register-operand instructions take the slice).
    dqChunk = sliceD.width;
    if (scoresMma->getSharedTileLayout() == SharedTileLayout::Swizzle128B)
      dqChunk = std::min<int64_t>(dqChunk, 128 / elemBytes);
    specs[3] = getProductSpec(spec, bn, bn, d, dqChunk);
    dqMma = target.createMmaEmitter(specs[3]);
    threads = spec.warps() * target.getWarpSize();
  }

  void emit();
  /// The deterministic plan's `_main_q`: one workgroup per (query block,
  /// head, batch) walks the key blocks its rows see and computes
  /// dQ = scale * dS K in registers, dS recomputed as `main` does (forward
  /// roles: query rows x key columns); no atomics.
  void emitQueryPass();

private:
  /// The score `raw` = q.k of query `qc` and key `kc` (clamped in range) in
  /// the exp2 domain, as the forward computed it (softcap, then the bias of
  /// `biasBase`); with a softcap `capDerivative` receives 1 - tanh^2.
  Value scoreExp2(Value raw, Value biasBase, Value qc, Value kc,
                  Value &capDerivative) {
    Value x;
    if (spec.softcap) {
      Value t = math::TanhOp::create(b, loc, fmul(raw, score.softcapScale));
      x = fmul(t, score.softcapLog2);
      capDerivative = fsub(cf(1.0), fmul(t, t));
    } else {
      x = fmul(raw, score.scaleLog2);
    }
    if (!spec.biasType)
      return x;
    Value off = add(mul(ext(qc), arg(kBwdBiasStrideB + 2)),
                    mul(ext(kc), arg(kBwdBiasStrideB + 3)));
    Value bias = load(spec.biasType, gep(biasBase, spec.biasType, off),
                      spec.biasType.getIntOrFloatBitWidth() / 8);
    if (bias.getType() != f32)
      bias = arith::ExtFOp::create(b, loc, f32, bias);
    return math::FmaOp::create(b, loc, bias, cf(M_LOG2E), x);
  }
  /// P = exp2(x - lse2) of the raw score `raw` (scoreExp2's arguments);
  /// for a plain score one fma, as the forward's exp2 argument was.
  Value probability(Value raw, Value biasBase, Value qc, Value kc, Value lse2,
                    Value &capDerivative) {
    if (!spec.softcap && !spec.biasType)
      return target.emitExp2(
          b, loc,
          math::FmaOp::create(b, loc, raw, score.scaleLog2,
                              arith::NegFOp::create(b, loc, lse2)));
    return target.emitExp2(
        b, loc, fsub(scoreExp2(raw, biasBase, qc, kc, capDerivative), lse2));
  }
  /// An operand tile of the matrix instructions (their layout), or with
  /// `padded` one read by plain loads (dS).
  SharedTile tile(int64_t offset, int64_t rows, int64_t cols, int64_t rowStride,
                  bool padded = false) {
    return {gep(smemBase, b.getI8Type(), c32(offset)),
            rows,
            cols,
            rowStride,
            spec.elemType,
            padded ? SharedTileLayout::Padded
                   : scoresMma->getSharedTileLayout()};
  }
  void barrier() { gpu::BarrierOp::create(b, loc); }
  /// Waits for this thread's copies to shared memory and publishes every
  /// thread's to the workgroup (and to the matrix units' proxy).
  void publishCopies() {
    target.emitCopyWait(b, loc, 0);
    scoresMma->emitSharedWritesVisible(b, loc);
    barrier();
  }
  /// Runs `body(slot, row)` for each row slot of `layout` (row = `first` +
  /// the slot's offset), inside a guard row < `limit`.
  void forEachRowBelow(const AccLayout &layout, Value first, Value limit,
                       function_ref<void(unsigned, Value)> body) {
    for (unsigned slot = 0; slot < layout.getNumRowSlots(); ++slot) {
      Value row = add(first, c32(layout.rowSlotOffsets[slot]));
      OpBuilder::InsertionGuard guard(b);
      auto ifOp = scf::IfOp::create(b, loc, lt(row, limit), false);
      b.setInsertionPointToStart(ifOp.thenBlock());
      body(slot, row);
    }
  }
  /// Whether S and dP are issued together and waited for one at a time
  /// (asynchronous products). Not in the head_split slices nor under a
  /// softcap: with dP in flight they spill more (D = 256: 104-112 bytes
  /// instead of 68) and ran 2-5% slower (bench/RESULTS.md).
  bool overlapsScoreGrad() const {
    return scoresMma->hasAsyncOutput() && spec.config.getHeadSplit() <= 1 &&
           !spec.softcap;
  }
  /// Whether S^T starts from -lse / scale and dP^T from -delta per query
  /// column (issueScoresOnto): P^T = exp2(S^T scale log2(e)) and dS^T =
  /// P^T dP^T. Each block's lse and delta are then read from shared memory
  /// before the products that would compete with those reads for it (the
  /// H100's top stall in main: bench/RESULTS.md). Plain scores only (no
  /// bias, softcap or dropout, whose dS needs dP itself).
  bool statsInAccumulators() const {
    return overlapsScoreGrad() && smem.rowStatsStageBytes && !score.dropout &&
           !spec.biasType && !spec.softcap;
  }
  /// Per element of the transposed scores (sLayout), `factor` times the
  /// block's row statistic `first` floats into rowStats (0: lse, block_m:
  /// delta), read once per query column.
  SmallVector<Value> columnStats(int64_t first, Value factor) {
    llvm::DenseMap<int64_t, Value> byColumn;
    SmallVector<Value> out;
    for (int64_t off : sLayout.colOffsets) {
      Value &v = byColumn[off];
      if (!v)
        v = fmul(
            load(f32,
                 gep(statsBase, f32, add(sLayout.laneCol, c32(first + off))),
                 4),
            factor);
      out.push_back(v);
    }
    return out;
  }
  /// `acc` once the products writing it asynchronously (wgmma) completed.
  SmallVector<Value> completed(MmaEmitter &mma, ArrayRef<Value> acc) {
    if (!mma.hasAsyncOutput())
      return SmallVector<Value>(acc);
    return mma.waitOutput(b, loc, acc);
  }
  /// Issues the copies of rows [rowStart, rowStart + tile.rows) of the
  /// `cols`-column operand `ptrArg` (head `h`) into `tile`, zeros at or past
  /// `rowLimit` and `cols`.
  void copyRows(const SharedTile &tile, int64_t cols, unsigned ptrArg,
                unsigned strideArg, Value h, Value rowStart, Value rowLimit) {
    emitTileCopy(b, loc, target, tile, cols, tid, threads,
                 rowPtr(ptrArg, strideArg, batch, h, c32(0)), rowStart,
                 rowLimit, arg(strideArg + 2), spec.config.getAlignBytes(),
                 /*rowOffset=*/{}, /*dynamicCols=*/{},
                 /*fixedColumns=*/true);
  }
  /// Buffer `stage` (an i32) of the Q and dO tiles.
  SharedTile queryTile(Value stage) {
    SharedTile t = qTile;
    t.base = gep(t.base, b.getI8Type(), mul(stage, c32(smem.qStageBytes)));
    return t;
  }
  SharedTile gradOutputTile(Value stage) {
    SharedTile t = doTile;
    t.base = gep(t.base, b.getI8Type(), mul(stage, c32(smem.doStageBytes)));
    return t;
  }
  /// Buffer `stage`'s lse of the block's rows; its delta follows block_m
  /// floats on.
  Value rowStats(Value stage) {
    return gep(smemBase, b.getI8Type(),
               add(c32(smem.rowStatsOffset),
                   mul(stage, c32(smem.rowStatsStageBytes))));
  }
  /// Issues (and commits) the copies of query block `m0` of head `h` into
  /// buffer `stage`: Q, dO, and where the layout has room for them
  /// (wgmma) the rows' lse and delta.
  void loadQueryBlock(Value h, Value m0, Value stage, Value rowLimit = {}) {
    if (!rowLimit)
      rowLimit = sq;
    copyRows(queryTile(stage), spec.headDim, kBwdQ, kBwdQStrideB, h, m0,
             rowLimit);
    copyRows(gradOutputTile(stage), spec.headDimV, kBwdDO, kBwdDOStrideB, h, m0,
             rowLimit);
    if (smem.rowStatsStageBytes)
      copyRowStats(h, m0, stage, rowLimit);
    target.emitCopyCommit(b, loc);
  }
  /// The lse and delta of query block `m0`'s rows into buffer `stage`, one
  /// float a thread (lse rows are only 4-byte aligned): the products' lanes
  /// read them where they use them instead of holding each query column's
  /// in registers (D = 128 on wgmma spills otherwise).
  void copyRowStats(Value h, Value m0, Value stage, Value rowLimit) {
    int64_t bm = spec.blockM();
    Value stats = rowStats(stage), lastQ = sub(sq, c32(1));
    Value lseBase = gep(arg(kBwdLse), f32,
                        add(mul(ext(batch), arg(kBwdLseStrideB)),
                            mul(ext(h), arg(kBwdLseStrideB + 1))));
    Value deltaBase = gep(deltaPtr(), f32, workspaceRow(batch, h, c32(0)));
    for (int64_t c = 0; c * threads < 2 * bm; ++c) {
      OpBuilder::InsertionGuard guard(b);
      Value i = add(tid, c32(c * threads));
      if ((c + 1) * threads > 2 * bm) {
        auto ifOp = scf::IfOp::create(b, loc, lt(i, c32(2 * bm)), false);
        b.setInsertionPointToStart(ifOp.thenBlock());
      }
      // Threads [0, bm) copy lse, [bm, 2 bm) delta; rows past Sq read
      // nothing and land as zeros.
      Value isDelta =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, i, c32(bm));
      Value r = arith::SelectOp::create(b, loc, isDelta, sub(i, c32(bm)), i);
      Value q = add(m0, r);
      Value qc = ext(arith::MinSIOp::create(b, loc, q, lastQ));
      Value src = arith::SelectOp::create(
          b, loc, isDelta, gep(deltaBase, f32, qc), gep(lseBase, f32, qc));
      target.emitCopyToShared(b, loc, gep(stats, f32, i), src, 4, 4,
                              lt(q, rowLimit));
    }
  }
  /// One query block of head `h`, its Q and dO in buffer `stage`: updates
  /// dK and dV in `acc`. With `first` and `last` (deterministic plans with
  /// the bias gradient: whether the block is its head's first or last) this
  /// thread's elements of dS^T (before the softcap's derivative) are also
  /// added up per key row slot (sLayout's row slots are key rows) in layout
  /// order, for emitRowSums when the rows are summed (biasRowsSummed;
  /// emitBiasGrad then stores nothing).
  ///
  /// With `afterIssue` (deferredCompletion) dK and dV arrive in flight from
  /// the previous block and leave in flight: the wait for S^T completes
  /// the previous block's, and `afterIssue` runs once dV's product is
  /// issued; it may then overwrite the previous block's Q and dO buffer.
  void emitQueryBlock(Value h, Value m0, Value stage,
                      MutableArrayRef<Value> acc, Value first = {},
                      Value last = {},
                      function_ref<void()> afterIssue = nullptr);
  /// Whether main's loop leaves dK's and dV's products in flight into the
  /// next block and issues the next block's copies once that block's dV
  /// product is: the wait for dK and the copies' address arithmetic then
  /// run under the products instead of between them (D = 128 on the H100:
  /// +0-6% from S = 2k). The copies' registers are then live beside dK,
  /// dV and dP^T: not where the target caps registers for more workgroups
  /// per SM (the D = 64 main at 168: ptxas serialized its wgmmas, C7512).
  bool deferredCompletion() const {
    return spec.stages() > 1 && statsInAccumulators() && spec.deterministic &&
           target.getBackwardRegisterCap(spec) == 0;
  }
  /// The loop over (query head of the group, query block) pairs, flattened
  /// so that the next pair's loads overlap this one's products. With
  /// `sumRows` each block says whether it is its head's first or last, for
  /// the bias gradient's row sums (emitQueryBlock).
  scf::ForOp emitBlockLoop(Value hLo, Value group, Value iLo, Value iHi,
                           ValueRange init, bool sumRows = false);
  /// P^T and (with a softcap) the derivative factor 1 - t^2 per element of
  /// the transposed scores `s`.
  /// With `shifted` (statsInAccumulators) `s` holds S^T - lse / scale.
  void emitProbabilities(Value h, Value m0, MutableArrayRef<Value> s,
                         SmallVectorImpl<Value> &dsc, bool shifted = false);
  /// dq_accum += scale * dS K for the query rows of this block.
  void emitDq(Value h, Value m0);
  /// dS of this warp's rows from `rowBase` of the block (shared memory), in
  /// the score layout of the dQ product.
  SmallVector<Value> loadScoreGrad(Value rowBase);
  /// Adds `dq` (dqLayout, columns `chunk` of the rows from `rowBase` of
  /// query block `m0`) times the scale to dq_accum.
  void emitDqAtomics(Value h, Value m0, Value rowBase, HeadSlice chunk,
                     ArrayRef<Value> dq);
  /// Element e of this thread's dS (key row, query column) into the bias
  /// gradient: added to dbias_accum when dbias is summed over a dimension,
  /// else written to dbias (each (b, h, i, j) is visited once).
  void emitBiasGrad(Value h, Value m0, unsigned e, Value ds);
  /// One query block's sums of dS over its query rows, per key row slot of
  /// this thread (`sums`), into the sum over head `h`'s rows: added over the
  /// lanes that hold the row's query columns (sLayout.rowReduceXor, a fixed
  /// butterfly), then by one of them to the head's running sum in shared
  /// memory (restarted at the head's `first` block), which at its `last`
  /// goes to row 0 of dbias_full. `first` and `last` are uniform.
  void emitRowSums(Value h, Value first, Value last, ArrayRef<Value> sums);
  void emitEpilogue(ArrayRef<Value> acc);

  /// Columns `offset`.. of `tile`, `width` of them: a slice's operand. In
  /// a swizzled tile slices start at a panel (the instruction's head-dim
  /// multiple is the panel's 64 columns).
  SharedTile columns(const SharedTile &tile, HeadSlice s) {
    SharedTile t = tile;
    if (tile.layout == SharedTileLayout::Swizzle128B) {
      int64_t panelCols = 128 / elemBytes;
      assert(s.offset % panelCols == 0 && "slice inside a swizzled panel");
      t.base = gep(tile.base, b.getI8Type(),
                   c32(s.offset / panelCols * tile.rows * 128));
    } else {
      t.base = gep(tile.base, spec.elemType, c32(s.offset));
    }
    t.cols = s.width;
    return t;
  }

  BackwardSharedMemoryLayout smem;
  int64_t slice;
  HeadSlice sliceD, sliceDv;
  std::array<KernelSpec, 4> specs;
  std::unique_ptr<MmaEmitter> scoresMma, dpMma, dkMma, dqMma;
  /// Columns of dQ per product (a divisor of the slice's width).
  int64_t dqChunk;
  int64_t rowsPerWarp, threads;

  Value tid, lane, warp, warpRow, n0, headKV, batch, sq, sk, smemBase, dqAccum;
  /// The current query block's lse and delta (rowStats), when staged.
  Value statsBase;
  ScoreParams score;
  /// With the bias gradient: its shape and dbias_accum (deterministic
  /// plans: dbias_full).
  std::optional<BiasGradShape> biasGrad;
  Value dbiasAccum;
  /// Deterministic plans with the bias gradient: rowsSummed (i1, uniform).
  Value biasRowsSummed;
  SharedTile kTile, vTile, qTile, doTile, dsTile;
  AccLayout sLayout, dkLayout, dvLayout, pLayout, dqLayout;
};
} // namespace

//===----------------------------------------------------------------------===//
// pre and dq
//===----------------------------------------------------------------------===//

void RowStageEmitter::enterRow() {
  Value tid = toI32(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  int64_t ws = target.getWarpSize();
  lane = arith::RemUIOp::create(b, loc, tid, c32(ws));
  Value warp = arith::DivUIOp::create(b, loc, tid, c32(ws));
  row = add(mul(blockId(gpu::Dimension::x), c32(kBackwardRowWarps)), warp);
  head = blockId(gpu::Dimension::y);
  batch = blockId(gpu::Dimension::z);
  auto ifOp = scf::IfOp::create(b, loc, lt(row, arg(kBwdSeqQ)), false);
  b.setInsertionPointToStart(ifOp.thenBlock());
}

void RowStageEmitter::emitPre() {
  OpBuilder::InsertionGuard guard(b);
  enterRow();
  Value o = rowPtr(kBwdO, kBwdOStrideB, batch, head, row);
  Value dout = rowPtr(kBwdDO, kBwdDOStrideB, batch, head, row);
  int64_t ws = target.getWarpSize(), dv = spec.headDimV;
  Value sum = cf(0.0);
  for (int64_t c = 0; c * ws < dv; ++c) {
    // Lanes past Dv read element 0 and add nothing.
    Value d = add(lane, c32(c * ws));
    Value valid = lt(d, c32(dv));
    Value at = ext(select(valid, d, c32(0)));
    Value x = arith::ExtFOp::create(
        b, loc, f32, load(spec.elemType, gep(o, spec.elemType, at), elemBytes));
    Value y = arith::ExtFOp::create(
        b, loc, f32,
        load(spec.elemType, gep(dout, spec.elemType, at), elemBytes));
    sum = fadd(sum, select(valid, fmul(x, y), cf(0.0)));
  }
  for (int64_t off = ws / 2; off >= 1; off /= 2)
    sum = fadd(sum, target.emitShuffleXor(b, loc, sum, off));
  Value r = workspaceRow(batch, head, row);
  {
    OpBuilder::InsertionGuard g(b);
    auto ifOp = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, c32(0)),
        false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    store(sum, gep(deltaPtr(), f32, r), 4);
  }
  if (!spec.deterministic) {
    Value accum = dqAccumRow(dqAccumPtr(), r);
    forEachLaneElement(lane, spec.headDim, [&](Value d) {
      store(cf(0.0), gep(accum, f32, ext(d)), 4);
    });
  }
  if (!spec.dbiasType)
    return;
  // A bias gradient written directly (summed over nothing), or a
  // deterministic plan's dbias_full: main skips the masked-out blocks, so
  // the row starts as zeros.
  BiasGradShape g = biasGradShape();
  auto direct = scf::IfOp::create(
      b, loc,
      arith::XOrIOp::create(b, loc, g.summed,
                            arith::ConstantIntOp::create(b, loc, 1, 1)),
      spec.deterministic);
  auto zeroRow = [&](Type type, function_ref<Value(Value)> address) {
    Value zero = type == f32 ? cf(0.0) : toDbiasType(cf(0.0));
    auto loop = scf::ForOp::create(b, loc, lane, arg(kBwdSeqK),
                                   c32(target.getWarpSize()));
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    store(zero, address(loop.getInductionVar()),
          type.getIntOrFloatBitWidth() / 8);
  };
  b.setInsertionPointToStart(direct.thenBlock());
  zeroRow(spec.dbiasType, [&](Value j) {
    return gep(arg(kBwdDBias), spec.dbiasType,
               dbiasOffset(g, {batch, head, row, j}));
  });
  if (!spec.deterministic)
    return;
  b.setInsertionPointToStart(direct.elseBlock());
  // With the rows summed in main, only row 0 is used: zeros for the key
  // blocks no query row sees, which main does not write.
  Value used = arith::OrIOp::create(
      b, loc,
      arith::XOrIOp::create(b, loc, rowsSummed(g),
                            arith::ConstantIntOp::create(b, loc, 1, 1)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, row, c32(0)));
  auto ifUsed = scf::IfOp::create(b, loc, used, /*withElse=*/false);
  b.setInsertionPointToStart(ifUsed.thenBlock());
  Value full = dbiasFullPtr();
  zeroRow(f32, [&](Value j) {
    return gep(full, f32, fullIndex({batch, head, row, j}));
  });
}

void RowStageEmitter::emitConvertDq() {
  OpBuilder::InsertionGuard guard(b);
  enterRow();
  Value r = workspaceRow(batch, head, row);
  Value accum = dqAccumRow(dqAccumPtr(), r);
  Value dq = rowPtr(kBwdDQ, kBwdDQStrideB, batch, head, row);
  forEachLaneElement(lane, spec.headDim, [&](Value d) {
    Value x = load(f32, gep(accum, f32, ext(d)), 4);
    store(arith::TruncFOp::create(b, loc, spec.elemType, x),
          gep(dq, spec.elemType, ext(d)), elemBytes);
  });
}

//===----------------------------------------------------------------------===//
// main
//===----------------------------------------------------------------------===//

void MainStageEmitter::emitProbabilities(Value h, Value m0,
                                         MutableArrayRef<Value> s,
                                         SmallVectorImpl<Value> &dsc,
                                         bool shifted) {
  Value negInf = cf(-std::numeric_limits<double>::infinity());
  Value lastQ = sub(sq, c32(1)), lastK = sub(sk, c32(1));
  Value lseBase = gep(arg(kBwdLse), f32,
                      add(mul(ext(batch), arg(kBwdLseStrideB)),
                          mul(ext(h), arg(kBwdLseStrideB + 1))));
  Value biasBase;
  if (spec.biasType)
    biasBase = gep(arg(kBwdBias), spec.biasType,
                   add(mul(ext(batch), arg(kBwdBiasStrideB)),
                       mul(ext(h), arg(kBwdBiasStrideB + 1))));
  Value log2e = cf(M_LOG2E);

  // Per key row slot and per query column, loaded once each.
  SmallVector<Value> keyOfSlot;
  for (int64_t off : sLayout.rowSlotOffsets)
    keyOfSlot.push_back(add(add(n0, warpRow), add(sLayout.laneRow, c32(off))));
  // A query column: its index, the index clamped into [0, Sq) for loads,
  // and its lse in the exp2 domain.
  struct Column {
    Value q, qc, lse2;
  };
  llvm::DenseMap<int64_t, Column> columns;
  auto column = [&](int64_t off) {
    auto it = columns.find(off);
    if (it != columns.end())
      return it->second;
    Value col = add(sLayout.laneCol, c32(off));
    Value q = add(m0, col);
    Value qc = arith::MinSIOp::create(b, loc, q, lastQ);
    Value lse = statsBase ? load(f32, gep(statsBase, f32, col), 4)
                          : load(f32, gep(lseBase, f32, ext(qc)), 4);
    // Rows that saw no key have lse = -inf and contribute nothing.
    return columns[off] = {q, qc, fmul(lse, log2e)};
  };

  for (unsigned e = 0, ne = s.size(); e < ne; ++e) {
    if (shifted) {
      s[e] = target.emitExp2(b, loc, fmul(s[e], score.scaleLog2));
      continue;
    }
    Value key = keyOfSlot[sLayout.rowSlot[e]];
    Column col = column(sLayout.colOffsets[e]);
    Value capDerivative;
    s[e] = probability(s[e], biasBase, col.qc,
                       arith::MinSIOp::create(b, loc, key, lastK), col.lse2,
                       capDerivative);
    if (capDerivative)
      dsc.push_back(capDerivative);
  }

  // Mask only tiles crossing a mask edge or a tail, tested at the corners
  // of this warp's key rows x the block's queries (masks are bands);
  // uniform per warp. Inside, every row sees a key, so its lse is finite.
  Value keyFirst = add(n0, warpRow);
  Value qLast = add(m0, c32(spec.blockM() - 1));
  Value inside = arith::AndIOp::create(
      b, loc, lt(qLast, sq),
      arith::AndIOp::create(
          b, loc,
          emitKeyVisible(b, loc, score.mask, m0,
                         add(keyFirst, c32(rowsPerWarp - 1)), sq, sk),
          emitKeyVisible(b, loc, score.mask, qLast, keyFirst, sq, sk)));
  auto ifOp = scf::IfOp::create(b, loc, ValueRange(s).getTypes(), inside,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  scf::YieldOp::create(b, loc, SmallVector<Value>(s));
  b.setInsertionPointToStart(ifOp.elseBlock());
  SmallVector<Value> masked;
  for (unsigned e = 0, ne = s.size(); e < ne; ++e) {
    Value key = keyOfSlot[sLayout.rowSlot[e]];
    Column col = column(sLayout.colOffsets[e]);
    Value visible = arith::AndIOp::create(
        b, loc,
        arith::AndIOp::create(
            b, loc, lt(col.q, sq),
            emitKeyVisible(b, loc, score.mask, col.q, key, sq, sk)),
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, col.lse2,
                              negInf));
    masked.push_back(select(visible, s[e], cf(0.0)));
  }
  scf::YieldOp::create(b, loc, masked);
  llvm::copy(ifOp.getResults(), s.begin());
}

void MainStageEmitter::emitBiasGrad(Value h, Value m0, unsigned e, Value ds) {
  Value key = add(
      add(n0, warpRow),
      add(sLayout.laneRow, c32(sLayout.rowSlotOffsets[sLayout.rowSlot[e]])));
  Value q = add(add(m0, sLayout.laneCol), c32(sLayout.colOffsets[e]));
  Value inside = arith::AndIOp::create(b, loc, lt(key, sk), lt(q, sq));
  // Rows summed: main sums them itself (emitRowSums).
  if (biasRowsSummed)
    inside = arith::AndIOp::create(
        b, loc, inside,
        arith::XOrIOp::create(b, loc, biasRowsSummed,
                              arith::ConstantIntOp::create(b, loc, 1, 1)));
  OpBuilder::InsertionGuard guard(b);
  auto ifOp = scf::IfOp::create(b, loc, inside, /*withElse=*/false);
  SmallVector<Value> pos = {batch, h, q, key};
  b.setInsertionPointToStart(ifOp.thenBlock());
  auto direct = [&] {
    store(toDbiasType(ds),
          gep(arg(kBwdDBias), spec.dbiasType, dbiasOffset(*biasGrad, pos)),
          spec.dbiasType.getIntOrFloatBitWidth() / 8);
  };
  auto summed = scf::IfOp::create(b, loc, biasGrad->summed, true);
  b.setInsertionPointToStart(summed.thenBlock());
  // Deterministic plans add nothing by atomics: each element goes to
  // dbias_full once, reduce_dbias sums them in a fixed order.
  if (spec.deterministic)
    store(ds, gep(dbiasAccum, f32, fullIndex(pos)), 4);
  else
    target.emitAtomicAddF32(
        b, loc, gep(dbiasAccum, f32, accumIndex(*biasGrad, pos)), {ds});
  b.setInsertionPointToStart(summed.elseBlock());
  direct();
}

SmallVector<Value> MainStageEmitter::loadScoreGrad(Value rowBase) {
  // Adjacent columns of a row in one load (even column, even row stride:
  // aligned to the pair).
  SmallVector<Value> p;
  Value first = add(rowBase, pLayout.laneRow);
  bool evenStride =
      dsTile.rowStride % 2 == 0 && pLayout.laneColMultiple % 2 == 0;
  for (unsigned e = 0, ne = pLayout.getNumElements(); e < ne;) {
    Value r = add(first, c32(pLayout.rowSlotOffsets[pLayout.rowSlot[e]]));
    Value c = add(pLayout.laneCol, c32(pLayout.colOffsets[e]));
    Value ptr =
        gep(dsTile.base, spec.elemType, add(mul(r, c32(dsTile.rowStride)), c));
    bool pair = evenStride && e + 1 < ne &&
                pLayout.rowSlot[e + 1] == pLayout.rowSlot[e] &&
                pLayout.colOffsets[e + 1] == pLayout.colOffsets[e] + 1 &&
                pLayout.colOffsets[e] % 2 == 0;
    if (!pair) {
      p.push_back(arith::ExtFOp::create(b, loc, f32,
                                        load(spec.elemType, ptr, elemBytes)));
      ++e;
      continue;
    }
    auto pairType = VectorType::get({2}, spec.elemType);
    Value v = load(pairType, ptr, 2 * elemBytes);
    for (int64_t i = 0; i < 2; ++i) {
      Value x = vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i});
      p.push_back(arith::ExtFOp::create(b, loc, f32, x));
    }
    e += 2;
  }
  return p;
}

void MainStageEmitter::emitRowSums(Value h, Value first, Value last,
                                   ArrayRef<Value> sums) {
  // The running sums live in the dS tile, which a deterministic main leaves
  // unused (no dQ here): one f32 per key row of the block, each only ever
  // touched by the lane that owns its row, so no barrier. (As loop-carried
  // registers they made D = 64 spill more on sm_90a and sm_80.)
  assert(spec.blockN() * 4 <= dsTile.rows * dsTile.rowStride * elemBytes &&
         "the dS tile holds a float per key row");
  // The lanes of a key row differ in the bits of rowReduceXor; the one with
  // none set adds. fadd commutes, so every lane ends with the same sum.
  int32_t groupBits = 0;
  for (int32_t off : sLayout.rowReduceXor)
    groupBits |= off;
  SmallVector<Value> rowSums;
  for (Value sum : sums) {
    for (int32_t off : sLayout.rowReduceXor)
      sum = fadd(sum, target.emitShuffleXor(b, loc, sum, off));
    rowSums.push_back(sum);
  }
  Value leader = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::AndIOp::create(b, loc, lane, c32(groupBits)), c32(0));
  OpBuilder::InsertionGuard guard(b);
  auto ifLeader = scf::IfOp::create(b, loc, leader, /*withElse=*/false);
  b.setInsertionPointToStart(ifLeader.thenBlock());
  Value rowFirst = add(warpRow, sLayout.laneRow);
  for (unsigned slot = 0, ns = rowSums.size(); slot < ns; ++slot) {
    Value row = add(rowFirst, c32(sLayout.rowSlotOffsets[slot]));
    Value at = gep(dsTile.base, f32, row);
    Value sum = fadd(select(first, cf(0.0), load(f32, at, 4)), rowSums[slot]);
    store(sum, at, 4);
    Value key = add(n0, row);
    OpBuilder::InsertionGuard inSlot(b);
    auto ifLast = scf::IfOp::create(
        b, loc, arith::AndIOp::create(b, loc, last, lt(key, sk)),
        /*withElse=*/false);
    b.setInsertionPointToStart(ifLast.thenBlock());
    store(sum, gep(dbiasAccum, f32, fullIndex({batch, h, c32(0), key})), 4);
  }
}

void MainStageEmitter::emitDq(Value h, Value m0) {
  int64_t bm = spec.blockM();
  if (dqMma->hasAsyncOutput()) {
    // Warpgroup products (wgmma): items of 64 query rows x dqChunk columns,
    // each over all block_n keys of dS, dealt to the warpgroups in turn, so
    // that two warpgroups split D = 128 where block_m is one warpgroup's
    // rows. Each starts from zero and is waited for before its atomics.
    int64_t groups = spec.warps() / 4, groupRows = 4 * rowsPerWarp;
    int64_t chunks = sliceD.width / dqChunk;
    Value group = arith::DivUIOp::create(b, loc, warp, c32(4));
    Value rowInGroup =
        mul(arith::RemUIOp::create(b, loc, warp, c32(4)), c32(rowsPerWarp));
    for (int64_t i = 0, n = bm / groupRows * chunks; i < n; ++i) {
      OpBuilder::InsertionGuard guard(b);
      if (groups > 1) {
        // Uniform per warpgroup.
        auto ifOp = scf::IfOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, group,
                                  c32(i % groups)),
            false);
        b.setInsertionPointToStart(ifOp.thenBlock());
      }
      Value rowBase = add(c32(i / chunks * groupRows), rowInGroup);
      HeadSlice chunk{sliceD.offset + i % chunks * dqChunk, dqChunk};
      SmallVector<Value> dq = completed(
          *dqMma, dqMma->accumulateOutput(b, loc, lane, loadScoreGrad(rowBase),
                                          columns(kTile, chunk), {}));
      emitDqAtomics(h, m0, rowBase, chunk, dq);
    }
    return;
  }
  int64_t rowsPerPass = rowsPerWarp * spec.warps();
  for (int64_t pass = 0; pass * rowsPerPass < bm; ++pass) {
    OpBuilder::InsertionGuard guard(b);
    Value rowBase = add(c32(pass * rowsPerPass), warpRow);
    if ((pass + 1) * rowsPerPass > bm) {
      // Whole warps drop out: the condition is uniform per warp.
      auto ifOp = scf::IfOp::create(b, loc, lt(rowBase, c32(bm)), false);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    // This warp's rows of dS, read back in the score layout of dS K.
    SmallVector<Value> zero(dqLayout.getNumElements(), cf(0.0));
    SmallVector<Value> dq = dqMma->accumulateOutput(
        b, loc, lane, loadScoreGrad(rowBase), columns(kTile, sliceD), zero);
    emitDqAtomics(h, m0, rowBase, sliceD, dq);
  }
}

void MainStageEmitter::emitDqAtomics(Value h, Value m0, Value rowBase,
                                     HeadSlice chunk, ArrayRef<Value> dq) {
  Value scale = arg(kBwdScale);
  Value accumRow0 = workspaceRow(batch, h, c32(0));
  Value qFirst = add(add(m0, rowBase), dqLayout.laneRow);
  forEachRowBelow(dqLayout, qFirst, sq, [&](unsigned slot, Value q) {
    Value rowPtr = dqAccumRow(dqAccum, add(accumRow0, ext(q)));
    // Adjacent columns of a row go out as one atomic where the target
    // has vector atomics (the pair starts at an even column: 8 bytes).
    // dq_accum rows are D floats: a padded tile's columns past D are
    // skipped, and pairs need an even D to stay within a row.
    int64_t d = spec.headDim;
    bool tail = d < chunk.offset + chunk.width;
    for (unsigned e = 0, ne = dq.size(); e < ne;) {
      if (dqLayout.rowSlot[e] != slot) {
        ++e;
        continue;
      }
      bool pair = e + 1 < ne && dqLayout.rowSlot[e + 1] == slot &&
                  dqLayout.colOffsets[e + 1] == dqLayout.colOffsets[e] + 1 &&
                  dqLayout.colOffsets[e] % 2 == 0 && d % 2 == 0;
      Value c =
          add(dqLayout.laneCol, c32(chunk.offset + dqLayout.colOffsets[e]));
      SmallVector<Value, 2> vals = {fmul(dq[e], scale)};
      if (pair)
        vals.push_back(fmul(dq[e + 1], scale));
      OpBuilder::InsertionGuard inColumn(b);
      if (tail) {
        auto colIf = scf::IfOp::create(b, loc, lt(c, c32(d)), false);
        b.setInsertionPointToStart(colIf.thenBlock());
      }
      target.emitAtomicAddF32(b, loc, gep(rowPtr, f32, ext(c)), vals);
      e += pair ? 2 : 1;
    }
  });
}

void MainStageEmitter::emitQueryBlock(Value h, Value m0, Value stage,
                                      MutableArrayRef<Value> acc, Value first,
                                      Value last,
                                      function_ref<void()> afterIssue) {
  unsigned nk = dkLayout.getNumElements();
  MutableArrayRef<Value> dk = acc.take_front(nk), dv = acc.drop_front(nk);
  SharedTile qTile = queryTile(stage), doTile = gradOutputTile(stage);
  statsBase = smem.rowStatsStageBytes ? rowStats(stage) : Value();

  // With asynchronous products dP^T = V dO^T runs while P^T is computed
  // (S^T is waited for alone), and dV's product while dS^T is.
  bool overlap = overlapsScoreGrad(), statsInAcc = statsInAccumulators();
  SmallVector<Value> keys = scoresMma->loadQuery(b, loc, lane, kTile, warpRow);
  SmallVector<Value> s, dp;
  if (statsInAcc) {
    s = scoresMma->issueScoresOnto(
        b, loc, lane, keys, qTile,
        columnStats(0,
                    arith::DivFOp::create(b, loc, cf(-1.0), arg(kBwdScale))));
    dp = dpMma->issueScoresOnto(b, loc, lane,
                                dpMma->loadQuery(b, loc, lane, vTile, warpRow),
                                doTile, columnStats(spec.blockM(), cf(-1.0)));
    s = scoresMma->waitOutput(b, loc, s, /*pending=*/1);
  } else if (overlap) {
    s = scoresMma->issueScores(b, loc, lane, keys, qTile);
    dp = dpMma->issueScores(
        b, loc, lane, dpMma->loadQuery(b, loc, lane, vTile, warpRow), doTile);
    s = scoresMma->waitOutput(b, loc, s, /*pending=*/1);
  } else {
    s = scoresMma->computeScores(b, loc, lane, keys, qTile);
  }
  SmallVector<Value> dsc;
  emitProbabilities(h, m0, s, dsc, statsInAcc);
  // With dropout the forward's O used P * Z: dV takes P * Z, and dP is
  // Z * (dO V^T).
  SmallVector<Value> z, pv(s);
  if (score.dropout) {
    bool aligned = spec.blockM() % 16 == 0 && spec.blockN() % 16 == 0 &&
                   rowsPerWarp % 16 == 0;
    z = emitDropoutFactors(b, loc, *score.dropout,
                           add(mul(batch, arg(kBwdHeadsQ)), h), sLayout,
                           add(n0, warpRow), m0, aligned, /*transposed=*/true);
    for (unsigned e = 0, ne = s.size(); e < ne; ++e)
      pv[e] = fmul(s[e], z[e]);
  }
  SmallVector<Value> next = scoresMma->accumulateOutput(
      b, loc, lane, pv, columns(doTile, sliceDv), SmallVector<Value>(dv));
  llvm::copy(next, dv.begin());
  if (afterIssue)
    afterIssue();

  if (overlap)
    dp = dpMma->waitOutput(b, loc, dp, /*pending=*/1);
  else
    dp = dpMma->computeScores(
        b, loc, lane, dpMma->loadQuery(b, loc, lane, vTile, warpRow), doTile);
  Value deltaBase = gep(deltaPtr(), f32, workspaceRow(batch, h, c32(0)));
  Value lastQ = sub(sq, c32(1));
  llvm::DenseMap<int64_t, Value> deltas;
  SmallVector<Value> rowSums(first ? sLayout.getNumRowSlots() : 0);
  for (unsigned e = 0, ne = s.size(); e < ne; ++e) {
    int64_t off = sLayout.colOffsets[e];
    // Staged beside lse, else from the workspace; with statsInAcc dP^T
    // started from -delta.
    Value &delta = deltas[off];
    if (!statsInAcc && !delta) {
      Value at = statsBase
                     ? gep(statsBase, f32,
                           add(sLayout.laneCol, c32(spec.blockM() + off)))
                     : gep(deltaBase, f32,
                           ext(arith::MinSIOp::create(
                               b, loc, add(add(m0, sLayout.laneCol), c32(off)),
                               lastQ)));
      delta = load(f32, at, 4);
    }
    // dS = P (dP - delta), times d(capped)/d(uncapped) under a softcap.
    Value dpe = score.dropout ? fmul(dp[e], z[e]) : dp[e];
    s[e] = fmul(s[e], statsInAcc ? dpe : fsub(dpe, delta));
    // The bias is added after the cap: its gradient is dS before the cap's
    // derivative.
    // One slice writes the bias gradient. Masked and out-of-range elements
    // add 0 to the row sums: P is 0 there, and for rows past Sq dP too
    // (their dO rows are zeros).
    if (!rowSums.empty()) {
      Value &sum = rowSums[sLayout.rowSlot[e]];
      sum = sum ? fadd(sum, s[e]) : s[e];
    }
    if (biasGrad && slice == 0)
      emitBiasGrad(h, m0, e, s[e]);
    if (spec.softcap)
      s[e] = fmul(s[e], dsc[e]);
  }
  if (first) {
    OpBuilder::InsertionGuard guard(b);
    auto ifSummed =
        scf::IfOp::create(b, loc, biasRowsSummed, /*withElse=*/false);
    b.setInsertionPointToStart(ifSummed.thenBlock());
    emitRowSums(h, first, last, rowSums);
  }
  next = dkMma->accumulateOutput(b, loc, lane, s, columns(qTile, sliceD),
                                 SmallVector<Value>(dk));
  llvm::copy(next, dk.begin());

  // A deterministic plan computes dQ in its own pass (emitQueryPass).
  if (!spec.deterministic) {
    // dS^T -> dS in shared memory (query rows, key columns) for dQ = dS K.
    Value keyFirst = add(warpRow, sLayout.laneRow);
    for (unsigned e = 0, ne = s.size(); e < ne; ++e) {
      Value key =
          add(keyFirst, c32(sLayout.rowSlotOffsets[sLayout.rowSlot[e]]));
      Value q = add(sLayout.laneCol, c32(sLayout.colOffsets[e]));
      store(arith::TruncFOp::create(b, loc, spec.elemType, s[e]),
            gep(dsTile.base, spec.elemType,
                add(mul(q, c32(dsTile.rowStride)), key)),
            elemBytes);
    }
    barrier();
    emitDq(h, m0);
  }
  // The next block's copies overwrite the Q buffer the dK product reads
  // (already complete where this warpgroup waited for a dQ product).
  if (!afterIssue)
    llvm::copy(completed(*dkMma, SmallVector<Value>(dk)), dk.begin());
}

void MainStageEmitter::emitEpilogue(ArrayRef<Value> acc) {
  unsigned nk = dkLayout.getNumElements();
  Value scale = arg(kBwdScale);
  // Columns of a padded tile past the operand's head dim are not stored.
  auto storeRows = [&](const AccLayout &layout, ArrayRef<Value> vals,
                       int64_t cols, HeadSlice s, unsigned ptrArg,
                       unsigned strideArg, bool scaled) {
    Value keyFirst = add(add(n0, warpRow), layout.laneRow);
    forEachRowBelow(layout, keyFirst, sk, [&](unsigned slot, Value key) {
      Value rowBase = rowPtr(ptrArg, strideArg, batch, headKV, key);
      for (unsigned e = 0, ne = vals.size(); e < ne; ++e) {
        if (layout.rowSlot[e] != slot)
          continue;
        Value x = scaled ? fmul(vals[e], scale) : vals[e];
        Value c = add(layout.laneCol, c32(s.offset + layout.colOffsets[e]));
        OpBuilder::InsertionGuard inColumn(b);
        if (cols < s.offset + s.width) {
          auto colIf = scf::IfOp::create(b, loc, lt(c, c32(cols)), false);
          b.setInsertionPointToStart(colIf.thenBlock());
        }
        store(arith::TruncFOp::create(b, loc, spec.elemType, x),
              gep(rowBase, spec.elemType, ext(c)), elemBytes);
      }
    });
  };
  storeRows(dkLayout, acc.take_front(nk), spec.headDim, sliceD, kBwdDK,
            kBwdDKStrideB, true);
  storeRows(dvLayout, acc.drop_front(nk), spec.headDimV, sliceDv, kBwdDV,
            kBwdDVStrideB, false);
}

void MainStageEmitter::emit() {
  int64_t ws = target.getWarpSize();
  tid = toI32(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  lane = arith::RemUIOp::create(b, loc, tid, c32(ws));
  warp = arith::DivUIOp::create(b, loc, tid, c32(ws));
  warpRow = mul(warp, c32(rowsPerWarp));
  n0 = mul(blockId(gpu::Dimension::x), c32(spec.blockN()));
  headKV = blockId(gpu::Dimension::y);
  batch = blockId(gpu::Dimension::z);
  sq = arg(kBwdSeqQ);
  sk = arg(kBwdSeqK);
  if (!spec.deterministic)
    dqAccum = dqAccumPtr();

  score = bindScoreParams(b, loc, func.getArguments(), spec, kBwdScale,
                          kBwdDropoutP);
  if (spec.dbiasType) {
    biasGrad = biasGradShape();
    dbiasAccum = spec.deterministic ? dbiasFullPtr() : dbiasAccumPtr();
    if (spec.deterministic)
      biasRowsSummed = rowsSummed(*biasGrad);
  }

  smemBase = getDynamicSharedMemoryBase(b, loc, func,
                                        smem.alignSlack ? smem.alignSlack : 16);
  int64_t bm = spec.blockM(), bn = spec.blockN();
  kTile = tile(smem.kOffset, bn, spec.tileHeadDim, smem.kRowStride);
  vTile = tile(smem.vOffset, bn, spec.tileHeadDimV, smem.vRowStride);
  qTile = tile(smem.qOffset, bm, spec.tileHeadDim, smem.qRowStride);
  doTile = tile(smem.doOffset, bm, spec.tileHeadDimV, smem.doRowStride);
  dsTile = tile(smem.dsOffset, bm, bn, smem.dsRowStride, /*padded=*/true);

  sLayout = scoresMma->getScoreLayout(b, loc, lane);
  dvLayout = scoresMma->getOutputLayout(b, loc, lane);
  dkLayout = dkMma->getOutputLayout(b, loc, lane);
  pLayout = dqMma->getScoreLayout(b, loc, lane);
  dqLayout = dqMma->getOutputLayout(b, loc, lane);

  // K and V of this key block stay in shared memory throughout.
  copyRows(kTile, spec.headDim, kBwdK, kBwdKStrideB, headKV, n0, sk);
  copyRows(vTile, spec.headDimV, kBwdV, kBwdVStrideB, headKV, n0, sk);
  target.emitCopyCommit(b, loc);
  target.emitCopyWait(b, loc, 0);
  scoresMma->emitSharedWritesVisible(b, loc);

  // Query blocks that see a key of this block (the same for every head).
  Value n1 = arith::MinSIOp::create(b, loc, add(n0, c32(bn)), sk);
  auto [lo, hi] = emitVisibleRowRange(b, loc, score.mask, n0, n1, sq, sk);
  Value iLo = arith::DivUIOp::create(b, loc, lo, c32(bm));
  Value iHi = arith::DivUIOp::create(b, loc, add(hi, c32(bm - 1)), c32(bm));

  SmallVector<Value> init(dkLayout.getNumElements() + dvLayout.getNumElements(),
                          cf(0.0));
  Value group =
      arith::DivSIOp::create(b, loc, arg(kBwdHeadsQ), arg(kBwdHeadsKV));
  auto emitLoop = [&] {
    return emitBlockLoop(mul(headKV, group), group, iLo, iHi, init,
                         /*sumRows=*/bool(biasRowsSummed));
  };
  if (!deferredCompletion()) {
    emitEpilogue(SmallVector<Value>(emitLoop().getResults()));
    return;
  }
  // The loop, then the wait for its last products. A key block that no
  // query block sees skips both: had its zeros met the loop's in-flight
  // accumulators before the wait, ptxas would serialize every wgmma of the
  // kernel (C7515).
  auto ifOp = scf::IfOp::create(b, loc, TypeRange(ValueRange(init)),
                                lt(iLo, iHi), /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(
        b, loc, completed(*dkMma, SmallVector<Value>(emitLoop().getResults())));
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, init);
  }
  emitEpilogue(SmallVector<Value>(ifOp.getResults()));
}

HeadSlice attn::getBackwardHeadSlice(const KernelSpec &spec,
                                     const GPUTargetInfo &target,
                                     int64_t tileDim, int64_t slice) {
  // Slices are whole multiples of the instruction's head-dim step.
  const MatrixInstr *instr =
      target.getChipSpec().lookupInstr(spec.config.getMma());
  int64_t multiple = instr ? instr->headDimMultiple : 16;
  return getHeadSlice(tileDim, spec.config.getHeadSplit(), multiple, slice);
}

int64_t attn::getDeterministicQueryRows(const KernelSpec &spec,
                                        const GPUTargetInfo &target) {
  // The tables' rule (checkDeterministic), so both say the same.
  const MatrixInstr *instr =
      target.getChipSpec().lookupInstr(spec.config.getMma());
  return instr ? mlir::attn::getDeterministicQueryRows(*instr, spec.warps())
               : 16 * spec.warps();
}

void MainStageEmitter::emitQueryPass() {
  int64_t ws = target.getWarpSize(), bn = spec.blockN();
  int64_t d = spec.tileHeadDim, dv = spec.tileHeadDimV;
  // Forward roles: S = Q K^T and dQ += dS K (K as the "value" tile), and
  // dP = dO V^T; one emitter's rows per warp, all warps.
  int64_t qRows = getDeterministicQueryRows(spec, target);
  int64_t rows0 = qRows / spec.warps();
  // The emitters keep a reference to their spec: these outlive them.
  KernelSpec sSpec = getProductSpec(spec, qRows, bn, d, d);
  KernelSpec pSpec = getProductSpec(spec, qRows, bn, dv, d);
  std::unique_ptr<MmaEmitter> sMma = target.createMmaEmitter(sSpec);
  std::unique_ptr<MmaEmitter> pMma = target.createMmaEmitter(pSpec);
  tid = toI32(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  lane = arith::RemUIOp::create(b, loc, tid, c32(ws));
  warp = arith::DivUIOp::create(b, loc, tid, c32(ws));
  warpRow = mul(warp, c32(rows0));
  Value m0 = mul(blockId(gpu::Dimension::x), c32(qRows));
  Value h = blockId(gpu::Dimension::y);
  batch = blockId(gpu::Dimension::z);
  sq = arg(kBwdSeqQ);
  sk = arg(kBwdSeqK);
  headKV = arith::DivSIOp::create(
      b, loc, h,
      arith::DivSIOp::create(b, loc, arg(kBwdHeadsQ), arg(kBwdHeadsKV)));
  score = bindScoreParams(b, loc, func.getArguments(), spec, kBwdScale,
                          kBwdDropoutP);
  OpBuilder::InsertionGuard guard(b);
  auto rowsLeft = scf::IfOp::create(b, loc, lt(m0, sq), false);
  b.setInsertionPointToStart(rowsLeft.thenBlock());

  // The main stage's shared memory: K and V in theirs, Q and dO in their
  // buffers (block_m x stages rows each, at least qRows: checked when the
  // plan is made).
  smemBase = getDynamicSharedMemoryBase(b, loc, func,
                                        smem.alignSlack ? smem.alignSlack : 16);
  SharedTile k = tile(smem.kOffset, bn, d, smem.kRowStride);
  SharedTile v = tile(smem.vOffset, bn, dv, smem.vRowStride);
  SharedTile q = tile(smem.qOffset, qRows, d, smem.qRowStride);
  SharedTile dO = tile(smem.doOffset, qRows, dv, smem.doRowStride);
  copyRows(q, spec.headDim, kBwdQ, kBwdQStrideB, h, m0, sq);
  copyRows(dO, spec.headDimV, kBwdDO, kBwdDOStrideB, h, m0, sq);
  target.emitCopyCommit(b, loc);
  publishCopies();
  SmallVector<Value> query = sMma->loadQuery(b, loc, lane, q, warpRow);
  SmallVector<Value> gradOut = pMma->loadQuery(b, loc, lane, dO, warpRow);
  AccLayout sl = sMma->getScoreLayout(b, loc, lane);
  AccLayout ol = sMma->getOutputLayout(b, loc, lane);

  // Per row slot: the query position, its lse (exp2 domain) and delta.
  Value lastQ = sub(sq, c32(1)), lastK = sub(sk, c32(1));
  Value log2e = cf(M_LOG2E),
        negInf = cf(-std::numeric_limits<double>::infinity());
  Value lseBase = gep(arg(kBwdLse), f32,
                      add(mul(ext(batch), arg(kBwdLseStrideB)),
                          mul(ext(h), arg(kBwdLseStrideB + 1))));
  Value deltaBase = gep(deltaPtr(), f32, workspaceRow(batch, h, c32(0)));
  SmallVector<Value> rowQ, lse2, deltas;
  for (int64_t off : sl.rowSlotOffsets) {
    Value r = add(add(m0, warpRow), add(sl.laneRow, c32(off)));
    Value rc = arith::MinSIOp::create(b, loc, r, lastQ);
    rowQ.push_back(r);
    lse2.push_back(fmul(load(f32, gep(lseBase, f32, ext(rc)), 4), log2e));
    deltas.push_back(load(f32, gep(deltaBase, f32, ext(rc)), 4));
  }
  Value biasBase;
  if (spec.biasType)
    biasBase = gep(arg(kBwdBias), spec.biasType,
                   add(mul(ext(batch), arg(kBwdBiasStrideB)),
                       mul(ext(h), arg(kBwdBiasStrideB + 1))));

  Value qEnd = arith::MinSIOp::create(b, loc, add(m0, c32(qRows)), sq);
  auto [lo, hi] = emitVisibleKeyRange(b, loc, score.mask, m0, qEnd, sq, sk);
  Value jLo = arith::DivUIOp::create(b, loc, lo, c32(bn));
  Value jHi = arith::DivUIOp::create(b, loc, add(hi, c32(bn - 1)), c32(bn));
  // Key blocks double-buffered where main's second Q and dO buffers are
  // free (this pass's rows fit the first) and hold a K and a V block: block
  // j + 1 is copied while block j computes.
  bool prefetch = spec.stages() >= 2 && qRows <= spec.blockM() &&
                  bn <= spec.blockM() && smem.qRowStride == smem.kRowStride &&
                  smem.doRowStride == smem.vRowStride;
  SharedTile kNext =
                 tile(smem.qOffset + smem.qStageBytes, bn, d, smem.qRowStride),
             vNext = tile(smem.doOffset + smem.doStageBytes, bn, dv,
                          smem.doRowStride);
  auto copyKeys = [&](const SharedTile &kt, const SharedTile &vt, Value j) {
    Value row0 = mul(j, c32(bn));
    copyRows(kt, spec.headDim, kBwdK, kBwdKStrideB, headKV, row0, sk);
    copyRows(vt, spec.headDimV, kBwdV, kBwdVStrideB, headKV, row0, sk);
  };
  if (prefetch) {
    OpBuilder::InsertionGuard guard(b);
    auto any = scf::IfOp::create(b, loc, lt(jLo, jHi), false);
    b.setInsertionPointToStart(any.thenBlock());
    copyKeys(k, v, jLo);
    target.emitCopyCommit(b, loc);
  }
  // With asynchronous products dP runs while P is computed.
  bool overlap = overlapsScoreGrad();
  // Deferred (as main's deferredCompletion, where no register cap
  // applies): block j - 1's dQ product is still in flight when block j
  // starts, and block j + 1's copies are issued once block j's S and dP
  // are, so that they and the wait for dQ run under those products (D =
  // 128 on the H100: +0-4%; D = 64 under its cap: level).
  bool deferred =
      prefetch && overlap && target.getBackwardRegisterCap(spec) == 0;
  SmallVector<Value> init(ol.getNumElements(), cf(0.0));
  auto loop = scf::ForOp::create(b, loc, jLo, jHi, c32(1), init);
  {
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    Value n = mul(j, c32(bn));
    SmallVector<Value> acc(loop.getRegionIterArgs());
    SharedTile kb = k, vb = v;
    // Issues block j + 1's copies into `kt` and `vt`, one group (empty
    // after the last block, so the counts below hold).
    auto loadNext = [&](const SharedTile &kt, const SharedTile &vt) {
      Value next = add(j, c32(1));
      {
        OpBuilder::InsertionGuard g(b);
        auto more = scf::IfOp::create(b, loc, lt(next, jHi), false);
        b.setInsertionPointToStart(more.thenBlock());
        copyKeys(kt, vt, next);
      }
      target.emitCopyCommit(b, loc);
    };
    SharedTile kn, vn;
    if (prefetch) {
      // Block j's buffer by its parity; block j + 1 into the other one
      // (block j - 1's).
      Value odd = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne,
          arith::AndIOp::create(b, loc, sub(j, jLo), c32(1)), c32(0));
      // `whenOdd` for odd blocks, else `whenEven`.
      auto pick = [&](const SharedTile &whenEven, const SharedTile &whenOdd) {
        SharedTile t = whenEven;
        t.base =
            arith::SelectOp::create(b, loc, odd, whenOdd.base, whenEven.base);
        return t;
      };
      kb = pick(k, kNext);
      vb = pick(v, vNext);
      kn = pick(kNext, k);
      vn = pick(vNext, v);
    }
    if (deferred) {
      // Block j's tiles, the one group in flight, have landed.
      publishCopies();
    } else if (prefetch) {
      // Every warp is done with the previous block's K and V; then at most
      // block j + 1's group is in flight.
      barrier();
      loadNext(kn, vn);
      target.emitCopyWait(b, loc, 1);
      scoresMma->emitSharedWritesVisible(b, loc);
      barrier();
    } else {
      // Every warp is done with the previous block's K and V.
      barrier();
      copyKeys(k, v, j);
      target.emitCopyCommit(b, loc);
      publishCopies();
    }
    SmallVector<Value> s, dp;
    if (overlap) {
      s = sMma->issueScores(b, loc, lane, query, kb);
      dp = pMma->issueScores(b, loc, lane, gradOut, vb);
      if (deferred) {
        // Block j - 1's dQ (it read K j - 1), then every warp's share of it
        // before block j + 1 takes that buffer.
        acc = sMma->waitOutput(b, loc, acc, /*pending=*/2);
        barrier();
        loadNext(kn, vn);
      }
      s = sMma->waitOutput(b, loc, s, /*pending=*/1);
    } else {
      s = sMma->computeScores(b, loc, lane, query, kb);
      dp = pMma->computeScores(b, loc, lane, gradOut, vb);
    }
    SmallVector<Value> z;
    if (score.dropout) {
      bool aligned = qRows % 16 == 0 && bn % 16 == 0 && rows0 % 16 == 0;
      z = emitDropoutFactors(b, loc, *score.dropout,
                             add(mul(batch, arg(kBwdHeadsQ)), h), sl,
                             add(m0, warpRow), n, aligned,
                             /*transposed=*/false);
    }
    // dS from P (in s[e]) once dP is there.
    SmallVector<Value> capDerivative(s.size());
    auto scoreGrad = [&](unsigned e) {
      Value dpe = score.dropout ? fmul(dp[e], z[e]) : dp[e];
      Value ds = fmul(s[e], fsub(dpe, deltas[sl.rowSlot[e]]));
      s[e] = spec.softcap ? fmul(ds, capDerivative[e]) : ds;
    };
    auto keyOf = [&](unsigned e) {
      return add(add(n, sl.laneCol), c32(sl.colOffsets[e]));
    };
    for (unsigned e = 0, ne = s.size(); e < ne; ++e) {
      unsigned slot = sl.rowSlot[e];
      s[e] = probability(s[e], biasBase,
                         arith::MinSIOp::create(b, loc, rowQ[slot], lastQ),
                         arith::MinSIOp::create(b, loc, keyOf(e), lastK),
                         lse2[slot], capDerivative[e]);
    }
    // Mask only blocks crossing a mask edge or a tail, tested at the
    // corners of this warp's query rows x the block's keys (masks are
    // bands; main's test, transposed); uniform per warp. Inside, every row
    // sees a key, so its lse is finite.
    Value qFirst = add(m0, warpRow), qLast = add(qFirst, c32(rows0 - 1));
    Value inside = arith::AndIOp::create(
        b, loc, lt(qLast, sq),
        arith::AndIOp::create(
            b, loc,
            emitKeyVisible(b, loc, score.mask, qFirst, add(n, c32(bn - 1)), sq,
                           sk),
            emitKeyVisible(b, loc, score.mask, qLast, n, sq, sk)));
    auto ifOp = scf::IfOp::create(b, loc, ValueRange(s).getTypes(), inside,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      scf::YieldOp::create(b, loc, s);
      b.setInsertionPointToStart(ifOp.elseBlock());
      SmallVector<Value> masked;
      for (unsigned e = 0, ne = s.size(); e < ne; ++e) {
        unsigned slot = sl.rowSlot[e];
        Value visible = arith::AndIOp::create(
            b, loc,
            arith::AndIOp::create(b, loc, lt(rowQ[slot], sq),
                                  emitKeyVisible(b, loc, score.mask, rowQ[slot],
                                                 keyOf(e), sq, sk)),
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, lse2[slot],
                                  negInf));
        masked.push_back(select(visible, s[e], cf(0.0)));
      }
      scf::YieldOp::create(b, loc, masked);
    }
    llvm::copy(ifOp.getResults(), s.begin());
    if (!overlap)
      for (unsigned e = 0, ne = s.size(); e < ne; ++e)
        scoreGrad(e);
    if (overlap) {
      dp = pMma->waitOutput(b, loc, dp, /*pending=*/0);
      for (unsigned e = 0, ne = s.size(); e < ne; ++e)
        scoreGrad(e);
    }
    acc = sMma->accumulateOutput(b, loc, lane, s, kb, acc);
    // Completed before the next block's copies overwrite K (deferred: in
    // the next block, or after the loop).
    if (!deferred)
      acc = completed(*sMma, acc);
    scf::YieldOp::create(b, loc, acc);
  }
  // dq = scale * acc, rows past Sq and columns past D not stored.
  SmallVector<Value> acc(loop.getResults());
  if (deferred)
    acc = completed(*sMma, acc);
  for (unsigned e = 0, ne = acc.size(); e < ne; ++e) {
    Value r = add(add(m0, warpRow),
                  add(ol.laneRow, c32(ol.rowSlotOffsets[ol.rowSlot[e]])));
    Value c = add(ol.laneCol, c32(ol.colOffsets[e]));
    Value ok =
        arith::AndIOp::create(b, loc, lt(r, sq), lt(c, c32(spec.headDim)));
    OpBuilder::InsertionGuard g(b);
    auto ifOp = scf::IfOp::create(b, loc, ok, false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value rowBase = rowPtr(kBwdDQ, kBwdDQStrideB, batch, h, r);
    store(arith::TruncFOp::create(b, loc, spec.elemType,
                                  fmul(acc[e], arg(kBwdScale))),
          gep(rowBase, spec.elemType, ext(c)), elemBytes);
  }
}

scf::ForOp MainStageEmitter::emitBlockLoop(Value hLo, Value group, Value iLo,
                                           Value iHi, ValueRange init,
                                           bool sumRows) {
  // Pair t is query block iLo + t % blocks of head hLo + t / blocks.
  Value blocks = sub(iHi, iLo);
  Value total = mul(group, blocks);
  auto pair = [&](Value t) -> std::pair<Value, Value> {
    Value h = add(hLo, arith::DivUIOp::create(b, loc, t, blocks));
    Value i = add(iLo, arith::RemUIOp::create(b, loc, t, blocks));
    return {h, mul(i, c32(spec.blockM()))};
  };
  bool prefetch = spec.stages() > 1;
  if (prefetch) {
    OpBuilder::InsertionGuard guard(b);
    auto ifOp = scf::IfOp::create(b, loc, lt(c32(0), total), false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    auto [h, m0] = pair(c32(0));
    loadQueryBlock(h, m0, c32(0));
  }
  auto loop = scf::ForOp::create(b, loc, c32(0), total, c32(1), init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value t = loop.getInductionVar();
  auto [h, m0] = pair(t);
  Value stage = c32(0);
  bool deferred = deferredCompletion();
  // Issues pair t + 1's copies into pair t - 1's buffer.
  auto loadNext = [&] {
    Value next = add(t, c32(1));
    auto stageNext = [&] {
      return arith::AndIOp::create(b, loc, next, c32(1));
    };
    if (deferred) {
      // Without a branch, which between dV's product and its wait would
      // make ptxas serialize the wgmmas (C7513): past the last pair the
      // copies read nothing (row limit 0) from the last pair's head.
      auto [hn, m0n] =
          pair(arith::MinUIOp::create(b, loc, next, sub(total, c32(1))));
      loadQueryBlock(hn, m0n, stageNext(), select(lt(next, total), sq, c32(0)));
      return;
    }
    OpBuilder::InsertionGuard g(b);
    auto ifOp = scf::IfOp::create(b, loc, lt(next, total), false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    auto [hn, m0n] = pair(next);
    loadQueryBlock(hn, m0n, stageNext());
  };
  if (prefetch) {
    // Pair t's tiles have landed; after the barrier every warp is done with
    // pair t - 1 (deferred: but for its products in flight), so its buffer
    // takes pair t + 1.
    publishCopies();
    stage = arith::AndIOp::create(b, loc, t, c32(1));
    if (!deferred)
      loadNext();
  } else {
    // The previous pair is done with the tiles.
    barrier();
    loadQueryBlock(h, m0, stage);
    publishCopies();
  }
  SmallVector<Value> acc(loop.getRegionIterArgs());
  Value first, last;
  if (sumRows) {
    // Heads are outer: a head's blocks are consecutive pairs.
    Value i = arith::RemUIOp::create(b, loc, t, blocks);
    first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, i, c32(0));
    last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, i,
                                 sub(blocks, c32(1)));
  }
  // Deferred: every warp's share of pair t - 1's dK and dV products has
  // completed (the wait for S^T) before any warp overwrites the Q and dO
  // they read.
  auto afterIssue = [&] {
    barrier();
    loadNext();
  };
  emitQueryBlock(h, m0, stage, acc, first, last,
                 deferred ? function_ref<void()>(afterIssue) : nullptr);
  scf::YieldOp::create(b, loc, acc);
  return loop;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

FailureOr<KernelSpec> attn::getBackwardKernelSpec(AttentionGradOp op,
                                                  const GPUTargetInfo &target) {
  FailureOr<KernelSpec> spec = getSharedKernelSpec(
      op, op.getQuery(), op.getValue(), op.getGradQuery(), op.getBias(),
      op.getConfig(), op.getMask(), op.getSoftcap().has_value(),
      {op.getQuery(), op.getKey(), op.getValue(), op.getOutput(),
       op.getGradOutput(), op.getGradQuery(), op.getGradKey(),
       op.getGradValue()},
      target);
  if (failed(spec))
    return failure();
  if (spec->dynamicHeadDim())
    return op.emitOpError("has a dynamic head dim; backward plans need "
                          "static D and Dv");
  spec->dropout = op.hasDropout();
  spec->backward = true;
  if (Value gradBias = op.getGradBias())
    spec->dbiasType = cast<ShapedType>(gradBias.getType()).getElementType();
  spec->deterministic = spec->config.getDeterministic();
  int64_t split = spec->config.getHeadSplit();
  if (split > 1 && spec->deterministic)
    return op.emitOpError("config '")
           << spec->config.getName() << "' has head_split " << split
           << "; the deterministic dQ pass keeps whole rows of dQ";
  for (int64_t s = 0; s < split; ++s)
    if (getBackwardHeadSlice(*spec, target, spec->tileHeadDim, s).width <= 0 ||
        getBackwardHeadSlice(*spec, target, spec->tileHeadDimV, s).width <= 0)
      return op.emitOpError("config '")
             << spec->config.getName() << "' has head_split " << split
             << ", which leaves slice " << s << " of D = " << spec->headDim
             << " or Dv = " << spec->headDimV << " empty";
  // main_q keeps its Q and dO tiles in main's Q and dO buffers.
  if (spec->deterministic && getDeterministicQueryRows(*spec, target) >
                                 spec->blockM() * spec->stages())
    return op.emitOpError("config '")
           << spec->config.getName()
           << "' has block_m x stages = " << spec->blockM() * spec->stages()
           << " query rows of shared memory; its deterministic dQ pass needs "
           << getDeterministicQueryRows(*spec, target);
  if (failed(target.checkSupported(*spec, Direction::Backward,
                                   [&] { return op.emitOpError(); })) ||
      failed(checkSharedMemoryFits(
          op, *spec, getBackwardSharedMemoryBytes(*spec, target), target)))
    return failure();
  return spec;
}

static gpu::GPUFuncOp createStage(OpBuilder &b, Location loc, StringRef name,
                                  int64_t threads, const KernelSpec &spec,
                                  const GPUTargetInfo &target) {
  return createKernelFunction(
      b, loc, name,
      getBackwardKernelFunctionType(
          b.getContext(), target.getGlobalAddressSpace(), spec.dropout),
      threads);
}

BackwardKernels attn::buildBackwardKernels(OpBuilder &builder, Location loc,
                                           gpu::GPUModuleOp gpuModule,
                                           StringRef planName,
                                           const KernelSpec &spec,
                                           const GPUTargetInfo &target) {
  OpBuilder b(builder.getContext());
  b.setInsertionPointToEnd(gpuModule.getBody());
  declareDynamicSharedMemory(b, loc, gpuModule, target);
  int64_t rowThreads = kBackwardRowWarps * target.getWarpSize();
  BackwardKernels k;
  k.pre =
      createStage(b, loc, (planName + "_pre").str(), rowThreads, spec, target);
  emitKernelBody(b, loc, k.pre, [&](Block &) {
    RowStageEmitter(b, loc, k.pre, spec, target).emitPre();
  });
  // One main kernel per head_split slice: `_main`, then `_main_1`, ...
  for (int64_t s = 0; s < spec.config.getHeadSplit(); ++s) {
    std::string name = (planName + "_main").str();
    if (s)
      name += "_" + std::to_string(s);
    gpu::GPUFuncOp main = createStage(
        b, loc, name, spec.warps() * target.getWarpSize(), spec, target);
    target.annotateKernel(main, spec);
    emitKernelBody(b, loc, main, [&](Block &) {
      MainStageEmitter(b, loc, main, spec, target, s).emit();
    });
    if (s)
      k.mainSlices.push_back(main);
    else
      k.main = main;
  }
  if (spec.deterministic) {
    k.mainQ = createStage(b, loc, (planName + "_main_q").str(),
                          spec.warps() * target.getWarpSize(), spec, target);
    target.annotateKernel(k.mainQ, spec);
    emitKernelBody(b, loc, k.mainQ, [&](Block &) {
      MainStageEmitter(b, loc, k.mainQ, spec, target).emitQueryPass();
    });
  } else {
    k.dq =
        createStage(b, loc, (planName + "_dq").str(), rowThreads, spec, target);
    emitKernelBody(b, loc, k.dq, [&](Block &) {
      RowStageEmitter(b, loc, k.dq, spec, target).emitConvertDq();
    });
  }
  if (!spec.dbiasType)
    return k;
  // A deterministic plan sums dbias_full in a stage of its own (which does
  // nothing when dbias is summed over no dimension: main writes it then).
  if (spec.deterministic) {
    k.convertDbias = createStage(b, loc, (planName + "_dbias").str(),
                                 kReduceColumns * kReduceShares, spec, target);
    emitKernelBody(b, loc, k.convertDbias, [&](Block &) {
      BiasStageEmitter(b, loc, k.convertDbias, spec, target)
          .emitReduce(k.convertDbias);
    });
    return k;
  }
  k.zeroDbias = createStage(b, loc, (planName + "_zero_dbias").str(),
                            kBiasStageThreads, spec, target);
  emitKernelBody(b, loc, k.zeroDbias, [&](Block &) {
    BiasStageEmitter(b, loc, k.zeroDbias, spec, target).emit(false);
  });
  k.convertDbias = createStage(b, loc, (planName + "_dbias").str(),
                               kBiasStageThreads, spec, target);
  emitKernelBody(b, loc, k.convertDbias, [&](Block &) {
    BiasStageEmitter(b, loc, k.convertDbias, spec, target).emit(true);
  });
  return k;
}
