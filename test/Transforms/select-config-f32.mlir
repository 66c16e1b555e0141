// f32 runs on the tables' `fma` candidates (scalar FMAs in f32, no TF32):
// the fastest tile measured whose shared memory the chip has (rows padded
// by 16 bytes). NVIDIA: fma_d64_m128n64w4 at D = 64 (102 KiB: sm_80,
// sm_90a), fma_m256n32w8 at D = 128 (198 KiB: sm_90a), fma_m128n32w4
// (68 KiB at D = 64, 132 KiB at D = 128), fma_m32n32w4 (83 KiB at D = 128,
// 163 KiB at D = 256: sm_80, sm_90a), fma_m16n32w2 (81 KiB at D = 256, one
// stage); AMD (64 KiB of LDS but gfx950): fma_m32n32w4 up to D = 128, then
// fma_m16n16w2.
// RUN: attn-opt %s -split-input-file -attn-select-config=target=sm_80 | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: attn-opt %s -split-input-file -attn-select-config=target=sm_86 | FileCheck %s --check-prefixes=CHECK,SM8X
// RUN: attn-opt %s -split-input-file -attn-select-config=target=sm_89 | FileCheck %s --check-prefixes=CHECK,SM8X
// RUN: attn-opt %s -split-input-file -attn-select-config=target=sm_90a | FileCheck %s --check-prefixes=CHECK,SM90
// RUN: attn-opt %s -split-input-file -attn-select-config=target=gfx90a | FileCheck %s --check-prefixes=CHECK,AMD
// RUN: attn-opt %s -split-input-file -attn-select-config=target=gfx942 | FileCheck %s --check-prefixes=CHECK,AMD
// RUN: attn-opt %s -split-input-file -attn-select-config=target=gfx950 | FileCheck %s --check-prefixes=CHECK,AMD
// RUN: attn-opt %s -split-input-file -attn-select-config=target=gfx1100 | FileCheck %s --check-prefixes=CHECK,AMD
// RUN: attn-opt %s -split-input-file -attn-select-config=target=gfx1201 | FileCheck %s --check-prefixes=CHECK,AMD

// CHECK-LABEL: func.func @d64_f32
// SM80: name = "fma_d64_m128n64w4"{{.*}}mma = fma
// SM8X: name = "fma_m128n32w4"{{.*}}mma = fma
// SM90: name = "fma_d64_m128n64w4"{{.*}}mma = fma
// AMD: name = "fma_m32n32w4"{{.*}}pipeline = simple{{.*}}mma = fma
func.func @d64_f32(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>, %o: tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %r = attn.attention q(%q : tensor<1x8x?x64xf32>) k(%k : tensor<1x8x?x64xf32>) v(%v : tensor<1x8x?x64xf32>)
      outs(%o : tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32>
  return %r : tensor<1x8x?x64xf32>
}

// -----

// CHECK-LABEL: func.func @d128_f32
// SM80: name = "fma_m128n32w4"
// SM8X: name = "fma_m32n32w4"
// SM90: name = "fma_m256n32w8"
// AMD: name = "fma_m32n32w4"
func.func @d128_f32(%q: tensor<1x8x?x128xf32>, %k: tensor<1x8x?x128xf32>, %v: tensor<1x8x?x128xf32>, %o: tensor<1x8x?x128xf32>) -> tensor<1x8x?x128xf32> {
  %r = attn.attention q(%q : tensor<1x8x?x128xf32>) k(%k : tensor<1x8x?x128xf32>) v(%v : tensor<1x8x?x128xf32>)
      outs(%o : tensor<1x8x?x128xf32>) -> tensor<1x8x?x128xf32>
  return %r : tensor<1x8x?x128xf32>
}

// -----

// CHECK-LABEL: func.func @d256_f32
// SM80: name = "fma_m32n32w4"
// SM8X: name = "fma_m16n32w2"
// SM90: name = "fma_m32n32w4"
// AMD: name = "fma_m16n16w2"
func.func @d256_f32(%q: tensor<1x8x?x256xf32>, %k: tensor<1x8x?x256xf32>, %v: tensor<1x8x?x256xf32>, %o: tensor<1x8x?x256xf32>) -> tensor<1x8x?x256xf32> {
  %r = attn.attention q(%q : tensor<1x8x?x256xf32>) k(%k : tensor<1x8x?x256xf32>) v(%v : tensor<1x8x?x256xf32>)
      outs(%o : tensor<1x8x?x256xf32>) -> tensor<1x8x?x256xf32>
  return %r : tensor<1x8x?x256xf32>
}
