// Selection on the host pseudo-chip: every element type, D in {64, 128, 256}.
// RUN: attn-opt %s -split-input-file -attn-select-config=target=host | FileCheck %s --check-prefix=HOST

// HOST-LABEL: func.func @d64_f16
// HOST: attn.attention {{.*}}config = #attn.config<name = "host_m32n64", block_m = 32, block_n = 64, warps = 1, stages = 1, pipeline = simple, acc_in_registers = true, mma = fma>
func.func @d64_f16(%q: tensor<1x8x?x64xf16>, %k: tensor<1x8x?x64xf16>, %v: tensor<1x8x?x64xf16>, %o: tensor<1x8x?x64xf16>) -> tensor<1x8x?x64xf16> {
  %r = attn.attention q(%q : tensor<1x8x?x64xf16>) k(%k : tensor<1x8x?x64xf16>) v(%v : tensor<1x8x?x64xf16>)
      outs(%o : tensor<1x8x?x64xf16>) -> tensor<1x8x?x64xf16>
  return %r : tensor<1x8x?x64xf16>
}

// -----

// HOST-LABEL: func.func @d64_bf16
// HOST: attn.attention {{.*}}config = #attn.config<name = "host_m32n64", block_m = 32, block_n = 64, warps = 1, stages = 1, pipeline = simple, acc_in_registers = true, mma = fma>
func.func @d64_bf16(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x8x?x64xbf16>, %v: tensor<1x8x?x64xbf16>, %o: tensor<1x8x?x64xbf16>) -> tensor<1x8x?x64xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x64xbf16>) k(%k : tensor<1x8x?x64xbf16>) v(%v : tensor<1x8x?x64xbf16>)
      outs(%o : tensor<1x8x?x64xbf16>) -> tensor<1x8x?x64xbf16>
  return %r : tensor<1x8x?x64xbf16>
}

// -----

// HOST-LABEL: func.func @d64_f32
// HOST: attn.attention {{.*}}config = #attn.config<name = "host_m32n64", block_m = 32, block_n = 64, warps = 1, stages = 1, pipeline = simple, acc_in_registers = true, mma = fma>
func.func @d64_f32(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>, %o: tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %r = attn.attention q(%q : tensor<1x8x?x64xf32>) k(%k : tensor<1x8x?x64xf32>) v(%v : tensor<1x8x?x64xf32>)
      outs(%o : tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32>
  return %r : tensor<1x8x?x64xf32>
}

// -----

// HOST-LABEL: func.func @d128_f16
// HOST: attn.attention {{.*}}config = #attn.config<name = "host_m32n64", block_m = 32, block_n = 64, warps = 1, stages = 1, pipeline = simple, acc_in_registers = true, mma = fma>
func.func @d128_f16(%q: tensor<1x8x?x128xf16>, %k: tensor<1x8x?x128xf16>, %v: tensor<1x8x?x128xf16>, %o: tensor<1x8x?x128xf16>) -> tensor<1x8x?x128xf16> {
  %r = attn.attention q(%q : tensor<1x8x?x128xf16>) k(%k : tensor<1x8x?x128xf16>) v(%v : tensor<1x8x?x128xf16>)
      outs(%o : tensor<1x8x?x128xf16>) -> tensor<1x8x?x128xf16>
  return %r : tensor<1x8x?x128xf16>
}

// -----

// HOST-LABEL: func.func @d128_bf16
// HOST: attn.attention {{.*}}config = #attn.config<name = "host_m32n64", block_m = 32, block_n = 64, warps = 1, stages = 1, pipeline = simple, acc_in_registers = true, mma = fma>
func.func @d128_bf16(%q: tensor<1x8x?x128xbf16>, %k: tensor<1x8x?x128xbf16>, %v: tensor<1x8x?x128xbf16>, %o: tensor<1x8x?x128xbf16>) -> tensor<1x8x?x128xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x128xbf16>) k(%k : tensor<1x8x?x128xbf16>) v(%v : tensor<1x8x?x128xbf16>)
      outs(%o : tensor<1x8x?x128xbf16>) -> tensor<1x8x?x128xbf16>
  return %r : tensor<1x8x?x128xbf16>
}

// -----

// HOST-LABEL: func.func @d128_f32
// HOST: attn.attention {{.*}}config = #attn.config<name = "host_m32n64", block_m = 32, block_n = 64, warps = 1, stages = 1, pipeline = simple, acc_in_registers = true, mma = fma>
func.func @d128_f32(%q: tensor<1x8x?x128xf32>, %k: tensor<1x8x?x128xf32>, %v: tensor<1x8x?x128xf32>, %o: tensor<1x8x?x128xf32>) -> tensor<1x8x?x128xf32> {
  %r = attn.attention q(%q : tensor<1x8x?x128xf32>) k(%k : tensor<1x8x?x128xf32>) v(%v : tensor<1x8x?x128xf32>)
      outs(%o : tensor<1x8x?x128xf32>) -> tensor<1x8x?x128xf32>
  return %r : tensor<1x8x?x128xf32>
}

// -----

// HOST-LABEL: func.func @d256_f16
// HOST: attn.attention {{.*}}config = #attn.config<name = "host_m32n64", block_m = 32, block_n = 64, warps = 1, stages = 1, pipeline = simple, acc_in_registers = true, mma = fma>
func.func @d256_f16(%q: tensor<1x8x?x256xf16>, %k: tensor<1x8x?x256xf16>, %v: tensor<1x8x?x256xf16>, %o: tensor<1x8x?x256xf16>) -> tensor<1x8x?x256xf16> {
  %r = attn.attention q(%q : tensor<1x8x?x256xf16>) k(%k : tensor<1x8x?x256xf16>) v(%v : tensor<1x8x?x256xf16>)
      outs(%o : tensor<1x8x?x256xf16>) -> tensor<1x8x?x256xf16>
  return %r : tensor<1x8x?x256xf16>
}

// -----

// HOST-LABEL: func.func @d256_bf16
// HOST: attn.attention {{.*}}config = #attn.config<name = "host_m32n64", block_m = 32, block_n = 64, warps = 1, stages = 1, pipeline = simple, acc_in_registers = true, mma = fma>
func.func @d256_bf16(%q: tensor<1x8x?x256xbf16>, %k: tensor<1x8x?x256xbf16>, %v: tensor<1x8x?x256xbf16>, %o: tensor<1x8x?x256xbf16>) -> tensor<1x8x?x256xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x256xbf16>) k(%k : tensor<1x8x?x256xbf16>) v(%v : tensor<1x8x?x256xbf16>)
      outs(%o : tensor<1x8x?x256xbf16>) -> tensor<1x8x?x256xbf16>
  return %r : tensor<1x8x?x256xbf16>
}

// -----

// HOST-LABEL: func.func @d256_f32
// HOST: attn.attention {{.*}}config = #attn.config<name = "host_m32n64", block_m = 32, block_n = 64, warps = 1, stages = 1, pipeline = simple, acc_in_registers = true, mma = fma>
func.func @d256_f32(%q: tensor<1x8x?x256xf32>, %k: tensor<1x8x?x256xf32>, %v: tensor<1x8x?x256xf32>, %o: tensor<1x8x?x256xf32>) -> tensor<1x8x?x256xf32> {
  %r = attn.attention q(%q : tensor<1x8x?x256xf32>) k(%k : tensor<1x8x?x256xf32>) v(%v : tensor<1x8x?x256xf32>)
      outs(%o : tensor<1x8x?x256xf32>) -> tensor<1x8x?x256xf32>
  return %r : tensor<1x8x?x256xf32>
}
