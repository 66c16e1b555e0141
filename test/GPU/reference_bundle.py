#!/usr/bin/env python3
"""Builds a reference bundle: naive but exact ABI attn-fwd-v1 kernels.

The kernels are plain CUDA C++ (one thread per query row, online softmax in
float32), compiled with nvcc into one cubin; bundle.json lists one variant per
(dtype, head_dim, mask, bias) entry point. They are slow on purpose: they let
the runtime, the Python module and the GPU tests be checked end to end on a
GPU without the compiler's bundles, and they pin down the ABI and the mask
semantics of docs/BundleFormat.md in code.

    python3 test/GPU/reference_bundle.py OUT_DIR [--arch sm_90] [--nvcc PATH]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

DTYPES = {"f16": "__half", "bf16": "__nv_bfloat16"}
MASKS = ["none", "causal", "causal_bottom_right", "sliding_window"]
HEAD_DIMS = [64, 128]
BLOCK_M = 64

KERNEL = r"""
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>

__device__ inline float toF(float x) { return x; }
__device__ inline float toF(__half x) { return __half2float(x); }
__device__ inline float toF(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> __device__ inline T fromF(float x);
template <> __device__ inline __half fromF<__half>(float x) {
  return __float2half(x);
}
template <> __device__ inline __nv_bfloat16 fromF<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);
}

// MASK: 0 none, 1 causal (j <= i), 2 causal_bottom_right (j <= i + Sk - Sq),
// 3 sliding_window (i + Sk - Sq - left <= j <= i + Sk - Sq + right).
// BIAS: 0 none, 1 same dtype as q, 2 float32.
template <typename T, int D, int MASK, int BIAS>
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
  float qf[D], acc[D];
  for (int d = 0; d < D; ++d) {
    qf[d] = toF(qr[d]);
    acc[d] = 0.f;
  }
  int lo = 0, hi = Sk - 1, diag = i + Sk - Sq;
  if (MASK == 1)
    hi = min(hi, i);
  if (MASK == 2)
    hi = min(hi, diag);
  if (MASK == 3) {
    if (wl >= 0)
      lo = max(lo, diag - wl);
    if (wr >= 0)
      hi = min(hi, diag + wr);
  }
  float m = -CUDART_INF_F, l = 0.f;
  for (int j = lo; j <= hi; ++j) {
    const T *kr = k + b * ksb + hk * ksh + j * kss;
    float s = 0.f;
    for (int d = 0; d < D; ++d)
      s += qf[d] * toF(kr[d]);
    s *= scale;
    if (BIAS) {
      long long off = b * bsb + h * bsh + i * bsq + j * bsk;
      s += BIAS == 1 ? toF(((const T *)bias)[off]) : ((const float *)bias)[off];
    }
    float mNew = fmaxf(m, s);
    float corr = __expf(m - mNew), p = __expf(s - mNew);
    l = l * corr + p;
    const T *vr = v + b * vsb + hk * vsh + j * vss;
    for (int d = 0; d < D; ++d)
      acc[d] = acc[d] * corr + p * toF(vr[d]);
    m = mNew;
  }
  T *orow = o + b * osb + h * osh + i * oss;
  for (int d = 0; d < D; ++d)
    orow[d] = fromF<T>(l > 0.f ? acc[d] / l : 0.f);
  if (lse)
    lse[b * lsb + h * lsh + i] = l > 0.f ? m + __logf(l) : -CUDART_INF_F;
}
"""

ENTRY = r"""
extern "C" __global__ void __launch_bounds__({block}) {name}(
    const {T} *q, const {T} *k, const {T} *v, {T} *o, float *lse,
    const void *bias, int B, int Hq, int Hkv, int Sq, int Sk, long long qsb,
    long long qsh, long long qss, long long ksb, long long ksh, long long kss,
    long long vsb, long long vsh, long long vss, long long osb, long long osh,
    long long oss, long long lsb, long long lsh, long long bsb, long long bsh,
    long long bsq, long long bsk, float scale, float softcap, int wl,
    int wr) {{
  fwd<{T}, {D}, {mask}, {bias}>(q, k, v, o, lse, bias, B, Hq, Hkv, Sq, Sk,
      qsb, qsh, qss, ksb, ksh, kss, vsb, vsh, vss, osb, osh, oss, lsb, lsh,
      bsb, bsh, bsq, bsk, scale, softcap, wl, wr);
}}
"""


def variants():
    for dtype in DTYPES:
        for d in HEAD_DIMS:
            for mask in MASKS:
                # Bias only without a mask: enough to test the bias path,
                # and the cubin builds in half the time.
                for bias in (["none", "same", "f32"] if mask == "none"
                             else ["none"]):
                    yield dtype, d, mask, bias


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--nvcc", default=shutil.which("nvcc")
                    or "/usr/local/cuda/bin/nvcc")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    source = [KERNEL]
    entries = []
    for dtype, d, mask, bias in variants():
        name = f"ref_fwd_{dtype}_d{d}_{mask}_bias_{bias}"
        source.append(ENTRY.format(block=BLOCK_M, name=name, T=DTYPES[dtype],
                                   D=d, mask=MASKS.index(mask),
                                   bias=["none", "same", "f32"].index(bias)))
        entries.append({
            "name": name, "binary": "reference.cubin", "entry": name,
            "dtype": dtype, "head_dim": d, "head_dim_v": d, "mask": mask,
            "bias": bias, "softcap": False, "block_m": BLOCK_M,
            "threads": BLOCK_M, "dynamic_smem": 0,
            # Scalar loads: element alignment is all the kernel needs.
            "conditions": {"align_bytes": 2, "seqlen_q_multiple": 1,
                           "seqlen_k_multiple": 1},
            "config": "reference: one thread per query row"})
    cu = os.path.join(args.out, "reference.cu")
    with open(cu, "w") as f:
        f.write("\n".join(source))
    cmd = [args.nvcc, "-cubin", f"-arch={args.arch}", "-O3", "-o",
           os.path.join(args.out, "reference.cubin"), cu]
    print(" ".join(cmd), flush=True)
    if subprocess.call(cmd) != 0:
        print("nvcc failed", file=sys.stderr)
        return 1
    bundle = {"schema": "attn-bundle", "version": 1, "platform": "cuda",
              "chip": args.arch, "abi": "attn-fwd-v1", "variants": entries}
    with open(os.path.join(args.out, "bundle.json"), "w") as f:
        json.dump(bundle, f, indent=1)
    print(f"wrote {len(entries)} variants to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
