// RUN: attn-opt %s -split-input-file | FileCheck %s
// Printing then re-parsing gives the same IR.
// RUN: attn-opt %s -split-input-file | attn-opt -split-input-file | FileCheck %s

// The serving forms: a packed variable-length batch, a KV cache with
// per-batch key counts, and a paged KV cache.

// CHECK-LABEL: func.func @varlen
// CHECK: attn.attention q(%{{.*}} : memref<1x8x?x64xbf16>) k(%{{.*}} : memref<1x2x?x64xbf16>) v(%{{.*}} : memref<1x2x?x64xbf16>) cu_seqlens_q(%{{.*}} : memref<?xi32>) cu_seqlens_k(%{{.*}} : memref<?xi32>) outs(%{{.*}} : memref<1x8x?x64xbf16>) lse(%{{.*}} : memref<1x8x?xf32>) {mask = #attn.mask<causal>}
func.func @varlen(%q: memref<1x8x?x64xbf16>, %k: memref<1x2x?x64xbf16>, %v: memref<1x2x?x64xbf16>, %cq: memref<?xi32>, %ck: memref<?xi32>, %o: memref<1x8x?x64xbf16>, %l: memref<1x8x?xf32>) {
  attn.attention q(%q : memref<1x8x?x64xbf16>) k(%k : memref<1x2x?x64xbf16>) v(%v : memref<1x2x?x64xbf16>) cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>) outs(%o : memref<1x8x?x64xbf16>) lse(%l : memref<1x8x?xf32>) {mask = #attn.mask<causal>}
  return
}

// -----

// CHECK-LABEL: func.func @kvcache
// CHECK: attn.attention q(%{{.*}} : tensor<4x8x1x128xf16>) k(%{{.*}} : tensor<4x2x4096x128xf16>) v(%{{.*}} : tensor<4x2x4096x128xf16>) seqlens_k(%{{.*}} : tensor<4xi32>) outs(%{{.*}} : tensor<4x8x1x128xf16>) -> tensor<4x8x1x128xf16>
func.func @kvcache(%q: tensor<4x8x1x128xf16>, %k: tensor<4x2x4096x128xf16>, %v: tensor<4x2x4096x128xf16>, %n: tensor<4xi32>, %o: tensor<4x8x1x128xf16>) -> tensor<4x8x1x128xf16> {
  %r = attn.attention q(%q : tensor<4x8x1x128xf16>) k(%k : tensor<4x2x4096x128xf16>) v(%v : tensor<4x2x4096x128xf16>) seqlens_k(%n : tensor<4xi32>) outs(%o : tensor<4x8x1x128xf16>) -> tensor<4x8x1x128xf16>
  return %r : tensor<4x8x1x128xf16>
}

// -----

// Pages of 16 keys; 100 pages shared by 4 sequences of up to 32 pages.
// CHECK-LABEL: func.func @paged
// CHECK: attn.attention q(%{{.*}} : memref<4x8x?x128xbf16>) k(%{{.*}} : memref<100x2x16x128xbf16>) v(%{{.*}} : memref<100x2x16x128xbf16>) seqlens_k(%{{.*}} : memref<4xi32>) block_table(%{{.*}} : memref<4x32xi32>) outs(%{{.*}} : memref<4x8x?x128xbf16>) {mask = #attn.mask<causal_bottom_right>}
func.func @paged(%q: memref<4x8x?x128xbf16>, %k: memref<100x2x16x128xbf16>, %v: memref<100x2x16x128xbf16>, %n: memref<4xi32>, %t: memref<4x32xi32>, %o: memref<4x8x?x128xbf16>) {
  attn.attention q(%q : memref<4x8x?x128xbf16>) k(%k : memref<100x2x16x128xbf16>) v(%v : memref<100x2x16x128xbf16>) seqlens_k(%n : memref<4xi32>) block_table(%t : memref<4x32xi32>) outs(%o : memref<4x8x?x128xbf16>) {mask = #attn.mask<causal_bottom_right>}
  return
}
