// Head dims that are no multiple of the instruction's K or N: D = 40 pads to
// 48 (16-byte rows of 80 bytes), D = 59 to 64 with two-byte loads (its
// 118-byte rows keep only element alignment, whatever the config assumes);
// no spills on CDNA or gfx12, and the matrix instructions are there.
// REQUIRES: rocm-device-libs
// RUN: attn-opt %s -attn-to-rocdl="chip=gfx942 format=bin" | %hsaco-check - --abi attn-fwd-v1 --isa | FileCheck %s --check-prefixes=CHECK,GFX942
// RUN: attn-opt %s -attn-to-rocdl="chip=gfx1201 format=bin" | %hsaco-check - --abi attn-fwd-v1 --isa | FileCheck %s --check-prefixes=CHECK,GFX1201

// GFX942: fwd_bf16_d40_causal_{{[a-z0-9]+}}: chip=gfx942 wave=64 {{.*}} spills=0/0 scratch=0
// GFX942: isa: v_mfma_f32_
// GFX942: fwd_f16_d59_none_{{[a-z0-9]+}}: chip=gfx942 wave=64 {{.*}} spills=0/0 scratch=0
// GFX942: isa: v_mfma_f32_
// GFX1201: fwd_bf16_d40_causal_{{[a-z0-9]+}}: chip=gfx1201 wave=32 {{.*}} spills=0/0 scratch=0
// GFX1201: isa: v_wmma_f32_16x16x16_bf16
// GFX1201: fwd_f16_d59_none_{{[a-z0-9]+}}: chip=gfx1201 wave=32 {{.*}} spills=0/0 scratch=0
// GFX1201: isa: v_wmma_f32_16x16x16_f16
// CHECK: hsaco-check: 2 object(s), all within limits
func.func @d40(%q: memref<?x4x?x40xbf16>) {
  attn.attention q(%q : memref<?x4x?x40xbf16>) k(%q : memref<?x4x?x40xbf16>) v(%q : memref<?x4x?x40xbf16>) outs(%q : memref<?x4x?x40xbf16>) {mask = #attn.mask<causal>}
  return
}
func.func @d59(%q: memref<?x4x?x59xf16>, %o: memref<?x4x?x59xf16>) {
  attn.attention q(%q : memref<?x4x?x59xf16>) k(%q : memref<?x4x?x59xf16>) v(%q : memref<?x4x?x59xf16>) outs(%o : memref<?x4x?x59xf16>)
  return
}
