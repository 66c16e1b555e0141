// A config with align_bytes = 2 (views that start at any element) loads q, k
// and v two bytes at a time instead of by 16-byte cp.async, stores o the same
// way, says so in its bundle metadata, and assembles (the mma.sync one
// without spills). The
// aligned twin keeps cp.async. Both the mma.sync and the wgmma kernel.
// REQUIRES: ptxas
// RUN: attn-opt %s -split-input-file --attn-to-nvvm="chip=sm_90a format=isa select-config=false" > %t.mlir
// RUN: FileCheck %s --check-prefix=META < %t.mlir
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// Each gpu.module is its own PTX file for ptxas: the two unaligned ones.
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir | sed -n 1p \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.1.ptx
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir | sed -n 3p \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.3.ptx
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.1.ptx -o %t.1.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// The wgmma one assembles; it spills a few bytes (12 with ptxas 13.0): its
// element-wide loads hold a chunk in registers beside the accumulators.
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.3.ptx -o %t.3.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS-WG
// The D = 64 wgmma twin (256 threads) asks for two workgroups an SM, as its
// aligned kernel gets them (ptxas took 130-132 registers, one an SM, without).
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir | sed -n 4p \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.4.ptx
// RUN: FileCheck %s --check-prefix=PTX64 < %t.4.ptx
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.4.ptx -o %t.4.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS64

// META: {align_bytes = 2 : i64, {{[^}]*}} name = "fwd_f16_d64_none_m128n64w4s2_align2"
// META-SAME: {align_bytes = 16 : i64, {{[^}]*}} name = "fwd_f16_d64_none_m128n64w4s2"
// META-SAME: {align_bytes = 2 : i64, {{[^}]*}} name = "fwd_bf16_d128_none_m128n128w8s2_align2"

// PTX-LABEL: .entry fwd_f16_d64_none_m128n64w4s2_align2(
// At 128 threads two workgroups' share caps no register: no minimum asked.
// PTX-NOT: {{cp.async.cg|\.minnctapersm}}
// PTX: ld.global.b16
// PTX-NOT: cp.async.cg
// PTX: st.global.b16
// PTX-LABEL: .entry fwd_f16_d64_none_m128n64w4s2(
// PTX: cp.async.cg.shared.global
// PTX-LABEL: .entry fwd_bf16_d128_none_m128n128w8s2_align2(
// PTX-NOT: cp.async.cg
// PTX: wgmma.mma_async

// PTXAS: _align2' for 'sm_90a'
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS-WG: Compiling entry function 'fwd_bf16_d128_none_m128n128w8s2_align2' for 'sm_90a'
// PTXAS-WG: Used {{[0-9]+}} registers

// PTX64-LABEL: .entry fwd_bf16_d64_causal_m128n64w8s2_align2(
// PTX64: .maxntid 256, 1, 1
// PTX64-NEXT: .minnctapersm 2
// PTXAS64: 0 bytes spill stores, 0 bytes spill loads
// PTXAS64: Used {{([0-9]|[0-9][0-9]|1[01][0-9]|12[0-8])}} registers

#unaligned = #attn.config<name = "sm90_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16, align_bytes = 2>
#aligned = #attn.config<name = "sm90_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
#wgmma = #attn.config<name = "sm90_wgmma_m128n128w8", block_m = 128, block_n = 128, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16, align_bytes = 2>
#wgmma64 = #attn.config<name = "wgmma_d64_m128n64w8", block_m = 128, block_n = 64, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16, align_bytes = 2>
func.func @fwd(%q: memref<?x16x?x64xf16>, %o: memref<?x16x?x64xf16>, %q2: memref<?x16x?x128xbf16>, %o2: memref<?x16x?x128xbf16>, %q3: memref<?x16x?x64xbf16>, %o3: memref<?x16x?x64xbf16>) {
  attn.attention q(%q : memref<?x16x?x64xf16>) k(%q : memref<?x16x?x64xf16>) v(%q : memref<?x16x?x64xf16>) outs(%o : memref<?x16x?x64xf16>) {config = #unaligned}
  attn.attention q(%q : memref<?x16x?x64xf16>) k(%q : memref<?x16x?x64xf16>) v(%q : memref<?x16x?x64xf16>) outs(%o : memref<?x16x?x64xf16>) {config = #aligned}
  attn.attention q(%q2 : memref<?x16x?x128xbf16>) k(%q2 : memref<?x16x?x128xbf16>) v(%q2 : memref<?x16x?x128xbf16>) outs(%o2 : memref<?x16x?x128xbf16>) {config = #wgmma}
  attn.attention q(%q3 : memref<?x16x?x64xbf16>) k(%q3 : memref<?x16x?x64xbf16>) v(%q3 : memref<?x16x?x64xbf16>) outs(%o3 : memref<?x16x?x64xbf16>) {mask = #attn.mask<causal>, config = #wgmma64}
  return
}
