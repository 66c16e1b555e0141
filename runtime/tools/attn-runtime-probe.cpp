//===- attn-runtime-probe.cpp - Drive the runtime's C API from lit tests --===//
//
// Loads a bundle and runs attn_select_variant / attn_forward on a call
// described by key=value arguments, with made-up device pointers: enough to
// test parsing, dispatch, validation and the "no driver" paths without a GPU.
// Prints "error: <status>: <message>" and exits 1 on failure.
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
      "       attn-runtime-probe api-nulls\n"
      "keys: dtype d dv mask bias softcap b hq hkv sq sk scale wl wr\n"
      "      lse=0|1 null=q|k|v|o|bias offset=q|k|v|o|bias:BYTES\n"
      "      q_stride|k_stride|v_stride|o_stride|bias_stride=a,b,c,d\n");
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

int lookup(const std::string &text, std::initializer_list<const char *> names) {
  int i = 0;
  for (const char *name : names) {
    if (text == name)
      return i;
    ++i;
  }
  return -1;
}

/// Builds a call from key=value arguments. Pointers are fake, 256-byte
/// aligned and distinct; strides default to contiguous [B, H, S, D].
bool buildParams(int argc, char **argv, attn_fwd_params &p) {
  std::memset(&p, 0, sizeof(p));
  p.batch = 1;
  p.heads_q = p.heads_kv = 1;
  p.seqlen_q = p.seqlen_k = 128;
  p.head_dim = p.head_dim_v = 128;
  p.dtype = ATTN_DTYPE_BF16;
  p.window_left = p.window_right = -1;
  p.scale = 0.125f;
  bool lse = false;
  std::vector<std::string> nulls;
  std::vector<std::pair<std::string, long>> offsets;
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
    if (key == "dtype")
      p.dtype = lookup(value, {"f16", "bf16", "f32"});
    else if (key == "mask")
      p.mask = lookup(
          value, {"none", "causal", "causal_bottom_right", "sliding_window"});
    else if (key == "bias")
      p.bias_kind = lookup(value, {"none", "same", "f32"});
    else if (key == "d")
      p.head_dim = p.head_dim_v = int32_t(n);
    else if (key == "dv")
      p.head_dim_v = int32_t(n);
    else if (key == "b")
      p.batch = int32_t(n);
    else if (key == "hq")
      p.heads_q = int32_t(n);
    else if (key == "hkv")
      p.heads_kv = int32_t(n);
    else if (key == "sq")
      p.seqlen_q = int32_t(n);
    else if (key == "sk")
      p.seqlen_k = int32_t(n);
    else if (key == "wl")
      p.window_left = int32_t(n);
    else if (key == "wr")
      p.window_right = int32_t(n);
    else if (key == "scale")
      p.scale = std::strtof(value.c_str(), nullptr);
    else if (key == "softcap")
      p.softcap = std::strtof(value.c_str(), nullptr);
    else if (key == "lse")
      lse = n != 0;
    else if (key == "null")
      nulls.push_back(value);
    else if (key == "offset") {
      size_t colon = value.find(':');
      if (colon == std::string::npos)
        return false;
      offsets.push_back({value.substr(0, colon),
                         std::strtol(value.c_str() + colon + 1, nullptr, 10)});
    } else if (key.size() > 7 && key.compare(key.size() - 7, 7, "_stride") == 0)
      strideOverrides.push_back({key.substr(0, key.size() - 7), value});
    else {
      std::fprintf(stderr, "unknown key '%s'\n", key.c_str());
      return false;
    }
  }

  auto contiguous = [](int64_t *s, int64_t h, int64_t seq, int64_t d) {
    s[3] = 1;
    s[2] = d;
    s[1] = seq * d;
    s[0] = h * seq * d;
  };
  contiguous(p.q_stride, p.heads_q, p.seqlen_q, p.head_dim);
  contiguous(p.k_stride, p.heads_kv, p.seqlen_k, p.head_dim);
  contiguous(p.v_stride, p.heads_kv, p.seqlen_k, p.head_dim_v);
  contiguous(p.o_stride, p.heads_q, p.seqlen_q, p.head_dim_v);
  contiguous(p.bias_stride, p.heads_q, p.seqlen_q, p.seqlen_k);
  p.lse_stride[0] = int64_t(p.heads_q) * p.seqlen_q;
  p.lse_stride[1] = p.seqlen_q;

  uintptr_t base = uintptr_t(0x7f0000000000ull);
  uintptr_t addr[6];
  for (int i = 0; i < 6; ++i)
    addr[i] = base + uintptr_t(i) * 0x100000000ull;
  const char *names[] = {"q", "k", "v", "o", "lse", "bias"};
  for (auto &[name, bytes] : offsets)
    for (int i = 0; i < 6; ++i)
      if (name == names[i])
        addr[i] += bytes;
  if (!lse)
    addr[4] = 0;
  if (p.bias_kind == ATTN_BIAS_NONE)
    addr[5] = 0;
  for (const std::string &name : nulls)
    for (int i = 0; i < 6; ++i)
      if (name == names[i])
        addr[i] = 0;
  p.q = reinterpret_cast<const void *>(addr[0]);
  p.k = reinterpret_cast<const void *>(addr[1]);
  p.v = reinterpret_cast<const void *>(addr[2]);
  p.o = reinterpret_cast<void *>(addr[3]);
  p.lse = reinterpret_cast<float *>(addr[4]);
  p.bias = reinterpret_cast<const void *>(addr[5]);

  for (auto &[name, text] : strideOverrides) {
    int64_t *target = name == "q"      ? p.q_stride
                      : name == "k"    ? p.k_stride
                      : name == "v"    ? p.v_stride
                      : name == "o"    ? p.o_stride
                      : name == "bias" ? p.bias_stride
                                       : nullptr;
    if (!target || !parseStrides(text, target, 4)) {
      std::fprintf(stderr, "bad strides '%s=%s'\n", name.c_str(), text.c_str());
      return false;
    }
  }
  return true;
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
  attn_bundle_destroy(nullptr);
  std::printf("variant_count(null): %d\n", attn_bundle_variant_count(nullptr));
  std::printf("variant_name(null): %s\n",
              attn_bundle_variant_name(nullptr, 0) ? "non-null" : "null");
  std::printf("status_name(99): %s\n", attn_status_name(attn_status(99)));
  std::printf("params size: %zu\n", attn_fwd_params_size());
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
  attn_fwd_params params;
  if (command == "load") {
    std::printf("platform %s chip %s\n",
                attn_bundle_platform(bundle) == ATTN_PLATFORM_HIP ? "hip"
                                                                  : "cuda",
                attn_bundle_chip(bundle));
    for (int i = 0; i < attn_bundle_variant_count(bundle); ++i)
      std::printf("variant %d: %s\n", i, attn_bundle_variant_name(bundle, i));
  } else if (!buildParams(argc - 3, argv + 3, params)) {
    rc = usage();
  } else if (command == "select") {
    int index = -1;
    s = attn_select_variant(bundle, &params, &index);
    if (s != ATTN_STATUS_SUCCESS)
      rc = fail(s);
    else
      std::printf("selected variant %d: %s\n", index,
                  attn_bundle_variant_name(bundle, index));
  } else if (command == "forward") {
    s = attn_forward(bundle, &params);
    if (s != ATTN_STATUS_SUCCESS)
      rc = fail(s);
    else
      std::printf("launched\n");
  } else if (command == "threads") {
    rc = threads(bundle, params);
  } else if (command == "forward-threads") {
    rc = forwardThreads(bundle, params);
  } else {
    rc = usage();
  }
  attn_bundle_destroy(bundle);
  return rc;
}
