//===- KernelArgs.h - Argument blocks of ABIs attn-fwd-v1 and attn-bwd-v1 -===//
//
// The arguments of a kernel, in the order and with the sizes
// docs/BundleFormat.md gives, plus the array of pointers to them that
// cuLaunchKernel / hipModuleLaunchKernel take: 33 for every forward kernel
// (42 for those of the serving layouts, 35 for dynamic head dims, 38 with
// dropout), 55 for every stage of a backward plan (58 with dropout). ABI
// attn-fwd-v2 appends the three tensor maps (36, 38 or 41). The pointer array
// ends with a null entry, which the drivers ignore and the test fakes count
// the arguments by.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_KERNELARGS_H
#define ATTN_RUNTIME_KERNELARGS_H

#include "TensorMaps.h"
#include "attn_runtime.h"

#include <cstdint>
#include <cstring>

namespace attn {

// The ABIs pass pointers as 8 bytes; a 32-bit host would pack them wrongly.
static_assert(sizeof(void *) == 8, "the kernel ABIs need 64-bit pointers");

class KernelArgs {
public:
  static constexpr int kNumForwardArgs = 33;
  static constexpr int kNumServingArgs = 42;
  static constexpr int kNumAnyHeadDimArgs = 35;
  static constexpr int kNumDropoutArgs = 38;
  static constexpr int kNumBackwardArgs = 55;
  static constexpr int kNumDropoutBackwardArgs = 58;

  /// ABI attn-fwd-v1; `serving` appends the nine arguments of the serving
  /// layouts' kernels, with `numSplits` splits; `anyHeadDim` (a dense
  /// variant with max_head_dim) appends head_dim and head_dim_v, `dropout`
  /// (a dense variant with dropout) those and dropout_p, seed and offset.
  KernelArgs(const attn_fwd_params &p, bool serving, int32_t numSplits = 1,
             bool anyHeadDim = false, bool dropout = false) {
    for (const void *ptr : {p.q, p.k, p.v, static_cast<const void *>(p.o),
                            static_cast<const void *>(p.lse), p.bias})
      add(ptr);
    addDims(p);
    for (const int64_t *s : {p.q_stride, p.k_stride, p.v_stride, p.o_stride})
      addStrides(s, 3);
    addStrides(p.lse_stride, 2);
    addStrides(p.bias_stride, 4);
    addTail(p);
    if ((anyHeadDim || dropout) && !serving) {
      add(p.head_dim);
      add(p.head_dim_v);
    }
    if (dropout && !serving)
      addDropout(p);
    if (!serving)
      return;
    for (const int32_t *array :
         {p.cu_seqlens_q, p.cu_seqlens_k, p.seqlens_k, p.block_table})
      add(static_cast<const void *>(array));
    add(p.block_table_stride);
    add(p.page_size);
    add(p.num_pages);
    add(numSplits > 1 ? p.workspace : nullptr);
    add(numSplits);
  }

  /// ABI attn-bwd-v1; `dropout` (a plan with dropout) appends dropout_p,
  /// seed and offset.
  explicit KernelArgs(const attn_bwd_params &p, bool dropout = false) {
    for (const void *ptr :
         {p.q, p.k, p.v, p.o, p.dout, static_cast<const void *>(p.lse), p.bias,
          static_cast<const void *>(p.dq), static_cast<const void *>(p.dk),
          static_cast<const void *>(p.dv), static_cast<const void *>(p.dbias),
          static_cast<const void *>(p.workspace)})
      add(ptr);
    addDims(p);
    for (const int64_t *s :
         {p.q_stride, p.k_stride, p.v_stride, p.o_stride, p.do_stride,
          p.dq_stride, p.dk_stride, p.dv_stride})
      addStrides(s, 3);
    addStrides(p.lse_stride, 2);
    addStrides(p.bias_stride, 4);
    addStrides(p.dbias_stride, 4);
    addTail(p);
    if (dropout)
      addDropout(p);
  }

  /// ABI attn-fwd-v2: the q, k and v maps, each passed by value (the slot
  /// points to the 128 bytes).
  void addTensorMaps(const TensorMap *encoded) {
    for (int i = 0; i < kNumTensorMaps; ++i) {
      maps[i] = encoded[i];
      slots[count++] = &maps[i];
    }
  }

  // `slots` points into the object itself.
  KernelArgs(const KernelArgs &) = delete;
  KernelArgs &operator=(const KernelArgs &) = delete;

  void **data() { return slots; }
  int size() const { return count; }

private:
  /// Stores one argument in its own 8-byte cell, at offset 0 of the cell.
  template <typename T> void add(T value) {
    static_assert(sizeof(T) <= sizeof(uint64_t));
    std::memcpy(&cells[count], &value, sizeof(T));
    slots[count] = &cells[count];
    ++count;
  }

  template <typename P> void addDims(const P &p) {
    for (int32_t dim : {p.batch, p.heads_q, p.heads_kv, p.seqlen_q, p.seqlen_k})
      add(dim);
  }

  void addStrides(const int64_t *s, int n) {
    for (int i = 0; i < n; ++i)
      add(s[i]);
  }

  template <typename P> void addTail(const P &p) {
    add(p.scale);
    add(p.softcap);
    add(p.window_left);
    add(p.window_right);
  }

  template <typename P> void addDropout(const P &p) {
    add(p.dropout_p);
    add(p.dropout_seed);
    add(p.dropout_offset);
  }

  int count = 0;
  uint64_t cells[kNumDropoutBackwardArgs];
  TensorMap maps[kNumTensorMaps];
  /// Null past the last argument.
  void *slots[kNumDropoutBackwardArgs + 1] = {};
};

} // namespace attn

#endif // ATTN_RUNTIME_KERNELARGS_H
