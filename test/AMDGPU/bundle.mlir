// Tensor-form input through attn-to-rocdl into a hip bundle; the bundle's
// metadata and code objects are checked against each other and the chip.
// REQUIRES: rocm-device-libs
// RUN: rm -rf %t && attn-opt %s -attn-to-rocdl="chip=gfx1201 format=bin" -attn-write-bundle="dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON < %t/bundle.json
// RUN: %hsaco-check %t --isa | FileCheck %s

// JSON: "abi": "attn-fwd-v1",
// JSON: "chip": "gfx1201",
// JSON: "platform": "hip",
// JSON: "binary": "fwd_bf16_d64_sliding_window_m64n64w4s1.hsaco",
// JSON: "threads": 128

// CHECK: fwd_bf16_d64_sliding_window_m64n64w4s1: chip=gfx1201 wave=32 {{.*}} spills=0/0 scratch=0
// CHECK: isa: v_wmma_f32_16x16x16_bf16 x32
// CHECK: hsaco-check: 1 object(s), all within limits
func.func @swa(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x2x?x64xbf16>, %v: tensor<1x2x?x64xbf16>, %o: tensor<1x8x?x64xbf16>) -> tensor<1x8x?x64xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x64xbf16>) k(%k : tensor<1x2x?x64xbf16>) v(%v : tensor<1x2x?x64xbf16>)
      outs(%o : tensor<1x8x?x64xbf16>) {mask = #attn.mask<sliding_window>, window = array<i64: 128, 0>} -> tensor<1x8x?x64xbf16>
  return %r : tensor<1x8x?x64xbf16>
}
