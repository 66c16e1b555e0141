//===- TileTableJSON.cpp - tile table and verdicts as JSON ------*- C++ -*-===//

#include "AttnDialect/Target/TileTableJSON.h"

using namespace mlir;
using namespace mlir::attn;
namespace json = llvm::json;

static json::Array typesToJSON(llvm::ArrayRef<ElementType> types) {
  json::Array arr;
  for (ElementType t : types)
    arr.push_back(stringifyElementType(t));
  return arr;
}

static json::Array stringsToJSON(llvm::ArrayRef<std::string> strings) {
  json::Array arr;
  for (const std::string &s : strings)
    arr.push_back(s);
  return arr;
}

static json::Array masksToJSON(llvm::ArrayRef<MaskKind> masks) {
  json::Array arr;
  for (MaskKind m : masks)
    arr.push_back(stringifyMaskKind(m));
  return arr;
}

json::Value mlir::attn::toJSON(const MatrixInstr &i) {
  json::Array allowed;
  for (int64_t n : i.blockNAllowed)
    allowed.push_back(n);
  return json::Object{
      {"name", i.getName()},
      {"reason", i.reason},
      {"m", i.m},
      {"n", i.n},
      {"k", i.k},
      {"operand_types", typesToJSON(i.operandTypes)},
      {"acc_type", stringifyElementType(i.accType)},
      {"rows_per_warp", i.rowsPerWarp},
      {"max_rows_per_warp", i.maxRowsPerWarp},
      {"block_n_multiple", i.blockNMultiple},
      {"block_n_max", i.blockNMax},
      {"block_n_allowed", std::move(allowed)},
      {"head_dim_multiple", i.headDimMultiple},
      {"head_dim_max", i.headDimMax},
      {"min_mma_per_iteration", i.minMmaPerIteration},
      {"max_padding_percent", i.maxPaddingPercent},
      {"shared_operands", i.sharedOperands},
  };
}

json::Value mlir::attn::toJSON(const TileCandidate &c) {
  return json::Object{
      {"name", c.name},
      {"reason", c.reason},
      {"block_m", c.blockM},
      {"block_n", c.blockN},
      {"warps", c.warps},
      {"stages", c.stages},
      {"pipeline", stringifyPipelineKind(c.pipeline)},
      {"acc_in_registers", c.accInRegisters},
      {"mma", stringifyMatrixInstrKind(c.mma)},
      {"dtypes", typesToJSON(c.dtypes)},
      {"head_dim_max", c.headDimMax},
      {"aligned", c.aligned},
      {"supports_bias", c.supportsBias},
      {"implemented", c.implemented},
      {"direction", stringifyDirection(c.direction)},
      {"only_on", stringsToJSON(c.onlyOn)},
      {"masks", masksToJSON(c.masks)},
      {"seqlen_min", c.seqlenMin},
      {"ordered_dq_seqlen_min", c.orderedDqSeqlenMin},
      {"kv_cache_seqlen_q_max", c.kvCacheSeqlenQMax},
      {"head_split", c.headSplit},
      {"dq_pass", c.dqPass},
      {"persistent_masks", masksToJSON(c.persistentMasks)},
      {"overlap_softmax", c.overlapSoftmax},
      {"priority", c.priority},
  };
}

json::Value mlir::attn::toJSON(const ChipSpec &chip) {
  json::Array instrs, cands;
  for (const MatrixInstr &i : chip.instructions)
    instrs.push_back(toJSON(i));
  for (const TileCandidate &c : chip.candidates)
    cands.push_back(toJSON(c));
  return json::Object{
      {"name", chip.name},
      {"vendor", stringifyVendor(chip.vendor)},
      {"reason", chip.reason},
      {"warp_size", chip.warpSize},
      {"max_threads_per_block", chip.maxThreadsPerBlock},
      {"smem_default_bytes", chip.smemDefaultBytes},
      {"smem_max_bytes", chip.smemMaxBytes},
      {"smem_row_pad_elems", chip.smemRowPadElems},
      {"regs_per_thread_max", chip.regsPerThreadMax},
      {"regs_per_block_max", chip.regsPerBlockMax},
      {"regs_overhead", chip.regsOverhead},
      {"features", stringsToJSON(chip.features)},
      {"dtypes", typesToJSON(chip.dtypes)},
      {"dtype_note", chip.dtypeNote},
      {"head_dim_max", chip.headDimMax},
      {"instructions", std::move(instrs)},
      {"candidates", std::move(cands)},
  };
}

json::Value mlir::attn::toJSON(const Profile &p) {
  json::Array dirs;
  for (Direction d : p.directions)
    dirs.push_back(stringifyDirection(d));
  return json::Object{{"name", p.name},
                      {"reason", p.reason},
                      {"directions", std::move(dirs)},
                      {"dtypes", typesToJSON(p.dtypes)}};
}

json::Value mlir::attn::toJSON(const AttentionProblem &p) {
  auto seq = [](std::optional<int64_t> s) -> json::Value {
    if (s)
      return *s;
    return "dynamic";
  };
  json::Object o{
      {"dtype", stringifyElementType(p.elementType)},
      {"head_dim", p.headDim},
      {"head_dim_v", p.headDimV},
      {"seqlen_q", seq(p.seqQ)},
      {"seqlen_k", seq(p.seqK)},
      {"bias", p.hasBias},
      {"mask", stringifyMaskKind(p.mask)},
      {"lse", p.wantsLse},
      {"softcap", p.hasSoftcap},
      {"direction", stringifyDirection(p.direction)},
  };
  // Only what changes the verdicts: a size hint, a deterministic plan.
  if (p.seqHint)
    o["size_hint"] = *p.seqHint;
  if (p.deterministic)
    o["deterministic"] = true;
  return o;
}

json::Value mlir::attn::toJSON(const Verdict &v) {
  return json::Object{{"name", v.candidate ? v.candidate->name : ""},
                      {"accepted", v.accepted},
                      {"reason", v.reason},
                      {"smem_bytes", v.smemBytes},
                      {"registers", v.registers}};
}

json::Value mlir::attn::verdictsToJSON(const ChipSpec &chip,
                                       const AttentionProblem &problem,
                                       llvm::ArrayRef<Verdict> verdicts,
                                       const Profile *profile) {
  json::Array arr;
  json::Value selected = nullptr;
  for (const Verdict &v : verdicts) {
    if (v.accepted && selected.kind() == json::Value::Null)
      selected = v.candidate->name;
    arr.push_back(toJSON(v));
  }
  json::Object obj{{"chip", chip.name},
                   {"problem", toJSON(problem)},
                   {"selected", std::move(selected)},
                   {"verdicts", std::move(arr)}};
  if (profile)
    obj["profile"] = profile->name;
  return obj;
}

json::Value mlir::attn::familyToJSON(llvm::ArrayRef<FamilyMember> family) {
  json::Array arr;
  for (const FamilyMember &m : family)
    arr.push_back(json::Object{{"dtype", stringifyElementType(m.elementType)},
                               {"head_dim", m.headDim},
                               {"mask", stringifyMaskKind(m.mask)},
                               {"direction", stringifyDirection(m.direction)},
                               {"candidate", m.candidate->name}});
  return arr;
}
