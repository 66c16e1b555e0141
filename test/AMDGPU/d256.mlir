// D = 256 re-reads Q from LDS each key block instead of holding it in VGPRs;
// still no spills on CDNA and gfx12.
// REQUIRES: rocm-device-libs
// RUN: attn-opt %s -attn-to-rocdl="chip=gfx942 format=bin" | %hsaco-check - --abi attn-fwd-v1 --isa | FileCheck %s --check-prefixes=CHECK,GFX942
// RUN: attn-opt %s -attn-to-rocdl="chip=gfx1201 format=bin" | %hsaco-check - --abi attn-fwd-v1 --isa | FileCheck %s --check-prefixes=CHECK,GFX1201

// GFX942: fwd_f16_d256_causal_m32n32w1s1: chip=gfx942 wave=64 {{.*}} spills=0/0 scratch=0
// GFX942: isa: v_mfma_f32_32x32x8_f16 x64
// GFX1201: fwd_f16_d256_causal_m32n32w2s1: chip=gfx1201 wave=32 {{.*}} spills=0/0 scratch=0
// GFX1201: isa: v_wmma_f32_16x16x16_f16 x64
// CHECK: hsaco-check: 1 object(s), all within limits
func.func @f16_d256(%q: memref<?x4x?x256xf16>, %k: memref<?x4x?x256xf16>, %v: memref<?x4x?x256xf16>, %o: memref<?x4x?x256xf16>) {
  attn.attention q(%q : memref<?x4x?x256xf16>) k(%k : memref<?x4x?x256xf16>) v(%v : memref<?x4x?x256xf16>) outs(%o : memref<?x4x?x256xf16>) {mask = #attn.mask<causal>}
  return
}
