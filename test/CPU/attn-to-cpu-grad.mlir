// RUN: attn-opt %s -attn-to-cpu | FileCheck %s
// RUN: attn-opt %s -attn-to-cpu -mlir-print-ir-after=attn-tile -o /dev/null 2>&1 | FileCheck %s --check-prefix=TILED

// attn.attention_grad through the whole host pipeline, from the tensor form.
// No stage holds a [Sq, Sk] = 1000x1000 buffer. The scratch: delta and the
// f32 dQ accumulator (malloc'ed, freed at the end); the K, V, dK, dV tiles
// of a key block (allocas hoisted out of the grid loops). The f32
// grad_bias accumulates in place in its own buffer, which the function
// returns: it must not be freed.

// TILED: IR Dump After AttnTilePass (attn-tile)
// TILED-NOT: 1000x1000
// TILED: %[[DB:.*]] = memref.alloc() {{.*}} : memref<1x4x1x1000xf32>
// TILED: %[[DELTA:.*]] = memref.alloc() : memref<1x4x1000xf32>
// TILED: %[[DQACC:.*]] = memref.alloc() : memref<1x4x1000x64xf32>
// TILED-COUNT-4: } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
// TILED-NOT: scf.forall
// TILED: memref.dealloc %[[DELTA]]
// TILED-NEXT: memref.dealloc %[[DQACC]]
// TILED-NEXT: return %{{.*}}, %{{.*}}, %{{.*}}, %[[DB]]
// TILED-NOT: 1000x1000

// CHECK-LABEL: llvm.func @grad_causal_1000
// CHECK-COUNT-6: llvm.call @malloc
// CHECK-COUNT-4: llvm.alloca
// CHECK-NOT: llvm.alloca
// CHECK: llvm.intr.tanh
// CHECK: llvm.intr.exp2
// CHECK: llvm.intr.fmuladd
// CHECK-COUNT-2: llvm.call @free
// CHECK-NOT: llvm.call @free
// CHECK-NOT: 1000000
func.func @grad_causal_1000(%q: tensor<1x4x1000x64xbf16>, %k: tensor<1x2x1000x64xbf16>,
                            %v: tensor<1x2x1000x64xbf16>, %o: tensor<1x4x1000x64xbf16>,
                            %do: tensor<1x4x1000x64xbf16>, %lse: tensor<1x4x1000xf32>,
                            %b: tensor<1x4x1x1000xf32>)
    -> (tensor<1x4x1000x64xbf16>, tensor<1x2x1000x64xbf16>,
        tensor<1x2x1000x64xbf16>, tensor<1x4x1x1000xf32>) {
  %dq0 = tensor.empty() : tensor<1x4x1000x64xbf16>
  %dk0 = tensor.empty() : tensor<1x2x1000x64xbf16>
  %dv0 = tensor.empty() : tensor<1x2x1000x64xbf16>
  %db0 = tensor.empty() : tensor<1x4x1x1000xf32>
  %r:4 = attn.attention_grad q(%q : tensor<1x4x1000x64xbf16>)
      k(%k : tensor<1x2x1000x64xbf16>) v(%v : tensor<1x2x1000x64xbf16>)
      o(%o : tensor<1x4x1000x64xbf16>) do(%do : tensor<1x4x1000x64xbf16>)
      lse(%lse : tensor<1x4x1000xf32>) bias(%b : tensor<1x4x1x1000xf32>)
      outs(%dq0, %dk0, %dv0 : tensor<1x4x1000x64xbf16>,
           tensor<1x2x1000x64xbf16>, tensor<1x2x1000x64xbf16>)
      grad_bias(%db0 : tensor<1x4x1x1000xf32>)
      {mask = #attn.mask<causal>, softcap = 30.0 : f32}
      -> tensor<1x4x1000x64xbf16>, tensor<1x2x1000x64xbf16>,
         tensor<1x2x1000x64xbf16>, tensor<1x4x1x1000xf32>
  return %r#0, %r#1, %r#2, %r#3
      : tensor<1x4x1000x64xbf16>, tensor<1x2x1000x64xbf16>,
        tensor<1x2x1000x64xbf16>, tensor<1x4x1x1000xf32>
}
