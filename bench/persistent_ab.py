#!/usr/bin/env python3
"""A tma_ws tile and its persistent form (ConfigAttr `persistent`), side by
side through the runtime on the same tensors: each forced by name
(Library.force_variant), bit-identity of the outputs checked (a tile's rows
are computed alike in both), TFLOP/s by bench.tflops_of, and torch SDPA's
cuDNN backend in the same process. bf16; B x S = 16384 tokens, 16 heads at
D <= 128 and 8 at D = 256 (as tma_ab.py).

The bundle: `attn-bundle --chip sm_90a --input IN.mlir` of the ops that
`--print-input` writes (both forms of each tile, static head counts).

Usage: persistent_ab.py BUNDLE_DIR [--head-dims 64,128,256]
                        [--seqlens 512,...] [--masks none,causal]
       persistent_ab.py BUNDLE_DIR --check [--small]
       persistent_ab.py --print-input [--head-dims ...]

--check compares the two forms on odd shapes instead (Sq != Sk, tails,
more tiles than workgroups and fewer) and exits 1 on a difference;
--small keeps those shapes small enough for compute-sanitizer.
"""
import argparse
import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))

TOKENS = 16384

# The TMA tile each head dim's default dispatch uses on sm_90a from S = 2k
# (lib/Target/TileTables.json and the H100 tuning file).
TILES = {
    64: ("tma_d64_m192n128w16", 192, 128, 16, 2),
    128: ("tma_d128_m128n128w12s3", 128, 128, 12, 3),
    256: ("tma_d256_m128n80w12", 128, 80, 12, 2),
}


# lib.attention's `causal` for each mask.
CAUSAL = {"none": False, "causal": True, "causal_bottom_right": "bottom_right"}


def heads_of(d):
    return 16 if d <= 128 else 8


def print_input(head_dims, masks):
    for d in head_dims:
        name, bm, bn, w, st = TILES[d]
        h = heads_of(d)
        t = f"memref<?x{h}x?x{d}xbf16>"
        for mask in masks:
            for persistent in (False, True):
                extra = ", persistent = true" if persistent else ""
                attr = "" if mask == "none" else \
                    f"mask = #attn.mask<{mask}>, "
                fn = f"d{d}_{mask}_{'p' if persistent else 'n'}"
                print(f"func.func @{fn}(%q: {t}, %k: {t}, %v: {t}, "
                      f"%o: {t}, %lse: memref<?x{h}x?xf32>) {{")
                print(f"  attn.attention q(%q : {t}) k(%k : {t}) "
                      f"v(%v : {t}) outs(%o : {t}) "
                      f"lse(%lse : memref<?x{h}x?xf32>) {{{attr}config = "
                      f"#attn.config<name = \"{name}\", block_m = {bm}, "
                      f"block_n = {bn}, warps = {w}, stages = {st}, "
                      f"pipeline = tma_ws, acc_in_registers = true, "
                      f"mma = wgmma.m64nNk16{extra}>}}")
                print("  return\n}")


def variant_name(d, mask, form):
    tile = TILES[d][0].split("_", 2)[2]
    if tile[-2:-1] != "s":
        tile += f"s{TILES[d][4]}"
    return f"fwd_bf16_d{d}_{mask}_{tile}{form}"


def check(lib, head_dims, masks, small):
    import torch
    # (batch, Sq, Sk): tails, Sq != Sk both ways, 1536 tiles at D = 128
    # (12 a workgroup on 132 SMs) and a grid of a few tiles.
    shapes = [(1, 100, 77), (2, 300, 1000)] if small else \
        [(4, 3001, 3001), (2, 300, 5000), (3, 1000, 200), (1, 129, 129),
         (8, 2048, 2048)]
    failed = 0
    for d in head_dims:
        for mask in masks:
            for batch, sq, sk in shapes:
                heads = heads_of(d)
                q = torch.randn(batch, heads, sq, d, device="cuda",
                                dtype=torch.bfloat16)
                k, v = (torch.randn(batch, heads, sk, d, device="cuda",
                                    dtype=torch.bfloat16) for _ in range(2))
                out = {}
                for form in ("tmap", "tma"):
                    lib.force_variant(variant_name(d, mask, form))
                    out[form] = lib.attention(q, k, v, causal=CAUSAL[mask],
                                              return_lse=True)
                lib.force_variant(None)
                same = all(torch.equal(x, y)
                           for x, y in zip(out["tmap"], out["tma"]))
                failed += not same
                print(f"D {d} {mask} B {batch} Sq {sq} Sk {sk}: "
                      f"{'identical' if same else 'DIFFERENT'}", flush=True)
    print(f"{failed} different")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundle", nargs="?")
    ap.add_argument("--head-dims", default="64,128,256")
    ap.add_argument("--seqlens", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--masks", default="none,causal")
    ap.add_argument("--print-input", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--small", action="store_true")
    a = ap.parse_args()
    head_dims = [int(x) for x in a.head_dims.split(",")]
    masks = a.masks.split(",")
    if a.print_input:
        return print_input(head_dims, masks)

    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    import attn_runtime
    from bench import tflops_of

    lib = attn_runtime.load(a.bundle)
    print(f"device: {torch.cuda.get_device_name()}")
    if a.check:
        return check(lib, head_dims, masks, a.small)
    print("| D | mask | S | B x H | persistent TFLOP/s | plain TFLOP/s "
          "| persistent/plain | cuDNN TFLOP/s | persistent/cuDNN "
          "| identical |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    torch.manual_seed(0)
    for d in head_dims:
        for mask in masks:
            causal = CAUSAL[mask]
            for s in map(int, a.seqlens.split(",")):
                heads = heads_of(d)
                batch = max(1, TOKENS // s)
                q, k, v = (torch.randn(batch, heads, s, d, device="cuda",
                                       dtype=torch.bfloat16)
                           for _ in range(3))
                flops = 4 * batch * heads * s * s * d / (2 if causal else 1)
                names = {form: variant_name(d, mask, form)
                         for form in ("tmap", "tma")}

                def call(name):
                    lib.force_variant(name)
                    return lib.attention(q, k, v, causal=causal,
                                         return_lse=True)

                try:
                    (o1, l1), (o2, l2) = call(names["tmap"]), call(names["tma"])
                except attn_runtime.AttnError as e:
                    lib.force_variant(None)
                    print(f"| {d} | {mask} | {s} | error: "
                          f"{str(e).splitlines()[0]} |", flush=True)
                    continue
                same = torch.equal(o1, o2) and torch.equal(l1, l2)
                fp = tflops_of(lambda: call(names["tmap"]), flops)
                fn = tflops_of(lambda: call(names["tma"]), flops)
                lib.force_variant(None)
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    fc = tflops_of(lambda: F.scaled_dot_product_attention(
                        q, k, v, is_causal=bool(causal)), flops)
                print(f"| {d} | {mask} | {s} | {batch} x {heads} | {fp:.0f} "
                      f"| {fn:.0f} | {fp / fn:.3f} | {fc:.0f} | "
                      f"{fp / fc:.2f} | {same} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
