// sm_90a's backward plans through the whole attn-to-nvvm pipeline, with
// the tiles the tables select for deterministic plans
// (bwd_wgmma_d64_m64n64w4 and bwd_wgmma_d128_m64n64w4, dq_pass; named
// here, as the tables now choose bwd_wgmma_d128_m64n128w12 where atomics
// are allowed: nvvm-ptxas-backward-ws.mlir): deterministic plans of two stages
// (main_q, which also computes delta of its rows, then main; no pre, no
// dq_accum, no convert), whose products are wgmma
// chains reading K, V, Q and dO from 128-byte-swizzled tiles, each query
// block's lse and delta copied to shared memory beside them (4-byte
// cp.async through L1), main_q's key blocks double-buffered, no atomics,
// and no spills.
// REQUIRES: ptxas
// RUN: attn-opt %s -split-input-file --attn-to-nvvm="chip=sm_90a format=isa" > %t.mlir
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir | sed -n 1p \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.64.ptx
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir | sed -n 2p \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.128.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.64.ptx
// RUN: FileCheck %s --check-prefix=PTX128 < %t.128.ptx
// dK, dV and dQ leave as 16-byte runs (quad shuffles, QuadStores.h), no
// element-wide stores.
// RUN: grep -q 'st.global.v4.b32' %t.64.ptx && not grep 'st.global.b16' %t.64.ptx
// RUN: grep -q 'st.global.v4.b32' %t.128.ptx && not grep 'st.global.b16' %t.128.ptx
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.64.ptx -o %t.64.cubin 2>&1 | FileCheck %s --check-prefix=D64 --implicit-check-not="Potential Performance Loss"
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.128.ptx -o %t.128.cubin 2>&1 | FileCheck %s --check-prefix=D128 --implicit-check-not="Potential Performance Loss"
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir | sed -n 3p \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.atomic.ptx
// RUN: FileCheck %s --check-prefix=ATOMIC < %t.atomic.ptx
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.atomic.ptx -o %t.atomic.cubin 2>&1 | FileCheck %s --check-prefix=ATOMICREGS --implicit-check-not="Potential Performance Loss"
// RUN: %wgmma-check %t.atomic.ptx | FileCheck %s --check-prefix=ATOMICASYNC
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir | sed -n 4p \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.256.ptx
// RUN: FileCheck %s --check-prefix=D256 < %t.256.ptx
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.256.ptx -o %t.256.cubin > %t.256.log 2>&1
// RUN: FileCheck %s --check-prefix=D256REGS --implicit-check-not="Potential Performance Loss" < %t.256.log
// RUN: not grep -E ' [0-9]{3,} bytes spill' %t.256.log
// RUN: %wgmma-check %t.256.ptx | FileCheck %s --check-prefix=D256ASYNC
// RUN: %wgmma-check %t.64.ptx | FileCheck %s --check-prefix=ASYNC
// RUN: %wgmma-check %t.128.ptx | FileCheck %s --check-prefix=ASYNC128

// PTX-NOT: _pre(
// PTX-LABEL: .entry bwd_bf16_d64_causal_det_m64n64w4s2_main(
// Three workgroups an SM (58 KiB of shared memory each) at the tables'
// 168 registers.
// PTX: .minnctapersm 3
// PTX-NOT: {{red\.relaxed|red\.global\.add|atom\.global}}
// Each thread keeps its chunk columns in every row it copies: its copies
// of a tile differ by constant shared offsets (few registers; the copies'
// address arithmetic runs between dK's product and the next S^T).
// PTX: cp.async.cg.shared.global [%rd[[TO:[0-9]+]]], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// PTX-NOT: cp.async
// PTX: cp.async.cg.shared.global [%rd[[TO]]+2048], [%rd{{[0-9]+}}], 16,
// PTX: cp.async.ca.shared.global {{.*}}, 4,
// PTX: fence.proxy.async.shared::cta
// The block's lse, read from shared memory before the products that would
// compete for it: S^T starts from -lse / scale (scale-d 1 from the first
// step), so that P^T = exp2(S^T scale log2(e)).
// PTX: ld.shared.v2.b32
// PTX: mul.rn.f32
// PTX-NOT: ex2.approx
// S^T = K Q^T (N = block_m = 64 query columns), both from descriptors,
// each step's advanced inside the chain (registers: D = 128 spilled with a
// descriptor input per step).
// PTX: wgmma.fence.sync.aligned;
// PTX-NEXT: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, 1, 1, 1, 0, 0;
// PTX-NEXT: add.s64 da, %rd{{[0-9]+}}, 2;
// PTX-NEXT: add.s64 db, %rd{{[0-9]+}}, 2;
// dP^T = V dO^T is issued before S^T is waited for, from -delta (read
// meanwhile): S^T alone completes (one group left running) while P^T is
// computed.
// PTX: wgmma.commit_group.sync.aligned;
// PTX-NOT: wgmma.wait_group
// PTX: ld.shared.v2.b32
// PTX-NOT: wgmma.wait_group
// PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, 1, 1, 1, 0, 0;
// PTX-NOT: wgmma.wait_group
// PTX: wgmma.commit_group.sync.aligned;
// PTX-NEXT: }
// PTX-NEXT: // end inline asm
// PTX-NEXT: // begin inline asm
// PTX-NEXT: wgmma.wait_group.sync.aligned 1;
// PTX: mul.rn.f32 [[X:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// PTX-NEXT: ex2.approx.ftz.f32 %r{{[0-9]+}}, [[X]];
// PTX-NOT: {{red\.relaxed|red\.global\.add|atom\.global}}
// PTX-LABEL: .entry bwd_bf16_d64_causal_det_m64n64w4s2_main_q(
// PTX-NOT: {{red\.relaxed|red\.global\.add|atom\.global}}
// Key block j + 1 is copied (into main's second Q and dO buffers, or its
// K and V) while block j computes: one group left in flight.
// PTX: cp.async.wait_group{{[[:space:]]+}}1;
// PTX: wgmma.mma_async.sync.aligned
// P = exp2(S scale log2(e) - lse log2(e)): one fma per element (lse and
// delta stay in registers here: two rows a thread). Blocks inside the mask
// and Sq skip the per-element mask: every exp2 of the block before the
// branch around the selects.
// PTX: fma.rn.f32 [[X:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}};
// PTX-NEXT: ex2.approx.ftz.f32 %r{{[0-9]+}}, [[X]];
// PTX-NOT: selp.f32
// PTX: bra
// PTX: selp.f32 {{.*}}, 0f00000000
// PTX-NOT: {{red\.relaxed|red\.global\.add|atom\.global}}
// PTX-NOT: .entry
// PTX128: .entry bwd_f16_d128_causal_bottom_right_det_m64n64w4s2_main(
// dV += P^T dO and dK += dS^T Q: A from registers, B transposed, N = 128.
// dK and dV are left in flight into the next block (no register cap
// here): the next block's copies follow dV's product, after a barrier
// (every warp's wait for S^T completed the previous dK), without a branch
// (C7513); one wait for everything, after the loop.
// PTX128: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}}, {%r{{[0-9]+}},%r{{[0-9]+}},%r{{[0-9]+}},%r{{[0-9]+}}}, {{.*}}, 1, 1, 1, 1;
// PTX128: wgmma.commit_group.sync.aligned;
// PTX128-NOT: {{wgmma.wait_group|bra}}
// PTX128: bar.sync 0;
// PTX128-NOT: {{wgmma.wait_group|bra}}
// PTX128: cp.async.cg.shared.global
// PTX128-NOT: wgmma.wait_group.sync.aligned 0;
// PTX128: wgmma.wait_group.sync.aligned 1;
// PTX128-NOT: wgmma.wait_group.sync.aligned 0;
// PTX128: wgmma.wait_group.sync.aligned 1;
// PTX128-NOT: wgmma.wait_group.sync.aligned 0;
// PTX128: bra
// PTX128: wgmma.wait_group.sync.aligned 0;
// PTX128-NOT: wgmma.wait_group.sync.aligned 0;
// PTX128-LABEL: .entry bwd_f16_d128_causal_bottom_right_det_m64n64w4s2_main_q(
// main_q likewise leaves dQ in flight into the next key block: once S and
// dP are issued, the previous dQ is waited for (two groups left), then a
// barrier and the next key block's copies; one wait after the loop.
// PTX128: wgmma.commit_group.sync.aligned;
// PTX128: wgmma.commit_group.sync.aligned;
// PTX128-NOT: wgmma.wait_group
// PTX128: wgmma.wait_group.sync.aligned 2;
// PTX128-NOT: wgmma.wait_group
// PTX128: bar.sync 0;
// PTX128-NOT: wgmma.wait_group
// PTX128: cp.async.cg.shared.global
// PTX128: wgmma.wait_group.sync.aligned 1;

// ptxas serializes no wgmma (C7512-C7515: register caps, branches or
// non-wgmma instructions between a product and its wait).
// D64-NOT: warning
// D64-DAG: Function properties for bwd_bf16_d64_causal_det_m64n64w4s2_main{{$}}
// D64-DAG: Function properties for bwd_bf16_d64_causal_det_m64n64w4s2_main_q{{$}}
// D64-NOT: {{[1-9][0-9]* bytes spill}}
// D64-NOT: Used {{(169|1[7-9][0-9]|2[0-9][0-9])}} registers
// D128-NOT: warning
// D128: Compiling entry function 'bwd_f16_d128_causal_bottom_right_det_m64n64w4s2_main_q'
// D128-NEXT: Function properties
// D128-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// D128: Compiling entry function 'bwd_f16_d128_causal_bottom_right_det_m64n64w4s2_main'
// D128-NEXT: Function properties
// D128-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// ATOMIC-LABEL: .entry bwd_bf16_d64_causal_m64n64w4s2_main(
// ATOMIC: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// dQ = dS K reads dS from its swizzled tile through a descriptor (A from
// shared memory, K as B like V); one warpgroup adds it by atomics.
// ATOMIC: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 1;
// ATOMIC-NOT: cp.reduce.async.bulk
// ATOMIC: red.relaxed.gpu.global.add.v2.f32
// ATOMIC-LABEL: .entry bwd_bf16_d64_causal_m64n64w4s2_dq(
// ATOMICREGS-NOT: warning
// ATOMICREGS: Function properties for bwd_bf16_d64_causal_m64n64w4s2_main
// ATOMICREGS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// ATOMICASYNC: bwd_bf16_d64_causal_m64n64w4s2_main: {{[0-9]+}} async wgmma chains, no hazard

// D256-LABEL: .entry bwd_bf16_d256_causal_m64n64w4s2h2_main(
// D256: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// D256: red.relaxed.gpu.global.add.v2.f32
// D256-LABEL: .entry bwd_bf16_d256_causal_m64n64w4s2h2_main_1(
// D256-LABEL: .entry bwd_bf16_d256_causal_m64n64w4s2h2_dq(
// A few registers' worth spilled (4 bytes with ptxas 13.0; 68 before the
// copies kept their chunk columns).
// D256REGS-NOT: warning
// D256REGS-DAG: Function properties for bwd_bf16_d256_causal_m64n64w4s2h2_main{{$}}
// D256REGS-DAG: Function properties for bwd_bf16_d256_causal_m64n64w4s2h2_main_1{{$}}
// D256ASYNC: bwd_bf16_d256_causal_m64n64w4s2h2_main: {{[0-9]+}} async wgmma chains, no hazard
// D256ASYNC: bwd_bf16_d256_causal_m64n64w4s2h2_main_1: {{[0-9]+}} async wgmma chains, no hazard

// S^T and dP^T (main; S and dP in main_q) are issued together and waited
// for one at a time (wait_group 1), beside dV and dK (dQ) in flight.
// ASYNC: bwd_bf16_d64_causal_det_m64n64w4s2_main: 4 async wgmma chains, no hazard
// ASYNC: bwd_bf16_d64_causal_det_m64n64w4s2_main_q: 3 async wgmma chains, no hazard
// ASYNC128: bwd_f16_d128_causal_bottom_right_det_m64n64w4s2_main: 4 async wgmma chains, no hazard
// ASYNC128: bwd_f16_d128_causal_bottom_right_det_m64n64w4s2_main_q: 3 async wgmma chains, no hazard

#det64 = #attn.config<name = "bwd_wgmma_d64_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16, deterministic = true>
func.func @d64(%q: memref<?x8x?x64xbf16>, %k: memref<?x2x?x64xbf16>, %lse: memref<?x8x?xf32>, %dq: memref<?x8x?x64xbf16>, %dk: memref<?x2x?x64xbf16>, %dv: memref<?x2x?x64xbf16>) {
  attn.attention_grad q(%q : memref<?x8x?x64xbf16>) k(%k : memref<?x2x?x64xbf16>) v(%k : memref<?x2x?x64xbf16>) o(%q : memref<?x8x?x64xbf16>) do(%q : memref<?x8x?x64xbf16>) lse(%lse : memref<?x8x?xf32>) outs(%dq, %dk, %dv : memref<?x8x?x64xbf16>, memref<?x2x?x64xbf16>, memref<?x2x?x64xbf16>) {mask = #attn.mask<causal>, config = #det64}
  return
}

// -----

#det128 = #attn.config<name = "bwd_wgmma_d128_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16, deterministic = true>
func.func @d128(%q: memref<?x8x?x128xf16>, %k: memref<?x2x?x128xf16>, %lse: memref<?x8x?xf32>, %dq: memref<?x8x?x128xf16>, %dk: memref<?x2x?x128xf16>, %dv: memref<?x2x?x128xf16>) {
  attn.attention_grad q(%q : memref<?x8x?x128xf16>) k(%k : memref<?x2x?x128xf16>) v(%k : memref<?x2x?x128xf16>) o(%q : memref<?x8x?x128xf16>) do(%q : memref<?x8x?x128xf16>) lse(%lse : memref<?x8x?xf32>) outs(%dq, %dk, %dv : memref<?x8x?x128xf16>, memref<?x2x?x128xf16>, memref<?x2x?x128xf16>) {mask = #attn.mask<causal_bottom_right>, config = #det128}
  return
}

// -----

// A wgmma config without dq_pass (written by hand; the tables' tiles carry
// it): main adds dQ into dq_accum itself, a warpgroup's 64 query rows x 64
// columns at a time (dS read back from shared memory, one wgmma chain,
// waited for, then sm_90's vector reductions), and convert_dq follows.
#atomic = #attn.config<name = "wg_atomic", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @atomic(%q: memref<?x8x?x64xbf16>, %k: memref<?x2x?x64xbf16>, %lse: memref<?x8x?xf32>, %dq: memref<?x8x?x64xbf16>, %dk: memref<?x2x?x64xbf16>, %dv: memref<?x2x?x64xbf16>) {
  attn.attention_grad q(%q : memref<?x8x?x64xbf16>) k(%k : memref<?x2x?x64xbf16>) v(%k : memref<?x2x?x64xbf16>) o(%q : memref<?x8x?x64xbf16>) do(%q : memref<?x8x?x64xbf16>) lse(%lse : memref<?x8x?xf32>) outs(%dq, %dk, %dv : memref<?x8x?x64xbf16>, memref<?x2x?x64xbf16>, memref<?x2x?x64xbf16>) {mask = #attn.mask<causal>, config = #atomic}
  return
}

// -----

// D = 256: bwd_wgmma_d256_m64n64w4, two column slices (main and main_1,
// each 128 columns of dK, dV and dQ) with dQ by atomics, then convert_dq.
// Named here: the tables choose bwd_wgmma_d256_m64n64w12 at D = 256
// (nvvm-ptxas-backward-ws-slices.mlir); this tile serves D = 160-192.
#d256w4 = #attn.config<name = "bwd_wgmma_d256_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16, head_split = 2>
func.func @d256(%q: memref<?x1x?x256xbf16>, %k: memref<?x1x?x256xbf16>, %lse: memref<?x1x?xf32>, %dq: memref<?x1x?x256xbf16>, %dk: memref<?x1x?x256xbf16>, %dv: memref<?x1x?x256xbf16>) {
  attn.attention_grad q(%q : memref<?x1x?x256xbf16>) k(%k : memref<?x1x?x256xbf16>) v(%k : memref<?x1x?x256xbf16>) o(%q : memref<?x1x?x256xbf16>) do(%q : memref<?x1x?x256xbf16>) lse(%lse : memref<?x1x?xf32>) outs(%dq, %dk, %dv : memref<?x1x?x256xbf16>, memref<?x1x?x256xbf16>, memref<?x1x?x256xbf16>) {mask = #attn.mask<causal>, config = #d256w4}
  return
}
