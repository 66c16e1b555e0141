// RUN: attn-opt %s -split-input-file -verify-diagnostics --convert-attn-to-nvvm=chip=sm_90a

// What pipeline tma_ws (a producer thread copying by tensor maps) refuses.

// A tensor map describes 16-byte aligned rows: element-aligned views keep
// the cp.async copies.
#cfg = #attn.config<name = "tma2", block_m = 128, block_n = 128, warps = 12, stages = 3, pipeline = tma_ws, acc_in_registers = true, mma = wgmma.m64nNk16, align_bytes = 2>
func.func @tma_align2(%q: memref<1x8x64x128xbf16>, %o: memref<1x8x64x128xbf16>) {
  // expected-error @+1 {{config 'tma2' has align_bytes = 2; pipeline tma_ws copies 16-byte aligned rows (tensor maps)}}
  attn.attention q(%q : memref<1x8x64x128xbf16>) k(%q : memref<1x8x64x128xbf16>) v(%q : memref<1x8x64x128xbf16>) outs(%o : memref<1x8x64x128xbf16>) {config = #cfg}
  return
}

// -----

// Paged and KV-cache rows are found row by row: no tensor map.
#cfg = #attn.config<name = "tmac", block_m = 128, block_n = 128, warps = 12, stages = 2, pipeline = tma_ws, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @tma_kv_cache(%q: memref<2x8x1x64xf16>, %k: memref<2x8x256x64xf16>, %lens: memref<2xi32>, %o: memref<2x8x1x64xf16>) {
  // expected-error @+1 {{config 'tmac': pipeline tma_ws serves dense and packed batches only; KV-cache layouts need cp_async}}
  attn.attention q(%q : memref<2x8x1x64xf16>) k(%k : memref<2x8x256x64xf16>) v(%k : memref<2x8x256x64xf16>) seqlens_k(%lens : memref<2xi32>) outs(%o : memref<2x8x1x64xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "tma5", block_m = 128, block_n = 64, warps = 12, stages = 5, pipeline = tma_ws, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @tma_five_stages(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'tma5' has stages = 5; pipeline tma_ws rings 2 to 4 stages}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}

// -----

// The tables' pipeline rule: whole warpgroups, one of them the producer.
#cfg = #attn.config<name = "tma4", block_m = 64, block_n = 128, warps = 4, stages = 2, pipeline = tma_ws, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @tma_no_computing_warps(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'tma4' is not supported on sm_90a: tile: pipeline tma_ws gives 4 warps to its producer warpgroup and needs more that compute; got 4}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "tma1", block_m = 128, block_n = 64, warps = 12, stages = 1, pipeline = tma_ws, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @tma_one_stage(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'tma1' is not supported on sm_90a: pipeline tma_ws: needs stages >= 2, got 1}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}

// -----

// A packed batch's workgroups walk its row blocks; no persistent grid.
#cfg = #attn.config<name = "tmap", block_m = 128, block_n = 128, warps = 12, stages = 2, pipeline = tma_ws, acc_in_registers = true, mma = wgmma.m64nNk16, persistent = true>
func.func @persistent_varlen(%q: memref<1x8x?x64xf16>, %cq: memref<?xi32>, %o: memref<1x8x?x64xf16>) {
  // expected-error @+1 {{config 'tmap': persistent serves dense batches only (a packed batch's workgroups walk its row blocks)}}
  attn.attention q(%q : memref<1x8x?x64xf16>) k(%q : memref<1x8x?x64xf16>) v(%q : memref<1x8x?x64xf16>) cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%cq : memref<?xi32>) outs(%o : memref<1x8x?x64xf16>) {config = #cfg}
  return
}
