// The backward's producer warpgroup (pipeline cp_async_ws, the tables'
// bwd_wgmma_d128_m64n128w12, named here): every thread copies K and V, the
// ring's mbarriers are set up, and after the one workgroup-wide barrier
// warpgroup 0 gives up registers and copies each query block's Q, dO, lse
// and delta (waiting on `empty`, arriving on `full`), while the two
// computing warpgroups take 240 registers, wait on `full`, meet at their
// own named barrier (3, 256 threads) once dS is in shared memory, add
// their dQ chunk to dq_accum's blocks by one 16 KB bulk reduction each and
// release the buffer on `empty`.
// REQUIRES: ptxas
// RUN: attn-opt %s --attn-to-nvvm="chip=sm_90a format=isa select-config=false" \
// RUN:   | sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.ptx -o %t.cubin > %t.log 2>&1
// RUN: FileCheck %s --check-prefix=REGS < %t.log
// No chain serialized (C7513-C7515).
// RUN: not grep -E "C751[345]" %t.log
// RUN: %wgmma-check %t.ptx | FileCheck %s --check-prefix=ASYNC

// CHECK-LABEL: .entry bwd_bf16_d128_none_m64n128w12s2ws_main(
// CHECK-COUNT-4: mbarrier.init.shared.b64
// CHECK: bar.sync 0;
// CHECK-NOT: bar.sync 0;
// CHECK: setmaxnreg.dec.sync.aligned.u32 24;
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK: cp.async.cg.shared.global
// CHECK: cp.async.wait_group 0;
// CHECK: fence.proxy.async.shared::cta;
// CHECK: mbarrier.arrive.shared.b64
// CHECK: setmaxnreg.inc.sync.aligned.u32 240;
// CHECK-NOT: cp.async.cg.shared.global
// CHECK: wgmma.mma_async
// CHECK: cp.async.bulk.wait_group.read 0;
// CHECK-NEXT: bar.sync 3, 256;
// CHECK: bar.sync %r{{[0-9]+}}, 128;
// CHECK-NOT: bra
// CHECK: @p cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd{{[0-9]+}}], [%r{{[0-9]+}}], 16384;
// CHECK: cp.async.bulk.commit_group;
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK-NEXT: // end inline asm
// CHECK-NEXT: mbarrier.arrive.shared.b64
// The loop's wait on `full` (rotated to its end).
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK-NOT: bar.sync 0;
// CHECK: cp.async.bulk.wait_group 0;
// CHECK-LABEL: .entry bwd_bf16_d128_none_m64n128w12s2ws_dq(

// 168 registers at launch (384 threads); a few bytes spilled in the
// computing warpgroups (36-84 as the code moved).
// REGS: Function properties for bwd_bf16_d128_none_m64n128w12s2ws_main
// REGS-NEXT: {{[0-9]+}} bytes stack frame, {{[0-9]?[0-9]?[0-9]}} bytes spill stores
// REGS: Used 168 registers
// ASYNC: bwd_bf16_d128_none_m64n128w12s2ws_main: {{[0-9]+}} async wgmma chains, no hazard

#w12 = #attn.config<name = "bwd_wgmma_d128_m64n128w12", block_m = 64, block_n = 128, warps = 12, stages = 2, pipeline = cp_async_ws, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @w12(%q: memref<?x16x?x128xbf16>, %k: memref<?x16x?x128xbf16>, %lse: memref<?x16x?xf32>, %dq: memref<?x16x?x128xbf16>, %dk: memref<?x16x?x128xbf16>, %dv: memref<?x16x?x128xbf16>) {
  attn.attention_grad q(%q : memref<?x16x?x128xbf16>) k(%k : memref<?x16x?x128xbf16>) v(%k : memref<?x16x?x128xbf16>) o(%q : memref<?x16x?x128xbf16>) do(%q : memref<?x16x?x128xbf16>) lse(%lse : memref<?x16x?xf32>) outs(%dq, %dk, %dv : memref<?x16x?x128xbf16>, memref<?x16x?x128xbf16>, memref<?x16x?x128xbf16>) {config = #w12}
  return
}
