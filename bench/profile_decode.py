#!/usr/bin/env python3
"""Launches one decode shape of lib.attention_kvcache a few times through the
runtime, for a profiler (kernel durations of the split and combine stages).

Usage: profile_decode.py BUNDLE_DIR [--b 1] [--sk 16384] [--hq 8] [--hkv 1]
                         [--d 128] [--num-splits 0] [--launches 5]

Meant to run under

    ncu --metrics gpu__time_duration.sum -s 4 python3 bench/profile_decode.py B

(the first launches warm up: -s skips them). Prints the split count the
runtime chose and the wall time per call.
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "runtime", "python"))
import attn_runtime  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundle")
    ap.add_argument("--b", type=int, default=1)
    ap.add_argument("--sk", type=int, default=16384)
    ap.add_argument("--hq", type=int, default=8)
    ap.add_argument("--hkv", type=int, default=1)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--num-splits", type=int, default=0)
    ap.add_argument("--launches", type=int, default=5)
    a = ap.parse_args()
    torch.manual_seed(0)
    dt = torch.bfloat16
    q = torch.randn(a.b, a.hq, 1, a.d, device="cuda", dtype=dt)
    k = torch.randn(a.b, a.hkv, a.sk, a.d, device="cuda", dtype=dt)
    v = torch.randn_like(k)
    seqlens = torch.full((a.b,), a.sk, device="cuda", dtype=torch.int32)
    lib = attn_runtime.load(a.bundle)
    for _ in range(a.launches):
        lib.attention_kvcache(q, k, v, seqlens, num_splits=a.num_splits)
    torch.cuda.synchronize()
    n = 200
    t0 = time.perf_counter()
    for _ in range(n):
        lib.attention_kvcache(q, k, v, seqlens, num_splits=a.num_splits)
    torch.cuda.synchronize()
    print(f"B {a.b} Sk {a.sk} {a.hq}:{a.hkv} D {a.d}: "
          f"{(time.perf_counter() - t0) / n * 1e6:.1f} us per call")


if __name__ == "__main__":
    main()
