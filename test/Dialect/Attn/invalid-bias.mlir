// RUN: attn-opt %s -split-input-file -verify-diagnostics

// bias is rank 4 and broadcastable to [B, Hq, Sq, Sk]: each dimension is the
// full size or 1. Its element type is that of query, or f32.

func.func @bias_rank(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %b: tensor<8x8xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{bias: expected rank 4, broadcastable to [B, Hq, Sq, Sk], got 'tensor<8x8xf16>'}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) bias(%b : tensor<8x8xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @bias_heads(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %b: tensor<1x2x8x8xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{bias: dimension 1 is 2, expected 1 or Hq = 4 to broadcast to [B, Hq, Sq, Sk]}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) bias(%b : tensor<1x2x8x8xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @bias_keys(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %b: tensor<1x1x1x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{bias: dimension 3 is 16, expected 1 or Sk = 8}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) bias(%b : tensor<1x1x1x16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @bias_huge(%q: tensor<?x4x8x16xf16>, %k: tensor<?x4x8x16xf16>, %v: tensor<?x4x8x16xf16>, %b: tensor<4294967296x1x1x1xf16>, %o: tensor<?x4x8x16xf16>) {
  // expected-error @+1 {{bias: dimension 0 is 4294967296, expected at most 2147483647}}
  %r = attn.attention q(%q : tensor<?x4x8x16xf16>) k(%k : tensor<?x4x8x16xf16>) v(%v : tensor<?x4x8x16xf16>) bias(%b : tensor<4294967296x1x1x1xf16>) outs(%o : tensor<?x4x8x16xf16>) -> tensor<?x4x8x16xf16>
  return
}

// -----

func.func @bias_type(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %b: tensor<1x1x8x8xbf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{bias: expected element type 'f16' or f32, got 'bf16'}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) bias(%b : tensor<1x1x8x8xbf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @bias_memref_in_tensor_op(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %b: memref<1x1x8x8xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{bias: expected a tensor like query}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) bias(%b : memref<1x1x8x8xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}
