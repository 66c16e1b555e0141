#!/usr/bin/env python3
"""Which tile wins per shape: the report of a tile sweep.

Usage: tune_report.py TIMINGS.json

TIMINGS.json is what `bench/gpu_check.py BUNDLE --time --all-variants
--out TIMINGS.json` writes for a bundle made with `attn-bundle
--all-candidates`: one row per (dtype, D, mask, S, variant), the variants of
a (dtype, D, mask) in the bundle's priority order, so the first is the one
the runtime dispatches. Prints, per shape, the dispatched variant, the
fastest one and the speedup a per-shape choice would give; then how many
shapes the tables' order already gets right. What to change in
lib/Target/TileTables.json (priority, masks) is for a person to decide:
a few percent is within run-to-run noise.
"""
import json
import sys
from collections import OrderedDict


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[2])
    with open(sys.argv[1]) as f:
        rows = json.load(f)
    shapes = OrderedDict()
    for r in rows:
        key = (r["dtype"], r["d"], r["mask"], r["s"])
        shapes.setdefault(key, []).append(r)
    print("| dtype | D | mask | S | dispatched | TFLOP/s | fastest | TFLOP/s "
          "| gain | fastest/flash |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    right = 0
    for (dtype, d, mask, s), rs in shapes.items():
        first = rs[0]
        best = max(rs, key=lambda r: r["ours_tflops"])
        gain = best["ours_tflops"] / first["ours_tflops"]
        right += best is first
        print(f"| {dtype} | {d} | {mask} | {s} | {first['variant']} | "
              f"{first['ours_tflops']:.1f} | {best['variant']} | "
              f"{best['ours_tflops']:.1f} | {gain:.2f} | "
              f"{best['ours_tflops'] / best['flash_tflops']:.2f} |")
    print(f"\nThe dispatched variant is the fastest for {right} of "
          f"{len(shapes)} shapes.")


if __name__ == "__main__":
    main()
