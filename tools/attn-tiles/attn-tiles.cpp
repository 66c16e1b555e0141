//===- attn-tiles.cpp - print the tile tables and verdicts as JSON -------===//
//
//   attn-tiles --list-chips
//   attn-tiles --chip sm_90a                      chip spec and candidates
//   attn-tiles --chip sm_90a --dtype bf16 --head-dim 128 [--head-dim-v N]
//              [--seqlen-q N] [--seqlen-k N] [--size-hint N] [--mask causal]
//              [--bias]
//              [--direction backward] [--profile inference]
//                                                 verdicts, priority order
//   attn-tiles --chip sm_90a --family --profile inference [--head-dims 64,128]
//   attn-tiles --list-profiles | --dump-table
//   --table FILE reads another table instead of the embedded one.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Target/TileTable.h"
#include "AttnDialect/Target/TileTableJSON.h"
#include "AttnDialect/Target/Tuning.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;
namespace json = llvm::json;

static cl::OptionCategory category("attn-tiles options");
static cl::opt<bool> listChips("list-chips", cl::desc("List the chips"),
                               cl::cat(category));
static cl::opt<bool> listProfiles("list-profiles",
                                  cl::desc("List the named profiles"),
                                  cl::cat(category));
static cl::opt<bool> dumpTable("dump-table",
                               cl::desc("Print the raw embedded table"),
                               cl::cat(category));
static cl::opt<std::string>
    tableFile("table",
              cl::desc("Read this TileTables.json instead of the embedded one"),
              cl::value_desc("file"), cl::cat(category));
static cl::opt<std::string> chipName("chip", cl::desc("Chip name"),
                                     cl::cat(category));
static cl::opt<std::string> dtype("dtype", cl::desc("f16, bf16 or f32"),
                                  cl::cat(category));
static cl::opt<int64_t> headDim("head-dim", cl::desc("D"), cl::init(0),
                                cl::cat(category));
static cl::opt<int64_t> headDimV("head-dim-v", cl::desc("Dv (default D)"),
                                 cl::init(0), cl::cat(category));
static cl::opt<int64_t> seqQ("seqlen-q", cl::desc("Static Sq (0: dynamic)"),
                             cl::init(0), cl::cat(category));
static cl::opt<int64_t>
    sizeHint("size-hint",
             cl::desc("The length dynamic Sq and Sk are chosen for, as "
                      "attn-select-config's size-hint (0: none)"),
             cl::init(0), cl::cat(category));
static cl::opt<int64_t> seqK("seqlen-k", cl::desc("Static Sk (0: dynamic)"),
                             cl::init(0), cl::cat(category));
static cl::opt<std::string> mask("mask", cl::desc("Mask kind"),
                                 cl::init("none"), cl::cat(category));
static cl::opt<bool> bias("bias", cl::desc("The op has a bias"),
                          cl::cat(category));
static cl::opt<bool>
    biasGrad("bias-grad",
             cl::desc("The backward also computes the bias's gradient "
                      "(implies --bias)"),
             cl::cat(category));
static cl::opt<bool> lse("lse", cl::desc("The op returns lse"),
                         cl::cat(category));
static cl::opt<std::string>
    direction("direction",
              cl::desc("forward (default) or backward: which kernel the "
                       "problem asks for"),
              cl::init("forward"), cl::cat(category));
static cl::opt<bool> deterministic(
    "deterministic",
    cl::desc("The problem is a deterministic backward plan (dQ without "
             "atomics)"),
    cl::cat(category));
static cl::opt<bool>
    dropout("dropout",
            cl::desc("The problem drops (a deterministic backward plan's "
                     "form depends on it)"),
            cl::cat(category));
static cl::opt<bool> backward("backward",
                              cl::desc("Same as --direction backward"),
                              cl::cat(category));
static cl::opt<std::string> profileName("profile",
                                        cl::desc("Restrict to a profile"),
                                        cl::cat(category));
static cl::opt<bool> family("family",
                            cl::desc("Print the kernel family of --chip and "
                                     "--profile"),
                            cl::cat(category));
static cl::list<int64_t> headDims("head-dims", cl::CommaSeparated,
                                  cl::desc("Head dims of --family"),
                                  cl::cat(category));

static cl::opt<bool>
    validate("validate",
             cl::desc("Check the table (--table, or the embedded one) and "
                      "exit; the build runs this on the embedded table"),
             cl::cat(category));

static int fail(const llvm::Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "attn-tiles") << msg << "\n";
  return 1;
}

static void print(json::Value value) {
  llvm::outs() << llvm::formatv("{0:2}", value) << "\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "attn tile tables: chips, candidates and "
                              "verdicts as JSON\n");

  std::optional<TileTable> loaded;
  if (!tableFile.empty()) {
    auto buf = llvm::MemoryBuffer::getFile(tableFile);
    if (!buf)
      return fail("cannot read '" + tableFile +
                  "': " + buf.getError().message());
    llvm::Expected<TileTable> parsed = parseTileTable((*buf)->getBuffer());
    if (!parsed)
      return fail(tableFile + ": " + llvm::toString(parsed.takeError()));
    loaded = std::move(*parsed);
  }
  if (validate) {
    if (!loaded) {
      llvm::Expected<TileTable> parsed = parseTileTable(getTileTableJSON());
      if (!parsed)
        return fail("the embedded TileTables.json: " +
                    llvm::toString(parsed.takeError()));
      loaded = std::move(*parsed);
    }
    // The built-in tuning files are checked against the embedded table.
    if (tableFile.empty())
      if (llvm::Error e = checkBuiltinTunings())
        return fail(llvm::toString(std::move(e)));
    llvm::outs() << "ok: " << loaded->chips.size() << " chips, "
                 << loaded->profiles.size() << " profiles\n";
    return 0;
  }
  const TileTable &table = loaded ? *loaded : getTileTable();

  if (dumpTable) {
    llvm::outs() << getTileTableJSON();
    return 0;
  }
  if (listChips) {
    json::Array chips;
    for (const ChipSpec &c : table.chips)
      chips.push_back(json::Object{{"name", c.name},
                                   {"vendor", stringifyVendor(c.vendor)},
                                   {"reason", c.reason}});
    print(std::move(chips));
    return 0;
  }
  if (listProfiles) {
    json::Array profiles;
    for (const Profile &p : table.profiles)
      profiles.push_back(toJSON(p));
    print(std::move(profiles));
    return 0;
  }
  if (chipName.empty())
    return fail("expected --chip, --list-chips, --list-profiles or "
                "--dump-table");
  const ChipSpec *chip = table.lookupChip(chipName);
  if (!chip)
    return fail("unknown chip '" + chipName + "'; known chips: " +
                joinNames(llvm::ArrayRef<ChipSpec>(table.chips)));
  const Profile *profile = nullptr;
  if (!profileName.empty()) {
    profile = table.lookupProfile(profileName);
    if (!profile)
      return fail("unknown profile '" + profileName + "'");
  }
  if (family) {
    if (!profile)
      return fail("--family needs --profile");
    if (loaded)
      return fail("--family works on the embedded table only");
    llvm::SmallVector<int64_t> dims(headDims.begin(), headDims.end());
    if (dims.empty())
      dims = {64, 128, 256};
    print(familyToJSON(enumerateFamily(*chip, profile->name, dims)));
    return 0;
  }
  if (dtype.empty() && headDim == 0) {
    print(toJSON(*chip));
    return 0;
  }

  AttentionProblem problem;
  std::optional<ElementType> et = symbolizeElementType(dtype);
  if (!et)
    return fail("--dtype: expected f16, bf16 or f32, got '" + dtype + "'");
  problem.elementType = *et;
  if (headDim <= 0)
    return fail("--head-dim: expected a positive head dim");
  problem.headDim = headDim;
  problem.headDimV = headDimV > 0 ? headDimV : headDim;
  if (seqQ > 0)
    problem.seqQ = seqQ;
  if (seqK > 0)
    problem.seqK = seqK;
  if (sizeHint > 0)
    problem.seqHint = sizeHint;
  std::optional<MaskKind> maskKind = symbolizeMaskKind(mask);
  if (!maskKind)
    return fail("--mask: expected none, causal, causal_bottom_right or "
                "sliding_window, got '" +
                mask + "'");
  problem.mask = *maskKind;
  problem.hasBias = bias || biasGrad;
  problem.biasGrad = biasGrad;
  problem.wantsLse = lse;
  std::optional<Direction> dir = symbolizeDirection(direction);
  if (!dir)
    return fail("--direction: expected forward or backward, got '" + direction +
                "'");
  problem.direction = backward ? Direction::Backward : *dir;
  problem.deterministic = deterministic;
  problem.dropout = dropout;
  print(verdictsToJSON(*chip, problem,
                       evaluateCandidates(*chip, problem, profile), profile));
  return 0;
}
