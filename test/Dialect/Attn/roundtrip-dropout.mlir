// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s -mlir-print-op-generic | attn-opt | FileCheck %s

// Dropout: a run-time probability, seed and offset on both ops.

// CHECK-LABEL: func @forward
// CHECK: attn.attention q(%{{.*}}) k(%{{.*}}) v(%{{.*}}) dropout(%arg3, %arg4, %arg5) outs(
func.func @forward(%q: tensor<2x8x?x64xbf16>, %k: tensor<2x2x?x64xbf16>,
                   %v: tensor<2x2x?x64xbf16>, %p: f32, %seed: i64,
                   %offset: i32, %o: tensor<2x8x?x64xbf16>,
                   %l: tensor<2x8x?xf32>)
    -> (tensor<2x8x?x64xbf16>, tensor<2x8x?xf32>) {
  %0, %1 = attn.attention q(%q : tensor<2x8x?x64xbf16>)
      k(%k : tensor<2x2x?x64xbf16>) v(%v : tensor<2x2x?x64xbf16>)
      dropout(%p, %seed, %offset)
      outs(%o : tensor<2x8x?x64xbf16>) lse(%l : tensor<2x8x?xf32>)
      {mask = #attn.mask<causal>}
      -> tensor<2x8x?x64xbf16>, tensor<2x8x?xf32>
  return %0, %1 : tensor<2x8x?x64xbf16>, tensor<2x8x?xf32>
}

// CHECK-LABEL: func @backward
// CHECK: attn.attention_grad {{.*}} bias(%{{.*}} : memref<1x1x128x128xf16>) dropout(%arg7, %arg8, %arg9) outs(
func.func @backward(%q: memref<1x4x128x64xf16>, %k: memref<1x4x128x64xf16>,
                    %v: memref<1x4x128x64xf16>, %o: memref<1x4x128x64xf16>,
                    %do: memref<1x4x128x64xf16>, %lse: memref<1x4x128xf32>,
                    %b: memref<1x1x128x128xf16>, %p: f32, %seed: i64,
                    %offset: i32, %dq: memref<1x4x128x64xf16>,
                    %dk: memref<1x4x128x64xf16>, %dv: memref<1x4x128x64xf16>) {
  attn.attention_grad q(%q : memref<1x4x128x64xf16>)
      k(%k : memref<1x4x128x64xf16>) v(%v : memref<1x4x128x64xf16>)
      o(%o : memref<1x4x128x64xf16>) do(%do : memref<1x4x128x64xf16>)
      lse(%lse : memref<1x4x128xf32>) bias(%b : memref<1x1x128x128xf16>)
      dropout(%p, %seed, %offset)
      outs(%dq, %dk, %dv : memref<1x4x128x64xf16>, memref<1x4x128x64xf16>,
           memref<1x4x128x64xf16>)
  return
}
