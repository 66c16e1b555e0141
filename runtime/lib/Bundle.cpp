//===- Bundle.cpp - Read bundle.json and the kernel binaries --------------===//

#include "Bundle.h"
#include "Json.h"

#include <cstdio>
#include <map>

using namespace attn;

const char *attn::dtypeName(int dtype) {
  switch (dtype) {
  case ATTN_DTYPE_F16:
    return "f16";
  case ATTN_DTYPE_BF16:
    return "bf16";
  case ATTN_DTYPE_F32:
    return "f32";
  }
  return "unknown";
}

const char *attn::layoutName(SeqLayout layout) {
  switch (layout) {
  case SeqLayout::Dense:
    return "dense";
  case SeqLayout::Varlen:
    return "varlen";
  case SeqLayout::KVCache:
    return "kvcache";
  case SeqLayout::Paged:
    return "paged";
  }
  return "unknown";
}

const char *attn::maskName(int mask) {
  switch (mask) {
  case ATTN_MASK_NONE:
    return "none";
  case ATTN_MASK_CAUSAL:
    return "causal";
  case ATTN_MASK_CAUSAL_BOTTOM_RIGHT:
    return "causal_bottom_right";
  case ATTN_MASK_SLIDING_WINDOW:
    return "sliding_window";
  }
  return "unknown";
}

const char *attn::biasName(int bias) {
  switch (bias) {
  case ATTN_BIAS_NONE:
    return "none";
  case ATTN_BIAS_SAME:
    return "same";
  case ATTN_BIAS_F32:
    return "f32";
  }
  return "unknown";
}

int attn::dtypeSize(int dtype) {
  switch (dtype) {
  case ATTN_DTYPE_F16:
  case ATTN_DTYPE_BF16:
    return 2;
  case ATTN_DTYPE_F32:
    return 4;
  }
  return 0;
}

/// Reads a whole file with stdio: the runtime uses no iostreams, whose
/// first use in a process loaded before torch made torch's own stream
/// output fault (bench/logs/2026-11-26-import-order-segv*.log).
static bool readFile(const std::string &path, std::string &out) {
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return false;
  out.clear();
  char chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), f)) > 0)
    out.append(chunk, n);
  bool ok = !std::ferror(f);
  std::fclose(f);
  return ok;
}

namespace {

/// Reads typed fields out of one JSON object, remembering the first problem
/// with a message that names the field and where it is ("variant 'x'").
class FieldReader {
public:
  FieldReader(const json::Value &object, std::string where)
      : object(object), where(std::move(where)) {}

  bool ok() const { return error.empty(); }
  const std::string &message() const { return error; }

  const json::Value *field(const char *name, json::Value::Kind kind,
                           bool required = true) {
    if (!ok())
      return nullptr;
    const json::Value *value = object.get(name);
    if (!value) {
      if (required)
        fail(std::string("missing field '") + name + "'");
      return nullptr;
    }
    if (value->kind != kind) {
      fail(std::string("field '") + name + "' must be " + json::kindName(kind) +
           ", got " + json::kindName(value->kind));
      return nullptr;
    }
    return value;
  }

  void string(const char *name, std::string &out, bool required = true) {
    if (const json::Value *v = field(name, json::Value::Kind::String, required))
      out = v->string;
  }

  void boolean(const char *name, bool &out, bool required = true) {
    if (const json::Value *v = field(name, json::Value::Kind::Bool, required))
      out = v->boolean;
  }

  template <typename IntT>
  void integer(const char *name, IntT &out, int64_t min, int64_t max,
               bool required = true) {
    const json::Value *v = field(name, json::Value::Kind::Number, required);
    if (!v)
      return;
    if (!v->isInteger || v->number < double(min) || v->number > double(max)) {
      fail(std::string("field '") + name + "' must be an integer in [" +
           std::to_string(min) + ", " + std::to_string(max) + "]");
      return;
    }
    out = IntT(v->number);
  }

  /// A string field that must be one of `names` (indexed by enum value).
  template <typename EnumT, size_t N>
  void enumeration(const char *name, EnumT &out,
                   const char *const (&names)[N]) {
    std::string text;
    string(name, text);
    if (!ok())
      return;
    std::string allowed;
    for (size_t i = 0; i < N; ++i) {
      if (text == names[i]) {
        out = EnumT(i);
        return;
      }
      allowed += (i ? ", " : "") + std::string("'") + names[i] + "'";
    }
    fail(std::string("field '") + name + "' is '" + text +
         "', expected one of " + allowed);
  }

  void fail(const std::string &what) {
    if (ok())
      error = where + ": " + what;
  }

private:
  const json::Value &object;
  std::string where;
  std::string error;
};

} // namespace

static Status badBundle(const std::string &dir, const std::string &what) {
  return Status::error(ATTN_STATUS_BAD_BUNDLE, "bundle '" + dir + "': " + what);
}

static bool isPowerOfTwo(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

const char *attn::dimName(Dim dim) {
  static const char *const kNames[kNumDims] = {
      "batch",       "heads_q",       "heads_kv",      "seqlen_q",
      "seqlen_k",    "head_dim",      "head_dim_v",    "bias_batch",
      "bias_heads",  "bias_seqlen_q", "bias_seqlen_k", "bias_summed",
      "seqlen_q_64", "head_dim_64"};
  return kNames[int(dim)];
}

namespace {

/// What the readers of one bundle.json share: where binaries are, and the
/// images already read (kernels naming one file share its bytes).
class BundleReader {
public:
  BundleReader(const std::string &dir, bool readBinaries, int version,
               attn_platform platform, const std::string &chip)
      : dir(dir), readBinaries(readBinaries), version(version),
        platform(platform), chip(chip) {}

  Status fail(const std::string &what) const { return badBundle(dir, what); }

  /// "<kind> 'name'" when the object has a string name, else "<kind> #i".
  static std::string describe(const json::Value &value, const char *kind,
                              size_t index) {
    if (const json::Value *name = value.get("name"))
      if (name->kind == json::Value::Kind::String)
        return std::string(kind) + " '" + name->string + "'";
    return std::string(kind) + " #" + std::to_string(index);
  }

  /// The conditions object of a variant or plan.
  Status readConditions(FieldReader &r, const std::string &where,
                        Conditions &out) {
    const json::Value *conds = r.field("conditions", json::Value::Kind::Object);
    if (!conds)
      return Status::ok();
    FieldReader c(*conds, where + ", conditions");
    c.integer("align_bytes", out.alignBytes, 1, 4096);
    c.integer("seqlen_q_multiple", out.seqlenQMultiple, 1, 1 << 20);
    c.integer("seqlen_k_multiple", out.seqlenKMultiple, 1, 1 << 20);
    c.integer("bias_align_bytes", out.biasAlignBytes, 1, 4096,
              /*required=*/false);
    c.integer("seqlen_q_min", out.seqlenQMin, 0, 1 << 30, /*required=*/false);
    c.integer("seqlen_q_max", out.seqlenQMax, 0, 1 << 30, /*required=*/false);
    c.integer("seqlen_k_min", out.seqlenKMin, 0, 1 << 30, /*required=*/false);
    c.integer("seqlen_k_max", out.seqlenKMax, 0, 1 << 30, /*required=*/false);
    c.integer("grid_min_blocks_per_sm", out.gridMinBlocksPerSm, 0, 1 << 20,
              /*required=*/false);
    if (c.ok() && out.gridMinBlocksPerSm && version < 7)
      c.fail("field 'grid_min_blocks_per_sm' needs version 7, the bundle is "
             "version " +
             std::to_string(version));
    if (c.ok() && (out.seqlenQMin > out.seqlenQMax ||
                   out.seqlenKMin > out.seqlenKMax))
      c.fail("an empty sequence-length range: seqlen_q in [" +
             std::to_string(out.seqlenQMin) + ", " +
             std::to_string(out.seqlenQMax) + "], seqlen_k in [" +
             std::to_string(out.seqlenKMin) + ", " +
             std::to_string(out.seqlenKMax) + "]");
    if (c.ok() && !isPowerOfTwo(out.alignBytes))
      c.fail("field 'align_bytes' must be a power of two, got " +
             std::to_string(out.alignBytes));
    if (c.ok() && out.biasAlignBytes && !isPowerOfTwo(out.biasAlignBytes))
      c.fail("field 'bias_align_bytes' must be a power of two, got " +
             std::to_string(out.biasAlignBytes));
    return c.ok() ? Status::ok() : fail(c.message());
  }

  /// The fields variants and plans share.
  Status readSignature(FieldReader &r, const std::string &where,
                       Signature &out) {
    static const char *const kDtypes[] = {"f16", "bf16", "f32"};
    static const char *const kMasks[] = {
        "none", "causal", "causal_bottom_right", "sliding_window"};
    static const char *const kBiases[] = {"none", "same", "f32"};
    r.string("name", out.name);
    r.enumeration("dtype", out.dtype, kDtypes);
    // head_dim 0: any up to max_head_dim (version 4).
    r.integer("max_head_dim", out.maxHeadDim, 1, 1024, /*required=*/false);
    int minDim = out.maxHeadDim ? 0 : 1;
    r.integer("head_dim", out.headDim, minDim, 1024);
    r.integer("head_dim_v", out.headDimV, minDim, 1024);
    if (r.ok() && out.maxHeadDim && version < 4)
      r.fail("field 'max_head_dim' needs version 4, the bundle is version " +
             std::to_string(version));
    if (r.ok() && out.maxHeadDim &&
        (out.headDim > out.maxHeadDim || out.headDimV > out.maxHeadDim))
      r.fail("head_dim and head_dim_v must be at most max_head_dim (" +
             std::to_string(out.maxHeadDim) + ")");
    r.enumeration("mask", out.mask, kMasks);
    r.enumeration("bias", out.bias, kBiases);
    r.boolean("softcap", out.softcap);
    r.boolean("dropout", out.dropout, /*required=*/false);
    if (r.ok() && out.dropout && version < 6)
      r.fail("field 'dropout' needs version 6, the bundle is version " +
             std::to_string(version));
    out.chip = chip;
    r.string("chip", out.chip, /*required=*/false);
    if (r.ok() && out.chip != chip && version < 5)
      r.fail("field 'chip' needs version 5, the bundle is version " +
             std::to_string(version));
    r.string("config", out.config, /*required=*/false);
    return readConditions(r, where, out.conditions);
  }

  /// A kernel's flag (version 11) saying it waits for the kernel launched
  /// before it, so that the runtime may launch it while that one runs.
  bool readProgrammaticLaunch(FieldReader &r, const char *field) {
    bool value = false;
    r.boolean(field, value, /*required=*/false);
    if (r.ok() && value && version < 11)
      r.fail(std::string("field '") + field +
             "' needs version 11, the bundle is version " +
             std::to_string(version));
    return value;
  }

  /// binary, entry and dynamic_smem of a kernel, and its image.
  Status readKernel(FieldReader &r, const std::string &where, Kernel &out) {
    r.string("binary", out.binary);
    r.string("entry", out.entry);
    r.integer("dynamic_smem", out.dynamicSmem, 0, int64_t(1) << 30);
    if (!r.ok())
      return fail(r.message());
    out.label = where;
    out.id = nextKernelId++;
    if (out.entry.empty())
      return fail(where + ": field 'entry' is empty");
    // Binaries live inside the bundle; refusing other paths keeps a bundle
    // relocatable and its reader from wandering the file system.
    if (out.binary.empty() || out.binary[0] == '/' ||
        out.binary.find("..") != std::string::npos)
      return fail(where +
                  ": field 'binary' must be a file name relative to the "
                  "bundle directory, got '" +
                  out.binary + "'");
    if (!readBinaries)
      return Status::ok();
    auto &image = images[out.binary];
    if (!image) {
      std::string path = dir + "/" + out.binary;
      auto bytes = std::make_shared<std::string>();
      if (!readFile(path, *bytes))
        return fail(where + ": cannot read binary '" + path + "'");
      if (bytes->empty())
        return fail(where + ": binary '" + path + "' is empty");
      image = std::move(bytes);
    }
    out.image = image;
    return Status::ok();
  }

  Status readVariant(const json::Value &value, size_t index, Variant &out) {
    if (value.kind != json::Value::Kind::Object)
      return fail("variant #" + std::to_string(index) + " must be an object");
    std::string where = describe(value, "variant", index);
    FieldReader r(value, where);
    Status s = readSignature(r, where, out);
    if (!s.isOk())
      return s;
    r.integer("block_m", out.blockM, 1, 1 << 16);
    r.integer("threads", out.threads, 1, 1024);
    std::string layout = "dense";
    r.string("layout", layout, /*required=*/false);
    bool known = false;
    for (SeqLayout l : {SeqLayout::Dense, SeqLayout::Varlen, SeqLayout::KVCache,
                        SeqLayout::Paged})
      if (layout == layoutName(l)) {
        out.layout = l;
        known = true;
      }
    if (r.ok() && !known)
      r.fail("field 'layout' is '" + layout +
             "', expected 'dense', 'varlen', 'kvcache' or 'paged'");
    if (r.ok() && out.layout != SeqLayout::Dense && version < 3)
      r.fail("field 'layout' needs version 3, the bundle is version " +
             std::to_string(version));
    if (r.ok() && out.layout != SeqLayout::Dense && out.maxHeadDim)
      r.fail("field 'max_head_dim' needs layout 'dense'");
    std::string combineEntry;
    r.string("combine_entry", combineEntry, /*required=*/false);
    bool cache =
        out.layout == SeqLayout::KVCache || out.layout == SeqLayout::Paged;
    if (r.ok() && !combineEntry.empty()) {
      if (!cache)
        r.fail("field 'combine_entry' (split-KV) needs layout 'kvcache' or "
               "'paged', the variant's is '" +
               layout + "'");
      r.integer("combine_threads", out.combineThreads, 1, 1024);
      r.integer("block_n", out.blockN, 1, 1 << 16);
    }
    bool combineEarly =
        readProgrammaticLaunch(r, "combine_programmatic_launch");
    if (r.ok() && combineEarly && combineEntry.empty())
      r.fail("field 'combine_programmatic_launch' needs field "
             "'combine_entry'");
    r.boolean("pack_gqa", out.packGQA, /*required=*/false);
    if (r.ok() && out.packGQA && !cache)
      r.fail("field 'pack_gqa' needs layout 'kvcache' or 'paged'");
    r.boolean("tensor_maps", out.tensorMaps, /*required=*/false);
    if (r.ok() && out.tensorMaps)
      checkTensorMaps(r, layout, out);
    r.boolean("persistent", out.persistent, /*required=*/false);
    if (r.ok() && out.persistent && (version < 10 || !out.tensorMaps))
      r.fail("field 'persistent' needs version 10 and 'tensor_maps' (the "
             "bundle is version " +
             std::to_string(version) + ")");
    Status s2 = readKernel(r, where, out.kernel);
    out.kernel.chip = out.chip;
    if (!s2.isOk() || combineEntry.empty())
      return s2;
    // The combine kernel lives in the variant's binary.
    out.combine = out.kernel;
    out.combine.entry = combineEntry;
    out.combine.dynamicSmem = 0;
    out.combine.label = where + " (split-KV combine)";
    out.combine.id = nextKernelId++;
    out.combine.programmaticLaunch = combineEarly;
    return Status::ok();
  }

  /// A variant with `tensor_maps` (ABI attn-fwd-v2): TMA describes dense
  /// f16/bf16 tensors on CUDA, with boxes of block_m and block_n rows.
  void checkTensorMaps(FieldReader &r, const std::string &layout,
                       Variant &out) {
    if (version < 9)
      return r.fail("field 'tensor_maps' needs version 9, the bundle is "
                    "version " +
                    std::to_string(version));
    if (platform != ATTN_PLATFORM_CUDA)
      return r.fail("field 'tensor_maps' needs platform 'cuda' (CUDA tensor "
                    "maps), the bundle's is 'hip'");
    if (out.layout != SeqLayout::Dense && out.layout != SeqLayout::Varlen)
      return r.fail("field 'tensor_maps' needs layout 'dense' or 'varlen', "
                    "the variant's is '" +
                    layout + "'");
    if (out.dtype == ATTN_DTYPE_F32)
      return r.fail("field 'tensor_maps' needs dtype 'f16' or 'bf16', the "
                    "variant's is 'f32'");
    // Both are TMA box dimensions (at most 256); the box is not guessed.
    r.integer("block_n", out.blockN, 1, 256);
    if (r.ok() && out.blockM > 256)
      r.fail("field 'tensor_maps' needs block_m at most 256 (a TMA box "
             "dimension), got " +
             std::to_string(out.blockM));
  }

  /// A dim symbol of a plan's grid or workspace.
  bool readDim(FieldReader &r, const std::string &text, const char *field,
               Dim &out) {
    std::string allowed;
    for (int i = 0; i < kNumDims; ++i) {
      if (text == dimName(Dim(i))) {
        out = Dim(i);
        int needs = out == Dim::BiasSummed  ? 8
                    : out == Dim::SeqlenQ64 ? 12
                    : out == Dim::HeadDim64 ? 13
                                            : 1;
        if (version >= needs)
          return true;
        r.fail(std::string("field '") + field + "' names dim '" + text +
               "', which needs version " + std::to_string(needs) +
               "; the bundle is version " + std::to_string(version));
        return false;
      }
      allowed += std::string(i ? ", " : "") + dimName(Dim(i));
    }
    r.fail(std::string("field '") + field + "' names unknown dim '" + text +
           "'; expected one of " + allowed);
    return false;
  }

  Status readWorkspace(const json::Value &value, const std::string &plan,
                       size_t index, WorkspaceBuffer &out) {
    std::string where = plan + ", " + describe(value, "workspace", index);
    if (value.kind != json::Value::Kind::Object)
      return fail(where + " must be an object");
    static const char *const kDtypes[] = {"f16", "bf16", "f32", "i32"};
    static const int kSizes[] = {2, 2, 4, 4};
    FieldReader r(value, where);
    int dtype = 0;
    r.string("name", out.name);
    r.enumeration("dtype", dtype, kDtypes);
    out.elementSize = kSizes[dtype];
    if (const json::Value *dims = r.field("dims", json::Value::Kind::Array))
      for (const json::Value &dim : dims->array) {
        if (dim.kind != json::Value::Kind::String) {
          r.fail("field 'dims' must hold strings, got " +
                 std::string(json::kindName(dim.kind)));
          break;
        }
        Dim d;
        if (!readDim(r, dim.string, "dims", d))
          break;
        out.dims.push_back(d);
      }
    if (r.ok() && out.name.empty())
      r.fail("field 'name' is empty");
    return r.ok() ? Status::ok() : fail(r.message());
  }

  Status readExtent(const json::Value &value, const std::string &where,
                    Extent &out) {
    if (value.kind != json::Value::Kind::Object)
      return fail(where + " must be an object, got " +
                  json::kindName(value.kind));
    FieldReader r(value, where);
    bool hasDim = value.get("dim") != nullptr;
    bool hasValue = value.get("value") != nullptr;
    if (hasDim == hasValue)
      return fail(where + ": needs exactly one of 'dim' and 'value'");
    if (hasValue) {
      out.isConstant = true;
      r.integer("value", out.value, 1, int64_t(1) << 31);
    } else {
      std::string dim;
      r.string("dim", dim);
      if (r.ok())
        readDim(r, dim, "dim", out.dim);
      r.integer("block", out.block, 1, int64_t(1) << 31, /*required=*/false);
    }
    return r.ok() ? Status::ok() : fail(r.message());
  }

  /// zeroes / reduces / reads: documentation of who touches which buffer;
  /// each name must be a buffer of the plan.
  void checkBufferNames(FieldReader &r, const char *field,
                        const std::vector<WorkspaceBuffer> &workspace) {
    const json::Value *names =
        r.field(field, json::Value::Kind::Array, /*required=*/false);
    if (!names)
      return;
    for (const json::Value &name : names->array) {
      bool known = false;
      for (const WorkspaceBuffer &buffer : workspace)
        known |= name.kind == json::Value::Kind::String &&
                 name.string == buffer.name;
      if (!known) {
        r.fail(std::string("field '") + field +
               "' must name workspace "
               "buffers of the plan, got " +
               (name.kind == json::Value::Kind::String
                    ? "'" + name.string + "'"
                    : std::string(json::kindName(name.kind))));
        return;
      }
    }
  }

  Status readStage(const json::Value &value, const std::string &plan,
                   size_t index, const std::vector<WorkspaceBuffer> &workspace,
                   Stage &out) {
    std::string where = plan + ", " + describe(value, "stage", index);
    if (value.kind != json::Value::Kind::Object)
      return fail(where + " must be an object");
    FieldReader r(value, where);
    r.string("name", out.name);
    r.integer("threads", out.threads, 1, 1024);
    if (const json::Value *grid = r.field("grid", json::Value::Kind::Array)) {
      if (grid->array.size() != 3)
        r.fail("field 'grid' must hold 3 extents (x, y, z), got " +
               std::to_string(grid->array.size()));
      for (size_t i = 0; r.ok() && i < 3; ++i) {
        Status s = readExtent(grid->array[i],
                              where + ", grid[" + std::to_string(i) + "]",
                              out.grid[i]);
        if (!s.isOk())
          return s;
      }
    }
    for (const char *field : {"zeroes", "reduces", "reads"})
      checkBufferNames(r, field, workspace);
    out.kernel.programmaticLaunch =
        readProgrammaticLaunch(r, "programmatic_launch");
    return readKernel(r, where, out.kernel);
  }

  Status readPlan(const json::Value &value, size_t index, Plan &out) {
    if (value.kind != json::Value::Kind::Object)
      return fail("plan #" + std::to_string(index) + " must be an object");
    std::string where = describe(value, "plan", index);
    FieldReader r(value, where);
    // Forward plans (split-KV) are planned but not launched by this runtime.
    static const char *const kOps[] = {"backward"};
    int op = 0;
    r.enumeration("op", op, kOps);
    std::string abi;
    r.string("abi", abi);
    if (r.ok() && abi != "attn-bwd-v1")
      r.fail("unknown abi '" + abi + "'; backward plans use 'attn-bwd-v1'");
    Status s = readSignature(r, where, out);
    if (!s.isOk())
      return s;
    if (r.ok() && out.maxHeadDim)
      r.fail("field 'max_head_dim': plans take static head dims");
    r.boolean("bias_grad", out.biasGrad);
    r.boolean("deterministic", out.deterministic);
    if (r.ok() && out.biasGrad && out.bias == ATTN_BIAS_NONE)
      r.fail("field 'bias_grad' is true but field 'bias' is 'none'");
    const json::Value *workspace =
        r.field("workspace", json::Value::Kind::Array);
    const json::Value *stages = r.field("stages", json::Value::Kind::Array);
    if (!r.ok())
      return fail(r.message());
    if (stages->array.empty())
      return fail(where + ": field 'stages' is empty");
    out.workspace.resize(workspace->array.size());
    for (size_t i = 0; i < workspace->array.size(); ++i) {
      s = readWorkspace(workspace->array[i], where, i, out.workspace[i]);
      if (!s.isOk())
        return s;
      for (size_t j = 0; j < i; ++j)
        if (out.workspace[j].name == out.workspace[i].name)
          return fail(where + ": workspace buffer '" + out.workspace[i].name +
                      "' is listed twice");
    }
    out.stages.resize(stages->array.size());
    for (size_t i = 0; i < stages->array.size(); ++i) {
      s = readStage(stages->array[i], where, i, out.workspace, out.stages[i]);
      if (!s.isOk())
        return s;
      out.stages[i].kernel.chip = out.chip;
    }
    return Status::ok();
  }

private:
  const std::string &dir;
  bool readBinaries;
  int version;
  attn_platform platform;
  /// The bundle's chip: its variants' and plans' unless they say another.
  std::string chip;
  /// Images already read, by file name.
  std::map<std::string, std::shared_ptr<const std::string>> images;
  int nextKernelId = 0;
};

} // namespace

Status attn::parseBundle(const std::string &jsonText, const std::string &dir,
                         bool readBinaries, BundleInfo &out) {
  json::Value root;
  std::string error;
  if (!json::parse(jsonText, root, error))
    return badBundle(dir, "bundle.json is not valid JSON: " + error);
  if (root.kind != json::Value::Kind::Object)
    return badBundle(dir, "bundle.json must hold an object");

  // Schema and version first: a file of another kind or a newer version is
  // reported as such, not as a list of fields this reader does not expect.
  FieldReader r(root, "bundle.json");
  std::string schema;
  r.string("schema", schema);
  if (r.ok() && schema != "attn-bundle")
    return badBundle(dir, "unknown schema '" + schema +
                              "'; this runtime reads 'attn-bundle' version " +
                              std::to_string(kBundleSchemaVersion));
  r.integer("version", out.version, 1, 1 << 30);
  if (r.ok() && out.version > kBundleSchemaVersion)
    return badBundle(dir, "schema 'attn-bundle' version " +
                              std::to_string(out.version) +
                              " is newer than this runtime reads (version " +
                              std::to_string(kBundleSchemaVersion) + ")");
  static const char *const kPlatforms[] = {"cuda", "hip"};
  r.enumeration("platform", out.platform, kPlatforms);
  r.string("chip", out.chip);
  std::string abi;
  r.string("abi", abi);
  if (r.ok() && abi != "attn-fwd-v1")
    r.fail("unknown abi '" + abi + "'; this runtime launches 'attn-fwd-v1'");
  const json::Value *variants = r.field("variants", json::Value::Kind::Array);
  const json::Value *plans =
      r.field("plans", json::Value::Kind::Array, /*required=*/false);
  if (r.ok() && plans && out.version < 2)
    r.fail("field 'plans' needs version 2, the bundle is version " +
           std::to_string(out.version));
  if (!r.ok())
    return badBundle(dir, r.message());
  if (variants->array.empty() && (!plans || plans->array.empty()))
    return badBundle(dir, "bundle.json: 'variants' is empty");

  out.dir = dir;
  BundleReader reader(dir, readBinaries, out.version, out.platform, out.chip);
  out.variants.clear();
  out.variants.resize(variants->array.size());
  for (size_t i = 0; i < variants->array.size(); ++i) {
    Status s = reader.readVariant(variants->array[i], i, out.variants[i]);
    if (!s.isOk())
      return s;
  }
  out.plans.clear();
  out.plans.resize(plans ? plans->array.size() : 0);
  for (size_t i = 0; i < out.plans.size(); ++i) {
    Status s = reader.readPlan(plans->array[i], i, out.plans[i]);
    if (!s.isOk())
      return s;
  }
  return Status::ok();
}

Status attn::loadBundle(const std::string &dir, BundleInfo &out) {
  std::string text;
  std::string path = dir + "/bundle.json";
  if (!readFile(path, text))
    return badBundle(dir, "cannot read '" + path + "'");
  return parseBundle(text, dir, /*readBinaries=*/true, out);
}

std::string attn::whyNotChip(const std::string &chip, int major, int minor) {
  unsigned number = 0;
  char suffix[8] = {0};
  if (std::sscanf(chip.c_str(), "sm_%u%7s", &number, suffix) < 1 ||
      number < 10 ||
      (suffix[0] && std::string(suffix) != "a" && std::string(suffix) != "f"))
    return "cannot read the chip '" + chip +
           "' (expected sm_<major><minor>[a|f])";
  int wantMajor = int(number / 10), wantMinor = int(number % 10);
  bool exact = std::string(suffix) == "a";
  if (major == wantMajor && (exact ? minor == wantMinor : minor >= wantMinor))
    return "";
  return chip + " needs a GPU of compute capability " +
         std::to_string(wantMajor) + "." + std::to_string(wantMinor) +
         (exact ? "" : " (or a later minor)") + "; this GPU is " +
         std::to_string(major) + "." + std::to_string(minor);
}

std::string attn::whyNotDevice(const std::string &chip, int64_t sharedMemory,
                               const DeviceInfo &device) {
  if (device.major > 0) {
    std::string why = whyNotChip(chip, device.major, device.minor);
    if (!why.empty())
      return why;
  }
  // A gfx code object runs on its own chip only.
  if (device.chip == kNoBundleChip)
    return chip + " code objects do not load on this GPU (nor do the "
                  "bundle's other chips')";
  if (!device.chip.empty() && chip != device.chip)
    return chip + " code objects do not load on this GPU (a " + device.chip +
           ")";
  if (device.sharedMemory > 0 && sharedMemory > device.sharedMemory)
    return "needs " + std::to_string(sharedMemory) +
           " bytes of shared memory; this GPU allows " +
           std::to_string(device.sharedMemory);
  return "";
}
