#!/usr/bin/env python3
"""Builds a reference bundle: naive but exact attn-fwd-v1 kernels and
attn-bwd-v1 backward plans.

The kernels are plain CUDA C++ compiled with nvcc into cubins (one per dtype,
head dims and mask, built in parallel); bundle.json (version 2) lists one forward
variant per (dtype, head dims, mask, bias, softcap) and two backward plans per
(dtype, head dims, mask, bias, bias_grad, softcap): an atomic one and a
deterministic one. They are slow on purpose: they let the runtime, the Python
module (autograd included) and the GPU tests be checked end to end on a GPU
without the compiler's bundles, and they pin down the ABIs, the mask semantics
and the plans' workspace conventions of docs/BundleFormat.md in code.

Forward: one thread per query row, online softmax in f32.

Backward, atomic plan (the design's three stages, plus the bias gradient's):
  pre_atomic     delta = rowsum(dO * O) into the workspace; zeroes dq_accum
  zero_dbias     zeroes dbias_accum (only when dbias is summed over a
                 broadcast dimension; its grid is empty otherwise)
  main           one thread per key row j of a kv head: dk, dv over the
                 query heads of its group; atomically adds dq into dq_accum
                 and dbias into dbias_accum (or writes dbias directly)
  convert_dq     dq = dq_accum in q's dtype
  convert_dbias  dbias = dbias_accum in the bias's dtype (summed case only)
Deterministic plan (no atomics):
  pre_det        delta
  main_kv        dk, dv as above
  main_q         one thread per query row: dq; dbias when written directly
  sum_dbias      one thread per row of the summed dbias, in a fixed order

    python3 test/GPU/reference_bundle.py OUT_DIR [--arch sm_90] [--nvcc PATH]
    python3 test/GPU/reference_bundle.py --host-check DIR [--cxx g++]

--host-check compiles the backward stage bodies for the host (float, small
head dims) with the plans' own stage lists and grids, runs every plan on
random inputs and compares the gradients with central finite differences of
the forward in double precision: the math and the plans are checked without
a GPU. It prints "N passed, N failed" and exits 1 on a failure.
"""

import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys

DTYPES = {"f16": "__half", "bf16": "__nv_bfloat16"}
MASKS = ["none", "causal", "causal_bottom_right", "sliding_window"]
BIAS_KINDS = ["none", "same", "f32"]
# (head_dim, head_dim_v); D != Dv only for bf16 and f16 without mask or bias.
HEAD_DIMS = [(64, 64), (128, 128), (64, 128)]
BLOCK_M = 64

COMMON = r"""
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <math_constants.h>
#include <stddef.h>

#define HD __host__ __device__
// Stage bodies are compiled once per (dtype, head dims) and called by thin
// entry points, which keeps nvcc fast; the host check needs no such thing.
#ifdef __CUDACC__
#define NOINLINE __noinline__
#else
#define NOINLINE
#endif

HD inline float toF(float x) { return x; }
HD inline float toF(__half x) { return __half2float(x); }
HD inline float toF(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> HD inline T fromF(float x);
template <> HD inline float fromF<float>(float x) { return x; }
template <> HD inline __half fromF<__half>(float x) {
  return __float2half(x);
}
template <> HD inline __nv_bfloat16 fromF<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);
}

// MASK: 0 none, 1 causal (j <= i), 2 causal_bottom_right (j <= i + Sk - Sq),
// 3 sliding_window (i + Sk - Sq - left <= j <= i + Sk - Sq + right; a
// negative side is unbounded).
HD inline bool visible(int mask, int i, int j, int Sq, int Sk, int wl,
                       int wr) {
  int diag = i + Sk - Sq;
  switch (mask) {
  case 1:
    return j <= i;
  case 2:
    return j <= diag;
  case 3:
    return (wl < 0 || j >= diag - wl) && (wr < 0 || j <= diag + wr);
  }
  return true;
}
"""

FORWARD = r"""
// BIAS: 0 none, 1 same dtype as q, 2 float32. softcap > 0 caps the scaled
// score before the bias (docs/AttnDialect.md); a variant without softcap is
// only chosen for calls with softcap 0.
template <typename T, int D, int DV, int MASK, int BIAS>
__device__ void fwd(const T *q, const T *k, const T *v, T *o, float *lse,
                    const void *bias, int B, int Hq, int Hkv, int Sq, int Sk,
                    long long qsb, long long qsh, long long qss,
                    long long ksb, long long ksh, long long kss,
                    long long vsb, long long vsh, long long vss,
                    long long osb, long long osh, long long oss,
                    long long lsb, long long lsh, long long bsb,
                    long long bsh, long long bsq, long long bsk, float scale,
                    float softcap, int wl, int wr) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int h = blockIdx.y, b = blockIdx.z;
  if (i >= Sq)
    return;
  int hk = h / (Hq / Hkv);
  const T *qr = q + b * qsb + h * qsh + i * qss;
  float qf[D], acc[DV];
  for (int d = 0; d < D; ++d)
    qf[d] = toF(qr[d]);
  for (int d = 0; d < DV; ++d)
    acc[d] = 0.f;
  float m = -CUDART_INF_F, l = 0.f;
  for (int j = 0; j < Sk; ++j) {
    if (!visible(MASK, i, j, Sq, Sk, wl, wr))
      continue;
    const T *kr = k + b * ksb + hk * ksh + j * kss;
    float s = 0.f;
    for (int d = 0; d < D; ++d)
      s += qf[d] * toF(kr[d]);
    s *= scale;
    if (softcap > 0.f)
      s = softcap * tanhf(s / softcap);
    if (BIAS) {
      long long off = b * bsb + h * bsh + i * bsq + j * bsk;
      s += BIAS == 1 ? toF(((const T *)bias)[off]) : ((const float *)bias)[off];
    }
    float mNew = fmaxf(m, s);
    float corr = __expf(m - mNew), p = __expf(s - mNew);
    l = l * corr + p;
    const T *vr = v + b * vsb + hk * vsh + j * vss;
    for (int d = 0; d < DV; ++d)
      acc[d] = acc[d] * corr + p * toF(vr[d]);
    m = mNew;
  }
  T *orow = o + b * osb + h * osh + i * oss;
  for (int d = 0; d < DV; ++d)
    orow[d] = fromF<T>(l > 0.f ? acc[d] / l : 0.f);
  if (lse)
    lse[b * lsb + h * lsh + i] = l > 0.f ? m + __logf(l) : -CUDART_INF_F;
}
"""

FORWARD_ENTRY = r"""
extern "C" __global__ void __launch_bounds__({block}) {name}(
    const {T} *q, const {T} *k, const {T} *v, {T} *o, float *lse,
    const void *bias, int B, int Hq, int Hkv, int Sq, int Sk, long long qsb,
    long long qsh, long long qss, long long ksb, long long ksh, long long kss,
    long long vsb, long long vsh, long long vss, long long osb, long long osh,
    long long oss, long long lsb, long long lsh, long long bsb, long long bsh,
    long long bsq, long long bsk, float scale, float softcap, int wl,
    int wr) {{
  fwd<{T}, {D}, {DV}, {mask}, {bias}>(q, k, v, o, lse, bias, B, Hq, Hkv, Sq,
      Sk, qsb, qsh, qss, ksb, ksh, kss, vsb, vsh, vss, osb, osh, oss, lsb,
      lsh, bsb, bsh, bsq, bsk, scale, softcap, wl, wr);
}}
"""

BACKWARD = r"""
// The 55 arguments of ABI attn-bwd-v1 (docs/BundleFormat.md), gathered.
struct BwdArgs {
  const void *q, *k, *v, *o, *dout;
  const float *lse;
  const void *bias;
  void *dq, *dk, *dv, *dbias;
  char *ws;
  int B, Hq, Hkv, Sq, Sk;
  long long qs[3], ks[3], vs[3], os[3], dos[3], dqs[3], dks[3], dvs[3];
  long long ls[2], bs[4], dbs[4];
  float scale, softcap;
  int wl, wr;
};

// The block and thread a stage body runs as: blockIdx and threadIdx on the
// GPU, loops in the host check.
struct Thread {
  int bx, by, bz, tx, bdim;
};

HD inline void addF(float *p, float v) {
#ifdef __CUDA_ARCH__
  atomicAdd(p, v);
#else
  *p += v;
#endif
}

HD inline long long off3(const long long *s, int b, int h, int i) {
  return b * s[0] + h * s[1] + i * s[2];
}

HD inline size_t align256(size_t x) { return (x + 255) / 256 * 256; }

// The workspace convention: buffers in the plan's order, each at the next
// multiple of 256 bytes. Atomic plans: delta f32 [B, Hq, Sq], dq_accum f32
// [B, Hq, Sq, D], dbias_accum f32 [bias dims]; deterministic plans: delta.
struct Workspace {
  float *delta, *dqAccum, *dbiasAccum;
};

HD inline Workspace workspace(const BwdArgs &a, int D, bool atomicPlan) {
  size_t deltaBytes = (size_t)a.B * a.Hq * a.Sq * 4;
  Workspace w = {(float *)a.ws, nullptr, nullptr};
  if (atomicPlan) {
    size_t dq = align256(deltaBytes);
    w.dqAccum = (float *)(a.ws + dq);
    w.dbiasAccum =
        (float *)(a.ws + align256(dq + (size_t)a.B * a.Hq * a.Sq * D * 4));
  }
  return w;
}

// The bias gradient's shape: dbias is summed over the dimensions of size > 1
// where its stride is 0; ext is then 1 there and the full size elsewhere.
struct BiasGrad {
  bool summed;
  int ext[4];
};

HD inline BiasGrad biasGrad(const BwdArgs &a) {
  int full[4] = {a.B, a.Hq, a.Sq, a.Sk};
  BiasGrad g;
  g.summed = false;
  for (int d = 0; d < 4; ++d) {
    bool bc = a.dbs[d] == 0 && full[d] > 1;
    g.ext[d] = bc ? 1 : full[d];
    g.summed = g.summed || bc;
  }
  return g;
}

// dbias_accum's index of the full position (b, h, i, j).
HD inline long long accumIndex(const BwdArgs &a, const BiasGrad &g, int b,
                               int h, int i, int j) {
  int c[4] = {b, h, i, j};
  long long idx = 0;
  for (int d = 0; d < 4; ++d)
    idx = idx * g.ext[d] + (a.dbs[d] == 0 ? 0 : c[d]);
  return idx;
}

HD inline long long biasOffset(const long long *s, int b, int h, int i,
                               int j) {
  return b * s[0] + h * s[1] + i * s[2] + j * s[3];
}

template <typename T>
HD inline float biasAt(const BwdArgs &a, int kind, long long off) {
  return kind == 1 ? toF(((const T *)a.bias)[off])
                   : ((const float *)a.bias)[off];
}

template <typename T>
HD inline void storeBias(const BwdArgs &a, int kind, long long off, float x) {
  if (kind == 1)
    ((T *)a.dbias)[off] = fromF<T>(x);
  else
    ((float *)a.dbias)[off] = x;
}

template <typename T, int D, int DV> struct Bwd {
  // P[b, h, i, j] = exp(s - lse) of the forward's score s, and dsc, the
  // derivative of s after the softcap by s before it. False when P is 0: the
  // key is masked, or the row had no visible key (lse = -inf).
  static HD bool prob(const BwdArgs &a, int mask, int biasKind, int b, int h,
                      int i, int j, float &p, float &dsc) {
    if (!visible(mask, i, j, a.Sq, a.Sk, a.wl, a.wr))
      return false;
    float lse = a.lse[b * a.ls[0] + h * a.ls[1] + i];
    if (!(lse > -HUGE_VALF))
      return false;
    int hk = h / (a.Hq / a.Hkv);
    const T *q = (const T *)a.q + off3(a.qs, b, h, i);
    const T *k = (const T *)a.k + off3(a.ks, b, hk, j);
    float s = 0.f;
    for (int d = 0; d < D; ++d)
      s += toF(q[d]) * toF(k[d]);
    s *= a.scale;
    dsc = 1.f;
    if (a.softcap > 0.f) {
      float t = tanhf(s / a.softcap);
      s = a.softcap * t;
      dsc = 1.f - t * t;
    }
    if (biasKind)
      s += biasAt<T>(a, biasKind, biasOffset(a.bs, b, h, i, j));
    p = expf(s - lse);
    return true;
  }

  // dS = P * (dO . v_j - delta_i): the gradient of the score (after the
  // softcap, where the bias is added).
  static HD float dScore(const BwdArgs &a, const Workspace &w, int b, int h,
                         int i, int j, float p) {
    int hk = h / (a.Hq / a.Hkv);
    const T *dO = (const T *)a.dout + off3(a.dos, b, h, i);
    const T *v = (const T *)a.v + off3(a.vs, b, hk, j);
    float dp = 0.f;
    for (int d = 0; d < DV; ++d)
      dp += toF(dO[d]) * toF(v[d]);
    return p * (dp - w.delta[((long long)b * a.Hq + h) * a.Sq + i]);
  }

  static NOINLINE HD void preprocess(const BwdArgs &a, Thread t,
                                         bool atomicPlan) {
    int i = t.bx * t.bdim + t.tx, h = t.by, b = t.bz;
    if (i >= a.Sq)
      return;
    Workspace w = workspace(a, D, atomicPlan);
    const T *o = (const T *)a.o + off3(a.os, b, h, i);
    const T *dO = (const T *)a.dout + off3(a.dos, b, h, i);
    float delta = 0.f;
    for (int d = 0; d < DV; ++d)
      delta += toF(dO[d]) * toF(o[d]);
    long long row = ((long long)b * a.Hq + h) * a.Sq + i;
    w.delta[row] = delta;
    if (atomicPlan)
      for (int d = 0; d < D; ++d)
        w.dqAccum[row * D + d] = 0.f;
  }

  // One thread per row of the summed bias gradient (atomic plans).
  static NOINLINE HD void zeroDbias(const BwdArgs &a, Thread t) {
    BiasGrad g = biasGrad(a);
    int i = t.bx * t.bdim + t.tx, h = t.by, b = t.bz;
    if (i >= g.ext[2])
      return;
    Workspace w = workspace(a, D, true);
    for (int j = 0; j < g.ext[3]; ++j)
      w.dbiasAccum[((((long long)b * g.ext[1]) + h) * g.ext[2] + i) *
                       g.ext[3] +
                   j] = 0.f;
  }

  // One thread per key row j of kv head hk: dk and dv over the query heads
  // of the group. Atomic plans also add dq (and a summed dbias) into the
  // workspace and write an unsummed dbias; deterministic ones leave both.
  static NOINLINE HD void mainKv(const BwdArgs &a, Thread t, int mask,
                                     int biasKind, bool biasGradient,
                                     bool atomicPlan) {
    int j = t.bx * t.bdim + t.tx, hk = t.by, b = t.bz;
    if (j >= a.Sk)
      return;
    Workspace w = workspace(a, D, atomicPlan);
    BiasGrad g = biasGrad(a);
    const T *kr = (const T *)a.k + off3(a.ks, b, hk, j);
    float kf[D], dk[D], dv[DV];
    for (int d = 0; d < D; ++d) {
      kf[d] = toF(kr[d]);
      dk[d] = 0.f;
    }
    for (int d = 0; d < DV; ++d)
      dv[d] = 0.f;
    int group = a.Hq / a.Hkv;
    for (int h = hk * group; h < (hk + 1) * group; ++h)
      for (int i = 0; i < a.Sq; ++i) {
        float p = 0.f, dsc = 0.f, ds = 0.f;
        bool live = prob(a, mask, biasKind, b, h, i, j, p, dsc);
        if (live) {
          ds = dScore(a, w, b, h, i, j, p);
          const T *dO = (const T *)a.dout + off3(a.dos, b, h, i);
          const T *q = (const T *)a.q + off3(a.qs, b, h, i);
          for (int d = 0; d < DV; ++d)
            dv[d] += p * toF(dO[d]);
          float dx = ds * dsc * a.scale;
          long long row = ((long long)b * a.Hq + h) * a.Sq + i;
          for (int d = 0; d < D; ++d) {
            dk[d] += dx * toF(q[d]);
            if (atomicPlan)
              addF(&w.dqAccum[row * D + d], dx * kf[d]);
          }
        }
        if (!atomicPlan || !biasGradient)
          continue;
        if (!g.summed)
          storeBias<T>(a, biasKind, biasOffset(a.dbs, b, h, i, j), ds);
        else if (live)
          addF(&w.dbiasAccum[accumIndex(a, g, b, h, i, j)], ds);
      }
    T *dkr = (T *)a.dk + off3(a.dks, b, hk, j);
    T *dvr = (T *)a.dv + off3(a.dvs, b, hk, j);
    for (int d = 0; d < D; ++d)
      dkr[d] = fromF<T>(dk[d]);
    for (int d = 0; d < DV; ++d)
      dvr[d] = fromF<T>(dv[d]);
  }

  static NOINLINE HD void convertDq(const BwdArgs &a, Thread t) {
    int i = t.bx * t.bdim + t.tx, h = t.by, b = t.bz;
    if (i >= a.Sq)
      return;
    Workspace w = workspace(a, D, true);
    long long row = ((long long)b * a.Hq + h) * a.Sq + i;
    T *dq = (T *)a.dq + off3(a.dqs, b, h, i);
    for (int d = 0; d < D; ++d)
      dq[d] = fromF<T>(w.dqAccum[row * D + d]);
  }

  // One thread per row of the summed bias gradient (atomic plans).
  static NOINLINE HD void convertDbias(const BwdArgs &a, Thread t,
                                           int biasKind) {
    BiasGrad g = biasGrad(a);
    int i = t.bx * t.bdim + t.tx, h = t.by, b = t.bz;
    if (i >= g.ext[2])
      return;
    Workspace w = workspace(a, D, true);
    for (int j = 0; j < g.ext[3]; ++j)
      storeBias<T>(a, biasKind, biasOffset(a.dbs, b, h, i, j),
                   w.dbiasAccum[accumIndex(a, g, b, h, i, j)]);
  }

  // One thread per query row (deterministic plans): dq, and dbias when it
  // is summed over nothing.
  static NOINLINE HD void mainQ(const BwdArgs &a, Thread t, int mask,
                                    int biasKind, bool biasGradient) {
    int i = t.bx * t.bdim + t.tx, h = t.by, b = t.bz;
    if (i >= a.Sq)
      return;
    Workspace w = workspace(a, D, false);
    BiasGrad g = biasGrad(a);
    int hk = h / (a.Hq / a.Hkv);
    float dq[D];
    for (int d = 0; d < D; ++d)
      dq[d] = 0.f;
    for (int j = 0; j < a.Sk; ++j) {
      float p = 0.f, dsc = 0.f, ds = 0.f;
      if (prob(a, mask, biasKind, b, h, i, j, p, dsc)) {
        ds = dScore(a, w, b, h, i, j, p);
        float dx = ds * dsc * a.scale;
        const T *k = (const T *)a.k + off3(a.ks, b, hk, j);
        for (int d = 0; d < D; ++d)
          dq[d] += dx * toF(k[d]);
      }
      if (biasGradient && !g.summed)
        storeBias<T>(a, biasKind, biasOffset(a.dbs, b, h, i, j), ds);
    }
    T *dqr = (T *)a.dq + off3(a.dqs, b, h, i);
    for (int d = 0; d < D; ++d)
      dqr[d] = fromF<T>(dq[d]);
  }

  // One thread per row of the summed bias gradient (deterministic plans):
  // each element sums dS over its broadcast positions in a fixed order.
  static NOINLINE HD void sumDbias(const BwdArgs &a, Thread t, int mask,
                                       int biasKind) {
    BiasGrad g = biasGrad(a);
    int bi = t.bx * t.bdim + t.tx, bh = t.by, bb = t.bz;
    if (bi >= g.ext[2])
      return;
    Workspace w = workspace(a, D, false);
    int full[4] = {a.B, a.Hq, a.Sq, a.Sk}, at[4] = {bb, bh, bi, 0};
    for (int bj = 0; bj < g.ext[3]; ++bj) {
      at[3] = bj;
      int lo[4], hi[4];
      for (int d = 0; d < 4; ++d) {
        bool summed = a.dbs[d] == 0 && full[d] > 1;
        lo[d] = summed ? 0 : at[d];
        hi[d] = summed ? full[d] : at[d] + 1;
      }
      float acc = 0.f;
      for (int b = lo[0]; b < hi[0]; ++b)
        for (int h = lo[1]; h < hi[1]; ++h)
          for (int i = lo[2]; i < hi[2]; ++i)
            for (int j = lo[3]; j < hi[3]; ++j) {
              float p, dsc;
              if (prob(a, mask, biasKind, b, h, i, j, p, dsc))
                acc += dScore(a, w, b, h, i, j, p);
            }
      storeBias<T>(a, biasKind, biasOffset(a.dbs, bb, bh, bi, bj), acc);
    }
  }
};
"""

# The kernel parameters of attn-bwd-v1 and the BwdArgs they make.
BACKWARD_ENTRY = r"""
extern "C" __global__ void __launch_bounds__({threads}) {name}(
    const void *q, const void *k, const void *v, const void *o,
    const void *dout, const float *lse, const void *bias, void *dq, void *dk,
    void *dv, void *dbias, char *ws, int B, int Hq, int Hkv, int Sq, int Sk,
    long long qs0, long long qs1, long long qs2, long long ks0, long long ks1,
    long long ks2, long long vs0, long long vs1, long long vs2, long long os0,
    long long os1, long long os2, long long dos0, long long dos1,
    long long dos2, long long dqs0, long long dqs1, long long dqs2,
    long long dks0, long long dks1, long long dks2, long long dvs0,
    long long dvs1, long long dvs2, long long ls0, long long ls1,
    long long bs0, long long bs1, long long bs2, long long bs3,
    long long dbs0, long long dbs1, long long dbs2, long long dbs3,
    float scale, float softcap, int wl, int wr) {{
  BwdArgs a = {{q, k, v, o, dout, lse, bias, dq, dk, dv, dbias, ws, B, Hq,
               Hkv, Sq, Sk, {{qs0, qs1, qs2}}, {{ks0, ks1, ks2}},
               {{vs0, vs1, vs2}}, {{os0, os1, os2}}, {{dos0, dos1, dos2}},
               {{dqs0, dqs1, dqs2}}, {{dks0, dks1, dks2}},
               {{dvs0, dvs1, dvs2}}, {{ls0, ls1}}, {{bs0, bs1, bs2, bs3}},
               {{dbs0, dbs1, dbs2, dbs3}}, scale, softcap, wl, wr}};
  Thread t = {{(int)blockIdx.x, (int)blockIdx.y, (int)blockIdx.z,
              (int)threadIdx.x, (int)blockDim.x}};
  Bwd<{T}, {D}, {DV}>::{call};
}}
"""

# Stages: grid (x, y, z) extents as (dim, block) or dim, and threads.
ROWS_Q = [("seqlen_q", 128), "heads_q", "batch"]
BIAS_ROWS = [("bias_seqlen_q", 128), "bias_heads", "bias_batch"]
STAGES = {
    "pre": (ROWS_Q, 128),
    "zero_dbias": (BIAS_ROWS, 128),
    "main": ([("seqlen_k", 64), "heads_kv", "batch"], 64),
    "convert_dq": (ROWS_Q, 128),
    "convert_dbias": (BIAS_ROWS, 128),
    "main_kv": ([("seqlen_k", 64), "heads_kv", "batch"], 64),
    "main_q": ([("seqlen_q", 64), "heads_q", "batch"], 64),
    # One thread per row: the grid's block must be the thread count.
    "sum_dbias": ([("bias_seqlen_q", 64), "bias_heads", "bias_batch"], 64),
}


def head_dim_name(d, dv):
    return f"d{d}" if d == dv else f"d{d}_dv{dv}"


def stage_calls(mask, bias, bias_grad, deterministic):
    """(stage, entry suffix, Bwd<...> call) of a plan, in launch order."""
    m, b = MASKS.index(mask), BIAS_KINDS.index(bias)
    g = "true" if bias_grad else "false"
    tag = f"{mask}_bias_{bias}{'_grad' if bias_grad else ''}"
    if deterministic:
        stages = [("pre", "pre_det", "preprocess(a, t, false)"),
                  ("main_kv", f"main_kv_{mask}_bias_{bias}",
                   f"mainKv(a, t, {m}, {b}, false, false)"),
                  ("main_q", f"main_q_{tag}", f"mainQ(a, t, {m}, {b}, {g})")]
        if bias_grad:
            stages.append(("sum_dbias", f"sum_dbias_{mask}_bias_{bias}",
                           f"sumDbias(a, t, {m}, {b})"))
        return stages
    stages = [("pre", "pre_atomic", "preprocess(a, t, true)")]
    if bias_grad:
        stages.append(("zero_dbias", "zero_dbias", "zeroDbias(a, t)"))
    stages += [("main", f"main_{tag}", f"mainKv(a, t, {m}, {b}, {g}, true)"),
               ("convert_dq", "convert_dq", "convertDq(a, t)")]
    if bias_grad:
        stages.append(("convert_dbias", f"convert_dbias_{bias}",
                       f"convertDbias(a, t, {b})"))
    return stages


def workspace(bias_grad, deterministic):
    buffers = [{"name": "delta", "dtype": "f32",
                "dims": ["batch", "heads_q", "seqlen_q"]}]
    if not deterministic:
        buffers.append({"name": "dq_accum", "dtype": "f32",
                        "dims": ["batch", "heads_q", "seqlen_q", "head_dim"]})
        if bias_grad:
            buffers.append({"name": "dbias_accum", "dtype": "f32",
                            "dims": ["bias_batch", "bias_heads",
                                     "bias_seqlen_q", "bias_seqlen_k"]})
    return buffers


def grid_json(grid):
    return [{"dim": e[0], "block": e[1]} if isinstance(e, tuple)
            else {"dim": e} for e in grid]


def configs():
    """(dtype, d, dv, mask, bias) of every forward variant and plan group."""
    for dtype in DTYPES:
        for d, dv in HEAD_DIMS:
            for mask in MASKS if d == dv else ["none"]:
                for bias in BIAS_KINDS if d == dv else ["none"]:
                    yield dtype, d, dv, mask, bias


def build(args):
    os.makedirs(args.out, exist_ok=True)
    sources = {}  # binary -> (list of source parts, set of entries)
    variants, plans = [], []
    for dtype, d, dv, mask, bias in configs():
        T = DTYPES[dtype]
        # One cubin per mask: nvcc runs on them in parallel.
        binary = f"reference_{dtype}_{head_dim_name(d, dv)}_{mask}.cubin"
        parts, seen = sources.setdefault(binary, ([COMMON, FORWARD,
                                                   BACKWARD], set()))
        fwd = f"ref_fwd_{dtype}_{head_dim_name(d, dv)}_{mask}_bias_{bias}"
        if fwd not in seen:
            seen.add(fwd)
            parts.append(FORWARD_ENTRY.format(
                block=BLOCK_M, name=fwd, T=T, D=d, DV=dv,
                mask=MASKS.index(mask), bias=BIAS_KINDS.index(bias)))
        for softcap in (False, True):
            variants.append({
                "name": fwd + ("_softcap" if softcap else ""),
                "binary": binary, "entry": fwd, "dtype": dtype,
                "head_dim": d, "head_dim_v": dv, "mask": mask, "bias": bias,
                "softcap": softcap, "block_m": BLOCK_M, "threads": BLOCK_M,
                "dynamic_smem": 0,
                # Scalar loads: element alignment is all a kernel needs.
                "conditions": {"align_bytes": 2, "seqlen_q_multiple": 1,
                               "seqlen_k_multiple": 1},
                "config": "reference: one thread per query row"})
        for bias_grad in ([False, True] if bias != "none" else [False]):
            for softcap in (False, True):
                for deterministic in (False, True):
                    stages = []
                    for stage, suffix, call in stage_calls(
                            mask, bias, bias_grad, deterministic):
                        grid, threads = STAGES[stage]
                        entry = (f"ref_bwd_{dtype}_{head_dim_name(d, dv)}_"
                                 f"{suffix}")
                        if entry not in seen:
                            seen.add(entry)
                            parts.append(BACKWARD_ENTRY.format(
                                threads=threads, name=entry, T=T, D=d, DV=dv,
                                call=call))
                        stages.append({"name": stage, "binary": binary,
                                       "entry": entry,
                                       "grid": grid_json(grid),
                                       "threads": threads, "dynamic_smem": 0})
                    name = (f"ref_bwd_{dtype}_{head_dim_name(d, dv)}_{mask}_"
                            f"bias_{bias}{'_grad' if bias_grad else ''}"
                            f"{'_softcap' if softcap else ''}"
                            f"{'_det' if deterministic else '_atomic'}")
                    plans.append({
                        "name": name, "op": "backward", "abi": "attn-bwd-v1",
                        "dtype": dtype, "head_dim": d, "head_dim_v": dv,
                        "mask": mask, "bias": bias, "bias_grad": bias_grad,
                        "softcap": softcap, "deterministic": deterministic,
                        "conditions": {"align_bytes": 2,
                                       "seqlen_q_multiple": 1,
                                       "seqlen_k_multiple": 1},
                        "workspace": workspace(bias_grad, deterministic),
                        "stages": stages,
                        "config": "reference: one thread per key or query "
                                  "row"})

    def compile_one(item):
        binary, (parts, _) = item
        cu = os.path.join(args.out, binary.replace(".cubin", ".cu"))
        with open(cu, "w") as f:
            f.write("\n".join(parts))
        cmd = [args.nvcc, "-cubin", f"-arch={args.arch}", "-O3", "-o",
               os.path.join(args.out, binary), cu]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        return " ".join(cmd), proc.returncode, proc.stdout + proc.stderr

    failed = False
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for cmd, rc, output in pool.map(compile_one, sources.items()):
            print(cmd, flush=True)
            if rc != 0:
                print(output, file=sys.stderr)
                failed = True
    if failed:
        print("nvcc failed", file=sys.stderr)
        return 1
    bundle = {"schema": "attn-bundle", "version": 2, "platform": "cuda",
              "chip": args.arch, "abi": "attn-fwd-v1", "variants": variants,
              "plans": plans}
    with open(os.path.join(args.out, "bundle.json"), "w") as f:
        json.dump(bundle, f, indent=1)
    print(f"wrote {len(variants)} variants and {len(plans)} plans to "
          f"{args.out}")
    return 0


# -- host check ---------------------------------------------------------------

HOST_CHECK = r"""
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// A call: shapes, mask, bias and its broadcast, softcap; row strides padded
// past the head dims so that a kernel that ignores a stride is caught.
struct Case {
  int B, Hq, Hkv, Sq, Sk, mask, wl, wr, biasKind;
  int biasShape[4]; // 1 on broadcast dims
  bool biasGrad;
  float softcap;
};

constexpr int kPad = 3;

struct Tensor4 {
  int n[4];
  long long s[4];
  std::vector<float> data;
  Tensor4(int b, int h, int i, int d, float fill = 0.f) : n{b, h, i, d} {
    s[3] = 1;
    s[2] = d + kPad;
    s[1] = s[2] * i;
    s[0] = s[1] * h;
    data.assign(s[0] * b, fill);
  }
  float &at(int b, int h, int i, int d) {
    return data[b * s[0] + h * s[1] + i * s[2] + d];
  }
};

// Attention in double, for the loss sum(dO * O) and the inputs of the
// backward (O, lse).
struct Forward {
  const Case &c;
  int D, DV;
  double scale;
  bool visibleAt(int i, int j) const {
    return visible(c.mask, i, j, c.Sq, c.Sk, c.wl, c.wr);
  }
  // O[b, h, i, :] and lse for the given (possibly perturbed) inputs.
  void row(Tensor4 &q, Tensor4 &k, Tensor4 &v, const std::vector<double> &bias,
           int b, int h, int i, std::vector<double> &o, double &lse) const {
    int hk = h / (c.Hq / c.Hkv);
    std::vector<double> s(c.Sk, -INFINITY);
    double m = -INFINITY;
    for (int j = 0; j < c.Sk; ++j) {
      if (!visibleAt(i, j))
        continue;
      double x = 0;
      for (int d = 0; d < D; ++d)
        x += (double)q.at(b, h, i, d) * k.at(b, hk, j, d);
      x *= scale;
      if (c.softcap > 0)
        x = c.softcap * std::tanh(x / c.softcap);
      if (c.biasKind)
        x += bias[biasIndex(b, h, i, j)];
      s[j] = x;
      m = std::max(m, x);
    }
    o.assign(DV, 0.0);
    if (m == -INFINITY) {
      lse = -INFINITY;
      return;
    }
    double l = 0;
    for (int j = 0; j < c.Sk; ++j)
      if (s[j] > -INFINITY)
        l += std::exp(s[j] - m);
    for (int j = 0; j < c.Sk; ++j)
      if (s[j] > -INFINITY)
        for (int d = 0; d < DV; ++d)
          o[d] += std::exp(s[j] - m) / l * v.at(b, hk, j, d);
    lse = m + std::log(l);
  }
  int biasIndex(int b, int h, int i, int j) const {
    const int *n = c.biasShape;
    return ((std::min(b, n[0] - 1) * n[1] + std::min(h, n[1] - 1)) * n[2] +
            std::min(i, n[2] - 1)) *
               n[3] +
           std::min(j, n[3] - 1);
  }
  double loss(Tensor4 &q, Tensor4 &k, Tensor4 &v,
              const std::vector<double> &bias, Tensor4 &dO) const {
    double sum = 0, lse;
    std::vector<double> o;
    for (int b = 0; b < c.B; ++b)
      for (int h = 0; h < c.Hq; ++h)
        for (int i = 0; i < c.Sq; ++i) {
          row(q, k, v, bias, b, h, i, o, lse);
          for (int d = 0; d < DV; ++d)
            sum += o[d] * dO.at(b, h, i, d);
        }
    return sum;
  }
};

struct Dims {
  long long v[11];
};

static long long extentOf(const Dims &dims, int dim, int block) {
  return (dims.v[dim] + block - 1) / block;
}

// What the runtime computes from the call (Dispatch.cpp: dimValues).
static Dims dimValues(const Case &c, int D, int DV, const long long *dbs) {
  Dims d = {{c.B, c.Hq, c.Hkv, c.Sq, c.Sk, D, DV, 0, 0, 0, 0}};
  if (!c.biasGrad)
    return d;
  long long full[4] = {c.B, c.Hq, c.Sq, c.Sk};
  bool summed = false;
  for (int i = 0; i < 4; ++i) {
    bool bc = dbs[i] == 0 && full[i] > 1;
    d.v[7 + i] = bc ? 1 : full[i];
    summed |= bc;
  }
  if (!summed)
    for (int i = 0; i < 4; ++i)
      d.v[7 + i] = 0;
  return d;
}

static double maxAbs(const std::vector<double> &x) {
  double m = 0;
  for (double e : x)
    m = std::max(m, std::fabs(e));
  return m;
}

static int passed = 0, failed = 0;

// Compares a kernel's gradient with finite differences of the loss.
static void compare(const std::string &name, const char *what,
                    const std::vector<double> &got,
                    const std::vector<double> &want) {
  // A gradient that is 0 in exact arithmetic (a bias broadcast over the
  // keys) is held to the scale of the inputs.
  double scale = std::max(maxAbs(want), 1e-2), err = 0;
  bool finite = true;
  for (size_t i = 0; i < got.size(); ++i) {
    finite = finite && std::isfinite(got[i]);
    err = std::max(err, std::fabs(got[i] - want[i]));
  }
  if (!finite || err > 2e-4 * scale) {
    std::printf("FAIL %s: %s error %.3g (max %.3g)%s\n", name.c_str(), what,
                err, scale, finite ? "" : ", not finite (not written?)");
    ++failed;
  } else {
    ++passed;
  }
}

using StageFn = void (*)(const BwdArgs &, Thread);
struct StageRun {
  StageFn fn;
  int dims[3], blocks[3]; // dim index or -1 (constant 1), block size
  int threads;
};

template <int D, int DV>
static void runCase(const std::string &name, const Case &c,
                    const std::vector<StageRun> &stages,
                    const std::vector<std::vector<int>> &wsDims, bool det) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.f, 1.f);
  auto random = [&](Tensor4 &t) {
    for (float &x : t.data)
      x = normal(rng);
  };
  Tensor4 q(c.B, c.Hq, c.Sq, D), k(c.B, c.Hkv, c.Sk, D),
      v(c.B, c.Hkv, c.Sk, DV), dO(c.B, c.Hq, c.Sq, DV);
  random(q);
  random(k);
  random(v);
  random(dO);
  const int *n = c.biasShape;
  std::vector<float> biasF(n[0] * n[1] * n[2] * n[3]);
  for (float &x : biasF)
    x = normal(rng);
  std::vector<double> bias(biasF.begin(), biasF.end());
  long long bs[4] = {n[1] * n[2] * n[3], n[2] * n[3], n[3], 1};
  for (int d = 0; d < 4; ++d)
    if (n[d] == 1)
      bs[d] = 0;

  Forward f{c, D, DV, 1.0 / std::sqrt((double)D)};
  Tensor4 o(c.B, c.Hq, c.Sq, DV);
  std::vector<float> lse(c.B * c.Hq * c.Sq);
  std::vector<double> orow;
  for (int b = 0; b < c.B; ++b)
    for (int h = 0; h < c.Hq; ++h)
      for (int i = 0; i < c.Sq; ++i) {
        double l;
        f.row(q, k, v, bias, b, h, i, orow, l);
        for (int d = 0; d < DV; ++d)
          o.at(b, h, i, d) = (float)orow[d];
        lse[(b * c.Hq + h) * c.Sq + i] = (float)l;
      }

  float nan = NAN;
  Tensor4 dq(c.B, c.Hq, c.Sq, D, nan), dk(c.B, c.Hkv, c.Sk, D, nan),
      dv(c.B, c.Hkv, c.Sk, DV, nan);
  std::vector<float> dbias(biasF.size(), nan);
  Dims dims = dimValues(c, D, DV, bs);
  size_t wsBytes = 0;
  for (const std::vector<int> &buffer : wsDims) {
    size_t size = 4;
    for (int dim : buffer)
      size *= dims.v[dim];
    wsBytes = align256(wsBytes) + size;
  }
  // NaN everywhere: whatever a stage reads before writing shows. A guard
  // past the end catches writes beyond the plan's workspace.
  std::vector<float> ws(wsBytes / 4 + 64, nan);
  BwdArgs a = {q.data.data(), k.data.data(), v.data.data(), o.data.data(),
               dO.data.data(), lse.data(), c.biasKind ? biasF.data() : nullptr,
               dq.data.data(), dk.data.data(), dv.data.data(),
               c.biasGrad ? dbias.data() : nullptr, (char *)ws.data(), c.B,
               c.Hq, c.Hkv, c.Sq, c.Sk};
  auto strides3 = [](const Tensor4 &t, long long *s) {
    std::copy(t.s, t.s + 3, s);
  };
  strides3(q, a.qs);
  strides3(k, a.ks);
  strides3(v, a.vs);
  strides3(o, a.os);
  strides3(dO, a.dos);
  strides3(dq, a.dqs);
  strides3(dk, a.dks);
  strides3(dv, a.dvs);
  a.ls[0] = c.Hq * c.Sq;
  a.ls[1] = c.Sq;
  std::copy(bs, bs + 4, a.bs);
  std::copy(bs, bs + 4, a.dbs);
  a.scale = (float)f.scale;
  a.softcap = c.softcap;
  a.wl = c.wl;
  a.wr = c.wr;

  for (const StageRun &s : stages) {
    long long g[3];
    for (int i = 0; i < 3; ++i)
      g[i] = s.dims[i] < 0 ? 1 : extentOf(dims, s.dims[i], s.blocks[i]);
    for (int bz = 0; bz < g[2]; ++bz)
      for (int by = 0; by < g[1]; ++by)
        for (int bx = 0; bx < g[0]; ++bx)
          for (int tx = 0; tx < s.threads; ++tx)
            s.fn(a, Thread{bx, by, bz, tx, s.threads});
  }
  for (size_t i = wsBytes / 4; i < ws.size(); ++i)
    if (!std::isnan(ws[i])) {
      std::printf("FAIL %s: wrote past the workspace's %zu bytes\n",
                  name.c_str(), wsBytes);
      ++failed;
      return;
    }

  // Central differences of the loss, element by element.
  const double h = 1e-3;
  auto fd = [&](Tensor4 &t) {
    std::vector<double> g;
    for (int b = 0; b < t.n[0]; ++b)
      for (int hh = 0; hh < t.n[1]; ++hh)
        for (int i = 0; i < t.n[2]; ++i)
          for (int d = 0; d < t.n[3]; ++d) {
            float &x = t.at(b, hh, i, d), saved = x;
            // The steps actually taken, after rounding to float.
            float xu = (float)(saved + h), xd = (float)(saved - h);
            x = xu;
            double up = f.loss(q, k, v, bias, dO);
            x = xd;
            double down = f.loss(q, k, v, bias, dO);
            x = saved;
            g.push_back((up - down) / ((double)xu - (double)xd));
          }
    return g;
  };
  auto values = [](Tensor4 &t) {
    std::vector<double> g;
    for (int b = 0; b < t.n[0]; ++b)
      for (int hh = 0; hh < t.n[1]; ++hh)
        for (int i = 0; i < t.n[2]; ++i)
          for (int d = 0; d < t.n[3]; ++d)
            g.push_back(t.at(b, hh, i, d));
    return g;
  };
  compare(name, "dq", values(dq), fd(q));
  compare(name, "dk", values(dk), fd(k));
  compare(name, "dv", values(dv), fd(v));
  if (c.biasGrad) {
    std::vector<double> want;
    for (size_t i = 0; i < bias.size(); ++i) {
      double saved = bias[i];
      bias[i] = saved + h;
      double up = f.loss(q, k, v, bias, dO);
      bias[i] = saved - h;
      double down = f.loss(q, k, v, bias, dO);
      bias[i] = saved;
      want.push_back((up - down) / (2 * h));
    }
    compare(name, "dbias", std::vector<double>(dbias.begin(), dbias.end()),
            want);
  }
  (void)det;
}
"""


def host_check(args):
    """Writes, builds and runs the host check (see the module docstring)."""
    dim_index = {name: i for i, name in enumerate(
        ["batch", "heads_q", "heads_kv", "seqlen_q", "seqlen_k", "head_dim",
         "head_dim_v", "bias_batch", "bias_heads", "bias_seqlen_q",
         "bias_seqlen_k"])}
    os.makedirs(args.host_check, exist_ok=True)
    lines = ["#include <cuda_runtime.h>", COMMON, BACKWARD, HOST_CHECK]
    body = []
    wrappers = set()
    shapes = [  # B, Hq, Hkv, Sq, Sk
        (2, 4, 2, 5, 7), (1, 2, 1, 7, 4)]
    masks = [(0, -1, -1), (1, -1, -1), (2, -1, -1), (3, 2, 1), (3, -1, 0)]
    biases = [  # kind, shape as a function of (B, Hq, Sq, Sk), grad
        (0, None, False), (1, "full", False), (1, "full", True),
        (2, "2d", True), (1, "heads", True), (2, "keys", True),
        (1, "b1h", True)]
    n = 0
    for d, dv in ((8, 8), (8, 4)):
        for B, Hq, Hkv, Sq, Sk in shapes:
            for mask, wl, wr in masks:
                for kind, shape, grad in biases:
                    for softcap in (0.0, 1.5):
                        for det in (False, True):
                            n += 1
                            # Keep the count down: every combination of the
                            # first shape, a few of the second.
                            if (B, Sq) != (2, 5) and n % 5:
                                continue
                            if d != dv and (kind or mask):
                                continue
                            bshape = {None: "1, 1, 1, 1",
                                      "full": "B, Hq, Sq, Sk",
                                      "2d": "1, 1, Sq, Sk",
                                      "heads": "B, 1, Sq, Sk",
                                      "keys": "1, Hq, Sq, 1",
                                      "b1h": "1, Hq, 1, Sk"}[shape]
                            stages = []
                            for stage, suffix, call in stage_calls(
                                    MASKS[mask], BIAS_KINDS[kind], grad, det):
                                grid, threads = STAGES[stage]
                                fn = f"host_{d}_{dv}_{suffix}"
                                if fn not in wrappers:
                                    wrappers.add(fn)
                                    lines.append(
                                        f"static void {fn}(const BwdArgs &a, "
                                        f"Thread t) {{ Bwd<float, {d}, {dv}>"
                                        f"::{call}; }}")
                                ext = [(dim_index[e[0]], e[1])
                                       if isinstance(e, tuple)
                                       else (dim_index[e], 1) for e in grid]
                                stages.append(
                                    f"{{{fn}, {{{ext[0][0]}, {ext[1][0]}, "
                                    f"{ext[2][0]}}}, {{{ext[0][1]}, "
                                    f"{ext[1][1]}, {ext[2][1]}}}, "
                                    f"{threads}}}")
                            ws = [[dim_index[x] for x in b["dims"]]
                                  for b in workspace(grad, det)]
                            name = (f"d{d}dv{dv} {B}x{Hq}/{Hkv}x{Sq}x{Sk} "
                                    f"mask{mask}({wl},{wr}) bias{kind}:"
                                    f"{shape}{'+grad' if grad else ''} "
                                    f"softcap{softcap} "
                                    f"{'det' if det else 'atomic'}")
                            body.append(
                                f"  {{ int B = {B}, Hq = {Hq}, Sq = {Sq}, "
                                f"Sk = {Sk}; Case c = {{B, Hq, {Hkv}, Sq, "
                                f"Sk, {mask}, {wl}, {wr}, {kind}, "
                                f"{{{bshape}}}, {str(grad).lower()}, "
                                f"{softcap}f}}; runCase<{d}, {dv}>(\"{name}\""
                                f", c, {{{', '.join(stages)}}}, "
                                f"{{{', '.join('{' + ', '.join(map(str, w)) + '}' for w in ws)}}}, "
                                f"{str(det).lower()}); }}")
    lines.append("int main() {")
    lines += body
    lines.append('  std::printf("%d passed, %d failed\\n", passed, failed);')
    lines.append("  return failed ? 1 : 0;\n}")
    src = os.path.join(args.host_check, "host_check.cpp")
    with open(src, "w") as f:
        f.write("\n".join(lines) + "\n")
    exe = os.path.join(args.host_check, "host_check")
    include = os.path.join(os.path.dirname(os.path.dirname(args.nvcc)),
                           "include")
    cmd = [args.cxx, "-std=c++17", "-O2", "-w", f"-I{include}", src, "-o",
           exe]
    print(" ".join(cmd), flush=True)
    if subprocess.call(cmd) != 0:
        print("host compile failed", file=sys.stderr)
        return 1
    return subprocess.call([exe])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--nvcc", default=shutil.which("nvcc")
                    or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--host-check", metavar="DIR",
                    help="check the backward plans on the host instead")
    ap.add_argument("--cxx", default=shutil.which("g++") or "c++")
    args = ap.parse_args()
    if args.host_check:
        return host_check(args)
    if not args.out:
        ap.error("OUT_DIR is required")
    return build(args)


if __name__ == "__main__":
    sys.exit(main())
