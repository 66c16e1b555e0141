// Aligned variants come first and are chosen when the static sequence
// lengths are multiples of the tile; otherwise the unaligned kernel is.
// RUN: attn-opt %s -split-input-file -attn-select-config=target=sm_80 | FileCheck %s

// CHECK-LABEL: func.func @aligned
// CHECK: config = #attn.config<name = "mma_d64_m128n64w4_aligned"
func.func @aligned(%q: tensor<2x8x1024x64xbf16>, %k: tensor<2x8x512x64xbf16>,
                   %v: tensor<2x8x512x64xbf16>, %o: tensor<2x8x1024x64xbf16>)
    -> tensor<2x8x1024x64xbf16> {
  %r = attn.attention q(%q : tensor<2x8x1024x64xbf16>)
      k(%k : tensor<2x8x512x64xbf16>) v(%v : tensor<2x8x512x64xbf16>)
      outs(%o : tensor<2x8x1024x64xbf16>) {mask = #attn.mask<causal>}
      -> tensor<2x8x1024x64xbf16>
  return %r : tensor<2x8x1024x64xbf16>
}

// -----

// Sk = 500 is not a multiple of block_n = 64.
// CHECK-LABEL: func.func @unaligned_sk
// CHECK: config = #attn.config<name = "mma_d64_m128n64w4",
func.func @unaligned_sk(%q: tensor<2x8x1024x64xbf16>, %k: tensor<2x8x500x64xbf16>,
                        %v: tensor<2x8x500x64xbf16>, %o: tensor<2x8x1024x64xbf16>)
    -> tensor<2x8x1024x64xbf16> {
  %r = attn.attention q(%q : tensor<2x8x1024x64xbf16>)
      k(%k : tensor<2x8x500x64xbf16>) v(%v : tensor<2x8x500x64xbf16>)
      outs(%o : tensor<2x8x1024x64xbf16>) -> tensor<2x8x1024x64xbf16>
  return %r : tensor<2x8x1024x64xbf16>
}

// -----

// Dv != D: the shared-memory and head-dim checks use both.
// CHECK-LABEL: func.func @dv64_d128
// CHECK: config = #attn.config<name = "mma_d128_m128n64w4_aligned"
func.func @dv64_d128(%q: tensor<1x4x256x128xf16>, %k: tensor<1x4x256x128xf16>,
                     %v: tensor<1x4x256x64xf16>, %o: tensor<1x4x256x64xf16>)
    -> tensor<1x4x256x64xf16> {
  %r = attn.attention q(%q : tensor<1x4x256x128xf16>)
      k(%k : tensor<1x4x256x128xf16>) v(%v : tensor<1x4x256x64xf16>)
      outs(%o : tensor<1x4x256x64xf16>) -> tensor<1x4x256x64xf16>
  return %r : tensor<1x4x256x64xf16>
}
