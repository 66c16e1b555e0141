// attn-to-rocdl fails on the attn ops it cannot lower, with an error at each
// one's location, instead of passing them through to its output: here the
// backward on an RDNA chip, whose table has no backward tile.
// RUN: attn-opt %s -verify-diagnostics --attn-to-rocdl="chip=gfx1100 format=isa"
// RUN: not attn-opt %s --attn-to-rocdl="chip=gfx1100 format=isa" 2>&1 | FileCheck %s

// CHECK: rocdl-unlowered.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'attn.attention_grad' op is not lowered yet for gfx1100: the tile tables have no backward candidate for it

func.func @grad(%q: tensor<1x4x128x64xf16>, %k: tensor<1x2x128x64xf16>, %o: tensor<1x4x128x64xf16>, %lse: tensor<1x4x128xf32>, %dq: tensor<1x4x128x64xf16>, %dk: tensor<1x2x128x64xf16>, %dv: tensor<1x2x128x64xf16>) -> (tensor<1x4x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) {
  // expected-error @below {{'attn.attention_grad' op is not lowered yet for gfx1100: the tile tables have no backward candidate for it}}
  %r:3 = attn.attention_grad q(%q : tensor<1x4x128x64xf16>) k(%k : tensor<1x2x128x64xf16>) v(%k : tensor<1x2x128x64xf16>) o(%o : tensor<1x4x128x64xf16>) do(%o : tensor<1x4x128x64xf16>) lse(%lse : tensor<1x4x128xf32>) outs(%dq, %dk, %dv : tensor<1x4x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) {mask = #attn.mask<causal>} -> tensor<1x4x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>
  return %r#0, %r#1, %r#2 : tensor<1x4x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>
}
