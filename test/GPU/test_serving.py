#!/usr/bin/env python3
"""GPU correctness of the serving forms through attn_runtime: packed
variable-length batches (lib.attention_varlen) and KV caches, contiguous and
paged (lib.attention_kvcache), each sequence against the float32 reference
of that sequence alone (test_attention.reference).

    python3 test/GPU/test_serving.py [--bundle DIR] [--quick]
                                     [--head-dims 64,128]

Outputs are poisoned (NaN) before each launch; rows of a packed batch that
no sequence owns must stay NaN. Shapes no variant covers are skipped with
the runtime's reason; without torch, a GPU, the library or a bundle,
everything is skipped. Ends with "N passed, N failed, N skipped".
"""

import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_attention import (TOLERANCE, compare,  # noqa: E402
                            default_bundle, reference, run_suite)

# (query heads, key/value heads)
HEADS = [(8, 8), (32, 8), (8, 1)]
MASKS = [("none", False, None), ("causal", True, None),
         ("causal_bottom_right", "bottom_right", None),
         ("sliding_window", False, (64, 0))]


def skip_or_fail(res, name, e):
    import attn_runtime as ar

    if e.status == ar.STATUS["NO_VARIANT"]:
        lines = e.message.splitlines()
        res.skip(name, "no variant: " + (lines[1].strip() if len(lines) > 1
                                         else e.message))
    else:
        res.fail(name, str(e))


def varlen_case(lib, res, name, *, dtype, d, lens_q, lens_k, heads, mask,
                causal, window, packed_qkv=False, max_q=None, spare=3):
    import torch
    import attn_runtime as ar

    tdtype = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    hq, hkv = heads
    tq, tk = sum(lens_q), sum(lens_k)
    # `spare` rows no sequence owns: must stay untouched.
    if packed_qkv and hq == hkv and tq == tk:
        # q, k and v as strided views of one [total, 3, H, D] tensor.
        qkv = torch.randn(tq + spare, 3, hq, d, dtype=tdtype, device="cuda")
        q, k, v = qkv[:, 0], qkv[:tk, 1], qkv[:tk, 2]
    else:
        q = torch.randn(tq + spare, hq, d, dtype=tdtype, device="cuda")
        k = torch.randn(tk, hkv, d, dtype=tdtype, device="cuda")
        v = torch.randn(tk, hkv, d, dtype=tdtype, device="cuda")
    offsets = lambda lens: torch.tensor(  # noqa: E731
        [0] + list(torch.tensor(lens).cumsum(0).tolist()), dtype=torch.int32,
        device="cuda")
    cu_q, cu_k = offsets(lens_q), offsets(lens_k)
    lib.poison_outputs = True
    try:
        out, lse = lib.attention_varlen(
            q, k, v, cu_q, cu_k, max(lens_q) if max_q is None else max_q,
            max(lens_k), causal=causal, window=window, return_lse=True)
        torch.cuda.synchronize()
    except ar.AttnError as e:
        skip_or_fail(res, name, e)
        return
    finally:
        lib.poison_outputs = False
    if not torch.isnan(out[tq:]).all():
        res.fail(name, "rows no sequence owns were written")
        return
    scale = d ** -0.5
    for s, (lq, lk) in enumerate(zip(lens_q, lens_k)):
        if lq == 0:
            continue
        a, b = cu_q[s].item(), cu_k[s].item()
        qs = q[a:a + lq].transpose(0, 1)[None]
        ks = k[b:b + lk].transpose(0, 1)[None]
        vs = v[b:b + lk].transpose(0, 1)[None]
        if lk == 0:
            ref = torch.zeros(1, hq, lq, d, device="cuda")
            ref_lse = torch.full((1, hq, lq), float("-inf"), device="cuda")
        else:
            ref, ref_lse = reference(qs, ks, vs, mask, window, None, scale)
        got = out[a:a + lq].transpose(0, 1)[None]
        if not compare(res, f"{name}-seq{s}", dtype, got, ref,
                       lse[:, a:a + lq][None], ref_lse):
            return
    res.ok(name)


def kvcache_case(lib, res, name, *, dtype, d, sq, lens, capacity, heads, mask,
                 causal, window, page_size=None, splits=(0,)):
    import torch
    import attn_runtime as ar

    tdtype = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    hq, hkv = heads
    batch = len(lens)
    q = torch.randn(batch, hq, sq, d, dtype=tdtype, device="cuda")
    k = torch.randn(batch, hkv, capacity, d, dtype=tdtype, device="cuda")
    v = torch.randn(batch, hkv, capacity, d, dtype=tdtype, device="cuda")
    seqlens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    table = None
    k_cache, v_cache = k, v
    if page_size:
        # Pages of every batch shuffled over a pool with spare pages.
        per = capacity // page_size
        pool = batch * per + 5
        order = torch.randperm(pool, device="cuda")[:batch * per]
        table = order.view(batch, per).to(torch.int32)
        k_cache = torch.randn(pool, hkv, page_size, d, dtype=tdtype,
                              device="cuda")
        v_cache = torch.randn_like(k_cache)
        paged = lambda t: t.view(batch, hkv, per, page_size, d)  # noqa: E731
        k_cache[order] = paged(k).permute(0, 2, 1, 3, 4).reshape(
            batch * per, hkv, page_size, d)
        v_cache[order] = paged(v).permute(0, 2, 1, 3, 4).reshape(
            batch * per, hkv, page_size, d)
    scale = d ** -0.5
    refs = []
    for b, n in enumerate(lens):
        if n == 0:
            refs.append((torch.zeros(1, hq, sq, d, device="cuda"),
                         torch.full((1, hq, sq), float("-inf"),
                                    device="cuda")))
        else:
            refs.append(reference(q[b:b + 1], k[b:b + 1, :, :n],
                                  v[b:b + 1, :, :n], mask, window, None,
                                  scale))
    first = None
    for n_splits in splits:
        tag = f"{name}-splits{n_splits}" if len(splits) > 1 else name
        lib.poison_outputs = True
        try:
            out, lse = lib.attention_kvcache(
                q, k_cache, v_cache, seqlens, block_table=table,
                causal=causal, window=window, return_lse=True,
                num_splits=n_splits)
            torch.cuda.synchronize()
        except ar.AttnError as e:
            skip_or_fail(res, tag, e)
            return
        finally:
            lib.poison_outputs = False
        for b, (ref, ref_lse) in enumerate(refs):
            if not compare(res, f"{tag}-b{b}", dtype, out[b:b + 1], ref,
                           lse[b:b + 1], ref_lse):
                return
        # Any split count gives the same result within rounding (the
        # partial outputs are f32; the combine rounds once).
        if first is None:
            first = out.float()
        else:
            diff = (out.float() - first).abs().max().item()
            if diff > 2 * TOLERANCE[dtype] * first.abs().max().item():
                res.fail(tag, f"differs from splits {splits[0]} by {diff:.2e}")
                return
        res.ok(tag)


def correctness(lib, res, quick, head_dims=(64, 128)):
    rng = random.Random(0)
    dtypes = ["bf16"] if quick else ["bf16", "f16"]
    for dtype in dtypes:
        for d in head_dims:
            for heads in HEADS:
                for mask, causal, window in MASKS:
                    tag = f"{dtype}-d{d}-{heads[0]}x{heads[1]}-{mask}"
                    # Mixed lengths, 0 and 1 included; Sq != Sk per sequence
                    # for the bottom-right and windowed masks.
                    lens_q = [1, 0, 7, 129, 1000, 64, 3000]
                    lens_k = list(lens_q)
                    if mask in ("causal_bottom_right", "sliding_window"):
                        lens_k = [n + rng.randint(0, 300) for n in lens_q]
                    if quick:
                        lens_q, lens_k = lens_q[:5], lens_k[:5]
                    varlen_case(lib, res, f"varlen-{tag}", dtype=dtype, d=d,
                                lens_q=lens_q, lens_k=lens_k, heads=heads,
                                mask=mask, causal=causal, window=window)
                    for sq in (1, 4) if quick else (1, 4, 16):
                        lens = [0, 1, 1000, 4096, rng.randint(1, 4096)]
                        kv_mask = mask
                        kv_causal = causal
                        if mask == "causal":  # top-left: Sq rows see few keys
                            kv_mask, kv_causal = "causal_bottom_right", \
                                "bottom_right"
                        kvcache_case(lib, res, f"kvcache-{tag}-sq{sq}",
                                     dtype=dtype, d=d, sq=sq, lens=lens,
                                     capacity=4096, heads=heads, mask=kv_mask,
                                     causal=kv_causal, window=window)
                        # Pages of 5 and 48 keys: sizes no power of two
                        # (the kernels divide rows by the run-time size).
                        for page, cap in ((16, 4096), (64, 4096),
                                          (256, 4096), (5, 4095),
                                          (48, 4080)):
                            lens = [0, 1, page - 1, page + 1, cap,
                                    rng.randint(1, cap)]
                            kvcache_case(
                                lib, res, f"paged{page}-{tag}-sq{sq}",
                                dtype=dtype, d=d, sq=sq, lens=lens,
                                capacity=cap, heads=heads, mask=kv_mask,
                                causal=kv_causal, window=window,
                                page_size=page)
            # A long sequence beside empty and short ones.
            if not quick:
                varlen_case(lib, res, f"varlen-{dtype}-d{d}-8k", dtype=dtype,
                            d=d, lens_q=[8192, 0, 1, 100],
                            lens_k=[8192, 5, 1, 2000], heads=(32, 8),
                            mask="causal_bottom_right",
                            causal="bottom_right", window=None)
            # max_seqlen_q only sizes the grid: a hint below the longest
            # sequence (1 here) costs time, never rows.
            varlen_case(lib, res, f"varlen-{dtype}-d{d}-low-max-seqlen",
                        dtype=dtype, d=d, lens_q=[700, 3, 0, 129],
                        lens_k=[700, 40, 9, 129], heads=(32, 8),
                        mask="causal_bottom_right", causal="bottom_right",
                        window=None, max_q=1)
            # Equal lengths and no spare rows on a grid of eight waves: the
            # runtime gives each workgroup two row blocks of its sequence
            # (packedRowBlocksPerWorkgroup).
            varlen_case(lib, res, f"varlen-{dtype}-d{d}-32x512-pairs",
                        dtype=dtype, d=d, lens_q=[512] * 32,
                        lens_k=[512] * 32, heads=(16, 16), mask="causal",
                        causal=True, window=None, spare=0)
            # Equal lengths: top-left causal with a window, q/k/v views of
            # one packed tensor.
            varlen_case(lib, res, f"varlen-{dtype}-d{d}-packedqkv-window",
                        dtype=dtype, d=d, lens_q=[512, 1, 2048, 300],
                        lens_k=[512, 1, 2048, 300], heads=(8, 8),
                        mask="sliding_window", causal=True, window=(100, 0),
                        packed_qkv=True)
            kvcache_case(lib, res, f"kvcache-{dtype}-d{d}-top-left-causal",
                         dtype=dtype, d=d, sq=16, lens=[16, 2000], capacity=2048,
                         heads=(8, 2), mask="causal", causal=True, window=None,
                         splits=(1, 3))
            # Split-KV: split counts that do and do not divide the key
            # blocks, more splits than a short sequence has blocks, and the
            # runtime's own choice, contiguous and paged.
            for page in (None, 64):
                for mask, causal, window in MASKS[1:]:
                    if mask == "causal":
                        mask, causal = "causal_bottom_right", "bottom_right"
                    kvcache_case(
                        lib, res, f"split-{dtype}-d{d}-{mask}-page{page}",
                        dtype=dtype, d=d, sq=4, lens=[0, 1, 100, 5000, 8192],
                        capacity=8192, heads=(32, 8), mask=mask,
                        causal=causal, window=window, page_size=page,
                        splits=(1, 0, 2, 3, 7, 64))


def error_paths(lib, res):
    """Bad serving calls raise with a message naming the argument."""
    import torch

    q = torch.randn(10, 8, 64, dtype=torch.bfloat16, device="cuda")
    cu = torch.tensor([0, 10], dtype=torch.int32, device="cuda")
    cases = [
        ("varlen-int64-offsets", lambda: lib.attention_varlen(
            q, q, q, cu.long(), cu, 10, 10), TypeError, "int32"),
        ("varlen-offset-count", lambda: lib.attention_varlen(
            q, q, q, cu, cu[:1], 10, 10), ValueError, "B + 1"),
        ("kvcache-splits", lambda: lib.attention_kvcache(
            q[None], q[None], q[None], cu[:1], num_splits=-1), ValueError,
         "num_splits"),
        ("kvcache-window-top-left", lambda: lib.attention_kvcache(
            q[None], q[None], q[None], cu[1:], causal=True, window=(4, 0)),
         ValueError, "bottom_right"),
    ]
    for name, call, exc, text in cases:
        try:
            call()
            res.fail(name, f"no {exc.__name__} raised")
        except exc as e:
            if text in str(e):
                res.ok(name)
            else:
                res.fail(name, f"message lacks {text!r}: {e}")
        except Exception as e:  # noqa: BLE001 - reported
            res.fail(name, f"{type(e).__name__} instead of {exc.__name__}: "
                     f"{e}")


def run_all(bundle, quick=False, head_dims=(64, 128)):
    def suite(lib, res):
        correctness(lib, res, quick, head_dims)
        error_paths(lib, res)
    return run_suite(bundle, suite)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", default=default_bundle())
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--head-dims", default="64,128",
                    type=lambda text: [int(d) for d in text.split(",")],
                    help="head dims of the correctness cases")
    args = ap.parse_args()
    res, _ = run_all(args.bundle, args.quick, args.head_dims)
    print(res.summary())
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
