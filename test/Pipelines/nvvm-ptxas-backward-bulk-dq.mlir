// A backward plan with atomics on two warpgroups (the tables' sweep tile
// bwd_wgmma_d128_m64n128w8, named here): dS goes to shared memory in the
// 128-byte swizzle and is dQ = dS K's A operand through a descriptor
// (imm-trans-a 0, V-like K: imm-trans-b 1); each warpgroup stages its 64
// columns of dQ in shared memory and adds them to dq_accum by bulk
// reductions (cp.reduce.async.bulk, FlashAttention-3's way), after a proxy
// fence and its own named barrier; the staging area is reused once the
// reductions have read it, and the kernel ends when they completed. dQ's
// product is issued before dK's and staged while dK's runs. At D = 128
// dq_accum is in blocks of 64 rows (usesBlockedDqAccum): one 16 KB
// reduction a warpgroup from the unit staged in dq_accum's own layout
// (D = 96, no whole 64-column chunks: nvvm-ptxas-backward-bulk-dq-rows.mlir).
// REQUIRES: ptxas
// RUN: attn-opt %s --attn-to-nvvm="chip=sm_90a format=isa select-config=false" \
// RUN:   | sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.ptx
// RUN: FileCheck %s < %t.ptx
// Each issuing thread closes its bulk group (LLVM may sink the commit).
// RUN: grep -q "cp.async.bulk.commit_group" %t.ptx
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.ptx -o %t.cubin > %t.log 2>&1
// RUN: FileCheck %s --check-prefix=REGS < %t.log
// No chain serialized (C7513-C7515: a branch, a register write or a spilled
// accumulator between a product and its wait).
// RUN: not grep -E "C751[345]" %t.log
// RUN: %wgmma-check %t.ptx | FileCheck %s --check-prefix=ASYNC

// CHECK-LABEL: .entry bwd_bf16_d128_none_m64n128w8s2_main(
// CHECK-NOT: red.relaxed
// dS^T's elements, stored transposed into the swizzled dS tile.
// CHECK: st.shared.b16
// CHECK: fence.proxy.async.shared::cta
// CHECK-NEXT: cp.async.bulk.wait_group.read 0;
// CHECK-NEXT: bar.sync 0;
// The warpgroup's dQ columns: A (dS) and B (K) from descriptors, from zero;
// then dK's chain (A from registers) behind it, and dQ alone waited for.
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 1;
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, {%r{{[0-9]+}},%r{{[0-9]+}},%r{{[0-9]+}},%r{{[0-9]+}}}, %rd{{[0-9]+}}, 1, 1, 1, 1;
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: }
// CHECK-NOT: wgmma.wait_group.sync.aligned 0;
// CHECK: wgmma.wait_group.sync.aligned 1;
// Staged while dK runs; the warpgroup's own barrier (1 + its index), then
// one predicated reduction a row (no branch under dK's product).
// CHECK: st.shared.v2.b32
// CHECK: fence.proxy.async.shared::cta
// CHECK-NEXT: bar.sync %r{{[0-9]+}}, 128;
// CHECK-NOT: bra
// CHECK: @p cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd{{[0-9]+}}], [%r{{[0-9]+}}], 16384;
// CHECK-NOT: bra
// CHECK: cp.async.bulk.commit_group;
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK: cp.async.bulk.wait_group 0;
// CHECK-NOT: red.relaxed
// CHECK-LABEL: .entry bwd_bf16_d128_none_m64n128w8s2_dq(
// The dq stage reads dq_accum's blocks: rows rounded up to 64.
// CHECK: add.s64 {{.*}}, 63;

// 255 registers, some spilled (20-140 bytes as the code moved around, 104
// now; the first try, dS read back into registers for dQ, spilled 332).
// REGS: Function properties for bwd_bf16_d128_none_m64n128w8s2_main
// REGS-NEXT: {{[0-9]+}} bytes stack frame, {{[0-9]?[0-9]?[0-9]}} bytes spill stores
// ASYNC: bwd_bf16_d128_none_m64n128w8s2_main: {{[0-9]+}} async wgmma chains, no hazard

#w8 = #attn.config<name = "bwd_wgmma_d128_m64n128w8", block_m = 64, block_n = 128, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @w8(%q: memref<?x16x?x128xbf16>, %k: memref<?x16x?x128xbf16>, %lse: memref<?x16x?xf32>, %dq: memref<?x16x?x128xbf16>, %dk: memref<?x16x?x128xbf16>, %dv: memref<?x16x?x128xbf16>) {
  attn.attention_grad q(%q : memref<?x16x?x128xbf16>) k(%k : memref<?x16x?x128xbf16>) v(%k : memref<?x16x?x128xbf16>) o(%q : memref<?x16x?x128xbf16>) do(%q : memref<?x16x?x128xbf16>) lse(%lse : memref<?x16x?xf32>) outs(%dq, %dk, %dv : memref<?x16x?x128xbf16>, memref<?x16x?x128xbf16>, memref<?x16x?x128xbf16>) {config = #w8}
  return
}

