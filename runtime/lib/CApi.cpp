//===- CApi.cpp - The C interface of attn_runtime.h -----------------------===//

#include "Backend.h"
#include "Dispatch.h"
#include "KernelArgs.h"

#include <memory>

using namespace attn;

struct attn_bundle {
  BundleInfo info;
  std::unique_ptr<Backend> backend;
};

static thread_local std::string lastError;

/// Records `s` as the thread's last error and returns its code.
static attn_status report(const Status &s) {
  if (!s.isOk())
    lastError = s.message;
  return s.code;
}

static attn_status invalid(const char *message) {
  return report(Status::error(ATTN_STATUS_INVALID_ARGUMENT, message));
}

int attn_runtime_api_version(void) { return ATTN_RUNTIME_API_VERSION; }

size_t attn_fwd_params_size(void) { return sizeof(attn_fwd_params); }

const char *attn_status_name(attn_status status) {
  switch (status) {
  case ATTN_STATUS_SUCCESS:
    return "ATTN_STATUS_SUCCESS";
  case ATTN_STATUS_INVALID_ARGUMENT:
    return "ATTN_STATUS_INVALID_ARGUMENT";
  case ATTN_STATUS_BAD_BUNDLE:
    return "ATTN_STATUS_BAD_BUNDLE";
  case ATTN_STATUS_NO_DRIVER:
    return "ATTN_STATUS_NO_DRIVER";
  case ATTN_STATUS_UNSUPPORTED_GPU:
    return "ATTN_STATUS_UNSUPPORTED_GPU";
  case ATTN_STATUS_NO_VARIANT:
    return "ATTN_STATUS_NO_VARIANT";
  case ATTN_STATUS_LAUNCH_FAILED:
    return "ATTN_STATUS_LAUNCH_FAILED";
  case ATTN_STATUS_DRIVER_ERROR:
    return "ATTN_STATUS_DRIVER_ERROR";
  }
  return "ATTN_STATUS_UNKNOWN";
}

const char *attn_last_error(void) { return lastError.c_str(); }

attn_status attn_bundle_load(const char *dir, attn_bundle **out) {
  if (!out)
    return invalid("attn_bundle_load: out is a null pointer");
  *out = nullptr;
  if (!dir || !*dir)
    return invalid("attn_bundle_load: dir is null or empty");
  auto bundle = std::make_unique<attn_bundle>();
  Status s = loadBundle(dir, bundle->info);
  if (!s.isOk())
    return report(s);
  bundle->backend = bundle->info.platform == ATTN_PLATFORM_HIP
                        ? createHipBackend()
                        : createCudaBackend();
  *out = bundle.release();
  return ATTN_STATUS_SUCCESS;
}

void attn_bundle_destroy(attn_bundle *bundle) { delete bundle; }

attn_platform attn_bundle_platform(const attn_bundle *bundle) {
  return bundle ? bundle->info.platform : ATTN_PLATFORM_CUDA;
}

const char *attn_bundle_chip(const attn_bundle *bundle) {
  return bundle ? bundle->info.chip.c_str() : nullptr;
}

int attn_bundle_variant_count(const attn_bundle *bundle) {
  return bundle ? int(bundle->info.variants.size()) : 0;
}

const char *attn_bundle_variant_name(const attn_bundle *bundle, int index) {
  if (!bundle || index < 0 || index >= int(bundle->info.variants.size()))
    return nullptr;
  return bundle->info.variants[index].name.c_str();
}

attn_status attn_select_variant(const attn_bundle *bundle,
                                const attn_fwd_params *params, int *index) {
  if (!bundle)
    return invalid("attn_select_variant: bundle is a null pointer");
  if (!params)
    return invalid("attn_select_variant: params is a null pointer");
  if (!index)
    return invalid("attn_select_variant: index is a null pointer");
  return report(selectVariant(bundle->info, *params, *index));
}

attn_status attn_forward(attn_bundle *bundle, const attn_fwd_params *params) {
  if (!bundle)
    return invalid("attn_forward: bundle is a null pointer");
  if (!params)
    return invalid("attn_forward: params is a null pointer");
  int index = -1;
  Status s = selectVariant(bundle->info, *params, index);
  if (!s.isOk())
    return report(s);
  KernelArgs args(*params);
  return report(bundle->backend->launch(bundle->info, index, args, *params));
}
