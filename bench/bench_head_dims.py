#!/usr/bin/env python3
"""Forward throughput per head dim, padded ones included: every variant of
the bundle that serves a head dim, forced one at a time, next to the
runtime's own choice and torch SDPA's flash and cuDNN backends.

    python3 bench/bench_head_dims.py --bundle DIR [--head-dims 40,59,...]
                                     [--seqlens 1024,4096] [--misalign]

bf16 (--dtype), batch * seqlen = 16384 tokens, 16 heads. TFLOP/s = 4 * B * H * S^2 * D
/ time (the op's D, not the padded tile's), halved when causal. Head dims
that are not multiples of 8 are outside torch's flash and cuDNN kernels;
their cells say so. With --misalign our kernels run on views one element
past a 16-byte boundary (the element-aligned variants) and torch on
contiguous copies. Writes $OUT/bench-head-dims.md when $OUT is set.
"""

import argparse
import json
import os
import re
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))

from bench import shifted, tflops_of, write_table  # noqa: E402

TOKENS = 16384
HEADS = 16
SERVING = ("_softcap", "_bias", "_varlen", "_kvcache", "_paged")


def variants_for(names, d, mask, misalign, dtype="bf16"):
    """The dense, unbiased variants for (bf16, d, mask), in bundle order:
    the element-aligned ones with --misalign, else the others (or those when
    the head dim only has element-aligned ones)."""
    prefix = f"fwd_{dtype}_d{d}_{mask}_"
    dense = [n for n in names if n.startswith(prefix)
             and not any(s in n for s in SERVING)]
    twins = [n for n in dense if "_align" in n]
    aligned = [n for n in dense if "_align" not in n]
    if misalign:
        return twins or dense
    return aligned or twins


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--head-dims",
                    default="40,59,64,80,96,111,128,160,192,224,256")
    ap.add_argument("--seqlens", default="1024,4096")
    ap.add_argument("--misalign", action="store_true")
    ap.add_argument("--dtype", choices=("bf16", "f16", "f32"), default="bf16")
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    if not torch.cuda.is_available():
        print("SKIP bench_head_dims: no CUDA device")
        return 0
    import attn_runtime
    lib = attn_runtime.load(args.bundle)
    names = list(lib.variants)
    # The matrix instruction of each variant, for the table's labels.
    with open(os.path.join(args.bundle, "bundle.json")) as f:
        mma = {v["name"]: m.group(1) for v in json.load(f)["variants"]
               if (m := re.search(r"mma = ([\w.]+)", v.get("config", "")))}
    device = torch.cuda.get_device_name()
    header = ("| D | S | causal | variant | TFLOP/s | flash TFLOP/s | "
              "ours/flash | cudnn TFLOP/s | ours/cudnn |")
    print(f"device: {device}; bundle: {args.bundle}"
          + ("; ours on misaligned views" if args.misalign else ""))
    print(header, flush=True)
    rows = []
    for d in (int(x) for x in args.head_dims.split(",")):
        for s in (int(x) for x in args.seqlens.split(",")):
            batch = max(1, TOKENS // s)
            for causal in (False, True):
                mask = "causal" if causal else "none"
                tdtype = {"bf16": torch.bfloat16, "f16": torch.float16,
                          "f32": torch.float32}[args.dtype]
                q, k, v = (torch.randn(batch, HEADS, s, d, dtype=tdtype,
                                       device="cuda") for _ in range(3))
                oq, ok, ov = q, k, v
                if args.misalign:
                    oq, ok, ov = shifted(q), shifted(k), shifted(v)
                flops = 4 * batch * HEADS * s * s * d / (2 if causal else 1)

                def tflops(fn):
                    t = tflops_of(fn, flops)
                    return t if isinstance(t, float) else "n/a: " + t[:50]

                theirs = []
                for backend in (SDPBackend.FLASH_ATTENTION,
                                SDPBackend.CUDNN_ATTENTION):
                    def run(backend=backend):
                        with sdpa_kernel([backend]):
                            F.scaled_dot_product_attention(q, k, v,
                                                           is_causal=causal)
                    theirs.append(tflops(run))

                def row(label, mine):
                    cells = []
                    for t in theirs:
                        cells.append(f"{t:.1f}" if isinstance(t, float)
                                     else t)
                        cells.append(f"{mine / t:.2f}"
                                     if isinstance(mine, float)
                                     and isinstance(t, float) else "-")
                    line = (f"| {d} | {s} | {'yes' if causal else 'no'} | "
                            f"{label} | "
                            + (f"{mine:.1f}" if isinstance(mine, float)
                               else mine)
                            + " | " + " | ".join(cells) + " |")
                    print(line, flush=True)
                    rows.append(line)

                def ours():
                    lib.attention(oq, ok, ov, causal=causal)

                try:
                    chosen = lib.select_variant(oq, ok, ov, causal=causal)
                except attn_runtime.AttnError as e:
                    chosen = "none: " + e.message.splitlines()[0][:50]
                row(f"dispatched ({chosen})", tflops(ours))
                for name in variants_for(names, d, mask, args.misalign,
                                         args.dtype):
                    lib.force_variant(name)
                    try:
                        row(f"{name} ({mma.get(name, '?')})", tflops(ours))
                    finally:
                        lib.force_variant(None)
                q = k = v = oq = ok = ov = None
    write_table("bench-head-dims.md",
                f"Device: {device}. Bundle: `{args.bundle}`. bf16, "
                f"batch*seqlen={TOKENS}, {HEADS} heads; median of "
                "triton.testing.do_bench.", header, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
