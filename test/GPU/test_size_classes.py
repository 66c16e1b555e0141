#!/usr/bin/env python3
"""GPU check of a bundle's size-specialized variants (docs/Tuning.md): each
variant with seqlen conditions is dispatched, and right, at both ends of
its range, and the lengths just outside it go to another variant (a TMA
variant's cp.async form, which only the calls TMA cannot describe reach, is
left to test_attention.py).

    python3 test/GPU/test_size_classes.py --bundle DIR

For every dense, unbiased variant whose conditions have seqlen_q_min (its
dtype, head dim and mask), Sq = Sk = the range's start, its end (at most
4096, unless the range starts later) and, where bounded, one past the end, with enough heads (batch 1) to
meet its grid_min_blocks_per_sm on this GPU: the runtime's choice
(select_variant) must be the variant inside the range and another outside;
then at the range's start with 4 heads, a grid below the fill condition
(when it has one), which must take another variant. Every output must match
torch SDPA (float32) to the tolerance of test_attention.py. Ends with "N
passed, N failed, N skipped".
"""

import argparse
import json
import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, os.path.dirname(__file__))

from test_attention import TOLERANCE, Results  # noqa: E402

# Bounds the lengths a check runs at: the kernels do not change past it.
MAX_CHECKED = 4096


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", required=True)
    args = ap.parse_args()
    res = Results()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("SKIP test_size_classes: no torch\n0 passed, 0 failed, "
              "1 skipped")
        return 0
    if not torch.cuda.is_available():
        print("SKIP test_size_classes: no CUDA device\n0 passed, 0 failed, "
              "1 skipped")
        return 0
    import attn_runtime
    lib = attn_runtime.load(args.bundle)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    with open(os.path.join(args.bundle, "bundle.json")) as f:
        variants = json.load(f)["variants"]
    dtypes = {"bf16": torch.bfloat16, "f16": torch.float16,
              "f32": torch.float32}
    # The cp.async form after a TMA variant (docs/AttnBundle.md) serves
    # only the calls TMA cannot describe: its TMA form is the one chosen.
    tma = {v["name"] for v in variants if v.get("tensor_maps")}
    for v in variants:
        cond = v.get("conditions", {})
        # (Its TMA form's name ends in tma, tmap when persistent, and tmao
        # or tmapo with the softmax overlapped.)
        if v["name"].endswith("ws") and any(
                v["name"][:-2] + "tma" + suffix in tma
                for suffix in ("", "p", "o", "po")):
            continue
        if ("seqlen_q_min" not in cond or v.get("layout", "dense") != "dense"
                or v.get("bias", "none") != "none" or v.get("softcap")
                or v.get("dropout") or not v.get("head_dim")):
            continue
        lo, hi = cond["seqlen_q_min"], cond.get("seqlen_q_max")
        fill = cond.get("grid_min_blocks_per_sm", 0)

        def heads_for(s):
            """Heads whose grid meets the fill condition at length s."""
            blocks = -(-s // v["block_m"])
            return max(4, -(-fill * sms // blocks))

        # The range's end, or a length past its start no longer than
        # MAX_CHECKED allows (the start itself when that is longer).
        end = max(lo, min(hi or MAX_CHECKED, MAX_CHECKED))
        lengths = [(lo, heads_for(lo), True), (end, heads_for(end), True)]
        if hi is not None:
            lengths.append((hi + 1, heads_for(hi + 1), False))
        if fill and heads_for(lo) > 4:
            lengths.append((lo, 4, False))
        causal = v["mask"] == "causal"
        if v["mask"] not in ("none", "causal"):
            continue
        d = v["head_dim"]
        for s, heads, inside in lengths:
            name = f"{v['name']} S={s} H={heads}"
            q, k, val = (torch.randn(1, heads, s, d,
                                     dtype=dtypes[v["dtype"]], device="cuda")
                         for _ in range(3))
            chosen = lib.select_variant(q, k, val, causal=causal)
            if (chosen == v["name"]) != inside:
                res.fail(name, f"dispatched {chosen}, expected "
                         + ("it" if inside else "another variant"))
                continue
            out, _ = lib.attention(q, k, val, causal=causal)
            ref = F.scaled_dot_product_attention(
                q.float(), k.float(), val.float(), is_causal=causal)
            err = ((out.float() - ref).abs().max() / ref.abs().max()).item()
            if not err <= TOLERANCE[v["dtype"]]:
                res.fail(name, f"relative error {err:.2e}")
            else:
                res.ok(name)
                print(f"ok {name}: {chosen}, relative error {err:.1e}")
    print(res.summary())
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
