//===- DynamicLibrary.cpp - dlopen with messages --------------------------===//
//
// The runtime links against no GPU library: the GPU machine's driver is
// whatever version it is, and a machine without one must still load the
// runtime and say clearly why it cannot launch.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include <cstdlib>
#include <dlfcn.h>

using namespace attn;

Status attn::openLibrary(const char *what, const char *envVar,
                         std::initializer_list<const char *> candidates,
                         void *&handle) {
  handle = nullptr;
  const char *override = std::getenv(envVar);
  std::string tried;
  auto tryOpen = [&](const char *name) {
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle)
      return true;
    const char *reason = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + "'" + name +
             "': " + (reason ? reason : "unknown error");
    return false;
  };
  if (override && *override) {
    if (tryOpen(override))
      return Status::ok();
    return Status::error(ATTN_STATUS_NO_DRIVER,
                         std::string("cannot open the ") + what +
                             " library named by " + envVar + " (" + tried +
                             ")");
  }
  for (const char *name : candidates)
    if (tryOpen(name))
      return Status::ok();
  return Status::error(ATTN_STATUS_NO_DRIVER,
                       std::string("cannot open the ") + what + " library (" +
                           tried + "); is the driver installed? " + envVar +
                           " may name the library's path");
}

Status attn::lookupSymbol(void *handle, const char *what, const char *symbol,
                          void *&out) {
  dlerror();
  out = dlsym(handle, symbol);
  if (out)
    return Status::ok();
  const char *reason = dlerror();
  return Status::error(ATTN_STATUS_NO_DRIVER,
                       std::string("the ") + what + " library has no symbol '" +
                           symbol + "' (" + (reason ? reason : "null") +
                           "); the driver is too old");
}
