// RUN: attn-opt %s -split-input-file -verify-diagnostics

// The serving operands: which combinations exist and their shapes.

func.func @cu_alone(%q: memref<1x4x?x16xf16>, %k: memref<1x4x?x16xf16>, %v: memref<1x4x?x16xf16>, %cq: memref<?xi32>, %o: memref<1x4x?x16xf16>) {
  // expected-error @+1 {{cu_seqlens_k: missing; cu_seqlens_q and cu_seqlens_k come together}}
  attn.attention q(%q : memref<1x4x?x16xf16>) k(%k : memref<1x4x?x16xf16>) v(%v : memref<1x4x?x16xf16>) cu_seqlens_q(%cq : memref<?xi32>) outs(%o : memref<1x4x?x16xf16>)
  return
}

// -----

func.func @cu_batch(%q: memref<2x4x?x16xf16>, %k: memref<2x4x?x16xf16>, %v: memref<2x4x?x16xf16>, %cq: memref<?xi32>, %ck: memref<?xi32>, %o: memref<2x4x?x16xf16>) {
  // expected-error @+1 {{query: the packed form (cu_seqlens) expects a static batch B = 1, got 'memref<2x4x?x16xf16>'}}
  attn.attention q(%q : memref<2x4x?x16xf16>) k(%k : memref<2x4x?x16xf16>) v(%v : memref<2x4x?x16xf16>) cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>) outs(%o : memref<2x4x?x16xf16>)
  return
}

// -----

func.func @cu_sizes(%q: memref<1x4x?x16xf16>, %k: memref<1x4x?x16xf16>, %v: memref<1x4x?x16xf16>, %cq: memref<3xi32>, %ck: memref<4xi32>, %o: memref<1x4x?x16xf16>) {
  // expected-error @+1 {{cu_seqlens_k: dimension 0 (N + 1) is 4 but another operand fixes N + 1 = 3}}
  attn.attention q(%q : memref<1x4x?x16xf16>) k(%k : memref<1x4x?x16xf16>) v(%v : memref<1x4x?x16xf16>) cu_seqlens_q(%cq : memref<3xi32>) cu_seqlens_k(%ck : memref<4xi32>) outs(%o : memref<1x4x?x16xf16>)
  return
}

// -----

func.func @cu_type(%q: memref<1x4x?x16xf16>, %k: memref<1x4x?x16xf16>, %v: memref<1x4x?x16xf16>, %cq: memref<?xi64>, %ck: memref<?xi64>, %o: memref<1x4x?x16xf16>) {
  // expected-error @+1 {{cu_seqlens_q: expected element type 'i32', got 'i64'}}
  attn.attention q(%q : memref<1x4x?x16xf16>) k(%k : memref<1x4x?x16xf16>) v(%v : memref<1x4x?x16xf16>) cu_seqlens_q(%cq : memref<?xi64>) cu_seqlens_k(%ck : memref<?xi64>) outs(%o : memref<1x4x?x16xf16>)
  return
}

// -----

func.func @cu_empty(%q: memref<1x4x?x16xf16>, %k: memref<1x4x?x16xf16>, %v: memref<1x4x?x16xf16>, %cq: memref<0xi32>, %ck: memref<0xi32>, %o: memref<1x4x?x16xf16>) {
  // expected-error @+1 {{cu_seqlens_q: expected at least one offset, got 0}}
  attn.attention q(%q : memref<1x4x?x16xf16>) k(%k : memref<1x4x?x16xf16>) v(%v : memref<1x4x?x16xf16>) cu_seqlens_q(%cq : memref<0xi32>) cu_seqlens_k(%ck : memref<0xi32>) outs(%o : memref<1x4x?x16xf16>)
  return
}

// -----

func.func @cu_and_lens(%q: memref<1x4x?x16xf16>, %k: memref<1x4x?x16xf16>, %v: memref<1x4x?x16xf16>, %cq: memref<?xi32>, %ck: memref<?xi32>, %n: memref<1xi32>, %o: memref<1x4x?x16xf16>) {
  // expected-error @+1 {{seqlens_k: not supported with cu_seqlens (a packed batch has its key offsets)}}
  attn.attention q(%q : memref<1x4x?x16xf16>) k(%k : memref<1x4x?x16xf16>) v(%v : memref<1x4x?x16xf16>) cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>) seqlens_k(%n : memref<1xi32>) outs(%o : memref<1x4x?x16xf16>)
  return
}

// -----

func.func @lens_batch(%q: memref<2x4x?x16xf16>, %k: memref<2x4x?x16xf16>, %v: memref<2x4x?x16xf16>, %n: memref<3xi32>, %o: memref<2x4x?x16xf16>) {
  // expected-error @+1 {{seqlens_k: dimension 0 (B) is 3 but another operand fixes B = 2}}
  attn.attention q(%q : memref<2x4x?x16xf16>) k(%k : memref<2x4x?x16xf16>) v(%v : memref<2x4x?x16xf16>) seqlens_k(%n : memref<3xi32>) outs(%o : memref<2x4x?x16xf16>)
  return
}

// -----

func.func @lens_bias(%q: memref<2x4x8x16xf16>, %k: memref<2x4x8x16xf16>, %v: memref<2x4x8x16xf16>, %b: memref<2x4x8x8xf16>, %n: memref<2xi32>, %o: memref<2x4x8x16xf16>) {
  // expected-error @+1 {{bias: not supported with cu_seqlens, seqlens_k or block_table}}
  attn.attention q(%q : memref<2x4x8x16xf16>) k(%k : memref<2x4x8x16xf16>) v(%v : memref<2x4x8x16xf16>) bias(%b : memref<2x4x8x8xf16>) seqlens_k(%n : memref<2xi32>) outs(%o : memref<2x4x8x16xf16>)
  return
}

// -----

func.func @table_alone(%q: memref<2x4x?x16xf16>, %k: memref<9x4x16x16xf16>, %v: memref<9x4x16x16xf16>, %t: memref<2x4xi32>, %o: memref<2x4x?x16xf16>) {
  // expected-error @+1 {{block_table: requires seqlens_k (the keys each batch uses)}}
  attn.attention q(%q : memref<2x4x?x16xf16>) k(%k : memref<9x4x16x16xf16>) v(%v : memref<9x4x16x16xf16>) block_table(%t : memref<2x4xi32>) outs(%o : memref<2x4x?x16xf16>)
  return
}

// -----

func.func @table_rank(%q: memref<2x4x?x16xf16>, %k: memref<9x4x16x16xf16>, %v: memref<9x4x16x16xf16>, %n: memref<2xi32>, %t: memref<8xi32>, %o: memref<2x4x?x16xf16>) {
  // expected-error @+1 {{block_table: expected rank 2 [B, P], got rank 1 ('memref<8xi32>')}}
  attn.attention q(%q : memref<2x4x?x16xf16>) k(%k : memref<9x4x16x16xf16>) v(%v : memref<9x4x16x16xf16>) seqlens_k(%n : memref<2xi32>) block_table(%t : memref<8xi32>) outs(%o : memref<2x4x?x16xf16>)
  return
}

// -----

// Pages: key and value agree on num_pages and page_size.
func.func @page_size(%q: memref<2x4x?x16xf16>, %k: memref<9x4x16x16xf16>, %v: memref<9x4x32x16xf16>, %n: memref<2xi32>, %t: memref<2x4xi32>, %o: memref<2x4x?x16xf16>) {
  // expected-error @+1 {{value: dimension 2 (page_size) is 32 but another operand fixes page_size = 16}}
  attn.attention q(%q : memref<2x4x?x16xf16>) k(%k : memref<9x4x16x16xf16>) v(%v : memref<9x4x32x16xf16>) seqlens_k(%n : memref<2xi32>) block_table(%t : memref<2x4xi32>) outs(%o : memref<2x4x?x16xf16>)
  return
}

// -----

func.func @mixed_kind(%q: memref<2x4x?x16xf16>, %k: memref<2x4x?x16xf16>, %v: memref<2x4x?x16xf16>, %n: tensor<2xi32>, %o: memref<2x4x?x16xf16>) {
  // expected-error @+1 {{seqlens_k: expected a memref like query, got 'tensor<2xi32>' (operands must be all tensors or all memrefs)}}
  attn.attention q(%q : memref<2x4x?x16xf16>) k(%k : memref<2x4x?x16xf16>) v(%v : memref<2x4x?x16xf16>) seqlens_k(%n : tensor<2xi32>) outs(%o : memref<2x4x?x16xf16>)
  return
}
