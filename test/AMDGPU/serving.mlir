// The serving forms' kernels for AMD: a packed batch and a paged KV cache
// compile for CDNA and RDNA without spills, with attn-fwd-v1's arguments
// plus the seven serving ones (utils/hsaco-check.py).
// REQUIRES: rocm-device-libs
// RUN: attn-opt %s -attn-to-rocdl="chip=gfx942 format=bin" | %hsaco-check - --abi attn-fwd-v1-serving --isa | FileCheck %s --check-prefixes=CHECK,GFX942
// RUN: attn-opt %s -attn-to-rocdl="chip=gfx1201 format=bin" | %hsaco-check - --abi attn-fwd-v1-serving --isa | FileCheck %s --check-prefixes=CHECK,GFX1201

// CHECK: fwd_bf16_d128_causal_varlen_{{.*}}: chip={{gfx[0-9a-f]+}} {{.*}} spills=0/0 scratch=0 dynamic_lds=
// GFX942: isa: v_mfma_f32_32x32x8_bf16
// GFX1201: isa: v_wmma_f32_16x16x16_bf16
// CHECK: args: attn-fwd-v1-serving ok
func.func @varlen(%q: memref<1x8x?x128xbf16>, %k: memref<1x2x?x128xbf16>, %v: memref<1x2x?x128xbf16>, %cq: memref<?xi32>, %ck: memref<?xi32>, %o: memref<1x8x?x128xbf16>, %l: memref<1x8x?xf32>) {
  attn.attention q(%q : memref<1x8x?x128xbf16>) k(%k : memref<1x2x?x128xbf16>) v(%v : memref<1x2x?x128xbf16>) cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>) outs(%o : memref<1x8x?x128xbf16>) lse(%l : memref<1x8x?xf32>) {mask = #attn.mask<causal>}
  return
}

// CHECK: fwd_f16_d64_none_paged_{{.*}}: chip={{gfx[0-9a-f]+}} {{.*}} spills=0/0 scratch=0 dynamic_lds=
// The split-KV combine: no dynamic LDS, its own static buffer (16 phases x
// (64 sums + max + weight sum) floats).
// CHECK-NEXT: fwd_f16_d64_none_paged_{{.*}}_combine: chip={{gfx[0-9a-f]+}} {{.*}} lds=4224 spills=0/0 scratch=0
// CHECK: args: attn-fwd-v1-serving ok
// CHECK: hsaco-check: 2 object(s), all within limits
func.func @paged(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %n: memref<?xi32>, %t: memref<?x?xi32>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>) v(%v : memref<?x2x?x64xf16>) seqlens_k(%n : memref<?xi32>) block_table(%t : memref<?x?xi32>) outs(%o : memref<?x8x?x64xf16>)
  return
}
