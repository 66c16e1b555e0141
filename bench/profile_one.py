#!/usr/bin/env python3
"""Launches one forward kernel of a bundle (or, with --backward, its
backward plan's stages) a few times through the runtime, for a profiler or
sanitizer.

Usage: profile_one.py BUNDLE_DIR [--dtype bf16] [--d 128] [--mask none]
                      [--s 4096] [--b 4] [--launches 3] [--variant NAME]
                      [--backward [--deterministic]]

Calls lib.attention on random inputs (B, heads = 2048 / D, S), so the
runtime picks the variant as it would for that call, or the one --variant
names (Library.force_variant). Meant to run under

    ncu --clock-control none --set full -k regex:fwd_ -s 2 -c 1 -o OUT/prof \\
        python3 bench/profile_one.py BUNDLE
    compute-sanitizer --tool memcheck python3 bench/profile_one.py BUNDLE --s 300

(the first launches warm up: -s skips them). Prints the variant launched.
With --backward the forward runs once and lib.attention_backward
--launches times: `ncu --metrics gpu__time_duration.sum -k regex:bwd_`
then lists each stage's duration.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "runtime", "python"))
import attn_runtime  # noqa: E402

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundle")
    ap.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--mask", default="none",
                    choices=["none", "causal", "causal_bottom_right",
                             "sliding_window"])
    ap.add_argument("--s", type=int, default=4096)
    ap.add_argument("--b", type=int, default=4)
    ap.add_argument("--launches", type=int, default=3)
    ap.add_argument("--variant", help="force this variant (by name)")
    ap.add_argument("--backward", action="store_true",
                    help="launch the backward plan instead")
    ap.add_argument("--deterministic", action="store_true",
                    help="with --backward: the deterministic plan")
    a = ap.parse_args()
    lib = attn_runtime.load(a.bundle)
    if a.variant:
        lib.force_variant(a.variant)
    h = max(1, 2048 // a.d)
    q, k, v = (torch.randn(a.b, h, a.s, a.d, device="cuda",
                           dtype=DTYPES[a.dtype]) for _ in range(3))
    causal = {"none": False, "causal": True,
              "causal_bottom_right": "bottom_right"}.get(a.mask, False)
    window = (128, 0) if a.mask == "sliding_window" else None
    if a.backward:
        out, lse = lib.attention(q, k, v, causal=causal, window=window,
                                 return_lse=True)
        dout = torch.randn_like(out)
        for _ in range(a.launches):
            lib.attention_backward(dout, q, k, v, out, lse, causal=causal,
                                   window=window,
                                   deterministic=a.deterministic)
        torch.cuda.synchronize()
        print(f"backward: {a.launches} launches, B={a.b} H={h} S={a.s}")
        return
    for _ in range(a.launches):
        lib.attention(q, k, v, causal=causal, window=window)
    torch.cuda.synchronize()
    name = a.variant or lib.select_variant(q, k, v, causal=causal,
                                           window=window)
    print(f"{name}: {a.launches} launches, B={a.b} H={h} S={a.s}")


if __name__ == "__main__":
    main()
