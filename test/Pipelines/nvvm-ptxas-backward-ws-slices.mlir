// head_split on the producer tile (slicesOnWarpgroups; the tables'
// bwd_wgmma_d256_m64n64w12, named here): one main kernel for both slices of
// D = 256 (and D = 224, padded to 256: the slice's last columns are not
// stored), whose two computing warpgroups own the same 64 key rows, each
// computing the columns of its own slice: 240 registers each, a named
// barrier of their own (id 1 + warpgroup, 128 threads) once dS is in
// their own shared buffer, dQ by vector atomics (the staging area does not
// fit beside two query buffers of 256 columns).
// REQUIRES: ptxas
// RUN: attn-opt %s -split-input-file --attn-to-nvvm="chip=sm_90a format=isa select-config=false" > %t.mlir
// RUN: FileCheck %s --check-prefix=PLAN < %t.mlir
// RUN: not grep _main_1 %t.mlir
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir | sed -n 1p \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.256.ptx
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir | sed -n 2p \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.224.ptx
// RUN: FileCheck %s < %t.256.ptx
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.256.ptx -o %t.256.cubin > %t.256.log 2>&1
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.224.ptx -o %t.224.cubin > %t.224.log 2>&1
// RUN: FileCheck %s --check-prefix=REGS < %t.256.log
// RUN: FileCheck %s --check-prefix=REGS224 < %t.224.log
// No chain serialized (C7513-C7515).
// RUN: not grep -E "C751[345]" %t.256.log %t.224.log
// RUN: %wgmma-check %t.256.ptx | FileCheck %s --check-prefix=ASYNC

// One main stage: no `main_1`.
// PLAN: name = "bwd_bf16_d256_none_m64n64w12s2wsh2"
// PLAN-SAME: entry = "bwd_bf16_d256_none_m64n64w12s2wsh2_main",
// PLAN-SAME: name = "main", reduces = ["dq_accum"], threads = 384
// PLAN-SAME: name = "convert_dq"

// CHECK-LABEL: .entry bwd_bf16_d256_none_m64n64w12s2wsh2_main(
// CHECK: bar.sync 0;
// CHECK-NOT: bar.sync 0;
// CHECK: setmaxnreg.dec.sync.aligned.u32 24;
// CHECK: cp.async.cg.shared.global
// CHECK: mbarrier.arrive.shared.b64
// CHECK: setmaxnreg.inc.sync.aligned.u32 240;
// CHECK-NOT: cp.async.cg.shared.global
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK: wgmma.mma_async
// CHECK-NOT: bar.sync 3, 256;
// CHECK: bar.sync %r{{[0-9]+}}, 128;
// CHECK: red.relaxed.gpu.global.add.v2.f32
// CHECK-NOT: cp.reduce.async.bulk
// CHECK-LABEL: .entry bwd_bf16_d256_none_m64n64w12s2wsh2_dq(

// 168 registers at launch (384 threads); some spilled in the computing
// warpgroups (72-92 bytes as measured).
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
