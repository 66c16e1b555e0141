// head_split on the producer tile (slicesOnWarpgroups; the tables'
// bwd_wgmma_d256_m64n64w12, named here): one main kernel for both slices of
// D = 256, whose two computing warpgroups own the same 64 key rows. Each
// computes S^T and dP^T for 32 of the block's 64 query columns
// (m64n32k16), and once both have written their halves of P^T, dS^T and dS
// (barrier 6 before, 3 after), the products of its own slice of dV and dK
// over all 64 columns (m64n128k16) and its two 64-column units of dQ. It
// stages the units in the block's Q/dO ring buffer (unit U's rows 0-31 in
// panel U of Q, 32-63 in panel U of dO: its own columns, which only its
// completed products read) and arrives at barrier 4; the producer's writer
// warp waits there and adds every unit by two 8 KB bulk reductions, then
// releases the buffer (the ring's empty mbarrier counts it). The computing
// warpgroups issue no reductions and no atomics. D = 224 (padded to 256)
// and D = 192 (and 160, padded to 192: slices of 128 and 64 columns, each
// warpgroup computing 128, the second's last 64 past the tile, neither
// stored nor staged) add units too: dq_accum's rows are D rounded up to 64
// (dim head_dim_64 where D is not a multiple of 64).
// REQUIRES: ptxas
// RUN: attn-opt %s -split-input-file --attn-to-nvvm="chip=sm_90a format=isa select-config=false" > %t.mlir
// RUN: FileCheck %s --check-prefix=PLAN < %t.mlir
// RUN: not grep _main_1 %t.mlir
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir | sed -n 1p \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.256.ptx
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir | sed -n 2p \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.224.ptx
// RUN: FileCheck %s < %t.256.ptx
// RUN: FileCheck %s --check-prefix=D224 < %t.224.ptx
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.256.ptx -o %t.256.cubin > %t.256.log 2>&1
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.224.ptx -o %t.224.cubin > %t.224.log 2>&1
// RUN: FileCheck %s --check-prefix=REGS < %t.256.log
// RUN: FileCheck %s --check-prefix=REGS224 < %t.224.log
// No chain serialized (C7513-C7515, C7518).
// RUN: not grep -E "C751[3458]" %t.256.log %t.224.log
// RUN: %wgmma-check %t.256.ptx | FileCheck %s --check-prefix=ASYNC
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir | sed -n 3p \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.192.ptx
// RUN: FileCheck %s --check-prefix=D192 < %t.192.ptx
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.192.ptx -o %t.192.cubin > %t.192.log 2>&1
// RUN: not grep -E "C751[3458]" %t.192.log
// RUN: %wgmma-check %t.192.ptx | FileCheck %s --check-prefix=ASYNC192

// One main stage (no `main_1`), dq_accum in blocks of 64 rows.
// PLAN: name = "bwd_bf16_d256_none_m64n64w12s2wsh2"
// PLAN-SAME: entry = "bwd_bf16_d256_none_m64n64w12s2wsh2_main",
// PLAN-SAME: name = "main", reduces = ["dq_accum"], threads = 384
// PLAN-SAME: name = "convert_dq"
// PLAN-SAME: dims = ["batch", "heads_q", "seqlen_q_64", "head_dim"], dtype = "f32", name = "dq_accum"
// PLAN: name = "bwd_bf16_d224_causal_m64n64w12s2wsh2"
// PLAN-SAME: dims = ["batch", "heads_q", "seqlen_q_64", "head_dim_64"], dtype = "f32", name = "dq_accum"

// CHECK-LABEL: .entry bwd_bf16_d256_none_m64n64w12s2wsh2_main(
// CHECK: bar.sync 0;
// CHECK-NOT: bar.sync 0;
// CHECK: setmaxnreg.dec.sync.aligned.u32 24;
// CHECK: cp.async.cg.shared.global
// CHECK: mbarrier.arrive.shared.b64
// CHECK: setmaxnreg.inc.sync.aligned.u32 240;
// CHECK-NOT: cp.async.cg.shared.global
// CHECK: bar.sync 6, 256;
// CHECK: bar.sync 3, 256;
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK-NOT: cp.reduce.async.bulk
// CHECK: bar.arrive 4, 288;
// CHECK: mbarrier.arrive.shared.b64
// CHECK-NOT: red.relaxed
// The writer: no turns without ordered dQ.
// CHECK: bar.sync 4, 288;
// CHECK-NOT: ld.acquire
// CHECK-COUNT-8: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd{{[0-9]+}}], [%r{{[0-9]+}}], 8192;
// CHECK: cp.async.bulk.wait_group.read 0;
// CHECK-NOT: red.release
// CHECK: mbarrier.arrive.shared.b64
// CHECK-LABEL: .entry bwd_bf16_d256_none_m64n64w12s2wsh2_dq(

// D224-LABEL: .entry bwd_bf16_d224_causal_m64n64w12s2wsh2_main(
// D224-NOT: red.relaxed
// D224-COUNT-8: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 {{.*}}, 8192;
// D224-LABEL: .entry bwd_bf16_d224_causal_m64n64w12s2wsh2_dq(

// The second warpgroup stages one unit (its second is past D).
// D192-LABEL: .entry bwd_bf16_d192_causal_m64n64w12s2wsh2_main(
// D192-NOT: red.relaxed
// D192-COUNT-6: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 {{.*}}, 8192;
// D192-NOT: cp.reduce.async.bulk
// D192-LABEL: .entry bwd_bf16_d192_causal_m64n64w12s2wsh2_dq(
// ASYNC192: bwd_bf16_d192_causal_m64n64w12s2wsh2_main: {{[0-9]+}} async wgmma chains, no hazard

// 168 registers at launch (384 threads); some spilled in the computing
// warpgroups (112 bytes at D = 256 when written).
// REGS: Function properties for bwd_bf16_d256_none_m64n64w12s2wsh2_main
// REGS-NEXT: {{[0-9]+}} bytes stack frame, {{[0-9]?[0-9]?[0-9]}} bytes spill stores
// REGS-NEXT: Used 168 registers
// REGS224: Function properties for bwd_bf16_d224_causal_m64n64w12s2wsh2_main
// REGS224-NEXT: {{[0-9]+}} bytes stack frame, {{[0-9]?[0-9]?[0-9]}} bytes spill stores
// REGS224-NEXT: Used 168 registers
// ASYNC: bwd_bf16_d256_none_m64n64w12s2wsh2_main: {{[0-9]+}} async wgmma chains, no hazard

#w12 = #attn.config<name = "bwd_wgmma_d256_m64n64w12", block_m = 64, block_n = 64, warps = 12, stages = 2, pipeline = cp_async_ws, acc_in_registers = true, mma = wgmma.m64nNk16, head_split = 2>
func.func @d256(%q: memref<?x16x?x256xbf16>, %k: memref<?x16x?x256xbf16>, %lse: memref<?x16x?xf32>, %dq: memref<?x16x?x256xbf16>, %dk: memref<?x16x?x256xbf16>, %dv: memref<?x16x?x256xbf16>) {
  attn.attention_grad q(%q : memref<?x16x?x256xbf16>) k(%k : memref<?x16x?x256xbf16>) v(%k : memref<?x16x?x256xbf16>) o(%q : memref<?x16x?x256xbf16>) do(%q : memref<?x16x?x256xbf16>) lse(%lse : memref<?x16x?xf32>) outs(%dq, %dk, %dv : memref<?x16x?x256xbf16>, memref<?x16x?x256xbf16>, memref<?x16x?x256xbf16>) {config = #w12}
  return
}

// -----

#w12 = #attn.config<name = "bwd_wgmma_d256_m64n64w12", block_m = 64, block_n = 64, warps = 12, stages = 2, pipeline = cp_async_ws, acc_in_registers = true, mma = wgmma.m64nNk16, head_split = 2>
func.func @d224(%q: memref<?x16x?x224xbf16>, %k: memref<?x16x?x224xbf16>, %lse: memref<?x16x?xf32>, %dq: memref<?x16x?x224xbf16>, %dk: memref<?x16x?x224xbf16>, %dv: memref<?x16x?x224xbf16>) {
  attn.attention_grad q(%q : memref<?x16x?x224xbf16>) k(%k : memref<?x16x?x224xbf16>) v(%k : memref<?x16x?x224xbf16>) o(%q : memref<?x16x?x224xbf16>) do(%q : memref<?x16x?x224xbf16>) lse(%lse : memref<?x16x?xf32>) outs(%dq, %dk, %dv : memref<?x16x?x224xbf16>, memref<?x16x?x224xbf16>, memref<?x16x?x224xbf16>) {mask = #attn.mask<causal>, config = #w12}
  return
}

// -----

#w12 = #attn.config<name = "bwd_wgmma_d256_m64n64w12", block_m = 64, block_n = 64, warps = 12, stages = 2, pipeline = cp_async_ws, acc_in_registers = true, mma = wgmma.m64nNk16, head_split = 2>
func.func @d192(%q: memref<?x16x?x192xbf16>, %k: memref<?x16x?x192xbf16>, %lse: memref<?x16x?xf32>, %dq: memref<?x16x?x192xbf16>, %dk: memref<?x16x?x192xbf16>, %dv: memref<?x16x?x192xbf16>) {
  attn.attention_grad q(%q : memref<?x16x?x192xbf16>) k(%k : memref<?x16x?x192xbf16>) v(%k : memref<?x16x?x192xbf16>) o(%q : memref<?x16x?x192xbf16>) do(%q : memref<?x16x?x192xbf16>) lse(%lse : memref<?x16x?xf32>) outs(%dq, %dk, %dv : memref<?x16x?x192xbf16>, memref<?x16x?x192xbf16>, memref<?x16x?x192xbf16>) {mask = #attn.mask<causal>, config = #w12}
  return
}
