// force picks the named candidate (after the same checks); ops that already
// carry a config are left alone. (attn.attention_grad under force:
// select-config-grad.mlir.)
// RUN: attn-opt %s -split-input-file -attn-select-config="target=sm_80 force=mma_d128_m64n64w4" | FileCheck %s

// CHECK-LABEL: func.func @forced
// CHECK: config = #attn.config<name = "mma_d128_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
func.func @forced(%q: tensor<1x8x?x128xf16>, %k: tensor<1x8x?x128xf16>,
                  %v: tensor<1x8x?x128xf16>, %o: tensor<1x8x?x128xf16>)
    -> tensor<1x8x?x128xf16> {
  %r = attn.attention q(%q : tensor<1x8x?x128xf16>) k(%k : tensor<1x8x?x128xf16>)
      v(%v : tensor<1x8x?x128xf16>) outs(%o : tensor<1x8x?x128xf16>)
      -> tensor<1x8x?x128xf16>
  return %r : tensor<1x8x?x128xf16>
}

// -----

// CHECK-LABEL: func.func @kept
// CHECK: config = #attn.config<name = "mine", block_m = 16, block_n = 32, warps = 1, stages = 1, pipeline = simple, acc_in_registers = false, mma = fma>
func.func @kept(%q: tensor<1x8x?x128xf16>, %k: tensor<1x8x?x128xf16>,
                %v: tensor<1x8x?x128xf16>, %o: tensor<1x8x?x128xf16>)
    -> tensor<1x8x?x128xf16> {
  %r = attn.attention q(%q : tensor<1x8x?x128xf16>) k(%k : tensor<1x8x?x128xf16>)
      v(%v : tensor<1x8x?x128xf16>) outs(%o : tensor<1x8x?x128xf16>)
      {config = #attn.config<name = "mine", block_m = 16, block_n = 32,
                             warps = 1, stages = 1, pipeline = simple,
                             acc_in_registers = false, mma = fma>}
      -> tensor<1x8x?x128xf16>
  return %r : tensor<1x8x?x128xf16>
}
