// RUN: attn-opt %s -split-input-file -verify-diagnostics

// Each operand of attn.attention has a fixed rank; the message names the
// operand and the layout it expects.

func.func @query_rank(%q: tensor<4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{'attn.attention' op query: expected rank 4 [B, Hq, Sq, D], got rank 3 ('tensor<4x8x16xf16>')}}
  %r = attn.attention q(%q : tensor<4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @key_rank(%q: tensor<1x4x8x16xf16>, %k: tensor<1x1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{key: expected rank 4 [B, Hkv, Sk, D], got rank 5}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @value_rank(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{value: expected rank 4 [B, Hkv, Sk, Dv], got rank 1}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @output_rank(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<4x8x16xf16>) {
  // expected-error @+1 {{output: expected rank 4 [B, Hq, Sq, Dv], got rank 3}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<4x8x16xf16>) -> tensor<4x8x16xf16>
  return
}

// -----

func.func @lse_rank(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>, %l: tensor<1x4x8x1xf32>) {
  // expected-error @+1 {{lse: expected rank 3 [B, Hq, Sq], got rank 4}}
  %r:2 = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) lse(%l : tensor<1x4x8x1xf32>) -> tensor<1x4x8x16xf16>, tensor<1x4x8x1xf32>
  return
}

// -----

func.func @unranked_query(%q: tensor<*xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{query: expected a ranked tensor or memref [B, Hq, Sq, D], got 'tensor<*xf16>'}}
  %r = attn.attention q(%q : tensor<*xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}
