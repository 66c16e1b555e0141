//===- attn_runtime.h - Load attention kernel bundles and launch them -----===//
//
// The C interface of the attn runtime. It loads a kernel bundle (see
// docs/BundleFormat.md), picks the first variant (forward) or plan (backward)
// whose conditions hold for a call, and launches it through the CUDA Driver
// API or HIP, both opened with dlopen at first use: the library links against
// neither.
//
// Every entry point returns an attn_status; on failure attn_last_error()
// returns a message for the calling thread that says what was wrong. Nothing
// here aborts on bad input. A bundle may be used from several threads at once.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_H
#define ATTN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define ATTN_API __declspec(dllexport)
#else
#define ATTN_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// Bumped whenever attn_fwd_params, attn_bwd_params or the meaning of a call
/// changes, so a binding (the Python module) can refuse a library it was not
/// written for. Version 2 added the backward pass, version 4 the serving
/// forms of attn_fwd_params (packed batches, KV caches, paged KV caches).
#define ATTN_RUNTIME_API_VERSION 5

typedef enum attn_status {
  ATTN_STATUS_SUCCESS = 0,
  /// A null pointer, a non-positive dimension, inconsistent heads or a bad
  /// stride or alignment; the message names the argument.
  ATTN_STATUS_INVALID_ARGUMENT = 1,
  /// The bundle directory, its bundle.json or a kernel binary could not be
  /// read or is not a bundle this runtime understands.
  ATTN_STATUS_BAD_BUNDLE = 2,
  /// libcuda.so.1 / libamdhip64.so could not be opened or lacks a symbol.
  ATTN_STATUS_NO_DRIVER = 3,
  /// The device cannot run the bundle's binaries: every variant or plan
  /// that fits the call is for another architecture or needs more shared
  /// memory than the device gives (the message says which, per entry).
  ATTN_STATUS_UNSUPPORTED_GPU = 4,
  /// No variant (forward) or plan (backward) of the bundle covers the call;
  /// the message lists, per variant or plan, the first condition that failed.
  ATTN_STATUS_NO_VARIANT = 5,
  /// The driver refused to load a module or launch a kernel.
  ATTN_STATUS_LAUNCH_FAILED = 6,
  /// Any other driver call failed (no device, no context, ...).
  ATTN_STATUS_DRIVER_ERROR = 7,
} attn_status;

typedef enum attn_dtype {
  ATTN_DTYPE_F16 = 0,
  ATTN_DTYPE_BF16 = 1,
  ATTN_DTYPE_F32 = 2,
} attn_dtype;

/// Mask semantics are those of attn.attention; see docs/BundleFormat.md.
typedef enum attn_mask {
  ATTN_MASK_NONE = 0,
  ATTN_MASK_CAUSAL = 1,              ///< top-left aligned: j <= i
  ATTN_MASK_CAUSAL_BOTTOM_RIGHT = 2, ///< j <= i + Sk - Sq
  ATTN_MASK_SLIDING_WINDOW = 3,      ///< bottom-right aligned, see window_*
} attn_mask;

typedef enum attn_bias_kind {
  ATTN_BIAS_NONE = 0,
  ATTN_BIAS_SAME = 1, ///< bias has the dtype of q
  ATTN_BIAS_F32 = 2,
} attn_bias_kind;

typedef enum attn_platform {
  ATTN_PLATFORM_CUDA = 0,
  ATTN_PLATFORM_HIP = 1,
} attn_platform;

/// One forward call. Tensors are [B, H, S, D]; strides count elements and are
/// given for every dimension, the last one included (it must be 1).
typedef struct attn_fwd_params {
  const void *q;    ///< [B, Hq, Sq, D]
  const void *k;    ///< [B, Hkv, Sk, D]
  const void *v;    ///< [B, Hkv, Sk, Dv]
  void *o;          ///< [B, Hq, Sq, Dv]
  float *lse;       ///< [B, Hq, Sq] float32, Sq stride 1; null: not written
  const void *bias; ///< [B?, H?, Sq, Sk]; null when bias_kind is NONE

  int32_t batch, heads_q, heads_kv, seqlen_q, seqlen_k, head_dim, head_dim_v;
  int32_t dtype;     ///< attn_dtype
  int32_t mask;      ///< attn_mask
  int32_t bias_kind; ///< attn_bias_kind

  int64_t q_stride[4], k_stride[4], v_stride[4], o_stride[4];
  int64_t lse_stride[2];  ///< b, h
  int64_t bias_stride[4]; ///< b, h, q, k; 0 on broadcast dimensions

  float scale;                       ///< multiplies q.k (usually 1/sqrt(D))
  float softcap;                     ///< 0: none; > 0 selects a softcap variant
  int32_t window_left, window_right; ///< sliding window; < 0 = unbounded

  /// CUstream / hipStream_t to launch on; null is the legacy default stream
  /// of the thread's current context / device.
  void *stream;

  /// The serving forms (runtime/README.md, "Serving forms"); all null or 0
  /// for a dense call. No bias with any of them.
  ///
  /// Packed batch: cu_seqlens_q and cu_seqlens_k ([batch + 1] int32 row
  /// offsets, non-decreasing) split q, o ([1, Hq, seqlen_q, D]), k and v
  /// ([1, Hkv, seqlen_k, D]) and lse ([1, Hq, seqlen_q]) into `batch`
  /// sequences; seqlen_q and seqlen_k count all rows; max_seqlen_q sizes
  /// the grid (0: seqlen_q; below the longest query length it is still
  /// correct, only slower). Rows outside every sequence are not written.
  const int32_t *cu_seqlens_q, *cu_seqlens_k;
  /// KV cache: batch b attends to its first seqlens_k[b] keys ([batch]
  /// int32, clamped to [0, seqlen_k]).
  const int32_t *seqlens_k;
  /// Paged KV cache (with seqlens_k): k and v are [num_pages, Hkv,
  /// page_size, D] (their strides[0] step pages) and key j of batch b is row
  /// j % page_size of page block_table[b * block_table_stride + j /
  /// page_size]; seqlen_k is the pages per batch times page_size.
  const int32_t *block_table;
  int64_t block_table_stride;
  int32_t page_size, num_pages;
  int32_t max_seqlen_q;

  /// Split-KV (KV caches only: seqlens_k set): the keys of each batch are
  /// split over num_splits workgroups whose partial results a second kernel
  /// merges. 0 lets the runtime choose from the shape and the GPU's SM count
  /// (1 when the grid fills the GPU); 1 never splits. A split call needs
  /// attn_forward_workspace_size bytes of workspace (256-byte aligned; its
  /// contents on entry do not matter); null with size 0 otherwise.
  int32_t num_splits;
  void *workspace;
  size_t workspace_size;

  /// Dropout (dense calls): each probability is kept with probability
  /// 1 - dropout_p, by the counter-based mask of docs/AttnDialect.md
  /// (Philox4x32-10 keyed by dropout_seed, dropout_offset in its counter),
  /// and scaled by 1 / (1 - dropout_p). 0 (the zeroed struct): none; a
  /// value in (0, 1) selects a dropout variant. The backward of the same
  /// call takes the same three values.
  float dropout_p;
  uint32_t dropout_offset;
  uint64_t dropout_seed;
} attn_fwd_params;

/// One backward call: the gradients of attention with respect to q, k, v
/// (and the bias). Same conventions as attn_fwd_params; docs/BundleFormat.md
/// describes the plans that run it and their workspace.
typedef struct attn_bwd_params {
  const void *q, *k, *v;
  const void *o;      ///< the forward output [B, Hq, Sq, Dv]
  const void *dout;   ///< its gradient [B, Hq, Sq, Dv]
  const float *lse;   ///< [B, Hq, Sq] f32 from the forward, Sq stride 1
  const void *bias;   ///< null when bias_kind is NONE
  void *dq, *dk, *dv; ///< shaped like q, k, v
  /// The bias gradient in the bias's dtype, or null: none. Its strides are 0
  /// on the dimensions it is summed over (the bias must broadcast on them).
  void *dbias;
  /// At least attn_backward_workspace_size bytes, 256-byte aligned; may be
  /// null when that size is 0. Its contents on entry do not matter.
  void *workspace;
  size_t workspace_size;

  int32_t batch, heads_q, heads_kv, seqlen_q, seqlen_k, head_dim, head_dim_v;
  int32_t dtype, mask, bias_kind;
  int32_t deterministic; ///< 1: only deterministic (bit-reproducible) plans

  int64_t q_stride[4], k_stride[4], v_stride[4], o_stride[4], do_stride[4];
  int64_t dq_stride[4], dk_stride[4], dv_stride[4];
  int64_t lse_stride[2];   ///< b, h
  int64_t bias_stride[4];  ///< b, h, q, k; 0 on broadcast dimensions
  int64_t dbias_stride[4]; ///< b, h, q, k; 0 on summed dimensions

  float scale, softcap;
  int32_t window_left, window_right;
  void *stream;

  /// The forward's dropout (attn_fwd_params): the same p, seed and offset
  /// regenerate its mask; 0: none.
  float dropout_p;
  uint32_t dropout_offset;
  uint64_t dropout_seed;
} attn_bwd_params;

typedef struct attn_bundle attn_bundle;

/// ATTN_RUNTIME_API_VERSION of the library.
ATTN_API int attn_runtime_api_version(void);
/// sizeof(attn_fwd_params), for bindings that mirror the struct.
ATTN_API size_t attn_fwd_params_size(void);
/// sizeof(attn_bwd_params), for bindings that mirror the struct.
ATTN_API size_t attn_bwd_params_size(void);
/// "ATTN_STATUS_NO_VARIANT", ... ; "ATTN_STATUS_UNKNOWN" for other values.
ATTN_API const char *attn_status_name(attn_status status);
/// The message of the calling thread's last failed call ("" if none).
ATTN_API const char *attn_last_error(void);

/// Reads `dir`/bundle.json and every kernel binary it names. Touches no GPU.
ATTN_API attn_status attn_bundle_load(const char *dir, attn_bundle **out);
/// Unloads the modules the bundle loaded. Null is a no-op.
ATTN_API void attn_bundle_destroy(attn_bundle *bundle);

ATTN_API attn_platform attn_bundle_platform(const attn_bundle *bundle);
/// The bundle's chip ("sm_90a", "gfx942"); null for a null bundle.
ATTN_API const char *attn_bundle_chip(const attn_bundle *bundle);
ATTN_API int attn_bundle_variant_count(const attn_bundle *bundle);
/// The variant's name; null when the index is out of range.
ATTN_API const char *attn_bundle_variant_name(const attn_bundle *bundle,
                                              int index);

ATTN_API int attn_bundle_plan_count(const attn_bundle *bundle);
/// The plan's name; null when the index is out of range.
ATTN_API const char *attn_bundle_plan_name(const attn_bundle *bundle,
                                           int index);

/// Forces every later forward call on `bundle` to variant `name` (for
/// debugging and benchmarking single variants); null or "" restores normal
/// dispatch. A name the bundle lacks is ATTN_STATUS_INVALID_ARGUMENT; a
/// forced variant that does not match a call makes that call
/// ATTN_STATUS_NO_VARIANT saying why (never a launch of a kernel that does
/// not fit). The environment variable ATTN_FORCE_VARIANT=<name>, read when a
/// bundle is loaded, does the same (a name the bundle lacks then fails each
/// forward call, naming it). ATTN_LOG_DISPATCH=1 prints each choice to stderr,
/// once per distinct call shape, with why earlier variants were passed over.
ATTN_API attn_status attn_bundle_force_variant(attn_bundle *bundle,
                                               const char *name);

/// Checks the call and picks the variant attn_forward would launch, without
/// touching a GPU.
ATTN_API attn_status attn_select_variant(const attn_bundle *bundle,
                                         const attn_fwd_params *params,
                                         int *index);

/// The split count attn_forward would use for the call (1: no split) and
/// the workspace it then needs (0 without a split). With num_splits = 0 it
/// asks the driver for the SM count of the current device (or the stream's
/// context's).
ATTN_API attn_status attn_forward_workspace_size(attn_bundle *bundle,
                                                 const attn_fwd_params *params,
                                                 int *num_splits,
                                                 size_t *bytes);

/// Checks the call, picks a variant, loads its module for the current
/// context/device (cached) and launches it on params->stream. Asynchronous:
/// errors of the running kernel surface at the next synchronization.
ATTN_API attn_status attn_forward(attn_bundle *bundle,
                                  const attn_fwd_params *params);

/// Checks the call (all but the workspace) and picks the plan attn_backward
/// would launch, without touching a GPU.
ATTN_API attn_status attn_select_plan(const attn_bundle *bundle,
                                      const attn_bwd_params *params,
                                      int *index);

/// The workspace attn_backward needs for the call (its plan's buffers, each
/// 256-byte aligned); checks the call like attn_select_plan. No GPU.
ATTN_API attn_status attn_backward_workspace_size(const attn_bundle *bundle,
                                                  const attn_bwd_params *params,
                                                  size_t *bytes);

/// Checks the call and its workspace, picks a plan, loads its stages'
/// modules (cached) and launches every stage in order on params->stream.
/// Allocates nothing. Asynchronous, like attn_forward.
ATTN_API attn_status attn_backward(attn_bundle *bundle,
                                   const attn_bwd_params *params);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // ATTN_RUNTIME_H
