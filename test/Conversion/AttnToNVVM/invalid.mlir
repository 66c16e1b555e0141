// RUN: attn-opt %s -split-input-file -verify-diagnostics --convert-attn-to-nvvm=chip=sm_90a

func.func @no_config(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{has no 'config' attribute: run attn-select-config or attach a #attn.config}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>)
  return
}

// -----

#cfg = #attn.config<name = "cdna3", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mfma.32x32x8>
func.func @wrong_mma(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'cdna3' is not supported on sm_90a: mma mfma.32x32x8: sm_90a has no such instruction in the tile tables (it has mma.m16n8k16, wgmma.m64nNk16, fma)}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}

// -----

// tma_ws is implemented with wgmma only.
#cfg = #attn.config<name = "ws", block_m = 64, block_n = 64, warps = 8, stages = 2, pipeline = tma_ws, acc_in_registers = true, mma = mma.m16n8k16>
func.func @wrong_pipeline(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'ws' asks for pipeline = tma_ws; convert-attn-to-nvvm implements simple and cp_async (cp_async_ws and tma_ws with wgmma)}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "odd", block_m = 128, block_n = 64, warps = 2, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
func.func @wrong_block_m(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'odd' is not supported on sm_90a: tile: block_m 128 over 2 warps gives 64 rows per warp; mma.m16n8k16 needs a multiple of 16, at most 32}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "n16", block_m = 64, block_n = 16, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
func.func @wrong_block_n(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'n16' is not supported on sm_90a: tile: block_n 16 not in {32, 64, 128} handled by the mma.m16n8k16 kernel}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "sm90_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
func.func @f32(%q: memref<1x1x64x64xf32>, %o: memref<1x1x64x64xf32>) {
  // expected-error @+1 {{element type f32 needs a config with mma = fma (f32 on scalar FMAs, not TF32); config 'sm90_m64n64w4' asks for mma = mma.m16n8k16}}
  attn.attention q(%q : memref<1x1x64x64xf32>) k(%q : memref<1x1x64x64xf32>) v(%q : memref<1x1x64x64xf32>) outs(%o : memref<1x1x64x64xf32>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "fma_m64n64w8", block_m = 64, block_n = 64, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = fma>
func.func @fma_f16(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'fma_m64n64w8' asks for mma = fma, which runs f32 only; 'f16' runs on the matrix instructions}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "fma_m64n64w8", block_m = 64, block_n = 64, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = fma>
func.func @f64(%q: memref<1x1x64x64xf64>, %o: memref<1x1x64x64xf64>) {
  // expected-error @+1 {{query: expected element type f16, bf16 or f32}}
  attn.attention q(%q : memref<1x1x64x64xf64>) k(%q : memref<1x1x64x64xf64>) v(%q : memref<1x1x64x64xf64>) outs(%o : memref<1x1x64x64xf64>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "sm90_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
func.func @head_dim(%q: memref<1x1x64x264xf16>, %o: memref<1x1x64x264xf16>) {
  // expected-error @+1 {{config 'sm90_m64n64w4' is not supported on sm_90a: head dim D = 264 (padded to 272 for mma.m16n8k16): sm_90a handles at most 256}}
  attn.attention q(%q : memref<1x1x64x264xf16>) k(%q : memref<1x1x64x264xf16>) v(%q : memref<1x1x64x264xf16>) outs(%o : memref<1x1x64x264xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "sm90_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
func.func @tensors(%q: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{expected memref operands (run one-shot-bufferize first)}}
  %r = attn.attention q(%q : tensor<1x1x64x64xf16>) k(%q : tensor<1x1x64x64xf16>) v(%q : tensor<1x1x64x64xf16>) outs(%o : tensor<1x1x64x64xf16>) {config = #cfg} -> tensor<1x1x64x64xf16>
  return %r : tensor<1x1x64x64xf16>
}

// -----

#cfg = #attn.config<name = "sm90_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
#layout = affine_map<(a, b, c, d) -> (a, b, c, d mod 8)>
func.func @bias_not_strided(%q: memref<1x1x64x64xf16>, %b: memref<1x1x64x64xf16, #layout>, %o: memref<1x1x64x64xf16>) {
  // The ABI passes the bias as a pointer and four strides.
  // expected-error @+1 {{expected a strided memref bias, got 'memref<1x1x64x64xf16, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3 mod 8)>>'}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) bias(%b : memref<1x1x64x64xf16, #layout>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "big", block_m = 256, block_n = 128, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
func.func @smem(%q: memref<1x1x64x256xf16>, %o: memref<1x1x64x256xf16>) {
  // expected-error @+1 {{config 'big' needs 405504 bytes of shared memory; sm_90a has 232448}}
  attn.attention q(%q : memref<1x1x64x256xf16>) k(%q : memref<1x1x64x256xf16>) v(%q : memref<1x1x64x256xf16>) outs(%o : memref<1x1x64x256xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "acc_smem", block_m = 128, block_n = 128, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = false, mma = wgmma.m64nNk16>
func.func @output_not_in_registers(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'acc_smem' has acc_in_registers = false; convert-attn-to-nvvm keeps O in registers}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "byte_aligned", block_m = 128, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16, align_bytes = 1>
func.func @align_below_element(%q: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{config 'byte_aligned' has align_bytes = 1, below the 2-byte elements of 'f16'}}
  attn.attention q(%q : memref<1x1x64x64xf16>) k(%q : memref<1x1x64x64xf16>) v(%q : memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #cfg}
  return
}
