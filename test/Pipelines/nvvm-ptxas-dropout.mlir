// Dropout kernels through the whole attn-to-nvvm pipeline, assembled by
// ptxas for sm_90a: the forward (wgmma, D = 64: two workgroups an SM, so
// 128 registers) and the backward plan's main stages fit without spills;
// dropout_p, the seed and the offset are kernel arguments 35-37 (after D
// and Dv) and 55-57 of the backward; Philox4x32-10 runs once per four
// probabilities a thread holds (its multiplier 0xD2511F53 =
// -766435501 appears some 70 times per kernel, 10 rounds x 8 counters,
// not 320 as with one generator call per element; the backward's main and
// main_q, the dQ pass of sm_90a's wgmma plan, each draw the mask).
// REQUIRES: ptxas
// RUN: attn-opt %s -split-input-file --attn-to-nvvm="chip=sm_90a format=isa" > %t.mlir
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir | sed -n 1p \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.fwd.ptx
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir | sed -n 2p \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.bwd.ptx
// RUN: FileCheck %s --check-prefix=FWD < %t.fwd.ptx
// RUN: FileCheck %s --check-prefix=BWD < %t.bwd.ptx
// RUN: grep -c 'mul.wide.u32.*-766435501' %t.fwd.ptx | FileCheck %s --check-prefix=CALLS
// RUN: grep -c 'mul.wide.u32.*-766435501' %t.bwd.ptx | FileCheck %s --check-prefix=CALLS2
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.fwd.ptx -o %t.fwd.cubin 2>&1 | FileCheck %s --check-prefix=FWDREGS
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.bwd.ptx -o %t.bwd.cubin 2>&1 | FileCheck %s --check-prefix=BWDREGS

// FWD-LABEL: .entry fwd_bf16_d64_causal_dropout_m128n64w8s2(
// FWD: .param .u32 fwd_bf16_d64_causal_dropout_m128n64w8s2_param_34,
// FWD-NEXT: .param .f32 fwd_bf16_d64_causal_dropout_m128n64w8s2_param_35,
// FWD-NEXT: .param .u64 fwd_bf16_d64_causal_dropout_m128n64w8s2_param_36,
// FWD-NEXT: .param .u32 fwd_bf16_d64_causal_dropout_m128n64w8s2_param_37
// FWD: .minnctapersm 2
// FWD: wgmma.mma_async

// BWD-NOT: _pre(
// BWD-LABEL: .entry bwd_bf16_d64_causal_det_dropout_m64n64w4s2_main(
// BWD: .param .f32 bwd_bf16_d64_causal_det_dropout_m64n64w4s2_main_param_55,
// BWD-NEXT: .param .u64 bwd_bf16_d64_causal_det_dropout_m64n64w4s2_main_param_56,
// BWD-NEXT: .param .u32 bwd_bf16_d64_causal_det_dropout_m64n64w4s2_main_param_57
// BWD: wgmma.mma_async
// BWD-LABEL: .entry bwd_bf16_d64_causal_det_dropout_m64n64w4s2_main_q(
// BWD: wgmma.mma_async

// CALLS: {{^[5-9][0-9]$}}
// CALLS2: {{^1[0-9][0-9]$}}

// FWDREGS: Compiling entry function 'fwd_bf16_d64_causal_dropout_m128n64w8s2'
// FWDREGS-NEXT: Function properties
// FWDREGS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// FWDREGS-NEXT: Used 128 registers
// BWDREGS-LABEL: Compiling entry function 'bwd_bf16_d64_causal_det_dropout_m64n64w4s2_main_q'
// BWDREGS-NEXT: Function properties
// BWDREGS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// BWDREGS-LABEL: Compiling entry function 'bwd_bf16_d64_causal_det_dropout_m64n64w4s2_main'
// BWDREGS-NEXT: Function properties
// BWDREGS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

func.func @fwd(%q: memref<?x16x?x64xbf16>, %p: f32, %s: i64, %off: i32, %o: memref<?x16x?x64xbf16>) {
  attn.attention q(%q : memref<?x16x?x64xbf16>) k(%q : memref<?x16x?x64xbf16>) v(%q : memref<?x16x?x64xbf16>) dropout(%p, %s, %off) outs(%o : memref<?x16x?x64xbf16>) {mask = #attn.mask<causal>}
  return
}

// -----

// The deterministic plan (the tables' choice where atomics are allowed is
// the warp-specialized tile; its dropout kernels: nvvm-ptxas-backward-ws.mlir).
#det64 = #attn.config<name = "bwd_wgmma_d64_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16, deterministic = true>
func.func @bwd(%q: memref<2x8x1000x64xbf16>, %lse: memref<2x8x1000xf32>, %p: f32, %s: i64, %off: i32) {
  attn.attention_grad q(%q : memref<2x8x1000x64xbf16>) k(%q : memref<2x8x1000x64xbf16>) v(%q : memref<2x8x1000x64xbf16>) o(%q : memref<2x8x1000x64xbf16>) do(%q : memref<2x8x1000x64xbf16>) lse(%lse : memref<2x8x1000xf32>) dropout(%p, %s, %off) outs(%q, %q, %q : memref<2x8x1000x64xbf16>, memref<2x8x1000x64xbf16>, memref<2x8x1000x64xbf16>) {mask = #attn.mask<causal>, config = #det64}
  return
}
