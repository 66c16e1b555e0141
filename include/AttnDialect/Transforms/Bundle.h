//===- Bundle.h - kernel bundles as data ------------------------*- C++ -*-===//
//
// The kernels of a bundle (docs/BundleFormat.md) apart from any MLIR context:
// the attn-write-bundle pass collects them from one module, attn-bundle from
// many modules compiled in parallel (and from its cache), and both write the
// directory with writeBundle.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNDIALECT_TRANSFORMS_BUNDLE_H
#define ATTNDIALECT_TRANSFORMS_BUNDLE_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
namespace attn {

/// One serialized kernel and its bundle.json entry.
struct BundleKernel {
  /// "cuda" or "hip", and the chip: a bundle holds one of each.
  std::string platform;
  std::string chip;
  /// The code object's file name inside the bundle directory.
  std::string file;
  /// The code object (cubin or hsaco).
  std::string binary;
  /// The `variants` entry of bundle.json, or with `isPlan` its `plans`
  /// entry (whose stages all name `file`).
  llvm::json::Object variant;
  bool isPlan = false;
};

/// The kernels of `module`, in the order of its `attn.kernels` metadata (the
/// priority order), each taken from the gpu.binary the metadata names.
/// Emits an error on the module and fails when the metadata is missing or a
/// kernel was not serialized to a binary.
FailureOr<std::vector<BundleKernel>> getBundleKernels(ModuleOp module);

/// Creates `dir` and its parents, or says why not.
llvm::Error createBundleDirectory(llvm::StringRef dir);

/// Writes `kernels` (in priority order) and bundle.json into `dir`, which is
/// created if needed: schema version 1, or 2 when a plan is among them. Fails,
/// naming the kernel, when the kernels are for several chips.
llvm::Error writeBundle(llvm::StringRef dir, ArrayRef<BundleKernel> kernels);

/// The JSON form of a kernel (the code object base64-encoded), and back: what
/// attn-bundle's cache stores.
llvm::json::Value toJSON(const BundleKernel &kernel);
bool fromJSON(const llvm::json::Value &value, BundleKernel &kernel,
              llvm::json::Path path);

} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_TRANSFORMS_BUNDLE_H
