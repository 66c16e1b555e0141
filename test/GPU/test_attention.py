#!/usr/bin/env python3
"""GPU correctness of bundle kernels launched through attn_runtime, against
torch.nn.functional.scaled_dot_product_attention in float32.

    python3 test/GPU/test_attention.py [--bundle DIR] [--quick]
    pytest test/GPU/test_attention.py          (ATTN_BUNDLE_DIR=DIR)

Fresh random inputs for every case; outputs and lse are poisoned (NaN) before
each launch, so a kernel that skips a row fails. Shapes no variant covers are
reported as skipped with the runtime's reason. Without torch, a CUDA device,
the runtime library or a bundle, everything is skipped with the reason. Ends
with "N passed, N failed, N skipped"; exit status 1 if anything failed.
"""

import argparse
import math
import os
import sys
import threading

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))

SEQLENS = [1, 7, 64, 129, 1000]
# Head dims a bundle's any-D variants (`_dmax<N>`) serve at run time.
ANY_HEAD_DIMS = [1, 24, 59, 72, 100, 111, 136, 200, 255]
HEADS = {"mha": (4, 4), "gqa": (8, 2), "mqa": (4, 1)}
# Relative error bound: max |out - ref| / max |ref|.
# float32 against a float64 reference: TF32 products (10-bit mantissas)
# would be some 1e-3 off, so 1e-4 also shows that the kernels do not use it.
TOLERANCE = {"bf16": 1e-2, "f16": 5e-3, "f32": 1e-4}
LSE_TOLERANCE = 2e-3


class Results:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0
        self.skip_reasons = {}

    def ok(self, name):
        self.passed += 1

    def fail(self, name, why):
        self.failed += 1
        print(f"FAIL {name}: {why}", flush=True)

    def skip(self, name, why):
        self.skipped += 1
        # One line per distinct reason keeps the log readable.
        first = self.skip_reasons.setdefault(why, name)
        if first == name:
            print(f"SKIP {name}: {why}", flush=True)

    def summary(self):
        return f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped"


def default_bundle():
    return os.environ.get("ATTN_BUNDLE_DIR",
                          os.path.join(REPO, ".carry", "bundles", "sm_90a"))


def environment_problem(bundle):
    """Why nothing can run here, or None."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA device"
    if not os.path.exists(os.path.join(bundle, "bundle.json")):
        return f"no bundle at {bundle} (set ATTN_BUNDLE_DIR or --bundle)"
    try:
        import attn_runtime
        attn_runtime.find_library()
    except Exception as e:  # noqa: BLE001 - reported, not raised
        return f"attn_runtime unavailable: {e}"
    return None


def visible(mask, sq, sk, window, device):
    """Boolean [sq, sk] of the keys each query may see (docs/BundleFormat.md)."""
    import torch
    i = torch.arange(sq, device=device)[:, None]
    j = torch.arange(sk, device=device)[None, :]
    diag = i + sk - sq
    if mask == "causal":
        return j <= i
    if mask == "causal_bottom_right":
        return j <= diag
    if mask == "sliding_window":
        left, right = window
        ok = torch.ones(sq, sk, dtype=torch.bool, device=device)
        if left is not None and left >= 0:
            ok &= j >= diag - left
        if right is not None and right >= 0:
            ok &= j <= diag + right
        return ok
    return None


def reference(q, k, v, mask, window, bias, scale):
    """(out, lse) in float32 (float64 for float32 inputs); rows with no
    visible key give 0 and -inf."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    group = q.shape[1] // k.shape[1]
    wide = torch.float64 if q.dtype == torch.float32 else torch.float32
    qf = q.to(wide)
    kf = k.to(wide).repeat_interleave(group, dim=1)
    vf = v.to(wide).repeat_interleave(group, dim=1)
    sq, sk = q.shape[2], k.shape[2]
    allowed = visible(mask, sq, sk, window, q.device)
    add = torch.zeros(1, 1, sq, sk, dtype=wide, device=q.device)
    if allowed is not None:
        add = add.masked_fill(~allowed, float("-inf"))
    if bias is not None:
        add = add + bias.to(wide)
    with sdpa_kernel([SDPBackend.MATH]):
        if mask == "causal" and bias is None:
            out = F.scaled_dot_product_attention(qf, kf, vf, is_causal=True,
                                                 scale=scale)
        else:
            out = F.scaled_dot_product_attention(qf, kf, vf, attn_mask=add,
                                                 scale=scale)
    scores = qf @ kf.transpose(-1, -2) * scale + add
    lse = torch.logsumexp(scores, dim=-1)
    empty = torch.isneginf(lse)
    out = torch.where(empty[..., None], torch.zeros_like(out), out)
    return out, lse


def compare(res, name, dtype, got, ref, got_lse=None, ref_lse=None):
    """True when `got` (and `got_lse`, when given) match the float32
    reference: relative max error within TOLERANCE, lse within LSE_TOLERANCE
    with the same -inf rows. Reports a failure otherwise."""
    import torch

    if not torch.isfinite(got).all():
        res.fail(name, f"{(~torch.isfinite(got)).sum().item()} output "
                 "elements not written or not finite")
        return False
    err = ((got.float() - ref).abs().max() /
           ref.abs().max().clamp_min(1e-6)).item() if ref.numel() else 0.0
    if err > TOLERANCE[dtype]:
        res.fail(name, f"relative error {err:.2e} > {TOLERANCE[dtype]}")
        return False
    if got_lse is None:
        return True
    same_inf = torch.isneginf(got_lse) == torch.isneginf(ref_lse)
    finite = torch.isfinite(ref_lse)
    lse_err = ((got_lse - ref_lse)[finite].abs().max().item()
               if finite.any() else 0.0)
    if not same_inf.all() or torch.isnan(got_lse).any() or \
            lse_err > LSE_TOLERANCE * max(1.0, ref_lse[finite].abs().max()
                                          .item() if finite.any() else 1):
        res.fail(name, f"lse error {lse_err:.2e}, -inf rows match: "
                 f"{bool(same_inf.all())}")
        return False
    return True


def run_case(lib, res, name, *, dtype, d, sq, sk, heads=(4, 4), batch=2,
             mask="none", window=None, bias=None, lse=False, layout="bhsd",
             misalign=False, stream=None, dv=None, offsets=None):
    """`misalign` starts q, k and v one element past an aligned address;
    `offsets` ({"q": 3, "bias": 5, ...}) starts any of q, k, v, o and bias
    that many elements past one."""
    import torch
    import attn_runtime as ar

    tdtype = {"f16": torch.float16, "bf16": torch.bfloat16,
              "f32": torch.float32}[dtype]
    hq, hkv = heads
    dev = "cuda"
    offsets = offsets or ({"q": 1, "k": 1, "v": 1} if misalign else {})

    def shift(t, name):
        n = offsets.get(name, 0)
        if not n:
            return t
        flat = torch.empty(t.numel() + n, dtype=t.dtype, device=dev)
        view = flat[n:].view(t.shape)
        view.copy_(t)
        return view

    def make(h, s, dim):
        if layout == "bshd":  # strided view of a [B, S, H, D] tensor
            return torch.randn(batch, s, h, dim, dtype=tdtype,
                               device=dev).transpose(1, 2)
        if layout == "padded":  # rows 16-byte aligned past a short D
            wide = -(-dim // 8) * 8
            return torch.randn(batch, h, s, wide, dtype=tdtype,
                               device=dev)[..., :dim]
        return torch.randn(batch, h, s, dim, dtype=tdtype, device=dev)

    dv = dv or d
    q, k, v = make(hq, sq, d), make(hkv, sk, d), make(hkv, sk, dv)
    q, k, v = shift(q, "q"), shift(k, "k"), shift(v, "v")
    bias_t = None
    if bias == "same2d":
        bias_t = torch.randn(sq, sk, dtype=tdtype, device=dev)
    elif bias == "f32":
        bias_t = torch.randn(batch, 1, sq, sk, dtype=torch.float32,
                             device=dev)
    if bias_t is not None:
        bias_t = shift(bias_t, "bias")
    causal = {"none": False, "causal": True,
              "causal_bottom_right": "bottom_right",
              "sliding_window": False}[mask]
    scale = 1.0 / math.sqrt(d)
    try:
        lib.select_variant(q, k, v, causal=causal, window=window,
                           bias=bias_t, return_lse=lse)
    except ar.AttnError as e:
        if e.status == ar.STATUS["NO_VARIANT"]:
            lines = e.message.splitlines()
            res.skip(name, "no variant: " + (lines[1].strip() if len(lines) > 1
                                             else e.message))
            return
        res.fail(name, f"select_variant: {e}")
        return
    out = torch.full((batch, hq, sq, dv), float("nan"), dtype=tdtype,
                     device=dev)
    if layout == "padded":
        out = torch.full((batch, hq, sq, -(-dv // 8) * 8), float("nan"),
                         dtype=tdtype, device=dev)[..., :dv]
    out = shift(out, "o")
    try:
        if stream is not None:
            with torch.cuda.stream(stream):
                got, got_lse = lib.attention(q, k, v, causal=causal,
                                             window=window, bias=bias_t,
                                             return_lse=lse, out=out)
            stream.synchronize()
        else:
            got, got_lse = lib.attention(q, k, v, causal=causal,
                                         window=window, bias=bias_t,
                                         return_lse=lse, out=out)
            torch.cuda.synchronize()
    except ar.AttnError as e:
        res.fail(name, str(e))
        return
    ref, ref_lse = reference(q, k, v, mask, window, bias_t, scale)
    if lse and got_lse is None:
        res.fail(name, "lse requested but None returned")
        return
    if not lse and got_lse is not None:
        res.fail(name, "lse returned though not requested")
        return
    if not compare(res, name, dtype, got, ref, got_lse, ref_lse):
        return
    res.ok(name)


def head_dims(lib):
    dims = {64, 128}
    for name in lib.variants:
        for part in name.split("_"):
            if part.startswith("d") and part[1:].isdigit():
                dims.add(int(part[1:]))
    return sorted(dims)


def correctness(lib, res, quick):
    seqs = [7, 129] if quick else SEQLENS
    masks = [("none", None), ("causal", None), ("causal_bottom_right", None),
             ("sliding_window", (32, 0)), ("sliding_window", (16, 8))]
    n = 0
    for dtype in ("bf16", "f16", "f32"):
        for d in head_dims(lib):
            for sq in seqs:
                for sk in seqs:
                    for mask, window in masks:
                        n += 1
                        run_case(lib, res, f"{dtype}-d{d}-mha-{sq}x{sk}-{mask}"
                                 f"{window or ''}", dtype=dtype, d=d, sq=sq,
                                 sk=sk, mask=mask, window=window,
                                 lse=n % 2 == 0)
            for heads in ("gqa", "mqa"):
                for sq, sk in [(64, 64), (129, 1000), (1000, 129), (1, 7)]:
                    for mask in ("none", "causal", "causal_bottom_right"):
                        run_case(lib, res, f"{dtype}-d{d}-{heads}-{sq}x{sk}-"
                                 f"{mask}", dtype=dtype, d=d, sq=sq, sk=sk,
                                 heads=HEADS[heads], mask=mask, lse=True)
            for sq, sk in [(7, 129), (129, 64), (1000, 1000)]:
                for bias in ("same2d", "f32"):
                    run_case(lib, res, f"{dtype}-d{d}-{sq}x{sk}-bias-{bias}",
                             dtype=dtype, d=d, sq=sq, sk=sk, bias=bias,
                             lse=True)
            run_case(lib, res, f"{dtype}-d{d}-bshd-strided", dtype=dtype, d=d,
                     sq=129, sk=1000, layout="bshd", mask="causal", lse=True)
            run_case(lib, res, f"{dtype}-d{d}-misaligned", dtype=dtype, d=d,
                     sq=64, sk=64, misalign=True)
            # Each of q, k, v, o and bias 1 to 7 elements past an aligned
            # address, alone (the others aligned).
            for tensor in ("q", "k", "v", "o", "bias"):
                for n in range(1, 8) if not quick else (1, 7):
                    run_case(lib, res, f"{dtype}-d{d}-offset-{tensor}{n}",
                             dtype=dtype, d=d, sq=33, sk=65, mask="causal",
                             bias="same2d" if tensor == "bias" else None,
                             offsets={tensor: n}, lse=True)
    if any("_dmax" in name for name in lib.variants):
        any_head_dims(lib, res, quick)


def any_head_dims(lib, res, quick):
    """Head dims no fixed variant has, on the variants that take D and Dv
    at run time (padded to their bound)."""
    dims = ANY_HEAD_DIMS[::3] if quick else ANY_HEAD_DIMS
    for dtype in ("bf16", "f16"):
        for d in dims:
            for sq, sk in [(7, 129), (129, 64), (1000, 1000)]:
                for mask, window in [("none", None), ("causal", None),
                                     ("sliding_window", (16, 8))]:
                    run_case(lib, res, f"{dtype}-anyd{d}-{sq}x{sk}-{mask}",
                             dtype=dtype, d=d, sq=sq, sk=sk, mask=mask,
                             window=window, lse=True)
            run_case(lib, res, f"{dtype}-anyd{d}-gqa", dtype=dtype, d=d,
                     sq=129, sk=1000, heads=HEADS["gqa"], mask="causal",
                     lse=True)
            run_case(lib, res, f"{dtype}-anyd{d}-bshd-strided", dtype=dtype,
                     d=d, sq=129, sk=300, layout="bshd", lse=True)
            run_case(lib, res, f"{dtype}-anyd{d}-padded-rows", dtype=dtype,
                     d=d, sq=129, sk=300, layout="padded", mask="causal",
                     lse=True)
            run_case(lib, res, f"{dtype}-anyd{d}-misaligned", dtype=dtype,
                     d=d, sq=64, sk=64, misalign=True)
        for d, dv in [(40, 72), (100, 24)]:
            run_case(lib, res, f"{dtype}-anyd{d}v{dv}", dtype=dtype, d=d,
                     dv=dv, sq=129, sk=200, mask="causal", lse=True)


def error_paths(lib, res):
    """Bad calls raise with a clear status; a side stream and several
    threads work."""
    import torch
    import attn_runtime as ar

    def expect(name, fn, exc, needle, status=None):
        try:
            fn()
        except exc as e:
            text = str(e)
            if needle not in text or (status is not None and
                                      getattr(e, "status", None) != status):
                res.fail(name, f"unexpected message: {text}")
            else:
                res.ok(name)
            return
        except Exception as e:  # noqa: BLE001
            res.fail(name, f"raised {type(e).__name__}: {e}")
            return
        res.fail(name, "did not raise")

    bf = torch.bfloat16
    q = torch.randn(1, 4, 64, 64, dtype=bf, device="cuda")
    # Above any variant's head dim, fixed or up to a bound (at most 256).
    qo = torch.randn(1, 4, 64, 300, dtype=bf, device="cuda")
    expect("error-no-variant", lambda: lib.attention(qo, qo, qo), ar.AttnError,
           "head_dim", ar.STATUS["NO_VARIANT"])
    qs = torch.randn(1, 4, 64, 128, dtype=bf, device="cuda")[..., ::2]
    expect("error-last-dim-stride", lambda: lib.attention(qs, qs, qs),
           ValueError, "contiguous in its last dimension")
    k3 = torch.randn(1, 3, 64, 64, dtype=bf, device="cuda")
    expect("error-heads", lambda: lib.attention(q, k3, k3), ar.AttnError,
           "multiple of heads_kv", ar.STATUS["INVALID_ARGUMENT"])
    expect("error-cpu-tensor", lambda: lib.attention(q.cpu(), q, q),
           ValueError, "CUDA tensor")
    p = lib.make_params(q=(q.data_ptr(), (64, 64, 64, 2)),
                        k=(q.data_ptr(), q.stride()), v=(q.data_ptr(),
                                                         q.stride()),
                        o=(q.data_ptr(), q.stride()), dtype="bf16",
                        shape_q=q.shape, shape_k=q.shape, shape_v=q.shape)
    expect("error-c-strides", lambda: lib.forward(p), ar.AttnError,
           "stride 1", ar.STATUS["INVALID_ARGUMENT"])
    p.o = None
    expect("error-null-output", lambda: lib.forward(p), ar.AttnError,
           "null pointer", ar.STATUS["INVALID_ARGUMENT"])

    run_case(lib, res, "side-stream", dtype="bf16", d=64, sq=129, sk=129,
             mask="causal", stream=torch.cuda.Stream())

    # Several threads launching at once (module cache under a lock).
    sub = Results()
    threads = [threading.Thread(target=run_case, args=(lib, sub, f"thread{i}"),
                                kwargs=dict(dtype="bf16", d=64, sq=129,
                                            sk=1000, lse=True))
               for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if sub.failed:
        res.fail("threads", sub.summary())
    elif sub.passed:
        res.ok("threads")
    else:
        res.skip("threads", "no variant for the threaded case")


def bundle_error_paths(lib, res):
    """Copies of the bundle, each broken one way, must fail with the right
    status at launch: wrong GPU, too much shared memory, missing entry."""
    import json
    import shutil
    import tempfile
    import torch
    import attn_runtime as ar

    if lib.platform != "cuda":
        return
    with open(os.path.join(lib.bundle_dir, "bundle.json")) as f:
        original = json.load(f)
    major, _ = torch.cuda.get_device_capability()
    # The first variant that serves the small call below on its own: a
    # size-specialized one (seqlen_*_min, grid fill) would refuse it for
    # that reason instead (bundles built with --size-hints list them first).
    def general(v):
        c = v.get("conditions", {})
        return (not c.get("seqlen_q_min") and not c.get("seqlen_k_min")
                and not c.get("grid_min_blocks_per_sm")
                and not v.get("dropout")
                and v.get("layout", "dense") == "dense")
    candidates = [v for v in original["variants"] if general(v)]
    if not candidates:
        res.skip("bundle-errors", "no variant without size conditions")
        return
    variant = dict(candidates[0])
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16,
             "f32": torch.float32}[variant["dtype"]]
    causal = {"none": False, "causal": True,
              "causal_bottom_right": "bottom_right"}.get(variant["mask"])
    window = (8, 0) if variant["mask"] == "sliding_window" else None
    if causal is None:
        causal = False
    if variant["bias"] != "none" or variant["softcap"]:
        res.skip("bundle-errors", "first variant needs bias or softcap")
        return
    d, dv = variant["head_dim"], variant["head_dim_v"]
    q = torch.randn(1, 2, 64, d, dtype=dtype, device="cuda")
    v = torch.randn(1, 2, 64, dv, dtype=dtype, device="cuda")
    cases = [
        ("error-unsupported-gpu", {"chip": f"sm_{major - 1}0"}, {},
         "UNSUPPORTED_GPU", "compute capability"),
        ("error-shared-memory", {}, {"dynamic_smem": 1 << 24},
         "UNSUPPORTED_GPU", "shared memory"),
        ("error-missing-entry", {}, {"entry": "no_such_kernel"},
         "LAUNCH_FAILED", "no_such_kernel"),
    ]
    for name, top, var, status, needle in cases:
        tmp = tempfile.mkdtemp(prefix="attn-bundle-")
        try:
            # The variant alone (no plans), its chip where it says one.
            bundle = dict(original, **top)
            bundle.pop("plans", None)
            if "chip" in top and "chip" in variant:
                var = dict(var, chip=top["chip"])
            bundle["variants"] = [dict(variant, **var)]
            binary = os.path.join(tmp, variant["binary"])
            os.makedirs(os.path.dirname(binary), exist_ok=True)
            shutil.copy(os.path.join(lib.bundle_dir, variant["binary"]),
                        binary)
            with open(os.path.join(tmp, "bundle.json"), "w") as f:
                json.dump(bundle, f)
            broken = ar.load(tmp)
            broken.attention(q, q, v, causal=causal, window=window)
            torch.cuda.synchronize()
            res.fail(name, "launched")
        except ar.AttnError as e:
            if e.status_name != "ATTN_STATUS_" + status or needle not in str(e):
                res.fail(name, f"unexpected error: {e}")
            else:
                print(f"ok {name}: {e}")
                res.ok(name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def run_suite(bundle, suite):
    """Loads `bundle` and runs suite(lib, res), or skips everything saying
    why; returns (Results, the reason everything was skipped or None)."""
    res = Results()
    problem = environment_problem(bundle)
    if problem:
        print(f"SKIP all GPU tests: {problem}")
        res.skipped += 1
        return res, problem
    import torch
    import attn_runtime as ar

    torch.manual_seed(0)
    lib = ar.load(bundle)
    print(f"{lib}; device {torch.cuda.get_device_name()}", flush=True)
    suite(lib, res)
    return res, None


def run_all(bundle, quick=False):
    def suite(lib, res):
        correctness(lib, res, quick)
        error_paths(lib, res)
        bundle_error_paths(lib, res)
    return run_suite(bundle, suite)


def test_gpu_attention():
    """pytest entry point."""
    import pytest
    res, problem = run_all(default_bundle(),
                           quick=bool(os.environ.get("ATTN_QUICK")))
    print(res.summary())
    if problem:
        pytest.skip(problem)
    assert res.failed == 0, res.summary()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", default=default_bundle())
    ap.add_argument("--quick", action="store_true",
                    help="two sequence lengths instead of five")
    args = ap.parse_args()
    res, _ = run_all(args.bundle, args.quick)
    print(res.summary())
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
