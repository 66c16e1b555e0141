#!/usr/bin/env python3
"""Per run-time size, as PyTorch Inductor's autotuning table: every single
tile of a sweep bundle (forced) next to what a tuned bundle dispatches.

    python3 bench/bench_dispatch.py --bundle TUNED --sweep SWEEP
        [--head-dims 64,128] [--dtype bf16] [--masks none,causal]

TUNED is the bundle whose own dispatch is measured (size-specialized
variants from a tuning file or size hints, docs/Tuning.md); SWEEP one built
with attn-bundle --all-candidates --layouts dense --unaligned=false, whose
dense, unbiased variants of each (dtype, D, mask) are forced one at a time
(its first is the tables' default). Both are loaded in one process.

Rows: S in 128 ... 32768 with batch * S = 16384 tokens (batch at least 1)
and heads = 2048 / D; the under-filled grids batch 1, 8 heads at S = 1024
and 4096; and a decode-like call, Sq = 16 against Sk = 4096, batch 8
(without a mask only: the top-left causal mask would show those 16 queries
only the first keys). TFLOP/s = 4 * B * H * Sq * Sk * D / time (the median
of bench.bench_ms), halved when causal. Columns: each single tile (by its
variant name's tile suffix; "-" where the sweep has no such tile for that
D and mask), the best of them, the dispatched variant and its TFLOP/s, and
the ratios dispatched / best single and dispatched / the sweep's default.
Writes $OUT/bench-dispatch.md when $OUT is set.
"""

import argparse
import json
import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))

from autotune import default_of, sweep_groups  # noqa: E402
from bench import HIDDEN, TOKENS, tflops_of, write_table  # noqa: E402

SEQLENS = [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]


def shapes(d, mask):
    """(batch, heads, Sq, Sk) of the rows for head dim d."""
    heads = max(1, HIDDEN // d)
    rows = [(max(1, TOKENS // s), heads, s, s) for s in SEQLENS]
    rows += [(1, 8, 1024, 1024), (1, 8, 4096, 4096)]
    if mask == "none":
        rows.append((8, heads, 16, 4096))
    return rows


def short(name, prefix):
    return name[len(prefix):] if name.startswith(prefix) else name


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", required=True,
                    help="the tuned bundle (the runtime's dispatch)")
    ap.add_argument("--sweep", required=True,
                    help="the --all-candidates bundle (single tiles)")
    ap.add_argument("--head-dims", default="64,128")
    ap.add_argument("--dtype", choices=("bf16", "f16", "f32"), default="bf16")
    ap.add_argument("--masks", default="none,causal")
    args = ap.parse_args()
    head_dims = [int(x) for x in args.head_dims.split(",") if x]
    masks = [m for m in args.masks.split(",") if m]

    import torch

    if not torch.cuda.is_available():
        print("SKIP bench_dispatch: no CUDA device")
        return 0
    import attn_runtime

    if os.environ.get("ATTN_FORCE_VARIANT"):
        sys.exit("bench_dispatch: unset ATTN_FORCE_VARIANT (it would force "
                 "the tuned bundle's dispatch too)")
    tuned = attn_runtime.load(args.bundle)
    sweep = attn_runtime.load(args.sweep)
    with open(os.path.join(args.sweep, "bundle.json")) as f:
        groups, chip = sweep_groups(json.load(f), [args.dtype], head_dims,
                                    masks)
    tdtype = {"bf16": torch.bfloat16, "f16": torch.float16,
              "f32": torch.float32}[args.dtype]

    # The tile columns: every group's tiles by variant-name suffix, in order
    # of first appearance; the legend says which candidate each one is.
    plan, columns, legend = [], [], []
    for d in head_dims:
        for mask in masks:
            variants = groups.get((args.dtype, d, d, mask))
            if not variants:
                legend.append(f"D={d} {mask}: no variant in the sweep, "
                              "left out")
                continue
            prefix = f"fwd_{args.dtype}_d{d}_{mask}_"
            default = default_of(variants)
            tiles = {}
            for v in variants:
                label = short(v["name"], prefix)
                tiles[label] = v["name"]
                if label not in columns:
                    columns.append(label)
            legend.append(f"D={d} {mask}: " + ", ".join(
                f"{short(v['name'], prefix)} = {v['tile']['candidate']}"
                + (" (default)" if v["name"] == default else "")
                for v in variants))
            plan.append((d, mask, prefix, tiles, short(default, prefix)))

    device = torch.cuda.get_device_name()
    header = ("| D | mask | B | H | Sq | Sk | "
              + " | ".join(columns)
              + " | best single | dispatched | TFLOP/s | /best | /default |")
    print(f"device: {device}; chip: {chip}; tuned: {args.bundle}; "
          f"sweep: {args.sweep}; {args.dtype}")
    for line in legend:
        print(f"- {line}")
    print(header)
    print("|" + "---|" * (header.count("|") - 1), flush=True)
    rows, failures = [], {}

    def cell(t, label):
        if isinstance(t, float):
            return f"{t:.1f}"
        failures.setdefault(t, label)
        return "n/a"

    for d, mask, prefix, tiles, default in plan:
        causal = mask == "causal"
        for batch, heads, sq, sk in shapes(d, mask):
            q = torch.randn(batch, heads, sq, d, dtype=tdtype, device="cuda")
            k, v = (torch.randn(batch, heads, sk, d, dtype=tdtype,
                                device="cuda") for _ in range(2))
            flops = 4.0 * batch * heads * sq * sk * d / (2 if causal else 1)
            where = f"D={d} {mask} B={batch} H={heads} Sq={sq} Sk={sk}"

            single = {}
            for label, name in tiles.items():
                sweep.force_variant(name)
                try:
                    single[label] = tflops_of(
                        lambda: sweep.attention(q, k, v, causal=causal),
                        flops)
                finally:
                    sweep.force_variant(None)
            try:
                chosen = short(tuned.select_variant(q, k, v, causal=causal),
                               prefix)
            except attn_runtime.AttnError as e:
                chosen = "none: " + e.message.splitlines()[0][:50]
            mine = tflops_of(lambda: tuned.attention(q, k, v, causal=causal),
                             flops)

            ok = {lb: t for lb, t in single.items() if isinstance(t, float)}
            best = max(ok, key=ok.get) if ok else None
            cells = [cell(single[c], f"{where} {tiles[c]}") if c in single
                     else "-" for c in columns]
            ratio_best = ratio_default = "-"
            if isinstance(mine, float):
                if best:
                    ratio_best = f"{mine / ok[best]:.2f}"
                if default in ok:
                    ratio_default = f"{mine / ok[default]:.2f}"
            line = (f"| {d} | {mask} | {batch} | {heads} | {sq} | {sk} | "
                    + " | ".join(cells)
                    + f" | {best or '-'} | {chosen} | "
                    + cell(mine, f"{where} dispatched")
                    + f" | {ratio_best} | {ratio_default} |")
            print(line, flush=True)
            rows.append(line)
            q = k = v = None  # freed before the next row's
    for why, first in failures.items():
        print(f"n/a: {why} (first: {first})")
    write_table("bench-dispatch.md",
                f"Device: {device}. Tuned bundle: `{args.bundle}`; sweep: "
                f"`{args.sweep}` ({chip}). {args.dtype}; TFLOP/s, median of "
                "bench.bench_ms; tile columns forced from the sweep.\n\n"
                + "\n".join(f"- {line}" for line in legend),
                header, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
