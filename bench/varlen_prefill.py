#!/usr/bin/env python3
"""Packed-batch prefill (lib.attention_varlen) against the dense batch of
the same tokens, through each bundle's normal dispatch, bundles alternated
in one process (an A/B of compiler changes).

    python3 bench/varlen_prefill.py BUNDLE [BUNDLE ...] [--head-dims 64,128]
                                    [--masks causal,none] [--rounds 2]

bf16, 16 heads. The dense batch is stored as the packed tensors are
([B, S, H, D] viewed as [B, H, S, D]); equal lengths run the same work
both ways, mixed ones are compared by TFLOP/s of the visible pairs (as
bench_decode.py's prefill rows). Each bundle's row ends with the variant
its dispatch chose for the dense call.
"""
import argparse
import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))

HEADS = 16
BATCHES = ([2048] * 8, [4096] * 4, [512] * 32,
           [8192, 4096, 2048, 1024, 512, 256, 128, 128],
           [3000, 17, 5000, 1, 8000, 333])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundles", nargs="+")
    ap.add_argument("--head-dims", default="64,128")
    ap.add_argument("--masks", default="causal,none")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()

    import torch
    import attn_runtime
    from bench import tflops_of

    libs = [attn_runtime.load(b) for b in a.bundles]
    print(f"device: {torch.cuda.get_device_name()}")
    print("| D | mask | lengths | bundle | varlen TFLOP/s | dense TFLOP/s "
          "| varlen/dense | dense variant |")
    print("|---|---|---|---|---|---|---|---|")
    torch.manual_seed(0)
    for d in map(int, a.head_dims.split(",")):
        for mask in a.masks.split(","):
            causal = mask == "causal"
            for lengths in BATCHES:
                total, b = sum(lengths), len(lengths)
                q, k, v = (torch.randn(total, HEADS, d, device="cuda",
                                       dtype=torch.bfloat16) for _ in range(3))
                offsets = [0]
                for n in lengths:
                    offsets.append(offsets[-1] + n)
                cu = torch.tensor(offsets, dtype=torch.int32, device="cuda")
                flops = sum(4 * HEADS * n * n * d / (2 if causal else 1)
                            for n in lengths)
                n = total // b
                qd, kd, vd = (torch.randn(b, n, HEADS, d, device="cuda",
                                          dtype=torch.bfloat16).transpose(1, 2)
                              for _ in range(3))
                dense_flops = 4 * b * HEADS * n * n * d / (2 if causal else 1)
                label = ",".join(map(str, lengths)) if len(set(lengths)) > 1 \
                    else f"{b} x {lengths[0]}"
                for _ in range(a.rounds):
                    for name, lib in zip(a.bundles, libs):
                        fv = tflops_of(lambda: lib.attention_varlen(
                            q, k, v, cu, cu, max(lengths), max(lengths),
                            causal=causal), flops)
                        fd = tflops_of(lambda: lib.attention(
                            qd, kd, vd, causal=causal), dense_flops)
                        chosen = lib.select_variant(qd, kd, vd, causal=causal)
                        print(f"| {d} | {mask} | {label} | "
                              f"{os.path.basename(name.rstrip('/'))} | "
                              f"{fv:.0f} | {fd:.0f} | {fv / fd:.2f} | "
                              f"{chosen} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
