// convert-attn-to-rocdl: one gpu.module per kernel, targeting the chip, with
// the matrix instruction of the config; the op becomes a launch.
// RUN: attn-opt %s -attn-select-config=target=gfx942 -convert-attn-to-rocdl=chip=gfx942 | FileCheck %s --check-prefixes=CHECK,MFMA
// RUN: attn-opt %s -attn-select-config=target=gfx950 -convert-attn-to-rocdl=chip=gfx950 | FileCheck %s --check-prefixes=CHECK,MFMA
// RUN: attn-opt %s -attn-select-config=target=gfx1100 -convert-attn-to-rocdl=chip=gfx1100 | FileCheck %s --check-prefixes=CHECK,GFX11
// RUN: attn-opt %s -attn-select-config=target=gfx1201 -convert-attn-to-rocdl=chip=gfx1201 | FileCheck %s --check-prefixes=CHECK,GFX12

// CHECK: attn.kernels = [{{.*}}platform = "hip"
// CHECK-LABEL: func.func @fwd
// CHECK: gpu.launch_func @[[K:fwd_f16_d64_[a-z0-9_]+]]::@[[K]] blocks in
// CHECK-SAME: threads in
// CHECK: gpu.module @[[K]] [#rocdl.target<O = 3, chip = "[[CHIP:gfx[0-9a-f]+]]"
// CHECK: gpu.func @[[K]]({{.*}}) kernel attributes {known_block_size = array<i32: [[THREADS:[0-9]+]], 1, 1>
// MFMA-COUNT-16: amdgpu.mfma 32x32x8 {{.*}} : vector<4xf16>, vector<4xf16>, vector<16xf32>
// GFX11-COUNT-16: amdgpu.wmma 16x16x16 {{.*}} : vector<16xf16>, vector<16xf16>, vector<8xf32>
// GFX12-COUNT-16: amdgpu.wmma 16x16x16 {{.*}} : vector<8xf16>, vector<8xf16>, vector<8xf32>
// GFX11: gpu.shuffle xor
// CHECK: gpu.return

func.func @fwd(%q: memref<2x8x256x64xf16>, %k: memref<2x8x256x64xf16>, %v: memref<2x8x256x64xf16>, %o: memref<2x8x256x64xf16>) {
  attn.attention q(%q : memref<2x8x256x64xf16>) k(%k : memref<2x8x256x64xf16>) v(%v : memref<2x8x256x64xf16>) outs(%o : memref<2x8x256x64xf16>)
  return
}
