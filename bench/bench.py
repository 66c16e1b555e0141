#!/usr/bin/env python3
"""Forward attention throughput: our bundle's kernels against torch SDPA's
flash, cuDNN and memory-efficient backends, on the same bf16 inputs.

    python3 bench/bench.py --bundle DIR [--quick] [--bias] [--misalign]

Configurations: batch * seqlen = 16384 tokens, hidden 2048 (heads = 2048 / D),
D in {64, 128}, S in {512, ..., 16384}, causal off and on. Time is the median
of triton.testing.do_bench (CUDA events without triton) after warm-up;
TFLOP/s = 4 * B * H * S * S * D / time, halved when causal. Prints a table
and, with $OUT set, writes it to $OUT/bench.md. With --misalign, our column
runs on views of q, k and v that start one element past a 16-byte boundary
(the bundle's element-aligned twins serve them), and torch's backends, whose
flash path faults and cuDNN path answers wrongly on such views, get
contiguous copies.
"""

import argparse
import os
import statistics
import time
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))

TOKENS = 16384
HIDDEN = 2048
SEQLENS = [512, 1024, 2048, 4096, 8192, 16384]
HEAD_DIMS = [64, 128]


def parser(doc):
    """The arguments every grid benchmark takes: --bundle (default
    $ATTN_BUNDLE_DIR or .carry/bundles/sm_90a) and --quick."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--bundle", default=os.environ.get(
        "ATTN_BUNDLE_DIR", os.path.join(REPO, ".carry", "bundles", "sm_90a")))
    ap.add_argument("--quick", action="store_true",
                    help="S in {1024, 4096} only")
    ap.add_argument("--head-dims", default=",".join(map(str, HEAD_DIMS)),
                    type=lambda text: [int(d) for d in text.split(",")],
                    help="head dims of the training-shaped grid (default "
                    "64,128)")
    return ap


def grid(seqlens, head_dims=HEAD_DIMS):
    """(D, heads, S, batch, causal) of the training-shaped grid: batch * S
    = TOKENS, heads * D = HIDDEN (rounded down)."""
    for d in head_dims:
        for s in seqlens:
            for causal in (False, True):
                yield d, HIDDEN // d, s, TOKENS // s, causal


def training_inputs(batch, heads, s, d):
    """q, k, v, a gradient g (bf16), and leaf copies of q, k, v that
    require grad."""
    import torch
    q, k, v, g = (torch.randn(batch, heads, s, d, dtype=torch.bfloat16,
                              device="cuda") for _ in range(4))
    return q, k, v, g, [t.clone().requires_grad_() for t in (q, k, v)]


def bench_ms(fn):
    import torch
    try:
        from triton.testing import do_bench
        return do_bench(fn, warmup=25, rep=100, return_mode="median")
    except ImportError:
        pass
    for _ in range(5):
        fn()
    times = []
    for _ in range(20):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def per_call_us(fn, n, warmup=0):
    """Microseconds a call of `fn` over a loop of `n` calls (after `warmup`
    untimed ones), synchronized before and after: the host's time where a
    call costs it more than its kernels take."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n * 1e6


def ab_parser(doc, head_dims, seqlens):
    """The arguments of an A/B script (forward_ab.py, backward_ab.py):
    NAME=DIR bundles, head dims, lengths and rounds."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("bundles", nargs="+", help="NAME=DIR")
    ap.add_argument("--head-dims", default=head_dims)
    ap.add_argument("--seqlens", default=seqlens)
    ap.add_argument("--rounds", type=int, default=2)
    return ap


def load_ab_bundles(specs, variants=False):
    """Names, loaded libraries and forced variants ('' for none) of the
    NAME=DIR arguments of an A/B script; NAME=DIR@VARIANT only where
    `variants` allows it."""
    import attn_runtime
    names, libs, forced = [], [], []
    for spec in specs:
        name, _, path = spec.partition("=")
        path, at, variant = path.partition("@")
        if at and not variants:
            sys.exit(f"{spec}: this script forces no variant (NAME=DIR)")
        names.append(name)
        libs.append(attn_runtime.load(path))
        forced.append(variant)
    return names, libs, forced


def paged_cache(k, v, page):
    """K and V [B, H, S, D] as a paged cache of `page`-key pages, pages in
    order ([B * S / page, H, page, D]), and its block table [B, S / page]
    (int32): the same keys, so the layout does not change what is read."""
    import torch
    b, h, s, d = k.shape
    per = s // page

    def pages(t):
        return t.view(b, h, per, page, d).permute(0, 2, 1, 3, 4) \
            .reshape(b * per, h, page, d)
    table = torch.arange(b * per, dtype=torch.int32,
                         device=k.device).view(b, per)
    return pages(k), pages(v), table


def ab_header(names):
    """The header of an A/B table (forward_ab.py, backward_ab.py): each
    bundle's TFLOP/s, each over the first, cuDNN's, each over cuDNN's."""
    return ("| D | S | causal | " + " | ".join(names) + " | "
            + " | ".join(f"{n}/{names[0]}" for n in names[1:])
            + " | cudnn | " + " | ".join(f"{n}/cudnn" for n in names)
            + " | max rel diff |")


def ab_best_tflops(libs, rounds, flops, call):
    """Best TFLOP/s of `call(lib)` for each library over `rounds` rounds
    that alternate the libraries (a drifting clock hits each alike)."""
    best = [0.0] * len(libs)
    for _ in range(rounds):
        for i, lib in enumerate(libs):
            ms = bench_ms(lambda lib=lib: call(lib))
            best[i] = max(best[i], flops / ms / 1e9)
    return best


def ab_row(d, s, causal, best, cudnn, diff):
    """One row under ab_header."""
    return (f"| {d} | {s} | {'yes' if causal else 'no'} | "
            + " | ".join(f"{x:.1f}" for x in best) + " | "
            + " | ".join(f"{x / best[0]:.3f}" for x in best[1:])
            + f" | {cudnn:.1f} | "
            + " | ".join(f"{x / cudnn:.2f}" for x in best)
            + f" | {diff:.1e} |")


def shifted(x):
    """A copy of `x` as a view one element past its buffer's (aligned)
    start: what the element-aligned variants serve."""
    import torch
    flat = torch.empty(x.numel() + 1, dtype=x.dtype, device=x.device)
    view = flat[1:].view(x.shape)
    view.copy_(x)
    return view


def tflops_of(fn, flops):
    """TFLOP/s of `fn` doing `flops`, or the first line of why it fails."""
    import torch
    try:
        fn()
        torch.cuda.synchronize()
        return flops / bench_ms(fn) / 1e9
    except Exception as e:  # noqa: BLE001 - shown as n/a
        return str(e).splitlines()[0][:60]


def write_table(name, intro, header, rows):
    """The table as $OUT/`name` (markdown) when $OUT is set."""
    out = os.environ.get("OUT")
    if not out:
        return
    with open(os.path.join(out, name), "w") as f:
        f.write(intro + "\n\n")
        f.write(header + "\n")
        f.write("|" + "---|" * (header.count("|") - 1) + "\n")
        f.write("\n".join(rows) + "\n")


def main():
    ap = parser(__doc__)
    ap.add_argument("--bias", action="store_true",
                    help="add a bf16 bias of shape [1, H, S, S] (torch gets "
                    "it as attn_mask, with the causal mask folded in)")
    ap.add_argument("--dtype", choices=("bf16", "f16", "f32"), default="bf16",
                    help="input type (f32: torch's math backend is added, "
                    "the others refuse or run their own f32 path)")
    ap.add_argument("--misalign", action="store_true",
                    help="our kernels on views one element past an aligned "
                    "base (torch's backends on contiguous copies)")
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
    except Exception as e:  # noqa: BLE001 - the torch columns still run
        print(f"our kernels unavailable: {e}")
    backends = [("flash", SDPBackend.FLASH_ATTENTION),
                ("cudnn", SDPBackend.CUDNN_ATTENTION),
                ("efficient", SDPBackend.EFFICIENT_ATTENTION)]
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16,
             "f32": torch.float32}[args.dtype]
    if args.dtype == "f32":
        backends.append(("math", SDPBackend.MATH))
    device = torch.cuda.get_device_name()
    rows = []
    header = ("| D | S | B | H | causal | ours TFLOP/s | "
              + " | ".join(f"{n} TFLOP/s | ours/{n}" for n, _ in backends)
              + " |")
    print(f"device: {device}; bundle: {args.bundle}"
          + ("; ours on views one element past an aligned base, torch on "
             "contiguous copies" if args.misalign else ""))
    print(header, flush=True)
    seqlens = [1024, 4096] if args.quick else SEQLENS
    for d in args.head_dims:
        heads = HIDDEN // d
        for s in seqlens:
            batch = TOKENS // s
            for causal in (False, True):
                q, k, v = (torch.randn(batch, heads, s, d, dtype=dtype,
                                       device="cuda") for _ in range(3))
                oq, ok, ov = q, k, v
                if args.misalign:
                    oq, ok, ov = shifted(q), shifted(k), shifted(v)
                bias = mask = None
                if args.bias:
                    bias = torch.randn(1, heads, s, s, dtype=dtype,
                                       device="cuda")
                    mask = bias
                    if causal:
                        above = torch.ones(s, s, dtype=torch.bool,
                                           device="cuda").triu(1)
                        mask = bias.masked_fill(above, float("-inf"))
                flops = 4 * batch * heads * s * s * d / (2 if causal else 1)

                def tflops(fn):
                    return tflops_of(fn, flops)

                mine = "n/a"
                if ours is not None:
                    mine = tflops(lambda: ours.attention(oq, ok, ov,
                                                         causal=causal,
                                                         bias=bias))
                cells = []
                for name, backend in backends:
                    def run(backend=backend):
                        with sdpa_kernel([backend]):
                            if mask is None:
                                F.scaled_dot_product_attention(
                                    q, k, v, is_causal=causal)
                            else:
                                F.scaled_dot_product_attention(
                                    q, k, v, attn_mask=mask)
                    theirs = tflops(run)
                    ratio = (f"{mine / theirs:.2f}"
                             if isinstance(mine, float) and
                             isinstance(theirs, float) else "-")
                    cells.append(f"{theirs:.1f}" if isinstance(theirs, float)
                                 else f"n/a ({theirs})")
                    cells.append(ratio)
                mine_cell = (f"{mine:.1f}" if isinstance(mine, float)
                             else f"n/a ({mine})")
                row = (f"| {d} | {s} | {batch} | {heads} | "
                       f"{'yes' if causal else 'no'} | {mine_cell} | "
                       + " | ".join(cells) + " |")
                print(row, flush=True)
                rows.append(row)
                q = k = v = oq = ok = ov = bias = mask = None
    write_table("bench-bias.md" if args.bias else f"bench-{args.dtype}.md"
                if args.dtype != "bf16" else "bench.md",
                f"Device: {device}. Bundle: `{args.bundle}`. {args.dtype}, "
                f"batch*seqlen={TOKENS}, hidden {HIDDEN}"
                f"{', bias [1, H, S, S]' if args.bias else ''}; median of "
                "triton.testing.do_bench.", header, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
