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
#include "SplitWorkspace.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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
  /// This row's index in split `s` of the workspace, and its lse there.
  Value partialRow(Value s);
  Value lseOf(Value s);
  /// The weight of split `s`: exp(lse_s - m), 0 when m = -inf.
  Value weight(Value s);

  Block &entry;
  const KernelSpec &spec;
  const GPUTargetInfo &target;
  SplitWorkspace ws;
  Value numSplits, row0, maxLse, empty;
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

Value CombineEmitter::partialRow(Value s) {
  return add(mul(ext(s), ws.rowsPerSplit), row0);
}

Value CombineEmitter::lseOf(Value s) {
  return LLVM::LoadOp::create(b, loc, f32, gep(ws.lse, f32, partialRow(s)), 4);
}

Value CombineEmitter::weight(Value s) {
  Value w = target.emitExp2(b, loc, fmul(fsub(lseOf(s), maxLse), cf(M_LOG2E)));
  return select(empty, cf(0.0), w);
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

  Value negInf = cf(-std::numeric_limits<double>::infinity());
  maxLse = loop(c32(0), numSplits, c32(1), negInf,
                [&](Value s, Value m) { return fmax(m, lseOf(s)); });
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
          gep(ws.outputs, f32, add(mul(partialRow(s), c64(dv)), ext(d))), 4);
      return arith::AddFOp::create(b, loc, a, fmul(weight(s), o)).getResult();
    });
    // f32 outputs take the sum as it is.
    Value v = fmul(acc, inv);
    if (spec.elemType != v.getType())
      v = arith::TruncFOp::create(b, loc, spec.elemType, v);
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
