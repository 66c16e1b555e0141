// float32 attention through attn-to-rocdl on the tables' fma candidates:
// f32 FMAs on the vector ALUs (gfx942's packed v_pk_fma_f32, no MFMA, no
// XF32), without spills, at D = 64 (fma_m32n32w4) and 256 (fma_m16n16w2,
// within 64 KiB of LDS). Statically checked only: no AMD GPU here.
// RUN: attn-opt %s -split-input-file -attn-to-rocdl="chip=gfx942 format=isa" | FileCheck %s

// CHECK-LABEL: llvm.func @d64
// CHECK: gpu.binary @[[K:fwd_f32_d64_causal_m32n32w4s1]] [#gpu.object<#rocdl.target<O = 3, chip = "gfx942"{{.*}}assembly = "
// CHECK-NOT: v_mfma
// CHECK-SAME: v_pk_fma_f32
// CHECK-SAME: .sgpr_spill_count: 0
// CHECK-SAME: .vgpr_spill_count: 0
func.func @d64(%q: memref<?x8x?x64xf32>, %o: memref<?x8x?x64xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf32>) k(%q : memref<?x8x?x64xf32>) v(%q : memref<?x8x?x64xf32>) outs(%o : memref<?x8x?x64xf32>) {mask = #attn.mask<causal>}
  return
}

// -----

// CHECK-LABEL: llvm.func @d256
// CHECK: gpu.binary @[[K:fwd_f32_d256_none_m16n16w2s1]] [#gpu.object<#rocdl.target<O = 3, chip = "gfx942"{{.*}}assembly = "
// CHECK-SAME: v_pk_fma_f32
// CHECK-SAME: .sgpr_spill_count: 0
// CHECK-SAME: .vgpr_spill_count: 0
func.func @d256(%q: memref<?x8x?x256xf32>, %o: memref<?x8x?x256xf32>) {
  attn.attention q(%q : memref<?x8x?x256xf32>) k(%q : memref<?x8x?x256xf32>) v(%q : memref<?x8x?x256xf32>) outs(%o : memref<?x8x?x256xf32>)
  return
}
