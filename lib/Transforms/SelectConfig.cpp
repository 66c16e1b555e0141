//===- SelectConfig.cpp - attach a tile config to attention ops -*- C++ -*-===//
//
// A thin driver over the tile tables (AttnDialect/Target): the constraints and
// the priority order live there so that attn-tiles and the bundle generator
// make the same choice as this pass.
//
// Ops that already carry a config are left alone (a user or an autotuner put
// it there). attn.attention_grad is left alone too: the tables have no
// backward candidates yet, and the backward lowering does not read a config.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/IR/AttnOps.h"
#include "AttnDialect/Target/TileTable.h"
#include "AttnDialect/Transforms/Passes.h"
#include "mlir/IR/Diagnostics.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNSELECTCONFIGPASS
#include "AttnDialect/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {
struct AttnSelectConfigPassImpl
    : public attn::impl::AttnSelectConfigPassBase<AttnSelectConfigPassImpl> {
  using Base::Base;

  void runOnOperation() override {
    const ChipSpec *chip = lookupChip(target);
    if (!chip) {
      getOperation()->emitError("attn-select-config: unknown target '")
          << target << "'; known chips: " << getKnownChipNames();
      return signalPassFailure();
    }
    const Profile *prof = nullptr;
    if (!profile.empty()) {
      prof = lookupProfile(profile);
      if (!prof) {
        getOperation()->emitError("attn-select-config: unknown profile '")
            << profile << "'; known profiles: "
            << joinNames(llvm::ArrayRef<Profile>(getTileTable().profiles));
        return signalPassFailure();
      }
    }
    const TileCandidate *forced = nullptr;
    if (!force.empty()) {
      forced = chip->lookupCandidate(force);
      if (!forced) {
        getOperation()->emitError("attn-select-config: force names unknown "
                                  "candidate '")
            << force << "' of " << chip->name
            << "; known: " << joinNames(llvm::ArrayRef(chip->candidates));
        return signalPassFailure();
      }
    }
    WalkResult result = getOperation()->walk([&](AttentionOp op) {
      if (op.getConfigAttr())
        return WalkResult::advance();
      return succeeded(selectFor(op, *chip, prof, forced))
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  LogicalResult selectFor(AttentionOp op, const ChipSpec &chip,
                          const Profile *prof, const TileCandidate *forced) {
    FailureOr<AttentionProblem> problem = getAttentionProblem(op);
    if (failed(problem))
      return failure();
    if (forced) {
      Verdict v = evaluateCandidate(chip, *forced, *problem, prof,
                                    /*exhaustive=*/true);
      if (!v.accepted)
        return op.emitError("forced candidate '")
               << forced->name << "' does not fit this op on " << chip.name
               << ": " << v.reason;
      op.setConfigAttr(toConfigAttr(op.getContext(), *forced));
      return success();
    }
    SmallVector<Verdict> verdicts = evaluateCandidates(chip, *problem, prof);
    for (const Verdict &v : verdicts) {
      if (v.accepted) {
        op.setConfigAttr(toConfigAttr(op.getContext(), *v.candidate));
        return success();
      }
    }
    InFlightDiagnostic diag = op.emitError("no tile candidate of ")
                              << chip.name << " fits this op ("
                              << stringifyElementType(problem->elementType)
                              << ", D = " << problem->headDim
                              << ", Dv = " << problem->headDimV << "); "
                              << verdicts.size() << " rejected";
    for (const Verdict &v : verdicts)
      diag.attachNote(op.getLoc())
          << "candidate '" << v.candidate->name << "': " << v.reason;
    return diag;
  }
};
} // namespace
