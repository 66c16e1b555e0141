// RUN: attn-opt %s -split-input-file -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// The generic form parses back to the same custom form.
// RUN: attn-opt %s -split-input-file -mlir-print-op-generic | attn-opt -split-input-file | FileCheck %s

// GENERIC-LABEL: sym_name = "fwd"
// GENERIC: "attn.attention"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{mask = #attn.mask<causal>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1>, scale = 1.250000e-01 : f32}> : (tensor<1x4x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x1x8x8xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8xf32>) -> (tensor<1x4x8x16xf16>, tensor<1x4x8xf32>)
// CHECK-LABEL: func.func @fwd
// CHECK: attn.attention q(%{{.*}} : tensor<1x4x8x16xf16>) k(%{{.*}} : tensor<1x2x8x16xf16>) v(%{{.*}} : tensor<1x2x8x16xf16>) bias(%{{.*}} : tensor<1x1x8x8xf16>) outs(%{{.*}} : tensor<1x4x8x16xf16>) lse(%{{.*}} : tensor<1x4x8xf32>) {mask = #attn.mask<causal>, scale = 1.250000e-01 : f32} -> tensor<1x4x8x16xf16>, tensor<1x4x8xf32>
func.func @fwd(%q: tensor<1x4x8x16xf16>, %k: tensor<1x2x8x16xf16>, %v: tensor<1x2x8x16xf16>, %b: tensor<1x1x8x8xf16>, %o: tensor<1x4x8x16xf16>, %l: tensor<1x4x8xf32>) -> (tensor<1x4x8x16xf16>, tensor<1x4x8xf32>) {
  %r:2 = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x2x8x16xf16>) v(%v : tensor<1x2x8x16xf16>) bias(%b : tensor<1x1x8x8xf16>) outs(%o : tensor<1x4x8x16xf16>) lse(%l : tensor<1x4x8xf32>) {mask = #attn.mask<causal>, scale = 0.125 : f32} -> tensor<1x4x8x16xf16>, tensor<1x4x8xf32>
  return %r#0, %r#1 : tensor<1x4x8x16xf16>, tensor<1x4x8xf32>
}

// -----

// A hand-written generic op without the optional operands.
// GENERIC-LABEL: sym_name = "generic_in"
// GENERIC: "attn.attention"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{mask = #attn.mask<none>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0>}> : (memref<2x2x4x8xf32>, memref<2x2x4x8xf32>, memref<2x2x4x8xf32>, memref<2x2x4x8xf32>) -> ()
// CHECK-LABEL: func.func @generic_in
// CHECK: attn.attention q(%{{.*}} : memref<2x2x4x8xf32>) k(%{{.*}} : memref<2x2x4x8xf32>) v(%{{.*}} : memref<2x2x4x8xf32>) outs(%{{.*}} : memref<2x2x4x8xf32>){{$}}
func.func @generic_in(%q: memref<2x2x4x8xf32>, %o: memref<2x2x4x8xf32>) {
  "attn.attention"(%q, %q, %q, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0>}> : (memref<2x2x4x8xf32>, memref<2x2x4x8xf32>, memref<2x2x4x8xf32>, memref<2x2x4x8xf32>) -> ()
  return
}

// -----

// GENERIC-LABEL: sym_name = "grad"
// GENERIC: "attn.attention_grad"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{mask = #attn.mask<sliding_window>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0>, window = array<i64: 16, 0>}> : (memref<1x2x8x16xf16>, memref<1x2x8x16xf16>, memref<1x2x8x16xf16>, memref<1x2x8x16xf16>, memref<1x2x8x16xf16>, memref<1x2x8xf32>, memref<1x2x8x16xf16>, memref<1x2x8x16xf16>, memref<1x2x8x16xf16>) -> ()
// CHECK-LABEL: func.func @grad
// CHECK: attn.attention_grad {{.*}} {mask = #attn.mask<sliding_window>, window = array<i64: 16, 0>}
func.func @grad(%t: memref<1x2x8x16xf16>, %lse: memref<1x2x8xf32>) {
  attn.attention_grad q(%t : memref<1x2x8x16xf16>) k(%t : memref<1x2x8x16xf16>) v(%t : memref<1x2x8x16xf16>) o(%t : memref<1x2x8x16xf16>) do(%t : memref<1x2x8x16xf16>) lse(%lse : memref<1x2x8xf32>) outs(%t, %t, %t : memref<1x2x8x16xf16>, memref<1x2x8x16xf16>, memref<1x2x8x16xf16>) {mask = #attn.mask<sliding_window>, window = array<i64: 16, 0>}
  return
}
