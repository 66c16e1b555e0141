//===- Passes.td - attn transformation passes ---------------*- tablegen -*-===//

#ifndef ATTN_TRANSFORMS_PASSES_TD
#define ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnSelectConfigPass : Pass<"attn-select-config"> {
  let summary = "Attach the best valid tile configuration for a chip";
  let description = [{
    For every `attn.attention` and `attn.attention_grad` without a
    `config`, walks the tile-table candidates of `target` of the op's
    direction (forward or backward) in priority order, rejects those that
    break a constraint (shared memory / LDS bytes, register budget,
    matrix-instruction divisibility, head-dim rules, element types), and
    attaches the first one left as `#attn.config`. When none fits, the error
    lists every candidate and why it was rejected. `force` names one
    candidate; it goes through the same checks and pins the ops of its
    direction (the others are selected as usual). `profile` (a profile of
    the tables: `inference`, `training`, `all`) restricts the candidates to
    its directions and element types, as `attn-tiles --profile` and
    `attn-bundle` do.

    `size-hint` is the length dynamic Sq and Sk are expected at: a
    size-specialized candidate (`seqlen_min`) applies when the hint reaches
    it. `tuning` names a tuning file (docs/Tuning.md) measured for
    `target`: an op whose lengths (static, else the hint) fall in one of
    its entries gets that entry's tile when it fits the op, the tables'
    choice otherwise. A file for another chip, an unknown candidate or one
    the tables reject is an error; a file measured with another toolchain
    a warning.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"sm_90a\"",
           "Chip whose tile table is used (sm_80, sm_86, sm_89, sm_90a, "
           "gfx90a, gfx942, gfx950, gfx1100, gfx1201, host)">,
    Option<"force", "force", "std::string", /*default=*/"\"\"",
           "Name of the candidate to use instead of the best one">,
    Option<"profile", "profile", "std::string", /*default=*/"\"\"",
           "Restrict the candidates to a profile of the tile tables "
           "(inference, training, all); none when empty">,
    Option<"sizeHint", "size-hint", "int64_t", /*default=*/"0",
           "Length dynamic Sq and Sk are chosen for (0: none)">,
    Option<"tuning", "tuning", "std::string", /*default=*/"\"\"",
           "Tuning file (docs/Tuning.md) of the target chip">,
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
}

def AttnSpecializeSizesPass : Pass<"attn-specialize-sizes"> {
  let summary = "Version attention ops with dynamic lengths per size class";
  let description = [{
    As Inductor compiles a kernel per size hint and picks one per run-time
    shape: every dense `attn.attention` without a `config` whose Sq or Sk is
    dynamic gets the size classes of `size-hints` (or of the `tuning` file's
    entries for its combination; docs/Tuning.md): for each class whose tile
    differs from the tables' general one, a copy of the op with that tile's
    `#attn.config`, guarded by `scf.if` on Sq and Sk lying in the class's
    range; the general tile's copy serves every other length. A tuning
    entry measured from a grid fill (`min_blocks_per_sm`) also guards on
    B x Hq x ceil(Sq / block_m) >= that x `sm-count`, and is left out when
    `sm-count` is 0 (the multiprocessors are not known here). Ops without
    any class are left to `attn-select-config`.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"sm_90a\"",
           "Chip whose tile table is used">,
    ListOption<"sizeHints", "size-hints", "int64_t",
               "Lengths dynamic Sq and Sk are expected at">,
    Option<"tuning", "tuning", "std::string", /*default=*/"\"\"",
           "Tuning file (docs/Tuning.md) of the target chip">,
    Option<"smCount", "sm-count", "int64_t", /*default=*/"0",
           "Multiprocessors of the GPU the code will run on, for tuning "
           "entries measured from a grid fill (0: leave those out)">,
  ];
  let dependentDialects = [
    "::mlir::attn::AttnDialect", "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def AttnTilePass : Pass<"attn-tile"> {
  let summary = "Tile attention ops into FlashAttention-2 loop nests";
  let description = [{
    Rewrites each memref-form `attn.attention` carrying a `#attn.config` into
    a grid (`scf.forall` over batch, query head and query block, mapped to
    GPU blocks) around a loop over key/value blocks with an online softmax
    (running max and sum, the accumulator rescaled by `exp2(m_old - m_new)`,
    scores in the exp2 domain with the scale folded with log2(e)). Fully
    masked key blocks are skipped; partial ones are masked in-block.

    Each memref-form `attn.attention_grad` becomes FlashAttention-2's
    backward pass in three grids (docs/Backward.md): `delta = rowsum(dO * O)`
    and a zeroed f32 dQ accumulator; a grid over (batch, key/value head, key
    block) that recomputes the scores and `P = exp(S - lse)` for the query
    blocks of every query head of the group that the mask lets see the key
    block, accumulates dK and dV in tile-sized scratch (written once per key
    block) and adds into the dQ (and dbias) accumulators; then dQ (and dbias)
    rounded to their element types.

    No `[Sq x Sk]` buffer is created. The result is scf/arith/vector/memref.

    `kv-splits=N` splits the keys of every KV-cache op (`seqlens_k`) in N
    parts of whole key blocks, each with its own online softmax, merged by
    their logsumexps: the split-KV computation of the GPU kernels, here so
    that its numerics are checked on the host.
  }];
  let options = [
    Option<"kvSplits", "kv-splits", "int64_t", /*default=*/"1",
           "Split a KV-cache op's keys in this many parts (split-KV)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect", "::mlir::vector::VectorDialect",
    "::mlir::math::MathDialect", "::mlir::gpu::GPUDialect"
  ];
}

def AttnWriteBundlePass : Pass<"attn-write-bundle", "::mlir::ModuleOp"> {
  let summary = "Write serialized kernels and their metadata as a bundle";
  let description = [{
    Writes every `gpu.binary` produced from attn kernels, plus
    `bundle.json` (see docs/BundleFormat.md), into the directory `dir`.
  }];
  let options = [
    Option<"dir", "dir", "std::string", /*default=*/"\"\"",
           "Output directory of the bundle">,
  ];
}

#endif // ATTN_TRANSFORMS_PASSES_TD
