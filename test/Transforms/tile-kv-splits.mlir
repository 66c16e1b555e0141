// RUN: attn-opt %s -split-input-file -attn-tile="kv-splits=3" | FileCheck %s
// RUN: not attn-opt %s -split-input-file -attn-tile="kv-splits=0" 2>&1 | FileCheck %s --check-prefix=BAD

// A KV-cache op's key loop runs once per split, each split's rows are kept
// with their lse, then merged; a dense op is not split.

#cfg = #attn.config<name = "t", block_m = 16, block_n = 32, warps = 1, stages = 1, pipeline = simple, acc_in_registers = false, mma = fma>

// CHECK-LABEL: func.func @kvcache
// CHECK: memref.alloca() : memref<3x16x64xf32>
// CHECK: memref.alloca() : memref<3x16xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %c3{{.*}} step
// CHECK: math.exp
// CHECK: math.log
// BAD: error: attn-tile: kv-splits must be in [1, 256], got 0
func.func @kvcache(%q: memref<?x4x?x64xf32>, %k: memref<?x2x?x64xf32>, %v: memref<?x2x?x64xf32>, %n: memref<?xi32>, %o: memref<?x4x?x64xf32>, %l: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x64xf32>) k(%k : memref<?x2x?x64xf32>) v(%v : memref<?x2x?x64xf32>) seqlens_k(%n : memref<?xi32>) outs(%o : memref<?x4x?x64xf32>) lse(%l : memref<?x4x?xf32>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "t", block_m = 16, block_n = 32, warps = 1, stages = 1, pipeline = simple, acc_in_registers = false, mma = fma>

// CHECK-LABEL: func.func @dense
// CHECK-NOT: memref<3x16x64xf32>
// CHECK: return
func.func @dense(%q: memref<?x4x?x64xf32>, %k: memref<?x2x?x64xf32>, %v: memref<?x2x?x64xf32>, %o: memref<?x4x?x64xf32>) {
  attn.attention q(%q : memref<?x4x?x64xf32>) k(%k : memref<?x2x?x64xf32>) v(%v : memref<?x2x?x64xf32>) outs(%o : memref<?x4x?x64xf32>) {config = #cfg}
  return
}
