// RUN: attn-opt %s -attn-select-config=target=gfx942 -convert-attn-to-rocdl=chip=gfx942 | FileCheck %s

// AMD has no programmatic dependent launch: the split-KV combine is
// launched after the split kernel completes, and neither kernel says
// otherwise (test/Conversion/AttnToNVVM/attn-to-nvvm-pdl.mlir for sm_90a).

// CHECK: attn.kernels = [{{{[^}]*}}combine_entry = "{{fwd_bf16_d128_none_kvcache_[a-z0-9]+}}_combine", combine_threads = 256
// CHECK-LABEL: func.func @kvcache
// CHECK: gpu.func @{{.*}}_combine(
// CHECK-NOT: griddepcontrol
// CHECK: gpu.return
func.func @kvcache(%q: memref<?x8x?x128xbf16>, %k: memref<?x2x?x128xbf16>, %v: memref<?x2x?x128xbf16>, %n: memref<?xi32>, %o: memref<?x8x?x128xbf16>) {
  attn.attention q(%q : memref<?x8x?x128xbf16>) k(%k : memref<?x2x?x128xbf16>) v(%v : memref<?x2x?x128xbf16>) seqlens_k(%n : memref<?xi32>) outs(%o : memref<?x8x?x128xbf16>)
  return
}
