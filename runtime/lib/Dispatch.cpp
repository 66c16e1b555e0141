//===- Dispatch.cpp - Check a call and pick the variant or plan to launch -===//
//
// Forward and backward calls are checked by one set of rules: each call is
// first described as a list of tensors with their roles (describe()), and
// validation and the alignment conditions walk that list.
//
//===----------------------------------------------------------------------===//

#include "Dispatch.h"
#include "TensorMaps.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <vector>

using namespace attn;

/// The smallest |scale| a backward call takes: the sm_90a plans start S^T
/// from -lse / scale (docs/Backward.md), which must stay finite.
static constexpr float kMinBackwardScale = 1e-30f;

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

namespace {

/// What a tensor of a call is to the checks.
enum TensorRole : unsigned {
  /// A [B, H, S, D] tensor of the call's dtype: required, element-aligned,
  /// unit last stride, no negative strides.
  kData = 1,
  /// Written by the kernels: no stride 0 on a dimension of size > 1, and no
  /// memory shared with another tensor of the call.
  kOutput = 2,
  /// Subject to align_bytes (a bias to bias_align_bytes when given).
  kConditioned = 4,
  kBias = 8,
};

struct Tensor {
  const char *name;
  const void *ptr;
  int64_t sizes[4];
  int64_t strides[4];
  int64_t elemBytes;
  unsigned roles;

  bool is(TensorRole role) const { return roles & role; }
};

/// A forward or backward call as the checks see it.
struct Call {
  int32_t batch, headsQ, headsKv, seqlenQ, seqlenK, headDim, headDimV;
  int32_t dtype, mask, biasKind;
  float scale, softcap;
  int32_t windowLeft, windowRight;
  float dropoutP;
  bool backward;
  bool deterministic;
  /// q, k, v, o (and do, dq, dk, dv), then lse, bias and dbias when given.
  std::vector<Tensor> tensors;
  const void *lse;
  const int64_t *lseStride;
  const void *bias, *dbias;
  const int64_t *biasStride, *dbiasStride;
  /// The serving form of a forward call and its fields (attn_fwd_params).
  SeqLayout layout = SeqLayout::Dense;
  const int32_t *cuSeqlensQ, *cuSeqlensK, *seqlensK, *blockTable;
  int64_t blockTableStride;
  int32_t pageSize, numPages, maxSeqlenQ, numSplits;
};

/// The most splits of one batch's keys (FlashAttention caps them at 128).
constexpr int kMaxSplits = 128;
/// The most splits of one key block each the heuristic takes (chooseSplits).
constexpr int kMaxOneBlockSplits = 64;

Tensor makeTensor(const char *name, const void *ptr,
                  std::initializer_list<int64_t> sizes, const int64_t *stride,
                  int64_t elemBytes, unsigned roles) {
  Tensor t{name, ptr, {1, 1, 1, 1}, {0, 0, 0, 0}, elemBytes, roles};
  std::copy(sizes.begin(), sizes.end(), t.sizes);
  std::copy(stride, stride + 4, t.strides);
  return t;
}

/// What both params structs share; P is attn_fwd_params or attn_bwd_params.
template <typename P> Call describeCommon(const P &p) {
  Call c{};
  c.batch = p.batch;
  c.headsQ = p.heads_q;
  c.headsKv = p.heads_kv;
  c.seqlenQ = p.seqlen_q;
  c.seqlenK = p.seqlen_k;
  c.headDim = p.head_dim;
  c.headDimV = p.head_dim_v;
  c.dtype = p.dtype;
  c.mask = p.mask;
  c.biasKind = p.bias_kind;
  c.scale = p.scale;
  c.softcap = p.softcap;
  c.windowLeft = p.window_left;
  c.windowRight = p.window_right;
  c.dropoutP = p.dropout_p;
  c.lse = p.lse;
  c.lseStride = p.lse_stride;
  c.bias = p.bias;
  c.biasStride = p.bias_stride;
  int64_t elem = dtypeSize(p.dtype);
  int64_t b = p.batch, hq = p.heads_q, hkv = p.heads_kv;
  int64_t sq = p.seqlen_q, sk = p.seqlen_k;
  unsigned in = kData | kConditioned;
  c.tensors = {
      makeTensor("q", p.q, {b, hq, sq, p.head_dim}, p.q_stride, elem, in),
      makeTensor("k", p.k, {b, hkv, sk, p.head_dim}, p.k_stride, elem, in),
      makeTensor("v", p.v, {b, hkv, sk, p.head_dim_v}, p.v_stride, elem, in),
      makeTensor("o", p.o, {b, hq, sq, p.head_dim_v}, p.o_stride, elem, in)};
  return c;
}

/// Appends lse, bias and dbias, the tensors that may be absent.
void addOptionalTensors(Call &c, unsigned lseRoles) {
  // A packed batch is one [1, H, rows, D] problem.
  int64_t b = c.layout == SeqLayout::Varlen ? 1 : c.batch;
  int64_t hq = c.headsQ, sq = c.seqlenQ, sk = c.seqlenK;
  int64_t lseStride[4] = {c.lseStride[0], c.lseStride[1], 1, 0};
  if (c.lse)
    c.tensors.push_back(
        makeTensor("lse", c.lse, {b, hq, sq}, lseStride, 4, lseRoles));
  int64_t biasElem = c.biasKind == ATTN_BIAS_F32 ? 4 : dtypeSize(c.dtype);
  if (c.bias)
    c.tensors.push_back(makeTensor("bias", c.bias, {b, hq, sq, sk},
                                   c.biasStride, biasElem,
                                   kBias | kConditioned));
  if (c.dbias)
    c.tensors.push_back(makeTensor("dbias", c.dbias, {b, hq, sq, sk},
                                   c.dbiasStride, biasElem,
                                   kBias | kConditioned | kOutput));
}

Call describe(const attn_fwd_params &p) {
  Call c = describeCommon(p);
  c.tensors[3].roles |= kOutput;
  c.cuSeqlensQ = p.cu_seqlens_q;
  c.cuSeqlensK = p.cu_seqlens_k;
  c.seqlensK = p.seqlens_k;
  c.blockTable = p.block_table;
  c.blockTableStride = p.block_table_stride;
  c.pageSize = p.page_size;
  c.numPages = p.num_pages;
  c.maxSeqlenQ = p.max_seqlen_q;
  c.numSplits = p.num_splits;
  if (p.block_table)
    c.layout = SeqLayout::Paged;
  else if (p.seqlens_k)
    c.layout = SeqLayout::KVCache;
  else if (p.cu_seqlens_q || p.cu_seqlens_k)
    c.layout = SeqLayout::Varlen;
  if (c.layout == SeqLayout::Varlen)
    for (Tensor &t : c.tensors)
      t.sizes[0] = 1;
  // describeCommon's tensors are q, k, v, o: k and v are pages.
  if (c.layout == SeqLayout::Paged)
    for (Tensor *t : {&c.tensors[1], &c.tensors[2]}) {
      t->sizes[0] = p.num_pages;
      t->sizes[2] = p.page_size;
    }
  addOptionalTensors(c, kOutput);
  return c;
}

/// The serving fields of a forward call: which combinations exist, and
/// their sizes.
Status validateServing(const Call &c) {
  if (c.layout == SeqLayout::Dense) {
    if (c.maxSeqlenQ || c.pageSize || c.numPages)
      return invalid("max_seqlen_q, page_size and num_pages must be 0 "
                     "without cu_seqlens or block_table");
    if (c.numSplits > 1)
      return invalid("num_splits " + std::to_string(c.numSplits) +
                     ": split-KV needs a KV cache (seqlens_k)");
    return Status::ok();
  }
  std::string form = layoutName(c.layout);
  if (c.bias)
    return invalid("bias is not supported with the " + form +
                   " form (cu_seqlens, seqlens_k or block_table)");
  const std::pair<const char *, const int32_t *> arrays[] = {
      {"cu_seqlens_q", c.cuSeqlensQ},
      {"cu_seqlens_k", c.cuSeqlensK},
      {"seqlens_k", c.seqlensK},
      {"block_table", c.blockTable}};
  for (const auto &[name, ptr] : arrays)
    if (reinterpret_cast<uintptr_t>(ptr) % 4)
      return invalid(std::string(name) + " pointer " + hex(ptr) +
                     " is not 4-byte aligned");
  if (c.layout == SeqLayout::Varlen) {
    if (!c.cuSeqlensQ || !c.cuSeqlensK)
      return invalid(
          std::string(c.cuSeqlensQ ? "cu_seqlens_k" : "cu_seqlens_q") +
          " is a null pointer; cu_seqlens_q and cu_seqlens_k come "
          "together");
    if (c.maxSeqlenQ < 0 || c.maxSeqlenQ > c.seqlenQ)
      return invalid("max_seqlen_q " + std::to_string(c.maxSeqlenQ) +
                     " must be in [0, seqlen_q = " + std::to_string(c.seqlenQ) +
                     "] (0: seqlen_q)");
  } else if (c.cuSeqlensQ || c.cuSeqlensK) {
    return invalid("seqlens_k is not supported with cu_seqlens (a packed "
                   "batch has its key offsets)");
  } else if (c.maxSeqlenQ) {
    return invalid("max_seqlen_q must be 0 without cu_seqlens");
  }
  if (c.numSplits < 0 || c.numSplits > kMaxSplits)
    return invalid("num_splits " + std::to_string(c.numSplits) +
                   " must be in [0, " + std::to_string(kMaxSplits) +
                   "] (0: chosen by the runtime)");
  if (c.numSplits > 1 && c.layout != SeqLayout::KVCache &&
      c.layout != SeqLayout::Paged)
    return invalid("num_splits " + std::to_string(c.numSplits) +
                   ": split-KV needs a KV cache (seqlens_k)");
  if (int64_t(c.batch) * std::max(c.numSplits, 1) > 65535)
    return invalid("batch x num_splits must be at most 65535 (grid limit)");
  if (c.layout != SeqLayout::Paged) {
    if (c.pageSize || c.numPages)
      return invalid("page_size and num_pages must be 0 without block_table");
    return Status::ok();
  }
  if (c.pageSize <= 0 || c.numPages <= 0)
    return invalid(
        "block_table needs a positive page_size and num_pages, got " +
        std::to_string(c.pageSize) + " and " + std::to_string(c.numPages));
  if (c.seqlenK % c.pageSize)
    return invalid("seqlen_k " + std::to_string(c.seqlenK) +
                   " must be the pages per batch times page_size " +
                   std::to_string(c.pageSize));
  if (c.batch > 1 && c.blockTableStride < c.seqlenK / c.pageSize)
    return invalid("block_table_stride " + std::to_string(c.blockTableStride) +
                   " is below the pages per batch (" +
                   std::to_string(c.seqlenK / c.pageSize) + ")");
  return Status::ok();
}

Call describe(const attn_bwd_params &p) {
  Call c = describeCommon(p);
  c.backward = true;
  c.deterministic = p.deterministic != 0;
  c.dbias = p.dbias;
  c.dbiasStride = p.dbias_stride;
  int64_t elem = dtypeSize(p.dtype);
  int64_t b = p.batch, hq = p.heads_q, hkv = p.heads_kv;
  int64_t sq = p.seqlen_q, sk = p.seqlen_k;
  unsigned in = kData | kConditioned, out = in | kOutput;
  c.tensors.push_back(makeTensor("dout", p.dout, {b, hq, sq, p.head_dim_v},
                                 p.do_stride, elem, in));
  c.tensors.push_back(
      makeTensor("dq", p.dq, {b, hq, sq, p.head_dim}, p.dq_stride, elem, out));
  c.tensors.push_back(
      makeTensor("dk", p.dk, {b, hkv, sk, p.head_dim}, p.dk_stride, elem, out));
  c.tensors.push_back(makeTensor("dv", p.dv, {b, hkv, sk, p.head_dim_v},
                                 p.dv_stride, elem, out));
  addOptionalTensors(c, 0);
  return c;
}

/// Whether the tensor's elements fill its footprint exactly (a permutation
/// of a contiguous layout), so that byte ranges decide overlap.
bool isDense(const Tensor &t) {
  std::vector<std::pair<int64_t, int64_t>> dims; // (stride, size)
  for (int i = 0; i < 4; ++i)
    if (t.sizes[i] > 1)
      dims.push_back({t.strides[i], t.sizes[i]});
  std::sort(dims.begin(), dims.end());
  int64_t expected = 1;
  for (auto [stride, size] : dims) {
    if (stride != expected)
      return false;
    expected *= size;
  }
  return true;
}

/// One past the last byte of the tensor, from its base pointer.
uint64_t footprint(const Tensor &t) {
  uint64_t last = 0;
  for (int i = 0; i < 4; ++i)
    last += uint64_t(t.sizes[i] - 1) * uint64_t(t.strides[i]);
  return (last + 1) * uint64_t(t.elemBytes);
}

/// Two tensors share memory when they start at the same address, or when
/// both are dense and their byte ranges intersect. Interleaved views (q, k
/// and v of one packed tensor) are not dense and are taken as disjoint:
/// telling them apart exactly is an integer program, and torch's own
/// overlap check gives up on them the same way.
bool overlaps(const Tensor &a, const Tensor &b) {
  if (a.ptr == b.ptr)
    return true;
  if (!isDense(a) || !isDense(b))
    return false;
  uintptr_t a0 = reinterpret_cast<uintptr_t>(a.ptr);
  uintptr_t b0 = reinterpret_cast<uintptr_t>(b.ptr);
  return a0 < b0 + footprint(b) && b0 < a0 + footprint(a);
}

Status checkOverlaps(const std::vector<Tensor> &tensors) {
  for (size_t i = 0; i < tensors.size(); ++i)
    for (size_t j = 0; j < tensors.size(); ++j)
      if (i != j && tensors[i].is(kOutput) &&
          (j > i || !tensors[j].is(kOutput)) &&
          overlaps(tensors[i], tensors[j]))
        return invalid(std::string(tensors[i].name) + " (at " +
                       hex(tensors[i].ptr) + ") overlaps " + tensors[j].name +
                       " (at " + hex(tensors[j].ptr) +
                       "): an output must not share memory with another "
                       "tensor of the call");
  return Status::ok();
}

Status validate(const Call &c) {
  const std::pair<const char *, int32_t> dims[] = {
      {"batch", c.batch},        {"heads_q", c.headsQ},
      {"heads_kv", c.headsKv},   {"seqlen_q", c.seqlenQ},
      {"seqlen_k", c.seqlenK},   {"head_dim", c.headDim},
      {"head_dim_v", c.headDimV}};
  for (const auto &[name, value] : dims)
    if (value <= 0)
      return invalid(std::string(name) + " must be positive, got " +
                     std::to_string(value));
  if (c.headsQ % c.headsKv != 0)
    return invalid("heads_q (" + std::to_string(c.headsQ) +
                   ") must be a multiple of heads_kv (" +
                   std::to_string(c.headsKv) + ")");
  // Launch grids are (blocks, heads, batch); y and z are limited to 65535 on
  // both CUDA and HIP.
  if (c.headsQ > 65535 || c.batch > 65535)
    return invalid("heads_q and batch must be at most 65535 (grid limit), "
                   "got heads_q " +
                   std::to_string(c.headsQ) + ", batch " +
                   std::to_string(c.batch));
  if (dtypeSize(c.dtype) == 0)
    return invalid("dtype " + std::to_string(c.dtype) +
                   " is not an attn_dtype");
  if (c.mask < ATTN_MASK_NONE || c.mask > ATTN_MASK_SLIDING_WINDOW)
    return invalid("mask " + std::to_string(c.mask) + " is not an attn_mask");
  if (c.biasKind < ATTN_BIAS_NONE || c.biasKind > ATTN_BIAS_F32)
    return invalid("bias_kind " + std::to_string(c.biasKind) +
                   " is not an attn_bias_kind");

  for (const Tensor &t : c.tensors)
    if (t.is(kData) && !t.ptr)
      return invalid(std::string(t.name) + " is a null pointer");
  if (c.biasKind != ATTN_BIAS_NONE && !c.bias)
    return invalid(std::string("bias is a null pointer but bias_kind is ") +
                   biasName(c.biasKind));
  if (c.biasKind == ATTN_BIAS_NONE && c.bias)
    return invalid("bias is given but bias_kind is none");
  if (c.backward && !c.lse)
    return invalid("lse is a null pointer (the backward pass needs the "
                   "forward's logsumexp)");
  if (c.dbias && !c.bias)
    return invalid("dbias is given but there is no bias");

  for (const Tensor &t : c.tensors)
    if (t.is(kData) && reinterpret_cast<uintptr_t>(t.ptr) % t.elemBytes)
      return invalid(std::string(t.name) + " pointer " + hex(t.ptr) +
                     " is not aligned to its element size (" +
                     std::to_string(t.elemBytes) + " bytes)");
  if (reinterpret_cast<uintptr_t>(c.lse) % 4)
    return invalid("lse pointer " + hex(c.lse) + " is not 4-byte aligned");

  for (const Tensor &t : c.tensors) {
    if (!t.is(kData))
      continue;
    if (t.strides[3] != 1)
      return invalid(std::string(t.name) + " strides " + strides(t.strides, 4) +
                     ": the last (head) dimension must have stride 1");
    for (int i = 0; i < 3; ++i)
      if (t.strides[i] < 0)
        return invalid(std::string(t.name) + " strides " +
                       strides(t.strides, 4) + " must not be negative");
  }
  // Two output rows at one address would be written by two blocks at once.
  for (const Tensor &t : c.tensors)
    if (t.is(kData) && t.is(kOutput))
      for (int i = 0; i < 3; ++i)
        if (t.sizes[i] > 1 && t.strides[i] == 0)
          return invalid(std::string(t.name) + " strides " +
                         strides(t.strides, 4) +
                         ": stride 0 on a dimension of size > 1 makes "
                         "outputs overlap");
  if (c.lse) {
    const int64_t *s = c.lseStride;
    bool packed = c.layout == SeqLayout::Varlen;
    if (s[0] < 0 || s[1] < 0 || (!packed && c.batch > 1 && s[0] == 0) ||
        (c.headsQ > 1 && s[1] == 0))
      return invalid("lse strides " + strides(s, 2) +
                     " must be positive on dimensions of size > 1");
  }
  if (c.bias)
    for (int i = 0; i < 4; ++i)
      if (c.biasStride[i] < 0)
        return invalid("bias strides " + strides(c.biasStride, 4) +
                       " must not be negative");
  if (c.dbias) {
    const int64_t full[] = {c.batch, c.headsQ, c.seqlenQ, c.seqlenK};
    for (int i = 0; i < 4; ++i) {
      if (c.dbiasStride[i] < 0)
        return invalid("dbias strides " + strides(c.dbiasStride, 4) +
                       " must not be negative");
      // dbias is summed over its stride-0 dimensions: that is the gradient
      // only where the bias itself is broadcast.
      if (full[i] > 1 && c.dbiasStride[i] == 0 && c.biasStride[i] != 0)
        return invalid("dbias strides " + strides(c.dbiasStride, 4) +
                       " broadcast a dimension that bias strides " +
                       strides(c.biasStride, 4) + " do not");
    }
  }
  Status s = checkOverlaps(c.tensors);
  if (!s.isOk())
    return s;
  if (!(c.scale == c.scale))
    return invalid("scale is NaN");
  if (c.backward && !(std::fabs(c.scale) >= kMinBackwardScale &&
                      std::fabs(c.scale) <= FLT_MAX)) {
    char buf[96];
    std::snprintf(buf, sizeof(buf),
                  "scale: the backward takes a finite scale of magnitude at "
                  "least %g, got %g",
                  double(kMinBackwardScale), double(c.scale));
    return invalid(buf);
  }
  if (!(c.softcap >= 0))
    return invalid("softcap must be 0 (none) or positive, got " +
                   std::to_string(c.softcap));
  if (!(c.dropoutP >= 0 && c.dropoutP < 1))
    return invalid("dropout_p must be in [0, 1) (0: none), got " +
                   std::to_string(c.dropoutP));
  if (c.dropoutP > 0 && c.layout != SeqLayout::Dense)
    return invalid("dropout_p: dropout is for dense calls; the serving forms "
                   "(cu_seqlens, seqlens_k, block_table) take none");
  if (c.mask == ATTN_MASK_SLIDING_WINDOW && c.windowLeft < 0 &&
      c.windowRight < 0)
    return invalid("mask sliding_window needs window_left or window_right "
                   ">= 0 (both are unbounded)");
  return Status::ok();
}

std::string mismatch(const char *field, const std::string &bundle,
                     const std::string &call) {
  return std::string(field) + " is " + bundle + ", call has " + call;
}

const char *boolName(bool b) { return b ? "true" : "false"; }

/// The first field of `sig` the call does not match, then the first
/// condition that does not hold; empty when the call may run.
std::string whyNot(const Signature &sig, const Call &c) {
  if (sig.dtype != c.dtype)
    return mismatch("dtype", dtypeName(sig.dtype), dtypeName(c.dtype));
  auto dim = [&](int fixed) {
    return fixed ? std::to_string(fixed)
                 : "1.." + std::to_string(sig.maxHeadDim);
  };
  if (!sig.servesHeadDim(sig.headDim, c.headDim))
    return mismatch("head_dim", dim(sig.headDim), std::to_string(c.headDim));
  if (!sig.servesHeadDim(sig.headDimV, c.headDimV))
    return mismatch("head_dim_v", dim(sig.headDimV),
                    std::to_string(c.headDimV));
  if (sig.mask != c.mask)
    return mismatch("mask", maskName(sig.mask), maskName(c.mask));
  if (sig.bias != c.biasKind)
    return mismatch("bias", biasName(sig.bias), biasName(c.biasKind));
  bool softcap = c.softcap > 0;
  if (sig.softcap != softcap)
    return mismatch("softcap", boolName(sig.softcap), boolName(softcap));
  bool dropout = c.dropoutP > 0;
  if (sig.dropout != dropout)
    return mismatch("dropout", boolName(sig.dropout), boolName(dropout));
  return "";
}

std::string whyNotConditions(const Conditions &cond, const Call &c) {
  // Only the strides a kernel steps by whole rows count; the unit head stride
  // and the bias key stride are element steps. lse is read and written one
  // f32 at a time, so its alignment is not a condition.
  static const char *const kDimNames[] = {"b", "h", "s"};
  for (const Tensor &t : c.tensors) {
    if (!t.is(kConditioned))
      continue;
    bool own = t.is(kBias) && cond.biasAlignBytes;
    const char *condition = own ? "bias_align_bytes" : "align_bytes";
    int64_t align = own ? cond.biasAlignBytes : cond.alignBytes;
    if (reinterpret_cast<uintptr_t>(t.ptr) % align)
      return std::string(condition) + ": " + t.name + " pointer " + hex(t.ptr) +
             " is not " + std::to_string(align) + "-byte aligned";
    for (int i = 0; i < 3; ++i)
      if ((t.strides[i] * t.elemBytes) % align)
        return std::string(condition) + ": " + t.name + " stride_" +
               kDimNames[i] + " " + std::to_string(t.strides[i]) + " * " +
               std::to_string(t.elemBytes) + " bytes is not a multiple of " +
               std::to_string(align);
  }
  auto outside = [](const char *what, int value, int min, int max) {
    return std::string(what) + ": " + std::to_string(value) +
           " is outside the range it serves [" + std::to_string(min) + ", " +
           std::to_string(max) + "]";
  };
  if (c.seqlenQ < cond.seqlenQMin || c.seqlenQ > cond.seqlenQMax)
    return outside("seqlen_q", c.seqlenQ, cond.seqlenQMin, cond.seqlenQMax);
  if (c.seqlenK < cond.seqlenKMin || c.seqlenK > cond.seqlenKMax)
    return outside("seqlen_k", c.seqlenK, cond.seqlenKMin, cond.seqlenKMax);
  if (c.seqlenQ % cond.seqlenQMultiple)
    return "seqlen_q_multiple: seqlen_q " + std::to_string(c.seqlenQ) +
           " is not a multiple of " + std::to_string(cond.seqlenQMultiple);
  if (c.seqlenK % cond.seqlenKMultiple)
    return "seqlen_k_multiple: seqlen_k " + std::to_string(c.seqlenK) +
           " is not a multiple of " + std::to_string(cond.seqlenKMultiple);
  return "";
}

/// whyNot(sig, c) is empty, without building it.
bool sameSignature(const Signature &sig, const Call &c) {
  return sig.dtype == c.dtype && sig.servesHeadDims(c.headDim, c.headDimV) &&
         sig.mask == c.mask && sig.bias == c.biasKind &&
         sig.softcap == (c.softcap > 0) && sig.dropout == (c.dropoutP > 0);
}

/// whyNot(v, c) says nothing about the fields, without building it.
bool sameFields(const Variant &v, const Call &c) {
  return v.layout == c.layout && sameSignature(v, c);
}

std::string whyNot(const Variant &v, const Call &c) {
  if (v.layout != c.layout)
    return mismatch("layout", layoutName(v.layout), layoutName(c.layout));
  std::string why = whyNot(static_cast<const Signature &>(v), c);
  return why.empty() ? whyNotConditions(v.conditions, c) : why;
}

/// Why `v` cannot run on `device` (null: not checked), or "".
std::string whyNotOnDevice(const Variant &v, const DeviceInfo *device) {
  if (!device)
    return "";
  std::string why = whyNotDevice(v.kernel.chip, v.kernel.dynamicSmem, *device);
  return why.empty() ? why : "device: " + why;
}

/// Why `v`'s grid-fill condition does not hold for the call on `device`,
/// or "". Not checked (holds) without a device or its multiprocessor count:
/// it only decides speed.
std::string whyNotFill(const Variant &v, const attn_fwd_params &p,
                       const DeviceInfo *device) {
  int64_t need = v.conditions.gridMinBlocksPerSm;
  if (!need || !device || device->multiprocessors <= 0)
    return "";
  int64_t blocks = forwardGridX(v, p) * p.heads_q * p.batch;
  if (blocks >= need * device->multiprocessors)
    return "";
  return "grid_min_blocks_per_sm: " + std::to_string(blocks) +
         " workgroups on " + std::to_string(device->multiprocessors) +
         " multiprocessors, fewer than " + std::to_string(need) +
         " per multiprocessor";
}

/// Why `v`'s tensor maps (ABI attn-fwd-v2) cannot describe the call, or the
/// backend of `device` cannot encode them; "" when they can or `v` has
/// none. The backend is not checked without a device.
std::string whyNotTensorMaps(const Variant &v, const attn_fwd_params &p,
                             const DeviceInfo *device) {
  if (!v.tensorMaps)
    return "";
  TensorMapDescs maps = describeTensorMaps(v, p);
  for (int i = 0; i < kNumTensorMaps; ++i) {
    std::string why = whyNotTensorMap(kTensorMapNames[i], maps[i]);
    if (!why.empty())
      return why;
  }
  if (device && !device->tensorMaps)
    return "tensor maps: the driver cannot encode them (no "
           "cuTensorMapEncodeTiled)";
  return "";
}

/// The largest grid extents CUDA and HIP launch.
constexpr int64_t kMaxGrid[3] = {2147483647, 65535, 65535};

/// whyNot(plan, c, dims) says nothing about the fields, without building
/// it.
bool sameFields(const Plan &plan, const Call &c) {
  return sameSignature(plan, c) && plan.biasGrad == (c.dbias != nullptr) &&
         (plan.deterministic || !c.deterministic);
}

std::string whyNot(const Plan &plan, const Call &c, const DimValues &dims) {
  std::string why = whyNot(static_cast<const Signature &>(plan), c);
  if (!why.empty())
    return why;
  bool biasGrad = c.dbias != nullptr;
  if (plan.biasGrad != biasGrad)
    return mismatch("bias_grad", boolName(plan.biasGrad), boolName(biasGrad));
  if (c.deterministic && !plan.deterministic)
    return mismatch("deterministic", "false", "true");
  // A deterministic plan of a bundle older than version 8 writes dbias
  // directly: one summed over a broadcast dimension needs its dbias_full.
  if (plan.deterministic && plan.biasGrad && dims[int(Dim::BiasSummed)] &&
      std::none_of(
          plan.workspace.begin(), plan.workspace.end(),
          [](const WorkspaceBuffer &w) { return w.name == "dbias_full"; }))
    return "deterministic: the bias gradient is summed over a broadcast "
           "dimension, which this plan does not compute (no dbias_full "
           "buffer: a bundle older than version 8)";
  why = whyNotConditions(plan.conditions, c);
  if (!why.empty())
    return why;
  for (const Stage &stage : plan.stages)
    for (int i = 0; i < 3; ++i) {
      int64_t n = extentValue(stage.grid[i], dims);
      if (n > kMaxGrid[i])
        return "grid: stage '" + stage.name + "' needs " + "xyz"[i] +
               " extent " + std::to_string(n) + ", more than " +
               std::to_string(kMaxGrid[i]);
    }
  return "";
}

/// Why a stage of `plan` cannot run on `device` (null: not checked), or "".
std::string whyNotOnDevice(const Plan &plan, const DeviceInfo *device) {
  if (!device)
    return "";
  for (const Stage &stage : plan.stages) {
    std::string why =
        whyNotDevice(stage.kernel.chip, stage.kernel.dynamicSmem, *device);
    if (!why.empty())
      return "device: stage '" + stage.name + "' " + why;
  }
  return "";
}

std::string describeCall(const Call &c) {
  char call[320];
  int n = std::snprintf(
      call, sizeof(call),
      "dtype %s, head_dim %d, head_dim_v %d, mask %s, bias %s, softcap %s, "
      "dropout %s, ",
      dtypeName(c.dtype), c.headDim, c.headDimV, maskName(c.mask),
      biasName(c.biasKind), boolName(c.softcap > 0), boolName(c.dropoutP > 0));
  if (c.backward)
    n += std::snprintf(call + n, sizeof(call) - n,
                       "bias_grad %s, deterministic %s, ",
                       boolName(c.dbias != nullptr), boolName(c.deterministic));
  if (c.layout != SeqLayout::Dense)
    n += std::snprintf(call + n, sizeof(call) - n, "layout %s, ",
                       layoutName(c.layout));
  std::snprintf(call + n, sizeof(call) - n, "seqlen_q %d, seqlen_k %d",
                c.seqlenQ, c.seqlenK);
  return call;
}

} // namespace

Status attn::selectVariant(const BundleInfo &bundle,
                           const attn_fwd_params &params, int &index,
                           const std::string &forced, std::string *skipped,
                           const DeviceInfo *device) {
  index = -1;
  Call call = describe(params);
  Status s = validate(call);
  if (s.isOk())
    s = validateServing(call);
  if (!s.isOk())
    return s;
  // Every call dispatches: first find the variant without writing a reason
  // for each one passed over (most differ in a field), then write them
  // only for the dispatch log or the error.
  for (size_t i = 0; i < bundle.variants.size() && index < 0; ++i) {
    const Variant &v = bundle.variants[i];
    if ((forced.empty() || v.name == forced) && sameFields(v, call) &&
        whyNotConditions(v.conditions, call).empty() &&
        whyNotFill(v, params, device).empty() &&
        whyNotTensorMaps(v, params, device).empty() &&
        whyNotOnDevice(v, device).empty())
      index = int(i);
  }
  if (index >= 0 && !skipped)
    return Status::ok();
  std::string reasons;
  bool forcedFound = false;
  // Some variant fit the call but not this GPU: say that.
  bool deviceOnly = false;
  for (size_t i = 0; i < bundle.variants.size(); ++i) {
    const Variant &v = bundle.variants[i];
    if (!forced.empty() && v.name != forced)
      continue;
    forcedFound = true;
    if (int(i) == index) {
      *skipped = reasons;
      return Status::ok();
    }
    std::string why = whyNot(v, call);
    if (why.empty())
      why = whyNotFill(v, params, device);
    if (why.empty())
      why = whyNotTensorMaps(v, params, device);
    if (why.empty()) {
      why = whyNotOnDevice(v, device);
      deviceOnly |= !why.empty();
    }
    reasons += "\n  variant '" + v.name + "': " + why;
  }
  if (!forced.empty())
    return Status::error(
        ATTN_STATUS_NO_VARIANT,
        forcedFound
            ? "the forced variant '" + forced + "' of bundle '" + bundle.dir +
                  "' does not match the call (" + describeCall(call) +
                  "):" + reasons
            : "the forced variant '" + forced + "' is not in bundle '" +
                  bundle.dir + "' (set by ATTN_FORCE_VARIANT or "
                  "attn_bundle_force_variant)");
  if (bundle.variants.empty())
    reasons = " the bundle has no variants";
  if (deviceOnly)
    return Status::error(ATTN_STATUS_UNSUPPORTED_GPU,
                         "no variant of bundle '" + bundle.dir +
                             "' for the call (" + describeCall(call) +
                             ") runs on this GPU:" + reasons);
  return Status::error(ATTN_STATUS_NO_VARIANT,
                       "no variant of bundle '" + bundle.dir +
                           "' matches the call (" + describeCall(call) +
                           "):" + reasons);
}

Status attn::selectPlan(const BundleInfo &bundle, const attn_bwd_params &params,
                        int &index, const DeviceInfo *device) {
  index = -1;
  Call call = describe(params);
  Status s = validate(call);
  if (!s.isOk())
    return s;
  DimValues dims = dimValues(params);
  // Every call selects: first find the plan without writing a reason for
  // each one passed over (a bundle holds hundreds, most differing in a
  // field: writing them took 250 us a call on the H100's host), then write
  // them only for the error.
  int fallback = -1;
  for (size_t i = 0; i < bundle.plans.size(); ++i) {
    const Plan &plan = bundle.plans[i];
    if (!sameFields(plan, call) || !whyNot(plan, call, dims).empty() ||
        !whyNotOnDevice(plan, device).empty())
      continue;
    if (!plan.deterministic || call.deterministic) {
      index = int(i);
      return Status::ok();
    }
    if (fallback < 0)
      fallback = int(i);
  }
  if (fallback >= 0) {
    index = fallback;
    return Status::ok();
  }
  std::string reasons;
  // Some plan fit the call but not this GPU: say that.
  bool deviceOnly = false;
  for (size_t i = 0; i < bundle.plans.size(); ++i) {
    const Plan &plan = bundle.plans[i];
    std::string why = whyNot(plan, call, dims);
    if (why.empty()) {
      why = whyNotOnDevice(plan, device);
      deviceOnly |= !why.empty();
    }
    if (!why.empty())
      reasons += "\n  plan '" + plan.name + "': " + why;
  }
  if (bundle.plans.empty())
    reasons = " the bundle has no plans";
  // A deterministic call that only a plan with atomics serves: name it, as
  // the list shows that plan's one mismatch among every other plan's.
  std::string atomicOnly;
  if (call.deterministic) {
    Call atomic = call;
    atomic.deterministic = false;
    for (const Plan &plan : bundle.plans)
      if (!plan.deterministic && whyNot(plan, atomic, dims).empty() &&
          whyNotOnDevice(plan, device).empty()) {
        atomicOnly = "; no deterministic plan serves it, plan '" + plan.name +
                     "' with atomics does (deterministic = false)";
        break;
      }
  }
  if (deviceOnly)
    return Status::error(ATTN_STATUS_UNSUPPORTED_GPU,
                         "no plan of bundle '" + bundle.dir +
                             "' for the backward call (" + describeCall(call) +
                             ") runs on this GPU:" + reasons);
  return Status::error(
      ATTN_STATUS_NO_VARIANT,
      "no plan of bundle '" + bundle.dir + "' matches the backward call (" +
          describeCall(call) + ")" + atomicOnly + ":" + reasons);
}

int64_t attn::forwardGridX(const Variant &v, const attn_fwd_params &p) {
  // A packed batch's blocks cover its longest sequence; packed GQA heads
  // make G rows of each query.
  int64_t rows = v.layout == SeqLayout::Varlen && p.max_seqlen_q
                     ? p.max_seqlen_q
                     : p.seqlen_q;
  if (v.packGQA && p.heads_kv > 0)
    rows *= p.heads_q / p.heads_kv;
  return (rows + v.blockM - 1) / v.blockM;
}

int64_t attn::forwardGridY(const Variant &v, const attn_fwd_params &p) {
  return v.packGQA ? p.heads_kv : p.heads_q;
}

int attn::packedRowBlocksPerWorkgroup(const Variant &v,
                                      const attn_fwd_params &p,
                                      int multiprocessors) {
  // Measured on the H100 (bench/RESULTS.md, 2026-11-27): 32 x 512 at
  // D = 128 0.86 -> 0.91-0.92 of the dense batch; at D = 256, whose tiles
  // do twice the work, 2-6% lost, and three or more blocks a workgroup lost
  // at D = 128 too. Unequal lengths keep a workgroup a block: a long
  // sequence's blocks would serialize.
  if (!v.tensorMaps || v.layout != SeqLayout::Varlen || multiprocessors <= 0 ||
      std::max(v.headDim, v.maxHeadDim) > kPackedPairMaxHeadDim ||
      !p.max_seqlen_q || int64_t(p.batch) * p.max_seqlen_q != p.seqlen_q)
    return 1;
  int64_t gridX = forwardGridX(v, p);
  int64_t halved = (gridX + 1) / 2 * forwardGridY(v, p) * p.batch;
  return gridX >= 2 && halved >= kPackedPairMinWaves * multiprocessors ? 2 : 1;
}

int attn::chooseSplits(const Variant &v, const attn_fwd_params &p,
                       int multiprocessors) {
  if (!v.canSplit() || p.num_splits == 1)
    return 1;
  int64_t keyBlocks = (int64_t(p.seqlen_k) + v.blockN - 1) / v.blockN;
  int64_t most = std::min<int64_t>({kMaxSplits, keyBlocks, 65535 / p.batch});
  if (p.num_splits > 1)
    return int(std::min<int64_t>(p.num_splits, std::max<int64_t>(most, 1)));
  // FlashAttention-2's heuristic: no split when one wave (nearly) fills the
  // GPU; else the fewest splits whose waves are within 95% of the best fill
  // (FlashAttention-2 says 85%), among split counts that give different
  // blocks per split. At 85% an 8-workgroup grid took 14 splits (112 of 132
  // SMs) where 16 read 2912 GB/s against 2515 (bench/RESULTS.md).
  int64_t blocks = forwardGridX(v, p) * forwardGridY(v, p) * p.batch;
  if (multiprocessors <= 0 || blocks * 10 >= multiprocessors * 8)
    return 1;
  auto efficiency = [&](int64_t s) {
    double waves = double(blocks * s) / multiprocessors;
    return waves / std::ceil(waves);
  };
  auto distinct = [&](int64_t s) {
    auto chunk = [&](int64_t n) { return (keyBlocks + n - 1) / n; };
    return s == 1 || chunk(s) != chunk(s - 1);
  };
  double best = 0;
  for (int64_t s = 1; s <= most; ++s)
    if (distinct(s))
      best = std::max(best, efficiency(s));
  for (int64_t s = 1; s <= most; ++s) {
    if (!distinct(s) || efficiency(s) < 0.95 * best)
      continue;
    // More than 64 splits of one key block each: the combine, whose cost
    // grows with the splits (about 7 us at 128 on the H100), outweighs a
    // block; splits of two blocks read 1.06x faster at B = 1, Sk = 16k
    // (at 64 splits of one block, or with two blocks a split, the first
    // choice measured best; bench/logs/2026-11-26-decode-forced-splits*).
    if (s > kMaxOneBlockSplits && keyBlocks <= s)
      return int((keyBlocks + 1) / 2);
    return int(s);
  }
  return 1;
}

size_t attn::splitWorkspaceBytes(const attn_fwd_params &p, int splits) {
  if (splits <= 1)
    return 0;
  // Partial outputs [splits, B, Hq, Sq, Dv] f32, then the partial lse
  // [splits, B, Hq, Sq] f32 at the next 256 bytes (CombineKernel.cpp).
  uint64_t rows = uint64_t(splits) * p.batch * p.heads_q * p.seqlen_q;
  uint64_t out = rows * p.head_dim_v * 4;
  out = (out + kWorkspaceAlignment - 1) / kWorkspaceAlignment *
        kWorkspaceAlignment;
  return size_t(out + rows * 4);
}

/// The caller's workspace of a forward or backward call: present, at least
/// `bytes` (`need` says who needs them), aligned, and sharing no memory with
/// the call's tensors.
template <typename P>
static Status checkWorkspaceOf(const P &p, size_t bytes,
                               const std::string &need) {
  if (!p.workspace)
    return invalid("workspace is a null pointer but " + need);
  if (p.workspace_size < bytes)
    return invalid("workspace_size is " + std::to_string(p.workspace_size) +
                   " bytes but " + need);
  if (reinterpret_cast<uintptr_t>(p.workspace) % kWorkspaceAlignment)
    return invalid("workspace pointer " + hex(p.workspace) + " is not " +
                   std::to_string(kWorkspaceAlignment) + "-byte aligned");
  Call call = describe(p);
  const int64_t byteStride[4] = {0, 0, 0, 1};
  call.tensors.push_back(makeTensor("workspace", p.workspace,
                                    {1, 1, 1, int64_t(bytes)}, byteStride, 1,
                                    kOutput));
  return checkOverlaps(call.tensors);
}

Status attn::checkSplitWorkspace(const attn_fwd_params &p, size_t bytes) {
  return checkWorkspaceOf(p, bytes,
                          "split-KV needs " + std::to_string(bytes) +
                              " bytes of workspace "
                              "(attn_forward_workspace_size)");
}

DimValues attn::dimValues(const attn_bwd_params &p) {
  DimValues d{};
  d[int(Dim::Batch)] = p.batch;
  d[int(Dim::HeadsQ)] = p.heads_q;
  d[int(Dim::HeadsKv)] = p.heads_kv;
  d[int(Dim::SeqlenQ)] = p.seqlen_q;
  d[int(Dim::SeqlenQ64)] = (int64_t(p.seqlen_q) + 63) / 64 * 64;
  d[int(Dim::SeqlenK)] = p.seqlen_k;
  d[int(Dim::HeadDim)] = p.head_dim;
  d[int(Dim::HeadDim64)] = (int64_t(p.head_dim) + 63) / 64 * 64;
  d[int(Dim::HeadDimV)] = p.head_dim_v;
  // The summed bias gradient's extents: 1 on a dimension dbias is summed
  // over (stride 0), else the full size. When nothing is summed the kernels
  // write dbias directly: all are 0, so that the accumulation buffer and the
  // stages sized by them vanish.
  if (!p.dbias)
    return d;
  const int64_t full[] = {p.batch, p.heads_q, p.seqlen_q, p.seqlen_k};
  const Dim biasDims[] = {Dim::BiasBatch, Dim::BiasHeads, Dim::BiasSeqlenQ,
                          Dim::BiasSeqlenK};
  bool summed = false;
  for (int i = 0; i < 4; ++i) {
    bool broadcast = p.dbias_stride[i] == 0 && full[i] > 1;
    d[int(biasDims[i])] = broadcast ? 1 : full[i];
    summed |= broadcast;
  }
  if (!summed)
    for (Dim dim : biasDims)
      d[int(dim)] = 0;
  d[int(Dim::BiasSummed)] = summed;
  return d;
}

int64_t attn::extentValue(const Extent &e, const DimValues &dims) {
  if (e.isConstant)
    return e.value;
  return (dims[int(e.dim)] + e.block - 1) / e.block;
}

Status attn::workspaceSize(const Plan &plan, const DimValues &dims,
                           size_t &bytes) {
  uint64_t end = 0;
  for (const WorkspaceBuffer &buffer : plan.workspace) {
    uint64_t offset = (end + kWorkspaceAlignment - 1) / kWorkspaceAlignment *
                      kWorkspaceAlignment;
    uint64_t size = uint64_t(buffer.elementSize);
    for (Dim dim : buffer.dims)
      if (__builtin_mul_overflow(size, uint64_t(dims[int(dim)]), &size))
        size = UINT64_MAX;
    if (offset < end || __builtin_add_overflow(offset, size, &end) ||
        end > uint64_t(SIZE_MAX))
      return invalid("the workspace of plan '" + plan.name +
                     "' overflows 64 bits at buffer '" + buffer.name + "'");
  }
  bytes = size_t(end);
  return Status::ok();
}

Status attn::checkWorkspace(const Plan &plan, const attn_bwd_params &p,
                            size_t bytes) {
  if (bytes == 0)
    return Status::ok();
  return checkWorkspaceOf(p, bytes,
                          "plan '" + plan.name + "' needs " +
                              std::to_string(bytes) + " bytes");
}
