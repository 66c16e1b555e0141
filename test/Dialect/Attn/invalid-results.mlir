// RUN: attn-opt %s -split-input-file -verify-diagnostics

// The tensor form returns one result per init (output, then lse) with the
// init's type; the memref form returns nothing.

func.func @missing_lse_result(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>, %l: tensor<1x4x8xf32>) {
  // expected-error @+1 {{results: expected 2 (one per init: output, lse), got 1}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) lse(%l : tensor<1x4x8xf32>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @no_results(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{results: expected 1 (one per init: output), got 0}}
  attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>)
  return
}

// -----

func.func @result_type(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{results: result 0 has type 'tensor<1x4x?x16xf16>' but its init output has type 'tensor<1x4x8x16xf16>'}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x?x16xf16>
  return
}

// -----

func.func @memref_with_result(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{results: the memref form has no results, got 1}}
  %r = attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : memref<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @memref_result_type(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{result #0 must be variadic of ranked tensor of any type values, but got 'memref<1x4x8x16xf16>'}}
  %r = attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : memref<1x4x8x16xf16>) -> memref<1x4x8x16xf16>
  return
}
