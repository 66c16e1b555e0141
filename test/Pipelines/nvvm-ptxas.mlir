// The PTX of the D=64 and D=128 (32 rows per warp) kernels assembles for
// sm_90a without register spills.
// REQUIRES: ptxas
// RUN: attn-opt %s -split-input-file --attn-to-nvvm="chip=sm_90a format=isa select-config=false" \
// RUN:   | sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.ptx
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s

// CHECK: Compiling entry function 'fwd_f16_d64_none_m128n64w4s2' for 'sm_90a'
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

#cfg = #attn.config<name = "sm90_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
func.func @fwd(%q: memref<?x16x?x64xf16>, %o: memref<?x16x?x64xf16>) {
  attn.attention q(%q : memref<?x16x?x64xf16>) k(%q : memref<?x16x?x64xf16>) v(%q : memref<?x16x?x64xf16>) outs(%o : memref<?x16x?x64xf16>) {config = #cfg}
  return
}
