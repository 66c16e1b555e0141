//===- FakeLaunchTrace.h - Describe a launch's arguments for the fakes ----===//
//
// The fake CUDA driver and HIP runtime print every kernel launch; this turns
// the argument block into text. ATTN_FAKE_ABI says which ABI the launches of
// the process use: attn-fwd-v1 (the default: B, Hq, Hkv, Sq and Sk, on the
// launch line), attn-fwd-v1-serving (the same, then the nine arguments of
// the serving layouts' kernels on a line of their own),
// attn-fwd-v1-any-head-dim (the same, then D and Dv), attn-fwd-v1-dropout
// (the same, then D, Dv and the dropout arguments), attn-bwd-v1 (every
// argument, on lines of their own) or attn-bwd-v1-dropout (the same, then
// the dropout arguments). Every launch line also gives the number of
// arguments (the runtime ends the array with a null entry) and, when the
// last three are maps of the fake cuTensorMapEncodeTiled (ABI
// attn-fwd-v2), their serial numbers.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_TOOLS_FAKELAUNCHTRACE_H
#define ATTN_RUNTIME_TOOLS_FAKELAUNCHTRACE_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace attn::fake {

/// What the fake cuTensorMapEncodeTiled writes into a map's 128 bytes: this
/// magic word, the map's serial number, then a fill pattern.
constexpr char kMapMagic[8] = {'f', 'a', 'k', 'e', 't', 'm', 'a', 'p'};

inline void writeMap(void *map, uint64_t serial) {
  auto *bytes = static_cast<unsigned char *>(map);
  std::memset(bytes, 0xa5, 128);
  std::memcpy(bytes, kMapMagic, sizeof(kMapMagic));
  std::memcpy(bytes + 8, &serial, sizeof(serial));
}

/// The serial number of the fake map an argument points to, or 0. Maps are
/// 64-byte aligned; every other argument cell holds at least 8 bytes.
inline uint64_t mapSerial(const void *arg) {
  uint64_t serial = 0;
  if (reinterpret_cast<uintptr_t>(arg) % 64 ||
      std::memcmp(arg, kMapMagic, sizeof(kMapMagic)))
    return 0;
  std::memcpy(&serial, static_cast<const char *>(arg) + 8, sizeof(serial));
  return serial;
}

/// " params N", and " maps a b c" when the last three arguments are maps.
inline std::string describeCount(void **params) {
  int count = 0;
  while (params[count])
    ++count;
  std::string out = " params " + std::to_string(count);
  if (count < 3)
    return out;
  std::string maps = " maps";
  for (int i = count - 3; i < count; ++i) {
    uint64_t serial = mapSerial(params[i]);
    if (!serial)
      return out;
    maps += " " + std::to_string(serial);
  }
  return out + maps;
}

/// The launch line's tail and any further lines, each of those starting with
/// `prefix`.
inline std::string describeArgs(void **params, const char *prefix) {
  auto i32 = [&](int i) { return *static_cast<int32_t *>(params[i]); };
  auto i64 = [&](int i) { return *static_cast<int64_t *>(params[i]); };
  auto f32 = [&](int i) { return *static_cast<float *>(params[i]); };
  auto ptr = [&](int i) {
    return static_cast<unsigned long long>(
        *static_cast<uintptr_t *>(params[i]));
  };
  auto u64 = [&](int i) {
    return static_cast<unsigned long long>(*static_cast<uint64_t *>(params[i]));
  };
  auto u32 = [&](int i) { return *static_cast<uint32_t *>(params[i]); };
  char buf[256];
  // dropout_p, seed and offset at `first`.
  auto dropout = [&](int first) {
    std::snprintf(buf, sizeof(buf), "\n%s  dropout p %g seed %llu offset %u",
                  prefix, f32(first), u64(first + 1), u32(first + 2));
    return std::string(buf);
  };
  const char *abi = std::getenv("ATTN_FAKE_ABI");
  auto is = [&](const char *name) { return abi && !std::strcmp(abi, name); };
  if (!is("attn-bwd-v1") && !is("attn-bwd-v1-dropout")) {
    // attn-fwd-v1: six pointers, then B, Hq, Hkv, Sq, Sk (i32).
    std::snprintf(buf, sizeof(buf), " B %d Hq %d Hkv %d Sq %d Sk %d%s", i32(6),
                  i32(7), i32(8), i32(9), i32(10),
                  describeCount(params).c_str());
    if (is("attn-fwd-v1-any-head-dim") || is("attn-fwd-v1-dropout")) {
      std::string out = buf;
      std::snprintf(buf, sizeof(buf), "\n%s  head_dim %d head_dim_v %d", prefix,
                    i32(33), i32(34));
      out += buf;
      return is("attn-fwd-v1-dropout") ? out + dropout(35) : out;
    }
    if (!abi || std::strcmp(abi, "attn-fwd-v1-serving") != 0)
      return buf;
    // The serving layouts' nine more: four index arrays, the table's row
    // stride, page_size, num_pages, the split-KV workspace and splits.
    std::string out = buf;
    std::snprintf(buf, sizeof(buf),
                  "\n%s  serving cu_q 0x%llx cu_k 0x%llx lens 0x%llx table "
                  "0x%llx stride %lld page %d pages %d workspace 0x%llx "
                  "splits %d",
                  prefix, ptr(33), ptr(34), ptr(35), ptr(36),
                  static_cast<long long>(i64(37)), i32(38), i32(39), ptr(40),
                  i32(41));
    return out + buf;
  }
  // attn-bwd-v1: 12 pointers, 5 dims, 8 x 3 strides, lse (2), bias (4),
  // dbias (4), scale, softcap, window_left, window_right.
  static const char *const kPointers[] = {"q",  "k",   "v",     "o",
                                          "do", "lse", "bias",  "dq",
                                          "dk", "dv",  "dbias", "workspace"};
  std::string out =
      describeCount(params) + "\n" + std::string(prefix) + "  pointers";
  for (int i = 0; i < 12; ++i) {
    std::snprintf(buf, sizeof(buf), " %s 0x%llx", kPointers[i], ptr(i));
    out += buf;
  }
  std::snprintf(buf, sizeof(buf), "\n%s  dims B %d Hq %d Hkv %d Sq %d Sk %d",
                prefix, i32(12), i32(13), i32(14), i32(15), i32(16));
  out += buf;
  static const char *const kStrides[] = {"q",  "k",  "v",  "o",
                                         "do", "dq", "dk", "dv"};
  out += std::string("\n") + prefix + "  strides";
  int n = 17;
  auto strides = [&](const char *name, int count) {
    out += std::string(" ") + name + " [";
    for (int j = 0; j < count; ++j)
      out += (j ? ", " : "") + std::to_string(i64(n++));
    out += "]";
  };
  for (const char *name : kStrides)
    strides(name, 3);
  strides("lse", 2);
  strides("bias", 4);
  strides("dbias", 4);
  std::snprintf(buf, sizeof(buf),
                "\n%s  scale %g softcap %g window_left %d window_right %d",
                prefix, f32(51), f32(52), i32(53), i32(54));
  out += buf;
  return is("attn-bwd-v1-dropout") ? out + dropout(55) : out;
}

} // namespace attn::fake

#endif // ATTN_RUNTIME_TOOLS_FAKELAUNCHTRACE_H
