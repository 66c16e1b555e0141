// RUN: attn-opt %s --convert-attn-to-nvvm=chip=sm_90a | FileCheck %s

// Where a persistent tma_ws tile's computing warpgroups give Q's buffer
// back: in the key loop, after the tile's last S = Q K^T completed and
// before its softmax (ForwardKernelEmitter::releaseQueryAfter), so that the
// producer loads the next tile's Q while the last block's softmax, P V and
// the outputs run. After the loop it would cost D = 128 causal tiles 1-4%
// (bench/RESULTS.md), and nothing else would notice.

// CHECK-LABEL: gpu.func @fwd_bf16_d128_none_m128n128w12s3tmap
// CHECK: nvvm.setmaxregister increase 240
// The key loop (the tile loop before it carries one i32).
// CHECK: scf.for %[[J:arg[0-9]+]] = %{{[^ ]+}} to %[[JHI:[^ ]+]] step %{{[^ ]+}} iter_args({{.*}}) -> (f32
// CHECK: wgmma.wait_group.sync.aligned 0
// CHECK-NOT: llvm.nvvm.ex2
// The previous block's stage goes back to the producer...
// CHECK: arith.cmpi ugt, %[[J]]
// CHECK-NEXT: scf.if
// CHECK: nvvm.mbarrier.arrive
// ...and, at the tile's last block, Q's buffer.
// CHECK: %[[LAST:.*]] = arith.subi %[[JHI]], %{{.*}} : i32
// CHECK-NEXT: %[[IS_LAST:.*]] = arith.cmpi eq, %[[J]], %[[LAST]] : i32
// CHECK-NEXT: scf.if %[[IS_LAST]] {
// CHECK-NOT: }
// CHECK: nvvm.mbarrier.arrive
// CHECK-NEXT: }
// CHECK: llvm.nvvm.ex2.approx

#cfg = #attn.config<name = "tma_d128_m128n128w12s3", block_m = 128, block_n = 128, warps = 12, stages = 3, pipeline = tma_ws, acc_in_registers = true, mma = wgmma.m64nNk16, persistent = true>
func.func @d128(%q: memref<?x16x?x128xbf16>, %k: memref<?x4x?x128xbf16>, %o: memref<?x16x?x128xbf16>, %lse: memref<?x16x?xf32>) {
  attn.attention q(%q : memref<?x16x?x128xbf16>) k(%k : memref<?x4x?x128xbf16>) v(%k : memref<?x4x?x128xbf16>) outs(%o : memref<?x16x?x128xbf16>) lse(%lse : memref<?x16x?xf32>) {config = #cfg}
  return
}
