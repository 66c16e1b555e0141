// RUN: attn-opt %s --convert-attn-to-nvvm=chip=sm_90a | FileCheck %s

// overlap_softmax changes the kernel, so its name says so ("o" after the
// copy engine's suffix): two ops whose configs differ only there get a
// kernel each instead of sharing the first one's. The overlapped kernel
// has K's and V's mbarriers apart: four a stage.

// CHECK-LABEL: func.func @both
// CHECK: gpu.launch_func @fwd_bf16_d256_none_m128n80w12s2tma::@fwd_bf16_d256_none_m128n80w12s2tma
// CHECK: gpu.launch_func @fwd_bf16_d256_none_m128n80w12s2tmao::@fwd_bf16_d256_none_m128n80w12s2tmao
// CHECK-LABEL: gpu.module @fwd_bf16_d256_none_m128n80w12s2tma [
// CHECK-COUNT-4: nvvm.mbarrier.init
// CHECK-NOT: nvvm.mbarrier.init
// CHECK-LABEL: gpu.module @fwd_bf16_d256_none_m128n80w12s2tmao [
// CHECK-COUNT-8: nvvm.mbarrier.init
// CHECK-NOT: nvvm.mbarrier.init

func.func @both(%q: memref<?x8x?x256xbf16>, %o: memref<?x8x?x256xbf16>, %o2: memref<?x8x?x256xbf16>) {
  attn.attention q(%q : memref<?x8x?x256xbf16>) k(%q : memref<?x8x?x256xbf16>) v(%q : memref<?x8x?x256xbf16>) outs(%o : memref<?x8x?x256xbf16>) {config = #attn.config<name = "tma_d256_m128n80w12", block_m = 128, block_n = 80, warps = 12, stages = 2, pipeline = tma_ws, acc_in_registers = true, mma = wgmma.m64nNk16>}
  attn.attention q(%q : memref<?x8x?x256xbf16>) k(%q : memref<?x8x?x256xbf16>) v(%q : memref<?x8x?x256xbf16>) outs(%o2 : memref<?x8x?x256xbf16>) {config = #attn.config<name = "tma_d256_m128n80w12", block_m = 128, block_n = 80, warps = 12, stages = 2, pipeline = tma_ws, acc_in_registers = true, mma = wgmma.m64nNk16, overlap_softmax = true>}
  return
}
