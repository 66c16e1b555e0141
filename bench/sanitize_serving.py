#!/usr/bin/env python3
"""The serving forms' kernels once each through the runtime, for a
sanitizer: a packed batch with an empty sequence, a KV cache and a paged
cache (16-key pages, a sequence shorter than a page), each with an odd
split count and the runtime's own, GQA 8:2.

Usage: sanitize_serving.py BUNDLE_DIR [--dtype bf16] [--d 64]

Meant to run under

    compute-sanitizer --tool memcheck python3 bench/sanitize_serving.py B
    compute-sanitizer --tool racecheck python3 bench/sanitize_serving.py B

Exits 0 after the calls; the sanitizer's exit code says whether it found
anything.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "runtime", "python"))
import attn_runtime  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundle")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    ap.add_argument("--d", type=int, default=64)
    a = ap.parse_args()
    dtype = torch.bfloat16 if a.dtype == "bf16" else torch.float16
    torch.manual_seed(0)
    lib = attn_runtime.load(a.bundle)
    hq, hkv, d = 8, 2, a.d

    lens = [300, 0, 1, 129]
    total = sum(lens)
    q = torch.randn(total, hq, d, device="cuda", dtype=dtype)
    k = torch.randn(total, hkv, d, device="cuda", dtype=dtype)
    cu = torch.tensor([0, 300, 300, 301, 430], dtype=torch.int32,
                      device="cuda")
    out, _ = lib.attention_varlen(q, k, k, cu, cu, 300, 300, causal=True,
                                  return_lse=True)
    # A max_seqlen_q below the longest sequence: workgroups loop over its
    # row blocks.
    lib.attention_varlen(q, k, k, cu, cu, 64, 300, causal=True)

    batch, cap, page = 3, 1000, 16
    qd = torch.randn(batch, hq, 3, d, device="cuda", dtype=dtype)
    kc = torch.randn(batch, hkv, cap, d, device="cuda", dtype=dtype)
    lens_k = torch.tensor([7, 1000, 333], dtype=torch.int32, device="cuda")
    pages = torch.randn(batch * (cap // page + 1) + 3, hkv, page, d,
                        device="cuda", dtype=dtype)
    per = (cap + page - 1) // page
    table = torch.randperm(pages.shape[0], device="cuda")[:batch * per] \
        .view(batch, per).to(torch.int32)
    for splits in (0, 1, 3):
        lib.attention_kvcache(qd, kc, kc, lens_k, causal="bottom_right",
                              return_lse=True, num_splits=splits)
        lib.attention_kvcache(qd, pages, pages, lens_k, block_table=table,
                              return_lse=True, num_splits=splits)
    torch.cuda.synchronize()
    print(f"ok: |out| {out.float().abs().max().item():.3g}")


if __name__ == "__main__":
    main()
