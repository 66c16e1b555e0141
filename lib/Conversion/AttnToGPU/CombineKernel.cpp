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
// saw gets zeros and -inf, as the op defines). One workgroup per row; its
// threads stride over the head dimension.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Conversion/AttnToGPU/AttentionKernel.h"
#include "KernelBuilder.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {
class CombineEmitter : KernelBuilder {
public:
  CombineEmitter(OpBuilder &b, Location loc, Block &entry,
                 const KernelSpec &spec, const GPUTargetInfo &target)
      : KernelBuilder(b, loc), entry(entry), spec(spec), target(target) {}

  void emit();

private:
  Value arg(unsigned i) { return entry.getArgument(i); }
  /// for (i = lo; i < hi; i += step) with one carried f32, built by `body`.
  Value loop(Value lo, Value hi, Value step, Value init,
             function_ref<Value(Value i, Value acc)> body);
  /// The weight of split `s`: exp(lse_s - m), 0 when m = -inf.
  Value weight(Value s);

  Block &entry;
  const KernelSpec &spec;
  const GPUTargetInfo &target;
  Value numSplits, rows, row0, lsePart, maxLse, empty;
};
} // namespace

Value CombineEmitter::loop(Value lo, Value hi, Value step, Value init,
                           function_ref<Value(Value, Value)> body) {
  auto forOp = scf::ForOp::create(b, loc, lo, hi, step, ValueRange{init});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forOp.getBody());
  Value next = body(forOp.getInductionVar(), forOp.getRegionIterArgs()[0]);
  scf::YieldOp::create(b, loc, next);
  return forOp.getResult(0);
}

Value CombineEmitter::weight(Value s) {
  Value lse = LLVM::LoadOp::create(
      b, loc, f32, gep(lsePart, f32, add(mul(ext(s), rows), row0)), 4);
  Value w = target.emitExp2(b, loc, fmul(fsub(lse, maxLse), cf(M_LOG2E)));
  return select(empty, cf(0.0), w);
}

void CombineEmitter::emit() {
  Value tid = toI32(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  Value row = blockId(gpu::Dimension::x);
  Value head = blockId(gpu::Dimension::y);
  Value batch = blockId(gpu::Dimension::z);
  numSplits = arith::MaxSIOp::create(b, loc, arg(kArgNumSplits), c32(1));
  // Rows per split, and this row's index in split 0.
  rows =
      mul(mul(ext(arg(kArgBatch)), ext(arg(kArgHeadsQ))), ext(arg(kArgSeqQ)));
  row0 = add(mul(add(mul(ext(batch), ext(arg(kArgHeadsQ))), ext(head)),
                 ext(arg(kArgSeqQ))),
             ext(row));
  int64_t dv = spec.headDimV;
  Value ws = arg(kArgWorkspace);
  Value oBytes = mul(mul(mul(rows, ext(numSplits)), c64(dv)), c64(4));
  Value lseOffset =
      arith::AndIOp::create(b, loc, add(oBytes, c64(255)), c64(~int64_t(255)));
  lsePart = gep(ws, b.getI8Type(), lseOffset);

  Value negInf = cf(-std::numeric_limits<double>::infinity());
  maxLse = loop(c32(0), numSplits, c32(1), negInf, [&](Value s, Value m) {
    Value lse = LLVM::LoadOp::create(
        b, loc, f32, gep(lsePart, f32, add(mul(ext(s), rows), row0)), 4);
    return fmax(m, lse);
  });
  empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, maxLse, negInf);
  Value sum = loop(c32(0), numSplits, c32(1), cf(0.0),
                   [&](Value s, Value acc) { return fadd(acc, weight(s)); });
  Value has =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, sum, cf(0.0));
  Value inv = select(has, arith::DivFOp::create(b, loc, cf(1.0), sum), cf(0.0));

  Value out = gep(arg(kArgO), spec.elemType,
                  add(add(mul(ext(batch), arg(kArgOStrideB)),
                          mul(ext(head), arg(kArgOStrideB + 1))),
                      mul(ext(row), arg(kArgOStrideB + 2))));
  int64_t threads = kCombineThreads;
  auto cols = scf::ForOp::create(b, loc, tid, c32(dv), c32(threads));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(cols.getBody());
    Value d = cols.getInductionVar();
    Value acc = loop(c32(0), numSplits, c32(1), cf(0.0), [&](Value s, Value a) {
      Value o = LLVM::LoadOp::create(
          b, loc, f32,
          gep(ws, f32, add(mul(add(mul(ext(s), rows), row0), c64(dv)), ext(d))),
          4);
      return arith::AddFOp::create(b, loc, a, fmul(weight(s), o)).getResult();
    });
    Value v = arith::TruncFOp::create(b, loc, spec.elemType, fmul(acc, inv));
    LLVM::StoreOp::create(b, loc, v, gep(out, spec.elemType, ext(d)),
                          spec.elemType.getIntOrFloatBitWidth() / 8);
  }

  // lse, by thread 0, when lse is not null.
  Value lsePtr = arg(kArgLse);
  Value null = LLVM::ZeroOp::create(b, loc, lsePtr.getType());
  Value write = arith::AndIOp::create(
      b, loc,
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, lsePtr, null),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, c32(0)));
  auto ifOp = scf::IfOp::create(b, loc, write, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value lse = select(
      has, fadd(maxLse, fmul(math::Log2Op::create(b, loc, sum), cf(M_LN2))),
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
