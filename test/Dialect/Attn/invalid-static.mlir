// RUN: attn-opt %s -split-input-file -verify-diagnostics

// Head counts fix the query-head to key-head mapping, so they are static and
// positive; head dims may be dynamic (roundtrip-dynamic-head-dim.mlir) but
// not 0; every static size fits the kernel ABI's i32 extents.

func.func @dynamic_hq(%q: tensor<1x?x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{query: dimension 1 (Hq) must be static, got 'tensor<1x?x8x16xf16>'}}
  %r = attn.attention q(%q : tensor<1x?x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @zero_d(%q: tensor<1x4x8x0xf16>, %k: tensor<1x4x8x0xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{query: dimension 3 (D) must be positive, got 0}}
  %r = attn.attention q(%q : tensor<1x4x8x0xf16>) k(%k : tensor<1x4x8x0xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @zero_hkv(%q: tensor<1x4x8x16xf16>, %k: tensor<1x0x8x16xf16>, %v: tensor<1x0x8x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{key: dimension 1 (Hkv) must be positive, got 0}}
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x0x8x16xf16>) v(%v : tensor<1x0x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @huge_seq(%q: tensor<1x4x9223372036854775807x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{query: dimension 2 (Sq) is 9223372036854775807, expected at most 2147483647}}
  %r = attn.attention q(%q : tensor<1x4x9223372036854775807x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) outs(%o : tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @huge_batch_memref(%q: memref<4294967296x4x8x16xf32>, %k: memref<1x4x8x16xf32>, %v: memref<1x4x8x16xf32>, %o: memref<1x4x8x16xf32>) {
  // expected-error @+1 {{query: dimension 0 (B) is 4294967296, expected at most 2147483647}}
  attn.attention q(%q : memref<4294967296x4x8x16xf32>) k(%k : memref<1x4x8x16xf32>) v(%v : memref<1x4x8x16xf32>) outs(%o : memref<1x4x8x16xf32>)
  return
}
