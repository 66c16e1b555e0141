// RUN: attn-opt %s -split-input-file -verify-diagnostics --convert-attn-to-nvvm=chip=sm_90a
// RUN: not attn-opt %s -split-input-file --convert-attn-to-nvvm=chip=sm_80 2>&1 | FileCheck %s --check-prefix=SM80

// The wgmma kernel's rules, each with the value that breaks it.
// On sm_80 the tile tables list no wgmma: the same config is rejected for that.
// SM80: sm_80 has no such instruction in the tile tables (it has mma.m16n8k16, fma)
#cfg = #attn.config<name = "wg", block_m = 128, block_n = 128, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @head_dim_257(%q: memref<1x1x64x257xf16>, %o: memref<1x1x64x257xf16>) {
  // expected-error @+1 {{config 'wg' is not supported on sm_90a: head dim D = 257 (padded to 320 for wgmma.m64nNk16): sm_90a handles at most 256}}
  attn.attention q(%q : memref<1x1x64x257xf16>) k(%q : memref<1x1x64x257xf16>) v(%q : memref<1x1x64x257xf16>) outs(%o : memref<1x1x64x257xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "one_stage", block_m = 128, block_n = 128, warps = 8, stages = 1, pipeline = simple, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @one_stage(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'one_stage' has pipeline = simple, stages = 1; "wgmma.m64nNk16" is implemented with cp_async (stages = 2), cp_async_ws and tma_ws}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "w2", block_m = 32, block_n = 128, warps = 2, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @not_warpgroups(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'w2' is not supported on sm_90a: tile: block_m 32 is not a multiple of wgmma.m64nNk16's M = 64 (whole warpgroups)}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "n512", block_m = 128, block_n = 512, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @block_n_too_wide(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'n512' is not supported on sm_90a: tile: block_n 512 > 256, the most the wgmma.m64nNk16 kernel handles}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}

// -----

// A warp-specialized pipeline: warpgroup 0 produces, so 4 warps leave none
// to compute.
#cfg = #attn.config<name = "ws4", block_m = 64, block_n = 128, warps = 4, stages = 2, pipeline = cp_async_ws, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @ws_no_computing_warps(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'ws4' is not supported on sm_90a: tile: pipeline cp_async_ws gives 4 warps to its producer warpgroup and needs more that compute; got 4}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "ws5", block_m = 128, block_n = 64, warps = 12, stages = 5, pipeline = cp_async_ws, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @ws_five_stages(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'ws5' has stages = 5; pipeline cp_async_ws rings 2 to 4 stages}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}

// -----

// The producer's ring is for dense batches: a KV cache keeps cp_async.
#cfg = #attn.config<name = "wsc", block_m = 128, block_n = 128, warps = 12, stages = 2, pipeline = cp_async_ws, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @ws_kv_cache(%q: memref<2x8x1x64xf16>, %k: memref<2x8x256x64xf16>, %lens: memref<2xi32>, %o: memref<2x8x1x64xf16>) {
  // expected-error @+1 {{config 'wsc': pipeline cp_async_ws serves dense batches only; packed and KV-cache layouts need cp_async}}
  attn.attention q(%q : memref<2x8x1x64xf16>) k(%k : memref<2x8x256x64xf16>) v(%k : memref<2x8x256x64xf16>) seqlens_k(%lens : memref<2xi32>) outs(%o : memref<2x8x1x64xf16>) {config = #cfg}
  return
}

// -----

// The tables' pipeline rule applies to a config given by hand.
#cfg = #attn.config<name = "ws1", block_m = 128, block_n = 64, warps = 12, stages = 1, pipeline = cp_async_ws, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @ws_one_stage(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'ws1' is not supported on sm_90a: pipeline cp_async_ws: needs stages >= 2, got 1}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}
