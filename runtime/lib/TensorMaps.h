//===- TensorMaps.h - The CUDA tensor maps of ABI attn-fwd-v2 -------------===//
//
// A variant with `tensor_maps` takes three CUtensorMaps (q, k, v) by value
// after its attn-fwd-v1 arguments; its TMA producer loads tiles through
// them. Dispatch checks that TMA can describe the call (whyNotTensorMap),
// the CUDA backend encodes the maps (cuTensorMapEncodeTiled) and keeps them
// in a TensorMapCache. docs/BundleFormat.md gives the encoding.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_TENSORMAPS_H
#define ATTN_RUNTIME_TENSORMAPS_H

#include "Bundle.h"

#include <array>
#include <deque>
#include <mutex>
#include <unordered_map>

namespace attn {

/// An encoded CUtensorMap: opaque, 128 bytes; the driver and the kernel
/// parameter (`.param .align 64 .b8 [128]`) need 64-byte alignment.
struct alignas(64) TensorMap {
  uint64_t opaque[16];
};
static_assert(sizeof(TensorMap) == 128, "CUtensorMap is 128 bytes");

/// The arguments of cuTensorMapEncodeTiled for one rank-4 [B, H, S, D]
/// tensor, innermost dimension first; the rest are fixed (element strides
/// 1, no interleave, 128-byte swizzle, 128-byte L2 promotion, zero fill).
struct TensorMapDesc {
  attn_dtype dtype;
  const void *address;
  /// {D, S, H, B}.
  std::array<uint64_t, 4> dims;
  /// Bytes between consecutive S, H and B indices.
  std::array<uint64_t, 3> strides;
  /// {64, block_m or block_n, 1, 1}.
  std::array<uint32_t, 4> box;

  bool operator==(const TensorMapDesc &o) const {
    return dtype == o.dtype && address == o.address && dims == o.dims &&
           strides == o.strides && box == o.box;
  }
};

constexpr int kNumTensorMaps = 3;
/// q, k, v.
using TensorMapDescs = std::array<TensorMapDesc, kNumTensorMaps>;
extern const char *const kTensorMapNames[kNumTensorMaps];

/// The maps of a dense call `p` on variant `v`. A dimension of extent 1
/// gets a legal stride in place of the call's (any value there is allowed
/// and only its index 0 is read).
TensorMapDescs describeTensorMaps(const Variant &v, const attn_fwd_params &p);

/// Why TMA cannot describe map `name`, "tensor maps: ..."; or "".
std::string whyNotTensorMap(const char *name, const TensorMapDesc &d);

/// Encoded maps by description, so that calls on the same tensors encode
/// once. Bounded: when full, the oldest entry goes. Thread-safe.
class TensorMapCache {
public:
  static constexpr size_t kCapacity = 128;

  /// The map of `d`; on a miss `encode(d, map)` makes it (nothing is kept
  /// when it fails). Encoding is done under the lock: it is host work of a
  /// few microseconds, and concurrent first calls then encode once.
  template <typename EncodeFn>
  Status get(const TensorMapDesc &d, TensorMap &map, EncodeFn encode) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = maps.find(d);
    if (it != maps.end()) {
      map = it->second;
      return Status::ok();
    }
    Status s = encode(d, map);
    if (!s.isOk())
      return s;
    if (maps.size() >= kCapacity) {
      maps.erase(order.front());
      order.pop_front();
    }
    maps.emplace(d, map);
    order.push_back(d);
    return Status::ok();
  }

private:
  struct Hash {
    size_t operator()(const TensorMapDesc &d) const;
  };
  std::mutex mutex;
  std::unordered_map<TensorMapDesc, TensorMap, Hash> maps;
  /// Insertion order, for eviction.
  std::deque<TensorMapDesc> order;
};

} // namespace attn

#endif // ATTN_RUNTIME_TENSORMAPS_H
