#!/usr/bin/env python3
"""Measures every tile of a sweep bundle per sequence length and writes the
tuning file attn-bundle --tuning reads (docs/Tuning.md).

    # on the GPU machine:
    python3 bench/autotune.py --bundle SWEEP --out TUNING.json
        [--timings RAW.json] [--seqlens 256,...,16384] [--dtypes bf16,f16]
        [--head-dims 64,128] [--masks none,causal] [--rounds 3]
        [--threshold 0.03]
    # anywhere (no GPU, no torch): rebuild the tuning file from raw timings
    python3 bench/autotune.py --from-timings RAW.json --out TUNING.json

SWEEP is a bundle of attn-bundle --all-candidates ... --layouts dense
--unaligned=false. For each (dtype, D, mask) of its dense, unbiased,
fixed-head-dim variants (no softcap, dropout or serving layout, no element-
aligned twin), in bundle order, and each length S of --seqlens (batch =
max(1, 16384 // S), heads = max(1, 2048 // D), q, k, v randn [B, H, S, D]),
it forces each variant (Library.force_variant) and times it with
bench.bench_ms after one untimed call, in --rounds rounds over all the
variants of the shape (interleaved, so a drifting clock hits every tile
alike), keeping each variant's median; a variant that raises is recorded as
failed. TFLOP/s = 4 * B * H * S^2 * D / time, halved when causal.

The group's default is its first variant without a seqlen condition (the
tables' pick for dynamic lengths; --all-candidates lists size-specialized
tiles after it, with no condition). Per length, the fastest variant wins,
but the default is kept unless it is more than --threshold slower
(t_default > (1 + threshold) * t_best), so run-to-run noise does not flip
tiles. For the measured lengths s1 < ... < sn, length i covers
floor(sqrt(s(i-1) * si)) + 1 .. floor(sqrt(si * s(i+1))) (the first from 1,
the last unbounded); adjacent lengths with one winner are merged into one
entry, which keeps every length's measurement and, as runner-up, the best
other candidate of the length where it came closest to the winner.

Prints the per-length table of every variant (and writes it to
$OUT/autotune.md when $OUT is set). --timings also writes the raw
measurements (device, chip, toolchain, command, one row per (dtype, D,
mask, S, variant)); --from-timings reads such a file instead of measuring
and never imports torch: that is what CI tests (test/Bench).
"""

import argparse
import datetime
import importlib.util
import json
import math
import os
import re
import shlex
import statistics
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))

from bench import HIDDEN, TOKENS, write_table  # noqa: E402

SEQLENS = "256,512,1024,2048,4096,8192,16384"
# Variant-name pieces of the serving forms and score modifiers; bundle.json's
# fields say the same (layout, bias, softcap, dropout) and are checked too.
SUFFIXES = ("_softcap", "_bias", "_varlen", "_kvcache", "_paged", "_dropout",
            "_align")
SEQLEN_CONDITIONS = ("seqlen_q_min", "seqlen_q_max", "seqlen_k_min",
                     "seqlen_k_max")
CONFIG_INTS = ("block_m", "block_n", "warps", "stages")
TIMINGS_SCHEMA = "attn-autotune-timings"
HEADER = ("| dtype | D | mask | S | variant (candidate) | TFLOP/s | "
          "vs default |")


def parse_config(text):
    """{"candidate", "block_m", "block_n", "warps", "stages"} of an
    `#attn.config<name = "...", block_m = 128, ...>` string."""
    fields = dict(re.findall(r'(\w+) = ("[^"]*"|[^,>]+)', text or ""))
    if "name" not in fields:
        raise ValueError(f"no candidate name in config {text!r}")
    name = fields["name"].strip().strip('"')
    # A kernel of static, tile-multiple lengths names the tables' aligned
    # twin (TileTableParser: the same tile + "_aligned"); a tuning entry
    # names the tile itself, whose twin attn-bundle takes where it fits.
    if name.endswith("_aligned"):
        name = name[:-len("_aligned")]
    out = {"candidate": name}
    for key in CONFIG_INTS:
        if key not in fields:
            raise ValueError(f"no {key} in config {text!r}")
        out[key] = int(fields[key].strip())
    return out


def csv(text, conv=str):
    return [conv(x) for x in text.split(",") if x.strip()] if text else None


def sweep_groups(bundle, dtypes=None, head_dims=None, masks=None):
    """{(dtype, D, Dv, mask): [variant dict, ...]} of the bundle.json
    `bundle`'s dense, unbiased, fixed-head-dim variants in bundle order, each
    with its parsed config under "tile"; plus the chip they are for."""
    groups = {}
    chips = set()
    for v in bundle.get("variants", []):
        name = v["name"]
        if (v.get("layout", "dense") != "dense"
                or v.get("bias", "none") != "none" or v.get("softcap")
                or v.get("dropout") or "max_head_dim" in v
                or not v.get("head_dim")
                or any(s in name for s in SUFFIXES)):
            continue
        d, dv = v["head_dim"], v.get("head_dim_v", v["head_dim"])
        if ((dtypes and v["dtype"] not in dtypes)
                or (head_dims and d not in head_dims)
                or (masks and v["mask"] not in masks)):
            continue
        entry = dict(v, tile=parse_config(v.get("config", "")))
        groups.setdefault((v["dtype"], d, dv, v["mask"]), []).append(entry)
        chips.add(v.get("chip", bundle.get("chip")))
    if len(chips) > 1:
        sys.exit(f"autotune: the bundle's variants are for several chips "
                 f"({', '.join(sorted(map(str, chips)))}); a tuning file "
                 "is for one: build the sweep with one --chip")
    chip = chips.pop() if chips else bundle.get("chip")
    return groups, chip


def default_of(variants):
    """The group's default: its first variant without seqlen conditions."""
    for v in variants:
        if not any(c in v.get("conditions", {}) for c in SEQLEN_CONDITIONS):
            return v["name"]
    return variants[0]["name"]


def shape_of(s, d):
    """(batch, heads) of the training-shaped grid at length s, head dim d."""
    return max(1, TOKENS // s), max(1, HIDDEN // d)


def flops_of(row):
    b, h, s = row["batch"], row["heads"], row["seqlen"]
    f = 2.0 * b * h * s * s * (row["head_dim"] + row["head_dim_v"])
    return f / 2 if row["mask"] == "causal" else f


def tflops(row):
    return flops_of(row) / row["us"] / 1e6


def command_line():
    argv = list(sys.argv)
    path = os.path.abspath(argv[0])
    if path.startswith(REPO + os.sep):
        argv[0] = os.path.relpath(path, REPO)
    return "python3 " + shlex.join(argv)


# --- measuring (GPU) --------------------------------------------------------

def measure(args, out_rows):
    """Times every variant of the sweep; returns the raw timings dict (rows
    appended to `out_rows` as they come, for the table)."""
    import torch

    if not torch.cuda.is_available():
        sys.exit("autotune: no CUDA device (use --from-timings to rebuild a "
                 "tuning file from raw timings)")
    import attn_runtime
    from bench import bench_ms

    if os.environ.get("ATTN_FORCE_VARIANT"):
        sys.exit("autotune: unset ATTN_FORCE_VARIANT (it overrides the "
                 "variant forced per measurement)")
    with open(os.path.join(args.bundle, "bundle.json")) as f:
        bundle = json.load(f)
    groups, chip = sweep_groups(bundle, csv(args.dtypes),
                                csv(args.head_dims, int), csv(args.masks))
    if not groups:
        sys.exit(f"autotune: no dense, unbiased variant in {args.bundle} "
                 "for the dtypes, head dims and masks asked for")
    lib = attn_runtime.load(args.bundle)
    if importlib.util.find_spec("triton") is not None:  # what bench_ms uses
        method = "median of triton.testing.do_bench (25 ms warm-up, 100 ms)"
    else:
        method = ("median of 20 CUDA-event timings after 5 warm-up calls "
                  "(no triton)")
    method += (f"; the median of {args.rounds} rounds over all tiles of a "
               "shape")
    tdtype = {"bf16": torch.bfloat16, "f16": torch.float16,
              "f32": torch.float32}
    device = torch.cuda.get_device_name()
    raw = {"schema": TIMINGS_SCHEMA, "version": 1, "chip": chip,
           "device": device,
           "sm_count": torch.cuda.get_device_properties(0)
           .multi_processor_count,
           "toolchain": bundle.get("toolchain", "unknown"),
           "date": datetime.datetime.now(datetime.timezone.utc)
           .strftime("%Y-%m-%d"),
           "command": command_line(), "method": method,
           "bundle": args.bundle, "rows": []}
    print(f"device: {device}; chip: {chip}; bundle: {args.bundle}")
    print(HEADER)
    print("|---|---|---|---|---|---|---|", flush=True)
    seqlens = csv(args.seqlens or SEQLENS, int)
    for (dtype, d, dv, mask), variants in sorted(groups.items()):
        default = default_of(variants)
        for s in sorted(seqlens):
            batch, heads = shape_of(s, d)
            q, k = (torch.randn(batch, heads, s, d, dtype=tdtype[dtype],
                                device="cuda") for _ in range(2))
            v = torch.randn(batch, heads, s, dv, dtype=tdtype[dtype],
                            device="cuda")
            causal = mask == "causal"
            rows = []
            for var in variants:
                row = {"dtype": dtype, "head_dim": d, "head_dim_v": dv,
                       "mask": mask, "seqlen": s, "batch": batch,
                       "heads": heads, "variant": var["name"],
                       "default": var["name"] == default}
                row.update(var["tile"])
                rows.append(row)

            def fn():
                lib.attention(q, k, v, causal=causal)

            # Rounds over all tiles, each tile's median of them: a drift of
            # the clock (or a neighbour's load) hits every tile alike.
            times = {r["variant"]: [] for r in rows}
            for _ in range(args.rounds):
                for row in rows:
                    if "error" in row:
                        continue
                    lib.force_variant(row["variant"])
                    try:
                        fn()
                        torch.cuda.synchronize()
                        times[row["variant"]].append(bench_ms(fn) * 1000.0)
                    except Exception as e:  # noqa: BLE001 - recorded
                        row["error"] = (str(e).splitlines() or ["?"])[0][:200]
                    finally:
                        lib.force_variant(None)
            for row in rows:
                if "error" not in row:
                    row["us"] = round(statistics.median(times[row["variant"]]),
                                      1)
                    row["tflops"] = round(tflops(row), 1)
            raw["rows"].extend(rows)
            for line in table_lines(rows, choose(rows, args.threshold)):
                print(line, flush=True)
                out_rows.append(line)
            q = k = v = None  # freed before the next length's
    return raw


# --- building the tuning file (no GPU) ---------------------------------------

def choose(rows, threshold):
    """(chosen row, runner-up row or None) of one length's rows, or (None,
    None) when every variant failed."""
    ok = [r for r in rows if "us" in r]
    if not ok:
        return None, None
    best = min(ok, key=lambda r: r["us"])
    default = next((r for r in rows if r.get("default")), rows[0])
    chosen = best
    if "us" in default and not default["us"] > (1 + threshold) * best["us"]:
        chosen = default
    others = [r for r in ok if r is not chosen]
    return chosen, (min(others, key=lambda r: r["us"]) if others else None)


def table_lines(rows, choice):
    chosen = choice[0]
    default = next((r for r in rows if r.get("default")), rows[0])
    lines = []
    for r in rows:
        label = f"{r['variant']} ({r['candidate']})"
        if r is chosen:
            label += " **chosen**"
        if "us" in r:
            perf = f"{tflops(r):.1f}"
            vs = (f"{default['us'] / r['us']:.3f}" if "us" in default
                  else "-")
        else:
            perf, vs = f"failed: {r['error'][:60]}", "-"
        lines.append(f"| {r['dtype']} | {r['head_dim']} | {r['mask']} | "
                     f"{r['seqlen']} | {label} | {perf} | {vs} |")
    return lines


def group_rows(rows):
    """{(dtype, D, Dv, mask): {S: [rows in measured order]}}, with the
    default marked on every length: rows that say none take the group's
    first variant."""
    groups = {}
    for r in rows:
        r.setdefault("head_dim_v", r["head_dim"])
        key = (r["dtype"], r["head_dim"], r["head_dim_v"], r["mask"])
        groups.setdefault(key, {}).setdefault(r["seqlen"], []).append(r)
    for lengths in groups.values():
        named = [r["variant"] for rs in lengths.values() for r in rs
                 if r.get("default")]
        first = named[0] if named else next(iter(lengths.values()))[0][
            "variant"]
        for rs in lengths.values():
            for r in rs:
                r["default"] = r["variant"] == first
    return groups


def buckets(lengths):
    """[(seqlen_min, seqlen_max or None)] of sorted measured lengths."""
    out = []
    for i, s in enumerate(lengths):
        lo = 1 if i == 0 else math.isqrt(lengths[i - 1] * s) + 1
        hi = (math.isqrt(s * lengths[i + 1]) if i + 1 < len(lengths)
              else None)
        out.append((lo, hi))
    return out


def config_of(row):
    return {"candidate": row["candidate"],
            **{k: row[k] for k in CONFIG_INTS}}


def blocks_per_sm(row, sm_count):
    """Workgroups per multiprocessor of a measured grid (B x H x query
    blocks), rounded down."""
    blocks = row["batch"] * row["heads"] * -(-row["seqlen"] // row["block_m"])
    return blocks // sm_count


def build_entries(rows, threshold, table, sm_count=None):
    """The tuning file's entries of raw timing rows; appends the per-length
    table lines to `table`. With the device's multiprocessor count, each
    entry records the fewest workgroups per multiprocessor among its
    measured grids (min_blocks_per_sm): attn-bundle makes that a dispatch
    condition, since a grid that fills the GPU less may rank the tiles
    otherwise."""
    entries = []
    for (dtype, d, dv, mask), by_s in sorted(group_rows(rows).items()):
        picks = []
        for s in sorted(by_s):
            choice = choose(by_s[s], threshold)
            table.extend(table_lines(by_s[s], choice))
            if choice[0] is None:
                print(f"autotune: every variant failed for {dtype} D={d} "
                      f"{mask} S={s}; length left out", file=sys.stderr)
                continue
            picks.append((s,) + choice)
        runs = []
        for (s, chosen, runner), (lo, hi) in zip(
                picks, buckets([p[0] for p in picks])):
            if runs and runs[-1]["config"] == config_of(chosen):
                runs[-1]["seqlen_max"] = hi
                runs[-1]["picks"].append((chosen, runner))
                continue
            runs.append({"seqlen_min": lo, "seqlen_max": hi,
                         "config": config_of(chosen),
                         "picks": [(chosen, runner)]})
        for run in runs:
            entry = {"direction": "forward", "dtype": dtype, "head_dim": d,
                     "head_dim_v": dv, "mask": mask,
                     "seqlen_min": run["seqlen_min"]}
            if run["seqlen_max"] is not None:
                entry["seqlen_max"] = run["seqlen_max"]
            if sm_count:
                entry["min_blocks_per_sm"] = min(
                    blocks_per_sm(c, sm_count) for c, _ in run["picks"])
            entry["config"] = run["config"]
            entry["measured"] = [
                {"seqlen": c["seqlen"], "batch": c["batch"],
                 "heads": c["heads"], "us": round(c["us"], 1),
                 "tflops": round(tflops(c), 1)}
                for c, _ in run["picks"]]
            # The runner-up of a merged run: that of the length where it
            # came closest to the winner (smallest t_runner / t_chosen), the
            # length whose choice was the least certain.
            close = [(r["us"] / c["us"], r) for c, r in run["picks"] if r]
            if close:
                r = min(close, key=lambda x: x[0])[1]
                entry["runner_up"] = {"candidate": r["candidate"],
                                      "us": round(r["us"], 1),
                                      "tflops": round(tflops(r), 1)}
            entries.append(entry)
    entries.sort(key=lambda e: (e["dtype"], e["head_dim"], e["head_dim_v"],
                                e["mask"], e["seqlen_min"]))
    return entries


def tuning_of(raw, threshold, table):
    method = raw.get("method", "unknown")
    method += (f"; a tile other than the tables' first choice wins by more "
               f"than {threshold * 100:g}%")
    return {"schema": "attn-tuning", "version": 1, "chip": raw["chip"],
            "device": raw.get("device", "unknown"),
            "toolchain": raw.get("toolchain", "unknown"),
            "date": raw.get("date") or datetime.datetime.now(
                datetime.timezone.utc).strftime("%Y-%m-%d"),
            "command": raw.get("command", command_line()),
            "method": method,
            "entries": build_entries(raw["rows"], threshold, table,
                                     raw.get("sm_count"))}


def dump_timings(raw, f):
    """The raw timings as JSON, one row a line."""
    head = {k: v for k, v in raw.items() if k != "rows"}
    f.write("{\n")
    for k, v in head.items():
        f.write(f" {json.dumps(k)}: {json.dumps(v)},\n")
    f.write(' "rows": [\n')
    f.write(",\n".join("  " + json.dumps(r) for r in raw["rows"]))
    f.write("\n ]\n}\n")


def filter_rows(rows, args):
    """The rows of --from-timings that --dtypes, --head-dims, --masks and
    --seqlens (each only when given) keep."""
    keep = {"dtype": csv(args.dtypes), "head_dim": csv(args.head_dims, int),
            "mask": csv(args.masks), "seqlen": csv(args.seqlens, int)}
    return [r for r in rows
            if all(v is None or r[k] in v for k, v in keep.items())]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--bundle", help="the --all-candidates sweep bundle")
    src.add_argument("--from-timings", metavar="FILE",
                     help="build the tuning file from raw timings (no GPU)")
    ap.add_argument("--out", required=True, help="the tuning file to write")
    ap.add_argument("--timings", metavar="FILE",
                    help="also write the raw timings here")
    ap.add_argument("--seqlens", help=f"default {SEQLENS} (--from-timings: "
                    "every length of the file)")
    ap.add_argument("--dtypes", help="default: every dtype of the bundle")
    ap.add_argument("--head-dims", help="default: every fixed head dim of "
                    "the bundle")
    ap.add_argument("--masks", help="default none,causal (--from-timings: "
                    "every mask of the file)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds over all tiles of a shape; each tile's "
                    "time is the median of its rounds (default 3)")
    ap.add_argument("--threshold", type=float, default=0.03,
                    help="how much faster than the default (first) tile "
                    "another must be to win (default 0.03)")
    args = ap.parse_args()

    table = []
    if args.from_timings:
        with open(args.from_timings) as f:
            raw = json.load(f)
        if raw.get("schema") != TIMINGS_SCHEMA or raw.get("version", 0) > 1:
            sys.exit(f"autotune: {args.from_timings}: not {TIMINGS_SCHEMA} "
                     f"version 1 (schema {raw.get('schema')!r}, version "
                     f"{raw.get('version')!r})")
        raw["rows"] = filter_rows(raw["rows"], args)
        print(f"device: {raw.get('device')}; chip: {raw.get('chip')}; "
              f"timings: {args.from_timings}")
        print(HEADER)
        print("|---|---|---|---|---|---|---|")
        tuning = tuning_of(raw, args.threshold, table)
        print("\n".join(table))
    else:
        args.masks = args.masks or "none,causal"
        raw = measure(args, table)
        tuning = tuning_of(raw, args.threshold, [])
    if args.timings:
        with open(args.timings, "w") as f:
            dump_timings(raw, f)
    with open(args.out, "w") as f:
        json.dump(tuning, f, indent=2)
        f.write("\n")
    n = len(tuning["entries"])
    print(f"\n{n} entr{'y' if n == 1 else 'ies'} written to {args.out}")
    write_table("autotune.md",
                f"Device: {raw.get('device')}. Chip: {raw.get('chip')}. "
                f"{raw.get('method')}; batch*seqlen={TOKENS}, "
                f"heads*D={HIDDEN}; threshold {args.threshold:g}.",
                HEADER, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
