#!/usr/bin/env python3
"""Dropout's cost: our bundle's dropout variants and plans against ours
without dropout and against torch SDPA's backends with the same dropout_p,
on the same bf16 inputs, in one process.

    python3 bench/bench_dropout.py --bundle DIR [--quick] [--p 0.1]

Configurations as bench_backward.py (batch * seqlen = 16384 tokens, hidden
2048, D in {64, 128}, causal off and on), S in {1024, 2048, 4096, 8192}.
Columns: TFLOP/s (FlashAttention's FLOPs, dropout not counted) of our
forward without and with dropout, the ratio, each torch backend's forward
with dropout and ours over it; then the same for forward + backward
(autograd). A backend torch refuses is n/a with its reason. Prints a table
and, with $OUT set, writes it to $OUT/bench-dropout.md.
"""

import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench import (HIDDEN, TOKENS, grid, parser,  # noqa: E402
                   tflops_of, training_inputs, write_table)
from bench_backward import BWD_FLOPS, cell, ratio  # noqa: E402


def main():
    ap = parser(__doc__)
    ap.add_argument("--p", type=float, default=0.1, help="dropout_p")
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    if not torch.cuda.is_available():
        print("SKIP bench: no CUDA device")
        return 0
    import attn_runtime
    ours = attn_runtime.load(args.bundle)
    p = args.p
    backends = [("flash", SDPBackend.FLASH_ATTENTION),
                ("cudnn", SDPBackend.CUDNN_ATTENTION),
                ("efficient", SDPBackend.EFFICIENT_ATTENTION)]
    device = torch.cuda.get_device_name()
    header = ("| D | S | causal | pass | ours p=0 | ours p | ours p / p=0 | "
              + " | ".join(f"{n} p | ours/{n}" for n, _ in backends) + " |")
    print(f"device: {device}; bundle: {args.bundle}; dropout_p {p}; TFLOP/s")
    print(header, flush=True)
    rows = []
    for d, heads, s, batch, causal in grid([1024, 4096] if args.quick
                                           else [1024, 2048, 4096, 8192]):
        q, k, v, g, leaves = training_inputs(batch, heads, s, d)
        fwd = 4 * batch * heads * s * s * d / (2 if causal else 1)
        for label, flops, train in (("fwd", fwd, False),
                                    ("fwd+bwd", (1 + BWD_FLOPS) * fwd,
                                     True)):
            def run_ours(rate, train=train):
                if not train:
                    ours.attention(q, k, v, causal=causal,
                                   dropout_p=rate, seed=1, offset=2)
                    return
                out, _ = ours.attention(*leaves, causal=causal,
                                        dropout_p=rate, seed=1,
                                        offset=2)
                torch.autograd.grad(out, leaves, g)

            base = tflops_of(lambda: run_ours(0.0), flops)
            mine = tflops_of(lambda: run_ours(p), flops)
            cells = [cell(base), cell(mine), ratio(mine, base)]
            for _, backend in backends:
                def theirs(backend=backend, train=train):
                    with sdpa_kernel([backend]):
                        if not train:
                            F.scaled_dot_product_attention(
                                q, k, v, is_causal=causal,
                                dropout_p=p)
                            return
                        out = F.scaled_dot_product_attention(
                            *leaves, is_causal=causal, dropout_p=p)
                    torch.autograd.grad(out, leaves, g)

                t = tflops_of(theirs, flops)
                cells += [cell(t), ratio(mine, t)]
            row = (f"| {d} | {s} | {'yes' if causal else 'no'} | "
                   f"{label} | " + " | ".join(cells) + " |")
            print(row, flush=True)
            rows.append(row)
        q = k = v = g = leaves = None
    write_table("bench-dropout.md",
                f"Device: {device}. Bundle: `{args.bundle}`. bf16, "
                f"batch*seqlen={TOKENS}, hidden {HIDDEN}, dropout_p {p}; "
                "TFLOP/s with FlashAttention's FLOPs (dropout not counted); "
                "median of triton.testing.do_bench.", header, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
