#!/usr/bin/env python3
"""GPU checks of dropout through attn_runtime: lib.attention(...,
dropout_p, seed, offset) and its backward against torch references built
from lib.dropout_mask, plus the mask's statistics.

    python3 test/GPU/test_dropout.py [--bundle DIR] [--quick]

Checks:
  - output and gradients (autograd and attention_backward) against a float32
    reference that drops with dropout_mask's keep-mask: FlashAttention's
    criterion of test_backward.py (at most 2x torch's error in the input
    dtype plus a floor); lse is that of the scores before dropout;
  - bit reproducibility: the same (seed, offset) gives identical outputs,
    another offset or seed other ones;
  - the kept fraction of dropout_mask within 6 standard deviations of
    1 - p, and the mask equal to the module's scalar dropout_keep;
  - unbiased: the mean output over 256 offsets equals the output without
    dropout within 6 standard errors per element.
Shapes no variant or plan covers are skipped with the runtime's reason.
"N passed, N failed, N skipped" last; exit status 1 on a failure.
"""

import argparse
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from test_attention import (Results, default_bundle,  # noqa: E402
                            environment_problem)
from test_backward import (Stats, check_grads, no_plan_reason,  # noqa: E402
                           reference, reference_grads)


def run_case(lib, res, stats, name, *, dtype, d, batch, hq, hkv, sq, sk,
             causal, p, seed, offset):
    import torch
    import attn_runtime

    mask = "causal" if causal else "none"
    q, k, v = (torch.randn(batch, h, s, d, dtype=dtype, device="cuda")
               for h, s in ((hq, sq), (hkv, sk), (hkv, sk)))
    g = torch.randn(batch, hq, sq, d, dtype=dtype, device="cuda")
    keep = lib.dropout_mask(batch, hq, sq, sk, p, seed, offset,
                            device="cuda")
    kw = dict(mask=mask, window=None, scale=1 / math.sqrt(d), softcap=None,
              drop=(keep, p))
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    if dtype == torch.float32:
        # float32 runs forward only on the GPU (no f32 backward plans).
        try:
            out, _ = lib.attention(q, k, v, causal=causal, dropout_p=p,
                                   seed=seed, offset=offset)
        except attn_runtime.AttnError as e:
            res.skip(name, no_plan_reason(str(e)))
            return
        want = reference(q, k, v, upcast=True, bias=None, **kw)
        check_grads(res, stats, f"{dtype} d{d}", name, [out], [want],
                    [want], ["out"])
        return
    try:
        out, lse = lib.attention(*leaves, causal=causal, return_lse=True,
                                 dropout_p=p, seed=seed, offset=offset)
        out.backward(g)
    except attn_runtime.AttnError as e:
        res.skip(name, no_plan_reason(str(e)))
        stats.add("skipped", "skipped")
        return
    ref = reference_grads(q, k, v, None, g, True, **kw)
    low = reference_grads(q, k, v, None, g, False, **kw)
    got = [out.detach()] + [t.grad for t in leaves]
    names = ["out", "dq", "dk", "dv"]
    if causal and sq == 1:
        # One visible key: dS = P (z dP - dO . o) is 0 exactly, but the op
        # takes delta from the output rounded to the input dtype (as
        # FlashAttention does), so with z = 1 / (1 - p) inexact dq and dk
        # are that rounding (~2^-9 relative), not 0 as torch's autograd.
        names = ["out", None, None, "dv"]
    if not check_grads(res, stats, f"{dtype} d{d}", name, got, ref[:4],
                       low[:4], names):
        return
    # lse is that of the scores before dropout.
    s = torch.matmul(q.float(), k.float().repeat_interleave(
        hq // hkv, 1).transpose(-1, -2)) / math.sqrt(d)
    if causal:
        s = s.masked_fill(torch.ones(sq, sk, dtype=torch.bool,
                                     device="cuda").triu(1), float("-inf"))
    err = (lse - torch.logsumexp(s, -1)).abs().max().item()
    if err > 1e-3 * max(1.0, torch.logsumexp(s, -1).abs().max().item()):
        res.fail(name, f"lse differs from the undropped one by {err:.3e}")
        return
    # attention_backward with the forward's values, and without them.
    dq, dk, dv = lib.attention_backward(g, q, k, v, out.detach(), lse,
                                        causal=causal, dropout_p=p, seed=seed,
                                        offset=offset)
    check_grads(res, stats, f"{dtype} d{d} api", name + " api",
                [dq, dk, dv], ref[1:4], low[1:4], names[1:])
    try:
        lib.attention_backward(g, q, k, v, out.detach(), lse, causal=causal,
                               dropout_p=p)
        res.fail(name, "attention_backward with dropout and no seed ran")
    except ValueError:
        res.ok(name + " needs seed")


def reproducibility(lib, res, dtype):
    import torch

    q, k, v = (torch.randn(2, 4, 300, 64, dtype=dtype, device="cuda")
               for _ in range(3))
    runs = [lib.attention(q, k, v, dropout_p=0.3, seed=s, offset=o)[0]
            for s, o in ((7, 0), (7, 0), (7, 1), (8, 0))]
    same = torch.equal(runs[0], runs[1])
    differ = not torch.equal(runs[0], runs[2]) and not torch.equal(
        runs[0], runs[3])
    free = [lib.attention(q, k, v, dropout_p=0.3)[0] for _ in range(2)]
    for ok, what in ((same, "same seed and offset: identical"),
                     (differ, "another offset or seed: different"),
                     (not torch.equal(*free), "seed=None: a fresh seed")):
        (res.ok if ok else lambda n: res.fail(n, "not so"))(
            f"reproducibility {dtype}: {what}")


def mask_statistics(lib, res):
    import torch
    import attn_runtime

    for p in (0.1, 0.5, 0.9):
        keep = lib.dropout_mask(2, 8, 1000, 1000, p, 1234567, 5,
                                device="cuda")
        n = keep.numel()
        frac = keep.float().mean().item()
        sigma = math.sqrt(p * (1 - p) / n)
        name = f"kept fraction p={p}"
        if abs(frac - (1 - p)) <= 6 * sigma:
            res.ok(name)
        else:
            res.fail(name, f"{frac:.6f}, expected {1 - p} +- {6 * sigma:.6f}")
    keep = lib.dropout_mask(2, 3, 37, 41, 0.3, 2 ** 63 + 5, 11)
    scalar = torch.tensor([[[[attn_runtime.dropout_keep(
        b * 3 + h, i, j, 0.3, 2 ** 63 + 5, 11) for j in range(41)]
        for i in range(37)] for h in range(3)] for b in range(2)])
    (res.ok if torch.equal(keep, scalar) else
     lambda n: res.fail(n, "tensor and scalar masks differ"))(
        "dropout_mask equals dropout_keep")


def unbiased(lib, res, dtype):
    import torch

    q, k, v = (torch.randn(1, 2, 64, 64, dtype=dtype, device="cuda")
               for _ in range(3))
    exact = lib.attention(q, k, v)[0].float()
    runs = torch.stack([lib.attention(q, k, v, dropout_p=0.5, seed=99,
                                      offset=o)[0].float()
                        for o in range(256)])
    mean, std = runs.mean(0), runs.std(0)
    z = (mean - exact).abs() / (std / math.sqrt(len(runs)) + 1e-3)
    name = f"unbiased {dtype}"
    if z.max().item() < 6:
        res.ok(name)
    else:
        res.fail(name, f"mean over offsets is {z.max().item():.1f} standard "
                 "errors from the output without dropout")


def run_all(bundle, quick=False, head_dims=(64, 128)):
    res = Results()
    problem = environment_problem(bundle)
    if problem:
        res.skip("all", problem)
        return res
    import torch
    import attn_runtime

    lib = attn_runtime.load(bundle)
    lib.poison_outputs = True
    stats = Stats()
    if not any("dropout" in n for n in lib.variants):
        res.skip("all", f"bundle {bundle} has no dropout variants "
                 "(attn-bundle without --dropout=false)")
        return res
    torch.manual_seed(0)
    shapes = [(2, 8, 2, 1000, 1000), (1, 4, 4, 77, 300), (2, 2, 1, 128, 33),
              (1, 2, 2, 1, 517)]
    if quick:
        shapes = shapes[:2]
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        for d in head_dims:
            for shape in shapes:
                for causal in (False, True):
                    for p in (0.1, 0.5) if not quick else (0.3,):
                        b, hq, hkv, sq, sk = shape
                        name = (f"{str(dtype)[6:]} d{d} {shape} "
                                f"{'causal' if causal else 'none'} p={p}")
                        run_case(lib, res, stats, name, dtype=dtype, d=d,
                                 batch=b, hq=hq, hkv=hkv, sq=sq, sk=sk,
                                 causal=causal, p=p,
                                 seed=2 ** 40 + sq * 31 + sk, offset=sq)
        for check in (reproducibility, unbiased):
            try:
                check(lib, res, dtype)
            except attn_runtime.AttnError as e:
                res.skip(f"{check.__name__} {dtype}", no_plan_reason(str(e)))
    mask_statistics(lib, res)
    for p in (1.0, -0.1):
        try:
            lib.attention(*(torch.randn(1, 1, 8, 64, dtype=torch.bfloat16,
                                        device="cuda") for _ in range(3)),
                          dropout_p=p, seed=1)
            res.fail(f"dropout_p={p}", "accepted")
        except ValueError:
            res.ok(f"dropout_p={p} refused")
    print(stats.table())
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", default=default_bundle())
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--head-dims", default="64,128",
                    type=lambda text: [int(d) for d in text.split(",")],
                    help="head dims of the output and gradient cases")
    args = ap.parse_args()
    res = run_all(args.bundle, args.quick, args.head_dims)
    print(res.summary())
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
