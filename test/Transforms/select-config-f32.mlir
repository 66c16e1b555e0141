// f32 has no GPU candidate: every GPU chip rejects it, naming the host
// pipeline in each candidate's reason. (Notes per candidate are checked in
// full in select-config-errors.mlir.)
// RUN: not attn-opt %s -split-input-file -attn-select-config=target=sm_80 2>&1 | FileCheck %s --check-prefixes=CHECK,SM_80
// RUN: not attn-opt %s -split-input-file -attn-select-config=target=sm_86 2>&1 | FileCheck %s --check-prefixes=CHECK,SM_86
// RUN: not attn-opt %s -split-input-file -attn-select-config=target=sm_89 2>&1 | FileCheck %s --check-prefixes=CHECK,SM_89
// RUN: not attn-opt %s -split-input-file -attn-select-config=target=sm_90a 2>&1 | FileCheck %s --check-prefixes=CHECK,SM_90A
// RUN: not attn-opt %s -split-input-file -attn-select-config=target=gfx90a 2>&1 | FileCheck %s --check-prefixes=CHECK,GFX90A
// RUN: not attn-opt %s -split-input-file -attn-select-config=target=gfx942 2>&1 | FileCheck %s --check-prefixes=CHECK,GFX942
// RUN: not attn-opt %s -split-input-file -attn-select-config=target=gfx950 2>&1 | FileCheck %s --check-prefixes=CHECK,GFX950
// RUN: not attn-opt %s -split-input-file -attn-select-config=target=gfx1100 2>&1 | FileCheck %s --check-prefixes=CHECK,GFX1100
// RUN: not attn-opt %s -split-input-file -attn-select-config=target=gfx1201 2>&1 | FileCheck %s --check-prefixes=CHECK,GFX1201

// CHECK: error: no tile candidate of
// SM_80-SAME: sm_80 fits this op (f32, D = 64, Dv = 64)
// SM_86-SAME: sm_86 fits this op (f32, D = 64, Dv = 64)
// SM_89-SAME: sm_89 fits this op (f32, D = 64, Dv = 64)
// SM_90A-SAME: sm_90a fits this op (f32, D = 64, Dv = 64)
// GFX90A-SAME: gfx90a fits this op (f32, D = 64, Dv = 64)
// GFX942-SAME: gfx942 fits this op (f32, D = 64, Dv = 64)
// GFX950-SAME: gfx950 fits this op (f32, D = 64, Dv = 64)
// GFX1100-SAME: gfx1100 fits this op (f32, D = 64, Dv = 64)
// GFX1201-SAME: gfx1201 fits this op (f32, D = 64, Dv = 64)
// CHECK: note: candidate '{{.*}}': {{.*}}element type f32: {{.*}}; f32 attention runs on the host pipeline only for now
func.func @d64_f32(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>, %o: tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %r = attn.attention q(%q : tensor<1x8x?x64xf32>) k(%k : tensor<1x8x?x64xf32>) v(%v : tensor<1x8x?x64xf32>)
      outs(%o : tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32>
  return %r : tensor<1x8x?x64xf32>
}

// -----

// CHECK: error: no tile candidate of
// SM_80-SAME: sm_80 fits this op (f32, D = 128, Dv = 128)
// SM_86-SAME: sm_86 fits this op (f32, D = 128, Dv = 128)
// SM_89-SAME: sm_89 fits this op (f32, D = 128, Dv = 128)
// SM_90A-SAME: sm_90a fits this op (f32, D = 128, Dv = 128)
// GFX90A-SAME: gfx90a fits this op (f32, D = 128, Dv = 128)
// GFX942-SAME: gfx942 fits this op (f32, D = 128, Dv = 128)
// GFX950-SAME: gfx950 fits this op (f32, D = 128, Dv = 128)
// GFX1100-SAME: gfx1100 fits this op (f32, D = 128, Dv = 128)
// GFX1201-SAME: gfx1201 fits this op (f32, D = 128, Dv = 128)
// CHECK: note: candidate '{{.*}}': {{.*}}element type f32: {{.*}}; f32 attention runs on the host pipeline only for now
func.func @d128_f32(%q: tensor<1x8x?x128xf32>, %k: tensor<1x8x?x128xf32>, %v: tensor<1x8x?x128xf32>, %o: tensor<1x8x?x128xf32>) -> tensor<1x8x?x128xf32> {
  %r = attn.attention q(%q : tensor<1x8x?x128xf32>) k(%k : tensor<1x8x?x128xf32>) v(%v : tensor<1x8x?x128xf32>)
      outs(%o : tensor<1x8x?x128xf32>) -> tensor<1x8x?x128xf32>
  return %r : tensor<1x8x?x128xf32>
}

// -----

// CHECK: error: no tile candidate of
// SM_80-SAME: sm_80 fits this op (f32, D = 256, Dv = 256)
// SM_86-SAME: sm_86 fits this op (f32, D = 256, Dv = 256)
// SM_89-SAME: sm_89 fits this op (f32, D = 256, Dv = 256)
// SM_90A-SAME: sm_90a fits this op (f32, D = 256, Dv = 256)
// GFX90A-SAME: gfx90a fits this op (f32, D = 256, Dv = 256)
// GFX942-SAME: gfx942 fits this op (f32, D = 256, Dv = 256)
// GFX950-SAME: gfx950 fits this op (f32, D = 256, Dv = 256)
// GFX1100-SAME: gfx1100 fits this op (f32, D = 256, Dv = 256)
// GFX1201-SAME: gfx1201 fits this op (f32, D = 256, Dv = 256)
// CHECK: note: candidate '{{.*}}': {{.*}}element type f32: {{.*}}; f32 attention runs on the host pipeline only for now
func.func @d256_f32(%q: tensor<1x8x?x256xf32>, %k: tensor<1x8x?x256xf32>, %v: tensor<1x8x?x256xf32>, %o: tensor<1x8x?x256xf32>) -> tensor<1x8x?x256xf32> {
  %r = attn.attention q(%q : tensor<1x8x?x256xf32>) k(%k : tensor<1x8x?x256xf32>) v(%v : tensor<1x8x?x256xf32>)
      outs(%o : tensor<1x8x?x256xf32>) -> tensor<1x8x?x256xf32>
  return %r : tensor<1x8x?x256xf32>
}
