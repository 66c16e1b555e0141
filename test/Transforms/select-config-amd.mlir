// Selection on every AMD chip for D in {64, 128, 256} and f16/bf16 (f32:
// select-config-f32.mlir). 64 KiB of LDS rejects the wider D = 128 and
// D = 256 tiles on gfx90a/gfx942/gfx11/gfx12; gfx950 has 160 KiB.
// D = 256: select-config-amd-d256.mlir.
// RUN: attn-opt %s -split-input-file -attn-select-config=target=gfx90a | FileCheck %s --check-prefix=CDNA
// RUN: attn-opt %s -split-input-file -attn-select-config=target=gfx942 | FileCheck %s --check-prefix=CDNA
// RUN: attn-opt %s -split-input-file -attn-select-config=target=gfx950 | FileCheck %s --check-prefix=GFX950
// RUN: attn-opt %s -split-input-file -attn-select-config=target=gfx1100 | FileCheck %s --check-prefix=RDNA
// RUN: attn-opt %s -split-input-file -attn-select-config=target=gfx1201 | FileCheck %s --check-prefix=RDNA

// CDNA-LABEL: func.func @d64_f16
// CDNA: attn.attention {{.*}}config = #attn.config<name = "mfma_d64_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>
// GFX950-LABEL: func.func @d64_f16
// GFX950: attn.attention {{.*}}config = #attn.config<name = "mfma_d64_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>
// RDNA-LABEL: func.func @d64_f16
// RDNA: attn.attention {{.*}}config = #attn.config<name = "wmma_d64_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = wmma.16x16x16>
func.func @d64_f16(%q: tensor<1x8x?x64xf16>, %k: tensor<1x8x?x64xf16>, %v: tensor<1x8x?x64xf16>, %o: tensor<1x8x?x64xf16>) -> tensor<1x8x?x64xf16> {
  %r = attn.attention q(%q : tensor<1x8x?x64xf16>) k(%k : tensor<1x8x?x64xf16>) v(%v : tensor<1x8x?x64xf16>)
      outs(%o : tensor<1x8x?x64xf16>) -> tensor<1x8x?x64xf16>
  return %r : tensor<1x8x?x64xf16>
}

// -----

// CDNA-LABEL: func.func @d64_bf16
// CDNA: attn.attention {{.*}}config = #attn.config<name = "mfma_d64_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>
// GFX950-LABEL: func.func @d64_bf16
// GFX950: attn.attention {{.*}}config = #attn.config<name = "mfma_d64_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>
// RDNA-LABEL: func.func @d64_bf16
// RDNA: attn.attention {{.*}}config = #attn.config<name = "wmma_d64_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = wmma.16x16x16>
func.func @d64_bf16(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x8x?x64xbf16>, %v: tensor<1x8x?x64xbf16>, %o: tensor<1x8x?x64xbf16>) -> tensor<1x8x?x64xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x64xbf16>) k(%k : tensor<1x8x?x64xbf16>) v(%v : tensor<1x8x?x64xbf16>)
      outs(%o : tensor<1x8x?x64xbf16>) -> tensor<1x8x?x64xbf16>
  return %r : tensor<1x8x?x64xbf16>
}

// -----

// CDNA-LABEL: func.func @d128_f16
// CDNA: attn.attention {{.*}}config = #attn.config<name = "mfma_d128_m128n32w4", block_m = 128, block_n = 32, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>
// GFX950-LABEL: func.func @d128_f16
// GFX950: attn.attention {{.*}}config = #attn.config<name = "mfma_d128_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>
// RDNA-LABEL: func.func @d128_f16
// RDNA: attn.attention {{.*}}config = #attn.config<name = "wmma_d128_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = wmma.16x16x16>
func.func @d128_f16(%q: tensor<1x8x?x128xf16>, %k: tensor<1x8x?x128xf16>, %v: tensor<1x8x?x128xf16>, %o: tensor<1x8x?x128xf16>) -> tensor<1x8x?x128xf16> {
  %r = attn.attention q(%q : tensor<1x8x?x128xf16>) k(%k : tensor<1x8x?x128xf16>) v(%v : tensor<1x8x?x128xf16>)
      outs(%o : tensor<1x8x?x128xf16>) -> tensor<1x8x?x128xf16>
  return %r : tensor<1x8x?x128xf16>
}

// -----

// CDNA-LABEL: func.func @d128_bf16
// CDNA: attn.attention {{.*}}config = #attn.config<name = "mfma_d128_m128n32w4", block_m = 128, block_n = 32, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>
// GFX950-LABEL: func.func @d128_bf16
// GFX950: attn.attention {{.*}}config = #attn.config<name = "mfma_d128_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>
// RDNA-LABEL: func.func @d128_bf16
// RDNA: attn.attention {{.*}}config = #attn.config<name = "wmma_d128_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = wmma.16x16x16>
func.func @d128_bf16(%q: tensor<1x8x?x128xbf16>, %k: tensor<1x8x?x128xbf16>, %v: tensor<1x8x?x128xbf16>, %o: tensor<1x8x?x128xbf16>) -> tensor<1x8x?x128xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x128xbf16>) k(%k : tensor<1x8x?x128xbf16>) v(%v : tensor<1x8x?x128xbf16>)
      outs(%o : tensor<1x8x?x128xbf16>) -> tensor<1x8x?x128xbf16>
  return %r : tensor<1x8x?x128xbf16>
}
