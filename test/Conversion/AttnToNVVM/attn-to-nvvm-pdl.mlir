// RUN: attn-opt %s -split-input-file -attn-select-config=target=sm_90a -convert-attn-to-nvvm=chip=sm_90a | FileCheck %s
// RUN: attn-opt %s -split-input-file -attn-select-config=target=sm_80 -convert-attn-to-nvvm=chip=sm_80 | FileCheck %s --check-prefix=SM80

// Split-KV overlaps its two kernels by programmatic dependent launch on
// sm_90a (the tables' griddepcontrol feature): the split kernel lets the
// combine start first thing, the combine waits for the split kernel's
// partials before it reads the workspace (a side-effecting asm, which no
// load is moved above), and the bundle fields say the combine may be
// launched early. sm_80 has none of it.

// CHECK: attn.kernels = [{{{[^}]*}}combine_entry = "[[K:fwd_bf16_d128_none_kvcache_[a-z0-9]+]]_combine", combine_programmatic_launch = true, combine_threads = 256
// CHECK-LABEL: func.func @kvcache
// CHECK: gpu.func @[[K]](
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NOT: griddepcontrol
// CHECK: gpu.func @[[K]]_combine(
// CHECK-NOT: llvm.load
// CHECK: llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK-NOT: griddepcontrol
// CHECK: gpu.return

// SM80: attn.kernels = [{{{[^}]*}}combine_entry = "{{fwd_bf16_d128_none_kvcache_[a-z0-9]+}}_combine", combine_threads = 256
// SM80-NOT: griddepcontrol
func.func @kvcache(%q: memref<?x8x?x128xbf16>, %k: memref<?x2x?x128xbf16>, %v: memref<?x2x?x128xbf16>, %n: memref<?xi32>, %o: memref<?x8x?x128xbf16>) {
  attn.attention q(%q : memref<?x8x?x128xbf16>) k(%k : memref<?x2x?x128xbf16>) v(%v : memref<?x2x?x128xbf16>) seqlens_k(%n : memref<?xi32>) outs(%o : memref<?x8x?x128xbf16>)
  return
}

// -----

// A dense kernel has no kernel after it: no launch_dependents.

// CHECK-NOT: combine_programmatic_launch
// CHECK-LABEL: func.func @dense
// CHECK-NOT: griddepcontrol
// SM80-NOT: griddepcontrol
func.func @dense(%q: memref<1x8x256x128xbf16>, %k: memref<1x2x256x128xbf16>, %v: memref<1x2x256x128xbf16>, %o: memref<1x8x256x128xbf16>) {
  attn.attention q(%q : memref<1x8x256x128xbf16>) k(%k : memref<1x2x256x128xbf16>) v(%v : memref<1x2x256x128xbf16>) outs(%o : memref<1x8x256x128xbf16>)
  return
}
