//===- attn-runtime-probe.cpp - Drive the runtime's C API from lit tests --===//
//
// Loads a bundle and runs attn_select_variant / attn_forward, or
// attn_select_plan / attn_backward_workspace_size / attn_backward, on a call
// described by key=value arguments, with made-up device pointers: enough to
// test parsing, dispatch, validation and the "no driver" paths without a GPU
// (and, with the fake drivers, the launches). Prints "error: <status>:
// <message>" and exits 1 on failure.
//
//===----------------------------------------------------------------------===//

#include "attn_runtime.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

int usage() {
  std::fprintf(
      stderr,
      "usage: attn-runtime-probe load DIR\n"
      "       attn-runtime-probe select|forward DIR [key=value...]\n"
      "       attn-runtime-probe threads|forward-threads DIR [key=value...]\n"
      "       attn-runtime-probe select-plan|workspace|backward DIR "
      "[key=value...]\n"
      "       attn-runtime-probe api-nulls\n"
      "keys: dtype d dv mask bias softcap b hq hkv sq sk scale wl wr\n"
      "      dropout=P seed=S doff=O (dropout_p, seed, offset)\n"
      "      lse=0|1 (forward) dbias=0|1 det=0|1 ws=BYTES (backward)\n"
      "      null=NAME offset=NAME:BYTES alias=NAME:NAME NAME_stride=a,b,c,d\n"
      "      layout=varlen|kvcache|paged maxsq=N page=N pages=N tstride=N\n"
      "      splits=N (0: the runtime's choice) ws=BYTES (forward split-KV)\n"
      "      repeat=N (forward: N calls in a row)\n"
      "      (forward serving forms: fake index arrays, sq/sk as the op's)\n"
      "names: q k v o lse bias do dq dk dv dbias workspace\n");
  return 2;
}

int fail(attn_status status) {
  std::printf("error: %s: %s\n", attn_status_name(status), attn_last_error());
  return 1;
}

bool parseStrides(const std::string &text, int64_t *out, int n) {
  const char *p = text.c_str();
  for (int i = 0; i < n; ++i) {
    char *end = nullptr;
    out[i] = std::strtoll(p, &end, 10);
    if (end == p || (i + 1 < n && *end != ','))
      return false;
    p = end + 1;
  }
  return true;
}

/// The tensors of a call, forward and backward, in the order of their fake
/// addresses.
constexpr const char *kPointers[] = {"q",   "k",    "v",     "o",
                                     "lse", "bias", "do",    "dq",
                                     "dk",  "dv",   "dbias", "workspace"};
constexpr int kNumPointers = sizeof(kPointers) / sizeof(kPointers[0]);

int lookup(const std::string &text, std::initializer_list<const char *> names) {
  int i = 0;
  for (const char *name : names) {
    if (text == name)
      return i;
    ++i;
  }
  return -1;
}

/// A call described by key=value arguments, forward or backward. Pointers
/// are fake, 4 GiB apart (so they never overlap), 256-byte aligned; strides
/// default to contiguous [B, H, S, D].
struct CallSpec {
  int32_t batch = 1, headsQ = 1, headsKv = 1, seqlenQ = 128, seqlenK = 128;
  int32_t headDim = 128, headDimV = 128;
  int32_t dtype = ATTN_DTYPE_BF16, mask = ATTN_MASK_NONE,
          biasKind = ATTN_BIAS_NONE;
  float scale = 0.125f, softcap = 0;
  /// dropout=P seed=S doff=O.
  float dropoutP = 0;
  uint64_t dropoutSeed = 0;
  uint32_t dropoutOffset = 0;
  int32_t windowLeft = -1, windowRight = -1;
  bool lse = false, dbias = false, deterministic = false;
  /// The serving form of a forward call: 0 dense, 1 varlen, 2 kvcache, 3
  /// paged, with its scalar fields.
  int layout = 0;
  int32_t maxSeqlenQ = 0, pageSize = 0, numPages = 0, numSplits = 0;
  int64_t tableStride = 0;
  /// workspace_size; < 0: what attn_backward_workspace_size says.
  long long workspaceSize = -1;
  /// forward: the call made this many times (caches must hit).
  int repeat = 1;
  /// force=NAME: attn_bundle_force_variant before the call ("" clears).
  bool hasForce = false;
  std::string force;
  uintptr_t addr[kNumPointers];
  int64_t strides[kNumPointers][4] = {};
};

/// Where `name` is in kPointers, or -1.
int pointerIndex(const std::string &name) {
  for (int i = 0; i < kNumPointers; ++i)
    if (name == kPointers[i])
      return i;
  return -1;
}

bool parseSpec(int argc, char **argv, CallSpec &c) {
  std::vector<std::string> nulls;
  std::vector<std::pair<std::string, long>> offsets;
  std::vector<std::pair<std::string, std::string>> aliases;
  std::vector<std::pair<std::string, std::string>> strideOverrides;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    size_t eq = arg.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "bad argument '%s'\n", arg.c_str());
      return false;
    }
    std::string key = arg.substr(0, eq), value = arg.substr(eq + 1);
    long n = std::strtol(value.c_str(), nullptr, 10);
    size_t colon = value.find(':');
    if (key == "dtype")
      c.dtype = lookup(value, {"f16", "bf16", "f32"});
    else if (key == "mask")
      c.mask = lookup(
          value, {"none", "causal", "causal_bottom_right", "sliding_window"});
    else if (key == "bias")
      c.biasKind = lookup(value, {"none", "same", "f32"});
    else if (key == "d")
      c.headDim = c.headDimV = int32_t(n);
    else if (key == "dv")
      c.headDimV = int32_t(n);
    else if (key == "b")
      c.batch = int32_t(n);
    else if (key == "hq")
      c.headsQ = int32_t(n);
    else if (key == "hkv")
      c.headsKv = int32_t(n);
    else if (key == "sq")
      c.seqlenQ = int32_t(n);
    else if (key == "sk")
      c.seqlenK = int32_t(n);
    else if (key == "wl")
      c.windowLeft = int32_t(n);
    else if (key == "wr")
      c.windowRight = int32_t(n);
    else if (key == "scale")
      c.scale = std::strtof(value.c_str(), nullptr);
    else if (key == "softcap")
      c.softcap = std::strtof(value.c_str(), nullptr);
    else if (key == "dropout")
      c.dropoutP = std::strtof(value.c_str(), nullptr);
    else if (key == "seed")
      c.dropoutSeed = std::strtoull(value.c_str(), nullptr, 0);
    else if (key == "doff")
      c.dropoutOffset = std::strtoul(value.c_str(), nullptr, 0);
    else if (key == "lse")
      c.lse = n != 0;
    else if (key == "dbias")
      c.dbias = n != 0;
    else if (key == "det")
      c.deterministic = n != 0;
    else if (key == "layout")
      c.layout = lookup(value, {"dense", "varlen", "kvcache", "paged"});
    else if (key == "maxsq")
      c.maxSeqlenQ = int32_t(n);
    else if (key == "page")
      c.pageSize = int32_t(n);
    else if (key == "pages")
      c.numPages = int32_t(n);
    else if (key == "tstride")
      c.tableStride = n;
    else if (key == "splits")
      c.numSplits = int32_t(n);
    else if (key == "repeat")
      c.repeat = int(n);
    else if (key == "force") {
      c.hasForce = true;
      c.force = value;
    } else if (key == "ws")
      c.workspaceSize = std::strtoll(value.c_str(), nullptr, 10);
    else if (key == "null")
      nulls.push_back(value);
    else if (key == "offset" && colon != std::string::npos)
      offsets.push_back({value.substr(0, colon),
                         std::strtol(value.c_str() + colon + 1, nullptr, 10)});
    else if (key == "alias" && colon != std::string::npos)
      aliases.push_back({value.substr(0, colon), value.substr(colon + 1)});
    else if (key.size() > 7 && key.compare(key.size() - 7, 7, "_stride") == 0)
      strideOverrides.push_back({key.substr(0, key.size() - 7), value});
    else {
      std::fprintf(stderr, "unknown key '%s'\n", key.c_str());
      return false;
    }
  }

  auto contiguous = [&](const char *name, int64_t h, int64_t seq, int64_t d) {
    int64_t *s = c.strides[pointerIndex(name)];
    s[3] = 1;
    s[2] = d;
    s[1] = seq * d;
    s[0] = h * seq * d;
  };
  contiguous("q", c.headsQ, c.seqlenQ, c.headDim);
  contiguous("k", c.headsKv, c.seqlenK, c.headDim);
  contiguous("v", c.headsKv, c.seqlenK, c.headDimV);
  contiguous("o", c.headsQ, c.seqlenQ, c.headDimV);
  contiguous("do", c.headsQ, c.seqlenQ, c.headDimV);
  contiguous("dq", c.headsQ, c.seqlenQ, c.headDim);
  contiguous("dk", c.headsKv, c.seqlenK, c.headDim);
  contiguous("dv", c.headsKv, c.seqlenK, c.headDimV);
  contiguous("bias", c.headsQ, c.seqlenQ, c.seqlenK);
  int64_t *lse = c.strides[pointerIndex("lse")];
  lse[0] = int64_t(c.headsQ) * c.seqlenQ;
  lse[1] = c.seqlenQ;
  bool dbiasStrides = false;
  for (auto &[name, text] : strideOverrides) {
    int i = pointerIndex(name);
    if (i < 0 || !parseStrides(text, c.strides[i], name == "lse" ? 2 : 4)) {
      std::fprintf(stderr, "bad strides '%s=%s'\n", name.c_str(), text.c_str());
      return false;
    }
    dbiasStrides |= name == "dbias";
  }
  // dbias is summed where the bias broadcasts unless told otherwise.
  if (!dbiasStrides)
    std::memcpy(c.strides[pointerIndex("dbias")],
                c.strides[pointerIndex("bias")], sizeof(c.strides[0]));

  uintptr_t base = uintptr_t(0x7f0000000000ull);
  for (int i = 0; i < kNumPointers; ++i)
    c.addr[i] = base + uintptr_t(i) * 0x100000000ull;
  for (auto &[name, target] : aliases) {
    if (pointerIndex(name) < 0 || pointerIndex(target) < 0) {
      std::fprintf(stderr, "bad alias '%s:%s'\n", name.c_str(), target.c_str());
      return false;
    }
    c.addr[pointerIndex(name)] = c.addr[pointerIndex(target)];
  }
  for (auto &[name, bytes] : offsets)
    if (pointerIndex(name) >= 0)
      c.addr[pointerIndex(name)] += bytes;
  if (c.biasKind == ATTN_BIAS_NONE)
    c.addr[pointerIndex("bias")] = 0;
  if (!c.dbias)
    c.addr[pointerIndex("dbias")] = 0;
  for (const std::string &name : nulls)
    if (pointerIndex(name) >= 0)
      c.addr[pointerIndex(name)] = 0;
  return true;
}

template <typename T> T *pointer(const CallSpec &c, const char *name) {
  return reinterpret_cast<T *>(c.addr[pointerIndex(name)]);
}

void copyStrides(const CallSpec &c, const char *name, int64_t *out, int n = 4) {
  std::memcpy(out, c.strides[pointerIndex(name)], n * sizeof(int64_t));
}

/// The fields attn_fwd_params and attn_bwd_params share.
template <typename P> void fillCommon(const CallSpec &c, P &p) {
  std::memset(&p, 0, sizeof(p));
  p.batch = c.batch;
  p.heads_q = c.headsQ;
  p.heads_kv = c.headsKv;
  p.seqlen_q = c.seqlenQ;
  p.seqlen_k = c.seqlenK;
  p.head_dim = c.headDim;
  p.head_dim_v = c.headDimV;
  p.dtype = c.dtype;
  p.mask = c.mask;
  p.bias_kind = c.biasKind;
  p.scale = c.scale;
  p.softcap = c.softcap;
  p.dropout_p = c.dropoutP;
  p.dropout_seed = c.dropoutSeed;
  p.dropout_offset = c.dropoutOffset;
  p.window_left = c.windowLeft;
  p.window_right = c.windowRight;
  p.q = pointer<const void>(c, "q");
  p.k = pointer<const void>(c, "k");
  p.v = pointer<const void>(c, "v");
  p.bias = pointer<const void>(c, "bias");
  copyStrides(c, "q", p.q_stride);
  copyStrides(c, "k", p.k_stride);
  copyStrides(c, "v", p.v_stride);
  copyStrides(c, "o", p.o_stride);
  copyStrides(c, "lse", p.lse_stride, 2);
  copyStrides(c, "bias", p.bias_stride);
}

attn_fwd_params forwardParams(const CallSpec &c) {
  attn_fwd_params p;
  fillCommon(c, p);
  p.o = pointer<void>(c, "o");
  p.lse = c.lse ? pointer<float>(c, "lse") : nullptr;
  // Fake index arrays, 4-byte aligned, far from the tensors.
  auto array = [](int i) {
    return reinterpret_cast<const int32_t *>(0x600000000000ull + i * 0x1000);
  };
  if (c.layout == 1) {
    p.cu_seqlens_q = array(0);
    p.cu_seqlens_k = array(1);
  }
  if (c.layout >= 2)
    p.seqlens_k = array(2);
  if (c.layout == 3)
    p.block_table = array(3);
  // Passed whatever the layout, so that their checks can be tested.
  p.num_splits = c.numSplits;
  p.workspace = pointer<void>(c, "workspace");
  p.workspace_size =
      c.workspaceSize < 0 ? 0 : static_cast<size_t>(c.workspaceSize);
  p.max_seqlen_q = c.maxSeqlenQ;
  p.block_table_stride = c.tableStride;
  p.page_size = c.pageSize;
  p.num_pages = c.numPages;
  return p;
}

/// Backward calls always have lse (null=lse removes it).
attn_bwd_params backwardParams(const CallSpec &c) {
  attn_bwd_params p;
  fillCommon(c, p);
  p.o = pointer<const void>(c, "o");
  p.dout = pointer<const void>(c, "do");
  p.lse = pointer<const float>(c, "lse");
  p.dq = pointer<void>(c, "dq");
  p.dk = pointer<void>(c, "dk");
  p.dv = pointer<void>(c, "dv");
  p.dbias = pointer<void>(c, "dbias");
  p.workspace = pointer<void>(c, "workspace");
  p.workspace_size =
      c.workspaceSize < 0 ? 0 : static_cast<size_t>(c.workspaceSize);
  p.deterministic = c.deterministic;
  copyStrides(c, "do", p.do_stride);
  copyStrides(c, "dq", p.dq_stride);
  copyStrides(c, "dk", p.dk_stride);
  copyStrides(c, "dv", p.dv_stride);
  copyStrides(c, "dbias", p.dbias_stride);
  return p;
}

/// Every entry point with null arguments: each must return a status.
int apiNulls() {
  attn_bundle *bundle = nullptr;
  attn_fwd_params params;
  std::memset(&params, 0, sizeof(params));
  int index = 0;
  auto show = [](const char *what, attn_status s) {
    std::printf("%s: %s: %s\n", what, attn_status_name(s), attn_last_error());
  };
  show("load(null dir)", attn_bundle_load(nullptr, &bundle));
  show("load(null out)", attn_bundle_load("x", nullptr));
  show("load(missing dir)", attn_bundle_load("/nonexistent/bundle", &bundle));
  show("select(null bundle)", attn_select_variant(nullptr, &params, &index));
  show("forward(null bundle)", attn_forward(nullptr, &params));
  show("force(null bundle)", attn_bundle_force_variant(nullptr, "x"));
  attn_bundle_destroy(nullptr);
  std::printf("variant_count(null): %d\n", attn_bundle_variant_count(nullptr));
  std::printf("variant_name(null): %s\n",
              attn_bundle_variant_name(nullptr, 0) ? "non-null" : "null");
  std::printf("status_name(99): %s\n", attn_status_name(attn_status(99)));
  attn_bwd_params bwd;
  std::memset(&bwd, 0, sizeof(bwd));
  size_t bytes = 0;
  show("select_plan(null bundle)", attn_select_plan(nullptr, &bwd, &index));
  show("select_plan(null index)", attn_select_plan(nullptr, &bwd, nullptr));
  show("workspace_size(null params)",
       attn_backward_workspace_size(nullptr, nullptr, &bytes));
  show("workspace_size(null bytes)",
       attn_backward_workspace_size(nullptr, &bwd, nullptr));
  show("backward(null bundle)", attn_backward(nullptr, &bwd));
  std::printf("plan_count(null): %d\n", attn_bundle_plan_count(nullptr));
  std::printf("plan_name(null): %s\n",
              attn_bundle_plan_name(nullptr, 0) ? "non-null" : "null");
  std::printf("params size: %zu\n", attn_fwd_params_size());
  std::printf("bwd params size: %zu\n", attn_bwd_params_size());
  std::printf("api version: %d\n", attn_runtime_api_version());
  return 0;
}

/// Selects from several threads at once: each must see the same variant and
/// its own error message.
int threads(attn_bundle *bundle, const attn_fwd_params &params) {
  int expected = -1;
  attn_status first = attn_select_variant(bundle, &params, &expected);
  std::string firstError = attn_last_error();
  std::atomic<int> mismatches{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 8; ++t)
    pool.emplace_back([&, t] {
      attn_fwd_params bad = params;
      bad.batch = -t - 1;
      for (int i = 0; i < 200; ++i) {
        int index = -1;
        attn_status s = attn_select_variant(bundle, &params, &index);
        if (s != first || index != expected ||
            (s != ATTN_STATUS_SUCCESS && firstError != attn_last_error()))
          ++mismatches;
        s = attn_select_variant(bundle, &bad, &index);
        std::string want =
            "batch must be positive, got " + std::to_string(-t - 1);
        if (s != ATTN_STATUS_INVALID_ARGUMENT || want != attn_last_error())
          ++mismatches;
      }
    });
  for (std::thread &t : pool)
    t.join();
  std::printf("threads: %d mismatches\n", mismatches.load());
  return mismatches ? 1 : 0;
}

/// Launches from 8 threads, 4 times each: the module must be loaded once
/// and every launch succeed.
int forwardThreads(attn_bundle *bundle, const attn_fwd_params &params) {
  std::atomic<int> failures{0}, launched{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 8; ++t)
    pool.emplace_back([&] {
      for (int i = 0; i < 4; ++i) {
        if (attn_forward(bundle, &params) == ATTN_STATUS_SUCCESS)
          ++launched;
        else
          ++failures;
      }
    });
  for (std::thread &t : pool)
    t.join();
  std::printf("forward-threads: %d launched, %d failed\n", launched.load(),
              failures.load());
  return failures ? 1 : 0;
}

/// attn_select_plan, attn_backward_workspace_size and, for "backward",
/// attn_backward with that workspace size unless ws= says otherwise.
int backward(const std::string &command, attn_bundle *bundle,
             const CallSpec &spec) {
  attn_bwd_params params = backwardParams(spec);
  int index = -1;
  attn_status s = attn_select_plan(bundle, &params, &index);
  if (s != ATTN_STATUS_SUCCESS)
    return fail(s);
  std::printf("selected plan %d: %s\n", index,
              attn_bundle_plan_name(bundle, index));
  if (command == "select-plan")
    return 0;
  size_t bytes = 0;
  s = attn_backward_workspace_size(bundle, &params, &bytes);
  if (s != ATTN_STATUS_SUCCESS)
    return fail(s);
  std::printf("workspace: %zu bytes\n", bytes);
  if (command == "workspace")
    return 0;
  if (spec.workspaceSize < 0)
    params.workspace_size = bytes;
  s = attn_backward(bundle, &params);
  if (s != ATTN_STATUS_SUCCESS)
    return fail(s);
  std::printf("launched\n");
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    return usage();
  std::string command = argv[1];
  if (command == "api-nulls")
    return apiNulls();
  if (argc < 3)
    return usage();
  attn_bundle *bundle = nullptr;
  attn_status s = attn_bundle_load(argv[2], &bundle);
  if (s != ATTN_STATUS_SUCCESS)
    return fail(s);
  int rc = 0;
  CallSpec spec;
  if (command == "load") {
    std::printf("platform %s chip %s\n",
                attn_bundle_platform(bundle) == ATTN_PLATFORM_HIP ? "hip"
                                                                  : "cuda",
                attn_bundle_chip(bundle));
    for (int i = 0; i < attn_bundle_variant_count(bundle); ++i)
      std::printf("variant %d: %s\n", i, attn_bundle_variant_name(bundle, i));
    for (int i = 0; i < attn_bundle_plan_count(bundle); ++i)
      std::printf("plan %d: %s\n", i, attn_bundle_plan_name(bundle, i));
  } else if (!parseSpec(argc - 3, argv + 3, spec)) {
    rc = usage();
  } else if (spec.hasForce &&
             (s = attn_bundle_force_variant(bundle, spec.force.c_str())) !=
                 ATTN_STATUS_SUCCESS) {
    rc = fail(s);
  } else if (command == "select") {
    attn_fwd_params params = forwardParams(spec);
    int index = -1;
    s = attn_select_variant(bundle, &params, &index);
    if (s != ATTN_STATUS_SUCCESS)
      rc = fail(s);
    else
      std::printf("selected variant %d: %s\n", index,
                  attn_bundle_variant_name(bundle, index));
  } else if (command == "forward") {
    attn_fwd_params params = forwardParams(spec);
    // Split-KV: print the plan, and hand over the workspace it needs unless
    // ws= says otherwise.
    int splits = 1;
    size_t bytes = 0;
    if (params.seqlens_k) {
      s = attn_forward_workspace_size(bundle, &params, &splits, &bytes);
      if (s == ATTN_STATUS_SUCCESS)
        std::printf("splits %d workspace %zu bytes\n", splits, bytes);
      if (spec.workspaceSize < 0)
        params.workspace_size = bytes;
    }
    for (int i = 0; i < spec.repeat && rc == 0; ++i) {
      s = attn_forward(bundle, &params);
      if (s != ATTN_STATUS_SUCCESS)
        rc = fail(s);
      else
        std::printf("launched\n");
    }
  } else if (command == "threads") {
    rc = threads(bundle, forwardParams(spec));
  } else if (command == "forward-threads") {
    rc = forwardThreads(bundle, forwardParams(spec));
  } else if (command == "select-plan" || command == "workspace" ||
             command == "backward") {
    rc = backward(command, bundle, spec);
  } else {
    rc = usage();
  }
  attn_bundle_destroy(bundle);
  return rc;
}
