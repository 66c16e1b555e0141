// attn-to-nvvm fails on the attn ops it cannot lower, with an error at each
// one's location, instead of passing them through to its output: here a
// D = 256 backward on sm_86, whose shared memory does not hold the tiles.
// RUN: not attn-opt %s --attn-to-nvvm="chip=sm_86 format=llvm" 2>&1 | FileCheck %s

// CHECK: nvvm-unlowered.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: no tile candidate of sm_86 fits this op (f16, D = 256, Dv = 256)
// CHECK: note: candidate 'bwd_d256_m32n64w4': shared memory: 139776 bytes > 101376 max of sm_86

func.func @grad(%q: tensor<1x4x128x256xf16>, %k: tensor<1x2x128x256xf16>, %o: tensor<1x4x128x256xf16>, %lse: tensor<1x4x128xf32>, %dq: tensor<1x4x128x256xf16>, %dk: tensor<1x2x128x256xf16>, %dv: tensor<1x2x128x256xf16>) -> (tensor<1x4x128x256xf16>, tensor<1x2x128x256xf16>, tensor<1x2x128x256xf16>) {
  %r:3 = attn.attention_grad q(%q : tensor<1x4x128x256xf16>) k(%k : tensor<1x2x128x256xf16>) v(%k : tensor<1x2x128x256xf16>) o(%o : tensor<1x4x128x256xf16>) do(%o : tensor<1x4x128x256xf16>) lse(%lse : tensor<1x4x128xf32>) outs(%dq, %dk, %dv : tensor<1x4x128x256xf16>, tensor<1x2x128x256xf16>, tensor<1x2x128x256xf16>) {mask = #attn.mask<causal>} -> tensor<1x4x128x256xf16>, tensor<1x2x128x256xf16>, tensor<1x2x128x256xf16>
  return %r#0, %r#1, %r#2 : tensor<1x4x128x256xf16>, tensor<1x2x128x256xf16>, tensor<1x2x128x256xf16>
}
