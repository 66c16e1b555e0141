// RUN: attn-opt %s -split-input-file -verify-diagnostics

// Grouped-query attention: every key/value head serves Hq / Hkv query heads.

func.func @not_multiple(%q: tensor<1x6x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x6x8x16xf16>) {
  // expected-error @+1 {{key: query heads Hq = 6 must be a multiple of key/value heads Hkv = 4}}
  %r = attn.attention q(%q : tensor<1x6x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x6x8x16xf16>) -> tensor<1x6x8x16xf16>
  return
}

// -----

func.func @more_kv_heads(%q: tensor<1x2x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x2x8x16xf16>) {
  // expected-error @+1 {{key: query heads Hq = 2 must be a multiple of key/value heads Hkv = 4}}
  %r = attn.attention q(%q : tensor<1x2x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x2x8x16xf16>) -> tensor<1x2x8x16xf16>
  return
}
