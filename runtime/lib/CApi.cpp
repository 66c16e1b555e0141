//===- CApi.cpp - The C interface of attn_runtime.h -----------------------===//

#include "Backend.h"
#include "Dispatch.h"
#include "KernelArgs.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>

using namespace attn;

struct attn_bundle {
  BundleInfo info;
  std::unique_ptr<Backend> backend;
  /// The variant every forward call must use (ATTN_FORCE_VARIANT, then
  /// attn_bundle_force_variant); empty: dispatch normally.
  std::string forced;
  /// ATTN_LOG_DISPATCH=1: print each choice once per call description.
  bool logDispatch = false;
  mutable std::set<std::string> logged;
  mutable std::mutex mutex;

  std::string getForced() const {
    std::lock_guard<std::mutex> lock(mutex);
    return forced;
  }
};

/// What `bundle`'s backend knows of the device `stream` runs on, in
/// `device`; null when it cannot tell (no driver: selection alone still
/// works, and a launch reports the driver's error).
static const DeviceInfo *getDevice(const attn_bundle &bundle, void *stream,
                                   DeviceInfo &device) {
  if (!bundle.backend ||
      !bundle.backend->deviceInfo(bundle.info, stream, device).isOk())
    return nullptr;
  return &device;
}

/// selectVariant with the bundle's forced variant, logging the choice when
/// asked (once per distinct call, with why earlier variants were skipped).
static Status dispatch(const attn_bundle &bundle, const attn_fwd_params &params,
                       int &index) {
  std::string skipped;
  std::string forced = bundle.getForced();
  DeviceInfo device;
  Status s = selectVariant(bundle.info, params, index, forced,
                           bundle.logDispatch ? &skipped : nullptr,
                           getDevice(bundle, params.stream, device));
  if (!bundle.logDispatch)
    return s;
  char call[256];
  std::snprintf(call, sizeof(call),
                "dtype %d d %d dv %d mask %d bias %d b %d hq %d hkv %d sq %d "
                "sk %d",
                int(params.dtype), params.head_dim, params.head_dim_v,
                int(params.mask), int(params.bias_kind), params.batch,
                params.heads_q, params.heads_kv, params.seqlen_q,
                params.seqlen_k);
  std::string key = std::string(call) + "|" + std::to_string(s.code) + "|" +
                    std::to_string(index);
  {
    std::lock_guard<std::mutex> lock(bundle.mutex);
    if (!bundle.logged.insert(key).second)
      return s;
  }
  if (s.isOk())
    std::fprintf(stderr, "attn dispatch: bundle '%s': %s -> variant %d '%s'%s%s%s\n",
                 bundle.info.dir.c_str(), call, index,
                 bundle.info.variants[index].name.c_str(),
                 forced.empty() ? "" : " (forced)",
                 skipped.empty() ? "" : "; passed over:", skipped.c_str());
  else
    std::fprintf(stderr, "attn dispatch: bundle '%s': %s -> %s\n",
                 bundle.info.dir.c_str(), call, s.message.c_str());
  return s;
}

static thread_local std::string lastError;

/// Records `s` as the thread's last error and returns its code.
static attn_status report(const Status &s) {
  if (!s.isOk())
    lastError = s.message;
  return s.code;
}

static attn_status invalid(const std::string &message) {
  return report(Status::error(ATTN_STATUS_INVALID_ARGUMENT, message));
}

int attn_runtime_api_version(void) { return ATTN_RUNTIME_API_VERSION; }

size_t attn_fwd_params_size(void) { return sizeof(attn_fwd_params); }

size_t attn_bwd_params_size(void) { return sizeof(attn_bwd_params); }

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
  if (const char *env = std::getenv("ATTN_FORCE_VARIANT"))
    bundle->forced = env;
  if (const char *env = std::getenv("ATTN_LOG_DISPATCH"))
    bundle->logDispatch = *env && std::string(env) != "0";
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

int attn_bundle_plan_count(const attn_bundle *bundle) {
  return bundle ? int(bundle->info.plans.size()) : 0;
}

const char *attn_bundle_plan_name(const attn_bundle *bundle, int index) {
  if (!bundle || index < 0 || index >= int(bundle->info.plans.size()))
    return nullptr;
  return bundle->info.plans[index].name.c_str();
}

attn_status attn_select_variant(const attn_bundle *bundle,
                                const attn_fwd_params *params, int *index) {
  if (!bundle)
    return invalid("attn_select_variant: bundle is a null pointer");
  if (!params)
    return invalid("attn_select_variant: params is a null pointer");
  if (!index)
    return invalid("attn_select_variant: index is a null pointer");
  return report(dispatch(*bundle, *params, *index));
}

attn_status attn_bundle_force_variant(attn_bundle *bundle, const char *name) {
  if (!bundle)
    return invalid("attn_bundle_force_variant: bundle is a null pointer");
  std::string wanted = name ? name : "";
  if (!wanted.empty()) {
    bool found = false;
    for (const Variant &v : bundle->info.variants)
      found |= v.name == wanted;
    if (!found)
      return invalid("attn_bundle_force_variant: bundle '" +
                     bundle->info.dir + "' has no variant '" + wanted + "'");
  }
  std::lock_guard<std::mutex> lock(bundle->mutex);
  bundle->forced = wanted;
  return ATTN_STATUS_SUCCESS;
}

/// The variant of a forward call, its split count and the workspace that
/// needs; asks the backend for the SM count only when the runtime chooses.
static Status planForward(const attn_bundle &bundle,
                          const attn_fwd_params &params, int &index,
                          int &splits, size_t &bytes) {
  Status s = dispatch(bundle, params, index);
  if (!s.isOk())
    return s;
  const Variant &v = bundle.info.variants[index];
  // Split-KV sizes its grid by the device's multiprocessors (SMs, CUs).
  DeviceInfo device;
  if (v.canSplit() && params.num_splits == 0) {
    s = bundle.backend->deviceInfo(bundle.info, params.stream, device);
    if (!s.isOk())
      return s;
  }
  splits = chooseSplits(v, params, device.multiprocessors);
  bytes = splitWorkspaceBytes(params, splits);
  return Status::ok();
}

attn_status attn_forward_workspace_size(attn_bundle *bundle,
                                        const attn_fwd_params *params,
                                        int *num_splits, size_t *bytes) {
  if (!bundle || !params || !num_splits || !bytes)
    return invalid("attn_forward_workspace_size: bundle, params, num_splits "
                   "and bytes must not be null");
  int index = -1;
  return report(planForward(*bundle, *params, index, *num_splits, *bytes));
}

attn_status attn_forward(attn_bundle *bundle, const attn_fwd_params *params) {
  if (!bundle)
    return invalid("attn_forward: bundle is a null pointer");
  if (!params)
    return invalid("attn_forward: params is a null pointer");
  int index = -1, splits = 1;
  size_t bytes = 0;
  Status s = planForward(*bundle, *params, index, splits, bytes);
  if (s.isOk() && splits > 1)
    s = checkSplitWorkspace(*params, bytes);
  if (!s.isOk())
    return report(s);
  const Variant &v = bundle->info.variants[index];
  KernelArgs args(*params, v.layout != SeqLayout::Dense, splits,
                  v.maxHeadDim > 0, v.dropout);
  if (v.tensorMaps) {
    TensorMap maps[kNumTensorMaps];
    s = bundle->backend->encodeTensorMaps(describeTensorMaps(v, *params), maps);
    if (!s.isOk()) {
      s.message = v.kernel.label + ": " + s.message;
      return report(s);
    }
    args.addTensorMaps(maps);
  }
  // Split-KV: grid z holds each batch's splits; the combine kernel merges
  // them, one workgroup per query row.
  LaunchGeometry g = {unsigned(forwardGridX(v, *params)),
                      unsigned(forwardGridY(v, *params)),
                      unsigned(params->batch * splits), unsigned(v.threads),
                      unsigned(v.kernel.dynamicSmem)};
  // Tile loops size their grid by the multiprocessors: a persistent grid,
  // a packed batch's row blocks.
  DeviceInfo device;
  if (v.persistent || (v.tensorMaps && v.layout == SeqLayout::Varlen)) {
    s = bundle->backend->deviceInfo(bundle->info, params->stream, device);
    if (!s.isOk())
      return report(s);
  }
  int per = packedRowBlocksPerWorkgroup(v, *params, device.multiprocessors);
  g.gridX = (g.gridX + per - 1) / per;
  if (v.persistent) {
    // Workgroups walk the tiles (one an SM: these kernels hold an SM's
    // shared memory); any grid would be correct. A driver that cannot tell
    // the SM count gets a workgroup a tile.
    int64_t tiles = int64_t(g.gridX) * g.gridY * g.gridZ;
    int64_t sms = device.multiprocessors > 0 ? device.multiprocessors : tiles;
    g = {unsigned(std::max<int64_t>(1, std::min(tiles, sms))), 1, 1, g.blockX,
         g.dynamicSmem};
  }
  std::vector<Launch> launches = {Launch{&v.kernel, g, args.data()}};
  if (splits > 1)
    launches.push_back(
        Launch{&v.combine,
               {unsigned(params->seqlen_q), unsigned(params->heads_q),
                unsigned(params->batch), unsigned(v.combineThreads), 0},
               args.data()});
  return report(
      bundle->backend->launch(bundle->info, launches, params->stream));
}

/// The checks and the plan the three backward entry points share: the
/// selected plan's index and the workspace it needs.
static Status planBackward(const char *fn, const attn_bundle *bundle,
                           const attn_bwd_params *params, int &index,
                           size_t &bytes) {
  std::string name = fn;
  if (!bundle)
    return Status::error(ATTN_STATUS_INVALID_ARGUMENT,
                         name + ": bundle is a null pointer");
  if (!params)
    return Status::error(ATTN_STATUS_INVALID_ARGUMENT,
                         name + ": params is a null pointer");
  DeviceInfo device;
  Status s = selectPlan(bundle->info, *params, index,
                        getDevice(*bundle, params->stream, device));
  if (!s.isOk())
    return s;
  return workspaceSize(bundle->info.plans[index], dimValues(*params), bytes);
}

attn_status attn_select_plan(const attn_bundle *bundle,
                             const attn_bwd_params *params, int *index) {
  if (!index)
    return invalid("attn_select_plan: index is a null pointer");
  size_t bytes = 0;
  return report(
      planBackward("attn_select_plan", bundle, params, *index, bytes));
}

attn_status attn_backward_workspace_size(const attn_bundle *bundle,
                                         const attn_bwd_params *params,
                                         size_t *bytes) {
  if (!bytes)
    return invalid("attn_backward_workspace_size: bytes is a null pointer");
  int index = -1;
  return report(planBackward("attn_backward_workspace_size", bundle, params,
                             index, *bytes));
}

attn_status attn_backward(attn_bundle *bundle, const attn_bwd_params *params) {
  int index = -1;
  size_t bytes = 0;
  Status s = planBackward("attn_backward", bundle, params, index, bytes);
  if (!s.isOk())
    return report(s);
  const Plan &plan = bundle->info.plans[index];
  s = checkWorkspace(plan, *params, bytes);
  if (!s.isOk())
    return report(s);
  DimValues dims = dimValues(*params);
  KernelArgs args(*params, plan.dropout);
  std::vector<Launch> launches;
  for (const Stage &stage : plan.stages) {
    unsigned grid[3];
    for (int i = 0; i < 3; ++i)
      grid[i] = unsigned(extentValue(stage.grid[i], dims));
    // A zero extent (a buffer or loop of size 0) leaves the stage no work.
    if (!grid[0] || !grid[1] || !grid[2])
      continue;
    launches.push_back({&stage.kernel,
                        {grid[0], grid[1], grid[2], unsigned(stage.threads),
                         unsigned(stage.kernel.dynamicSmem)},
                        args.data()});
  }
  return report(
      bundle->backend->launch(bundle->info, launches, params->stream));
}
