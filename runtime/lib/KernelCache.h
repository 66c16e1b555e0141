//===- KernelCache.h - What a backend keeps per device --------------------===//
//
// Both backends keep the modules they load for a bundle, keyed by where they
// were loaded (a CUDA context, a HIP device) and the variant, and hand out
// the kernel's function handle; loads happen under one lock so that
// concurrent first calls load a variant once. They also keep what dispatch
// asks of each device on every call (DeviceInfoCache).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_KERNELCACHE_H
#define ATTN_RUNTIME_KERNELCACHE_H

#include "Bundle.h"

#include <map>
#include <mutex>
#include <utility>

namespace attn {

template <typename Place, typename Module, typename Function>
class KernelCache {
public:
  using Key = std::pair<Place, int>;

  /// The function of variant `index` at `place`; on first use `load(module,
  /// function)` loads it (and leaves nothing behind when it fails).
  template <typename LoadFn>
  Status get(Place place, int index, Function &fn, LoadFn load) {
    std::lock_guard<std::mutex> lock(mutex);
    Key key(place, index);
    auto it = entries.find(key);
    if (it == entries.end()) {
      Module module{};
      Function function{};
      Status s = load(module, function);
      if (!s.isOk())
        return s;
      it = entries.emplace(key, std::make_pair(module, function)).first;
    }
    fn = it->second.second;
    return Status::ok();
  }

  /// Calls `unload(place, module)` for every loaded module (at teardown).
  template <typename UnloadFn> void forEachModule(UnloadFn unload) {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &[key, entry] : entries)
      unload(key.first, entry.first);
  }

private:
  std::mutex mutex;
  std::map<Key, std::pair<Module, Function>> entries;
};

/// The DeviceInfo of each place (CUDA context, HIP device), queried once:
/// dispatch asks for it on every call.
template <typename Place> class DeviceInfoCache {
public:
  /// `info` of `place`; on first use `query(info)` fills it (nothing is
  /// kept when it fails).
  template <typename QueryFn>
  Status get(Place place, DeviceInfo &info, QueryFn query) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = infos.find(place);
      if (it != infos.end()) {
        info = it->second;
        return Status::ok();
      }
    }
    info = DeviceInfo();
    Status s = query(info);
    if (!s.isOk())
      return s;
    std::lock_guard<std::mutex> lock(mutex);
    infos[place] = info;
    return Status::ok();
  }

private:
  std::mutex mutex;
  std::map<Place, DeviceInfo> infos;
};

} // namespace attn

#endif // ATTN_RUNTIME_KERNELCACHE_H
