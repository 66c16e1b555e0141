// float32 attention through attn-to-nvvm on the tables' fma candidates:
// scalar fma.rn.f32 on the CUDA cores (no mma, no TF32), Q and K read four
// floats at a time from shared memory, each probability broadcast to the
// lanes of its row by shfl.sync.idx; ptxas (sm_90a) without spills at
// D = 64 (fma_d64_m128n64w4), 128 (fma_m256n32w8) and 256 (fma_m32n32w4).
// REQUIRES: ptxas
// RUN: attn-opt %s -split-input-file --attn-to-nvvm="chip=sm_90a format=isa" > %t.mlir
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: for i in 1 2 3; do sed -n "s/.*assembly = \"\(.*\)\">\].*/\1/p" %t.mlir | sed -n "${i}p" | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.$i.ptx; %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.$i.ptx -o %t.$i.cubin; done 2>&1 | FileCheck %s --check-prefix=REGS

// PTX-LABEL: .entry fwd_f32_d64_causal_m128n64w4s2(
// PTX-NOT: mma
// PTX: ld.shared.v4.b32
// PTX: fma.rn.f32
// PTX: shfl.sync.idx
// PTX-LABEL: .entry fwd_f32_d128_none_m256n32w8s2(
// PTX-NOT: mma
// PTX: fma.rn.f32
// PTX-LABEL: .entry fwd_f32_d256_none_m32n32w4s2(
// PTX-NOT: {{mma|tf32}}

// REGS-COUNT-3: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

func.func @d64(%q: memref<?x8x?x64xf32>, %o: memref<?x8x?x64xf32>, %l: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf32>) k(%q : memref<?x8x?x64xf32>) v(%q : memref<?x8x?x64xf32>) outs(%o : memref<?x8x?x64xf32>) lse(%l : memref<?x8x?xf32>) {mask = #attn.mask<causal>}
  return
}

// -----

func.func @d128(%q: memref<?x8x?x128xf32>, %o: memref<?x8x?x128xf32>) {
  attn.attention q(%q : memref<?x8x?x128xf32>) k(%q : memref<?x8x?x128xf32>) v(%q : memref<?x8x?x128xf32>) outs(%o : memref<?x8x?x128xf32>)
  return
}

// -----

func.func @d256(%q: memref<?x8x?x256xf32>, %o: memref<?x8x?x256xf32>) {
  attn.attention q(%q : memref<?x8x?x256xf32>) k(%q : memref<?x8x?x256xf32>) v(%q : memref<?x8x?x256xf32>) outs(%o : memref<?x8x?x256xf32>)
  return
}
