// RUN: attn-opt %s -split-input-file -verify-diagnostics --convert-attn-to-nvvm=chip=sm_90a
// RUN: not attn-opt %s -split-input-file --convert-attn-to-nvvm=chip=sm_80 2>&1 | FileCheck %s --check-prefix=SM80

// The wgmma kernel's rules, each with the value that breaks it.

// SM80: config 'wg' asks for mma = wgmma.m64nNk16; sm_80 has no wgmma (sm_90a only)
#cfg = #attn.config<name = "wg", block_m = 128, block_n = 128, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @head_dim_96(%q: memref<1x1x64x96xf16>, %o: memref<1x1x64x96xf16>) {
  // expected-error @+1 {{head dim D = 96 is not supported by "wgmma.m64nNk16": expected a multiple of 64}}
  attn.attention q(%q : memref<1x1x64x96xf16>) k(%q : memref<1x1x64x96xf16>) v(%q : memref<1x1x64x96xf16>) outs(%o : memref<1x1x64x96xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "one_stage", block_m = 128, block_n = 128, warps = 8, stages = 1, pipeline = simple, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @one_stage(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'one_stage' has pipeline = simple, stages = 1; "wgmma.m64nNk16" is implemented with cp_async, stages = 2}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "w2", block_m = 32, block_n = 128, warps = 2, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @not_warpgroups(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'w2' has block_m = 32 and warps = 2; "wgmma.m64nNk16" needs warpgroups: warps a multiple of 4 (<= 16), block_m == 16 * warps}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "n512", block_m = 128, block_n = 512, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @block_n_too_wide(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'n512' has block_n = 512; expected a multiple of 16 <= 256}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}
