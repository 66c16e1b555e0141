// RUN: attn-opt %s -convert-attn-to-rocdl=chip=gfx942 | FileCheck %s

// Ops with equal problems and configs share one kernel, within a function
// and across functions; the metadata lists each kernel once, in the order
// the kernels were created.

#cfg = #attn.config<name = "mfma_d64_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mfma.32x32x8>

// CHECK: module attributes {attn.kernels = [{{{[^}]*}}entry = "[[NONE:fwd_f16_d64_none_m128n64w4s1]]"{{[^}]*}}}, {{{[^}]*}}entry = "[[CAUSAL:fwd_f16_d64_causal_m128n64w4s1]]"{{[^}]*}}}], gpu.container_module}
// CHECK-LABEL: func.func @first
// CHECK-COUNT-2: gpu.launch_func @[[NONE]]::@[[NONE]]
// CHECK-LABEL: func.func @second
// CHECK: gpu.launch_func @[[CAUSAL]]::@[[CAUSAL]]
// CHECK: gpu.launch_func @[[NONE]]::@[[NONE]]
// CHECK-NOT: attn.attention
// CHECK: gpu.module @[[NONE]]
// CHECK: gpu.module @[[CAUSAL]]
// CHECK-NOT: gpu.module
func.func @first(%q: memref<1x4x128x64xf16>, %o: memref<1x4x128x64xf16>) {
  attn.attention q(%q : memref<1x4x128x64xf16>) k(%q : memref<1x4x128x64xf16>) v(%q : memref<1x4x128x64xf16>) outs(%o : memref<1x4x128x64xf16>) {config = #cfg}
  attn.attention q(%q : memref<1x4x128x64xf16>) k(%q : memref<1x4x128x64xf16>) v(%q : memref<1x4x128x64xf16>) outs(%o : memref<1x4x128x64xf16>) {config = #cfg}
  return
}

func.func @second(%q: memref<2x4x?x64xf16>, %o: memref<2x4x?x64xf16>) {
  attn.attention q(%q : memref<2x4x?x64xf16>) k(%q : memref<2x4x?x64xf16>) v(%q : memref<2x4x?x64xf16>) outs(%o : memref<2x4x?x64xf16>) {mask = #attn.mask<causal>, config = #cfg}
  attn.attention q(%q : memref<2x4x?x64xf16>) k(%q : memref<2x4x?x64xf16>) v(%q : memref<2x4x?x64xf16>) outs(%o : memref<2x4x?x64xf16>) {config = #cfg}
  return
}
