// RUN: attn-opt %s -split-input-file -verify-diagnostics --convert-attn-to-nvvm=chip=sm_90a
// RUN: not attn-opt %s -split-input-file --convert-attn-to-nvvm=chip=sm_90a 2>&1 | FileCheck %s

// Every attn op the pass cannot lower is an error at its location, and the
// pass fails (no attn op reaches the output). All of them are reported, not
// only the first.

// CHECK: error: 'attn.attention_grad' op has no 'config' attribute
// CHECK: error: 'attn.attention' op has no 'config' attribute
// CHECK: error: 'attn.attention_grad' op element type f32 needs a config with mma = fma

func.func @grad(%q: memref<1x4x128x64xf16>, %k: memref<1x2x128x64xf16>, %lse: memref<1x4x128xf32>, %dq: memref<1x4x128x64xf16>, %dk: memref<1x2x128x64xf16>) {
  // expected-error @below {{'attn.attention_grad' op has no 'config' attribute: run attn-select-config or attach a #attn.config}}
  attn.attention_grad q(%q : memref<1x4x128x64xf16>) k(%k : memref<1x2x128x64xf16>) v(%k : memref<1x2x128x64xf16>) o(%q : memref<1x4x128x64xf16>) do(%q : memref<1x4x128x64xf16>) lse(%lse : memref<1x4x128xf32>) outs(%dq, %dk, %dk : memref<1x4x128x64xf16>, memref<1x2x128x64xf16>, memref<1x2x128x64xf16>)
  return
}

// -----

// A lowerable op next to two that are not: both errors, the pass fails.
// (f32 gradients have no GPU plans.)

#cfg = #attn.config<name = "sm80_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
#bwd = #attn.config<name = "bwd_d64_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mma.m16n8k16>
func.func @mixed(%q: memref<1x4x128x64xf16>, %k: memref<1x2x128x64xf16>, %lse: memref<1x4x128xf32>, %dq: memref<1x4x128x64xf16>, %dk: memref<1x2x128x64xf16>, %bias: memref<1x4x128x128xf32>, %q32: memref<1x4x128x64xf32>) {
  attn.attention q(%q : memref<1x4x128x64xf16>) k(%k : memref<1x2x128x64xf16>) v(%k : memref<1x2x128x64xf16>) outs(%q : memref<1x4x128x64xf16>) {config = #cfg}
  // expected-error @below {{has no 'config' attribute: run attn-select-config or attach a #attn.config}}
  attn.attention q(%q : memref<1x4x128x64xf16>) k(%k : memref<1x2x128x64xf16>) v(%k : memref<1x2x128x64xf16>) outs(%q : memref<1x4x128x64xf16>)
  // expected-error @below {{'attn.attention_grad' op element type f32 needs a config with mma = fma (f32 on scalar FMAs, not TF32); config 'bwd_d64_m64n64w4' asks for mma = mma.m16n8k16}}
  attn.attention_grad q(%q32 : memref<1x4x128x64xf32>) k(%q32 : memref<1x4x128x64xf32>) v(%q32 : memref<1x4x128x64xf32>) o(%q32 : memref<1x4x128x64xf32>) do(%q32 : memref<1x4x128x64xf32>) lse(%lse : memref<1x4x128xf32>) outs(%q32, %q32, %q32 : memref<1x4x128x64xf32>, memref<1x4x128x64xf32>, memref<1x4x128x64xf32>) {config = #bwd}
  return
}

// -----

// The kernel's name is taken by a symbol that is not its gpu.module.

#cfg = #attn.config<name = "sm80_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mma.m16n8k16>
func.func private @fwd_f16_d64_none_m64n64w4s1()
func.func @name_taken(%q: memref<1x4x128x64xf16>) {
  // expected-error @below {{expected symbol @fwd_f16_d64_none_m64n64w4s1 to be a gpu.module with a kernel @fwd_f16_d64_none_m64n64w4s1 (a kernel of this op's spec)}}
  attn.attention q(%q : memref<1x4x128x64xf16>) k(%q : memref<1x4x128x64xf16>) v(%q : memref<1x4x128x64xf16>) outs(%q : memref<1x4x128x64xf16>) {config = #cfg}
  return
}
