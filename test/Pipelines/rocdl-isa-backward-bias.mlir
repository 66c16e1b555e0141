// The bias gradient's plan on AMD: five kernels (pre, zero_dbias, main,
// convert_dq, convert_dbias) as AMDGPU assembly, dS added to dbias_accum by
// native global_atomic_add_f32, no spills. Statically checked only.
// RUN: attn-opt %s -attn-to-rocdl="chip=gfx942 format=isa" | FileCheck %s

// CHECK: gpu.binary @[[P:bwd_bf16_d64_causal_bias_dbias_m64n64w4s1]] [#gpu.object<#rocdl.target<O = 3, chip = "gfx942"{{.*}}assembly = "
// CHECK-SAME: [[P]]_main:
// CHECK-SAME: global_atomic_add_f32
// CHECK-SAME: .name: [[P]]_main
// CHECK-SAME: .vgpr_spill_count: 0
// CHECK-SAME: .name: [[P]]_zero_dbias
// CHECK-SAME: .name: [[P]]_dbias
func.func @bg(%q: memref<2x8x?x64xbf16>, %lse: memref<2x8x?xf32>, %bias: memref<1x8x?x?xbf16>, %db: memref<1x8x?x?xbf16>) {
  attn.attention_grad q(%q : memref<2x8x?x64xbf16>) k(%q : memref<2x8x?x64xbf16>) v(%q : memref<2x8x?x64xbf16>) o(%q : memref<2x8x?x64xbf16>) do(%q : memref<2x8x?x64xbf16>) lse(%lse : memref<2x8x?xf32>) bias(%bias : memref<1x8x?x?xbf16>) outs(%q, %q, %q : memref<2x8x?x64xbf16>, memref<2x8x?x64xbf16>, memref<2x8x?x64xbf16>) grad_bias(%db : memref<1x8x?x?xbf16>) {mask = #attn.mask<causal>}
  return
}
