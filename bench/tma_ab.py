#!/usr/bin/env python3
"""The TMA and cp.async forms of the warp-specialized sm_90a tiles, side by
side through the runtime: each pair forced by name (Library.force_variant)
on the same tensors. Prints whether the outputs are bit-identical (the
forms differ in the copy engine, and the TMA ones in a persistent grid or
an overlapped key loop, which do the same operations in the same order)
and both TFLOP/s (bench.tflops_of), bf16, non-causal and causal, batch * S
= 16384 tokens. Forms are found by name among the bundle's variants.

Usage: tma_ab.py BUNDLE_DIR [--head-dims 64,128,256] [--seqlens 1024,...]
"""
import argparse
import os
import sys

import torch

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))

import attn_runtime  # noqa: E402
from bench import TOKENS, tflops_of  # noqa: E402

# The tiles each head dim's forms use on sm_90a (lib/Target/TileTables.json
# and the H100 tuning file): the first whose conditions admit the call.
TILES = {64: ["m192n128w16s2", "m128n128w12s4"], 128: ["m128n128w12s3"],
         256: ["m128n80w12s2", "m128n64w12s2"]}
# A TMA form's name ends in "tma", "tmap" over a persistent grid, then "o"
# with overlap_softmax; its cp.async form's in "ws" (KernelABI.cpp).
TMA_FORMS = ("tma", "tmap", "tmao", "tmapo")


def forms(lib, d, mask, tile):
    """The bundle's TMA and cp.async variants of `tile`, or None."""
    stem = f"fwd_bf16_d{d}_{mask}_{tile}"
    tma = [n for n in lib.variants if n in [stem + f for f in TMA_FORMS]]
    ws = stem + "ws"
    return (tma[0], ws) if tma and ws in lib.variants else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundle")
    ap.add_argument("--head-dims", default="64,128,256")
    ap.add_argument("--seqlens", default="1024,2048,4096,8192,16384")
    a = ap.parse_args()
    lib = attn_runtime.load(a.bundle)
    print(f"device: {torch.cuda.get_device_name()}")
    print("| D | mask | S | B x H | tma TFLOP/s | cp.async TFLOP/s | tma/cp.async "
          "| identical |")
    print("|---|------|---|-------|-------------|------------------|-------------|"
          "-----------|")
    torch.manual_seed(0)
    for d in map(int, a.head_dims.split(",")):
        for mask in ("none", "causal"):
            causal = mask == "causal"
            for s in map(int, a.seqlens.split(",")):
                heads = 16 if d <= 128 else 8
                batch = max(1, TOKENS // s)
                q, k, v = (torch.randn(batch, heads, s, d, device="cuda",
                                       dtype=torch.bfloat16)
                           for _ in range(3))
                flops = 4 * batch * heads * s * s * d / (2 if causal else 1)

                def run(name):
                    lib.force_variant(name)
                    return lib.attention(q, k, v, causal=causal)[0]

                def tflops(name):
                    lib.force_variant(name)
                    return tflops_of(
                        lambda: lib.attention(q, k, v, causal=causal), flops)

                # The first tile whose forms both take the call.
                error = None
                for tile in TILES[d]:
                    if not forms(lib, d, mask, tile):
                        error = f"no TMA and cp.async forms of {tile}"
                        continue
                    tma, ws = forms(lib, d, mask, tile)
                    try:
                        same = torch.equal(run(tma), run(ws))
                        break
                    except attn_runtime.AttnError as e:
                        error = str(e).splitlines()[0]
                else:
                    lib.force_variant(None)
                    print(f"| {d} | {mask} | {s} | error: {error} |")
                    continue
                f1, f2 = tflops(tma), tflops(ws)
                lib.force_variant(None)
                print(f"| {d} | {mask} | {s} | {batch} x {heads} | {f1:.0f} "
                      f"| {f2:.0f} | {f1 / f2:.3f} | {same} |", flush=True)


if __name__ == "__main__":
    main()
