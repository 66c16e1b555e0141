#!/usr/bin/env python3
"""Backward plans of several bundles side by side in one process: the same
inputs, each bundle's attention_backward timed in turn (rounds alternate
the bundles), gradients compared with the first bundle's, and torch SDPA's
cuDNN backward on the same tensors as a yardstick. bf16, B x S = 16384
tokens, hidden 2048 (bench_backward.py's grid).

    python3 bench/backward_ab.py NAME=DIR NAME=DIR ... [--head-dims 64,128]
        [--seqlens 1024,4096] [--rounds 2] [--deterministic NAME,...]
        [--dropout-p P]

Prints one row per configuration: backward TFLOP/s of each bundle (best of
the rounds), each over the first, cuDNN's, and the largest gradient
difference to the first bundle relative to that gradient's largest
magnitude (bundles whose kernels round differently differ by bf16 ulps).
The bundles --deterministic names are called with deterministic=True (one
directory may appear twice under two names, to time its two plans). With
--dropout-p every call of ours drops with that probability (the bundles'
dropout plans, one seed); the cuDNN column stays without dropout.
"""
import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))

from bench import (HIDDEN, TOKENS, ab_best_tflops, ab_header,  # noqa: E402
                   ab_parser, ab_row, bench_ms, load_ab_bundles)

BWD_FLOPS = 2.5  # times the forward's (bench_backward.py)


def main():
    ap = ab_parser(__doc__, "64,128", "1024,4096")
    ap.add_argument("--deterministic", default="",
                    help="names of the bundles to call deterministically")
    ap.add_argument("--dropout-p", type=float, default=0.0,
                    help="dropout probability of our calls")
    args = ap.parse_args()
    drop = ({"dropout_p": args.dropout_p, "seed": 1234}
            if args.dropout_p > 0 else {})

    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    if not torch.cuda.is_available():
        print("SKIP backward_ab: no CUDA device")
        return 0
    names, loaded, _ = load_ab_bundles(args.bundles)
    libs = list(zip(names, loaded))
    deterministic = [n for n in args.deterministic.split(",") if n]
    unknown = sorted(set(deterministic) - set(names))
    if unknown:
        sys.exit(f"--deterministic names no bundle: {', '.join(unknown)}")
    det = {n: n in deterministic for n in names}
    print(f"device: {torch.cuda.get_device_name()}; backward TFLOP/s")
    print(ab_header(names), flush=True)
    torch.manual_seed(0)
    for d in [int(x) for x in args.head_dims.split(",")]:
        heads = HIDDEN // d
        for s in [int(x) for x in args.seqlens.split(",")]:
            batch = TOKENS // s
            for causal in (False, True):
                shape = (batch, heads, s, d)
                q, k, v, g = (torch.randn(shape, device="cuda",
                                          dtype=torch.bfloat16)
                              for _ in range(4))
                flops = BWD_FLOPS * 4 * batch * heads * s * s * d / (
                    2 if causal else 1)
                with torch.no_grad():
                    out, lse = libs[0][1].attention(q, k, v, causal=causal,
                                                    return_lse=True, **drop)
                grads = [lib.attention_backward(g, q, k, v, out, lse,
                                                causal=causal,
                                                deterministic=det[name],
                                                **drop)
                         for name, lib in libs]
                diff = 0.0
                for other in grads[1:]:
                    for a, b in zip(grads[0], other):
                        scale = a.float().abs().max().item() or 1.0
                        diff = max(diff, (a.float() - b.float()).abs().max()
                                   .item() / scale)
                best = ab_best_tflops(
                    libs, args.rounds, flops,
                    lambda named: named[1].attention_backward(
                        g, q, k, v, out, lse, causal=causal,
                        deterministic=det[named[0]], **drop))
                leaves = [x.clone().requires_grad_() for x in (q, k, v)]
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    ref = F.scaled_dot_product_attention(*leaves,
                                                         is_causal=causal)
                cudnn = flops / bench_ms(lambda: torch.autograd.grad(
                    ref, leaves, g, retain_graph=True)) / 1e9
                print(ab_row(d, s, causal, best, cudnn, diff), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
