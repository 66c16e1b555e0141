// A kernel for head dims given at run time (a config's max_head_dim): its
// tiles are padded to the bound, D and Dv are two more i32 arguments, and
// its loads are element-wide (any row length); no spills (gfx942).
// REQUIRES: rocm-device-libs
// RUN: attn-opt %s -attn-to-rocdl="chip=gfx942 format=bin" | %hsaco-check - --abi attn-fwd-v1-any-head-dim --isa | FileCheck %s --check-prefixes=CHECK,GFX942
// RUN: attn-opt %s -attn-to-rocdl="chip=gfx942 format=bin" | not %hsaco-check - --abi attn-fwd-v1 2>&1 | FileCheck %s --check-prefix=ABI

// GFX942: fwd_f16_dmax128_causal_m128n32w4s1: chip=gfx942 wave=64 {{.*}} spills=0/0 scratch=0
// GFX942: isa: v_mfma_f32_32x32x8_f16
// GFX942: args: attn-fwd-v1-any-head-dim ok
// CHECK: hsaco-check: 1 object(s), all within limits
// ABI: 35 arguments, attn-fwd-v1 has 33
func.func @any_d(%q: memref<?x4x?x?xf16>, %o: memref<?x4x?x?xf16>) {
  attn.attention q(%q : memref<?x4x?x?xf16>) k(%q : memref<?x4x?x?xf16>) v(%q : memref<?x4x?x?xf16>) outs(%o : memref<?x4x?x?xf16>) {mask = #attn.mask<causal>, config = #attn.config<name = "mfma_d128_m128n32w4", block_m = 128, block_n = 32, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8, max_head_dim = 128>}
  return
}
