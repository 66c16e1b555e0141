// The decode tile (kv_d128_m64n128w4, kv_cache_seqlen_q_max 16): sm_90a
// picks it for a KV-cache op whose Sq is static and at most 16, and keeps
// the general tile for a longer or dynamic Sq, a packed batch or a dense
// op (attn-bundle adds the decode tile for dynamic Sq as a variant of its
// own, for calls of Sq <= 16).
// RUN: attn-opt %s -split-input-file -attn-select-config=target=sm_90a | FileCheck %s

// CHECK-LABEL: func.func @decode
// CHECK: attn.attention {{.*}}config = #attn.config<name = "kv_d128_m64n128w4", block_m = 64, block_n = 128, warps = 4
func.func @decode(%q: memref<4x8x1x128xbf16>, %k: memref<4x1x?x128xbf16>, %v: memref<4x1x?x128xbf16>, %n: memref<4xi32>, %o: memref<4x8x1x128xbf16>) {
  attn.attention q(%q : memref<4x8x1x128xbf16>) k(%k : memref<4x1x?x128xbf16>) v(%v : memref<4x1x?x128xbf16>) seqlens_k(%n : memref<4xi32>) outs(%o : memref<4x8x1x128xbf16>)
  return
}

// -----

// CHECK-LABEL: func.func @prefill_chunk
// CHECK: attn.attention {{.*}}config = #attn.config<name = "wgmma_d128_m128n128w8",
func.func @prefill_chunk(%q: memref<4x8x32x128xbf16>, %k: memref<4x1x?x128xbf16>, %v: memref<4x1x?x128xbf16>, %n: memref<4xi32>, %o: memref<4x8x32x128xbf16>) {
  attn.attention q(%q : memref<4x8x32x128xbf16>) k(%k : memref<4x1x?x128xbf16>) v(%v : memref<4x1x?x128xbf16>) seqlens_k(%n : memref<4xi32>) outs(%o : memref<4x8x32x128xbf16>)
  return
}

// -----

// CHECK-LABEL: func.func @dynamic_sq
// CHECK: attn.attention {{.*}}config = #attn.config<name = "wgmma_d128_m128n128w8",
func.func @dynamic_sq(%q: memref<?x8x?x128xbf16>, %k: memref<?x1x?x128xbf16>, %v: memref<?x1x?x128xbf16>, %n: memref<?xi32>, %o: memref<?x8x?x128xbf16>) {
  attn.attention q(%q : memref<?x8x?x128xbf16>) k(%k : memref<?x1x?x128xbf16>) v(%v : memref<?x1x?x128xbf16>) seqlens_k(%n : memref<?xi32>) outs(%o : memref<?x8x?x128xbf16>)
  return
}

// -----

// A dense op with one query row: no KV cache, no decode tile.
// CHECK-LABEL: func.func @dense_one_row
// CHECK-NOT: kv_d128_m64n128w4
// CHECK: attn.attention {{.*}}config = #attn.config<name =
func.func @dense_one_row(%q: memref<4x8x1x128xbf16>, %k: memref<4x8x?x128xbf16>, %o: memref<4x8x1x128xbf16>) {
  attn.attention q(%q : memref<4x8x1x128xbf16>) k(%k : memref<4x8x?x128xbf16>) v(%k : memref<4x8x?x128xbf16>) outs(%o : memref<4x8x1x128xbf16>)
  return
}
