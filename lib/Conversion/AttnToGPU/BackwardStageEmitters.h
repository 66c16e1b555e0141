//===- BackwardStageEmitters.h - backward stage emitters --------*- C++ -*-===//
//
// The emitters of a backward plan's stages: the row stages (delta and the
// dQ conversion), the bias-gradient reduction and the main kernel (dK, dV
// and dQ, or its dQ pass). Their definitions are in AttentionGradKernel.cpp
// (row stages, entry points) and BackwardMainStage.cpp (the main kernel).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_BACKWARDSTAGEEMITTERS_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_BACKWARDSTAGEEMITTERS_H

#include "AttnDialect/Conversion/AttnToGPU/AttentionGradKernel.h"
#include "AttnDialect/Conversion/AttnToGPU/SharedMemory.h"
#include "AttnDialect/Target/Constraints.h"
#include "BackwardWorkspace.h"
#include "DropoutFragment.h"
#include "KernelBuilder.h"
#include "LaunchUtils.h"
#include "ScoreParams.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/DenseMap.h"
#include <functional>

namespace mlir {
namespace attn {

/// The main kernel's shared memory: its tiles and stages, the layout the
/// tables' check uses too.
BackwardSharedMemoryLayout getBackwardStageLayout(const KernelSpec &spec,
                                                  const GPUTargetInfo &target);
/// `spec` with its tile read as one product of the backward: `rows` rows
/// by `cols` score columns, a contraction of `inner` and an output of
/// `outer` columns, both tile (padded) head dims.
KernelSpec getProductSpec(const KernelSpec &spec, int64_t rows, int64_t cols,
                          int64_t inner, int64_t outer);

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
          if (dim == "head_dim_64")
            return llvm::alignTo(spec.headDim, 64);
          return std::nullopt;
        },
        [&](StringRef dim) -> Value {
          if (dim == "seqlen_q_64")
            return seqlenQ64();
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
    return gep(
        arg(kBwdWorkspace), b.getI8Type(),
        getWorkspaceOffset(getBackwardWorkspace(spec, blockedDq()), name, a));
  }
  /// Sq rounded up to a multiple of 64 (i64).
  Value seqlenQ64() {
    return mul(arith::DivUIOp::create(b, loc, add(ext(arg(kBwdSeqQ)), c64(63)),
                                      c64(64)),
               c64(64));
  }
  /// (b * Hq + h) * Sq64 + q / 64 * 64 (i64): the first of the rows of Sq
  /// rounded up to 64 (dq_accum in blocks, dq_order) in query row q's block.
  Value blockFirstRow(Value batch, Value head, Value q) {
    return add(
        mul(add(mul(ext(batch), ext(arg(kBwdHeadsQ))), ext(head)), seqlenQ64()),
        ext(mul(arith::DivUIOp::create(b, loc, q, c32(64)), c32(64))));
  }
  /// Whether dq_accum is in blocks of 64 rows (BackwardWorkspace.h).
  bool blockedDq() const { return usesBlockedDqAccum(spec, target); }
  /// dq_accum's rows are workspace rows (workspaceRow) of D floats; in
  /// blocks, of D rounded up to 64.
  Value dqAccumRow(Value dqAccum, Value row) {
    int64_t cols = blockedDq() ? llvm::alignTo(spec.headDim, 64) : spec.headDim;
    return gep(dqAccum, f32, mul(row, c64(cols)));
  }
  /// dq_accum's float at query row `q` of head `h`, column `d`, in either
  /// layout; from a multiple of 4, the 4 columns from `d` follow it.
  Value dqAccumChunk(Value dqAccum, Value batch, Value head, Value q, Value d) {
    if (!blockedDq())
      return gep(dqAccumRow(dqAccum, workspaceRow(batch, head, q)), f32,
                 ext(d));
    Value row0 = blockFirstRow(batch, head, q);
    Value r = arith::RemUIOp::create(b, loc, q, c32(64));
    Value unit = arith::DivUIOp::create(b, loc, d, c32(64));
    Value c = arith::RemUIOp::create(b, loc, d, c32(64));
    Value piece =
        arith::XOrIOp::create(b, loc, arith::DivUIOp::create(b, loc, c, c32(4)),
                              arith::RemUIOp::create(b, loc, r, c32(8)));
    Value inUnit =
        add(add(mul(unit, c32(64 * 64)), mul(r, c32(64))),
            add(mul(piece, c32(4)), arith::RemUIOp::create(b, loc, c, c32(4))));
    return gep(dqAccumRow(dqAccum, row0), f32, ext(inUnit));
  }
  Value dqAccumPtr() { return workspaceBuffer("dq_accum"); }
  Value dbiasAccumPtr() { return workspaceBuffer("dbias_accum"); }
  /// dq_order's counter of the block of 64 rows holding query row `q` of
  /// head `h` (i32, at the block's first row: BackwardWorkspace.h).
  Value dqOrderCounter(Value batch, Value head, Value q) {
    return gep(workspaceBuffer("dq_order"), b.getI32Type(),
               blockFirstRow(batch, head, q));
  }
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

  /// forEachLaneElement over the chunks of `vec` elements of a row of `n`
  /// (one element a chunk when `n` is no multiple of `vec`): `body` gets
  /// the chunk's first element and its width.
  void forEachLaneChunk(Value lane, int64_t n, int64_t vec,
                        function_ref<void(Value, int64_t)> body) {
    if (vec < 1 || n % vec)
      vec = 1;
    forEachLaneElement(lane, n / vec,
                       [&](Value c) { body(mul(c, c32(vec)), vec); });
  }
  /// Elements of the input type in one 16-byte access where the variant's
  /// alignment (its rows' and pointers') allows it, else 1.
  int64_t rowVectorElements() const {
    return spec.config.getAlignBytes() >= 16 ? 16 / elemBytes : 1;
  }
  /// This lane's part of rowsum(dO * O) over the row's Dv elements at `o`
  /// and `dout`: chunks share, share + shares, ... (16 bytes a chunk where
  /// the variant's alignment allows, else one element); a lane past the
  /// row's end reads chunk 0 and adds nothing. The caller adds the parts
  /// of the `shares` lanes that hold the row.
  Value sumRowProductsShare(Value o, Value dout, Value share, int64_t shares) {
    int64_t dv = spec.headDimV;
    int64_t vec = rowVectorElements();
    if (dv % vec)
      vec = 1;
    int64_t chunks = dv / vec;
    Type type = chunkType(spec.elemType, vec);
    Value sum = cf(0.0);
    for (int64_t i = 0; i * shares < chunks; ++i) {
      Value c = add(share, c32(i * shares));
      bool tail = (i + 1) * shares > chunks;
      Value valid = tail ? lt(c, c32(chunks)) : Value();
      Value at = ext(mul(tail ? select(valid, c, c32(0)) : c, c32(vec)));
      Value x = load(type, gep(o, spec.elemType, at), vec * elemBytes);
      Value y = load(type, gep(dout, spec.elemType, at), vec * elemBytes);
      Value part = cf(0.0);
      for (int64_t e = 0; e < vec; ++e)
        part = fadd(
            part,
            fmul(arith::ExtFOp::create(b, loc, f32, chunkElement(x, vec, e)),
                 arith::ExtFOp::create(b, loc, f32, chunkElement(y, vec, e))));
      sum = fadd(sum, tail ? select(valid, part, cf(0.0)) : part);
    }
    return sum;
  }
  /// `width` elements of `type` at `ptr`: a scalar or a vector.
  Type chunkType(Type type, int64_t width) const {
    return width > 1 ? Type(VectorType::get({width}, type)) : type;
  }
  /// Element `e` of a chunk (chunkType) `v`.
  Value chunkElement(Value v, int64_t width, int64_t e) {
    if (width == 1)
      return v;
    return vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{e});
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
      : StageEmitter(b, loc, func, spec, target),
        smem(getBackwardStageLayout(spec, target)), slice(slice),
        sliceD(getBackwardHeadSlice(spec, target, spec.tileHeadDim, slice)),
        sliceDv(getBackwardHeadSlice(spec, target, spec.tileHeadDimV, slice)) {
    int64_t bm = spec.blockM(), bn = spec.blockN(), d = spec.tileHeadDim,
            dv = spec.tileHeadDimV;
    warpSpecialized = isWarpSpecialized(spec.config.getPipeline());
    computeWarps = getComputeWarps(spec.config.getPipeline(), spec.warps());
    slicesOnGroups = slicesOnWarpgroups(spec.config.getPipeline(),
                                        spec.config.getHeadSplit());
    keyRowWarps = getKeyRowWarps(spec.config.getPipeline(), spec.warps(),
                                 spec.config.getHeadSplit());
    rowsPerWarp = bn / keyRowWarps;
    // Key rows x query columns for S^T = K Q^T, dV += P^T dO,
    // dP^T = V dO^T and dK += dS^T Q; query rows x key columns for
    // dQ = dS K, whose warps take rowsPerWarp query rows at a time. The
    // outputs (dV, dK, dQ) have this slice's columns.
    scoresMma =
        target.createMmaEmitter(getProductSpec(spec, bn, bm, d, sliceDv.width));
    dpMma = target.createMmaEmitter(getProductSpec(spec, bn, bm, dv, dv));
    dkMma =
        target.createMmaEmitter(getProductSpec(spec, bn, bm, d, sliceD.width));
    // dQ's accumulators come on top of dK's and dV's: products of one
    // matrix-descriptor panel (64 columns) at a time keep them to half of
    // D = 128's (wgmma; the register-operand instructions take the slice).
    dqChunk = sliceD.width;
    if (scoresMma->getSharedTileLayout() == SharedTileLayout::Swizzle128B)
      dqChunk = std::min<int64_t>(dqChunk, 128 / elemBytes);
    dqMma = target.createMmaEmitter(getProductSpec(spec, bn, bn, d, dqChunk));
    // With slices on warpgroups each computes S^T and dP^T for its share
    // of the query columns only; P^T and dS^T meet in shared memory.
    scoreCols = slicesOnGroups ? bm / spec.config.getHeadSplit() : bm;
    if (slicesOnGroups) {
      halfScoresMma =
          target.createMmaEmitter(getProductSpec(spec, bn, scoreCols, d, dv));
      halfDpMma =
          target.createMmaEmitter(getProductSpec(spec, bn, scoreCols, dv, dv));
    }
    threads = spec.warps() * target.getWarpSize();
  }

  void emit();
  /// The deterministic plan's `_main_q`: one workgroup per (query block,
  /// head, batch) walks the key blocks its rows see and computes
  /// dQ = scale * dS K in registers, dS recomputed as `main` does (forward
  /// roles: query rows x key columns); no atomics.
  void emitQueryPass();

private:
  /// delta = rowsum(dO * O) of query row `row` (in range) of head `h`, for
  /// a query pass that computes it (queryPassComputesDelta): the lanes that
  /// hold the row in `layout` (rowReduceXor) each sum a share of its
  /// columns, 16 bytes at a time where the variant's alignment allows, and
  /// every one of them returns the row's sum.
  Value emitRowDelta(Value h, Value row, const AccLayout &layout);
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
  /// A barrier of the warps that compute: with a producer warpgroup a named
  /// one of theirs (ids 1 and 2 are the warpgroups' own, emitDqBulk).
  void computeBarrier() {
    if (!warpSpecialized)
      return barrier();
    target.emitNamedBarrier(b, loc, c32(kComputeBarrierId),
                            computeWarps * target.getWarpSize());
  }
  static constexpr int32_t kComputeBarrierId = 3;
  /// slicesOnGroups: the computing warpgroups meet at kScoresFreeBarrierId
  /// before writing a block's P^T, dS^T and dS (both have read the last
  /// block's).
  static constexpr int32_t kScoresFreeBarrierId = 6;
  /// Ordered dQ (KernelSpec::orderedDq): the warpgroups that stage a unit
  /// of dQ arrive at kDqStagedBarrierId when they have, the producer's
  /// writer warp at kDqFreeBarrierId when the reductions have read them.
  static constexpr int32_t kDqStagedBarrierId = 4, kDqFreeBarrierId = 5;
  /// Units of 64 x 64 dQ a block stages (D rounded up to 64): one per
  /// warpgroup from the first, or with dqInRing two a warpgroup's slice.
  int64_t dqUnits() const { return llvm::divideCeil(spec.headDim, 64); }
  /// Whether the producer's last warp adds the staged units (emitDqWriter)
  /// instead of the computing warpgroups: with ordered dQ, and in plans
  /// with dropout with a unit per computing warpgroup, whose computing
  /// warpgroups then issue no reductions (1.02-1.06x at D = 128 on the
  /// H100, bench/RESULTS.md; without dropout 0.92-0.99x).
  bool dqByWriter() const {
    if (spec.orderedDq() || dqInRing())
      return true;
    return warpSpecialized && spec.dropout && spec.dqInMain() &&
           smem.dqStageBlocked && dqUnits() == computeWarps / 4;
  }
  /// Unit `unit` (i32) of the staging area with dq_accum in blocks.
  Value dqUnitStage(Value unit) {
    return gep(smemBase, b.getI8Type(),
               add(c32(smem.dqStageOffset), mul(unit, c32(kDqUnitBytes))));
  }
  int64_t dqWriterBarrierThreads() const {
    return ((dqInRing() ? computeWarps : dqUnits() * 4) + 1) *
           target.getWarpSize();
  }
  /// slicesOnGroups with dq_accum in blocks: the computing warpgroups stage
  /// their units of dQ in the Q/dO ring buffer of the block (their own
  /// columns, which only their completed products read: no room for a
  /// staging area of its own at D = 256), and the writer adds them (in its
  /// turn, with ordered dQ) and then releases the buffer to the producer:
  /// the computing warpgroups issue no reductions and wait for no turns.
  bool dqInRing() const { return slicesOnGroups && smem.dqStageBlocked; }
  /// dqInRing with the bias gradient's query rows summed (a deterministic
  /// plan; smem.rowSumStageBytes): each warpgroup hands its block's sums of
  /// dS^T over its query columns, per key row, to the writer in shared
  /// memory (emitRowSumsToWriter), which adds the two in a fixed order to
  /// the head's running sum and stores that at the head's last block
  /// (emitWriterRowSums). The writer alone touches the running sums.
  bool rowSumsByWriter() const {
    return dqInRing() && smem.rowSumStageBytes && biasRowsSummed;
  }
  /// rowSumsByWriter: warpgroup `group`'s sum of key row `row` (i32) for
  /// ring buffer `stage`.
  Value rowSumSlot(Value stage, Value group, Value row) {
    return rowSumArea(add(mul(stage, c32(2 * spec.blockN())),
                          add(mul(group, c32(spec.blockN())), row)));
  }
  /// rowSumsByWriter: the writer's running sum of key row `row`, after the
  /// buffers' slots.
  Value runningRowSum(Value row) {
    return rowSumArea(add(c32(spec.stages() * 2 * spec.blockN()), row));
  }
  /// Float `index` of the rowSumOffset area.
  Value rowSumArea(Value index) {
    return gep(gep(smemBase, b.getI8Type(), c32(smem.rowSumOffset)),
               b.getF32Type(), index);
  }
  void emitWriterRowSums(Value t, Value h, Value blocks);
  /// dqInRing: the halves (rows 0-31, 32-63) of unit `unit` (i32, columns
  /// 64 unit..) of ring buffer `stage`: panel `unit` of its Q and of its dO
  /// (8 KB each).
  std::pair<Value, Value> ringUnitHalves(Value stage, Value unit) {
    Value offset = mul(unit, c32(spec.blockM() * 128));
    return {gep(queryTile(stage).base, b.getI8Type(), offset),
            gep(gradOutputTile(stage).base, b.getI8Type(), offset)};
  }
  /// Waits until the writer has read this warpgroup's last staged unit
  /// (warpgroups that stage none pass).
  void waitDqStageFree() {
    OpBuilder::InsertionGuard guard(b);
    if (dqUnits() < computeWarps / 4) {
      auto ifOp = scf::IfOp::create(
          b, loc,
          lt(arith::DivUIOp::create(b, loc, warp, c32(4)), c32(dqUnits())),
          false);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    target.emitNamedBarrier(b, loc, c32(kDqFreeBarrierId),
                            dqWriterBarrierThreads());
  }
  /// The producer's last warp (dqByWriter): per pair t of `total` (`blocks`
  /// query blocks a head) adds the staged units to dq_accum. With ordered dQ a
  /// block's key blocks take turns from the last that sees it down: the writer
  /// adds a block's units once its counter reads (that key block's index - this
  /// one's), and passes the turn on.
  void emitDqWriter(Value blocks, Value total,
                    llvm::function_ref<std::pair<Value, Value>(Value)> pair);
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
    return scoresMma->hasAsyncOutput() &&
           (spec.config.getHeadSplit() <= 1 || slicesOnGroups) && !spec.softcap;
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
  /// slicesOnGroups: this warpgroup's query columns of P^T (`pt`) and dS^T
  /// (`dst`) into ptTile and dstTile, once the other warpgroup has read the
  /// last block's (named barrier kScoresFreeBarrierId).
  void emitScoresExchange(Value keyFirst, ArrayRef<Value> pt,
                          ArrayRef<Value> dst);
  /// Whether main's loop leaves dK's and dV's products in flight into the
  /// next block and issues the next block's copies once that block's dV
  /// product is: the wait for dK and the copies' address arithmetic then
  /// run under the products instead of between them (D = 128 on the H100:
  /// +0-6% from S = 2k). The copies' registers are then live beside dK,
  /// dV and dP^T: not where the target caps registers for more workgroups
  /// per SM (the D = 64 main at 168: ptxas serialized its wgmmas, C7512).
  bool deferredCompletion() const {
    return spec.stages() > 1 && statsInAccumulators() && !spec.dqInMain() &&
           target.getBackwardRegisterCap(spec) == 0;
  }
  /// The loop over (query head of the group, query block) pairs, flattened
  /// so that the next pair's loads overlap this one's products. With
  /// `sumRows` each block says whether it is its head's first or last, for
  /// the bias gradient's row sums (emitQueryBlock).
  scf::ForOp emitBlockLoop(Value hLo, Value group, Value iLo, Value iHi,
                           ValueRange init, bool sumRows = false);
  /// The head and first query row of pair t of the loops over (query head
  /// of the group, query block): query block iLo + t % blocks of head
  /// hLo + t / blocks (heads outer).
  std::pair<Value, Value> pairAt(Value hLo, Value iLo, Value blocks, Value t) {
    Value h = add(hLo, arith::DivUIOp::create(b, loc, t, blocks));
    Value i = add(iLo, arith::RemUIOp::create(b, loc, t, blocks));
    return {h, mul(i, c32(spec.blockM()))};
  }
  /// emitBlockLoop with a producer warpgroup (cp_async_ws): warpgroup 0
  /// copies each pair's Q, dO and row stats into the buffers of a two-stage
  /// ring guarded by full/empty mbarriers; the others compute, meeting at
  /// one named barrier a block (dS, double-buffered) instead of two
  /// CTA-wide ones, and store dK and dV. Returns nothing: the epilogue is
  /// the computing warps'.
  void emitWarpSpecialized(Value hLo, Value group, Value iLo, Value iHi,
                           ValueRange init);
  Value ringBarrier(int64_t index, Value stage) {
    return gep(smemBase, b.getI8Type(),
               add(c32(smem.barrierOffset + 8 * index), mul(stage, c32(8))));
  }
  Value fullBarrier(Value stage) { return ringBarrier(0, stage); }
  Value emptyBarrier(Value stage) { return ringBarrier(spec.stages(), stage); }
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
  /// Adds `dq` (dqLayout, `width` columns from `colFirst` (i32) of the rows
  /// from `rowBase` of query block `m0`) times the scale to dq_accum.
  void emitDqAtomics(Value h, Value m0, Value rowBase, Value colFirst,
                     int64_t width, ArrayRef<Value> dq);
  /// Whether each warpgroup computes one dqChunk of the block's dQ (plans
  /// staging dQ, as many chunks as warpgroups) and issues it before dK's
  /// product, so that dQ is staged and added while dK runs.
  bool dqBeforeDk() const {
    int64_t groups = computeWarps / 4;
    return smem.dqStageRowBytes && !slicesOnGroups && groups > 1 &&
           spec.blockM() == 64 && sliceD.width == groups * dqChunk &&
           sliceD.offset + sliceD.width <= spec.headDim;
  }
  /// dQ = dS K for the 64 query rows from `rowBlock` and dqChunk columns
  /// from chunk `chunkIndex` (i32) of the slice, dS read from its swizzled
  /// tile; in flight.
  SmallVector<Value> issueDqFromShared(int64_t rowBlock, Value chunkIndex);
  /// emitDqAtomics through shared memory (smem.dqStageRowBytes): warpgroup
  /// `group` (i32) stages its product `dq` (64 rows from `rowBlock` of the
  /// block, chunk `chunkIndex` (i32) of dqChunk columns of the slice, the
  /// first `width` of them in dq_accum) and adds it there by bulk
  /// reductions, as FlashAttention-3 adds dQ: one a row, or with dq_accum
  /// in blocks (smem.dqStageBlocked) one for the chunk's 64 x 64 unit.
  void emitDqBulk(Value h, Value m0, Value group, int64_t rowBlock,
                  Value chunkIndex, int64_t width, ArrayRef<Value> dq);
  /// Stores this thread's elements of `dq` (dqLayout) times the scale at
  /// `address(row, col)` of the 64-row block (i32 row and column).
  void storeDqRows(ArrayRef<Value> dq,
                   function_ref<Value(Value, Value)> address);
  /// storeDqRows in dq_accum's unit layout (swizzled 16-byte pieces) at
  /// `low`, or with `high` its rows 0-31 at `low` and 32-63 at `high`.
  void storeDqUnit(ArrayRef<Value> dq, Value low, Value high = {});
  /// dqInRing: this warpgroup's units of dQ staged in ring buffer `stage`
  /// (ringUnitHalves) for the writer.
  void emitDqUnitsToRing(Value stage);
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
  /// `sums` added over the lanes that hold each key row's query columns
  /// (the fixed butterfly of emitRowSums); the lanes with none of
  /// sLayout.rowReduceXor's bits set (the second result) store them.
  std::pair<SmallVector<Value>, Value> reduceRowSums(ArrayRef<Value> sums);
  /// rowSumsByWriter: this warpgroup's reduced `sums` for ring buffer
  /// `stage`, each key row's by one lane.
  void emitRowSumsToWriter(Value stage, ArrayRef<Value> sums);
  void emitEpilogue(ArrayRef<Value> acc);

  /// The end of the columns the slices compute: with slicesOnGroups every
  /// warpgroup computes slice 0's width, so a narrower last slice's end
  /// lies past the tile (the columns there are neither stored nor added).
  int64_t slicesEnd(HeadSlice s) const {
    return spec.config.getHeadSplit() * s.width;
  }
  /// Address of element (`row`, `col`) (i32) of `tile`, padded or swizzled.
  Value elementAddress(const SharedTile &tile, Value row, Value col) {
    if (tile.layout != SharedTileLayout::Swizzle128B)
      return gep(tile.base, tile.elemType,
                 add(mul(row, c32(tile.rowStride)), col));
    int64_t perChunk = 16 / (tile.elemType.getIntOrFloatBitWidth() / 8);
    return gep(getSharedChunkAddress(
                   b, loc, tile, row,
                   arith::DivUIOp::create(b, loc, col, c32(perChunk))),
               tile.elemType,
               arith::RemUIOp::create(b, loc, col, c32(perChunk)));
  }
  /// columns() from a first column given as a value (slicesOnGroups: the
  /// warpgroup's slice), at a panel of a swizzled tile.
  SharedTile columnsAt(const SharedTile &tile, Value offset, int64_t width) {
    if (std::optional<int64_t> c = getConstantIntValue(offset))
      return columns(tile, {*c, width});
    assert(tile.layout == SharedTileLayout::Swizzle128B &&
           "slices on warpgroups read swizzled tiles");
    SharedTile t = tile;
    t.base =
        gep(tile.base, b.getI8Type(),
            mul(arith::DivUIOp::create(b, loc, offset, c32(128 / elemBytes)),
                c32(tile.rows * 128)));
    t.cols = width;
    return t;
  }
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
  std::unique_ptr<MmaEmitter> scoresMma, dpMma, dkMma, dqMma;
  /// slicesOnGroups: S^T and dP^T over this warpgroup's scoreCols query
  /// columns (from scoreCol0 of the block).
  std::unique_ptr<MmaEmitter> halfScoresMma, halfDpMma;
  int64_t scoreCols = 0;
  Value scoreCol0;
  /// slicesOnGroups: P^T and dS^T (key rows, query columns), the A
  /// operands of dV's and dK's products, written by both warpgroups.
  SharedTile ptTile, dstTile;
  /// Columns of dQ per product (a divisor of the slice's width).
  int64_t dqChunk;
  int64_t rowsPerWarp, threads;
  /// A producer warpgroup copies (cp_async_ws); the computeWarps others
  /// own the key rows, keyRowWarps of them each row once: all, or with
  /// slicesOnGroups (slicesOnWarpgroups) each warpgroup computes slice
  /// `sliceGroup` of its own.
  bool warpSpecialized = false, slicesOnGroups = false;
  int64_t computeWarps = 0, keyRowWarps = 0;
  /// The first column of this thread's slice of D and Dv (i32): sliceD's
  /// and sliceDv's offsets, or the warpgroup's with slicesOnGroups.
  Value sliceColD, sliceColDv, sliceGroup;

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

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_BACKWARDSTAGEEMITTERS_H
