// RUN: attn-opt %s -split-input-file -attn-to-cpu | FileCheck %s
// RUN: attn-opt %s -split-input-file -attn-to-cpu -mlir-print-ir-after-all \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGES

// The whole host pipeline, from the tensor form: no stage ever holds a
// [Sq, Sk] = 1000x1000 buffer (in memref form or as a 10^6-element LLVM
// alloca), and the tile scratch is allocated once, before the grid loops.

// STAGES: IR Dump After AttnTilePass (attn-tile)
// STAGES: scf.forall {{.*}} {
// STAGES: {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
// STAGES-NOT: 1000x1000
// STAGES-NOT: 1000000

// CHECK-LABEL: llvm.func @causal_1000
// CHECK-NOT: llvm.br
// CHECK-COUNT-5: llvm.alloca
// CHECK: llvm.br
// CHECK-NOT: llvm.alloca
// CHECK: llvm.intr.vector.reduce.fadd
// CHECK: llvm.intr.exp2
// CHECK: llvm.intr.fmuladd
// CHECK-NOT: 1000000
func.func @causal_1000(%q: tensor<1x4x1000x64xf32>, %k: tensor<1x4x1000x64xf32>,
                       %v: tensor<1x4x1000x64xf32>, %o: tensor<1x4x1000x64xf32>)
    -> tensor<1x4x1000x64xf32> {
  %r = attn.attention q(%q : tensor<1x4x1000x64xf32>) k(%k : tensor<1x4x1000x64xf32>)
      v(%v : tensor<1x4x1000x64xf32>) outs(%o : tensor<1x4x1000x64xf32>)
      {mask = #attn.mask<causal>} -> tensor<1x4x1000x64xf32>
  return %r : tensor<1x4x1000x64xf32>
}

// -----

// CHECK-LABEL: llvm.func @bf16_bias_softcap_lse
// CHECK: llvm.intr.tanh
// CHECK-NOT: 1000000
func.func @bf16_bias_softcap_lse(
    %q: tensor<2x8x1000x128xbf16>, %k: tensor<2x2x1000x128xbf16>,
    %v: tensor<2x2x1000x128xbf16>, %b: tensor<2x1x1x1000xf32>,
    %o: tensor<2x8x1000x128xbf16>, %l: tensor<2x8x1000xf32>)
    -> (tensor<2x8x1000x128xbf16>, tensor<2x8x1000xf32>) {
  %r:2 = attn.attention q(%q : tensor<2x8x1000x128xbf16>)
      k(%k : tensor<2x2x1000x128xbf16>) v(%v : tensor<2x2x1000x128xbf16>)
      bias(%b : tensor<2x1x1x1000xf32>)
      outs(%o : tensor<2x8x1000x128xbf16>) lse(%l : tensor<2x8x1000xf32>)
      {mask = #attn.mask<sliding_window>, window = array<i64: 256, 0>,
       softcap = 50.0 : f32}
      -> tensor<2x8x1000x128xbf16>, tensor<2x8x1000xf32>
  return %r#0, %r#1 : tensor<2x8x1000x128xbf16>, tensor<2x8x1000xf32>
}
