// `profile` restricts the candidates to a profile's directions and element
// types: the host accepts f32 with the `all` and `inference` profiles, not
// with `training` (f16/bf16 only: f32 gradients have no GPU plans); an
// unknown profile names the known ones.
// RUN: attn-opt %s -attn-select-config="target=host profile=all" | FileCheck %s --check-prefix=ALL
// RUN: attn-opt %s -attn-select-config="target=host profile=inference" | FileCheck %s --check-prefix=ALL
// RUN: not attn-opt %s -attn-select-config="target=host profile=training" 2>&1 | FileCheck %s --check-prefix=TRAINING
// RUN: not attn-opt %s -attn-select-config="target=host profile=serving" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// ALL-LABEL: func.func @d64_f32
// ALL: config = #attn.config<name = "host_m32n64"
// TRAINING: error: no tile candidate of host fits this op (f32, D = 64, Dv = 64)
// TRAINING: note: candidate 'host_m32n64': profile training: excludes element type f32
// UNKNOWN: error: attn-select-config: unknown profile 'serving'; known profiles: all, inference, training
func.func @d64_f32(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>, %o: tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %r = attn.attention q(%q : tensor<1x8x?x64xf32>) k(%k : tensor<1x8x?x64xf32>) v(%v : tensor<1x8x?x64xf32>)
      outs(%o : tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32>
  return %r : tensor<1x8x?x64xf32>
}
