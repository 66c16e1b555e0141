// Static verification of the AMD forward kernels, for every gfx target: the
// code object holds the chip's matrix instructions, its metadata stays within
// the tile table's limits with zero spills, and the kernel arguments are
// those of attn-fwd-v1 (utils/hsaco-check.py). f16 with D = 64, bf16 with
// D = 128 and a causal mask.
// REQUIRES: rocm-device-libs
// RUN: attn-opt %s -attn-to-rocdl="chip=gfx90a format=bin" | %hsaco-check - --abi attn-fwd-v1 --isa | FileCheck %s --check-prefixes=CHECK,W64,GFX90A
// RUN: attn-opt %s -attn-to-rocdl="chip=gfx942 format=bin" | %hsaco-check - --abi attn-fwd-v1 --isa | FileCheck %s --check-prefixes=CHECK,W64,GFX942
// RUN: attn-opt %s -attn-to-rocdl="chip=gfx950 format=bin" | %hsaco-check - --abi attn-fwd-v1 --isa | FileCheck %s --check-prefixes=CHECK,W64,GFX950
// RUN: attn-opt %s -attn-to-rocdl="chip=gfx1100 format=bin" | %hsaco-check - --abi attn-fwd-v1 --isa | FileCheck %s --check-prefixes=CHECK,W32,GFX1100
// RUN: attn-opt %s -attn-to-rocdl="chip=gfx1201 format=bin" | %hsaco-check - --abi attn-fwd-v1 --isa | FileCheck %s --check-prefixes=CHECK,W32,GFX1201

// W64: fwd_f16_d64_none_m128n64w4s1: chip={{gfx9[0-9a-f]+}} wave=64 {{.*}} spills=0/0 scratch=0 dynamic_lds=
// W32: fwd_f16_d64_none_m64n64w4s1: chip={{gfx1[0-9]+}} wave=32 {{.*}} spills=0/0 scratch=0 dynamic_lds=
// GFX90A: isa: v_mfma_f32_32x32x8f16
// GFX942: isa: v_mfma_f32_32x32x8_f16
// GFX950: isa: v_mfma_f32_32x32x8_f16
// GFX1100: isa: v_wmma_f32_16x16x16_f16
// GFX1201: isa: v_wmma_f32_16x16x16_f16
// CHECK: args: attn-fwd-v1 ok
func.func @f16_d64(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>, %v: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>) v(%v : memref<?x8x?x64xf16>) outs(%o : memref<?x8x?x64xf16>)
  return
}

// W64: fwd_bf16_d128_causal_m128n{{32|64}}w4s1: chip={{gfx9[0-9a-f]+}} wave=64 {{.*}} spills=0/0 scratch=0 dynamic_lds=
// W32: fwd_bf16_d128_causal_m64n64w4s1: chip={{gfx1[0-9]+}} wave=32 {{.*}} spills=0/0 scratch=0 dynamic_lds=
// GFX90A: isa: v_mfma_f32_32x32x8bf16_1k
// GFX942: isa: v_mfma_f32_32x32x8_bf16
// GFX950: isa: v_mfma_f32_32x32x8_bf16
// GFX1100: isa: v_wmma_f32_16x16x16_bf16
// GFX1201: isa: v_wmma_f32_16x16x16_bf16
// CHECK: args: attn-fwd-v1 ok
// CHECK: hsaco-check: 2 object(s), all within limits
func.func @bf16_d128_causal(%q: memref<?x16x?x128xbf16>, %k: memref<?x4x?x128xbf16>, %v: memref<?x4x?x128xbf16>, %o: memref<?x16x?x128xbf16>, %lse: memref<?x16x?xf32>) {
  attn.attention q(%q : memref<?x16x?x128xbf16>) k(%k : memref<?x4x?x128xbf16>) v(%v : memref<?x4x?x128xbf16>) outs(%o : memref<?x16x?x128xbf16>) lse(%lse : memref<?x16x?xf32>) {mask = #attn.mask<causal>}
  return
}
