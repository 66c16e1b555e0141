// RUN: attn-opt %s -split-input-file -attn-tile -verify-diagnostics

// attn-tile lowers attn.attention only; any other attn op is an error at its
// location (nothing after attn-tile in attn-to-cpu lowers it), reported
// before any op is rewritten.

#cfg = #attn.config<name = "host_m16n64", block_m = 16, block_n = 64, warps = 1, stages = 1, pipeline = simple, acc_in_registers = false, mma = "fma">
func.func @grad(%q: memref<1x4x16x64xf32>, %k: memref<1x2x16x64xf32>, %lse: memref<1x4x16xf32>, %dq: memref<1x4x16x64xf32>, %dk: memref<1x2x16x64xf32>) {
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x2x16x64xf32>) v(%k : memref<1x2x16x64xf32>) outs(%q : memref<1x4x16x64xf32>) {config = #cfg}
  // expected-error @below {{'attn.attention_grad' op is not lowered yet by attn-tile (the backward pass has no CPU lowering yet)}}
  attn.attention_grad q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x2x16x64xf32>) v(%k : memref<1x2x16x64xf32>) o(%q : memref<1x4x16x64xf32>) do(%q : memref<1x4x16x64xf32>) lse(%lse : memref<1x4x16xf32>) outs(%dq, %dk, %dk : memref<1x4x16x64xf32>, memref<1x2x16x64xf32>, memref<1x2x16x64xf32>)
  return
}
