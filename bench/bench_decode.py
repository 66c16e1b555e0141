#!/usr/bin/env python3
"""Decode throughput: lib.attention_kvcache (one query row per sequence, a
KV cache contiguous or paged) against torch SDPA's flash, cuDNN and
memory-efficient backends on the same bf16 tensors, D = 128.

    python3 bench/bench_decode.py --bundle DIR [--quick]

Rows: B in {1, 8, 64}, Sk in {4k, 16k, 64k, 128k}, GQA 32:8 and 8:1; rows
whose K and V exceed 16 GiB are left out. GB/s counts the K and V bytes read
(B * Hkv * Sk * D * 2 tensors * 2 bytes) over the median time (bench.py's
bench_ms); the ceiling is the device copy rate (2.96 TB/s on the H100).
torch's backends get dense [B, H, Sk, D] caches with enable_gqa (the ones
that refuse GQA get n/a); the paged rows time our kernels only (torch SDPA
has no paged form). Prints a table and writes it to $OUT/decode.md when OUT
is set. "attn" is lib.attention_kvcache per call; "attn prepared" relaunches
one lib.prepare_kvcache call (checks and workspace done once, as a serving
loop or a CUDA graph would), and "paged prepared" the same for the paged
cache; the x-columns compare "attn" with each backend.
"""

import argparse
import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import bench_ms, paged_cache  # noqa: E402

D = 128
LIMIT_BYTES = 16 << 30


def warm_ms(fn):
    """bench_ms of fn after one call waited for: a path's first call loads
    its module, which do_bench's estimate of a call would otherwise take
    in (the first row of a table read a third of the rate)."""
    import torch
    fn()
    torch.cuda.synchronize()
    return bench_ms(fn)


def torch_ms(backend, q, k, v):
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel

    def run():
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    try:
        with sdpa_kernel([backend]):
            return warm_ms(run)
    except RuntimeError:
        return None


def prefill_rows(lib):
    """Varlen prefill against the same tokens as a dense batch: 16 heads,
    D = 128, causal, bf16. Equal lengths run the same work both ways (the
    ratio is the packed form's cost); mixed lengths are compared by
    TFLOP/s of the visible pairs."""
    import torch

    lines = ["", "# Varlen prefill, bf16, D = 128, 16 heads, causal", "",
             "| lengths | varlen TFLOP/s | dense TFLOP/s (same tokens, "
             "equal lengths) | varlen / dense |", "|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    h = 16
    for lens in ([2048] * 8, [4096] * 4, [512] * 32,
                 [8192, 4096, 2048, 1024, 512, 256, 128, 128],
                 [3000, 17, 5000, 1, 8000, 333]):
        total = sum(lens)
        q = torch.randn(total, h, D, dtype=torch.bfloat16, device="cuda")
        k, v = torch.randn_like(q), torch.randn_like(q)
        cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0).tolist()),
                          dtype=torch.int32, device="cuda")
        ms = warm_ms(lambda: lib.attention_varlen(
            q, k, v, cu, cu, max(lens), max(lens), causal=True))
        flops = sum(4 * h * n * n * D / 2 for n in lens)
        # Dense: the same tokens as equal sequences of the mean length.
        n = total // len(lens)
        qd = torch.randn(len(lens), h, n, D, dtype=torch.bfloat16,
                         device="cuda")
        kd, vd = torch.randn_like(qd), torch.randn_like(qd)
        dense_ms = warm_ms(lambda: lib.attention(qd, kd, vd, causal=True))
        dense_flops = 4 * len(lens) * h * n * n * D / 2
        ours, dense = flops / ms / 1e9, dense_flops / dense_ms / 1e9
        label = ",".join(str(x) for x in lens) if len(set(lens)) > 1 \
            else f"{len(lens)} x {lens[0]}"
        line = f"| {label} | {ours:.0f} | {dense:.0f} | {ours / dense:.2f} |"
        lines.append(line)
        print(line, flush=True)
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", default=os.environ.get(
        "ATTN_BUNDLE_DIR", os.path.join(REPO, ".carry", "bundles", "serving")))
    ap.add_argument("--quick", action="store_true",
                    help="B in {1, 8}, Sk in {4k, 64k}, GQA 32:8")
    ap.add_argument("--page-size", type=int, default=64)
    args = ap.parse_args()

    import torch
    import attn_runtime as ar
    from torch.nn.attention import SDPBackend

    lib = ar.load(args.bundle)
    dev = torch.cuda.get_device_name()
    batches = [1, 8] if args.quick else [1, 8, 64]
    seqlens = [4096, 65536] if args.quick else [4096, 16384, 65536, 131072]
    groups = [(32, 8)] if args.quick else [(32, 8), (8, 1)]
    backends = [("flash", SDPBackend.FLASH_ATTENTION),
                ("cudnn", SDPBackend.CUDNN_ATTENTION),
                ("efficient", SDPBackend.EFFICIENT_ATTENTION)]
    lines = [f"# Decode, bf16, D = {D}, Sq = 1; {dev}",
             "",
             "| B | Sk | Hq:Hkv | KV MB | attn GB/s | attn prepared GB/s | "
             "attn paged GB/s | paged prepared GB/s | "
             + " | ".join(f"{n} GB/s" for n, _ in backends) + " | "
             + " | ".join(f"x {n}" for n, _ in backends) + " |",
             "|" + "---|" * (8 + 2 * len(backends))]
    print("\n".join(lines), flush=True)
    for hq, hkv in groups:
        for b in batches:
            for sk in seqlens:
                kv_bytes = b * hkv * sk * D * 2 * 2
                if kv_bytes > LIMIT_BYTES:
                    continue
                q = torch.randn(b, hq, 1, D, dtype=torch.bfloat16,
                                device="cuda")
                k = torch.randn(b, hkv, sk, D, dtype=torch.bfloat16,
                                device="cuda")
                v = torch.randn_like(k)
                lens = torch.full((b,), sk, dtype=torch.int32, device="cuda")
                ours = warm_ms(lambda: lib.attention_kvcache(q, k, v, lens))
                # The same launch with the Python checks and allocations
                # done once (prepare_kvcache): what a serving loop or a CUDA
                # graph pays.
                prepared = lib.prepare_kvcache(q, k, v, lens)
                bound = warm_ms(prepared.run)
                kp, vp, table = paged_cache(k, v, args.page_size)
                paged = warm_ms(lambda: lib.attention_kvcache(
                    q, kp, vp, lens, block_table=table))
                paged_bound = warm_ms(lib.prepare_kvcache(
                    q, kp, vp, lens, block_table=table).run)
                kp = vp = None
                theirs = [torch_ms(be, q, k, v) for _, be in backends]
                gbs = lambda ms: kv_bytes / (ms * 1e-3) / 1e9  # noqa: E731
                cells = [str(b), str(sk), f"{hq}:{hkv}",
                         f"{kv_bytes / 1e6:.0f}", f"{gbs(ours):.0f}",
                         f"{gbs(bound):.0f}", f"{gbs(paged):.0f}",
                         f"{gbs(paged_bound):.0f}"]
                cells += [f"{gbs(t):.0f}" if t else "n/a" for t in theirs]
                cells += [f"{t / ours:.2f}" if t else "n/a" for t in theirs]
                line = "| " + " | ".join(cells) + " |"
                lines.append(line)
                print(line, flush=True)
                q = k = v = None
                torch.cuda.empty_cache()
    lines += prefill_rows(lib)
    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, "decode.md"), "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
