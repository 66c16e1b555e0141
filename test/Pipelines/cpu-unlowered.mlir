// attn-to-cpu fails on an attn op it cannot lower, with an error at the op's
// location, instead of passing it through to its output. Both ops lower on
// the host now; what it cannot lower is a shape outside the host tiles
// (D = 512 is over every host candidate's head-dim bucket).
// RUN: attn-opt %s -verify-diagnostics --attn-to-cpu
// RUN: not attn-opt %s --attn-to-cpu 2>&1 | FileCheck %s

// CHECK: cpu-unlowered.mlir:[[# @LINE + 9]]:{{[0-9]+}}: error: no tile candidate of host fits this op

func.func @grad(%q: tensor<1x4x128x512xf16>, %k: tensor<1x2x128x512xf16>, %o: tensor<1x4x128x512xf16>, %lse: tensor<1x4x128xf32>, %dq: tensor<1x4x128x512xf16>, %dk: tensor<1x2x128x512xf16>, %dv: tensor<1x2x128x512xf16>) -> (tensor<1x4x128x512xf16>, tensor<1x2x128x512xf16>, tensor<1x2x128x512xf16>) {
  // expected-error @+6 {{no tile candidate of host fits this op (f16, D = 512, Dv = 512)}}
  // expected-note @+5 {{candidate 'host_m32n64': direction: a forward kernel}}
  // expected-note @+4 {{candidate 'host_m32n128': direction: a forward kernel}}
  // expected-note @+3 {{candidate 'host_m16n64': direction: a forward kernel}}
  // expected-note @+2 {{candidate 'host_m16n32': direction: a forward kernel}}
  // expected-note @+1 {{candidate 'host_bwd_m32n32': head dim D = 512: host handles at most 256}}
  %r:3 = attn.attention_grad q(%q : tensor<1x4x128x512xf16>) k(%k : tensor<1x2x128x512xf16>) v(%k : tensor<1x2x128x512xf16>) o(%o : tensor<1x4x128x512xf16>) do(%o : tensor<1x4x128x512xf16>) lse(%lse : tensor<1x4x128xf32>) outs(%dq, %dk, %dv : tensor<1x4x128x512xf16>, tensor<1x2x128x512xf16>, tensor<1x2x128x512xf16>) {mask = #attn.mask<causal>} -> tensor<1x4x128x512xf16>, tensor<1x2x128x512xf16>, tensor<1x2x128x512xf16>
  return %r#0, %r#1, %r#2 : tensor<1x4x128x512xf16>, tensor<1x2x128x512xf16>, tensor<1x2x128x512xf16>
}
