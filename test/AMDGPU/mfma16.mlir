// The 16x16x16 MFMA variant (4 lanes per query row), forced, through hsaco.
// REQUIRES: rocm-device-libs
// RUN: attn-opt %s -attn-select-config="target=gfx942 force=mfma16_d128_m64n64w4" -attn-to-rocdl="chip=gfx942 format=bin" | %hsaco-check - --abi attn-fwd-v1 --isa | FileCheck %s

// CHECK: fwd_f16_d128_causal_bottom_right_m64n64w4s1: chip=gfx942 wave=64 {{.*}} spills=0/0 scratch=0 dynamic_lds=
// CHECK: isa: v_mfma_f32_16x16x16_f16 x64
// CHECK: args: attn-fwd-v1 ok
// CHECK: hsaco-check: 1 object(s), all within limits
func.func @f16_d128(%q: memref<?x8x?x128xf16>, %k: memref<?x8x?x128xf16>, %v: memref<?x8x?x128xf16>, %o: memref<?x8x?x128xf16>) {
  attn.attention q(%q : memref<?x8x?x128xf16>) k(%k : memref<?x8x?x128xf16>) v(%v : memref<?x8x?x128xf16>) outs(%o : memref<?x8x?x128xf16>) {mask = #attn.mask<causal_bottom_right>}
  return
}
