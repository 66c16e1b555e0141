#!/usr/bin/env python3
"""One forward and one backward call through the runtime, for a sanitizer.

Usage: sanitize_backward.py BUNDLE_DIR [--dtype bf16] [--d 64] [--mask causal]
                            [--sq 300] [--sk 300] [--hq 4] [--hkv 2]
                            [--deterministic] [--dropout-p P]
                            [--bias keypad|2d|full]

Meant to run under

    compute-sanitizer --tool memcheck python3 bench/sanitize_backward.py B
    compute-sanitizer --tool racecheck python3 bench/sanitize_backward.py B

with odd lengths so the kernels' tails and the GQA sum run. Exits 0 after
the calls; the sanitizer's exit code says whether it found anything.
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
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--dv", type=int, default=None,
                    help="the values' head dim (default: --d)")
    ap.add_argument("--mask", default="causal",
                    choices=["none", "causal", "bottom_right"])
    ap.add_argument("--sq", type=int, default=300)
    ap.add_argument("--sk", type=int, default=300)
    ap.add_argument("--hq", type=int, default=4)
    ap.add_argument("--hkv", type=int, default=2)
    ap.add_argument("--deterministic", action="store_true",
                    help="the deterministic plan (no atomics)")
    ap.add_argument("--dropout-p", type=float, default=0.0,
                    help="both calls drop with this probability")
    ap.add_argument("--bias", default=None, choices=["keypad", "2d", "full"],
                    help="a bias that requires grad: [1, 1, 1, Sk] (its "
                    "gradient summed over heads and query rows), [Sq, Sk] "
                    "or the full shape")
    a = ap.parse_args()
    drop = ({"dropout_p": a.dropout_p, "seed": 3} if a.dropout_p > 0
            else {})
    dtype = torch.bfloat16 if a.dtype == "bf16" else torch.float16
    causal = {"none": False, "causal": True,
              "bottom_right": "bottom_right"}[a.mask]
    torch.manual_seed(0)
    q = torch.randn(1, a.hq, a.sq, a.d, device="cuda", dtype=dtype)
    k = torch.randn(1, a.hkv, a.sk, a.d, device="cuda", dtype=dtype)
    v = torch.randn(1, a.hkv, a.sk, a.dv or a.d, device="cuda", dtype=dtype)
    if a.bias:
        shape = {"keypad": (1, 1, 1, a.sk), "2d": (a.sq, a.sk),
                 "full": (1, a.hq, a.sq, a.sk)}[a.bias]
        drop["bias"] = torch.randn(*shape, device="cuda",
                                   dtype=dtype).requires_grad_()
    lib = attn_runtime.load(a.bundle)
    out, lse = lib.attention(q, k, v, causal=causal, return_lse=True, **drop)
    grads = lib.attention_backward(torch.randn_like(out), q, k, v, out,
                                   lse, causal=causal,
                                   deterministic=a.deterministic, **drop)
    dq, dk, dv = grads[:3]
    torch.cuda.synchronize()
    print(f"ok: |dq| {dq.float().abs().max().item():.3g} "
          f"|dk| {dk.float().abs().max().item():.3g} "
          f"|dv| {dv.float().abs().max().item():.3g}"
          + (f" |dbias| {grads[3].float().abs().max().item():.3g}"
             if a.bias else ""))


if __name__ == "__main__":
    main()
