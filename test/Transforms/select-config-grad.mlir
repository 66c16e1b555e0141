// attn.attention_grad gets a backward candidate, attn.attention a forward
// one. force pins the ops of its candidate's direction only, so a training
// step can pin its forward tile and still get a backward one.
// RUN: attn-opt %s -split-input-file -attn-select-config=target=host | FileCheck %s
// RUN: attn-opt %s -split-input-file -attn-select-config="target=host force=host_m16n32" | FileCheck %s --check-prefix=FWD
// RUN: attn-opt %s -split-input-file -attn-select-config="target=host profile=all" | FileCheck %s

// CHECK-LABEL: func.func @step
// CHECK: attn.attention {{.*}}config = #attn.config<name = "host_m32n64"
// CHECK: attn.attention_grad {{.*}}config = #attn.config<name = "host_bwd_m32n32", block_m = 32, block_n = 32, warps = 1, stages = 1, pipeline = simple, acc_in_registers = false, mma = fma>
// FWD-LABEL: func.func @step
// FWD: attn.attention {{.*}}config = #attn.config<name = "host_m16n32"
// FWD: attn.attention_grad {{.*}}config = #attn.config<name = "host_bwd_m32n32"
func.func @step(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>,
                %v: tensor<1x2x?x64xf32>, %o0: tensor<1x8x?x64xf32>,
                %l0: tensor<1x8x?xf32>, %do: tensor<1x8x?x64xf32>)
    -> (tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>) {
  %o, %lse = attn.attention q(%q : tensor<1x8x?x64xf32>) k(%k : tensor<1x2x?x64xf32>)
      v(%v : tensor<1x2x?x64xf32>) outs(%o0 : tensor<1x8x?x64xf32>)
      lse(%l0 : tensor<1x8x?xf32>) -> tensor<1x8x?x64xf32>, tensor<1x8x?xf32>
  %dq, %dk, %dv = attn.attention_grad
      q(%q : tensor<1x8x?x64xf32>) k(%k : tensor<1x2x?x64xf32>)
      v(%v : tensor<1x2x?x64xf32>) o(%o : tensor<1x8x?x64xf32>)
      do(%do : tensor<1x8x?x64xf32>) lse(%lse : tensor<1x8x?xf32>)
      outs(%q, %k, %v : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>,
           tensor<1x2x?x64xf32>)
      -> tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>
  return %dq, %dk, %dv
      : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>
}

// -----

// A config already on the op is kept.
// CHECK-LABEL: func.func @kept
// CHECK: attn.attention_grad {{.*}}config = #attn.config<name = "mine"
func.func @kept(%t: memref<1x2x8x16xf16>, %lse: memref<1x2x8xf32>) {
  attn.attention_grad q(%t : memref<1x2x8x16xf16>) k(%t : memref<1x2x8x16xf16>)
      v(%t : memref<1x2x8x16xf16>) o(%t : memref<1x2x8x16xf16>)
      do(%t : memref<1x2x8x16xf16>) lse(%lse : memref<1x2x8xf32>)
      outs(%t, %t, %t : memref<1x2x8x16xf16>, memref<1x2x8x16xf16>,
           memref<1x2x8x16xf16>)
      {config = #attn.config<name = "mine", block_m = 8, block_n = 8, warps = 1,
                             stages = 1, pipeline = simple,
                             acc_in_registers = false, mma = fma>}
  return
}
