// attn-to-rocdl{format=isa}: AMDGPU assembly with the chip's matrix
// instructions, and the host side launching the kernel.
// RUN: attn-opt %s -split-input-file -attn-to-rocdl="chip=gfx90a format=isa" | FileCheck %s --check-prefixes=CHECK,GFX90A
// RUN: attn-opt %s -split-input-file -attn-to-rocdl="chip=gfx1100 format=isa" | FileCheck %s --check-prefixes=CHECK,GFX1100

// CHECK-LABEL: llvm.func @fwd
// CHECK: gpu.launch_func @[[K:fwd_f16_d64_causal_[a-z0-9]+]]::@[[K]]
// CHECK: gpu.binary @[[K]] [#gpu.object<#rocdl.target<O = 3, chip = "{{gfx[0-9a-f]+}}"{{.*}}assembly = "
// GFX90A-SAME: .amdgcn_target \22amdgcn-amd-amdhsa--gfx90a
// GFX90A-SAME: v_mfma_f32_32x32x8f16
// GFX90A-SAME: .wavefront_size: 64
// GFX1100-SAME: .amdgcn_target \22amdgcn-amd-amdhsa--gfx1100
// GFX1100-SAME: v_wmma_f32_16x16x16_f16
// GFX1100-SAME: .wavefront_size: 32
func.func @fwd(%q: tensor<2x8x?x64xf16>, %k: tensor<2x8x?x64xf16>, %v: tensor<2x8x?x64xf16>, %o: tensor<2x8x?x64xf16>) -> tensor<2x8x?x64xf16> {
  %r = attn.attention q(%q : tensor<2x8x?x64xf16>) k(%k : tensor<2x8x?x64xf16>) v(%v : tensor<2x8x?x64xf16>)
      outs(%o : tensor<2x8x?x64xf16>) {mask = #attn.mask<causal>} -> tensor<2x8x?x64xf16>
  return %r : tensor<2x8x?x64xf16>
}

// -----

// A bias in q's dtype: one 16-bit global load per score, no spills.
// CHECK-LABEL: llvm.func @fwd_bias
// CHECK: gpu.binary @[[K:fwd_f16_d64_none_bias_[a-z0-9]+]] [#gpu.object<#rocdl.target<O = 3, chip = "{{gfx[0-9a-f]+}}"{{.*}}assembly = "
// CHECK-SAME: global_load_{{ushort|d16_b16}}
// CHECK-SAME: .vgpr_spill_count: 0
func.func @fwd_bias(%q: tensor<2x8x?x64xf16>, %o: tensor<2x8x?x64xf16>, %bias: tensor<1x8x?x?xf16>) -> tensor<2x8x?x64xf16> {
  %r = attn.attention q(%q : tensor<2x8x?x64xf16>) k(%q : tensor<2x8x?x64xf16>) v(%q : tensor<2x8x?x64xf16>)
      bias(%bias : tensor<1x8x?x?xf16>) outs(%o : tensor<2x8x?x64xf16>) -> tensor<2x8x?x64xf16>
  return %r : tensor<2x8x?x64xf16>
}
