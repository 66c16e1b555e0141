// attn-to-rocdl{format=isa} on attn.attention_grad: the backward plan's three
// kernels (pre, main, convert_dq) as AMDGPU assembly, the main one on
// 16x16x16 MFMA with the tables' backward tile, dQ added to the f32
// workspace by CDNA's native global_atomic_add_f32 (the atomicrmw fadd says
// the workspace is coarse-grained local memory; without that LLVM emits
// compare-and-swap loops), no VGPR spills. Statically checked only: no AMD
// GPU runs these kernels here.
// RUN: attn-opt %s -split-input-file -attn-to-rocdl="chip=gfx942 format=isa" | FileCheck %s
// RUN: attn-opt %s -split-input-file -attn-to-rocdl="chip=gfx90a format=isa" | FileCheck %s

// CHECK-LABEL: llvm.func @grad64
// CHECK: gpu.launch_func @[[P:bwd_bf16_d64_causal_m64n64w4s1]]::@[[P]]_pre
// CHECK: gpu.launch_func @[[P]]::@[[P]]_main
// CHECK: gpu.launch_func @[[P]]::@[[P]]_dq
// CHECK: gpu.binary @[[P]] [#gpu.object<#rocdl.target<O = 3, chip = "{{gfx9[0-9a-f]+}}"{{.*}}assembly = "
// CHECK-SAME: [[P]]_main:
// CHECK-SAME: v_mfma_f32_16x16x16{{_?}}bf16
// CHECK-SAME: global_atomic_add_f32
// CHECK-NOT: global_atomic_cmpswap
// CHECK-SAME: .name: [[P]]_main
// CHECK-SAME: .vgpr_spill_count: 0
func.func @grad64(%q: tensor<2x8x?x64xbf16>, %k: tensor<2x2x?x64xbf16>, %lse: tensor<2x8x?xf32>) -> (tensor<2x8x?x64xbf16>, tensor<2x2x?x64xbf16>, tensor<2x2x?x64xbf16>) {
  %r:3 = attn.attention_grad q(%q : tensor<2x8x?x64xbf16>) k(%k : tensor<2x2x?x64xbf16>) v(%k : tensor<2x2x?x64xbf16>) o(%q : tensor<2x8x?x64xbf16>) do(%q : tensor<2x8x?x64xbf16>) lse(%lse : tensor<2x8x?xf32>) outs(%q, %k, %k : tensor<2x8x?x64xbf16>, tensor<2x2x?x64xbf16>, tensor<2x2x?x64xbf16>) {mask = #attn.mask<causal>} -> tensor<2x8x?x64xbf16>, tensor<2x2x?x64xbf16>, tensor<2x2x?x64xbf16>
  return %r#0, %r#1, %r#2 : tensor<2x8x?x64xbf16>, tensor<2x2x?x64xbf16>, tensor<2x2x?x64xbf16>
}

// -----

// D = 128 takes query blocks of 32 to fit 64 KiB of LDS.

// CHECK-LABEL: llvm.func @grad128
// CHECK: gpu.binary @[[P:bwd_f16_d128_none_m32n64w4s1]] [#gpu.object<
// CHECK-SAME: v_mfma_f32_16x16x16{{_?}}f16
// CHECK-SAME: .group_segment_fixed_size: 0
// CHECK-SAME: .name: [[P]]_main
// CHECK-SAME: .vgpr_spill_count: 0
func.func @grad128(%q: tensor<1x4x?x128xf16>, %lse: tensor<1x4x?xf32>) -> (tensor<1x4x?x128xf16>, tensor<1x4x?x128xf16>, tensor<1x4x?x128xf16>) {
  %r:3 = attn.attention_grad q(%q : tensor<1x4x?x128xf16>) k(%q : tensor<1x4x?x128xf16>) v(%q : tensor<1x4x?x128xf16>) o(%q : tensor<1x4x?x128xf16>) do(%q : tensor<1x4x?x128xf16>) lse(%lse : tensor<1x4x?xf32>) outs(%q, %q, %q : tensor<1x4x?x128xf16>, tensor<1x4x?x128xf16>, tensor<1x4x?x128xf16>) -> tensor<1x4x?x128xf16>, tensor<1x4x?x128xf16>, tensor<1x4x?x128xf16>
  return %r#0, %r#1, %r#2 : tensor<1x4x?x128xf16>, tensor<1x4x?x128xf16>, tensor<1x4x?x128xf16>
}
