// Selection on every NVIDIA chip for D in {64, 128, 256} and f16/bf16
// (f32: select-config-f32.mlir). Sequence lengths are dynamic, so the
// unaligned variants are chosen. sm_86/sm_89 have 99 KiB of shared memory:
// the D = 128 block_m 128 x block_n 64 tile (104448 bytes) does not fit.
// 4 warps x 32 rows comes first where it fits: it measured fastest on the
// H100 (bench/RESULTS.md) among the mma.sync tiles. sm_90a picks the wgmma
// tiles (priority -1) for head dims that are multiples of 64, the
// warp-specialized ones in their TMA form (tma_ws, listed first) for D = 128
// and 256; D = 64 takes
// block_n 64 (two CTAs per SM), which the warp-specialized D = 64 tile
// passes only from S = 4096 (its seqlen_min; lengths here are dynamic).
// RUN: attn-opt %s -split-input-file -attn-select-config=target=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %s -split-input-file -attn-select-config=target=sm_86 | FileCheck %s --check-prefix=SM86
// RUN: attn-opt %s -split-input-file -attn-select-config=target=sm_89 | FileCheck %s --check-prefix=SM86
// RUN: attn-opt %s -split-input-file -attn-select-config=target=sm_90a | FileCheck %s --check-prefix=SM90A

// SM80-LABEL: func.func @d64_f16
// SM80: attn.attention {{.*}}config = #attn.config<name = "mma_d64_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
// SM86-LABEL: func.func @d64_f16
// SM86: attn.attention {{.*}}config = #attn.config<name = "mma_d64_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
// SM90A-LABEL: func.func @d64_f16
// SM90A: attn.attention {{.*}}config = #attn.config<name = "wgmma_d64_m128n64w8", block_m = 128, block_n = 64, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @d64_f16(%q: tensor<1x8x?x64xf16>, %k: tensor<1x8x?x64xf16>, %v: tensor<1x8x?x64xf16>, %o: tensor<1x8x?x64xf16>) -> tensor<1x8x?x64xf16> {
  %r = attn.attention q(%q : tensor<1x8x?x64xf16>) k(%k : tensor<1x8x?x64xf16>) v(%v : tensor<1x8x?x64xf16>)
      outs(%o : tensor<1x8x?x64xf16>) -> tensor<1x8x?x64xf16>
  return %r : tensor<1x8x?x64xf16>
}

// -----

// SM80-LABEL: func.func @d64_bf16
// SM80: attn.attention {{.*}}config = #attn.config<name = "mma_d64_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
// SM86-LABEL: func.func @d64_bf16
// SM86: attn.attention {{.*}}config = #attn.config<name = "mma_d64_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
// SM90A-LABEL: func.func @d64_bf16
// SM90A: attn.attention {{.*}}config = #attn.config<name = "wgmma_d64_m128n64w8", block_m = 128, block_n = 64, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @d64_bf16(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x8x?x64xbf16>, %v: tensor<1x8x?x64xbf16>, %o: tensor<1x8x?x64xbf16>) -> tensor<1x8x?x64xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x64xbf16>) k(%k : tensor<1x8x?x64xbf16>) v(%v : tensor<1x8x?x64xbf16>)
      outs(%o : tensor<1x8x?x64xbf16>) -> tensor<1x8x?x64xbf16>
  return %r : tensor<1x8x?x64xbf16>
}

// -----

// SM80-LABEL: func.func @d128_f16
// SM80: attn.attention {{.*}}config = #attn.config<name = "mma_d128_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
// SM86-LABEL: func.func @d128_f16
// SM86: attn.attention {{.*}}config = #attn.config<name = "mma_d128_m128n32w8", block_m = 128, block_n = 32, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
// SM90A-LABEL: func.func @d128_f16
// SM90A: attn.attention {{.*}}config = #attn.config<name = "tma_d128_m128n128w12s3", block_m = 128, block_n = 128, warps = 12, stages = 3, pipeline = tma_ws, acc_in_registers = true, mma = wgmma.m64nNk16, persistent = true>
func.func @d128_f16(%q: tensor<1x8x?x128xf16>, %k: tensor<1x8x?x128xf16>, %v: tensor<1x8x?x128xf16>, %o: tensor<1x8x?x128xf16>) -> tensor<1x8x?x128xf16> {
  %r = attn.attention q(%q : tensor<1x8x?x128xf16>) k(%k : tensor<1x8x?x128xf16>) v(%v : tensor<1x8x?x128xf16>)
      outs(%o : tensor<1x8x?x128xf16>) -> tensor<1x8x?x128xf16>
  return %r : tensor<1x8x?x128xf16>
}

// -----

// SM80-LABEL: func.func @d128_bf16
// SM80: attn.attention {{.*}}config = #attn.config<name = "mma_d128_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
// SM86-LABEL: func.func @d128_bf16
// SM86: attn.attention {{.*}}config = #attn.config<name = "mma_d128_m128n32w8", block_m = 128, block_n = 32, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
// SM90A-LABEL: func.func @d128_bf16
// SM90A: attn.attention {{.*}}config = #attn.config<name = "tma_d128_m128n128w12s3", block_m = 128, block_n = 128, warps = 12, stages = 3, pipeline = tma_ws, acc_in_registers = true, mma = wgmma.m64nNk16, persistent = true>
func.func @d128_bf16(%q: tensor<1x8x?x128xbf16>, %k: tensor<1x8x?x128xbf16>, %v: tensor<1x8x?x128xbf16>, %o: tensor<1x8x?x128xbf16>) -> tensor<1x8x?x128xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x128xbf16>) k(%k : tensor<1x8x?x128xbf16>) v(%v : tensor<1x8x?x128xbf16>)
      outs(%o : tensor<1x8x?x128xbf16>) -> tensor<1x8x?x128xbf16>
  return %r : tensor<1x8x?x128xbf16>
}

// -----

// SM80-LABEL: func.func @d256_f16
// SM80: attn.attention {{.*}}config = #attn.config<name = "mma_d256_m64n32w4", block_m = 64, block_n = 32, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
// SM86-LABEL: func.func @d256_f16
// SM86: attn.attention {{.*}}config = #attn.config<name = "mma_d256_m64n32w4", block_m = 64, block_n = 32, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
// SM90A-LABEL: func.func @d256_f16
// SM90A: attn.attention {{.*}}config = #attn.config<name = "tma_d256_m128n64w12", block_m = 128, block_n = 64, warps = 12, stages = 2, pipeline = tma_ws, acc_in_registers = true, mma = wgmma.m64nNk16, persistent = true, overlap_softmax = true>
func.func @d256_f16(%q: tensor<1x8x?x256xf16>, %k: tensor<1x8x?x256xf16>, %v: tensor<1x8x?x256xf16>, %o: tensor<1x8x?x256xf16>) -> tensor<1x8x?x256xf16> {
  %r = attn.attention q(%q : tensor<1x8x?x256xf16>) k(%k : tensor<1x8x?x256xf16>) v(%v : tensor<1x8x?x256xf16>)
      outs(%o : tensor<1x8x?x256xf16>) -> tensor<1x8x?x256xf16>
  return %r : tensor<1x8x?x256xf16>
}

// -----

// SM80-LABEL: func.func @d256_bf16
// SM80: attn.attention {{.*}}config = #attn.config<name = "mma_d256_m64n32w4", block_m = 64, block_n = 32, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
// SM86-LABEL: func.func @d256_bf16
// SM86: attn.attention {{.*}}config = #attn.config<name = "mma_d256_m64n32w4", block_m = 64, block_n = 32, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
// SM90A-LABEL: func.func @d256_bf16
// SM90A: attn.attention {{.*}}config = #attn.config<name = "tma_d256_m128n64w12", block_m = 128, block_n = 64, warps = 12, stages = 2, pipeline = tma_ws, acc_in_registers = true, mma = wgmma.m64nNk16, persistent = true, overlap_softmax = true>
func.func @d256_bf16(%q: tensor<1x8x?x256xbf16>, %k: tensor<1x8x?x256xbf16>, %v: tensor<1x8x?x256xbf16>, %o: tensor<1x8x?x256xbf16>) -> tensor<1x8x?x256xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x256xbf16>) k(%k : tensor<1x8x?x256xbf16>) v(%v : tensor<1x8x?x256xbf16>)
      outs(%o : tensor<1x8x?x256xbf16>) -> tensor<1x8x?x256xbf16>
  return %r : tensor<1x8x?x256xbf16>
}

// -----

// Causal: the same D = 64 tile (the three-warpgroup one lists only none).
// SM80-LABEL: func.func @d64_bf16_causal
// SM80: config = #attn.config<name = "mma_d64_m128n64w4"
// SM86-LABEL: func.func @d64_bf16_causal
// SM86: config = #attn.config<name = "mma_d64_m128n64w4"
// SM90A-LABEL: func.func @d64_bf16_causal
// SM90A: config = #attn.config<name = "wgmma_d64_m128n64w8", block_m = 128, block_n = 64, warps = 8
func.func @d64_bf16_causal(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x8x?x64xbf16>, %v: tensor<1x8x?x64xbf16>, %o: tensor<1x8x?x64xbf16>) -> tensor<1x8x?x64xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x64xbf16>) k(%k : tensor<1x8x?x64xbf16>) v(%v : tensor<1x8x?x64xbf16>)
      outs(%o : tensor<1x8x?x64xbf16>) {mask = #attn.mask<causal>} -> tensor<1x8x?x64xbf16>
  return %r : tensor<1x8x?x64xbf16>
}

// -----

// D = 96 pads to 128 for wgmma's 64-column panels, a quarter of the work:
// within its max_padding_percent, so wgmma stays first on sm_90a.
// SM80-LABEL: func.func @d96_bf16
// SM80: config = #attn.config<name = "mma_d128_m128n64w4"
// SM90A-LABEL: func.func @d96_bf16
// SM90A: config = #attn.config<name = "tma_d128_m128n128w12s3"
func.func @d96_bf16(%q: tensor<1x8x?x96xbf16>, %k: tensor<1x8x?x96xbf16>, %v: tensor<1x8x?x96xbf16>, %o: tensor<1x8x?x96xbf16>) -> tensor<1x8x?x96xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x96xbf16>) k(%k : tensor<1x8x?x96xbf16>) v(%v : tensor<1x8x?x96xbf16>)
      outs(%o : tensor<1x8x?x96xbf16>) -> tensor<1x8x?x96xbf16>
  return %r : tensor<1x8x?x96xbf16>
}
