//===- Dispatch.cpp - Check a call and pick the variant to launch --------===//

#include "Dispatch.h"

#include <cstdio>

using namespace attn;

static Status invalid(const std::string &what) {
  return Status::error(ATTN_STATUS_INVALID_ARGUMENT, what);
}

static std::string strides(const int64_t *s, int n) {
  std::string out = "[";
  for (int i = 0; i < n; ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

static std::string hex(const void *p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%p", p);
  return buf;
}

Status attn::validateParams(const attn_fwd_params &p) {
  const std::pair<const char *, int32_t> dims[] = {
      {"batch", p.batch},          {"heads_q", p.heads_q},
      {"heads_kv", p.heads_kv},    {"seqlen_q", p.seqlen_q},
      {"seqlen_k", p.seqlen_k},    {"head_dim", p.head_dim},
      {"head_dim_v", p.head_dim_v}};
  for (const auto &[name, value] : dims)
    if (value <= 0)
      return invalid(std::string(name) + " must be positive, got " +
                     std::to_string(value));
  if (p.heads_q % p.heads_kv != 0)
    return invalid("heads_q (" + std::to_string(p.heads_q) +
                   ") must be a multiple of heads_kv (" +
                   std::to_string(p.heads_kv) + ")");
  // The launch grid is (ceil(Sq / block_m), Hq, B); y and z are limited to
  // 65535 on both CUDA and HIP.
  if (p.heads_q > 65535 || p.batch > 65535)
    return invalid("heads_q and batch must be at most 65535 (grid limit), "
                   "got heads_q " +
                   std::to_string(p.heads_q) + ", batch " +
                   std::to_string(p.batch));
  if (dtypeSize(p.dtype) == 0)
    return invalid("dtype " + std::to_string(p.dtype) +
                   " is not an attn_dtype");
  if (p.mask < ATTN_MASK_NONE || p.mask > ATTN_MASK_SLIDING_WINDOW)
    return invalid("mask " + std::to_string(p.mask) + " is not an attn_mask");
  if (p.bias_kind < ATTN_BIAS_NONE || p.bias_kind > ATTN_BIAS_F32)
    return invalid("bias_kind " + std::to_string(p.bias_kind) +
                   " is not an attn_bias_kind");

  const std::pair<const char *, const void *> pointers[] = {
      {"q", p.q}, {"k", p.k}, {"v", p.v}, {"o", p.o}};
  for (const auto &[name, ptr] : pointers)
    if (!ptr)
      return invalid(std::string(name) + " is a null pointer");
  if (p.bias_kind != ATTN_BIAS_NONE && !p.bias)
    return invalid(std::string("bias is a null pointer but bias_kind is ") +
                   biasName(p.bias_kind));
  if (p.bias_kind == ATTN_BIAS_NONE && p.bias)
    return invalid("bias is given but bias_kind is none");

  uintptr_t elem = dtypeSize(p.dtype);
  for (const auto &[name, ptr] : pointers)
    if (reinterpret_cast<uintptr_t>(ptr) % elem)
      return invalid(std::string(name) + " pointer " + hex(ptr) +
                     " is not aligned to its element size (" +
                     std::to_string(elem) + " bytes)");
  if (reinterpret_cast<uintptr_t>(p.lse) % 4)
    return invalid("lse pointer " + hex(p.lse) + " is not 4-byte aligned");

  const std::pair<const char *, const int64_t *> tensors[] = {
      {"q", p.q_stride},
      {"k", p.k_stride},
      {"v", p.v_stride},
      {"o", p.o_stride}};
  for (const auto &[name, s] : tensors) {
    if (s[3] != 1)
      return invalid(std::string(name) + " strides " + strides(s, 4) +
                     ": the last (head) dimension must have stride 1");
    for (int i = 0; i < 3; ++i)
      if (s[i] < 0)
        return invalid(std::string(name) + " strides " + strides(s, 4) +
                       " must not be negative");
  }
  // Two output rows at one address would be written by two blocks at once.
  const int32_t oDims[] = {p.batch, p.heads_q, p.seqlen_q};
  for (int i = 0; i < 3; ++i)
    if (oDims[i] > 1 && p.o_stride[i] == 0)
      return invalid("o strides " + strides(p.o_stride, 4) +
                     ": stride 0 on a dimension of size > 1 makes outputs "
                     "overlap");
  if (p.lse) {
    if (p.lse_stride[0] < 0 || p.lse_stride[1] < 0 ||
        (p.batch > 1 && p.lse_stride[0] == 0) ||
        (p.heads_q > 1 && p.lse_stride[1] == 0))
      return invalid("lse strides " + strides(p.lse_stride, 2) +
                     " must be positive on dimensions of size > 1");
  }
  if (p.bias_kind != ATTN_BIAS_NONE)
    for (int i = 0; i < 4; ++i)
      if (p.bias_stride[i] < 0)
        return invalid("bias strides " + strides(p.bias_stride, 4) +
                       " must not be negative");
  if (!(p.scale == p.scale))
    return invalid("scale is NaN");
  if (!(p.softcap >= 0))
    return invalid("softcap must be 0 (none) or positive, got " +
                   std::to_string(p.softcap));
  if (p.mask == ATTN_MASK_SLIDING_WINDOW && p.window_left < 0 &&
      p.window_right < 0)
    return invalid("mask sliding_window needs window_left or window_right "
                   ">= 0 (both are unbounded)");
  return Status::ok();
}

static std::string mismatch(const char *field, const std::string &variant,
                            const std::string &call) {
  return std::string(field) + " is " + variant + ", call has " + call;
}

std::string attn::whyNot(const Variant &v, const attn_fwd_params &p) {
  if (v.dtype != p.dtype)
    return mismatch("dtype", dtypeName(v.dtype), dtypeName(p.dtype));
  if (v.headDim != p.head_dim)
    return mismatch("head_dim", std::to_string(v.headDim),
                    std::to_string(p.head_dim));
  if (v.headDimV != p.head_dim_v)
    return mismatch("head_dim_v", std::to_string(v.headDimV),
                    std::to_string(p.head_dim_v));
  if (v.mask != p.mask)
    return mismatch("mask", maskName(v.mask), maskName(p.mask));
  if (v.bias != p.bias_kind)
    return mismatch("bias", biasName(v.bias), biasName(p.bias_kind));
  bool softcap = p.softcap > 0;
  if (v.softcap != softcap)
    return mismatch("softcap", v.softcap ? "true" : "false",
                    softcap ? "true" : "false");

  int64_t elem = dtypeSize(p.dtype);
  struct Tensor {
    const char *name;
    const void *ptr;
    const int64_t *stride;
    int numStrides;
    int64_t elem;
    const char *condition;
    int64_t align;
  };
  // Only the strides a kernel steps by whole rows count; the unit head stride
  // and the bias key stride are element steps. lse is written one f32 at a
  // time, so its alignment is not a condition.
  const Tensor tensors[] = {
      {"q", p.q, p.q_stride, 3, elem, "align_bytes", v.alignBytes},
      {"k", p.k, p.k_stride, 3, elem, "align_bytes", v.alignBytes},
      {"v", p.v, p.v_stride, 3, elem, "align_bytes", v.alignBytes},
      {"o", p.o, p.o_stride, 3, elem, "align_bytes", v.alignBytes},
      {"bias", p.bias, p.bias_stride, 3,
       p.bias_kind == ATTN_BIAS_F32 ? 4 : elem,
       v.biasAlignBytes ? "bias_align_bytes" : "align_bytes",
       v.biasAlignBytes ? v.biasAlignBytes : v.alignBytes}};
  static const char *const kDimNames[] = {"b", "h", "s"};
  for (const Tensor &t : tensors) {
    if (!t.ptr)
      continue;
    if (reinterpret_cast<uintptr_t>(t.ptr) % t.align)
      return std::string(t.condition) + ": " + t.name + " pointer " +
             hex(t.ptr) + " is not " + std::to_string(t.align) +
             "-byte aligned";
    for (int i = 0; i < t.numStrides; ++i)
      if ((t.stride[i] * t.elem) % t.align)
        return std::string(t.condition) + ": " + t.name + " stride_" +
               kDimNames[i] + " " + std::to_string(t.stride[i]) + " * " +
               std::to_string(t.elem) + " bytes is not a multiple of " +
               std::to_string(t.align);
  }
  if (p.seqlen_q % v.seqlenQMultiple)
    return "seqlen_q_multiple: seqlen_q " + std::to_string(p.seqlen_q) +
           " is not a multiple of " + std::to_string(v.seqlenQMultiple);
  if (p.seqlen_k % v.seqlenKMultiple)
    return "seqlen_k_multiple: seqlen_k " + std::to_string(p.seqlen_k) +
           " is not a multiple of " + std::to_string(v.seqlenKMultiple);
  return "";
}

Status attn::selectVariant(const BundleInfo &bundle,
                           const attn_fwd_params &params, int &index) {
  index = -1;
  Status s = validateParams(params);
  if (!s.isOk())
    return s;
  std::string reasons;
  for (size_t i = 0; i < bundle.variants.size(); ++i) {
    std::string why = whyNot(bundle.variants[i], params);
    if (why.empty()) {
      index = int(i);
      return Status::ok();
    }
    reasons += "\n  variant '" + bundle.variants[i].name + "': " + why;
  }
  char call[256];
  std::snprintf(call, sizeof(call),
                "dtype %s, head_dim %d, head_dim_v %d, mask %s, bias %s, "
                "softcap %s, seqlen_q %d, seqlen_k %d",
                dtypeName(params.dtype), params.head_dim, params.head_dim_v,
                maskName(params.mask), biasName(params.bias_kind),
                params.softcap > 0 ? "true" : "false", params.seqlen_q,
                params.seqlen_k);
  return Status::error(ATTN_STATUS_NO_VARIANT,
                       "no variant of bundle '" + bundle.dir +
                           "' matches the call (" + call + "):" + reasons);
}
