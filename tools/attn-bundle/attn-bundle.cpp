//===- attn-bundle.cpp - write kernel bundles -------------------*- C++ -*-===//
//
// Writes a kernel bundle (docs/BundleFormat.md) for an NVIDIA chip, either
// from a user's .mlir file or as a whole kernel family, like xformers'
// generate_kernels.py: every (dtype, head dim, mask) asked for, each with the
// configs this chip accepts, in priority order. See docs/NVIDIA.md.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/InitAll.h"
#include "AttnDialect/Target/TileTable.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include <set>
#include <tuple>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> chip("chip", cl::desc("NVIDIA chip"),
                                 cl::init("sm_90a"));
static cl::opt<std::string>
    profile("profile",
            cl::desc("Family profile: inference (forward, f16/bf16)"),
            cl::init("inference"));
static cl::list<int64_t>
    headDims("head-dims", cl::CommaSeparated,
             cl::desc("Head dims (default 64,96,128,256)"));
static cl::list<std::string>
    dtypes("dtypes", cl::CommaSeparated,
           cl::desc("Element types (default f16,bf16)"));
static cl::list<std::string>
    masks("masks", cl::CommaSeparated,
          cl::desc("Masks (default none,causal,causal_bottom_right,"
                   "sliding_window)"));
static cl::opt<bool>
    softcap("softcap",
            cl::desc("Also emit soft-capped variants (the cap is a kernel "
                     "argument)"),
            cl::init(false));
static cl::list<std::string>
    biases("bias", cl::CommaSeparated,
           cl::desc("Bias kinds (default none): none, same (q's dtype), "
                    "f32; each kind is its own set of variants"));
static cl::opt<std::string> input("input",
                                  cl::desc("Bundle the attn ops of this file "
                                           "instead of a family"));
static cl::opt<std::string> outDir("o", cl::desc("Output directory"),
                                   cl::Required);
static cl::opt<std::string> toolkit("toolkit", cl::desc("CUDA toolkit root"),
                                    cl::init(ATTN_CUDA_TOOLKIT));
static cl::opt<bool> verbose("v", cl::desc("Print the pass pipeline"),
                             cl::init(false));
static cl::opt<bool> allCandidates(
    "all-candidates",
    cl::desc("Emit every candidate the tables accept for each (dtype, D, "
             "mask), in priority order (the first stays the runtime's "
             "choice), instead of the selected ones: a bundle to time every "
             "tile with bench/gpu_check.py --time --all-variants"),
    cl::init(false));
static cl::opt<bool> printOnly("print-family",
                               cl::desc("Print the family module and stop"),
                               cl::init(false));

namespace {
/// One tile of a variant, spelled as the #attn.config to attach.
struct VariantTile {
  std::string dtype;
  int64_t headDim;
  std::string mask;
  std::string config;
};

/// The (dtype, D, tile) list of the family, from the tile tables: per
/// (dtype, D) the candidates attn-select-config would pick, aligned first.
FailureOr<SmallVector<VariantTile>>
getTiles(MLIRContext &ctx, ArrayRef<std::string> ts, ArrayRef<int64_t> ds) {
  SmallVector<VariantTile> out;
  const attn::ChipSpec *spec = attn::lookupChip(chip);
  if (!spec) {
    llvm::errs() << "attn-bundle: the tile tables know no chip '" << chip
                 << "'\n";
    return failure();
  }
  const attn::Profile *prof = attn::lookupProfile(profile);
  for (const attn::FamilyMember &m :
       attn::enumerateFamily(*spec, profile, ds)) {
    if (m.direction != attn::Direction::Forward)
      continue;
    std::string t = attn::stringifyElementType(m.elementType).lower();
    if (!llvm::is_contained(ts, t))
      continue;
    SmallVector<const attn::TileCandidate *> cands = {m.candidate};
    if (allCandidates) {
      // Every candidate accepted for dynamic sequence lengths (aligned twins
      // compile to the same kernel); skip the family's aligned member.
      if (m.candidate->aligned)
        continue;
      attn::AttentionProblem p;
      p.elementType = m.elementType;
      p.headDim = p.headDimV = m.headDim;
      p.mask = m.mask;
      cands.clear();
      // Tiles of several head-dim buckets compile to one kernel: keep the
      // first of each.
      std::set<std::tuple<int64_t, int64_t, int64_t, int64_t, int, bool,
                          attn::MatrixInstrKind>>
          tiles;
      for (const attn::Verdict &v : attn::evaluateCandidates(*spec, p, prof))
        if (v.accepted &&
            tiles
                .insert({v.candidate->blockM, v.candidate->blockN,
                         v.candidate->warps, v.candidate->stages,
                         int(v.candidate->pipeline),
                         v.candidate->accInRegisters, v.candidate->mma})
                .second)
          cands.push_back(v.candidate);
    }
    for (const attn::TileCandidate *c : cands) {
      std::string config;
      llvm::raw_string_ostream os(config);
      Attribute(attn::toConfigAttr(&ctx, *c)).print(os);
      out.push_back(
          {t, m.headDim, attn::stringifyMaskKind(m.mask).str(), config});
    }
  }
  return out;
}

/// One func per variant, with a memref-form attn.attention whose B, Sq and
/// Sk are dynamic (the kernel takes them, and the heads, as arguments).
FailureOr<std::string> buildFamily(MLIRContext &ctx) {
  SmallVector<int64_t> ds(headDims.begin(), headDims.end());
  if (ds.empty())
    ds = {64, 96, 128, 256};
  SmallVector<std::string> ts(dtypes.begin(), dtypes.end());
  if (ts.empty())
    ts = {"f16", "bf16"};
  SmallVector<std::string> ms(masks.begin(), masks.end());
  if (ms.empty())
    ms = {"none", "causal", "causal_bottom_right", "sliding_window"};
  SmallVector<std::string> bs(biases.begin(), biases.end());
  if (bs.empty())
    bs = {"none"};
  for (const std::string &bias : bs)
    if (bias != "none" && bias != "same" && bias != "f32") {
      llvm::errs() << "attn-bundle: unknown --bias '" << bias
                   << "'; expected none, same or f32\n";
      return failure();
    }
  FailureOr<SmallVector<VariantTile>> family = getTiles(ctx, ts, ds);
  if (failed(family))
    return failure();
  std::string text;
  llvm::raw_string_ostream os(text);
  int idx = 0;
  SmallVector<bool> caps = {false};
  if (softcap)
    caps.push_back(true);
  // Priority: plain before soft-capped, then the bias kinds in the order
  // given; within a (dtype, D, mask) the tiles keep their order (best
  // first). The runtime matches bias and softcap exactly, so the order
  // only decides among equals.
  for (bool cap : caps)
    for (const std::string &bias : bs)
      for (const std::string &t : ts)
        for (int64_t d : ds)
          for (const std::string &m : ms)
            for (const VariantTile &vt : *family) {
              if (vt.dtype != t || vt.headDim != d || vt.mask != m)
                continue;
              std::string q =
                  "memref<?x1x?x" + std::to_string(d) + "x" + t + ">";
              std::string l = "memref<?x1x?xf32>";
              // Dynamic bias dimensions: broadcasting is a stride of 0.
              std::string bt =
                  "memref<?x?x?x?x" + (bias == "f32" ? "f32" : t) + ">";
              bool hasBias = bias != "none";
              os << "func.func @v" << idx++ << "(%q: " << q << ", %k: " << q
                 << ", %v: " << q << ", %o: " << q << ", %lse: " << l
                 << (hasBias ? ", %bias: " + bt : "") << ") {\n"
                 << "  attn.attention q(%q : " << q << ") k(%k : " << q
                 << ") v(%v : " << q << ") "
                 << (hasBias ? "bias(%bias : " + bt + ") " : "")
                 << "outs(%o : " << q << ") lse(%lse : " << l
                 << ") {mask = #attn.mask<" << m << ">, "
                 << (m == "sliding_window" ? "window = array<i64: 128, 0>, "
                                           : "")
                 << (cap ? "softcap = 1.0 : f32, " : "")
                 << "config = " << vt.config << "}\n"
                 << "  return\n}\n";
            }
  return text;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  DialectRegistry registry;
  attn::registerAllDialects(registry);
  attn::registerAllPasses();
  registerPassManagerCLOptions();
  registerMLIRContextCLOptions();
  cl::ParseCommandLineOptions(argc, argv, "attn kernel bundle writer\n");
  if (profile != "inference") {
    llvm::errs() << "attn-bundle: unknown --profile '" << profile
                 << "'; expected inference\n";
    return 1;
  }

  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx);
  OwningOpRef<ModuleOp> module;
  bool selectConfig = false;
  if (!input.empty()) {
    module = parseSourceFile<ModuleOp>(input, sourceMgr, &ctx);
    selectConfig = true;
  } else {
    FailureOr<std::string> family = buildFamily(ctx);
    if (failed(family))
      return 1;
    std::string text = *family;
    if (text.empty()) {
      llvm::errs() << "attn-bundle: no variant fits " << chip << "\n";
      return 1;
    }
    if (printOnly) {
      llvm::outs() << text;
      return 0;
    }
    module = parseSourceString<ModuleOp>(text, &ctx, "family");
  }
  if (!module)
    return 1;

  std::string pipeline = "attn-to-nvvm{chip=" + chip +
                         " format=bin toolkit=" + toolkit +
                         " select-config=" + (selectConfig ? "true" : "false") +
                         "}, attn-write-bundle{dir=" + outDir + "}";
  PassManager pm(&ctx);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    return 1;
  if (verbose)
    llvm::errs() << "attn-bundle: running " << pipeline << "\n";
  if (failed(pm.run(*module)))
    return 1;
  llvm::outs() << "attn-bundle: wrote " << outDir << "/bundle.json\n";
  return 0;
}
