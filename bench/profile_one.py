#!/usr/bin/env python3
"""Launches one variant of a bundle a few times, for a profiler or sanitizer.

Usage: profile_one.py BUNDLE_DIR [--dtype bf16] [--d 128] [--mask none]
                      [--s 4096] [--b 4] [--launches 3]

Picks the first variant for (dtype, D, mask), as the runtime would, and
launches it through bench/gpu_check.py's CuPy launcher on random inputs
(B, heads = 2048 / D, S). Meant to run under

    ncu --clock-control none --set full -k regex:fwd_ -s 2 -c 1 -o OUT/prof \\
        python3 bench/profile_one.py BUNDLE
    compute-sanitizer --tool memcheck python3 bench/profile_one.py BUNDLE --s 300

(the first launches warm up: -s skips them).
"""
import argparse
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_check import DTYPES, Bundle  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundle")
    ap.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--mask", default="none")
    ap.add_argument("--s", type=int, default=4096)
    ap.add_argument("--b", type=int, default=4)
    ap.add_argument("--launches", type=int, default=3)
    a = ap.parse_args()
    bundle = Bundle(a.bundle)
    var = bundle.find(a.dtype, a.d, a.mask)
    if var is None:
        sys.exit(f"no variant for {a.dtype} D={a.d} mask={a.mask}")
    h = max(1, 2048 // a.d)
    dt = DTYPES[a.dtype]
    q, k, v = (torch.randn(a.b, h, a.s, a.d, device="cuda", dtype=dt)
               for _ in range(3))
    o = torch.empty_like(q)
    lse = torch.empty(a.b, h, a.s, device="cuda")
    window = (128, 0) if a.mask == "sliding_window" else (-1, -1)
    launch = bundle.launcher(var, q, k, v, o, lse, 1.0 / math.sqrt(a.d),
                             window)
    for _ in range(a.launches):
        launch()
    torch.cuda.synchronize()
    print(f"{var['name']}: {a.launches} launches, B={a.b} H={h} S={a.s}")


if __name__ == "__main__":
    main()
