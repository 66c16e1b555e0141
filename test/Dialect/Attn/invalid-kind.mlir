// RUN: attn-opt %s -split-input-file -verify-diagnostics

// The op is either all tensors (value form) or all memrefs (buffer form).

func.func @mixed(%q: tensor<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{key: expected a tensor like query, got 'memref<1x4x8x16xf16>' (operands must be all tensors or all memrefs)}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @mixed_init(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{output: expected a memref like query}}
  %r = attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @vector(%q: vector<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{operand #0 must be tensor or memref of shape [B, Hq, Sq, D] (query), but got 'vector<1x4x8x16xf16>'}}
  %r = "attn.attention"(%q, %k, %v, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0>}> : (vector<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @scalar_custom(%q: f16, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // The custom form parses operand types as shaped types.
  // expected-error @+1 {{invalid kind of type specified}}
  %r = attn.attention q(%q : f16) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @scalar_generic(%q: f16, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{operand #0 must be tensor or memref of shape [B, Hq, Sq, D] (query), but got 'f16'}}
  %r = "attn.attention"(%q, %k, %v, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0>}> : (f16, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @segments(%q: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{operand count (4) does not match with the total size (5) specified in attribute 'operandSegmentSizes'}}
  %r = "attn.attention"(%q, %q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0>}> : (tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}
