#!/usr/bin/env python3
"""Forward kernels of several bundles side by side in one process: the same
inputs, each bundle's attention timed in turn (rounds alternate the
bundles), outputs compared with the first bundle's, and torch SDPA's cuDNN
forward on the same tensors as a yardstick. bf16 or f16, B x S = 16384
tokens, hidden 2048 (bench.py's grid); the forward counterpart of
backward_ab.py.

    python3 bench/forward_ab.py NAME=DIR NAME=DIR ... [--head-dims 64,128]
        [--seqlens 1024,4096] [--rounds 2] [--dtype bf16]

NAME=DIR@VARIANT forces the bundle's variant VARIANT (Library.force_variant)
instead of its dispatch: `{d}` and `{mask}` in it become the head dim and
`none` or `causal`, e.g. `n176=B@fwd_bf16_d{d}_{mask}_m128n176w12s2tmap`
(hand configs through `attn-bundle --input`).

Prints one row per configuration: TFLOP/s of each bundle (best of the
rounds), each over the first, cuDNN's, and the largest output difference
to the first bundle relative to the output's largest magnitude.
"""
import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))

from bench import (ab_best_tflops, ab_header, ab_parser,  # noqa: E402
                   ab_row, bench_ms, grid, load_ab_bundles)


def main():
    ap = ab_parser(__doc__, "64,128,256", "1024,2048,4096,8192,16384")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    if not torch.cuda.is_available():
        print("SKIP forward_ab: no CUDA device")
        return 0
    names, loaded, forced = load_ab_bundles(args.bundles, variants=True)
    libs = list(zip(names, loaded))
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    print(f"device: {torch.cuda.get_device_name()}; {args.dtype} forward "
          "TFLOP/s")
    print(ab_header(names), flush=True)
    torch.manual_seed(0)
    head_dims = [int(x) for x in args.head_dims.split(",")]
    seqlens = [int(x) for x in args.seqlens.split(",")]
    for d, heads, s, batch, causal in grid(seqlens, head_dims):
        q, k, v = (torch.randn(batch, heads, s, d, device="cuda", dtype=dtype)
                   for _ in range(3))
        flops = 4 * batch * heads * s * s * d / (2 if causal else 1)
        mask = "causal" if causal else "none"
        for (_, lib), variant in zip(libs, forced):
            if variant:
                lib.force_variant(variant.format(d=d, mask=mask))
        outs = [lib.attention(q, k, v, causal=causal)[0] for _, lib in libs]
        scale = outs[0].float().abs().max().item() or 1.0
        diff = max([(outs[0].float() - o.float()).abs().max().item() / scale
                    for o in outs[1:]] or [0.0])
        best = ab_best_tflops([lib for _, lib in libs], args.rounds, flops,
                              lambda lib: lib.attention(q, k, v,
                                                        causal=causal))
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            cudnn = flops / bench_ms(lambda: F.scaled_dot_product_attention(
                q, k, v, is_causal=causal)) / 1e9
        print(ab_row(d, s, causal, best, cudnn, diff), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
