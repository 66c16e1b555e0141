// RUN: attn-opt %s -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s

// attn.attention_grad bufferizes like the forward op: dq, dk and dv are
// written in place into their inits' buffers; fresh inits become allocations
// without copies.

// CHECK-LABEL: func.func @grad
// CHECK-SAME: %[[DQ:[a-z0-9]+]]: memref<1x4x8x16xf16>) -> (memref<1x4x8x16xf16>, memref<1x2x8x16xf16>, memref<1x2x8x16xf16>)
// CHECK-DAG: %[[DK:.*]] = memref.alloc() {{.*}} : memref<1x2x8x16xf16>
// CHECK-DAG: %[[DV:.*]] = memref.alloc() {{.*}} : memref<1x2x8x16xf16>
// CHECK-NOT: memref.copy
// CHECK: attn.attention_grad {{.*}} lse(%{{.*}} : memref<1x4x8xf32>) outs(%[[DQ]], %[[DK]], %[[DV]] : memref<1x4x8x16xf16>, memref<1x2x8x16xf16>, memref<1x2x8x16xf16>) {mask = #attn.mask<causal>}{{$}}
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
func.func @grad(%q: tensor<1x4x8x16xf16>, %k: tensor<1x2x8x16xf16>, %v: tensor<1x2x8x16xf16>, %o: tensor<1x4x8x16xf16>, %do: tensor<1x4x8x16xf16>, %lse: tensor<1x4x8xf32>, %dq: tensor<1x4x8x16xf16>) -> (tensor<1x4x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>) {
  %dk = tensor.empty() : tensor<1x2x8x16xf16>
  %dv = tensor.empty() : tensor<1x2x8x16xf16>
  %r:3 = attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x2x8x16xf16>) v(%v : tensor<1x2x8x16xf16>) o(%o : tensor<1x4x8x16xf16>) do(%do : tensor<1x4x8x16xf16>) lse(%lse : tensor<1x4x8xf32>) outs(%dq, %dk, %dv : tensor<1x4x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>) {mask = #attn.mask<causal>} -> tensor<1x4x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>
  return %r#0, %r#1, %r#2 : tensor<1x4x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>
}

// grad_bias is a fourth init: a fresh one becomes an allocation, written in
// place like the others.
// CHECK-LABEL: func.func @grad_bias
// CHECK: %[[DB:.*]] = memref.alloc() {{.*}} : memref<1x1x8x8xf32>
// CHECK-NOT: memref.copy
// CHECK: attn.attention_grad {{.*}} bias(%{{.*}} : memref<1x1x8x8xf16>) outs({{.*}}) grad_bias(%[[DB]] : memref<1x1x8x8xf32>){{$}}
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %[[DB]]
func.func @grad_bias(%q: tensor<1x4x8x16xf16>, %k: tensor<1x2x8x16xf16>, %v: tensor<1x2x8x16xf16>, %o: tensor<1x4x8x16xf16>, %do: tensor<1x4x8x16xf16>, %lse: tensor<1x4x8xf32>, %b: tensor<1x1x8x8xf16>, %dq: tensor<1x4x8x16xf16>, %dk: tensor<1x2x8x16xf16>, %dv: tensor<1x2x8x16xf16>) -> (tensor<1x4x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x1x8x8xf32>) {
  %db = tensor.empty() : tensor<1x1x8x8xf32>
  %r:4 = attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x2x8x16xf16>) v(%v : tensor<1x2x8x16xf16>) o(%o : tensor<1x4x8x16xf16>) do(%do : tensor<1x4x8x16xf16>) lse(%lse : tensor<1x4x8xf32>) bias(%b : tensor<1x1x8x8xf16>) outs(%dq, %dk, %dv : tensor<1x4x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>) grad_bias(%db : tensor<1x1x8x8xf32>) -> tensor<1x4x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x1x8x8xf32>
  return %r#0, %r#1, %r#2, %r#3 : tensor<1x4x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x1x8x8xf32>
}
