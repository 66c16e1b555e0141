#!/usr/bin/env python3
"""Dense forward kernels once each through the runtime, for a sanitizer:
for each head dim, no mask and both causal alignments at lengths that end
inside a block (Sq 300, Sk 300 and 517), GQA 8:2, one call with a bias and
a soft cap, and one on views one element past an aligned base (the
element-aligned twins).

Usage: sanitize_forward.py BUNDLE_DIR [--dtype bf16] [--head-dims 64,128]

Meant to run under

    compute-sanitizer --tool memcheck python3 bench/sanitize_forward.py B
    compute-sanitizer --tool racecheck python3 bench/sanitize_forward.py B
    compute-sanitizer --tool synccheck python3 bench/sanitize_forward.py B

Exits 0 after the calls; the sanitizer's exit code says whether it found
anything. Calls no variant serves are named and passed over.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "runtime", "python"))
import attn_runtime  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundle")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    ap.add_argument("--head-dims", default="64,128",
                    type=lambda t: [int(d) for d in t.split(",")])
    a = ap.parse_args()
    dtype = torch.bfloat16 if a.dtype == "bf16" else torch.float16
    torch.manual_seed(0)
    lib = attn_runtime.load(a.bundle)
    hq, hkv, batch = 8, 2, 2
    calls = 0

    def call(what, *args, **kwargs):
        nonlocal calls
        try:
            lib.attention(*args, **kwargs)
            calls += 1
        except attn_runtime.AttnError as e:
            print(f"passed over {what}: {str(e).splitlines()[0]}")

    for d in a.head_dims:
        for sk in (300, 517):
            q = torch.randn(batch, hq, 300, d, device="cuda", dtype=dtype)
            k = torch.randn(batch, hkv, sk, d, device="cuda", dtype=dtype)
            v = torch.randn(batch, hkv, sk, d, device="cuda", dtype=dtype)
            for causal in (False, True, "bottom_right"):
                call(f"D={d} Sk={sk} causal={causal}", q, k, v,
                     causal=causal)
            bias = torch.randn(1, hq, 300, sk, device="cuda", dtype=dtype)
            call(f"D={d} Sk={sk} bias, softcap", q, k, v, bias=bias,
                 softcap=30.0)
            flat = [torch.empty(t.numel() + 1, device="cuda", dtype=dtype)
                    for t in (q, k, v)]
            views = [f[1:].view(t.shape) for f, t in zip(flat, (q, k, v))]
            for view, t in zip(views, (q, k, v)):
                view.copy_(t)
            call(f"D={d} Sk={sk} misaligned", *views, causal=True)
    torch.cuda.synchronize()
    print(f"ok: {calls} calls")


if __name__ == "__main__":
    main()
