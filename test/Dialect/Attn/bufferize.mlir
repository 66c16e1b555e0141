// RUN: attn-opt %s -split-input-file -one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s
// With identity layouts at function boundaries, the buffers are plain memrefs.
// RUN: attn-opt %s -split-input-file -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=IDENTITY

// The tensor form bufferizes in place: the op writes its inits' buffers and
// the function returns them. No copy and no allocation are needed.

// CHECK-LABEL: func.func @fwd_lse
// CHECK-SAME: (%[[Q:.*]]: memref<1x4x8x16xf16, strided<[?, ?, ?, ?], offset: ?>>, %[[K:.*]]: memref<1x2x8x16xf16, strided{{.*}}>, %[[V:.*]]: memref<1x2x8x16xf16, strided{{.*}}>, %[[O:.*]]: memref<1x4x8x16xf16, strided{{.*}}>, %[[L:.*]]: memref<1x4x8xf32, strided{{.*}}>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: attn.attention q(%[[Q]] : {{.*}}) k(%[[K]] : {{.*}}) v(%[[V]] : {{.*}}) outs(%[[O]] : {{.*}}) lse(%[[L]] : {{.*}}) {mask = #attn.mask<causal>}{{$}}
// CHECK: return %[[O]], %[[L]]
// IDENTITY-LABEL: func.func @fwd_lse
// IDENTITY: attn.attention q(%{{.*}} : memref<1x4x8x16xf16>) k(%{{.*}} : memref<1x2x8x16xf16>) v(%{{.*}} : memref<1x2x8x16xf16>) outs(%{{.*}} : memref<1x4x8x16xf16>) lse(%{{.*}} : memref<1x4x8xf32>) {mask = #attn.mask<causal>}{{$}}
func.func @fwd_lse(%q: tensor<1x4x8x16xf16>, %k: tensor<1x2x8x16xf16>, %v: tensor<1x2x8x16xf16>, %o: tensor<1x4x8x16xf16>, %l: tensor<1x4x8xf32>) -> (tensor<1x4x8x16xf16>, tensor<1x4x8xf32>) {
  %r:2 = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x2x8x16xf16>) v(%v : tensor<1x2x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) lse(%l : tensor<1x4x8xf32>) {mask = #attn.mask<causal>} -> tensor<1x4x8x16xf16>, tensor<1x4x8xf32>
  return %r#0, %r#1 : tensor<1x4x8x16xf16>, tensor<1x4x8xf32>
}

// -----

// The init is a fresh tensor.empty: it becomes an allocation, and the op
// does not read it (no copy of undefined contents). Dynamic sizes flow
// through.
// CHECK-LABEL: func.func @fresh_init
// CHECK: %[[ALLOC:.*]] = memref.alloc(%{{.*}}, %{{.*}}) {{.*}} : memref<?x2x?x16xf32>
// CHECK-NOT: memref.copy
// CHECK: attn.attention {{.*}} bias(%{{.*}} : memref<1x1x1x?xf32, strided{{.*}}>) outs(%[[ALLOC]] : memref<?x2x?x16xf32>) {scale = 5.000000e-01 : f32}
// CHECK: return %[[ALLOC]]
func.func @fresh_init(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>, %b: tensor<1x1x1x?xf32>) -> tensor<?x2x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %bs = tensor.dim %q, %c0 : tensor<?x2x?x16xf32>
  %sq = tensor.dim %q, %c2 : tensor<?x2x?x16xf32>
  %e = tensor.empty(%bs, %sq) : tensor<?x2x?x16xf32>
  %r = attn.attention q(%q : tensor<?x2x?x16xf32>) k(%k : tensor<?x2x?x16xf32>) v(%v : tensor<?x2x?x16xf32>) bias(%b : tensor<1x1x1x?xf32>) outs(%e : tensor<?x2x?x16xf32>) {scale = 0.5 : f32} -> tensor<?x2x?x16xf32>
  return %r : tensor<?x2x?x16xf32>
}

// -----

// The init's old value is still used after the op: bufferization must copy
// it rather than overwrite it in place.
// CHECK-LABEL: func.func @init_still_live
// CHECK: %[[ALLOC:.*]] = memref.alloc() {{.*}} : memref<1x2x4x8xbf16>
// CHECK: attn.attention {{.*}} outs(%[[ALLOC]] : memref<1x2x4x8xbf16>)
// CHECK: return %[[ALLOC]], %arg3
func.func @init_still_live(%q: tensor<1x2x4x8xbf16>, %k: tensor<1x2x4x8xbf16>, %v: tensor<1x2x4x8xbf16>, %o: tensor<1x2x4x8xbf16>) -> (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>) {
  %r = attn.attention q(%q : tensor<1x2x4x8xbf16>) k(%k : tensor<1x2x4x8xbf16>) v(%v : tensor<1x2x4x8xbf16>) outs(%o : tensor<1x2x4x8xbf16>) -> tensor<1x2x4x8xbf16>
  return %r, %o : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>
}

// -----

// The memref form is left alone.
// CHECK-LABEL: func.func @already_memref
// CHECK: attn.attention q(%arg0 : memref<1x2x4x8xf16>)
func.func @already_memref(%t: memref<1x2x4x8xf16>) {
  attn.attention q(%t : memref<1x2x4x8xf16>) k(%t : memref<1x2x4x8xf16>) v(%t : memref<1x2x4x8xf16>) outs(%t : memref<1x2x4x8xf16>)
  return
}
