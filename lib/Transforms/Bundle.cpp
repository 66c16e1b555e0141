//===- Bundle.cpp - kernel bundles as data ----------------------*- C++ -*-===//
//
// Reads the serialized kernels of a module from its `attn.kernels` metadata
// (which convert-attn-to-nvvm / convert-attn-to-rocdl leave) and writes a
// bundle directory (docs/BundleFormat.md): forward variants, and backward
// plans (schema version 2) whose stage kernels share one code object.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Transforms/Bundle.h"
#include "AttnDialect/Target/Tuning.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Base64.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;

/// A copy: json::Value keeps a StringRef's bytes by reference, and the
/// kernels outlive the module.
static std::string getString(DictionaryAttr d, StringRef key) {
  auto s = d.getAs<StringAttr>(key);
  return s ? s.getValue().str() : std::string();
}

static int64_t getInt(DictionaryAttr d, StringRef key) {
  auto i = d.getAs<IntegerAttr>(key);
  return i ? i.getInt() : 0;
}

/// The bundle.json entry of a kernel's metadata dictionary.
static llvm::json::Object getVariant(DictionaryAttr k,
                                     const std::string &file) {
  auto softcap = k.getAs<BoolAttr>("softcap");
  llvm::json::Object v{{"name", getString(k, "name")},
                       {"binary", file},
                       {"entry", getString(k, "entry")},
                       {"dtype", getString(k, "dtype")},
                       {"head_dim", getInt(k, "head_dim")},
                       {"head_dim_v", getInt(k, "head_dim_v")},
                       {"mask", getString(k, "mask")},
                       {"bias", getString(k, "bias")},
                       {"softcap", softcap && softcap.getValue()},
                       {"block_m", getInt(k, "block_m")},
                       {"threads", getInt(k, "threads")},
                       {"dynamic_smem", getInt(k, "dynamic_smem")},
                       {"config", getString(k, "config")}};
  llvm::json::Object conditions{
      {"align_bytes", getInt(k, "align_bytes")},
      {"seqlen_q_multiple", getInt(k, "seqlen_q_multiple")},
      {"seqlen_k_multiple", getInt(k, "seqlen_k_multiple")}};
  if (k.get("bias_align_bytes"))
    conditions["bias_align_bytes"] = getInt(k, "bias_align_bytes");
  // A size class's kernel (attn-specialize-sizes): its lengths and grid.
  for (StringRef key : {"seqlen_q_min", "seqlen_q_max", "seqlen_k_min",
                        "seqlen_k_max", "grid_min_blocks_per_sm"})
    if (k.get(key))
      conditions[key] = getInt(k, key);
  v["conditions"] = std::move(conditions);
  // Only the serving layouts say so (schema version 3); absent is dense.
  if (k.get("layout"))
    v["layout"] = getString(k, "layout");
  // A KV-cache variant's split-KV combine kernel, in the same binary.
  if (k.get("combine_entry")) {
    v["combine_entry"] = getString(k, "combine_entry");
    v["combine_threads"] = getInt(k, "combine_threads");
    v["block_n"] = getInt(k, "block_n");
    // Schema version 11: the combine may start while the split kernel runs.
    if (auto pdl = k.getAs<BoolAttr>("combine_programmatic_launch");
        pdl && pdl.getValue())
      v["combine_programmatic_launch"] = true;
  }
  if (auto pack = k.getAs<BoolAttr>("pack_gqa"); pack && pack.getValue())
    v["pack_gqa"] = true;
  // Head dims given at run time (schema version 4): head_dim 0 up to this.
  if (k.get("max_head_dim"))
    v["max_head_dim"] = getInt(k, "max_head_dim");
  // Dropout (schema version 6): five more kernel arguments.
  if (auto drop = k.getAs<BoolAttr>("dropout"); drop && drop.getValue())
    v["dropout"] = true;
  // Tensor maps (schema version 9, ABI attn-fwd-v2): three more, whose
  // boxes are block_m (q) and block_n (k, v) rows.
  if (auto maps = k.getAs<BoolAttr>("tensor_maps"); maps && maps.getValue()) {
    v["tensor_maps"] = true;
    v["block_n"] = getInt(k, "block_n");
  }
  // A persistent grid (schema version 10): the runtime launches
  // min(tiles, multiprocessors) workgroups.
  if (auto p = k.getAs<BoolAttr>("persistent"); p && p.getValue())
    v["persistent"] = true;
  return v;
}

/// Metadata attributes as JSON: dictionaries, arrays, strings, integers and
/// booleans (all a plan's metadata holds).
static llvm::json::Value toJSONValue(Attribute a) {
  if (auto d = dyn_cast<DictionaryAttr>(a)) {
    llvm::json::Object o;
    for (NamedAttribute n : d)
      o[n.getName().getValue().str()] = toJSONValue(n.getValue());
    return o;
  }
  if (auto arr = dyn_cast<ArrayAttr>(a)) {
    llvm::json::Array out;
    for (Attribute e : arr)
      out.push_back(toJSONValue(e));
    return out;
  }
  if (auto s = dyn_cast<StringAttr>(a))
    return s.getValue().str();
  if (auto b = dyn_cast<BoolAttr>(a))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(a))
    return i.getInt();
  return nullptr;
}

/// The bundle.json `plans` entry of a plan's metadata dictionary: its
/// fields, conditions gathered as for variants, every stage naming `file`.
static llvm::json::Object getPlan(DictionaryAttr k, const std::string &file) {
  static constexpr StringLiteral kConditions[] = {
      "align_bytes", "bias_align_bytes", "seqlen_q_multiple",
      "seqlen_k_multiple"};
  llvm::json::Object plan, conditions;
  for (NamedAttribute n : k) {
    // An owned key: json::ObjectKey keeps a StringRef's bytes by reference.
    std::string key = n.getName().getValue().str();
    if (key == "kind" || key == "module" || key == "platform" || key == "chip")
      continue;
    if (llvm::is_contained(kConditions, key))
      conditions[key] = toJSONValue(n.getValue());
    else
      plan[key] = toJSONValue(n.getValue());
  }
  plan["conditions"] = std::move(conditions);
  if (llvm::json::Array *stages = plan.getArray("stages"))
    for (llvm::json::Value &stage : *stages)
      if (llvm::json::Object *o = stage.getAsObject())
        (*o)["binary"] = file;
  return plan;
}

FailureOr<std::vector<BundleKernel>> attn::getBundleKernels(ModuleOp top) {
  auto kernels = top->getAttrOfType<ArrayAttr>("attn.kernels");
  if (!kernels || kernels.empty())
    return top.emitError("attn-write-bundle: module has no 'attn.kernels' "
                         "metadata; run convert-attn-to-nvvm or "
                         "convert-attn-to-rocdl first");
  std::vector<BundleKernel> out;
  for (Attribute a : kernels) {
    auto k = dyn_cast<DictionaryAttr>(a);
    if (!k)
      return top.emitError("attn-write-bundle: 'attn.kernels' entries must "
                           "be dictionaries");
    std::string module = getString(k, "module");
    auto binary = top.lookupSymbol<gpu::BinaryOp>(module);
    if (!binary)
      return top.emitError("attn-write-bundle: kernel module @")
             << module << " is not a gpu.binary: run gpu-module-to-binary "
             << "(format=bin) first";
    auto object = dyn_cast<gpu::ObjectAttr>(binary.getObjects()[0]);
    if (!object || object.getFormat() != gpu::CompilationTarget::Binary)
      return binary.emitError("attn-write-bundle: gpu.binary @")
             << module << " holds no binary object (compile with format=bin)";
    BundleKernel kernel;
    kernel.platform = getString(k, "platform");
    kernel.chip = getString(k, "chip");
    kernel.file = module + (kernel.platform == "hip" ? ".hsaco" : ".cubin");
    kernel.binary = object.getObject().getValue();
    kernel.isPlan = getString(k, "kind") == "plan";
    kernel.variant =
        kernel.isPlan ? getPlan(k, kernel.file) : getVariant(k, kernel.file);
    out.push_back(std::move(kernel));
  }
  return out;
}

static llvm::Error writeFile(StringRef path, StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (!ec) {
    os << bytes;
    os.close();
    ec = os.error();
  }
  if (ec)
    return llvm::createStringError(ec, "cannot write '%s': %s",
                                   path.str().c_str(), ec.message().c_str());
  return llvm::Error::success();
}

llvm::Error attn::createBundleDirectory(StringRef dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create directory '%s': %s",
                                   dir.str().c_str(), ec.message().c_str());
  return llvm::Error::success();
}

llvm::Error attn::writeBundle(StringRef dir, ArrayRef<BundleKernel> kernels) {
  if (kernels.empty())
    return llvm::createStringError("no kernels to write to '%s'",
                                   dir.str().c_str());
  if (llvm::Error e = createBundleDirectory(dir))
    return e;
  const BundleKernel &first = kernels.front();
  // Several chips (of one platform): each kernel's binary goes to a
  // directory of its chip and its entry says the chip (version 5).
  bool multiChip = llvm::any_of(
      kernels, [&](const BundleKernel &k) { return k.chip != first.chip; });
  llvm::json::Array variants, plans;
  llvm::StringSet<> files;
  for (const BundleKernel &k : kernels) {
    if (k.platform != first.platform)
      return llvm::createStringError(
          llvm::formatv("one bundle holds one platform; kernel '{0}' is for "
                        "{1}, the first for {2}",
                        k.variant.getString("name").value_or(k.file),
                        k.platform, first.platform)
              .str());
    std::string file = multiChip ? k.chip + "/" + k.file : k.file;
    // Two kernels of one name would overwrite each other's binary.
    if (!files.insert(file).second)
      return llvm::createStringError(
          llvm::formatv("two kernels are named '{0}'; a bundle holds one "
                        "binary per name",
                        file)
              .str());
    SmallString<256> path(dir);
    llvm::sys::path::append(path, file);
    if (llvm::Error e =
            createBundleDirectory(llvm::sys::path::parent_path(path)))
      return e;
    if (llvm::Error e = writeFile(path, k.binary))
      return e;
    llvm::json::Object entry(k.variant);
    if (multiChip) {
      entry["chip"] = k.chip;
      if (k.isPlan) {
        if (llvm::json::Array *stages = entry.getArray("stages"))
          for (llvm::json::Value &stage : *stages)
            if (llvm::json::Object *o = stage.getAsObject())
              (*o)["binary"] = file;
      } else {
        entry["binary"] = file;
      }
    }
    (k.isPlan ? plans : variants).push_back(std::move(entry));
  }
  // Version 2 adds plans, version 3 the serving layouts, version 4 the
  // variants for head dims given at run time, version 5 several chips,
  // version 6 dropout, version 7 the grid-fill condition (8 to 11 below); a
  // bundle without them stays readable by older readers.
  bool hasPlans = !plans.empty();
  auto any = [&](StringRef field) {
    return llvm::any_of(variants, [&](const llvm::json::Value &v) {
      return v.getAsObject()->get(field) != nullptr;
    });
  };
  bool dropout =
      any("dropout") || llvm::any_of(plans, [](const llvm::json::Value &p) {
        return p.getAsObject()->get("dropout") != nullptr;
      });
  bool gridFill = llvm::any_of(variants, [](const llvm::json::Value &v) {
    const llvm::json::Object *c = v.getAsObject()->getObject("conditions");
    return c && c->get("grid_min_blocks_per_sm");
  });
  auto anyWorkspaceDim = [&](llvm::StringRef name) {
    return llvm::any_of(plans, [&](const llvm::json::Value &p) {
      const llvm::json::Array *ws = p.getAsObject()->getArray("workspace");
      return ws && llvm::any_of(*ws, [&](const llvm::json::Value &w) {
               const llvm::json::Array *dims =
                   w.getAsObject()->getArray("dims");
               return dims &&
                      llvm::is_contained(*dims, llvm::json::Value(name));
             });
    });
  };
  // Version 8: the dim bias_summed (deterministic plans' dbias_full).
  bool biasSummed = anyWorkspaceDim("bias_summed");
  // Version 12: the dim seqlen_q_64 (dq_accum in blocks of 64 rows).
  bool rowBlocks = anyWorkspaceDim("seqlen_q_64");
  // Version 13: the dim head_dim_64 (dq_accum's units past a D that is not
  // a multiple of 64).
  bool paddedUnits = anyWorkspaceDim("head_dim_64");
  // Version 11: kernels launched while the kernel before them runs (a
  // split-KV variant's combine, a plan's stage).
  bool programmaticLaunch =
      any("combine_programmatic_launch") ||
      llvm::any_of(plans, [](const llvm::json::Value &p) {
        const llvm::json::Array *stages = p.getAsObject()->getArray("stages");
        return stages && llvm::any_of(*stages, [](const llvm::json::Value &s) {
                 const llvm::json::Object *o = s.getAsObject();
                 return o && o->get("programmatic_launch");
               });
      });
  // Version 9: variants with tensor maps (ABI attn-fwd-v2).
  // Version 10: persistent variants (their grid is the device's size).
  int64_t version = paddedUnits           ? 13
                    : rowBlocks           ? 12
                    : programmaticLaunch  ? 11
                    : any("persistent")   ? 10
                    : any("tensor_maps")  ? 9
                    : biasSummed          ? 8
                    : gridFill            ? 7
                    : dropout             ? 6
                    : multiChip           ? 5
                    : any("max_head_dim") ? 4
                    : any("layout")       ? 3
                    : hasPlans            ? 2
                                          : 1;
  llvm::json::Object bundle{
      {"schema", "attn-bundle"},        {"version", version},
      {"platform", first.platform},     {"chip", first.chip},
      {"abi", "attn-fwd-v1"},           {"variants", std::move(variants)},
      {"toolchain", getToolchainName()}};
  if (hasPlans)
    bundle["plans"] = std::move(plans);
  SmallString<256> path(dir);
  llvm::sys::path::append(path, "bundle.json");
  return writeFile(
      path,
      llvm::formatv("{0:2}\n", llvm::json::Value(std::move(bundle))).str());
}

llvm::json::Value attn::toJSON(const BundleKernel &kernel) {
  return llvm::json::Object{{"platform", kernel.platform},
                            {"chip", kernel.chip},
                            {"file", kernel.file},
                            {"plan", kernel.isPlan},
                            {"binary", llvm::encodeBase64(kernel.binary)},
                            {"variant", llvm::json::Object(kernel.variant)}};
}

bool attn::fromJSON(const llvm::json::Value &value, BundleKernel &kernel,
                    llvm::json::Path path) {
  llvm::json::ObjectMapper o(value, path);
  std::string base64;
  if (!o || !o.map("platform", kernel.platform) ||
      !o.map("chip", kernel.chip) || !o.map("file", kernel.file) ||
      !o.map("binary", base64) || !o.mapOptional("plan", kernel.isPlan))
    return false;
  std::vector<char> bytes;
  if (llvm::Error e = llvm::decodeBase64(base64, bytes)) {
    llvm::consumeError(std::move(e));
    path.field("binary").report("expected base64");
    return false;
  }
  kernel.binary.assign(bytes.begin(), bytes.end());
  const llvm::json::Object *variant = value.getAsObject()->getObject("variant");
  if (!variant) {
    path.field("variant").report("expected an object");
    return false;
  }
  kernel.variant = *variant;
  return true;
}
