#!/usr/bin/env python3
"""The TMA and cp.async forms of the warp-specialized sm_90a tiles, side by
side through the runtime: each pair forced by name (ATTN_FORCE_VARIANT) on
the same tensors. Prints whether the outputs are bit-identical (the forms
differ only in the copy engine) and both times, bf16, non-causal and causal.

Usage: tma_ab.py BUNDLE_DIR [--head-dims 64,128,256] [--seqlens 1024,...]
"""
import argparse
import os
import sys

import torch
from triton.testing import do_bench

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "runtime", "python"))
import attn_runtime  # noqa: E402

# The tiles each head dim's forms use on sm_90a (lib/Target/TileTables.json
# and the H100 tuning file): the first whose conditions admit the call.
TILES = {64: ["m128n128w12s4", "m128n128w12s2"], 128: ["m128n128w12s3"],
         256: ["m128n64w12s2"]}


def load(name):
    os.environ["ATTN_FORCE_VARIANT"] = name
    try:
        return attn_runtime.load(BUNDLE)
    finally:
        del os.environ["ATTN_FORCE_VARIANT"]


def main():
    global BUNDLE
    ap = argparse.ArgumentParser()
    ap.add_argument("bundle")
    ap.add_argument("--head-dims", default="64,128,256")
    ap.add_argument("--seqlens", default="1024,2048,4096,8192,16384")
    a = ap.parse_args()
    BUNDLE = a.bundle
    print(f"device: {torch.cuda.get_device_name()}")
    print("| D | mask | S | B x H | tma TFLOP/s | cp.async TFLOP/s | tma/cp.async "
          "| identical |")
    print("|---|------|---|-------|-------------|------------------|-------------|"
          "-----------|")
    torch.manual_seed(0)
    for d in map(int, a.head_dims.split(",")):
        for mask in ("none", "causal"):
            pairs = [(load(f"fwd_bf16_d{d}_{mask}_{t}tma"),
                      load(f"fwd_bf16_d{d}_{mask}_{t}ws")) for t in TILES[d]]
            for s in map(int, a.seqlens.split(",")):
                heads = 16 if d <= 128 else 8
                batch = max(1, 16384 // s)
                q, k, v = (torch.randn(batch, heads, s, d, device="cuda",
                                       dtype=torch.bfloat16)
                           for _ in range(3))
                causal = mask == "causal"
                error = None
                for tma, ws in pairs:
                    try:
                        o1, _ = tma.attention(q, k, v, causal=causal)
                        o2, _ = ws.attention(q, k, v, causal=causal)
                        break
                    except attn_runtime.AttnError as e:
                        error = str(e).splitlines()[0]
                else:
                    print(f"| {d} | {mask} | {s} | error: {error} |")
                    continue
                same = torch.equal(o1, o2)
                flops = 4 * batch * heads * s * s * d / (2 if causal else 1)
                t1 = do_bench(lambda: tma.attention(q, k, v, causal=causal),
                              warmup=25, rep=100)
                t2 = do_bench(lambda: ws.attention(q, k, v, causal=causal),
                              warmup=25, rep=100)
                f1, f2 = flops / t1 / 1e9, flops / t2 / 1e9
                print(f"| {d} | {mask} | {s} | {batch} x {heads} | {f1:.0f} "
                      f"| {f2:.0f} | {t2 / t1:.3f} | {same} |", flush=True)


if __name__ == "__main__":
    main()
