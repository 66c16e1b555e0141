// The configure-time ROCm toolkit root serializes a plain kernel for every
// gfx target, and hsaco-check rejects code objects that break the ABI.
// REQUIRES: rocm-device-libs
// RUN: attn-opt %s --pass-pipeline="builtin.module(rocdl-attach-target{chip=gfx90a},gpu.module(convert-gpu-to-rocdl{chipset=gfx90a use-bare-ptr-memref-call-conv runtime=HIP},reconcile-unrealized-casts),gpu-module-to-binary{format=bin toolkit=%attn_obj_root/rocm-toolkit})" | %hsaco-check - | FileCheck %s --check-prefixes=CHECK,W64
// RUN: attn-opt %s --pass-pipeline="builtin.module(rocdl-attach-target{chip=gfx1201 wave64=false},gpu.module(convert-gpu-to-rocdl{chipset=gfx1201 use-bare-ptr-memref-call-conv runtime=HIP},reconcile-unrealized-casts),gpu-module-to-binary{format=bin toolkit=%attn_obj_root/rocm-toolkit})" | %hsaco-check - | FileCheck %s --check-prefixes=CHECK,W32
// RUN: attn-opt %s --pass-pipeline="builtin.module(rocdl-attach-target{chip=gfx942},gpu.module(convert-gpu-to-rocdl{chipset=gfx942 use-bare-ptr-memref-call-conv runtime=HIP},reconcile-unrealized-casts),gpu-module-to-binary{format=bin toolkit=%attn_obj_root/rocm-toolkit})" | not %hsaco-check - --abi attn-fwd-v1 | FileCheck %s --check-prefix=ABI

// W64: scale: chip=gfx90a wave=64 {{.*}} spills=0/0 scratch=0
// W32: scale: chip=gfx1201 wave=32 {{.*}} spills=0/0 scratch=0
// CHECK: hsaco-check: 1 object(s), all within limits
// ABI: error: scale: 3 arguments, attn-fwd-v1 has 33
// ABI: error: scale: argument 2 is (offset, size, kind) (16, 4, 'by_value'), attn-fwd-v1 expects (16, 8, 'global_buffer')
// ABI: hsaco-check: 1 object(s), FAILED
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @scale(%a: memref<64xf32>, %b: memref<64xf32>, %s: f32) kernel {
      %t = gpu.thread_id x
      %x = memref.load %a[%t] : memref<64xf32>
      %y = arith.mulf %x, %s : f32
      memref.store %y, %b[%t] : memref<64xf32>
      gpu.return
    }
  }
}
