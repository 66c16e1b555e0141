// nvvm-ptxas-backward-bulk-dq.mlir's tile at D = 96: no whole 64-column
// chunks, so dq_accum keeps its rows of D floats (no blocks of 64 rows)
// and each warpgroup adds its staged columns by one bulk reduction a row
// (here the second chunk's 32 columns, 128 bytes, and the first's 64).
// REQUIRES: ptxas
// RUN: attn-opt %s --attn-to-nvvm="chip=sm_90a format=isa select-config=false" \
// RUN:   | sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.ptx -o %t.cubin > %t.log 2>&1
// RUN: not grep -E "C751[345]" %t.log
// RUN: %wgmma-check %t.ptx | FileCheck %s --check-prefix=ASYNC

// CHECK-LABEL: .entry bwd_bf16_d96_none_m64n128w8s2_main(
// CHECK: @p cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd{{[0-9]+}}], [%r{{[0-9]+}}], 128;
// CHECK: @p cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd{{[0-9]+}}], [%r{{[0-9]+}}], 256;
// CHECK-NOT: 16384;
// The dq stage reads rows of D floats: nothing rounded up to 64.
// CHECK-LABEL: .entry bwd_bf16_d96_none_m64n128w8s2_dq(
// CHECK-NOT: 63;
// ASYNC: bwd_bf16_d96_none_m64n128w8s2_main: {{[0-9]+}} async wgmma chains, no hazard

#w8 = #attn.config<name = "bwd_wgmma_d128_m64n128w8", block_m = 64, block_n = 128, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @w8d96(%q: memref<?x16x?x96xbf16>, %k: memref<?x16x?x96xbf16>, %lse: memref<?x16x?xf32>, %dq: memref<?x16x?x96xbf16>, %dk: memref<?x16x?x96xbf16>, %dv: memref<?x16x?x96xbf16>) {
  attn.attention_grad q(%q : memref<?x16x?x96xbf16>) k(%k : memref<?x16x?x96xbf16>) v(%k : memref<?x16x?x96xbf16>) o(%q : memref<?x16x?x96xbf16>) do(%q : memref<?x16x?x96xbf16>) lse(%lse : memref<?x16x?xf32>) outs(%dq, %dk, %dv : memref<?x16x?x96xbf16>, memref<?x16x?x96xbf16>, memref<?x16x?x96xbf16>) {config = #w8}
  return
}
