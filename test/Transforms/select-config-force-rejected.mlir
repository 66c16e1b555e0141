// A forced candidate goes through the same checks as the selection.
// RUN: attn-opt %s -attn-select-config="target=sm_80 force=mma_d256_m64n64w4" -verify-diagnostics

func.func @too_big(%q: tensor<1x8x?x256xf16>, %k: tensor<1x8x?x256xf16>,
                   %v: tensor<1x8x?x256xf16>, %o: tensor<1x8x?x256xf16>)
    -> tensor<1x8x?x256xf16> {
  // expected-error @+1 {{forced candidate 'mma_d256_m64n64w4' does not fit this op on sm_80: shared memory: 168960 bytes > 166912 max of sm_80}}
  %r = attn.attention q(%q : tensor<1x8x?x256xf16>) k(%k : tensor<1x8x?x256xf16>)
      v(%v : tensor<1x8x?x256xf16>) outs(%o : tensor<1x8x?x256xf16>)
      -> tensor<1x8x?x256xf16>
  return %r : tensor<1x8x?x256xf16>
}
