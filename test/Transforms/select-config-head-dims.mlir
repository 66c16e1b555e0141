// RUN: attn-opt %s -split-input-file -attn-select-config=target=sm_90a | FileCheck %s --check-prefix=SM90A
// RUN: attn-opt %s -split-input-file -attn-select-config=target=gfx1100 | FileCheck %s --check-prefix=GFX1100

// Any head dim is served: the kernels pad D and Dv to the instruction's
// head_dim_multiple (16 for mma.sync and WMMA, 64 for wgmma's panels) and the
// tiles are chosen for the padded dims. wgmma pads by more than its
// max_padding_percent (25) at D = 8, 40 and 80, where mma.sync ranks first.

// SM90A-LABEL: func.func @d1
// SM90A: name = "mma_d64_m128n64w4"
// GFX1100-LABEL: func.func @d1
// GFX1100: name = "wmma_d64_m64n64w4"
func.func @d1(%q: tensor<1x8x?x1xbf16>, %o: tensor<1x8x?x1xbf16>) -> tensor<1x8x?x1xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x1xbf16>) k(%q : tensor<1x8x?x1xbf16>) v(%q : tensor<1x8x?x1xbf16>) outs(%o : tensor<1x8x?x1xbf16>) -> tensor<1x8x?x1xbf16>
  return %r : tensor<1x8x?x1xbf16>
}

// -----

// SM90A-LABEL: func.func @d40
// SM90A: name = "mma_d64_m128n64w4"
// GFX1100-LABEL: func.func @d40
// GFX1100: name = "wmma_d64_m64n64w4"
func.func @d40(%q: tensor<1x8x?x40xbf16>, %o: tensor<1x8x?x40xbf16>) -> tensor<1x8x?x40xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x40xbf16>) k(%q : tensor<1x8x?x40xbf16>) v(%q : tensor<1x8x?x40xbf16>) outs(%o : tensor<1x8x?x40xbf16>) -> tensor<1x8x?x40xbf16>
  return %r : tensor<1x8x?x40xbf16>
}

// -----

// D = 59 pads to 64 for wgmma (8% of the work).
// SM90A-LABEL: func.func @d59
// SM90A: name = "wgmma_d64_m128n64w8"
// GFX1100-LABEL: func.func @d59
// GFX1100: name = "wmma_d64_m64n64w4"
func.func @d59(%q: tensor<1x8x?x59xbf16>, %o: tensor<1x8x?x59xbf16>) -> tensor<1x8x?x59xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x59xbf16>) k(%q : tensor<1x8x?x59xbf16>) v(%q : tensor<1x8x?x59xbf16>) outs(%o : tensor<1x8x?x59xbf16>) -> tensor<1x8x?x59xbf16>
  return %r : tensor<1x8x?x59xbf16>
}

// -----

// SM90A-LABEL: func.func @d80
// SM90A: name = "mma_d128_m128n64w4"
// GFX1100-LABEL: func.func @d80
// GFX1100: name = "wmma_d128_m64n64w4"
func.func @d80(%q: tensor<1x8x?x80xbf16>, %o: tensor<1x8x?x80xbf16>) -> tensor<1x8x?x80xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x80xbf16>) k(%q : tensor<1x8x?x80xbf16>) v(%q : tensor<1x8x?x80xbf16>) outs(%o : tensor<1x8x?x80xbf16>) -> tensor<1x8x?x80xbf16>
  return %r : tensor<1x8x?x80xbf16>
}

// -----

// SM90A-LABEL: func.func @d111
// SM90A: name = "tma_d128_m128n128w12s3"
// GFX1100-LABEL: func.func @d111
// GFX1100: name = "wmma_d128_m64n64w4"
func.func @d111(%q: tensor<1x8x?x111xbf16>, %o: tensor<1x8x?x111xbf16>) -> tensor<1x8x?x111xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x111xbf16>) k(%q : tensor<1x8x?x111xbf16>) v(%q : tensor<1x8x?x111xbf16>) outs(%o : tensor<1x8x?x111xbf16>) -> tensor<1x8x?x111xbf16>
  return %r : tensor<1x8x?x111xbf16>
}

// -----

// D = 160 pads to 192 for wgmma (17%).
// SM90A-LABEL: func.func @d160
// SM90A: name = "tma_d256_m128n64w12"
// GFX1100-LABEL: func.func @d160
// GFX1100: name = "wmma_d256_m64n32w4"
func.func @d160(%q: tensor<1x8x?x160xbf16>, %o: tensor<1x8x?x160xbf16>) -> tensor<1x8x?x160xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x160xbf16>) k(%q : tensor<1x8x?x160xbf16>) v(%q : tensor<1x8x?x160xbf16>) outs(%o : tensor<1x8x?x160xbf16>) -> tensor<1x8x?x160xbf16>
  return %r : tensor<1x8x?x160xbf16>
}
