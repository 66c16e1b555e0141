#!/usr/bin/env python3
"""Backward time with each optional feature, for bundles compared in one
process.

    python3 bench/bench_backward_features.py BUNDLE [BUNDLE ...]

Times lib.attention_backward (bf16, causal, B = 4, H = 16, S = 2048,
D = 64 and 128; median of triton's do_bench) for the plain op, a softcap,
dropout (p = 0.1), a full bias with its gradient, a key-padding bias
[B, 1, 1, S] with its gradient, and all of them at once, through each
bundle's plans (deterministic=False: a bundle without plans with atomics
runs its deterministic ones). Prints one row per (D, feature) with each
bundle's TFLOP/s (FlashAttention's backward count, 2.5x the forward's) and
its ratio to the first bundle's. A feature a bundle has no plan for is
reported as n/a with the runtime's reason.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "runtime", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench import bench_ms  # noqa: E402

B, H, S = 4, 16, 2048
FEATURES = ["plain", "softcap", "dropout", "bias-full", "bias-keypad", "all"]


def main():
    import torch
    import attn_runtime
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 0
    libs = [attn_runtime.load(b) for b in sys.argv[1:]]
    print(f"device: {torch.cuda.get_device_name()}; B {B}, H {H}, S {S}, "
          "bf16, causal; TFLOP/s of attention_backward")
    print("| D | feature | " + " | ".join(
        f"bundle {i}" + ("" if i == 0 else " | x bundle 0")
        for i in range(len(libs))) + " |")
    for d in (64, 128):
        torch.manual_seed(0)
        q, k, v, do = (torch.randn(B, H, S, d, device="cuda",
                                   dtype=torch.bfloat16) for _ in range(4))
        flops = 2.5 * 4 * B * H * S * S * d / 2
        for feature in FEATURES:
            kw = {}
            if feature in ("softcap", "all"):
                kw["softcap"] = 30.0
            if feature in ("dropout", "all"):
                kw.update(dropout_p=0.1, seed=1234)
            if feature == "bias-full":
                kw["bias"] = torch.randn(B, H, S, S, device="cuda",
                                         dtype=torch.bfloat16)
            if feature in ("bias-keypad", "all"):
                kw["bias"] = torch.randn(B, 1, 1, S, device="cuda",
                                         dtype=torch.bfloat16)
            # The backward computes dbias for a bias that requires grad.
            bwd = dict(kw)
            if "bias" in kw:
                bwd["bias"] = kw["bias"].detach().requires_grad_()
            cells, first = [], None
            for lib in libs:
                try:
                    out, lse = lib.attention(q, k, v, causal=True,
                                             return_lse=True, **kw)

                    def run():
                        lib.attention_backward(do, q, k, v, out, lse,
                                               causal=True, **bwd)
                    run()
                    torch.cuda.synchronize()
                    tf = flops / bench_ms(run) / 1e9
                    if not cells:
                        first = tf
                        cells.append(f"{tf:.1f}")
                    else:
                        ratio = f"{tf / first:.2f}" if first else "-"
                        cells.append(f"{tf:.1f} | {ratio}")
                except Exception as e:  # noqa: BLE001 - shown as n/a
                    msg = str(e).strip().splitlines()[0][:60]
                    cells.append(f"n/a ({msg})" if not cells
                                 else f"n/a ({msg}) | -")
            print(f"| {d} | {feature} | " + " | ".join(cells) + " |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
