// RUN: attn-opt %s | attn-opt | FileCheck %s

// Head dims may be dynamic: a GPU kernel with a config's max_head_dim takes
// D and Dv at run time. Static and dynamic head dims mix across operands.

// CHECK-LABEL: func.func @dynamic_d
// CHECK: attn.attention q(%{{.*}} : memref<?x8x?x?xbf16>) k(%{{.*}} : memref<?x2x?x?xbf16>) v(%{{.*}} : memref<?x2x?x?xbf16>) outs(%{{.*}} : memref<?x8x?x?xbf16>)
// CHECK-SAME: max_head_dim = 128
func.func @dynamic_d(%q: memref<?x8x?x?xbf16>, %k: memref<?x2x?x?xbf16>, %o: memref<?x8x?x?xbf16>) {
  attn.attention q(%q : memref<?x8x?x?xbf16>) k(%k : memref<?x2x?x?xbf16>) v(%k : memref<?x2x?x?xbf16>) outs(%o : memref<?x8x?x?xbf16>) {config = #attn.config<name = "wgmma_d128_m128n128w8", block_m = 128, block_n = 128, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16, max_head_dim = 128>}
  return
}

// CHECK-LABEL: func.func @mixed
// CHECK: attn.attention q(%{{.*}} : tensor<1x4x8x?xf16>) k(%{{.*}} : tensor<1x4x8x16xf16>)
func.func @mixed(%q: tensor<1x4x8x?xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x?xf16>, %o: tensor<1x4x8x?xf16>) -> tensor<1x4x8x?xf16> {
  %r = attn.attention q(%q : tensor<1x4x8x?xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x?xf16>) outs(%o : tensor<1x4x8x?xf16>) -> tensor<1x4x8x?xf16>
  return %r : tensor<1x4x8x?xf16>
}
