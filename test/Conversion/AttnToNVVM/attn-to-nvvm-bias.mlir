// RUN: attn-opt %s -split-input-file --convert-attn-to-nvvm=chip=sm_90a | FileCheck %s

// A bias in q's dtype: the kernel reads one element per score (alignment 2,
// hence bias_align_bytes = 2) and adds it in the exp2 domain. Size-1 bias
// dimensions get stride 0; dynamic ones get 0 when they are 1 at run time.

#cfg = #attn.config<name = "sm80_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>

// CHECK: module attributes {attn.kernels = [{align_bytes = 16 : i64, bias = "same", bias_align_bytes = 2 : i64,
// CHECK-SAME: entry = "fwd_bf16_d64_none_bias_m64n64w4s2"

// CHECK-LABEL: func.func @bias_same
// CHECK-SAME: %[[BIAS:[a-z0-9]+]]: memref<?x1x?x?xbf16>
// CHECK: memref.extract_aligned_pointer_as_index %[[BIAS]]
// CHECK: %[[BPTR:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<1>
// CHECK: memref.extract_strided_metadata %[[BIAS]]
// CHECK: %[[B0:.*]] = memref.dim %[[BIAS]], %c0
// CHECK: %[[ONE0:.*]] = arith.cmpi eq, %[[B0]], %c1
// CHECK: %[[SB:.*]] = arith.select %[[ONE0]], %{{.*}}, %{{.*}} : i64
// CHECK: %[[SQ:.*]] = arith.select
// CHECK: %[[SK:.*]] = arith.select
// CHECK: gpu.launch_func @fwd_bf16_d64_none_bias_m64n64w4s2::@fwd_bf16_d64_none_bias_m64n64w4s2
// CHECK-SAME: args(%{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %[[BPTR]] : !llvm.ptr<1>,
// CHECK-SAME: %[[SB]] : i64, %c0_i64{{.*}} : i64, %[[SQ]] : i64, %[[SK]] : i64, %{{.*}} : f32

// CHECK: gpu.func @fwd_bf16_d64_none_bias_m64n64w4s2
// CHECK: scf.for
// CHECK: nvvm.mma.sync
// CHECK: %[[X:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> bf16
// CHECK: %[[XF:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK: %[[XL:.*]] = arith.mulf %[[XF]], %{{.*}} : f32
// CHECK: math.fma %{{.*}}, %{{.*}}, %[[XL]] : f32
// CHECK: arith.maxnumf
func.func @bias_same(%q: memref<?x8x?x64xbf16>, %k: memref<?x8x?x64xbf16>, %o: memref<?x8x?x64xbf16>, %bias: memref<?x1x?x?xbf16>) {
  attn.attention q(%q : memref<?x8x?x64xbf16>) k(%k : memref<?x8x?x64xbf16>) v(%k : memref<?x8x?x64xbf16>) bias(%bias : memref<?x1x?x?xbf16>) outs(%o : memref<?x8x?x64xbf16>) {config = #cfg}
  return
}

// -----

// An f32 bias on a wgmma tile, broadcast over batch and query rows.

#cfg = #attn.config<name = "wgmma_d64_m128n64w8", block_m = 128, block_n = 64, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>

// CHECK: module attributes {attn.kernels = [{align_bytes = 16 : i64, bias = "f32", bias_align_bytes = 4 : i64,
// CHECK-SAME: entry = "fwd_f16_d64_causal_biasf32_m128n64w8s2"
// CHECK-LABEL: func.func @bias_f32
// CHECK: gpu.launch_func @fwd_f16_d64_causal_biasf32_m128n64w8s2::@fwd_f16_d64_causal_biasf32_m128n64w8s2
// CHECK-SAME: %c0_i64{{.*}} : i64, %{{.*}} : i64, %c0_i64{{.*}} : i64, %{{.*}} : i64, %{{.*}} : f32
// CHECK: gpu.func @fwd_f16_d64_causal_biasf32_m128n64w8s2
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK-NOT: arith.extf %{{.*}} : f32
// CHECK: math.fma
func.func @bias_f32(%q: memref<1x4x300x64xf16>, %o: memref<1x4x300x64xf16>, %bias: memref<1x4x1x300xf32>) {
  attn.attention q(%q : memref<1x4x300x64xf16>) k(%q : memref<1x4x300x64xf16>) v(%q : memref<1x4x300x64xf16>) bias(%bias : memref<1x4x1x300xf32>) outs(%o : memref<1x4x300x64xf16>) {mask = #attn.mask<causal>, config = #cfg}
  return
}

// -----

// With a softcap the bias is added to the capped score, as the op defines:
// tanh first, then the bias's fma (and tScale = 1 after it).

#cfg = #attn.config<name = "sm80_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>

// CHECK-LABEL: func.func @bias_softcap
// CHECK: gpu.func @fwd_f16_d64_none_softcap_bias_m64n64w4s2
// CHECK: nvvm.mma.sync
// CHECK: %[[T:.*]] = math.tanh
// CHECK: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> f16
// CHECK: math.fma %[[T]], %{{.*}}, %{{.*}} : f32
func.func @bias_softcap(%q: memref<1x2x100x64xf16>, %o: memref<1x2x100x64xf16>, %bias: memref<1x1x100x100xf16>) {
  attn.attention q(%q : memref<1x2x100x64xf16>) k(%q : memref<1x2x100x64xf16>) v(%q : memref<1x2x100x64xf16>) bias(%bias : memref<1x1x100x100xf16>) outs(%o : memref<1x2x100x64xf16>) {softcap = 30.0 : f32, config = #cfg}
  return
}
