//===- SelectConfig.cpp - attach a tile config to attention ops -*- C++ -*-===//
//
// A thin driver over the tile tables (AttnDialect/Target): the constraints and
// the priority order live there so that attn-tiles and the bundle generator
// make the same choice as this pass.
//
// attn.attention gets a forward candidate, attn.attention_grad a backward
// one. Ops that already carry a config are left alone (a user or an
// autotuner put it there). A tuning file's measured tiles (Tuning.h) go
// first where they fit.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/IR/AttnOps.h"
#include "AttnDialect/Target/TileTable.h"
#include "AttnDialect/Target/Tuning.h"
#include "AttnDialect/Transforms/Passes.h"
#include "TuningOption.h"
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
    if (sizeHint < 0) {
      getOperation()->emitError("attn-select-config: size-hint must not be "
                                "negative, got ")
          << static_cast<int64_t>(sizeHint);
      return signalPassFailure();
    }
    FailureOr<std::optional<TuningFile>> tuned =
        loadTuningOption(getOperation(), "attn-select-config", tuning, *chip);
    if (failed(tuned))
      return signalPassFailure();
    const TuningFile *tuningFile = *tuned ? &**tuned : nullptr;
    WalkResult result = getOperation()->walk([&](Operation *op) {
      if (!isa<AttentionOp, AttentionGradOp>(op) || getConfig(op))
        return WalkResult::advance();
      return succeeded(selectFor(op, *chip, prof, forced, tuningFile))
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  static ConfigAttr getConfig(Operation *op) {
    if (auto fwd = dyn_cast<AttentionOp>(op))
      return fwd.getConfigAttr();
    return cast<AttentionGradOp>(op).getConfigAttr();
  }

  static void setConfig(Operation *op, const TileCandidate &candidate,
                        const AttentionProblem &problem) {
    ConfigAttr config = toConfigAttr(op->getContext(), candidate, problem);
    if (auto fwd = dyn_cast<AttentionOp>(op))
      fwd.setConfigAttr(config);
    else
      cast<AttentionGradOp>(op).setConfigAttr(config);
  }

  LogicalResult selectFor(Operation *op, const ChipSpec &chip,
                          const Profile *prof, const TileCandidate *forced,
                          const TuningFile *tuningFile) {
    FailureOr<AttentionProblem> problem = getAttentionProblem(op);
    if (failed(problem))
      return failure();
    if (sizeHint > 0)
      problem->seqHint = sizeHint;
    // A forced candidate pins the ops of its direction; a module holding a
    // training step pins its forward tile and still gets a backward one.
    if (forced && forced->direction == problem->direction) {
      Verdict v = evaluateCandidate(chip, *forced, *problem, prof,
                                    /*exhaustive=*/true);
      if (!v.accepted)
        return op->emitError("forced candidate '")
               << forced->name << "' does not fit this op on " << chip.name
               << ": " << v.reason;
      setConfig(op, *forced, *problem);
      return success();
    }
    // A chip without a single candidate of the op's direction has no
    // lowering for it: say that rather than list every candidate's verdict.
    if (llvm::none_of(chip.candidates, [&](const TileCandidate &c) {
          return c.direction == problem->direction;
        }))
      return op->emitOpError("is not lowered yet for ")
             << chip.name << ": the tile tables have no "
             << stringifyDirection(problem->direction) << " candidate for it";
    if (tuningFile) {
      if (const TileCandidate *c =
              selectTunedCandidate(chip, *problem, prof, tuningFile)) {
        setConfig(op, *c, *problem);
        return success();
      }
    }
    SmallVector<Verdict> verdicts = evaluateCandidates(chip, *problem, prof);
    for (const Verdict &v : verdicts) {
      if (v.accepted) {
        setConfig(op, *v.candidate, *problem);
        return success();
      }
    }
    InFlightDiagnostic diag = op->emitError("no tile candidate of ")
                              << chip.name << " fits this op ("
                              << stringifyElementType(problem->elementType)
                              << ", D = " << problem->headDim
                              << ", Dv = " << problem->headDimV << "); "
                              << verdicts.size() << " rejected";
    for (const Verdict &v : verdicts)
      diag.attachNote(op->getLoc())
          << "candidate '" << v.candidate->name << "': " << v.reason;
    return diag;
  }
};
} // namespace
