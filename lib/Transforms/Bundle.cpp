//===- Bundle.cpp - kernel bundles as data ----------------------*- C++ -*-===//
//
// Reads the serialized kernels of a module from its `attn.kernels` metadata
// (which convert-attn-to-nvvm / convert-attn-to-rocdl leave) and writes a
// bundle directory (docs/BundleFormat.md, schema version 1).
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Transforms/Bundle.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
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
  v["conditions"] = std::move(conditions);
  return v;
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
    kernel.variant = getVariant(k, kernel.file);
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
  llvm::json::Array variants;
  for (const BundleKernel &k : kernels) {
    if (k.platform != first.platform || k.chip != first.chip)
      return llvm::createStringError(
          llvm::formatv("one bundle holds one chip; kernel '{0}' is for {1}, "
                        "the first for {2}",
                        k.variant.getString("name").value_or(k.file), k.chip,
                        first.chip)
              .str());
    SmallString<256> path(dir);
    llvm::sys::path::append(path, k.file);
    if (llvm::Error e = writeFile(path, k.binary))
      return e;
    variants.push_back(llvm::json::Object(k.variant));
  }
  llvm::json::Object bundle{
      {"schema", "attn-bundle"},    {"version", 1},
      {"platform", first.platform}, {"chip", first.chip},
      {"abi", "attn-fwd-v1"},       {"variants", std::move(variants)}};
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
                            {"binary", llvm::encodeBase64(kernel.binary)},
                            {"variant", llvm::json::Object(kernel.variant)}};
}

bool attn::fromJSON(const llvm::json::Value &value, BundleKernel &kernel,
                    llvm::json::Path path) {
  llvm::json::ObjectMapper o(value, path);
  std::string base64;
  if (!o || !o.map("platform", kernel.platform) ||
      !o.map("chip", kernel.chip) || !o.map("file", kernel.file) ||
      !o.map("binary", base64))
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
