// A deterministic backward plan on AMD: main_q (which also computes
// delta, so there is no pre kernel) and main as AMDGPU assembly on
// 16x16x16 MFMA, no atomic instruction in any of them, no spills.
// Statically checked only.
// RUN: attn-opt %s -attn-to-rocdl="chip=gfx942 format=isa" | FileCheck %s

// CHECK: gpu.binary @[[P:bwd_bf16_d64_causal_det_m64n64w4s1]] [#gpu.object<#rocdl.target<O = 3, chip = "gfx942"{{.*}}assembly = "
// CHECK-NOT: global_atomic
// CHECK-NOT: _pre:
// CHECK-SAME: [[P]]_main_q:
// CHECK-SAME: v_mfma_f32_16x16x16{{_?}}bf16
// CHECK-SAME: .name: [[P]]_main_q
// CHECK-SAME: .vgpr_spill_count: 0
#bwd = #attn.config<name = "bwd_mfma_d64_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.16x16x16, deterministic = true>
func.func @det(%q: memref<2x8x1000x64xbf16>, %lse: memref<2x8x1000xf32>) {
  attn.attention_grad q(%q : memref<2x8x1000x64xbf16>) k(%q : memref<2x8x1000x64xbf16>) v(%q : memref<2x8x1000x64xbf16>) o(%q : memref<2x8x1000x64xbf16>) do(%q : memref<2x8x1000x64xbf16>) lse(%lse : memref<2x8x1000xf32>) outs(%q, %q, %q : memref<2x8x1000x64xbf16>, memref<2x8x1000x64xbf16>, memref<2x8x1000x64xbf16>) {mask = #attn.mask<causal>, config = #bwd}
  return
}
