// attn.attention_grad needs a backward candidate: on a chip without any the
// op is not lowered yet; a profile without the backward direction rejects it
// naming every candidate's reason, and a forced backward candidate goes
// through the same checks as the selection.
// RUN: attn-opt %s -attn-select-config=target=gfx1100 -verify-diagnostics
// RUN: not attn-opt %s -attn-select-config="target=host profile=inference" 2>&1 | FileCheck %s --check-prefix=PROFILE
// RUN: not attn-opt %s -attn-select-config="target=host force=host_bwd_m32n32" 2>&1 | FileCheck %s --check-prefix=FORCED

// PROFILE: error: no tile candidate of host fits this op (f16, D = 320, Dv = 320)
// PROFILE: note: candidate 'host_m32n64': direction: a forward kernel, the op needs backward
// PROFILE: note: candidate 'host_bwd_m32n32': profile inference: excludes backward kernels
// FORCED: error: forced candidate 'host_bwd_m32n32' does not fit this op on host: head dim D = 320: host handles at most 256
func.func @d320(%t: tensor<1x8x?x320xf16>, %lse: tensor<1x8x?xf32>)
    -> (tensor<1x8x?x320xf16>, tensor<1x8x?x320xf16>, tensor<1x8x?x320xf16>) {
  // expected-error @+1 {{'attn.attention_grad' op is not lowered yet for gfx1100: the tile tables have no backward candidate for it}}
  %dq, %dk, %dv = attn.attention_grad
      q(%t : tensor<1x8x?x320xf16>) k(%t : tensor<1x8x?x320xf16>)
      v(%t : tensor<1x8x?x320xf16>) o(%t : tensor<1x8x?x320xf16>)
      do(%t : tensor<1x8x?x320xf16>) lse(%lse : tensor<1x8x?xf32>)
      outs(%t, %t, %t : tensor<1x8x?x320xf16>, tensor<1x8x?x320xf16>,
           tensor<1x8x?x320xf16>)
      -> tensor<1x8x?x320xf16>, tensor<1x8x?x320xf16>, tensor<1x8x?x320xf16>
  return %dq, %dk, %dv
      : tensor<1x8x?x320xf16>, tensor<1x8x?x320xf16>, tensor<1x8x?x320xf16>
}
