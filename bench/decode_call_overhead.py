#!/usr/bin/env python3
"""Host time of one decode call: lib.attention_kvcache per call, a prepared
call's run(), and torch SDPA, each in a loop of 2000 (B = 8, Hq:Hkv = 32:8,
Sk = 4096, D = 128, bf16: a 134 MB cache), then a cProfile of the per-call
path. The loops are bound by the host when a call costs more host time than
its kernels take.

    python3 bench/decode_call_overhead.py [--bundle DIR]
"""
import argparse
import cProfile
import os
import pstats
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))

import bench  # noqa: E402


def per_call_us(fn, n=2000):
    return bench.per_call_us(fn, n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", default=os.path.join(REPO, ".carry",
                                                     "bundles", "serving"))
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F
    import attn_runtime as ar

    lib = ar.load(args.bundle)
    q = torch.randn(8, 32, 1, 128, dtype=torch.bfloat16, device="cuda")
    k = torch.randn(8, 8, 4096, 128, dtype=torch.bfloat16, device="cuda")
    lens = torch.full((8,), 4096, dtype=torch.int32, device="cuda")
    call = lambda: lib.attention_kvcache(q, k, k, lens)  # noqa: E731
    per_call_us(call, 50)
    print(f"attention_kvcache: {per_call_us(call):.1f} us per call")
    prepared = lib.prepare_kvcache(q, k, k, lens)
    print(f"prepared run(): {per_call_us(prepared.run):.1f} us per call")
    sdpa = lambda: F.scaled_dot_product_attention(  # noqa: E731
        q, k, k, enable_gqa=True)
    print(f"torch SDPA (default backend): {per_call_us(sdpa):.1f} us per call")
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(500):
        call()
    profile.disable()
    torch.cuda.synchronize()
    pstats.Stats(profile).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    sys.exit(main())
