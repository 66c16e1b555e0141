// RUN: attn-opt %s -split-input-file -verify-diagnostics --convert-attn-to-nvvm=chip=sm_90a

// A dynamic head dim is a kernel argument up to the config's max_head_dim:
// without one there is nothing to size the tiles by.

#cfg = #attn.config<name = "wgmma_d64_m128n64w8", block_m = 128, block_n = 64, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @no_bound(%q: memref<?x8x?x?xbf16>) {
  // expected-error @+1 {{has a dynamic head dim; its config 'wgmma_d64_m128n64w8' needs max_head_dim, the largest D and Dv to serve}}
  attn.attention q(%q : memref<?x8x?x?xbf16>) k(%q : memref<?x8x?x?xbf16>) v(%q : memref<?x8x?x?xbf16>) outs(%q : memref<?x8x?x?xbf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "wgmma_d64_m128n64w8", block_m = 128, block_n = 64, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16, max_head_dim = 64>
func.func @static_with_bound(%q: memref<?x8x?x64xbf16>) {
  // expected-error @+1 {{has static head dims; config 'wgmma_d64_m128n64w8' has max_head_dim, which is for dynamic ones}}
  attn.attention q(%q : memref<?x8x?x64xbf16>) k(%q : memref<?x8x?x64xbf16>) v(%q : memref<?x8x?x64xbf16>) outs(%q : memref<?x8x?x64xbf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "wgmma_d64_m128n64w8", block_m = 128, block_n = 64, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16, max_head_dim = 320>
func.func @bound_too_large(%q: memref<?x8x?x?xbf16>) {
  // expected-error @+1 {{config 'wgmma_d64_m128n64w8' is not supported on sm_90a: head dim D = 320: sm_90a handles at most 256}}
  attn.attention q(%q : memref<?x8x?x?xbf16>) k(%q : memref<?x8x?x?xbf16>) v(%q : memref<?x8x?x?xbf16>) outs(%q : memref<?x8x?x?xbf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "wgmma_d64_m128n64w8", block_m = 128, block_n = 64, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16, max_head_dim = 64>
func.func @serving(%q: memref<?x8x?x?xbf16>, %k: memref<?x2x?x?xbf16>, %lens: memref<?xi32>) {
  // expected-error @+1 {{has a dynamic head dim and a serving layout; kernels for dynamic head dims are dense only}}
  attn.attention q(%q : memref<?x8x?x?xbf16>) k(%k : memref<?x2x?x?xbf16>) v(%k : memref<?x2x?x?xbf16>) seqlens_k(%lens : memref<?xi32>) outs(%q : memref<?x8x?x?xbf16>) {config = #cfg}
  return
}

// -----

#bwd = #attn.config<name = "bwd_d64_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16, max_head_dim = 64>
func.func @backward(%q: memref<?x4x?x?xf16>, %lse: memref<?x4x?xf32>) {
  // expected-error @+1 {{has a dynamic head dim; backward plans need static D and Dv}}
  attn.attention_grad q(%q : memref<?x4x?x?xf16>) k(%q : memref<?x4x?x?xf16>) v(%q : memref<?x4x?x?xf16>) o(%q : memref<?x4x?x?xf16>) do(%q : memref<?x4x?x?xf16>) lse(%lse : memref<?x4x?xf32>) outs(%q, %q, %q : memref<?x4x?x?xf16>, memref<?x4x?x?xf16>, memref<?x4x?x?xf16>) {config = #bwd}
  return
}
