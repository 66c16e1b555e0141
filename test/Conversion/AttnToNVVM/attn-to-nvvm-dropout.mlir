// RUN: attn-opt %s -split-input-file --convert-attn-to-nvvm=chip=sm_90a | FileCheck %s

// Dropout: the kernel's metadata says so (the runtime passes five more
// arguments), and the launch passes D, Dv, then the op's p, seed and
// offset as arguments 33-37.

#cfg = #attn.config<name = "sm80_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>

// CHECK: module attributes {attn.kernels = [{{{.*}}dropout = true{{.*}}entry = "fwd_bf16_d64_none_dropout_m64n64w4s2"

// CHECK-LABEL: func.func @fwd
// CHECK-SAME: %[[P:[a-z0-9]+]]: f32, %[[S:[a-z0-9]+]]: i64, %[[OFF:[a-z0-9]+]]: i32
// CHECK: gpu.launch_func @fwd_bf16_d64_none_dropout_m64n64w4s2::@fwd_bf16_d64_none_dropout_m64n64w4s2
// CHECK-SAME: %{{.*}} : i32, %{{.*}} : i32, %[[P]] : f32, %[[S]] : i64, %[[OFF]] : i32)
// CHECK: gpu.func @fwd_bf16_d64_none_dropout_m64n64w4s2(
// CHECK-SAME: %arg35: f32, %arg36: i64, %arg37: i32)
// CHECK-COUNT-10: arith.mului_extended
func.func @fwd(%q: memref<?x8x?x64xbf16>, %p: f32, %s: i64, %off: i32, %o: memref<?x8x?x64xbf16>) {
  attn.attention q(%q : memref<?x8x?x64xbf16>) k(%q : memref<?x8x?x64xbf16>) v(%q : memref<?x8x?x64xbf16>) dropout(%p, %s, %off) outs(%o : memref<?x8x?x64xbf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "sm80_bwd_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>

// The backward plan's stages each take the three after attn-bwd-v1's 55.
// CHECK-LABEL: func.func @bwd
// CHECK-SAME: %[[P:[a-z0-9]+]]: f32, %[[S:[a-z0-9]+]]: i64, %[[OFF:[a-z0-9]+]]: i32
// CHECK-COUNT-3: gpu.launch_func {{.*}}, %[[P]] : f32, %[[S]] : i64, %[[OFF]] : i32)
// CHECK: gpu.func @bwd_bf16_d64_causal_dropout_m64n64w4s2_pre(
// CHECK-SAME: %arg55: f32, %arg56: i64, %arg57: i32)
func.func @bwd(%q: memref<2x8x1000x64xbf16>, %lse: memref<2x8x1000xf32>, %p: f32, %s: i64, %off: i32) {
  attn.attention_grad q(%q : memref<2x8x1000x64xbf16>) k(%q : memref<2x8x1000x64xbf16>) v(%q : memref<2x8x1000x64xbf16>) o(%q : memref<2x8x1000x64xbf16>) do(%q : memref<2x8x1000x64xbf16>) lse(%lse : memref<2x8x1000xf32>) dropout(%p, %s, %off) outs(%q, %q, %q : memref<2x8x1000x64xbf16>, memref<2x8x1000x64xbf16>, memref<2x8x1000x64xbf16>) {mask = #attn.mask<causal>, config = #cfg}
  return
}
