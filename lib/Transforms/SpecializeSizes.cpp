//===- SpecializeSizes.cpp - a tile per size class --------------*- C++ -*-===//
//
// Multi-versions attention ops whose sequence lengths are dynamic: one copy
// per size class (Tuning.h) whose tile differs from the general one, chosen
// at run time by scf.if on Sq and Sk, as Inductor picks among kernels
// compiled for several size hints. The copies carry their #attn.config, so
// attn-select-config leaves them alone.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/IR/AttnOps.h"
#include "AttnDialect/Target/TileTable.h"
#include "AttnDialect/Target/Tuning.h"
#include "AttnDialect/Transforms/Passes.h"
#include "TuningOption.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNSPECIALIZESIZESPASS
#include "AttnDialect/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

/// Dimension `i` of a tensor or memref, folded when static.
static Value getDim(OpBuilder &b, Location loc, Value shaped, int64_t i) {
  if (isa<RankedTensorType>(shaped.getType()))
    return b.createOrFold<tensor::DimOp>(loc, shaped, i);
  return b.createOrFold<memref::DimOp>(loc, shaped, i);
}

namespace {
struct AttnSpecializeSizesPassImpl
    : public attn::impl::AttnSpecializeSizesPassBase<
          AttnSpecializeSizesPassImpl> {
  using Base::Base;

  void runOnOperation() override {
    const ChipSpec *chip = lookupChip(target);
    if (!chip) {
      getOperation()->emitError("attn-specialize-sizes: unknown target '")
          << target << "'; known chips: " << getKnownChipNames();
      return signalPassFailure();
    }
    if (smCount < 0 ||
        llvm::any_of(sizeHints, [](int64_t h) { return h <= 0; })) {
      getOperation()->emitError("attn-specialize-sizes: size-hints must be "
                                "positive and sm-count not negative");
      return signalPassFailure();
    }
    FailureOr<std::optional<TuningFile>> tuned = loadTuningOption(
        getOperation(), "attn-specialize-sizes", tuning, *chip);
    if (failed(tuned))
      return signalPassFailure();
    const TuningFile *tuningFile = *tuned ? &**tuned : nullptr;

    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) {
      auto q = cast<ShapedType>(op.getQuery().getType());
      auto k = cast<ShapedType>(op.getKey().getType());
      if (!op.getConfigAttr() && op.getSeqLayout() == SeqLayout::Dense &&
          (q.isDynamicDim(2) || k.isDynamicDim(2)))
        ops.push_back(op);
    });
    for (AttentionOp op : ops)
      specialize(op, *chip, tuningFile);
  }

  void specialize(AttentionOp op, const ChipSpec &chip,
                  const TuningFile *tuningFile) {
    FailureOr<AttentionProblem> problem = getAttentionProblem(op);
    // attn-select-config reports what no tile fits.
    if (failed(problem))
      return;
    const TileCandidate *general = selectCandidate(chip, *problem);
    if (!general)
      return;
    SmallVector<SizeClass> classes;
    for (const SizeClass &c :
         getSizeClasses(chip, *problem, general, sizeHints, tuningFile))
      if (!c.minBlocksPerSm || smCount > 0)
        classes.push_back(c);
    if (classes.empty())
      return;

    OpBuilder b(op);
    Location loc = op.getLoc();
    Value sq = getDim(b, loc, op.getQuery(), 2);
    Value sk = getDim(b, loc, op.getKey(), 2);
    auto index = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    auto holds = [&](const SizeClass &c) {
      auto within = [&](Value len) {
        Value cond = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                           len, index(c.range.min));
        if (c.range.isUnbounded())
          return cond;
        Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                            len, index(c.range.max));
        return arith::AndIOp::create(b, loc, cond, below).getResult();
      };
      Value cond = arith::AndIOp::create(b, loc, within(sq), within(sk));
      if (c.minBlocksPerSm) {
        // B x Hq x ceil(Sq / block_m) workgroups fill the GPU enough.
        Value blocks =
            arith::CeilDivUIOp::create(b, loc, sq, index(c.candidate->blockM));
        for (int64_t dim : {0, 1})
          blocks = arith::MulIOp::create(b, loc, blocks,
                                         getDim(b, loc, op.getQuery(), dim));
        Value fills =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, blocks,
                                  index(c.minBlocksPerSm * smCount));
        cond = arith::AndIOp::create(b, loc, cond, fills);
      }
      return cond;
    };
    auto copyWith = [&](OpBuilder &nested, const TileCandidate &tile,
                        const SizeClass *c) {
      auto copy = cast<AttentionOp>(nested.clone(*op));
      copy.setConfigAttr(toConfigAttr(op.getContext(), tile, *problem));
      if (c) {
        // The lengths (and grid) it serves, for a bundle's conditions.
        NamedAttrList range;
        range.append("seqlen_min", nested.getI64IntegerAttr(c->range.min));
        if (!c->range.isUnbounded())
          range.append("seqlen_max", nested.getI64IntegerAttr(c->range.max));
        if (c->minBlocksPerSm)
          range.append("min_blocks_per_sm",
                       nested.getI64IntegerAttr(c->minBlocksPerSm));
        copy->setAttr(kSizeClassAttrName, range.getDictionary(op.getContext()));
      }
      return copy->getResults();
    };
    // if (class 0) copy 0 else if (class 1) copy 1 ... else general.
    std::function<ValueRange(OpBuilder &, unsigned)> chain =
        [&](OpBuilder &nested, unsigned i) -> ValueRange {
      if (i == classes.size())
        return copyWith(nested, *general, nullptr);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(nested.getInsertionBlock(),
                          nested.getInsertionPoint());
      Value cond = holds(classes[i]);
      auto ifOp = scf::IfOp::create(
          b, loc, cond,
          [&](OpBuilder &then, Location l) {
            scf::YieldOp::create(
                then, l, copyWith(then, *classes[i].candidate, &classes[i]));
          },
          [&](OpBuilder &otherwise, Location l) {
            scf::YieldOp::create(otherwise, l, chain(otherwise, i + 1));
          });
      return ifOp.getResults();
    };
    ValueRange results = chain(b, 0);
    op->replaceAllUsesWith(results);
    op->erase();
  }
};
} // namespace
