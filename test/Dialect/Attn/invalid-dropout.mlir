// RUN: attn-opt %s -split-input-file -verify-diagnostics

// Dropout's operands: their types, all three or none, dense layouts only.

// The custom form fixes the types: f32, i64, i32.
// expected-note @+1 {{prior use here}}
func.func @p_type(%q: memref<1x4x8x16xf16>, %p: f16, %s: i64, %off: i32, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{use of value '%p' expects different type than prior uses: 'f32' vs 'f16'}}
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%q : memref<1x4x8x16xf16>) v(%q : memref<1x4x8x16xf16>) dropout(%p, %s, %off) outs(%o : memref<1x4x8x16xf16>)
  return
}

// -----

func.func @partial(%q: memref<1x4x8x16xf16>, %p: f32, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{dropout: expected dropout_p, dropout_seed and dropout_offset together, got 1 of them}}
  "attn.attention"(%q, %q, %q, %p, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0>}> : (memref<1x4x8x16xf16>, memref<1x4x8x16xf16>, memref<1x4x8x16xf16>, f32, memref<1x4x8x16xf16>) -> ()
  return
}

// -----

func.func @kvcache(%q: memref<2x4x1x16xf16>, %k: memref<2x4x?x16xf16>, %lens: memref<2xi32>, %p: f32, %s: i64, %off: i32, %o: memref<2x4x1x16xf16>) {
  // expected-error @+1 {{dropout: not supported with cu_seqlens, seqlens_k or block_table}}
  attn.attention q(%q : memref<2x4x1x16xf16>) k(%k : memref<2x4x?x16xf16>) v(%k : memref<2x4x?x16xf16>) seqlens_k(%lens : memref<2xi32>) dropout(%p, %s, %off) outs(%o : memref<2x4x1x16xf16>)
  return
}

// -----

func.func @grad_partial(%q: memref<1x4x8x16xf16>, %l: memref<1x4x8xf32>, %s: i64) {
  // expected-error @+1 {{dropout: expected dropout_p, dropout_seed and dropout_offset together, got 1 of them}}
  "attn.attention_grad"(%q, %q, %q, %q, %q, %l, %s, %q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0>}> : (memref<1x4x8x16xf16>, memref<1x4x8x16xf16>, memref<1x4x8x16xf16>, memref<1x4x8x16xf16>, memref<1x4x8x16xf16>, memref<1x4x8xf32>, i64, memref<1x4x8x16xf16>, memref<1x4x8x16xf16>, memref<1x4x8x16xf16>) -> ()
  return
}
