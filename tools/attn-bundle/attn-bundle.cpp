//===- attn-bundle.cpp - write kernel bundles -------------------*- C++ -*-===//
//
// Writes a kernel bundle (docs/BundleFormat.md) for an NVIDIA or AMD chip,
// either from a user's .mlir file or as a whole kernel family, like xformers'
// generate_kernels.py: every (dtype, head dim, mask, bias, softcap) asked
// for, each with the tiles the chip's table picks, in priority order. Each
// variant is its own module, compiled in parallel and cached. See
// docs/NVIDIA.md and docs/BundleFormat.md.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/IR/AttnDialect.h"
#include "AttnDialect/IR/AttnOps.h"
#include "AttnDialect/InitAll.h"
#include "AttnDialect/Pipelines/RocmToolkit.h"
#include "AttnDialect/Target/Tuning.h"
#include "Compile.h"
#include "Family.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;

static cl::OptionCategory category("attn-bundle options");

static cl::opt<std::string>
    chipName("chip",
             cl::desc("Chips of the tile tables (attn-tiles --list-chips), "
                      "comma-separated: one bundle may hold several of one "
                      "vendor, each variant saying its chip"),
             cl::init("sm_90a"), cl::cat(category));
static cl::opt<std::string>
    profileName("profile",
                cl::desc("Family profile: inference (forward, f16/bf16)"),
                cl::init("inference"), cl::cat(category));
static cl::list<int64_t> headDims(
    "head-dims", cl::CommaSeparated,
    cl::desc("Head dims, any of 1..256 (default: those of "
             "32,64,80,96,128,160,192,224,256 the chip's table compiles)"),
    cl::cat(category));
static cl::list<std::string> headDimPairs(
    "head-dim-pairs", cl::CommaSeparated,
    cl::desc("Also emit dense variants (and backward plans) whose values "
             "and outputs have another head dim than queries and keys: "
             "D:Dv pairs, each of 1..256 (e.g. 64:128)"),
    cl::cat(category));
static cl::list<int64_t> maxHeadDims(
    "max-head-dims", cl::CommaSeparated,
    cl::desc("Also emit variants that take D (= Dv) at run time, any up to "
             "each bound given, after the fixed head dims (default: those "
             "of 64,128,256 the chip's table compiles when --head-dims is "
             "not given, none otherwise)"),
    cl::cat(category));
static cl::list<std::string>
    dtypes("dtypes", cl::CommaSeparated,
           cl::desc("Element types (default f16,bf16,f32)"), cl::cat(category));
static cl::list<std::string>
    masks("masks", cl::CommaSeparated,
          cl::desc("Masks (default none,causal,causal_bottom_right,"
                   "sliding_window)"),
          cl::cat(category));
static cl::opt<bool>
    softcap("softcap",
            cl::desc("Also emit soft-capped variants (the cap is a kernel "
                     "argument)"),
            cl::cat(category));
static cl::opt<bool>
    dropout("dropout",
            cl::desc("Also emit a dropout twin of every dense forward "
                     "variant and backward plan (p, seed and offset are "
                     "kernel arguments); default on, --dropout=false "
                     "leaves them out"),
            cl::init(true), cl::cat(category));
static cl::list<std::string>
    biases("bias", cl::CommaSeparated,
           cl::desc("Bias kinds (default none): none, same (q's dtype), "
                    "f32; each kind is its own set of variants"),
           cl::cat(category));
static cl::list<std::string> layouts(
    "layouts", cl::CommaSeparated,
    cl::desc("Sequence layouts (default dense,varlen,kvcache,paged): dense "
             "[B, H, S, D]; varlen (packed batches, lib.attention_varlen), "
             "kvcache and paged (lib.attention_kvcache); the serving layouts "
             "get the unbiased, aligned variants"),
    cl::cat(category));
static cl::opt<bool> unaligned(
    "unaligned",
    cl::desc("Also emit, after the 16-byte-aligned variants, a twin of each "
             "that needs only element alignment of q, k, v and o (views "
             "that start anywhere); default on"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> backward(
    "backward",
    cl::desc("Also emit a backward plan (attn-bwd-v1: the gradients of "
             "lib.attention) for every combination the chip's table has a "
             "backward tile for; the others are named and left out"),
    cl::cat(category));
static cl::opt<bool> allowMissing(
    "allow-missing",
    cl::desc("Warn about, instead of failing on, combinations the chip's "
             "table cannot compile, and leave them out"),
    cl::cat(category));
static cl::opt<std::string> input("input",
                                  cl::desc("Bundle the attn ops of this file "
                                           "instead of a family"),
                                  cl::value_desc("file"), cl::cat(category));
static cl::opt<std::string> outDir("o", cl::desc("Output directory"),
                                   cl::value_desc("dir"), cl::cat(category));
static cl::opt<std::string> toolkit(
    "toolkit",
    cl::desc(
        "CUDA toolkit root (NVIDIA chips; default " ATTN_CUDA_TOOLKIT
        ") or ROCm toolkit root (AMD chips; default " ATTN_ROCM_TOOLKIT_ROOT
        ")"),
    cl::value_desc("dir"), cl::cat(category));
static cl::opt<unsigned>
    jobs("j",
         cl::desc("Variants compiled at once (default: one per hardware "
                  "thread)"),
         cl::init(0), cl::value_desc("N"), cl::Prefix, cl::cat(category));
static cl::opt<std::string>
    cacheDir("cache-dir",
             cl::desc("Where compiled variants are kept (default: "
                      "$XDG_CACHE_HOME/attn, else ~/.cache/attn)"),
             cl::value_desc("dir"), cl::cat(category));
static cl::opt<bool> noCache("no-cache",
                             cl::desc("Compile every variant, reading and "
                                      "writing no cache"),
                             cl::cat(category));
static cl::opt<bool> verbose("v", cl::desc("Print the pass pipeline"),
                             cl::cat(category));
static cl::opt<bool> allCandidates(
    "all-candidates",
    cl::desc("Emit every candidate the tables accept for each (dtype, D, "
             "mask), in priority order (the first stays the runtime's "
             "choice), instead of the selected ones: a bundle to time every "
             "tile with bench/gpu_check.py --time --all-variants"),
    cl::cat(category));
static cl::list<int64_t> sizeHints(
    "size-hints", cl::CommaSeparated,
    cl::desc("Lengths dynamic Sq and Sk are expected at (default "
             "1,512,4096,16384): each gets the tile the tables (or the "
             "tuning file) choose there, a variant for its range of lengths "
             "where that differs from the general tile (docs/Tuning.md)"),
    cl::cat(category));
static cl::list<std::string>
    tuningFiles("tuning",
                cl::desc("Tuning file of bench/autotune.py (docs/Tuning.md): "
                         "measured tiles per size class for the chip it "
                         "names; once per chip"),
                cl::value_desc("file"), cl::cat(category));
static cl::opt<bool> builtinTuning(
    "builtin-tuning",
    cl::desc("For a chip no --tuning names, use the tuning file built in "
             "for it (lib/Target/Tunings; sm_90a: measured on an H100), if "
             "any; default on"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> printOnly("print-family",
                               cl::desc("Print the family module and stop"),
                               cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "attn-bundle") << message << "\n";
  return 1;
}

/// Parses every item of `values` with `parse`, or fails naming the option,
/// the item and what `expected`.
template <typename T, typename Parse>
static FailureOr<SmallVector<T>>
parseList(ArrayRef<std::string> values, ArrayRef<StringRef> defaults,
          StringRef option, StringRef expected, Parse parse) {
  SmallVector<T> out;
  SmallVector<StringRef> names(values.begin(), values.end());
  if (names.empty())
    names.assign(defaults.begin(), defaults.end());
  for (StringRef name : names) {
    std::optional<T> value = parse(name);
    if (!value) {
      fail("unknown --" + option + " '" + name + "'; expected " + expected);
      return failure();
    }
    out.push_back(*value);
  }
  return out;
}

/// The family the options ask for, with the chip's table deciding the
/// default head dims; fails on anything asked for that the table cannot
/// compile unless --allow-missing.
static FailureOr<SmallVector<Variant>> getFamily(const ChipSpec &chip,
                                                 const Profile &profile,
                                                 const TuningFile *tuning) {
  FamilyRequest request;
  request.chip = &chip;
  request.profile = &profile;
  request.tuning = tuning;
  if (sizeHints.empty())
    request.sizeHints.assign(std::begin(kDefaultSizeHints),
                             std::end(kDefaultSizeHints));
  else
    request.sizeHints.assign(sizeHints.begin(), sizeHints.end());
  request.softcap = softcap;
  request.allCandidates = allCandidates;
  request.unaligned = unaligned;
  request.backward = backward;
  request.dropout = dropout;
  auto types = parseList<ElementType>(
      dtypes, {"f16", "bf16", "f32"}, "dtypes", "f16, bf16 or f32",
      [](StringRef s) { return symbolizeElementType(s); });
  auto maskKinds = parseList<MaskKind>(
      masks, {"none", "causal", "causal_bottom_right", "sliding_window"},
      "masks", "none, causal, causal_bottom_right or sliding_window",
      [](StringRef s) { return symbolizeMaskKind(s); });
  auto biasKinds = parseList<BiasKind>(biases, {"none"}, "bias",
                                       "none, same or f32", parseBiasKind);
  auto layoutKinds =
      parseList<SeqLayout>(layouts, {"dense", "varlen", "kvcache", "paged"},
                           "layouts", "dense, varlen, kvcache or paged",
                           [](StringRef s) { return symbolizeSeqLayout(s); });
  if (failed(types) || failed(maskKinds) || failed(biasKinds) ||
      failed(layoutKinds))
    return failure();
  request.layouts = std::move(*layoutKinds);
  request.dtypes = std::move(*types);
  request.masks = std::move(*maskKinds);
  request.biases = std::move(*biasKinds);
  for (int64_t d : headDims)
    if (d <= 0) {
      fail("--head-dims: expected positive head dims, got " + Twine(d));
      return failure();
    }
  for (int64_t d : maxHeadDims)
    if (d <= 0) {
      fail("--max-head-dims: expected positive bounds, got " + Twine(d));
      return failure();
    }
  request.maxHeadDims.assign(maxHeadDims.begin(), maxHeadDims.end());
  for (StringRef pair : headDimPairs) {
    auto [d, dv] = pair.split(':');
    int64_t qk = 0, v = 0;
    if (d.getAsInteger(10, qk) || dv.getAsInteger(10, v) || qk <= 0 || v <= 0 ||
        qk > 256 || v > 256 || qk == v) {
      fail("--head-dim-pairs: expected D:Dv with head dims of 1..256 that "
           "differ, got '" +
           pair + "'");
      return failure();
    }
    request.headDimPairs.push_back({qk, v});
  }

  SmallVector<UnsupportedVariant> unsupported;
  if (headDims.empty()) {
    // The defaults are those the chip compiles every combination of; one
    // left out is named, and --head-dims (--max-head-dims) says why.
    auto compiles = [&](int64_t d, bool runTime) {
      FamilyRequest one = request;
      one.headDims.clear();
      one.maxHeadDims.clear();
      (runTime ? one.maxHeadDims : one.headDims).push_back(d);
      one.backward = false;
      SmallVector<UnsupportedVariant> missing;
      enumerateVariants(one, missing);
      if (missing.empty())
        return true;
      llvm::WithColor::note(llvm::errs(), "attn-bundle")
          << (runTime ? "head dims up to " + Twine(d) + " at run time are"
                      : "D=" + Twine(d) + " is")
          << " left out of " << chip.name
          << "'s default family: the table cannot compile "
          << missing[0].variant.describe()
          << (runTime ? " (--max-head-dims " : " (--head-dims ") << d
          << " says why)\n";
      return false;
    };
    for (int64_t d : kDefaultHeadDims)
      if (compiles(d, /*runTime=*/false))
        request.headDims.push_back(d);
    if (maxHeadDims.empty())
      for (int64_t max : kDefaultMaxHeadDims)
        if (compiles(max, /*runTime=*/true))
          request.maxHeadDims.push_back(max);
  } else {
    request.headDims.assign(headDims.begin(), headDims.end());
  }
  SmallVector<UnsupportedVariant> noBackward;
  SmallVector<Variant> variants =
      enumerateVariants(request, unsupported, &noBackward);
  printUnsupported(llvm::errs(), chip, unsupported, allowMissing);
  // Training is served where the tables have a backward tile; the rest of
  // the family still serves inference.
  printUnsupported(llvm::errs(), chip, noBackward, /*asWarning=*/true);
  if (!unsupported.empty() && !allowMissing) {
    llvm::errs() << "attn-bundle: --allow-missing leaves them out instead\n";
    return failure();
  }
  if (variants.empty()) {
    fail("no variant fits " + chip.name);
    return failure();
  }
  return variants;
}

/// The kernels of `chip`'s family (or of --input) compiled, or printed
/// with --print-family (then none).
static FailureOr<std::vector<BundleKernel>>
compileChip(DialectRegistry &registry, const ChipSpec &chip,
            const Profile &profile, const TuningFile *tuning,
            CompileStats &stats) {
  CompileOptions options;
  options.chip = &chip;
  if (tuning)
    options.tuningFile = tuning->path;
  options.toolkit = toolkit;
  if (toolkit.empty())
    options.toolkit =
        chip.vendor == Vendor::Amd ? ATTN_ROCM_TOOLKIT_ROOT : ATTN_CUDA_TOOLKIT;
  options.jobs = jobs;
  if (!noCache) {
    SmallString<256> dir(cacheDir);
    if (dir.empty() && llvm::sys::path::cache_directory(dir))
      llvm::sys::path::append(dir, "attn");
    options.cacheDir = dir.str().str();
  }

  // Ops of a user's file may carry no config; the family's always do.
  options.selectConfig = !input.empty();
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  OpPassManager pipeline("builtin.module");
  if (failed(buildBundlePipeline(pipeline, options, errorStream))) {
    fail(error);
    return failure();
  }
  if (verbose) {
    llvm::errs() << "attn-bundle: running ";
    pipeline.printAsTextualPipeline(llvm::errs());
    llvm::errs() << "\n";
  }

  SmallVector<CompileJob> compileJobs;
  SmallVector<Variant> variants;
  if (!input.empty()) {
    compileJobs.push_back(
        {input, [](MLIRContext &ctx) {
           llvm::SourceMgr sourceMgr;
           SourceMgrDiagnosticHandler handler(sourceMgr, &ctx);
           OwningOpRef<ModuleOp> module =
               parseSourceFile<ModuleOp>(input, sourceMgr, &ctx);
           if (module &&
               !module
                    ->walk([](AttentionOp) { return WalkResult::interrupt(); })
                    .wasInterrupted()) {
             module->emitError("attn-bundle: no attn.attention op to bundle");
             return OwningOpRef<ModuleOp>();
           }
           return module;
         }});
  } else {
    FailureOr<SmallVector<Variant>> family = getFamily(chip, profile, tuning);
    if (failed(family))
      return failure();
    if (printOnly) {
      MLIRContext ctx(registry);
      ctx.loadDialect<AttnDialect, func::FuncDialect>();
      OpBuilder b(&ctx);
      Location loc = UnknownLoc::get(&ctx);
      OwningOpRef<ModuleOp> module = ModuleOp::create(b, loc);
      b.setInsertionPointToEnd(module->getBody());
      // What each function is, in dispatch order (size classes included).
      for (auto [i, v] : llvm::enumerate(*family)) {
        llvm::outs() << "// v" << i << ": " << v.describe() << ", tile "
                     << v.tile->name << "\n";
        buildVariantFunc(b, loc, "v" + std::to_string(i), v);
      }
      module->print(llvm::outs());
      return std::vector<BundleKernel>();
    }
    variants = std::move(*family);
    for (const Variant &v : variants)
      compileJobs.push_back({v.describe(), [v](MLIRContext &ctx) {
                               return buildVariantModule(ctx, v);
                             }});
  }

  FailureOr<std::vector<BundleKernel>> kernels =
      attn::compileJobs(registry, compileJobs, options, stats);
  if (failed(kernels))
    return failure();
  // A size-specialized variant's lengths are dispatch conditions (one
  // kernel per job, in order).
  for (auto [v, k] : llvm::zip(variants, *kernels)) {
    llvm::json::Object *c = k.variant.getObject("conditions");
    if (c && v.seqlenQMax)
      (*c)["seqlen_q_max"] = v.seqlenQMax;
    if (!v.seqlenMin)
      continue;
    if (c) {
      (*c)["seqlen_q_min"] = v.seqlenMin;
      (*c)["seqlen_k_min"] = v.seqlenMin;
      if (v.seqlenMax) {
        (*c)["seqlen_q_max"] = v.seqlenMax;
        (*c)["seqlen_k_max"] = v.seqlenMax;
      }
      if (v.minBlocksPerSm)
        (*c)["grid_min_blocks_per_sm"] = v.minBlocksPerSm;
    }
  }
  return kernels;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  DialectRegistry registry;
  registerAllDialects(registry);
  // Timing, statistics and IR printing of each variant's pass manager.
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  // --help lists attn-bundle's options, not libLLVM's hundreds;
  // --help-hidden adds the MLIR ones above.
  cl::HideUnrelatedOptions(category);
  for (auto &[name, option] : cl::getRegisteredOptions())
    if (name.starts_with("mlir-"))
      option->setHiddenFlag(cl::Hidden);
  cl::ParseCommandLineOptions(argc, argv, "attn kernel bundle writer\n");

  SmallVector<StringRef> chipNames;
  StringRef(chipName).split(chipNames, ',', /*MaxSplit=*/-1,
                            /*KeepEmpty=*/false);
  SmallVector<const ChipSpec *> chips;
  for (StringRef name : chipNames) {
    const ChipSpec *chip = lookupChip(name);
    if (!chip)
      return fail("the tile tables know no chip '" + name +
                  "'; known chips: " + getKnownChipNames());
    if (llvm::is_contained(chips, chip))
      return fail("--chip names " + name + " twice");
    auto vendor = [](const ChipSpec *c) {
      return c->vendor == Vendor::Amd ? "AMD" : "NVIDIA";
    };
    if (!chips.empty() && chip->vendor != chips.front()->vendor)
      return fail("--chip: one bundle holds one vendor's chips; " +
                  chips.front()->name + " is " + vendor(chips.front()) +
                  "'s, " + name + " " + vendor(chip) + "'s");
    chips.push_back(chip);
  }
  if (chips.empty())
    return fail("expected a chip (--chip)");
  // A GPU takes the first variant it can run: the newest chip's first
  // (an sm_80 cubin runs on 8.6 too, but sm_86's tiles fit its memory).
  llvm::stable_sort(chips, [](const ChipSpec *a, const ChipSpec *b) {
    return a->vendor == Vendor::Nvidia && a->name > b->name;
  });
  const Profile *profile = lookupProfile(profileName);
  if (!profile || profileName != "inference")
    return fail("unknown --profile '" + profileName + "'; expected inference");
  if (outDir.empty() && !printOnly)
    return fail("expected an output directory (-o)");
  for (int64_t hint : sizeHints)
    if (hint <= 0)
      return fail("--size-hints: expected positive lengths, got " +
                  Twine(hint));
  if (allCandidates && (!tuningFiles.empty() || !sizeHints.empty()))
    return fail("--all-candidates times every tile for any length; "
                "--size-hints and --tuning choose among them: give one or "
                "the other");
  // Each chip's tuning file, checked against its table.
  std::vector<TuningFile> tunings;
  for (const std::string &path : tuningFiles) {
    SmallVector<std::string> warnings;
    llvm::Expected<TuningFile> file = loadTuningFile(path, warnings);
    if (!file)
      return fail(llvm::toString(file.takeError()));
    for (const std::string &w : warnings)
      llvm::WithColor::warning(llvm::errs(), "attn-bundle") << w << "\n";
    if (!llvm::is_contained(chips, file->chip))
      return fail("--tuning " + path + " is for " + file->chip->name +
                  ", which --chip does not name");
    for (const TuningFile &other : tunings)
      if (other.chip == file->chip)
        return fail("--tuning: " + other.path + " and " + path +
                    " are both for " + file->chip->name);
    tunings.push_back(std::move(*file));
  }

  std::vector<BundleKernel> kernels;
  CompileStats stats;
  for (const ChipSpec *chip : chips) {
    const TuningFile *tuning = nullptr;
    for (const TuningFile &t : tunings)
      if (t.chip == chip)
        tuning = &t;
    // A sweep times every tile; a user's file (--input) has its own.
    if (!tuning && builtinTuning && !allCandidates && input.empty()) {
      tuning = getBuiltinTuning(*chip);
      if (tuning && tuning->toolchain != getToolchainName())
        llvm::WithColor::note(llvm::errs(), "attn-bundle")
            << "the built-in " << chip->name << " tuning file was measured "
            << "with kernels of '" << tuning->toolchain << "', this is '"
            << getToolchainName() << "' (--builtin-tuning=false ignores it)\n";
    }
    FailureOr<std::vector<BundleKernel>> some =
        compileChip(registry, *chip, *profile, tuning, stats);
    if (failed(some))
      return 1;
    llvm::append_range(kernels, *some);
  }
  if (printOnly)
    return 0;
  if (llvm::Error e = writeBundle(outDir, kernels))
    return fail(llvm::toString(std::move(e)));
  size_t plans =
      llvm::count_if(kernels, [](const BundleKernel &k) { return k.isPlan; });
  llvm::outs() << "attn-bundle: wrote " << outDir
               << "/bundle.json: " << kernels.size() - plans << " variants";
  if (plans)
    llvm::outs() << ", " << plans << " backward plans";
  llvm::outs() << " (" << stats.compiled << " modules compiled, "
               << stats.cached << " from the cache)\n";
  return 0;
}
