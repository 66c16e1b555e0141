// D = 256 on every AMD chip. gfx1100 offers no D = 256 tile: its WMMA
// kernel spills VGPRs there (the tile table limits wmma_d256_m32n32w2 to
// gfx1201), so selection fails with a reason per candidate.
// RUN: attn-opt %s -split-input-file -attn-select-config=target=gfx90a | FileCheck %s --check-prefix=CDNA
// RUN: attn-opt %s -split-input-file -attn-select-config=target=gfx942 | FileCheck %s --check-prefix=CDNA
// RUN: attn-opt %s -split-input-file -attn-select-config=target=gfx950 | FileCheck %s --check-prefix=GFX950
// RUN: attn-opt %s -split-input-file -attn-select-config=target=gfx1201 | FileCheck %s --check-prefix=GFX1201
// RUN: not attn-opt %s -split-input-file -attn-select-config=target=gfx1100 2>&1 | FileCheck %s --check-prefix=GFX1100

// GFX1100: error: no tile candidate of gfx1100 fits this op (f16, D = 256, Dv = 256)
// GFX1100: note: candidate 'wmma_d256_m32n32w2': dispatch: used only on gfx1201
// GFX1100: error: no tile candidate of gfx1100 fits this op (bf16, D = 256, Dv = 256)
// GFX1100: note: candidate 'wmma_d256_m32n32w2': dispatch: used only on gfx1201

// CDNA-LABEL: func.func @d256_f16
// CDNA: attn.attention {{.*}}config = #attn.config<name = "mfma_d256_m32n32w1", block_m = 32, block_n = 32, warps = 1, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>
// GFX950-LABEL: func.func @d256_f16
// GFX950: attn.attention {{.*}}config = #attn.config<name = "mfma_d256_m64n32w2", block_m = 64, block_n = 32, warps = 2, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>
// GFX1201-LABEL: func.func @d256_f16
// GFX1201: attn.attention {{.*}}config = #attn.config<name = "wmma_d256_m32n32w2", block_m = 32, block_n = 32, warps = 2, stages = 1, pipeline = simple, acc_in_registers = true, mma = wmma.16x16x16>
func.func @d256_f16(%q: tensor<1x8x?x256xf16>, %k: tensor<1x8x?x256xf16>, %v: tensor<1x8x?x256xf16>, %o: tensor<1x8x?x256xf16>) -> tensor<1x8x?x256xf16> {
  %r = attn.attention q(%q : tensor<1x8x?x256xf16>) k(%k : tensor<1x8x?x256xf16>) v(%v : tensor<1x8x?x256xf16>)
      outs(%o : tensor<1x8x?x256xf16>) -> tensor<1x8x?x256xf16>
  return %r : tensor<1x8x?x256xf16>
}

// -----

// CDNA-LABEL: func.func @d256_bf16
// CDNA: attn.attention {{.*}}config = #attn.config<name = "mfma_d256_m32n32w1", block_m = 32, block_n = 32, warps = 1, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>
// GFX950-LABEL: func.func @d256_bf16
// GFX950: attn.attention {{.*}}config = #attn.config<name = "mfma_d256_m64n32w2", block_m = 64, block_n = 32, warps = 2, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>
// GFX1201-LABEL: func.func @d256_bf16
// GFX1201: attn.attention {{.*}}config = #attn.config<name = "wmma_d256_m32n32w2", block_m = 32, block_n = 32, warps = 2, stages = 1, pipeline = simple, acc_in_registers = true, mma = wmma.16x16x16>
func.func @d256_bf16(%q: tensor<1x8x?x256xbf16>, %k: tensor<1x8x?x256xbf16>, %v: tensor<1x8x?x256xbf16>, %o: tensor<1x8x?x256xbf16>) -> tensor<1x8x?x256xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x256xbf16>) k(%k : tensor<1x8x?x256xbf16>) v(%v : tensor<1x8x?x256xbf16>)
      outs(%o : tensor<1x8x?x256xbf16>) -> tensor<1x8x?x256xbf16>
  return %r : tensor<1x8x?x256xbf16>
}
