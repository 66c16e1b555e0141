//===- Bundle.h - The contents of a kernel bundle -------------------------===//
//
// What docs/BundleFormat.md (schema attn-bundle, version 1) describes, read
// into plain structs, the kernel binaries included.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_BUNDLE_H
#define ATTN_RUNTIME_BUNDLE_H

#include "Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

/// The newest bundle.json version this reader understands.
constexpr int kBundleSchemaVersion = 1;

struct Variant {
  std::string name, binary, entry, config;
  attn_dtype dtype = ATTN_DTYPE_F16;
  int headDim = 0, headDimV = 0;
  attn_mask mask = ATTN_MASK_NONE;
  attn_bias_kind bias = ATTN_BIAS_NONE;
  bool softcap = false;
  int blockM = 0, threads = 0;
  int64_t dynamicSmem = 0;
  int alignBytes = 1, seqlenQMultiple = 1, seqlenKMultiple = 1;
  /// The bias's own alignment (kernels that read it one element at a time
  /// say so); 0 when the bundle does not say: then align_bytes holds.
  int biasAlignBytes = 0;
  /// The cubin / code object, read at load time so that a missing file is
  /// reported by attn_bundle_load rather than by the first launch.
  std::string image;
};

struct BundleInfo {
  std::string dir;
  attn_platform platform = ATTN_PLATFORM_CUDA;
  std::string chip;
  std::vector<Variant> variants;
};

/// Parses bundle.json text. Binaries are read from `dir` when `readBinaries`.
Status parseBundle(const std::string &jsonText, const std::string &dir,
                   bool readBinaries, BundleInfo &out);

/// Reads `dir`/bundle.json and the binaries it names.
Status loadBundle(const std::string &dir, BundleInfo &out);

const char *dtypeName(int dtype);
const char *maskName(int mask);
const char *biasName(int bias);
/// Bytes per element of a dtype; 0 for an unknown one.
int dtypeSize(int dtype);

} // namespace attn

#endif // ATTN_RUNTIME_BUNDLE_H
