#!/usr/bin/env python3
"""Host time of the training calls: lib.attention, attention_backward and
the autograd path (attention then torch.autograd.grad), against torch SDPA's
forward + backward, each in a loop of 500 on a shape whose kernels take a
few microseconds (B = 1, H = 2, S = 128, D = 128, bf16), so that the loop is
bound by the host; none and causal. Then a cProfile of the autograd path.

    python3 bench/training_call_overhead.py [--bundle DIR]

A bundle of many plans shows what selecting among them costs: the runtime
selects a plan at every backward call (attn_backward_workspace_size, then
attn_backward).
"""
import argparse
import cProfile
import io
import os
import pstats
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))

import bench  # noqa: E402


def per_call_us(fn):
    return bench.per_call_us(fn, 500, warmup=10)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", default=os.path.join(REPO, ".carry",
                                                     "bundles", "sm_90a"))
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        print("SKIP training_call_overhead: no CUDA device")
        return 0
    import attn_runtime

    lib = attn_runtime.load(args.bundle)
    print(f"device: {torch.cuda.get_device_name()}; bundle: {args.bundle} "
          f"({len(lib.plans)} backward plans); microseconds a call")
    print("| mask | attention | attention_backward | autograd fwd+bwd | "
          "torch SDPA fwd+bwd |")
    profiled = None
    for causal in (False, True):
        q, k, v, g = (torch.randn(1, 2, 128, 128, device="cuda",
                                  dtype=torch.bfloat16) for _ in range(4))
        leaves = [x.clone().requires_grad_() for x in (q, k, v)]
        with torch.no_grad():
            out, lse = lib.attention(q, k, v, causal=causal, return_lse=True)

        def both(causal=causal, leaves=leaves, g=g):
            o, _ = lib.attention(*leaves, causal=causal)
            torch.autograd.grad(o, leaves, g)

        def sdpa(causal=causal, leaves=leaves, g=g):
            o = F.scaled_dot_product_attention(*leaves, is_causal=causal)
            torch.autograd.grad(o, leaves, g)

        row = [per_call_us(lambda: lib.attention(q, k, v, causal=causal)),
               per_call_us(lambda: lib.attention_backward(
                   g, q, k, v, out, lse, causal=causal)),
               per_call_us(both), per_call_us(sdpa)]
        print(f"| {'causal' if causal else 'none'} | "
              + " | ".join(f"{x:.0f}" for x in row) + " |", flush=True)
        profiled = both
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(200):
        profiled()
    profile.disable()
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(12)
    print(text.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
