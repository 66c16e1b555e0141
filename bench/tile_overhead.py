#!/usr/bin/env python3
"""What a tile boundary costs a forward kernel, in key blocks: the same
tiles (B, 2048 / D heads, Sq query rows) run with 2k and with 16k keys, so
each tile walks 16 or 128 key blocks of 128. With a per-tile cost of T0
and Tb a block, rate(16k) / rate(2k) = 8 (16 + x) / (128 + x) for
x = T0 / Tb, which this prints (bench/RESULTS.md, eleventh session).

    python3 bench/tile_overhead.py BUNDLE [--head-dims 64,128]
"""
import argparse
import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))

from bench import bench_ms  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle")
    ap.add_argument("--head-dims", default="64,128")
    args = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("SKIP tile_overhead: no CUDA device")
        return 0
    import attn_runtime
    lib = attn_runtime.load(args.bundle)
    for d in [int(x) for x in args.head_dims.split(",")]:
        heads = 2048 // d
        for batch, sq in ((8, 2048), (2, 8192)):
            rates = {}
            for sk in (2048, 16384):
                q = torch.randn(batch, heads, sq, d, device="cuda",
                                dtype=torch.bfloat16)
                k = torch.randn(batch, heads, sk, d, device="cuda",
                                dtype=torch.bfloat16)
                v = torch.randn_like(k)
                if sk == 16384:
                    print("  variant", lib.select_variant(q, k, v),
                          flush=True)
                ms = min(bench_ms(lambda: lib.attention(q, k, v))
                         for _ in range(3))
                rates[sk] = 4 * batch * heads * sq * sk * d / ms / 1e9
            r = rates[16384] / rates[2048]
            x = 128 * (r - 1) / (8 - r)
            print(f"D={d} B={batch} Sq={sq}: Sk=2k {rates[2048]:.1f} "
                  f"Sk=16k {rates[16384]:.1f} TFLOP/s, ratio {r:.3f}, "
                  f"per-tile cost {x:.2f} key blocks of 128", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
