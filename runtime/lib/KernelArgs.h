//===- KernelArgs.h - Kernel arguments of ABI attn-fwd-v1 -----------------===//
//
// The 33 arguments of every forward kernel, in the order and with the sizes
// docs/BundleFormat.md gives, plus the array of pointers to them that
// cuLaunchKernel / hipModuleLaunchKernel take.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_KERNELARGS_H
#define ATTN_RUNTIME_KERNELARGS_H

#include "attn_runtime.h"

#include <cstdint>

namespace attn {

// The ABI passes pointers as 8 bytes; a 32-bit host would pack them wrongly.
static_assert(sizeof(void *) == 8, "attn-fwd-v1 needs 64-bit pointers");

class KernelArgs {
public:
  static constexpr int kNumArgs = 33;

  explicit KernelArgs(const attn_fwd_params &p)
      : q(p.q), k(p.k), v(p.v), o(p.o), lse(p.lse), bias(p.bias),
        batch(p.batch), headsQ(p.heads_q), headsKv(p.heads_kv),
        seqlenQ(p.seqlen_q), seqlenK(p.seqlen_k), scale(p.scale),
        softcap(p.softcap), windowLeft(p.window_left),
        windowRight(p.window_right) {
    for (int i = 0; i < 3; ++i) {
      strides[i] = p.q_stride[i];
      strides[3 + i] = p.k_stride[i];
      strides[6 + i] = p.v_stride[i];
      strides[9 + i] = p.o_stride[i];
    }
    strides[12] = p.lse_stride[0];
    strides[13] = p.lse_stride[1];
    for (int i = 0; i < 4; ++i)
      strides[14 + i] = p.bias_stride[i];

    int n = 0;
    slots[n++] = &q;
    slots[n++] = &k;
    slots[n++] = &v;
    slots[n++] = &o;
    slots[n++] = &lse;
    slots[n++] = &bias;
    for (int32_t *dim : {&batch, &headsQ, &headsKv, &seqlenQ, &seqlenK})
      slots[n++] = dim;
    for (int64_t &stride : strides)
      slots[n++] = &stride;
    slots[n++] = &scale;
    slots[n++] = &softcap;
    slots[n++] = &windowLeft;
    slots[n++] = &windowRight;
  }

  // `slots` points into the object itself.
  KernelArgs(const KernelArgs &) = delete;
  KernelArgs &operator=(const KernelArgs &) = delete;

  void **data() { return slots; }

private:
  const void *q, *k, *v;
  void *o;
  float *lse;
  const void *bias;
  int32_t batch, headsQ, headsKv, seqlenQ, seqlenK;
  /// q, k, v, o strides (b, h, s), lse (b, h), bias (b, h, q, k).
  int64_t strides[18];
  float scale, softcap;
  int32_t windowLeft, windowRight;
  void *slots[kNumArgs];
};

} // namespace attn

#endif // ATTN_RUNTIME_KERNELARGS_H
