//===- Bundle.cpp - Read bundle.json and the kernel binaries --------------===//

#include "Bundle.h"
#include "Json.h"

#include <fstream>
#include <sstream>

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

static bool readFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad())
    return false;
  out = buffer.str();
  return true;
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

  void boolean(const char *name, bool &out) {
    if (const json::Value *v = field(name, json::Value::Kind::Bool))
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

static Status parseVariant(const json::Value &value, size_t index,
                           const std::string &dir, bool readBinaries,
                           Variant &out) {
  std::string where = "variant #" + std::to_string(index);
  if (value.kind != json::Value::Kind::Object)
    return badBundle(dir, where + " must be an object");
  if (const json::Value *name = value.get("name"))
    if (name->kind == json::Value::Kind::String)
      where = "variant '" + name->string + "'";

  static const char *const kDtypes[] = {"f16", "bf16", "f32"};
  static const char *const kMasks[] = {"none", "causal", "causal_bottom_right",
                                       "sliding_window"};
  static const char *const kBiases[] = {"none", "same", "f32"};
  FieldReader r(value, where);
  r.string("name", out.name);
  r.string("binary", out.binary);
  r.string("entry", out.entry);
  r.enumeration("dtype", out.dtype, kDtypes);
  r.integer("head_dim", out.headDim, 1, 1024);
  r.integer("head_dim_v", out.headDimV, 1, 1024);
  r.enumeration("mask", out.mask, kMasks);
  r.enumeration("bias", out.bias, kBiases);
  r.boolean("softcap", out.softcap);
  r.integer("block_m", out.blockM, 1, 1 << 16);
  r.integer("threads", out.threads, 1, 1024);
  r.integer("dynamic_smem", out.dynamicSmem, 0, int64_t(1) << 30);
  r.string("config", out.config, /*required=*/false);
  if (const json::Value *conds =
          r.field("conditions", json::Value::Kind::Object)) {
    FieldReader c(*conds, where + ", conditions");
    c.integer("align_bytes", out.alignBytes, 1, 4096);
    c.integer("seqlen_q_multiple", out.seqlenQMultiple, 1, 1 << 20);
    c.integer("seqlen_k_multiple", out.seqlenKMultiple, 1, 1 << 20);
    c.integer("bias_align_bytes", out.biasAlignBytes, 1, 4096,
              /*required=*/false);
    if (c.ok() && !isPowerOfTwo(out.alignBytes))
      c.fail("field 'align_bytes' must be a power of two, got " +
             std::to_string(out.alignBytes));
    if (c.ok() && out.biasAlignBytes && !isPowerOfTwo(out.biasAlignBytes))
      c.fail("field 'bias_align_bytes' must be a power of two, got " +
             std::to_string(out.biasAlignBytes));
    if (!c.ok())
      return badBundle(dir, c.message());
  }
  if (!r.ok())
    return badBundle(dir, r.message());
  if (out.entry.empty())
    return badBundle(dir, where + ": field 'entry' is empty");
  // Binaries live inside the bundle; refusing other paths keeps a bundle
  // relocatable and its reader from wandering the file system.
  if (out.binary.empty() || out.binary[0] == '/' ||
      out.binary.find("..") != std::string::npos)
    return badBundle(dir, where +
                              ": field 'binary' must be a file name "
                              "relative to the bundle directory, got '" +
                              out.binary + "'");
  if (readBinaries) {
    std::string path = dir + "/" + out.binary;
    if (!readFile(path, out.image))
      return badBundle(dir, where + ": cannot read binary '" + path + "'");
    if (out.image.empty())
      return badBundle(dir, where + ": binary '" + path + "' is empty");
  }
  return Status::ok();
}

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
  int version = 0;
  r.integer("version", version, 1, 1 << 30);
  if (r.ok() && version > kBundleSchemaVersion)
    return badBundle(dir, "schema 'attn-bundle' version " +
                              std::to_string(version) +
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
  if (!r.ok())
    return badBundle(dir, r.message());
  if (variants->array.empty())
    return badBundle(dir, "bundle.json: 'variants' is empty");

  out.dir = dir;
  out.variants.clear();
  out.variants.resize(variants->array.size());
  for (size_t i = 0; i < variants->array.size(); ++i) {
    Status s =
        parseVariant(variants->array[i], i, dir, readBinaries, out.variants[i]);
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
