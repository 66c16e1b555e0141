//===- TileTableJSON.h - tile table and verdicts as JSON --------*- C++ -*-===//
//
// JSON views of the parsed table (as CK's registry exports JSON), used by
// attn-tiles and by tools that want to show why a kernel was or was not
// chosen.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNDIALECT_TARGET_TILETABLEJSON_H
#define ATTNDIALECT_TARGET_TILETABLEJSON_H

#include "AttnDialect/Target/TileTable.h"
#include "llvm/Support/JSON.h"

namespace mlir {
namespace attn {

llvm::json::Value toJSON(const MatrixInstr &instr);
llvm::json::Value toJSON(const TileCandidate &candidate);
/// The chip's limits, instructions and every candidate.
llvm::json::Value toJSON(const ChipSpec &chip);
llvm::json::Value toJSON(const Profile &profile);
llvm::json::Value toJSON(const AttentionProblem &problem);
/// {"name", "accepted", "reason", "smem_bytes", "registers"}.
llvm::json::Value toJSON(const Verdict &verdict);
/// {"chip", "problem", "profile"?, "selected", "verdicts": [...]}.
llvm::json::Value verdictsToJSON(const ChipSpec &chip,
                                 const AttentionProblem &problem,
                                 llvm::ArrayRef<Verdict> verdicts,
                                 const Profile *profile = nullptr);
/// [{"dtype", "head_dim", "direction", "candidate"}...].
llvm::json::Value familyToJSON(llvm::ArrayRef<FamilyMember> family);

} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_TARGET_TILETABLEJSON_H
