// Dropout kernels (forward and the backward plan) as AMDGPU assembly:
// Philox4x32-10's 32 x 32 -> 64-bit products on the vector ALU, no spills. The MFMA
// layouts hold no four probabilities of one counter, so each element runs
// its own generator call (a cost NVIDIA's layouts avoid). Statically
// checked only: no AMD GPU runs these kernels here.
// RUN: attn-opt %s -split-input-file -attn-to-rocdl="chip=gfx942 format=isa" | FileCheck %s

// CHECK-LABEL: llvm.func @fwd
// CHECK: gpu.launch_func @[[K:fwd_bf16_d64_causal_dropout_m[0-9a-z]+]]::@[[K]]
// CHECK: gpu.binary @[[K]] [#gpu.object<#rocdl.target<O = 3, chip = "gfx942"{{.*}}assembly = "
// CHECK-SAME: {{v_mul_hi_u32|v_mad_u64_u32}}
// CHECK-SAME: .sgpr_spill_count: 0
// CHECK-SAME: .vgpr_spill_count: 0
func.func @fwd(%q: memref<?x16x?x64xbf16>, %p: f32, %s: i64, %off: i32, %o: memref<?x16x?x64xbf16>) {
  attn.attention q(%q : memref<?x16x?x64xbf16>) k(%q : memref<?x16x?x64xbf16>) v(%q : memref<?x16x?x64xbf16>) dropout(%p, %s, %off) outs(%o : memref<?x16x?x64xbf16>) {mask = #attn.mask<causal>}
  return
}

// -----

// CHECK-LABEL: llvm.func @bwd
// CHECK: gpu.launch_func @[[P:bwd_bf16_d64_causal_dropout_m[0-9a-z]+]]::@[[P]]_main
// CHECK: gpu.binary @[[P]] [#gpu.object<#rocdl.target<O = 3, chip = "gfx942"{{.*}}assembly = "
// CHECK-SAME: [[P]]_main:
// CHECK-SAME: {{v_mul_hi_u32|v_mad_u64_u32}}
// CHECK-SAME: .name: [[P]]_main
// CHECK-SAME: .vgpr_spill_count: 0
func.func @bwd(%q: memref<2x8x1000x64xbf16>, %lse: memref<2x8x1000xf32>, %p: f32, %s: i64, %off: i32) {
  attn.attention_grad q(%q : memref<2x8x1000x64xbf16>) k(%q : memref<2x8x1000x64xbf16>) v(%q : memref<2x8x1000x64xbf16>) o(%q : memref<2x8x1000x64xbf16>) do(%q : memref<2x8x1000x64xbf16>) lse(%lse : memref<2x8x1000xf32>) dropout(%p, %s, %off) outs(%q, %q, %q : memref<2x8x1000x64xbf16>, memref<2x8x1000x64xbf16>, memref<2x8x1000x64xbf16>) {mask = #attn.mask<causal>}
  return
}
