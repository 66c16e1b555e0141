//===- WriteBundle.cpp - the attn-write-bundle pass -------------*- C++ -*-===//
//
// Writes the serialized kernels of a module and bundle.json
// (docs/BundleFormat.md, schema version 1) from the `attn.kernels` metadata
// that convert-attn-to-nvvm / convert-attn-to-rocdl leave on the module.
// Variants keep the order of that list: it is their priority order.
//
//===----------------------------------------------------------------------===//

#include "AttnDialect/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNWRITEBUNDLEPASS
#include "AttnDialect/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
StringRef getString(DictionaryAttr d, StringRef key) {
  auto s = d.getAs<StringAttr>(key);
  return s ? s.getValue() : StringRef();
}
int64_t getInt(DictionaryAttr d, StringRef key) {
  auto i = d.getAs<IntegerAttr>(key);
  return i ? i.getInt() : 0;
}

struct AttnWriteBundlePass
    : public attn::impl::AttnWriteBundlePassBase<AttnWriteBundlePass> {
  using Base::Base;

  LogicalResult writeFile(Operation *anchor, StringRef path, StringRef bytes) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
    if (ec)
      return anchor->emitError("attn-write-bundle: cannot write '")
             << path << "': " << ec.message();
    os << bytes;
    return success();
  }

  void runOnOperation() override {
    ModuleOp top = getOperation();
    if (dir.empty()) {
      top.emitError("attn-write-bundle: option 'dir' (output directory) is "
                    "required");
      return signalPassFailure();
    }
    auto kernels = top->getAttrOfType<ArrayAttr>("attn.kernels");
    if (!kernels || kernels.empty()) {
      top.emitError("attn-write-bundle: module has no 'attn.kernels' "
                    "metadata; run convert-attn-to-nvvm or "
                    "convert-attn-to-rocdl first");
      return signalPassFailure();
    }
    if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
      top.emitError("attn-write-bundle: cannot create directory '")
          << dir << "': " << ec.message();
      return signalPassFailure();
    }

    StringRef platform, chip;
    llvm::json::Array variants;
    for (Attribute a : kernels) {
      auto k = dyn_cast<DictionaryAttr>(a);
      if (!k) {
        top.emitError("attn-write-bundle: 'attn.kernels' entries must be "
                      "dictionaries");
        return signalPassFailure();
      }
      StringRef module = getString(k, "module");
      auto binary = top.lookupSymbol<gpu::BinaryOp>(module);
      if (!binary) {
        top.emitError("attn-write-bundle: kernel module @")
            << module << " is not a gpu.binary: run gpu-module-to-binary "
            << "(format=bin) first";
        return signalPassFailure();
      }
      auto object = dyn_cast<gpu::ObjectAttr>(binary.getObjects()[0]);
      if (!object || object.getFormat() != gpu::CompilationTarget::Binary) {
        binary.emitError("attn-write-bundle: gpu.binary @")
            << module << " holds no binary object (compile with format=bin)";
        return signalPassFailure();
      }
      if (platform.empty()) {
        platform = getString(k, "platform");
        chip = getString(k, "chip");
      } else if (platform != getString(k, "platform") ||
                 chip != getString(k, "chip")) {
        top.emitError("attn-write-bundle: one bundle holds one chip; "
                      "kernel '")
            << getString(k, "name") << "' is for " << getString(k, "chip")
            << ", the first for " << chip;
        return signalPassFailure();
      }
      std::string file =
          (module + (platform == "hip" ? ".hsaco" : ".cubin")).str();
      SmallString<256> path(dir);
      llvm::sys::path::append(path, file);
      if (failed(writeFile(top, path, object.getObject().getValue())))
        return signalPassFailure();

      llvm::json::Object v{
          {"name", getString(k, "name")},
          {"binary", file},
          {"entry", getString(k, "entry")},
          {"dtype", getString(k, "dtype")},
          {"head_dim", getInt(k, "head_dim")},
          {"head_dim_v", getInt(k, "head_dim_v")},
          {"mask", getString(k, "mask")},
          {"bias", getString(k, "bias")},
          {"softcap", k.getAs<BoolAttr>("softcap") &&
                          k.getAs<BoolAttr>("softcap").getValue()},
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
      variants.push_back(std::move(v));
    }

    llvm::json::Object bundle{
        {"schema", "attn-bundle"}, {"version", 1},
        {"platform", platform},    {"chip", chip},
        {"abi", "attn-fwd-v1"},    {"variants", std::move(variants)}};
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(bundle))) << "\n";
    SmallString<256> path(dir);
    llvm::sys::path::append(path, "bundle.json");
    if (failed(writeFile(top, path, text)))
      return signalPassFailure();
  }
};
} // namespace
