//===- Bundle.h - The contents of a kernel bundle -------------------------===//
//
// What docs/BundleFormat.md (schema attn-bundle, versions 1 to 11) describes,
// read into plain structs, the kernel binaries included.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_BUNDLE_H
#define ATTN_RUNTIME_BUNDLE_H

#include "Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attn {

/// The newest bundle.json version this reader understands.
constexpr int kBundleSchemaVersion = 13;

/// Where a forward call's sequences live (attn.attention's serving forms);
/// kernels of the non-dense layouts take nine more arguments.
enum class SeqLayout { Dense, Varlen, KVCache, Paged };
const char *layoutName(SeqLayout layout);

/// One GPU function of the bundle: a forward variant's kernel or a stage of
/// a plan. Backends load and launch kernels; they do not know which is which.
struct Kernel {
  /// Index among all the bundle's kernels (variants first, then the stages
  /// of the plans in order): the module cache's key.
  int id = 0;
  std::string binary, entry;
  /// The chip it was compiled for (its variant's or plan's).
  std::string chip;
  int64_t dynamicSmem = 0;
  /// "variant 'x'" or "plan 'p', stage 's'": names the kernel in messages.
  std::string label;
  /// The cubin / code object, read at load time so that a missing file is
  /// reported by attn_bundle_load rather than by the first launch; shared
  /// by the kernels that name the same file.
  std::shared_ptr<const std::string> image;
  /// The kernel waits for the one launched before it (griddepcontrol.wait)
  /// before it touches memory that one writes, so it may start while that
  /// one runs (version 11; CUDA's programmatic dependent launch).
  bool programmaticLaunch = false;
};

/// When a variant or plan may run a call, beyond its fields.
struct Conditions {
  int alignBytes = 1, seqlenQMultiple = 1, seqlenKMultiple = 1;
  /// The sequence lengths a variant is for (a kernel tuned for a size
  /// range, as Inductor's size hints): optional, inclusive; the defaults
  /// hold for every length.
  int seqlenQMin = 0, seqlenQMax = 1 << 30, seqlenKMin = 0,
      seqlenKMax = 1 << 30;
  /// The bias's own alignment (kernels that read it one element at a time
  /// say so); 0 when the bundle does not say: then align_bytes holds.
  int biasAlignBytes = 0;
  /// The grid's fill of the GPU a variant was measured at (version 7): its
  /// workgroups (B x Hq x query blocks) at least this many per
  /// multiprocessor; 0: any grid.
  int gridMinBlocksPerSm = 0;
};

/// DeviceInfo::chip of a device that loads none of a bundle's chips.
constexpr const char *kNoBundleChip = "-";

/// What dispatch knows of the device a call runs on.
struct DeviceInfo {
  /// CUDA compute capability; 0 when unknown.
  int major = 0, minor = 0;
  /// HIP: the gfx name of the device, as far as the bundle tells it (the
  /// first of its chips whose code object the device loads), kNoBundleChip
  /// when it loads none of them; empty when unknown (then the loader
  /// reports a code object of another chip).
  std::string chip;
  /// Dynamic shared memory (LDS) a workgroup may have; 0 when unknown.
  int64_t sharedMemory = 0;
  /// Multiprocessors (SMs, CUs); 0 when unknown.
  int multiprocessors = 0;
  /// Whether the backend can encode CUDA tensor maps (the driver has
  /// cuTensorMapEncodeTiled); false when unknown.
  bool tensorMaps = false;
  /// Whether the backend launches a Kernel::programmaticLaunch kernel while
  /// the one before it runs (CUDA: cuLaunchKernelEx, compute capability
  /// 9.0 or later, not turned off by ATTN_PROGRAMMATIC_LAUNCH=0).
  bool programmaticLaunch = false;
};

/// Why a kernel for `chip` (CUDA: sm_<major><minor>[a|f]) cannot run on a
/// device of compute capability major.minor, or "" when it can: a cubin runs
/// on its own major with an equal or higher minor, an arch-specific one
/// (sm_90a) on exactly its version.
std::string whyNotChip(const std::string &chip, int major, int minor);

/// Why a kernel for `chip` needing `sharedMemory` bytes cannot run on
/// `device` (what is known of it), or "".
std::string whyNotDevice(const std::string &chip, int64_t sharedMemory,
                         const DeviceInfo &device);

/// The fields a call must match, common to forward variants and plans.
struct Signature {
  std::string name, config;
  /// The chip of its kernels: its own `chip` field (version 5, a bundle of
  /// several chips) or the bundle's.
  std::string chip;
  attn_dtype dtype = ATTN_DTYPE_F16;
  /// 0 (with maxHeadDim > 0): any head dim up to maxHeadDim, given to the
  /// kernel as two more arguments (bundle version 4).
  int headDim = 0, headDimV = 0, maxHeadDim = 0;

  /// Whether a head dim field (`fixed`: headDim or headDimV) serves `x`.
  bool servesHeadDim(int fixed, int x) const {
    return fixed ? fixed == x : x >= 1 && x <= maxHeadDim;
  }
  bool servesHeadDims(int d, int dv) const {
    return servesHeadDim(headDim, d) && servesHeadDim(headDimV, dv);
  }
  attn_mask mask = ATTN_MASK_NONE;
  attn_bias_kind bias = ATTN_BIAS_NONE;
  bool softcap = false;
  /// Dropout (version 6): five more kernel arguments (forward), three more
  /// (each stage of a plan).
  bool dropout = false;
  Conditions conditions;
};

struct Variant : Signature {
  int blockM = 0, threads = 0;
  SeqLayout layout = SeqLayout::Dense;
  Kernel kernel;
  /// KV-cache variants: the split-KV combine kernel (same binary, grid (Sq,
  /// Hq, B) of combineThreads); empty entry when the variant cannot split.
  Kernel combine;
  int combineThreads = 0;
  /// Keys per block: splits are whole blocks.
  int blockN = 64;
  /// Rows are (query, head) pairs of a GQA group: block_m rows cover
  /// block_m / G queries of G heads, and grid y runs over heads_kv.
  bool packGQA = false;
  /// ABI attn-fwd-v2 (version 9): the kernel takes the q, k and v tensor
  /// maps (TensorMaps.h) after its attn-fwd-v1 arguments.
  bool tensorMaps = false;
  /// A persistent grid (version 10): workgroups walk the (query block,
  /// head, batch) tiles, so the launch is min(tiles, multiprocessors) wide.
  bool persistent = false;
  bool canSplit() const { return !combine.entry.empty(); }
};

/// The sizes a plan's grids and workspace buffers are written in. The bias_*
/// dims are the extents of the summed bias gradient: 1 on a dimension dbias
/// is summed over (stride 0 on a dimension of size > 1), else the full size;
/// all 0 when the call sums over no dimension (dbias is written directly)
/// or has no bias gradient.
enum class Dim {
  Batch,
  HeadsQ,
  HeadsKv,
  SeqlenQ,
  SeqlenK,
  HeadDim,
  HeadDimV,
  BiasBatch,
  BiasHeads,
  BiasSeqlenQ,
  BiasSeqlenK,
  /// 1 when dbias is summed over some dimension, else 0 (version 8).
  BiasSummed,
  /// Sq rounded up to a multiple of 64: dq_accum in blocks of 64 query rows
  /// (version 12).
  SeqlenQ64,
  /// D rounded up to a multiple of 64: dq_accum's 64-column units where D
  /// is not a multiple of 64 (version 13).
  HeadDim64,
};
constexpr int kNumDims = int(Dim::HeadDim64) + 1;
/// "batch", "heads_q", ...: the names bundle.json uses.
const char *dimName(Dim dim);

/// One grid extent: ceil(dim / block), or a constant.
struct Extent {
  bool isConstant = false;
  Dim dim = Dim::Batch;
  int64_t block = 1, value = 1;
};

/// A temporary buffer of a plan, in its workspace (dense, row-major).
struct WorkspaceBuffer {
  std::string name;
  /// Bytes per element.
  int elementSize = 4;
  std::vector<Dim> dims;
};

struct Stage {
  std::string name;
  Extent grid[3];
  int threads = 0;
  Kernel kernel;
};

/// An op lowered to several kernels launched in order on one stream, with
/// workspace buffers between them.
struct Plan : Signature {
  bool biasGrad = false;
  /// No atomics: the result is bit-reproducible.
  bool deterministic = false;
  std::vector<WorkspaceBuffer> workspace;
  std::vector<Stage> stages;
};

struct BundleInfo {
  std::string dir;
  int version = 1;
  attn_platform platform = ATTN_PLATFORM_CUDA;
  std::string chip;
  std::vector<Variant> variants;
  std::vector<Plan> plans;
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
