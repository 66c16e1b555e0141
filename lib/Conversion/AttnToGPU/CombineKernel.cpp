//===- CombineKernel.cpp - merge the partial outputs of split-KV ----------===//
//
// When a KV-cache kernel splits the keys over n workgroups, split s leaves,
// for each query row, its output normalized by its own softmax sum (O_s)
// and its logsumexp (lse_s) in the workspace. The true output is
//
//   O = sum_s w_s O_s / sum_s w_s,   w_s = exp(lse_s - max_s lse_s)
//   lse = max_s lse_s + log(sum_s w_s)
//
// (a split that saw no key has lse_s = -inf and weight 0; a row no split
// saw gets zeros and -inf, as the op defines). One workgroup per row. Each
// thread takes a group of four columns (one 16-byte load a split) and every
// `phases`-th split, issues all loads of kCombineUnroll splits before their
// first use and keeps a running max, weight sum and weighted sum of its own
// (the forward's online softmax), so that a decode row's up to 128 splits
// cost two round trips to memory; the phases then meet in shared memory.
// Rows of one query each had a thread per column walk every split, its
// weight's load waited for before the next: 9-26 us for 32-128 splits on
// the H100, longer than the split kernel itself (bench/RESULTS.md).
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Conversion/AttnToGPU/AttentionKernel.h"
#include "AttnDialect/Conversion/AttnToGPU/SharedMemory.h"
#include "KernelBuilder.h"
#include "SplitWorkspace.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {
/// i64 arithmetic on i32 kernel arguments, for the workspace addresses.
struct I64Math {
  OpBuilder &b;
  Location loc;
  Value ext(Value v) {
    return arith::ExtSIOp::create(b, loc, b.getI64Type(), v);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value c64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }
};
} // namespace

SplitWorkspace attn::getSplitWorkspace(OpBuilder &b, Location loc, Block &entry,
                                       int64_t headDimV, Value numSplits) {
  I64Math m{b, loc};
  auto arg = [&](unsigned i) { return entry.getArgument(i); };
  SplitWorkspace w;
  w.rowsPerSplit = m.mul(m.mul(m.ext(arg(kArgBatch)), m.ext(arg(kArgHeadsQ))),
                         m.ext(arg(kArgSeqQ)));
  w.outputs = arg(kArgWorkspace);
  Value bytes =
      m.mul(m.mul(m.mul(w.rowsPerSplit, m.ext(numSplits)), m.c64(headDimV)),
            m.c64(4));
  Value lseOffset = arith::AndIOp::create(
      b, loc, m.add(bytes, m.c64(kWorkspaceAlignment - 1)),
      m.c64(~(kWorkspaceAlignment - 1)));
  w.lse = LLVM::GEPOp::create(b, loc, w.outputs.getType(), b.getI8Type(),
                              w.outputs, ValueRange{lseOffset});
  return w;
}

Value attn::getSplitRowIndex(OpBuilder &b, Location loc, Block &entry,
                             Value split, Value batch, Value head) {
  I64Math m{b, loc};
  auto arg = [&](unsigned i) { return m.ext(entry.getArgument(i)); };
  return m.mul(
      m.add(m.mul(m.add(m.mul(m.ext(split), arg(kArgBatch)), m.ext(batch)),
                  arg(kArgHeadsQ)),
            m.ext(head)),
      arg(kArgSeqQ));
}

/// Splits whose loads one thread issues together.
static constexpr int64_t kCombineUnroll = 8;

namespace {
/// The combine workgroup's split of a row: `vec` columns per load, `groups`
/// column groups, `phases` threads per group (each every phases-th split).
struct CombineShape {
  int64_t vec, groups, phases;
};

/// A thread's (or a phase's) share of the row: the largest lse it saw, its
/// weights' sum and weighted sum relative to that.
struct Partial {
  Value max, sum;
  SmallVector<Value> acc;
};

class CombineEmitter : KernelBuilder {
public:
  CombineEmitter(OpBuilder &b, Location loc, Block &entry,
                 const KernelSpec &spec, const GPUTargetInfo &target)
      : KernelBuilder(b, loc), entry(entry), spec(spec), target(target) {}

  void emit();

private:
  Value arg(unsigned i) { return entry.getArgument(i); }
  /// This row's index in split `s` of the workspace.
  Value partialRow(Value s);
  /// exp(x - m) for the running max `m`; 0 while m = -inf (nothing seen).
  Value expFrom(Value x, Value m);
  /// `p` with splits phase + (j .. j + count - 1) * phases added.
  Partial addSplits(const Partial &p, Value j, int64_t count, Value phase,
                    int64_t phases, Value col);
  /// Float `i` of the workgroup's shared buffer.
  Value shared(Value i) { return gep(smem, f32, i); }

  Block &entry;
  const KernelSpec &spec;
  const GPUTargetInfo &target;
  SplitWorkspace ws;
  CombineShape shape;
  Value numSplits, row0, smem;
};
} // namespace

static CombineShape getCombineShape(int64_t headDimV) {
  int64_t vec = headDimV % 4 == 0 ? 4 : 1, groups = headDimV / vec;
  assert(groups <= kCombineThreads && "a thread per column group");
  return {vec, groups, kCombineThreads / groups};
}

Value CombineEmitter::partialRow(Value s) {
  return add(mul(ext(s), ws.rowsPerSplit), row0);
}

Value CombineEmitter::expFrom(Value x, Value m) {
  Value negInf = cf(-std::numeric_limits<double>::infinity());
  Value none =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, negInf);
  Value e = target.emitExp2(b, loc, fmul(fsub(x, m), cf(M_LOG2E)));
  return select(none, cf(0.0), e);
}

Partial CombineEmitter::addSplits(const Partial &p, Value j, int64_t count,
                                  Value phase, int64_t phases, Value col) {
  int64_t dv = spec.headDimV, vec = shape.vec;
  auto vecType = VectorType::get({vec}, f32);
  SmallVector<Value> lse, o;
  for (int64_t u = 0; u < count; ++u) {
    Value s = add(phase, mul(add(j, c32(u)), c32(phases)));
    Value row = partialRow(s);
    lse.push_back(LLVM::LoadOp::create(b, loc, f32, gep(ws.lse, f32, row), 4));
    Value at = gep(ws.outputs, f32, add(mul(row, c64(dv)), ext(col)));
    o.push_back(
        vec == 1
            ? LLVM::LoadOp::create(b, loc, f32, at, 4)
            : LLVM::LoadOp::create(b, loc, vecType, at, 4 * vec).getResult());
  }
  Partial next = p;
  for (Value x : lse)
    next.max = fmax(next.max, x);
  Value rescale = expFrom(p.max, next.max);
  next.sum = fmul(p.sum, rescale);
  for (Value &a : next.acc)
    a = fmul(a, rescale);
  for (int64_t u = 0; u < count; ++u) {
    Value w = expFrom(lse[u], next.max);
    next.sum = fadd(next.sum, w);
    for (int64_t i = 0; i < vec; ++i) {
      Value x = vec == 1 ? o[u]
                         : vector::ExtractOp::create(b, loc, o[u],
                                                     ArrayRef<int64_t>{i})
                               .getResult();
      next.acc[i] = math::FmaOp::create(b, loc, w, x, next.acc[i]);
    }
  }
  return next;
}

void CombineEmitter::emit() {
  Value tid = toI32(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  Value row = blockId(gpu::Dimension::x);
  Value head = blockId(gpu::Dimension::y);
  Value batch = blockId(gpu::Dimension::z);
  numSplits = arith::MaxSIOp::create(b, loc, arg(kArgNumSplits), c32(1));
  int64_t dv = spec.headDimV;
  // Rows per split, and this row's index in split 0.
  ws = getSplitWorkspace(b, loc, entry, dv, numSplits);
  row0 = add(getSplitRowIndex(b, loc, entry, c32(0), batch, head), ext(row));
  shape = getCombineShape(dv);
  // Per phase its max, its sum and its Dv weighted sums.
  smem =
      getStaticSharedMemory(b, loc, cast<gpu::GPUFuncOp>(entry.getParentOp()),
                            f32, shape.phases * (dv + 2), target);
  int64_t vec = shape.vec, groups = shape.groups, phases = shape.phases;
  Value phase = arith::DivUIOp::create(b, loc, tid, c32(groups));
  Value group = arith::RemUIOp::create(b, loc, tid, c32(groups));
  Value col = mul(group, c32(vec));
  // Phase p's max and sum at floats 2p, 2p + 1; its sums from 2 phases.
  auto sumsAt = [&](Value p, Value c) {
    return add(add(mul(p, c32(dv)), c), c32(2 * phases));
  };

  Value negInf = cf(-std::numeric_limits<double>::infinity());
  // Launched early (programmatic dependent launch), every thread waits here
  // until the split kernel's partials are written: no thread reads them, or
  // stores the output, before.
  if (usesDependentLaunch(spec, target))
    target.emitWaitForPrerequisites(b, loc);
  {
    OpBuilder::InsertionGuard guard(b);
    auto active =
        scf::IfOp::create(b, loc, lt(tid, c32(phases * groups)), false);
    b.setInsertionPointToStart(active.thenBlock());
    // This thread's splits phase, phase + phases, ...: kCombineUnroll at a
    // time, then one at a time.
    Value mine = arith::DivSIOp::create(
        b, loc,
        arith::MaxSIOp::create(b, loc, c32(0),
                               add(sub(numSplits, phase), c32(phases - 1))),
        c32(phases));
    Value full = mul(arith::DivSIOp::create(b, loc, mine, c32(kCombineUnroll)),
                     c32(kCombineUnroll));
    Partial p{negInf, cf(0.0), SmallVector<Value>(vec, cf(0.0))};
    auto walk = [&](Value lo, Value hi, int64_t step) {
      SmallVector<Value> init = {p.max, p.sum};
      llvm::append_range(init, p.acc);
      auto forOp = scf::ForOp::create(b, loc, lo, hi, c32(step), init);
      OpBuilder::InsertionGuard inLoop(b);
      b.setInsertionPointToStart(forOp.getBody());
      ValueRange args = forOp.getRegionIterArgs();
      Partial next =
          addSplits({args[0], args[1], SmallVector<Value>(args.drop_front(2))},
                    forOp.getInductionVar(), step, phase, phases, col);
      SmallVector<Value> yield = {next.max, next.sum};
      llvm::append_range(yield, next.acc);
      scf::YieldOp::create(b, loc, yield);
      ValueRange r = forOp.getResults();
      p = {r[0], r[1], SmallVector<Value>(r.drop_front(2))};
    };
    walk(c32(0), full, kCombineUnroll);
    walk(full, mine, 1);
    // Every thread of a phase has its max and sum; the first group's stores
    // them.
    {
      OpBuilder::InsertionGuard inFirst(b);
      auto first = scf::IfOp::create(b, loc, eq(group, c32(0)), false);
      b.setInsertionPointToStart(first.thenBlock());
      Value at = mul(phase, c32(2));
      LLVM::StoreOp::create(b, loc, p.max, shared(at), 4);
      LLVM::StoreOp::create(b, loc, p.sum, shared(add(at, c32(1))), 4);
    }
    for (auto [i, a] : llvm::enumerate(p.acc))
      LLVM::StoreOp::create(b, loc, a, shared(sumsAt(phase, add(col, c32(i)))),
                            4);
  }
  gpu::BarrierOp::create(b, loc);

  // The phases' shares, rescaled to the row's max, by the first phase.
  OpBuilder::InsertionGuard guard(b);
  auto first = scf::IfOp::create(b, loc, lt(tid, c32(groups)), false);
  b.setInsertionPointToStart(first.thenBlock());
  SmallVector<Value> maxes, sums;
  Value max = negInf;
  for (int64_t q = 0; q < phases; ++q) {
    maxes.push_back(LLVM::LoadOp::create(b, loc, f32, shared(c32(2 * q)), 4));
    sums.push_back(
        LLVM::LoadOp::create(b, loc, f32, shared(c32(2 * q + 1)), 4));
    max = fmax(max, maxes.back());
  }
  Value sum = cf(0.0);
  SmallVector<Value> acc(vec, cf(0.0));
  for (int64_t q = 0; q < phases; ++q) {
    Value scale = expFrom(maxes[q], max);
    sum = math::FmaOp::create(b, loc, sums[q], scale, sum);
    for (int64_t i = 0; i < vec; ++i)
      acc[i] = math::FmaOp::create(
          b, loc,
          LLVM::LoadOp::create(b, loc, f32,
                               shared(sumsAt(c32(q), add(col, c32(i)))), 4),
          scale, acc[i]);
  }
  Value has =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, sum, cf(0.0));
  Value inv = select(has, arith::DivFOp::create(b, loc, cf(1.0), sum), cf(0.0));
  Value out = gep(arg(kArgO), spec.elemType,
                  add(add(mul(ext(batch), arg(kArgOStrideB)),
                          mul(ext(head), arg(kArgOStrideB + 1))),
                      mul(ext(row), arg(kArgOStrideB + 2))));
  for (auto [i, a] : llvm::enumerate(acc)) {
    // f32 outputs take the sum as it is.
    Value v = fmul(a, inv);
    if (spec.elemType != v.getType())
      v = arith::TruncFOp::create(b, loc, spec.elemType, v);
    LLVM::StoreOp::create(b, loc, v,
                          gep(out, spec.elemType, ext(add(col, c32(i)))),
                          spec.elemType.getIntOrFloatBitWidth() / 8);
  }

  // lse, by thread 0, when lse is not null.
  Value lsePtr = arg(kArgLse);
  Value null = LLVM::ZeroOp::create(b, loc, lsePtr.getType());
  Value write = arith::AndIOp::create(
      b, loc,
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, lsePtr, null),
      eq(tid, c32(0)));
  auto ifOp = scf::IfOp::create(b, loc, write, /*withElse=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value lse =
      select(has, fadd(max, fmul(math::Log2Op::create(b, loc, sum), cf(M_LN2))),
             negInf);
  Value at = add(add(mul(ext(batch), arg(kArgLseStrideB)),
                     mul(ext(head), arg(kArgLseStrideB + 1))),
                 ext(row));
  LLVM::StoreOp::create(b, loc, lse, gep(lsePtr, f32, at), 4);
}

gpu::GPUFuncOp attn::buildSplitCombineKernel(OpBuilder &builder, Location loc,
                                             gpu::GPUModuleOp gpuModule,
                                             StringRef name,
                                             const KernelSpec &spec,
                                             const GPUTargetInfo &target) {
  MLIRContext *ctx = builder.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(gpuModule.getBody());
  auto func = createKernelFunction(
      b, loc, name,
      getKernelFunctionType(ctx, target.getGlobalAddressSpace(), spec.layout),
      kCombineThreads);
  emitKernelBody(b, loc, func, [&](Block &entry) {
    CombineEmitter(b, loc, entry, spec, target).emit();
  });
  return func;
}
