// RUN: attn-opt %s -split-input-file -verify-diagnostics

// q, k, v and the output share one of f16, bf16, f32; lse is always f32.

func.func @f64(%q: tensor<1x4x8x16xf64>, %k: tensor<1x4x8x16xf64>, %v: tensor<1x4x8x16xf64>, %o: tensor<1x4x8x16xf64>) {
  // expected-error @+1 {{query: expected element type f16, bf16 or f32, got 'f64'}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf64>) k(%k : tensor<1x4x8x16xf64>) v(%v : tensor<1x4x8x16xf64>) outs(%o : tensor<1x4x8x16xf64>) -> tensor<1x4x8x16xf64>
  return
}

// -----

func.func @integer(%q: tensor<1x4x8x16xi8>, %k: tensor<1x4x8x16xi8>, %v: tensor<1x4x8x16xi8>, %o: tensor<1x4x8x16xi8>) {
  // expected-error @+1 {{query: expected element type f16, bf16 or f32, got 'i8'}}
  %r = attn.attention q(%q : tensor<1x4x8x16xi8>) k(%k : tensor<1x4x8x16xi8>) v(%v : tensor<1x4x8x16xi8>) outs(%o : tensor<1x4x8x16xi8>) -> tensor<1x4x8x16xi8>
  return
}

// -----

func.func @key_type(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xbf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{key: expected element type 'f16', got 'bf16'}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xbf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @value_type(%q: tensor<1x4x8x16xbf16>, %k: tensor<1x4x8x16xbf16>, %v: tensor<1x4x8x16xf32>, %o: tensor<1x4x8x16xbf16>) {
  // expected-error @+1 {{value: expected element type 'bf16', got 'f32'}}
  %r = attn.attention q(%q : tensor<1x4x8x16xbf16>) k(%k : tensor<1x4x8x16xbf16>) v(%v : tensor<1x4x8x16xf32>) outs(%o : tensor<1x4x8x16xbf16>) -> tensor<1x4x8x16xbf16>
  return
}

// -----

func.func @output_type(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{output: expected element type 'f16', got 'f32'}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @lse_type(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>, %l: tensor<1x4x8xf16>) {
  // expected-error @+1 {{lse: expected element type 'f32', got 'f16'}}
  %r:2 = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) lse(%l : tensor<1x4x8xf16>) -> tensor<1x4x8x16xf16>, tensor<1x4x8xf16>
  return
}
