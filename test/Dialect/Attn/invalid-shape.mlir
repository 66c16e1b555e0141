// RUN: attn-opt %s -split-input-file -verify-diagnostics

// Sizes shared between operands (B, Hq, Hkv, Sq, Sk, D, Dv) must agree; the
// message names the operand, the dimension and the size another operand fixed.

func.func @batch(%q: tensor<1x4x8x16xf16>, %k: tensor<2x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{key: dimension 0 (B) is 2 but another operand fixes B = 1}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<2x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @head_dim(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x32xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{key: dimension 3 (D) is 32 but another operand fixes D = 16}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x32xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @seq_k(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x9x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{value: dimension 2 (Sk) is 9 but another operand fixes Sk = 8}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x9x16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @kv_heads(%q: tensor<1x4x8x16xf16>, %k: tensor<1x2x8x16xf16>, %v: tensor<1x1x8x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{value: dimension 1 (Hkv) is 1 but another operand fixes Hkv = 2}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x2x8x16xf16>) v(%v : tensor<1x1x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @output_dv(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x32xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{output: dimension 3 (Dv) is 16 but another operand fixes Dv = 32}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x32xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @output_sq(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x7x16xf16>) {
  // expected-error @+1 {{output: dimension 2 (Sq) is 7 but another operand fixes Sq = 8}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x7x16xf16>) -> tensor<1x4x7x16xf16>
  return
}

// -----

func.func @lse_sq(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>, %l: tensor<1x4x9xf32>) {
  // expected-error @+1 {{lse: dimension 2 (Sq) is 9 but another operand fixes Sq = 8}}
  %r:2 = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) lse(%l : tensor<1x4x9xf32>) -> tensor<1x4x8x16xf16>, tensor<1x4x9xf32>
  return
}

// -----

// A dynamic size in one operand is fixed by a static one in another; the
// mismatch is still found.
func.func @dynamic_then_static(%q: tensor<?x4x?x16xf16>, %k: tensor<?x4x8x16xf16>, %v: tensor<2x4x?x16xf16>, %o: tensor<3x4x?x16xf16>) {
  // expected-error @+1 {{output: dimension 0 (B) is 3 but another operand fixes B = 2}}
  %r = attn.attention q(%q : tensor<?x4x?x16xf16>) k(%k : tensor<?x4x8x16xf16>) v(%v : tensor<2x4x?x16xf16>) outs(%o : tensor<3x4x?x16xf16>) -> tensor<3x4x?x16xf16>
  return
}
