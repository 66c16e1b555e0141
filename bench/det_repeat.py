#!/usr/bin/env python3
"""Deterministic backward plans: bit-identical gradients over repeated runs
and the same gradients as the plan with atomics within rounding.

    python3 bench/det_repeat.py BUNDLE [--d 128] [--runs 20]
        [--shapes 129x1000,1000x1000,333x2048] [--batch 2] [--heads 8:2]
        [--dropout-p P]

Shapes: batch 2, GQA 8:2, (Sq, Sk) in (129, 1000), (1000, 1000), (333,
2048) unless --shapes, --batch and --heads say otherwise, masks none,
causal and bottom-right (those the bundle has); with --dropout-p every
call drops with that probability (one seed: the same mask each run). Exit 1 when a
check failed; prints one line per case.
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
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--shapes", default="129x1000,1000x1000,333x2048")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--heads", default="8:2", help="Hq:Hkv")
    ap.add_argument("--dropout-p", type=float, default=0.0)
    a = ap.parse_args()
    drop = ({"dropout_p": a.dropout_p, "seed": 7} if a.dropout_p > 0
            else {})
    shapes = [tuple(int(n) for n in shape.split("x"))
              for shape in a.shapes.split(",")]
    hq, hkv = (int(n) for n in a.heads.split(":"))
    lib = attn_runtime.load(a.bundle)
    torch.manual_seed(0)
    bad = 0
    for sq, sk in shapes:
        for causal in (False, True, "bottom_right"):
            q = torch.randn(a.batch, hq, sq, a.d, device="cuda",
                            dtype=torch.bfloat16)
            k = torch.randn(a.batch, hkv, sk, a.d, device="cuda",
                            dtype=torch.bfloat16)
            v = torch.randn_like(k)
            g = torch.randn_like(q)
            try:
                out, lse = lib.attention(q, k, v, causal=causal,
                                         return_lse=True, **drop)
                first = lib.attention_backward(g, q, k, v, out, lse,
                                               causal=causal,
                                               deterministic=True, **drop)
            except attn_runtime.AttnError as e:
                print(f"skip {sq}x{sk} causal={causal}: {e.message[:80]}")
                continue
            atomic = lib.attention_backward(g, q, k, v, out, lse,
                                            causal=causal, **drop)
            differ = 0
            for _ in range(a.runs - 1):
                again = lib.attention_backward(g, q, k, v, out, lse,
                                               causal=causal,
                                               deterministic=True, **drop)
                differ += any(not torch.equal(x, y)
                              for x, y in zip(first, again))
            far = [i for i, (x, y) in enumerate(zip(first, atomic))
                   if not torch.allclose(x.float(), y.float(), rtol=2e-2,
                                         atol=2e-2 * y.float().abs().max()
                                         .item())]
            torch.cuda.synchronize()
            ok = not differ and not far
            bad += not ok
            print(f"{'ok' if ok else 'FAIL'} {sq}x{sk} causal={causal}: "
                  f"{differ} of {a.runs - 1} reruns differ, "
                  f"gradients off the atomic plan's: {far}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
