#!/usr/bin/env python3
"""Decode over paged KV caches with several bundles side by side in one
process: the same tensors, each bundle's prepared lib.attention_kvcache call
(lib.prepare_kvcache, relaunched) on the paged cache and on the same keys
as a contiguous cache, rounds alternating the bundles, best of the rounds;
the largest output difference to the first bundle. bf16, D = 128, one query
row per sequence (bench_decode.py's rows).

    python3 bench/paged_ab.py NAME=DIR NAME=DIR ... [--rows 8x65536x8:1,...]
        [--page-size 64] [--rounds 3]

GB/s counts the K and V bytes read, as bench_decode.py does (the H100's copy
ceiling is 2.96 TB/s).
"""
import argparse
import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))

from bench import bench_ms, load_ab_bundles, paged_cache  # noqa: E402

D = 128
ROWS = "8x65536x8:1,8x131072x8:1,64x16384x8:1,8x65536x32:8,1x131072x32:8"


def parse_row(text):
    """B x Sk x Hq:Hkv."""
    b, sk, group = text.split("x")
    hq, hkv = group.split(":")
    return int(b), int(sk), int(hq), int(hkv)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundles", nargs="+", help="NAME=DIR")
    ap.add_argument("--rows", default=ROWS)
    ap.add_argument("--page-size", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    import torch

    if not torch.cuda.is_available():
        print("SKIP paged_ab: no CUDA device")
        return 0
    names, libs, _ = load_ab_bundles(args.bundles)
    print(f"device: {torch.cuda.get_device_name()}; bf16 decode, D = {D}, "
          f"pages of {args.page_size} keys; GB/s of K and V read")
    print("| B | Sk | Hq:Hkv | "
          + " | ".join(f"{n} paged | {n} contiguous" for n in names)
          + " | " + " | ".join(f"{n}/{names[0]} paged" for n in names[1:])
          + " | max rel diff |")
    for row in args.rows.split(","):
        b, sk, hq, hkv = parse_row(row)
        q = torch.randn(b, hq, 1, D, dtype=torch.bfloat16, device="cuda")
        k = torch.randn(b, hkv, sk, D, dtype=torch.bfloat16, device="cuda")
        v = torch.randn_like(k)
        lens = torch.full((b,), sk, dtype=torch.int32, device="cuda")
        kp, vp, table = paged_cache(k, v, args.page_size)
        gbytes = b * hkv * sk * D * 2 * 2 / 1e9
        paged = [lib.prepare_kvcache(q, kp, vp, lens, block_table=table)
                 for lib in libs]
        dense = [lib.prepare_kvcache(q, k, v, lens) for lib in libs]
        best_paged = [0.0] * len(libs)
        best_dense = [0.0] * len(libs)
        for _ in range(args.rounds):
            for i in range(len(libs)):
                best_paged[i] = max(best_paged[i],
                                    gbytes / bench_ms(paged[i].run) * 1e3)
                best_dense[i] = max(best_dense[i],
                                    gbytes / bench_ms(dense[i].run) * 1e3)
        outs = [lib.attention_kvcache(q, kp, vp, lens, block_table=table)[0]
                for lib in libs]
        ref = outs[0].float()
        scale = ref.abs().max().item() or 1.0
        diff = max((o.float() - ref).abs().max().item() / scale
                   for o in outs)
        print(f"| {b} | {sk} | {hq}:{hkv} | "
              + " | ".join(f"{p:.0f} | {c:.0f}"
                           for p, c in zip(best_paged, best_dense))
              + " | " + " | ".join(f"{p / best_paged[0]:.3f}"
                                   for p in best_paged[1:])
              + f" | {diff:.1e} |", flush=True)
        paged = dense = kp = vp = k = v = None
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
