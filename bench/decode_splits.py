#!/usr/bin/env python3
"""Decode rows at forced split counts (num_splits) through prepared calls:
which split count the small rows want, against the runtime's own choice
(0). bf16, D = 128, one query row; GB/s of K and V read.

    python3 bench/decode_splits.py BUNDLE_DIR
"""
import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))

import torch  # noqa: E402

import attn_runtime  # noqa: E402
from bench import bench_ms  # noqa: E402

D = 128
ROWS = [(1, 8, 1, 4096), (1, 8, 1, 8192), (1, 8, 1, 16384),
        (1, 8, 1, 32768), (1, 8, 1, 65536), (2, 8, 1, 16384),
        (4, 8, 1, 16384), (1, 32, 8, 4096), (1, 32, 8, 16384),
        (8, 32, 8, 4096)]
SPLITS = (0, 8, 16, 24, 32, 48, 64, 96, 128)


def main():
    lib = attn_runtime.load(sys.argv[1])
    for b, hq, hkv, sk in ROWS:
        q = torch.randn(b, hq, 1, D, dtype=torch.bfloat16, device="cuda")
        k = torch.randn(b, hkv, sk, D, dtype=torch.bfloat16, device="cuda")
        v = torch.randn_like(k)
        lens = torch.full((b,), sk, dtype=torch.int32, device="cuda")
        mb = b * hkv * sk * D * 4 / 1e6
        out = []
        for n in SPLITS:
            if n > sk // 128:
                continue
            call = lib.prepare_kvcache(q, k, v, lens, num_splits=n)
            out.append(f"{n}:{mb / bench_ms(call.run):.0f}")
        print(f"B {b} Sk {sk} {hq}:{hkv} ({mb:.0f} MB) GB/s by num_splits: "
              + " ".join(out), flush=True)


if __name__ == "__main__":
    main()
