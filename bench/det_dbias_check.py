#!/usr/bin/env python3
"""Deterministic backward plans with a summed bias gradient, on the GPU.

    python3 bench/det_dbias_check.py BUNDLE [--head-dims 64,128]

BUNDLE: attn-bundle --chip sm_90a --head-dims 64,128 --dtypes bf16,f16
--masks none,causal,causal_bottom_right --bias none,same --backward
--layouts dense --unaligned=false --size-hints 4096. Runs
test/GPU/test_backward.py's cases for each bias broadcast kind through the
deterministic plans (attention_backward) and the autograd path (the
key-padding kinds [B, H, 1, Sk], [B, 1, 1, Sk] and [1, 1, 1, Sk], whose
query rows main sums itself, included), its determinism check (100 runs
bit-identical, the 2-D and both key-padding biases included), then times
the backward (bf16, D = the largest of --head-dims, causal, B = 4, H = 16,
S = 2048) with the atomic and the deterministic plan for a bias summed over the batch, one
summed over heads and query rows, one over query rows alone, and a full
one. Exit status 1 if a check failed. At D > 128 (slices on warpgroups) the
query rows' sums go through the dQ writer (docs/Backward.md).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "GPU"))
import torch  # noqa: E402
import test_backward as tb  # noqa: E402
from test_attention import Results  # noqa: E402
import attn_runtime as ar  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("bundle")
ap.add_argument("--head-dims", default="64,128")
args = ap.parse_args()
head_dims = [int(d) for d in args.head_dims.split(",")]
lib = ar.load(args.bundle)
lib.poison_outputs = True
print(lib, torch.cuda.get_device_name(), flush=True)
res, stats = Results(), tb.Stats()
t0 = time.time()
for dtype in ("bf16", "f16"):
    for d in head_dims:
        for sq, sk in ((7, 129), (129, 64), (1000, 1000)):
            for kind in ("full", "2d", "heads-f32", "rows", "keypad-heads",
                         "keypad", "keypad-shared"):
                for mask in ("none", "causal"):
                    for path, det in (("direct", True), ("autograd", False)):
                        tb.run_case(
                            lib, res, stats, f"{dtype} d{d} bias det",
                            f"{dtype}-d{d}-{sq}x{sk}-{kind}-{mask}-{path}"
                            f"-det{int(det)}",
                            dtype=dtype, d=d, sq=sq, sk=sk, mask=mask,
                            bias=kind, bias_grad=True,
                            heads=tb.HEADS["gqa"], path=path,
                            deterministic=det)
print(f"correctness {time.time() - t0:.1f}s", flush=True)
t0 = time.time()
tb.determinism(lib, res, stats)
print(f"determinism {time.time() - t0:.1f}s", flush=True)
print(stats.table())
print(res.summary(), flush=True)

# Cost of the deterministic summed path against the atomic one.
lib.poison_outputs = False


def timed(fn, n=10):
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(True), torch.cuda.Event(True)
    times = []
    for _ in range(n):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def compare(B, H, S, shape, d):
    q, k, v, g = (torch.randn(B, H, S, d, dtype=torch.bfloat16,
                              device="cuda") for _ in range(4))
    bias = torch.randn(*shape, dtype=torch.bfloat16,
                       device="cuda").requires_grad_()
    kw = dict(causal=True, bias=bias)
    with torch.no_grad():
        out, lse = lib.attention(q, k, v, return_lse=True, **kw)
    row = []
    for det in (False, True):
        ms = timed(lambda: lib.attention_backward(g, q, k, v, out, lse,
                                                  deterministic=det, **kw))
        row.append(f"det={det}: {ms:.3f} ms")
    a = lib.attention_backward(g, q, k, v, out, lse, **kw)[3].float()
    b = lib.attention_backward(g, q, k, v, out, lse, deterministic=True,
                               **kw)[3].float()
    rel = ((a - b).abs().max() / a.abs().max()).item()
    print(f"bwd B={B} H={H} S={S} D={d} causal bias{list(shape)}: "
          + ", ".join(row) + f"; dbias max rel diff {rel:.2e}", flush=True)


for shape in ((1, 16, 2048, 2048), (4, 1, 1, 2048), (4, 16, 1, 2048),
              (4, 16, 2048, 2048)):
    compare(4, 16, 2048, shape, max(head_dims))
    torch.cuda.empty_cache()
sys.exit(1 if res.failed else 0)
