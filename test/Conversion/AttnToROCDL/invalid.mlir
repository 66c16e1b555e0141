// RUN: attn-opt %s -split-input-file -convert-attn-to-rocdl=chip=gfx942 -verify-diagnostics

func.func @no_config(%q: memref<1x4x128x64xf16>, %o: memref<1x4x128x64xf16>) {
  // expected-error @+1 {{has no 'config' attribute: run attn-select-config or attach a #attn.config}}
  attn.attention q(%q : memref<1x4x128x64xf16>) k(%q : memref<1x4x128x64xf16>) v(%q : memref<1x4x128x64xf16>) outs(%o : memref<1x4x128x64xf16>)
  return
}

// -----

#cfg = #attn.config<name = "mfma_d64_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>
func.func @f32(%q: memref<1x4x128x64xf32>, %o: memref<1x4x128x64xf32>) {
  // expected-error @+1 {{element type f32 needs a config with mma = fma (f32 on scalar FMAs, not TF32); config 'mfma_d64_m128n64w4' asks for mma = mfma.32x32x8}}
  attn.attention q(%q : memref<1x4x128x64xf32>) k(%q : memref<1x4x128x64xf32>) v(%q : memref<1x4x128x64xf32>) outs(%o : memref<1x4x128x64xf32>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "wmma_d64_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = wmma.16x16x16>
func.func @wmma_on_cdna(%q: memref<1x4x128x64xf16>, %o: memref<1x4x128x64xf16>) {
  // expected-error @+1 {{config 'wmma_d64_m64n64w4' asks for mma = wmma.16x16x16; convert-attn-to-rocdl implements mfma.32x32x8, mfma.16x16x16 on gfx942}}
  attn.attention q(%q : memref<1x4x128x64xf16>) k(%q : memref<1x4x128x64xf16>) v(%q : memref<1x4x128x64xf16>) outs(%o : memref<1x4x128x64xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "bad_m", block_m = 64, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>
func.func @block_m(%q: memref<1x4x128x64xf16>, %o: memref<1x4x128x64xf16>) {
  // expected-error @+1 {{config 'bad_m' is not supported on gfx942: tile: block_m 64 over 4 warps gives 16 rows per warp; mfma.32x32x8 needs a multiple of 32, at most 32}}
  attn.attention q(%q : memref<1x4x128x64xf16>) k(%q : memref<1x4x128x64xf16>) v(%q : memref<1x4x128x64xf16>) outs(%o : memref<1x4x128x64xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "bad_n", block_m = 128, block_n = 16, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>
func.func @block_n(%q: memref<1x4x128x64xf16>, %o: memref<1x4x128x64xf16>) {
  // expected-error @+1 {{config 'bad_n' is not supported on gfx942: tile: block_n 16 is not a multiple of 32 (mfma.32x32x8)}}
  attn.attention q(%q : memref<1x4x128x64xf16>) k(%q : memref<1x4x128x64xf16>) v(%q : memref<1x4x128x64xf16>) outs(%o : memref<1x4x128x64xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "cp", block_m = 128, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mfma.32x32x8>
func.func @pipeline(%q: memref<1x4x128x64xf16>, %o: memref<1x4x128x64xf16>) {
  // expected-error @+1 {{config 'cp' has pipeline = cp_async and stages = 2; convert-attn-to-rocdl implements simple with stages = 1 and lds_double with stages = 2}}
  attn.attention q(%q : memref<1x4x128x64xf16>) k(%q : memref<1x4x128x64xf16>) v(%q : memref<1x4x128x64xf16>) outs(%o : memref<1x4x128x64xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "mfma_d128_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>
func.func @lds(%q: memref<1x4x128x128xf16>, %o: memref<1x4x128x128xf16>) {
  // expected-error @+1 {{config 'mfma_d128_m128n64w4' needs 69632 bytes of shared memory; gfx942 has 65536}}
  attn.attention q(%q : memref<1x4x128x128xf16>) k(%q : memref<1x4x128x128xf16>) v(%q : memref<1x4x128x128xf16>) outs(%o : memref<1x4x128x128xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "mfma_d64_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>
func.func @head_dim(%q: memref<1x4x128x260xf16>, %v: memref<1x4x128x64xf16>, %o: memref<1x4x128x64xf16>) {
  // expected-error @+1 {{config 'mfma_d64_m128n64w4' is not supported on gfx942: head dim D = 260 (padded to 272 for mfma.32x32x8): gfx942 handles at most 256}}
  attn.attention q(%q : memref<1x4x128x260xf16>) k(%q : memref<1x4x128x260xf16>) v(%v : memref<1x4x128x64xf16>) outs(%o : memref<1x4x128x64xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "mfma_d64_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>
func.func @tensors(%q: tensor<1x4x128x64xf16>, %o: tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16> {
  // expected-error @+1 {{expected memref operands (run one-shot-bufferize first)}}
  %r = attn.attention q(%q : tensor<1x4x128x64xf16>) k(%q : tensor<1x4x128x64xf16>) v(%q : tensor<1x4x128x64xf16>) outs(%o : tensor<1x4x128x64xf16>) {config = #cfg} -> tensor<1x4x128x64xf16>
  return %r : tensor<1x4x128x64xf16>
}
