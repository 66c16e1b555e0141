// RUN: attn-opt %s -split-input-file | FileCheck %s
// Printing then re-parsing gives the same IR.
// RUN: attn-opt %s -split-input-file | attn-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @minimal
// CHECK: attn.attention q(%{{.*}} : tensor<1x4x8x16xf16>) k(%{{.*}} : tensor<1x4x8x16xf16>) v(%{{.*}} : tensor<1x4x8x16xf16>) outs(%{{.*}} : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
func.func @minimal(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16> {
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return %r : tensor<1x4x8x16xf16>
}

// -----

// GQA (16 query heads, 4 key/value heads), dynamic B/Sq/Sk, lse, causal.
// CHECK-LABEL: func.func @gqa_dynamic_lse
// CHECK: %{{.*}}:2 = attn.attention q(%{{.*}} : tensor<?x16x?x128xbf16>) k(%{{.*}} : tensor<?x4x?x128xbf16>) v(%{{.*}} : tensor<?x4x?x64xbf16>) outs(%{{.*}} : tensor<?x16x?x64xbf16>) lse(%{{.*}} : tensor<?x16x?xf32>) {mask = #attn.mask<causal>} -> tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
func.func @gqa_dynamic_lse(%q: tensor<?x16x?x128xbf16>, %k: tensor<?x4x?x128xbf16>, %v: tensor<?x4x?x64xbf16>, %o: tensor<?x16x?x64xbf16>, %l: tensor<?x16x?xf32>) -> (tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>) {
  %r:2 = attn.attention q(%q : tensor<?x16x?x128xbf16>) k(%k : tensor<?x4x?x128xbf16>) v(%v : tensor<?x4x?x64xbf16>) outs(%o : tensor<?x16x?x64xbf16>) lse(%l : tensor<?x16x?xf32>) {mask = #attn.mask<causal>} -> tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
  return %r#0, %r#1 : tensor<?x16x?x64xbf16>, tensor<?x16x?xf32>
}

// -----

// Broadcast f32 bias, explicit scale, softcap, bottom-right causal mask.
// CHECK-LABEL: func.func @bias_scale_softcap
// CHECK: attn.attention q(%{{.*}}) k(%{{.*}}) v(%{{.*}}) bias(%{{.*}} : tensor<1x1x8x32xf32>) outs(%{{.*}}) {mask = #attn.mask<causal_bottom_right>, scale = 1.250000e-01 : f32, softcap = 3.000000e+01 : f32}
func.func @bias_scale_softcap(%q: tensor<2x4x8x64xf16>, %k: tensor<2x4x32x64xf16>, %v: tensor<2x4x32x64xf16>, %b: tensor<1x1x8x32xf32>, %o: tensor<2x4x8x64xf16>) -> tensor<2x4x8x64xf16> {
  %r = attn.attention q(%q : tensor<2x4x8x64xf16>) k(%k : tensor<2x4x32x64xf16>) v(%v : tensor<2x4x32x64xf16>) bias(%b : tensor<1x1x8x32xf32>) outs(%o : tensor<2x4x8x64xf16>) {mask = #attn.mask<causal_bottom_right>, scale = 0.125 : f32, softcap = 30.0 : f32} -> tensor<2x4x8x64xf16>
  return %r : tensor<2x4x8x64xf16>
}

// -----

// Memref form: no results. Sliding window with an unbounded right side, and
// a tile configuration.
// CHECK-LABEL: func.func @memref_window_config
// CHECK: attn.attention q(%{{.*}} : memref<?x8x?x64xf32>) k(%{{.*}} : memref<?x1x?x64xf32>) v(%{{.*}} : memref<?x1x?x64xf32>) outs(%{{.*}} : memref<?x8x?x64xf32>) lse(%{{.*}} : memref<?x8x?xf32>)
// CHECK-SAME: config = #attn.config<name = "sm80_f32_d64", block_m = 64, block_n = 32, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = fma>
// CHECK-SAME: mask = #attn.mask<sliding_window>, window = array<i64: 128, -1>
// CHECK-NOT: ->
func.func @memref_window_config(%q: memref<?x8x?x64xf32>, %k: memref<?x1x?x64xf32>, %v: memref<?x1x?x64xf32>, %o: memref<?x8x?x64xf32>, %l: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf32>) k(%k : memref<?x1x?x64xf32>) v(%v : memref<?x1x?x64xf32>) outs(%o : memref<?x8x?x64xf32>) lse(%l : memref<?x8x?xf32>) {mask = #attn.mask<sliding_window>, window = array<i64: 128, -1>, config = #attn.config<name = "sm80_f32_d64", block_m = 64, block_n = 32, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = fma>}
  return
}

// -----

// Empty problems (B, Sq or Sk of zero) are valid: every row is empty.
// CHECK-LABEL: func.func @empty
// CHECK: attn.attention q(%{{.*}} : memref<0x2x0x16xf16>) k(%{{.*}} : memref<0x2x0x16xf16>)
func.func @empty(%q: memref<0x2x0x16xf16>, %k: memref<0x2x0x16xf16>, %v: memref<0x2x0x16xf16>, %o: memref<0x2x0x16xf16>) {
  attn.attention q(%q : memref<0x2x0x16xf16>) k(%k : memref<0x2x0x16xf16>) v(%v : memref<0x2x0x16xf16>) outs(%o : memref<0x2x0x16xf16>)
  return
}

// -----

// Strided memrefs (views of a larger buffer) are accepted.
// CHECK-LABEL: func.func @strided
// CHECK: attn.attention q(%{{.*}} : memref<1x2x8x16xf16, strided<[512, 16, 64, 1]>>)
func.func @strided(%q: memref<1x2x8x16xf16, strided<[512, 16, 64, 1]>>, %k: memref<1x2x8x16xf16>, %v: memref<1x2x8x16xf16>, %o: memref<1x2x8x16xf16>) {
  attn.attention q(%q : memref<1x2x8x16xf16, strided<[512, 16, 64, 1]>>) k(%k : memref<1x2x8x16xf16>) v(%v : memref<1x2x8x16xf16>) outs(%o : memref<1x2x8x16xf16>)
  return
}

// -----

// CHECK-LABEL: func.func @grad
// CHECK: %{{.*}}:3 = attn.attention_grad q(%{{.*}} : tensor<1x8x128x64xf16>) k(%{{.*}} : tensor<1x2x128x64xf16>) v(%{{.*}} : tensor<1x2x128x64xf16>) o(%{{.*}} : tensor<1x8x128x64xf16>) do(%{{.*}} : tensor<1x8x128x64xf16>) lse(%{{.*}} : tensor<1x8x128xf32>) outs(%{{.*}}, %{{.*}}, %{{.*}} : tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) {mask = #attn.mask<causal>} -> tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>
func.func @grad(%q: tensor<1x8x128x64xf16>, %k: tensor<1x2x128x64xf16>, %v: tensor<1x2x128x64xf16>, %o: tensor<1x8x128x64xf16>, %do: tensor<1x8x128x64xf16>, %lse: tensor<1x8x128xf32>, %dq: tensor<1x8x128x64xf16>, %dk: tensor<1x2x128x64xf16>, %dv: tensor<1x2x128x64xf16>) -> (tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) {
  %r:3 = attn.attention_grad q(%q : tensor<1x8x128x64xf16>) k(%k : tensor<1x2x128x64xf16>) v(%v : tensor<1x2x128x64xf16>) o(%o : tensor<1x8x128x64xf16>) do(%do : tensor<1x8x128x64xf16>) lse(%lse : tensor<1x8x128xf32>) outs(%dq, %dk, %dv : tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) {mask = #attn.mask<causal>} -> tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>
  return %r#0, %r#1, %r#2 : tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>
}

// -----

// CHECK-LABEL: func.func @grad_memref_bias
// CHECK: attn.attention_grad q(%{{.*}} : memref<?x4x?x32xbf16>) {{.*}} bias(%{{.*}} : memref<1x4x1x?xbf16>) outs(%{{.*}}, %{{.*}}, %{{.*}} : memref<?x4x?x32xbf16>, memref<?x4x?x32xbf16>, memref<?x4x?x32xbf16>) {scale = 2.500000e-01 : f32}
func.func @grad_memref_bias(%q: memref<?x4x?x32xbf16>, %k: memref<?x4x?x32xbf16>, %v: memref<?x4x?x32xbf16>, %o: memref<?x4x?x32xbf16>, %do: memref<?x4x?x32xbf16>, %lse: memref<?x4x?xf32>, %b: memref<1x4x1x?xbf16>, %dq: memref<?x4x?x32xbf16>, %dk: memref<?x4x?x32xbf16>, %dv: memref<?x4x?x32xbf16>) {
  attn.attention_grad q(%q : memref<?x4x?x32xbf16>) k(%k : memref<?x4x?x32xbf16>) v(%v : memref<?x4x?x32xbf16>) o(%o : memref<?x4x?x32xbf16>) do(%do : memref<?x4x?x32xbf16>) lse(%lse : memref<?x4x?xf32>) bias(%b : memref<1x4x1x?xbf16>) outs(%dq, %dk, %dv : memref<?x4x?x32xbf16>, memref<?x4x?x32xbf16>, memref<?x4x?x32xbf16>) {scale = 0.25 : f32}
  return
}

// -----

// grad_bias: the gradient of a broadcast bias, in f32 (tensor form) and in
// the bias's type (memref form).
// CHECK-LABEL: func.func @grad_bias
// CHECK: %{{.*}}:4 = attn.attention_grad {{.*}} bias(%{{.*}} : tensor<1x8x128x128xf16>) outs(%{{.*}}, %{{.*}}, %{{.*}} : tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) grad_bias(%{{.*}} : tensor<1x8x128x128xf32>) {mask = #attn.mask<causal>} -> tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x8x128x128xf32>
func.func @grad_bias(%q: tensor<1x8x128x64xf16>, %k: tensor<1x2x128x64xf16>, %v: tensor<1x2x128x64xf16>, %o: tensor<1x8x128x64xf16>, %do: tensor<1x8x128x64xf16>, %lse: tensor<1x8x128xf32>, %b: tensor<1x8x128x128xf16>, %dq: tensor<1x8x128x64xf16>, %dk: tensor<1x2x128x64xf16>, %dv: tensor<1x2x128x64xf16>, %db: tensor<1x8x128x128xf32>) -> (tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x8x128x128xf32>) {
  %r:4 = attn.attention_grad q(%q : tensor<1x8x128x64xf16>) k(%k : tensor<1x2x128x64xf16>) v(%v : tensor<1x2x128x64xf16>) o(%o : tensor<1x8x128x64xf16>) do(%do : tensor<1x8x128x64xf16>) lse(%lse : tensor<1x8x128xf32>) bias(%b : tensor<1x8x128x128xf16>) outs(%dq, %dk, %dv : tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) grad_bias(%db : tensor<1x8x128x128xf32>) {mask = #attn.mask<causal>} -> tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x8x128x128xf32>
  return %r#0, %r#1, %r#2, %r#3 : tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x8x128x128xf32>
}

// -----

// CHECK-LABEL: func.func @grad_bias_memref
// CHECK: attn.attention_grad {{.*}} bias(%{{.*}} : memref<1x4x1x?xbf16>) outs(%{{.*}}, %{{.*}}, %{{.*}} : memref<?x4x?x32xbf16>, memref<?x4x?x32xbf16>, memref<?x4x?x32xbf16>) grad_bias(%{{.*}} : memref<1x4x1x?xbf16>){{$}}
func.func @grad_bias_memref(%q: memref<?x4x?x32xbf16>, %lse: memref<?x4x?xf32>, %b: memref<1x4x1x?xbf16>, %db: memref<1x4x1x?xbf16>) {
  attn.attention_grad q(%q : memref<?x4x?x32xbf16>) k(%q : memref<?x4x?x32xbf16>) v(%q : memref<?x4x?x32xbf16>) o(%q : memref<?x4x?x32xbf16>) do(%q : memref<?x4x?x32xbf16>) lse(%lse : memref<?x4x?xf32>) bias(%b : memref<1x4x1x?xbf16>) outs(%q, %q, %q : memref<?x4x?x32xbf16>, memref<?x4x?x32xbf16>, memref<?x4x?x32xbf16>) grad_bias(%db : memref<1x4x1x?xbf16>)
  return
}
