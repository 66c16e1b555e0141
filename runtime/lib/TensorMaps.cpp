//===- TensorMaps.cpp - The CUDA tensor maps of ABI attn-fwd-v2 -----------===//

#include "TensorMaps.h"

#include <cstdio>

using namespace attn;

const char *const attn::kTensorMapNames[kNumTensorMaps] = {"q", "k", "v"};

/// cuTensorMapEncodeTiled's limits: strides below 2^40 bytes, dims at most
/// 2^32, addresses and strides in 16-byte units.
constexpr uint64_t kMaxStride = uint64_t(1) << 40;
constexpr uint64_t kMaxDim = uint64_t(1) << 32;
constexpr uint64_t kTmaAlign = 16;
/// The box's inner extent: 64 elements of 2 bytes fill the 128-byte swizzle.
constexpr uint32_t kBoxInner = 64;

/// The map of a [B, H, S, D] tensor with element strides `stride` ([b, h,
/// s], unit innermost), boxes of `rows` rows.
static TensorMapDesc describe(attn_dtype dtype, const void *ptr, int64_t b,
                              int64_t h, int64_t s, int64_t d,
                              const int64_t *stride, int rows) {
  uint64_t elem = uint64_t(dtypeSize(dtype));
  TensorMapDesc m{};
  m.dtype = dtype;
  m.address = ptr;
  m.dims = {uint64_t(d), uint64_t(s), uint64_t(h), uint64_t(b)};
  m.box = {kBoxInner, uint32_t(rows), 1, 1};
  const int64_t outerFirst[3] = {stride[2], stride[1], stride[0]};
  // Bytes per step of dims[i], the innermost's first.
  uint64_t inner = elem;
  for (int i = 0; i < 3; ++i) {
    if (m.dims[i + 1] > 1) {
      // Negative strides are refused before dispatch; one past 64 bits
      // becomes an illegal stride.
      if (__builtin_mul_overflow(uint64_t(outerFirst[i]), elem, &m.strides[i]))
        m.strides[i] = kMaxStride;
    } else {
      // Index 0 only: a packed stride, or any legal one when that is out of
      // range.
      uint64_t packed = 0;
      bool fits = !__builtin_mul_overflow(m.dims[i], inner, &packed) &&
                  packed < kMaxStride;
      packed = fits ? (packed + kTmaAlign - 1) / kTmaAlign * kTmaAlign : 0;
      m.strides[i] = fits && packed && packed < kMaxStride ? packed : kTmaAlign;
    }
    inner = m.strides[i];
  }
  return m;
}

TensorMapDescs attn::describeTensorMaps(const Variant &v,
                                        const attn_fwd_params &p) {
  attn_dtype t = attn_dtype(p.dtype);
  // A packed batch is one sequence of all rows (Sq, Sk: the row totals);
  // its kernels add each sequence's first row to the box coordinates.
  int64_t b = v.layout == SeqLayout::Varlen ? 1 : p.batch;
  return {describe(t, p.q, b, p.heads_q, p.seqlen_q, p.head_dim, p.q_stride,
                   v.blockM),
          describe(t, p.k, b, p.heads_kv, p.seqlen_k, p.head_dim, p.k_stride,
                   v.blockN),
          describe(t, p.v, b, p.heads_kv, p.seqlen_k, p.head_dim_v, p.v_stride,
                   v.blockN)};
}

std::string attn::whyNotTensorMap(const char *name, const TensorMapDesc &d) {
  std::string what = std::string("tensor maps: ") + name;
  if (reinterpret_cast<uintptr_t>(d.address) % kTmaAlign) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%p", d.address);
    return what + " base " + buf + " is not 16-byte aligned";
  }
  static const char *const kStrideNames[] = {"s", "h", "b"};
  for (int i = 0; i < 3; ++i)
    if (!d.strides[i] || d.strides[i] % kTmaAlign || d.strides[i] >= kMaxStride)
      return what + " stride_" + kStrideNames[i] + " of " +
             std::to_string(d.strides[i]) +
             " bytes is not a positive multiple of 16 below 2^40";
  for (int i = 0; i < 4; ++i)
    if (d.dims[i] < 1 || d.dims[i] > kMaxDim)
      return what + " dim " + std::to_string(i) + " (" +
             std::to_string(d.dims[i]) + ") is outside [1, 2^32]";
  return "";
}

size_t TensorMapCache::Hash::operator()(const TensorMapDesc &d) const {
  // FNV-1a over the fields; the pointer decides most of it.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t x) { h = (h ^ x) * 1099511628211ull; };
  mix(uint64_t(d.dtype));
  mix(uint64_t(reinterpret_cast<uintptr_t>(d.address)));
  for (uint64_t x : d.dims)
    mix(x);
  for (uint64_t x : d.strides)
    mix(x);
  for (uint32_t x : d.box)
    mix(x);
  return size_t(h);
}
