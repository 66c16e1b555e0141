#!/usr/bin/env python3
"""Deterministic backward plans against the plans with atomics where the
ordered dQ's turns are easiest to number wrongly: both causal alignments,
windows, Sq != Sk with partial blocks (key blocks no query row sees), GQA,
at lengths the D = 128 ordered plans serve (from 1449).

    python3 bench/ordered_edges_check.py BUNDLE

BUNDLE: attn-bundle --chip sm_90a --head-dims 128,192,224,256 --dtypes bf16
--masks none,causal,causal_bottom_right,sliding_window --backward --layouts
dense --unaligned=false --dropout=false. Each case: 5 deterministic calls
bit-identical and within 2e-2 (relative to the largest element) of the
atomic plan's gradients. A wrongly numbered turn hangs: run it under
`timeout`. Exit status 1 if a case failed.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "runtime", "python"))
import attn_runtime as ar  # noqa: E402

lib = ar.load(sys.argv[1])
torch.manual_seed(0)
fails = 0
for d in (128, 192, 256):
    for sq, sk, hq, hkv in ((2048, 2048, 8, 2), (1500, 3000, 4, 4),
                            (3000, 1700, 4, 1)):
        for kw in ({"causal": True}, {"causal": "bottom_right"},
                   {"window": (256, 0)}, {"window": (300, 77)}, {}):
            q, g = (torch.randn(2, hq, sq, d, device="cuda",
                                dtype=torch.bfloat16) for _ in range(2))
            k, v = (torch.randn(2, hkv, sk, d, device="cuda",
                                dtype=torch.bfloat16) for _ in range(2))
            try:
                out, lse = lib.attention(q, k, v, return_lse=True, **kw)
                a = lib.attention_backward(g, q, k, v, out, lse, **kw)
                r = [lib.attention_backward(g, q, k, v, out, lse,
                                            deterministic=True, **kw)
                     for _ in range(5)]
            except ar.AttnError as e:
                print(f"skip d{d} {sq}x{sk} {kw}: {str(e)[:100]}")
                continue
            same = all(torch.equal(x, y) for rr in r[1:]
                       for x, y in zip(r[0], rr))
            err = max(((x.float() - y.float()).abs().max()
                       / y.float().abs().max()).item()
                      for x, y in zip(r[0], a))
            ok = same and err < 2e-2
            fails += not ok
            plan = lib.backward_plan(q, k, v, deterministic=True, **kw)
            print(f"{'ok' if ok else 'FAIL'} d{d} {sq}x{sk} {hq}:{hkv} {kw}: "
                  f"repeat-identical {same}, rel diff to atomic {err:.2e}, "
                  f"plan {plan}", flush=True)
print("failures", fails)
sys.exit(1 if fails else 0)
