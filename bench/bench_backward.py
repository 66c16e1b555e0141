#!/usr/bin/env python3
"""Backward attention throughput: our bundle's backward plans against torch
SDPA's flash, cuDNN and memory-efficient backends, on the same bf16 inputs,
in one process.

    python3 bench/bench_backward.py --bundle DIR [--quick]

Configurations: batch * seqlen = 16384 tokens, hidden 2048 (heads = 2048 /
D), D in {64, 128}, S in {1024, ..., 16384}, causal off and on. Two
measurements each: forward + backward (out = attention(q, k, v);
autograd.grad(out, (q, k, v), dout)) and backward alone (ours:
attention_backward on a saved out and lse; torch: autograd.grad with
retain_graph on a saved graph). FLOPs follow FlashAttention: forward
4 * B * H * S * S * D (halved when causal), backward 2.5x that (5 matmuls
against 2), forward + backward 3.5x. Time is the median of
triton.testing.do_bench (CUDA events without triton). A backend torch
refuses is reported as n/a with its reason; a configuration whose single
call of ours takes more than --max-call-seconds (the naive reference bundle)
is reported as too slow. Prints a table and, with $OUT set, writes it to
$OUT/bench-backward.md.
"""

import os
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench import (HIDDEN, TOKENS, bench_ms, grid,  # noqa: E402
                   parser, training_inputs)

SEQLENS = [1024, 2048, 4096, 8192, 16384]
BWD_FLOPS = 2.5  # times the forward's


def measure(fn, flops, max_seconds):
    """TFLOP/s of fn, or the reason it could not run (a string)."""
    import torch
    try:
        fn()  # loads the modules, which the call's time must not count
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        once = time.perf_counter() - start
        if once > max_seconds:
            return f"too slow ({once:.1f} s a call)"
        return flops / bench_ms(fn) / 1e9
    except Exception as e:  # noqa: BLE001 - shown as n/a
        return str(e).strip().splitlines()[0][:60]


def cell(x):
    return f"{x:.1f}" if isinstance(x, float) else f"n/a ({x})"


def ratio(a, b):
    return (f"{a / b:.2f}" if isinstance(a, float) and isinstance(b, float)
            else "-")


def main():
    ap = parser(__doc__)
    ap.add_argument("--deterministic", action="store_true",
                    help="our deterministic plans (no atomics); torch's "
                    "backends as they run by default")
    ap.add_argument("--max-call-seconds", type=float, default=2.0,
                    help="skip our column where one call takes longer")
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    if not torch.cuda.is_available():
        print("SKIP bench: no CUDA device")
        return 0
    ours = None
    try:
        import attn_runtime
        ours = attn_runtime.load(args.bundle)
        if not ours.plans:
            print(f"our bundle {args.bundle} has no backward plans")
    except Exception as e:  # noqa: BLE001 - the torch columns still run
        print(f"our kernels unavailable: {e}")
    backends = [("flash", SDPBackend.FLASH_ATTENTION),
                ("cudnn", SDPBackend.CUDNN_ATTENTION),
                ("efficient", SDPBackend.EFFICIENT_ATTENTION)]
    device = torch.cuda.get_device_name()
    header = ("| D | S | B | H | causal | ours fwd+bwd | ours bwd | "
              + " | ".join(f"{n} fwd+bwd | {n} bwd | ours/{n} fwd+bwd | "
                           f"ours/{n} bwd" for n, _ in backends) + " |")
    print(f"device: {device}; bundle: {args.bundle}; TFLOP/s")
    print(header, flush=True)
    rows = []
    for d, heads, s, batch, causal in grid([1024, 4096] if args.quick
                                           else SEQLENS, args.head_dims):
        q, k, v, g, leaves = training_inputs(batch, heads, s, d)
        fwd = 4 * batch * heads * s * s * d / (2 if causal else 1)
        both_flops, bwd_flops = (1 + BWD_FLOPS) * fwd, BWD_FLOPS * fwd

        mine = ["no bundle", "no bundle"]
        if ours is not None and ours.plans:
            def ours_both():
                # The autograd path picks deterministic plans in torch's
                # deterministic mode.
                previous = torch.are_deterministic_algorithms_enabled()
                torch.use_deterministic_algorithms(args.deterministic)
                try:
                    out, _ = ours.attention(*leaves, causal=causal)
                    torch.autograd.grad(out, leaves, g)
                finally:
                    torch.use_deterministic_algorithms(previous)

            mine[0] = measure(ours_both, both_flops,
                              args.max_call_seconds)
            if isinstance(mine[0], float) or "slow" not in mine[0]:
                with torch.no_grad():
                    out, lse = ours.attention(q, k, v, causal=causal,
                                              return_lse=True)
                mine[1] = measure(
                    lambda: ours.attention_backward(
                        g, q, k, v, out, lse, causal=causal,
                        deterministic=args.deterministic),
                    bwd_flops, args.max_call_seconds)
            else:
                mine[1] = mine[0]
        cells = [cell(mine[0]), cell(mine[1])]
        for _, backend in backends:
            def theirs_both(backend=backend):
                with sdpa_kernel([backend]):
                    out = F.scaled_dot_product_attention(
                        *leaves, is_causal=causal)
                torch.autograd.grad(out, leaves, g)

            both = measure(theirs_both, both_flops, 60.0)
            bwd = both
            if isinstance(both, float):
                with sdpa_kernel([backend]):
                    saved = F.scaled_dot_product_attention(
                        *leaves, is_causal=causal)
                bwd = measure(lambda saved=saved: torch.autograd.grad(
                    saved, leaves, g, retain_graph=True), bwd_flops,
                    60.0)
                saved = None
            cells += [cell(both), cell(bwd), ratio(mine[0], both),
                      ratio(mine[1], bwd)]
        row = (f"| {d} | {s} | {batch} | {heads} | "
               f"{'yes' if causal else 'no'} | " + " | ".join(cells)
               + " |")
        print(row, flush=True)
        rows.append(row)
        q = k = v = g = leaves = None
    out_dir = os.environ.get("OUT")
    if out_dir:
        with open(os.path.join(out_dir, "bench-backward.md"), "w") as f:
            f.write(f"Device: {device}. Bundle: `{args.bundle}`. bf16, "
                    f"batch*seqlen={TOKENS}, hidden {HIDDEN}; TFLOP/s with "
                    "FlashAttention's FLOPs (backward = 2.5x forward); "
                    "median of triton.testing.do_bench.\n\n")
            f.write(header + "\n")
            f.write("|" + "---|" * (header.count("|") - 1) + "\n")
            f.write("\n".join(rows) + "\n")
    # The summary, last: ours against each backend, geometric means of the
    # ratios that could be measured.
    print("\nsummary (geometric mean of ours/theirs over the table):")
    import math
    for i, (name, _) in enumerate(backends):
        for j, what in ((2, "fwd+bwd"), (3, "bwd")):
            vals = []
            for row in rows:
                parts = [p.strip() for p in row.strip("|").split("|")]
                try:
                    vals.append(float(parts[7 + 4 * i + j]))
                except ValueError:
                    pass
            mean = (math.exp(sum(map(math.log, vals)) / len(vals))
                    if vals else None)
            print(f"  ours/{name} {what}: "
                  f"{f'{mean:.2f}' if mean else 'n/a'} ({len(vals)} configs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
