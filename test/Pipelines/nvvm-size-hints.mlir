// attn-to-nvvm with size hints: an op with dynamic lengths compiles to one
// kernel per size class and the host code picks one per call (as Inductor
// compiles per size hint). D = 64: the general wgmma tile and, from 4096,
// the tables' size-specialized warp-specialized tile in its TMA form
// (tma_ws: the host code encodes its tensor maps before the launch).
// D = 256: the tables have no size-specialized tile, so the hints leave
// it one kernel, the general TMA tile.
// REQUIRES: ptxas
// RUN: attn-opt %s --attn-to-nvvm="chip=sm_90a format=isa size-hints=1,512,4096,16384" | FileCheck %s
// RUN: attn-opt %s --attn-to-nvvm="chip=sm_90a format=isa" | FileCheck %s --check-prefix=ONE
// With the H100 tuning file and the SM count, written as a bundle: the
// copy's lengths and grid fill become its conditions, as attn-bundle's. The
// file's entries resolve to their TMA forms (a persistent grid, "tmap", where
// the tables' persistent_masks say): for D = 64 without a mask
// tma_d128_m128n128w12s3 up to 1448 (>= 31 workgroups per SM) and
// tma_d64_m192n128w16 from 1449 (>= 20), then the general wgmma tile. D = 256
// gives tma_d256_m128n80w12 from 2897, then the general tma_d256_m128n64w12.
// RUN: rm -rf %t && attn-opt %s --attn-to-nvvm="chip=sm_90a format=bin toolkit=%cuda_toolkit size-hints=1,512,4096,16384 sm-count=132 tuning=%attn_src_root/lib/Target/Tunings/sm_90a-h100.json" --attn-write-bundle="dir=%t" -o /dev/null
// RUN: %python -c "import json, sys; b = json.load(open(sys.argv[1])); print(b['version']); [print(v['name'], v.get('tensor_maps', False), sorted(v['conditions'].items())) for v in b['variants']]" %t/bundle.json | FileCheck %s --check-prefix=BUNDLE
// BUNDLE:      10
// BUNDLE-NEXT: fwd_bf16_d64_none_m128n128w12s3tmap True [('align_bytes', 16), ('grid_min_blocks_per_sm', 31), ('seqlen_k_max', 1448), ('seqlen_k_min', 1), ('seqlen_k_multiple', 1), ('seqlen_q_max', 1448), ('seqlen_q_min', 1), ('seqlen_q_multiple', 1)]
// BUNDLE-NEXT: fwd_bf16_d64_none_m192n128w16s2tmap True [('align_bytes', 16), ('grid_min_blocks_per_sm', 20), ('seqlen_k_min', 1449), ('seqlen_k_multiple', 1), ('seqlen_q_min', 1449), ('seqlen_q_multiple', 1)]
// BUNDLE-NEXT: fwd_bf16_d64_none_m128n64w8s2 False [('align_bytes', 16), ('seqlen_k_multiple', 1), ('seqlen_q_multiple', 1)]
// BUNDLE-NEXT: fwd_bf16_d256_none_m128n80w12s2tmapo True [('align_bytes', 16), ('grid_min_blocks_per_sm', 7), ('seqlen_k_min', 2897), ('seqlen_k_multiple', 1), ('seqlen_q_min', 2897), ('seqlen_q_multiple', 1)]
// BUNDLE-NEXT: fwd_bf16_d256_none_m128n64w12s2tmapo True [('align_bytes', 16), ('seqlen_k_multiple', 1), ('seqlen_q_multiple', 1)]
// BUNDLE-NOT:  fwd_

// CHECK: attn.kernels = [{{.*}}entry = "fwd_bf16_d64_none_m128n128w12s4tma"{{.*}}tensor_maps = true{{.*}}entry = "fwd_bf16_d64_none_m128n64w8s2"{{.*}}entry = "fwd_bf16_d256_none_m128n64w12s2tmapo"{{.*}}tensor_maps = true
// CHECK-LABEL: llvm.func @dyn(
// CHECK: llvm.mlir.constant(4096 : index)
// CHECK: llvm.cond_br
// CHECK: llvm.call @cuTensorMapEncodeTiled
// CHECK: gpu.launch_func @fwd_bf16_d64_none_m128n128w12s4tma
// CHECK: gpu.launch_func @fwd_bf16_d64_none_m128n64w8s2
// ONE-NOT: m128n128w12
// ONE: attn.kernels = [{{.*}}entry = "fwd_bf16_d64_none_m128n64w8s2"{{.*}}entry = "fwd_bf16_d256_none_m128n64w12s2tmapo"
// ONE-NOT: m128n128w12
func.func @dyn(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x8x?x64xbf16>,
               %v: tensor<?x8x?x64xbf16>, %o: tensor<?x8x?x64xbf16>)
    -> tensor<?x8x?x64xbf16> {
  %r = attn.attention q(%q : tensor<?x8x?x64xbf16>) k(%k : tensor<?x8x?x64xbf16>)
      v(%v : tensor<?x8x?x64xbf16>) outs(%o : tensor<?x8x?x64xbf16>)
      -> tensor<?x8x?x64xbf16>
  return %r : tensor<?x8x?x64xbf16>
}

// CHECK-LABEL: llvm.func @dyn256(
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.call @cuTensorMapEncodeTiled
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.launch_func @fwd_bf16_d256_none_m128n64w12s2tmapo
// CHECK-NOT: gpu.launch_func
func.func @dyn256(%q: tensor<?x2x?x256xbf16>, %k: tensor<?x2x?x256xbf16>,
                  %v: tensor<?x2x?x256xbf16>, %o: tensor<?x2x?x256xbf16>)
    -> tensor<?x2x?x256xbf16> {
  %r = attn.attention q(%q : tensor<?x2x?x256xbf16>) k(%k : tensor<?x2x?x256xbf16>)
      v(%v : tensor<?x2x?x256xbf16>) outs(%o : tensor<?x2x?x256xbf16>)
      -> tensor<?x2x?x256xbf16>
  return %r : tensor<?x2x?x256xbf16>
}
