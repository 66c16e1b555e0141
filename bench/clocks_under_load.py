#!/usr/bin/env python3
"""SM clock and power while attention runs back to back: ours against
torch SDPA's cuDNN and flash backends on the same bf16 inputs, one process.

    python3 bench/clocks_under_load.py BUNDLE [--d 128] [--s 8192] [--causal]
                                       [--forward]

Each backend's backward (ours: attention_backward on a saved out and lse;
torch: autograd.grad with retain_graph), or with --forward its forward,
runs in a loop for --seconds, each call waited for, while nvidia-smi
samples clocks.sm and power.draw every 50 ms; prints the median clock and
power of the loop's second half and the time a call. Shows what a
profiler's isolated launches hide: under a sustained load every backend
runs at the board's power limit, and the clock it keeps there depends on
the energy its work takes (bench/RESULTS.md, twelfth session).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))


def sampled(fn, seconds):
    """Runs fn in a loop for about `seconds`; returns (ms a call, median SM
    MHz, median W) over the second half."""
    import torch
    smi = subprocess.Popen(
        ["nvidia-smi", "--query-gpu=clocks.sm,power.draw",
         "--format=csv,noheader,nounits", "-lms", "50"],
        stdout=subprocess.PIPE, text=True)
    start = time.perf_counter()
    calls = 0
    half = None
    # Each call waited for: a queue of launches would drain after the loop.
    # At least one call after the half mark, however long a call takes.
    while True:
        fn()
        torch.cuda.synchronize()
        calls += 1
        elapsed = time.perf_counter() - start
        if half is None and elapsed > seconds / 2:
            half = (time.perf_counter(), calls)
        elif half is not None and elapsed >= seconds:
            break
    end = time.perf_counter()
    smi.terminate()
    rows = [line.split(",") for line in smi.communicate()[0].splitlines()]
    rows = [(float(c), float(p)) for c, p in rows if c.strip() and p.strip()]
    if not rows:
        sys.exit("clocks_under_load: nvidia-smi gave no samples")
    tail = rows[len(rows) // 2:] or rows
    ms = (end - half[0]) / (calls - half[1]) * 1e3
    return (ms, statistics.median(c for c, _ in tail),
            statistics.median(p for _, p in tail))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle")
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--s", type=int, default=8192)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--forward", action="store_true")
    args = ap.parse_args()
    if args.seconds < 0.5:
        # nvidia-smi samples every 50 ms and takes a moment to start.
        ap.error("--seconds must be at least 0.5")
    import torch
    if not torch.cuda.is_available():
        print("SKIP clocks_under_load: no CUDA device")
        return 0
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import attn_runtime
    lib = attn_runtime.load(args.bundle)
    heads, batch = 2048 // args.d, max(1, 16384 // args.s)
    q, k, v, g = (torch.randn(batch, heads, args.s, args.d, device="cuda",
                              dtype=torch.bfloat16) for _ in range(4))
    flops = 4 * batch * heads * args.s * args.s * args.d
    flops *= (1.0 if args.forward else 2.5) / (2 if args.causal else 1)
    backends = (("cudnn", SDPBackend.CUDNN_ATTENTION),
                ("flash", SDPBackend.FLASH_ATTENTION))
    if args.forward:
        runs = {"ours": lambda: lib.attention(q, k, v, causal=args.causal)}
        for name, backend in backends:
            def forward(backend=backend):
                with sdpa_kernel([backend]), torch.no_grad():
                    F.scaled_dot_product_attention(q, k, v,
                                                   is_causal=args.causal)
            runs[name] = forward
    else:
        with torch.no_grad():
            out, lse = lib.attention(q, k, v, causal=args.causal,
                                     return_lse=True)
        runs = {"ours": lambda: lib.attention_backward(
            g, q, k, v, out, lse, causal=args.causal)}
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        for name, backend in backends:
            with sdpa_kernel([backend]):
                saved = F.scaled_dot_product_attention(
                    *leaves, is_causal=args.causal)
            runs[name] = (lambda saved=saved: torch.autograd.grad(
                saved, leaves, g, retain_graph=True))
    print(f"{torch.cuda.get_device_name()}: D={args.d} S={args.s} B={batch} "
          f"H={heads} causal={args.causal} "
          f"{'forward' if args.forward else 'backward'}", flush=True)
    for rnd in range(2):
        for name, fn in runs.items():
            for _ in range(3):
                fn()
            ms, mhz, watts = sampled(fn, args.seconds)
            print(f"round {rnd} {name:6s} {ms:7.3f} ms a call, "
                  f"{flops / ms / 1e9:6.1f} TFLOP/s, SM {mhz:.0f} MHz, "
                  f"{watts:.0f} W", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
