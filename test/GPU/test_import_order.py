#!/usr/bin/env python3
"""A bundle loaded before torch is imported: the runtime must leave the
process as it found it. Once its bundle reader read files through C++
iostreams, and `import torch` afterwards faulted in torch's own stream
output (bench/logs/2026-11-26-import-order-segv*.log). Run as its own
process (torch must not be imported yet); then one call, checked against
torch SDPA in float32. Ends with "N passed, N failed, N skipped".

    python3 test/GPU/test_import_order.py [--bundle DIR]
"""

import argparse
import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", default=os.environ.get(
        "ATTN_BUNDLE_DIR", os.path.join(REPO, ".carry", "bundles", "sm_90a")))
    args = ap.parse_args()
    assert "torch" not in sys.modules
    import attn_runtime
    try:
        lib = attn_runtime.load(args.bundle)
    except attn_runtime.AttnError as e:
        print(f"skipped: {str(e).splitlines()[0]}")
        print("0 passed, 0 failed, 1 skipped")
        return 0
    try:
        import torch
    except ImportError:
        print("skipped: torch is not installed")
        print("0 passed, 0 failed, 1 skipped")
        return 0
    if not torch.cuda.is_available():
        print("skipped: no CUDA device")
        print("0 passed, 0 failed, 1 skipped")
        return 0
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 8, 300, 128, device="cuda", dtype=torch.bfloat16)
               for _ in range(3))
    try:
        out = lib.attention(q, k, v, causal=True)[0]
    except attn_runtime.AttnError as e:
        print(f"skipped: {str(e).splitlines()[0]}")
        print("0 passed, 0 failed, 1 skipped")
        return 0
    ref = torch.nn.functional.scaled_dot_product_attention(
        q.float(), k.float(), v.float(), is_causal=True)
    err = (out.float() - ref).abs().max().item()
    ok = err < 2e-2
    print(f"import torch after load, then one call: max error {err:.2e}")
    print(f"{int(ok)} passed, {int(not ok)} failed, 0 skipped")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
