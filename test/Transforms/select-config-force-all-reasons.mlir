// A forced candidate's error names every check it fails, the decisive ones
// (here the mask) and the others (the head dim) alike.
// RUN: attn-opt %s -attn-select-config="target=sm_90a force=wgmma_d64_m192n128w12" -verify-diagnostics

func.func @d96_causal(%q: tensor<1x8x?x96xbf16>, %o: tensor<1x8x?x96xbf16>) -> tensor<1x8x?x96xbf16> {
  // expected-error @+1 {{forced candidate 'wgmma_d64_m192n128w12' does not fit this op on sm_90a: mask: used only for none, the op has causal; head dim D = 96 (padded to 128 for wgmma.m64nNk16): above the candidate's bucket 64}}
  %r = attn.attention q(%q : tensor<1x8x?x96xbf16>) k(%q : tensor<1x8x?x96xbf16>) v(%q : tensor<1x8x?x96xbf16>)
      outs(%o : tensor<1x8x?x96xbf16>) {mask = #attn.mask<causal>} -> tensor<1x8x?x96xbf16>
  return %r : tensor<1x8x?x96xbf16>
}
