// float32 through a serving form: the split-KV combine kernel stores an f32
// output as it is (it used to emit an f32 -> f32 arith.truncf, which failed
// the lowering of every f32 kvcache and paged op). attn-bundle leaves f32
// out of its serving families until these kernels have run on a GPU.
// RUN: attn-opt %s --attn-to-nvvm="chip=sm_90a format=isa" | FileCheck %s

// CHECK: gpu.binary @[[K:fwd_f32_d64_none_kvcache_[a-z0-9]+]]
// CHECK-SAME: .entry [[K]](
// CHECK-SAME: .entry [[K]]_combine(
func.func @kvcache_f32(%q: memref<?x8x?x64xf32>, %k: memref<?x2x?x64xf32>, %v: memref<?x2x?x64xf32>, %n: memref<?xi32>, %o: memref<?x8x?x64xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf32>) k(%k : memref<?x2x?x64xf32>) v(%v : memref<?x2x?x64xf32>) seqlens_k(%n : memref<?xi32>) outs(%o : memref<?x8x?x64xf32>)
  return
}
