#!/usr/bin/env python3
"""Checks and times the kernels of an attn bundle on a CUDA GPU.

Usage: gpu_check.py BUNDLE_DIR [--check] [--time] [--out FILE]

Loads each cubin with CuPy (no MLIR, no attn runtime needed), launches it with
the attn-fwd-v1 arguments of docs/BundleFormat.md, and compares with a float32
reference on random inputs (outputs poisoned with NaN first). --time compares
with torch's scaled_dot_product_attention backends (flash, cuDNN, efficient).
"""
import argparse
import json
import math
import os
import sys

import cupy as cp
import numpy as np
import torch
import torch.nn.functional as F

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


class Bundle:
    def __init__(self, path):
        self.path = path
        with open(os.path.join(path, "bundle.json")) as f:
            self.meta = json.load(f)
        assert self.meta["schema"] == "attn-bundle" and self.meta["version"] == 1
        self.funcs = {}

    def variants(self):
        return self.meta["variants"]

    def find(self, dtype, d, mask):
        """First variant in priority order for (dtype, D, mask)."""
        for v in self.variants():
            if v["dtype"] == dtype and v["head_dim"] == d and v["mask"] == mask:
                return v
        return None

    def function(self, v):
        if v["name"] not in self.funcs:
            mod = cp.RawModule(path=os.path.join(self.path, v["binary"]))
            fn = mod.get_function(v["entry"])
            if v["dynamic_smem"] > 48 * 1024:
                fn.max_dynamic_shared_size_bytes = v["dynamic_smem"]
            self.funcs[v["name"]] = (mod, fn)
        return self.funcs[v["name"]][1]

    def launcher(self, v, q, k, v_, o, lse, scale, window=(-1, -1), softcap=0.0):
        """A no-argument callable launching variant v (for timing)."""
        fn = self.function(v)
        B, Hq, Sq, _ = q.shape
        Hkv, Sk = k.shape[1], k.shape[2]
        i32, i64 = np.int32, np.int64
        ptr = lambda t: np.uint64(t.data_ptr()) if t is not None else np.uint64(0)
        strides = lambda t: [i64(s) for s in t.stride()[:3]]
        lse_strides = [i64(s) for s in lse.stride()[:2]] if lse is not None else [i64(0)] * 2
        args = ([ptr(q), ptr(k), ptr(v_), ptr(o), ptr(lse), np.uint64(0),
                 i32(B), i32(Hq), i32(Hkv), i32(Sq), i32(Sk)]
                + strides(q) + strides(k) + strides(v_) + strides(o)
                + lse_strides + [i64(0)] * 4
                + [np.float32(scale), np.float32(softcap), i32(window[0]), i32(window[1])])
        grid = ((Sq + v["block_m"] - 1) // v["block_m"], Hq, B)
        block = (v["threads"], 1, 1)
        smem = v["dynamic_smem"]
        return lambda: fn(grid, block, tuple(args), shared_mem=smem)


def visible(mask, sq, sk, window, device):
    i = torch.arange(sq, device=device)[:, None]
    j = torch.arange(sk, device=device)[None, :]
    if mask == "none":
        return torch.ones(sq, sk, dtype=torch.bool, device=device)
    if mask == "causal":
        return j <= i
    diag = i + sk - sq
    if mask == "causal_bottom_right":
        return j <= diag
    left, right = window
    ok = torch.ones(sq, sk, dtype=torch.bool, device=device)
    if left >= 0:
        ok &= j >= diag - left
    if right >= 0:
        ok &= j <= diag + right
    return ok


def reference(q, k, v, scale, mask, window, softcap=0.0):
    """float32 attention with attn.attention's semantics (empty rows -> 0)."""
    g = q.shape[1] // k.shape[1]
    qf = q.float()
    kf = k.float().repeat_interleave(g, dim=1)
    vf = v.float().repeat_interleave(g, dim=1)
    s = torch.einsum("bhid,bhjd->bhij", qf, kf) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    vis = visible(mask, q.shape[2], k.shape[2], window, q.device)
    s = s.masked_fill(~vis, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse[..., None]).nan_to_num(0.0)
    o = torch.einsum("bhij,bhjd->bhid", p, vf)
    return o, lse


def check_one(bundle, var, B, Hq, Hkv, Sq, Sk, window, gen):
    dt = DTYPES[var["dtype"]]
    D, Dv = var["head_dim"], var["head_dim_v"]
    dev = "cuda"
    q = torch.randn(B, Hq, Sq, D, generator=gen, device=dev).to(dt)
    k = torch.randn(B, Hkv, Sk, D, generator=gen, device=dev).to(dt)
    v = torch.randn(B, Hkv, Sk, Dv, generator=gen, device=dev).to(dt)
    o = torch.full((B, Hq, Sq, Dv), float("nan"), device=dev, dtype=dt)
    lse = torch.full((B, Hq, Sq), float("nan"), device=dev)
    scale = 1.0 / math.sqrt(D)
    # A cap of 2 changes typical scores (|s| ~ 1-3) a lot: a kernel that
    # ignored it would fail.
    cap = 2.0 if var.get("softcap") else 0.0
    bundle.launcher(var, q, k, v, o, lse, scale, window, cap)()
    torch.cuda.synchronize()
    ro, rlse = reference(q, k, v, scale, var["mask"], window, cap)
    unwritten = torch.isnan(o).sum().item() + torch.isnan(lse).sum().item()
    err = ((o.float() - ro).norm() / ro.norm().clamp_min(1e-30)).item()
    fin = torch.isfinite(rlse)
    lse_ok = bool(torch.equal(fin, torch.isfinite(lse)))
    lse_err = (lse[fin] - rlse[fin]).abs().max().item() if fin.any() else 0.0
    tol = 2e-2 if var["dtype"] == "bf16" else 5e-3
    ok = unwritten == 0 and err < tol and lse_ok and lse_err < 1e-2
    print(f"{'PASS' if ok else 'FAIL'} {var['name']:44s} B={B} Hq={Hq} Hkv={Hkv} "
          f"Sq={Sq} Sk={Sk} win={window} rel_err={err:.2e} lse_err={lse_err:.1e} "
          f"unwritten={unwritten} lse_inf_match={lse_ok}", flush=True)
    return ok


SHAPES = [  # B, Hq, Hkv, Sq, Sk
    (2, 4, 4, 128, 128),
    (1, 8, 2, 197, 333),
    (2, 2, 1, 1, 77),
    (1, 4, 4, 1000, 1000),
    (1, 2, 2, 300, 1000),
    (1, 2, 2, 1000, 300),
]


def run_checks(bundle, names):
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    fails = 0
    for var in bundle.variants():
        if names and var["name"] not in names:
            continue
        wins = [(-1, -1)] if var["mask"] != "sliding_window" else [(64, 0), (37, 5)]
        for shape in SHAPES:
            for w in wins:
                fails += not check_one(bundle, var, *shape, w, gen)
    print(f"checks: {fails} failed", flush=True)
    return fails


def run_timing(bundle, out, all_variants, dtypes=("bf16", "f16")):
    import triton.testing as tt
    from torch.nn.attention import SDPBackend, sdpa_kernel

    rows = []
    bench = lambda f: tt.do_bench(f, warmup=25, rep=100, return_mode="median")
    for dtype in dtypes:
        for d in (64, 128):
            for mask in ("none", "causal"):
                vars_ = [v for v in bundle.variants() if v["dtype"] == dtype
                         and v["head_dim"] == d and v["mask"] == mask
                         and not v.get("softcap")]
                if not vars_:
                    continue
                if not (all_variants and dtype == "bf16"):
                    vars_ = vars_[:1]
                for s in (1024, 2048, 4096, 8192, 16384):
                    b, h = max(1, 16384 // s), 2048 // d
                    dt = DTYPES[dtype]
                    q = torch.randn(b, h, s, d, device="cuda", dtype=dt)
                    k = torch.randn(b, h, s, d, device="cuda", dtype=dt)
                    v = torch.randn(b, h, s, d, device="cuda", dtype=dt)
                    o = torch.empty_like(q)
                    lse = torch.empty(b, h, s, device="cuda")
                    scale = 1.0 / math.sqrt(d)
                    flops = 4.0 * b * h * s * s * d / (2 if mask == "causal" else 1)
                    ref = {}
                    for name, be in (("flash", SDPBackend.FLASH_ATTENTION),
                                     ("cudnn", SDPBackend.CUDNN_ATTENTION),
                                     ("efficient", SDPBackend.EFFICIENT_ATTENTION)):
                        try:
                            with sdpa_kernel([be]):
                                f = lambda: F.scaled_dot_product_attention(
                                    q, k, v, is_causal=(mask == "causal"))
                                f()
                                ref[name] = flops / bench(f) / 1e9
                        except Exception:  # backend unavailable
                            ref[name] = float("nan")
                    for var in vars_:
                        ours = flops / bench(bundle.launcher(var, q, k, v, o, lse, scale)) / 1e9
                        row = {"dtype": dtype, "d": d, "mask": mask, "s": s, "b": b,
                               "h": h, "variant": var["name"], "ours_tflops": ours}
                        row.update({n + "_tflops": t for n, t in ref.items()})
                        rows.append(row)
                        print(f"{dtype:4s} D={d:3d} {mask:6s} S={s:5d} B={b:2d} H={h:2d} "
                              f"ours={ours:6.1f} flash={ref['flash']:6.1f} "
                              f"cudnn={ref['cudnn']:6.1f} eff={ref['efficient']:6.1f} "
                              f"ratio_flash={ours / ref['flash']:.2f} [{var['name']}]",
                              flush=True)
                    q = k = v = o = lse = None
    if out:
        with open(out, "w") as f:
            json.dump(rows, f, indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundle")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated variant names")
    ap.add_argument("--out", default="")
    ap.add_argument("--dtypes", default="bf16,f16", help="dtypes to time")
    ap.add_argument("--all-variants", action="store_true",
                    help="time every bf16 variant, not only the first")
    a = ap.parse_args()
    bundle = Bundle(a.bundle)
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    fails = 0
    if a.check:
        fails = run_checks(bundle, [n for n in a.only.split(",") if n])
    if a.time:
        run_timing(bundle, a.out, a.all_variants, a.dtypes.split(","))
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
