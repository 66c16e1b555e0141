// RUN: attn-opt %s --convert-attn-to-nvvm=chip=sm_90a | FileCheck %s

// A tma_ws config (ABI attn-fwd-v2): the kernel takes the tensor maps of q,
// k and v by value after the 33 arguments of attn-fwd-v1 and gives their
// stack slots to TMA; one producer thread expects the tile bytes on the
// stage's mbarrier and issues 64-column boxes. The launch from IR encodes
// the maps on the host with the driver's cuTensorMapEncodeTiled (bf16 = 9,
// rank 4, 128-byte swizzle = 3, L2 promotion 128B = 2) and stops with a
// message when that fails. The bundle metadata says tensor_maps.

// CHECK: attn.kernels = [{{{.*}}block_n = 128 : i64{{.*}}tensor_maps = true
// CHECK: llvm.func @cuTensorMapEncodeTiled(!llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, i32, i32) -> i32
// CHECK-LABEL: func.func @d128_gqa
// CHECK-COUNT-3: llvm.call @cuTensorMapEncodeTiled(%{{.*}}, %c9_i32{{.*}}, %c4_i32{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i32{{.*}}, %c3_i32{{.*}}, %c2_i32{{.*}}, %c0_i32{{.*}})
// CHECK: cf.assert %{{.*}}, "cuTensorMapEncodeTiled failed
// CHECK: gpu.launch_func @fwd_bf16_d128_causal_m128n128w12s3tma::@fwd_bf16_d128_causal_m128n128w12s3tma
// CHECK-SAME: %{{.*}} : i32, %{{.*}} : i32, %[[QM:.*]] : !llvm.array<16 x i64>, %[[KM:.*]] : !llvm.array<16 x i64>, %[[VM:.*]] : !llvm.array<16 x i64>)
// CHECK: gpu.func @fwd_bf16_d128_causal_m128n128w12s3tma(
// CHECK-SAME: %arg32: i32, %[[Q:.*]]: !llvm.array<16 x i64>, %[[K:.*]]: !llvm.array<16 x i64>, %[[V:.*]]: !llvm.array<16 x i64>) kernel
// CHECK: %[[QS:.*]] = llvm.alloca {{.*}} x !llvm.array<16 x i64> {alignment = 64 : i64}
// CHECK: llvm.store %[[Q]], %[[QS]]
// CHECK: %[[KS:.*]] = llvm.alloca
// CHECK: llvm.store %[[K]], %[[KS]]
// CHECK: %[[VS:.*]] = llvm.alloca
// CHECK: llvm.store %[[V]], %[[VS]]
// Q's two boxes, then K's and V's, all on the stage's `full` barrier.
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[QS]], %[[FULL:.*]], box[%c0_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[QS]], %[[FULL]], box[%c64_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KS]], %{{.*}}, box[%c0_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KS]], %{{.*}}, box[%c64_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VS]], %{{.*}}, box[%c0_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VS]], %{{.*}}, box[%c64_i32
// CHECK-NOT: nvvm.cp.async.shared.global

#cfg = #attn.config<name = "tma_d128_m128n128w12s3", block_m = 128, block_n = 128, warps = 12, stages = 3, pipeline = tma_ws, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @d128_gqa(%q: memref<?x16x?x128xbf16>, %k: memref<?x4x?x128xbf16>, %o: memref<?x16x?x128xbf16>) {
  attn.attention q(%q : memref<?x16x?x128xbf16>) k(%k : memref<?x4x?x128xbf16>) v(%k : memref<?x4x?x128xbf16>) outs(%o : memref<?x16x?x128xbf16>) {mask = #attn.mask<causal>, config = #cfg}
  return
}
