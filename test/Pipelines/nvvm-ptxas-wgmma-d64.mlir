// The wgmma kernel for D = 64 (three warpgroups: 384 threads leave at most
// 168 registers per thread) assembles for sm_90a without spills or ptxas
// warnings (such as "Potential Performance Loss: wgmma.mma_async
// instructions are serialized").
// REQUIRES: ptxas
// RUN: attn-opt %s --attn-to-nvvm="chip=sm_90a format=isa select-config=false" \
// RUN:   | sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.ptx
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s

// CHECK-NOT: Performance Loss
// CHECK: Compiling entry function 'fwd_bf16_d64_none_m192n128w12s2' for 'sm_90a'
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Used {{(1[0-5][0-9]|16[0-8])}} registers
// CHECK-NOT: warning

#cfg = #attn.config<name = "wgmma_d64_m192n128w12", block_m = 192, block_n = 128, warps = 12, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @fwd(%q: memref<?x16x?x64xbf16>, %o: memref<?x16x?x64xbf16>) {
  attn.attention q(%q : memref<?x16x?x64xbf16>) k(%q : memref<?x16x?x64xbf16>) v(%q : memref<?x16x?x64xbf16>) outs(%o : memref<?x16x?x64xbf16>) {mask = #attn.mask<none>, config = #cfg}
  return
}
