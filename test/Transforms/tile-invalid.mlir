// RUN: attn-opt %s -split-input-file -attn-tile -verify-diagnostics

func.func @no_config(%q: memref<1x2x16x64xf32>, %k: memref<1x2x16x64xf32>,
                     %v: memref<1x2x16x64xf32>, %o: memref<1x2x16x64xf32>) {
  // expected-error @below {{config: attn-tile needs a #attn.config attribute; run attn-select-config first}}
  attn.attention q(%q : memref<1x2x16x64xf32>) k(%k : memref<1x2x16x64xf32>)
      v(%v : memref<1x2x16x64xf32>) outs(%o : memref<1x2x16x64xf32>)
  return
}

// -----

#cfg = #attn.config<name = "host_m16n64", block_m = 16, block_n = 64, warps = 1, stages = 1, pipeline = simple, acc_in_registers = false, mma = fma>
func.func @tensor_form(%q: tensor<1x2x16x64xf32>, %k: tensor<1x2x16x64xf32>,
                       %v: tensor<1x2x16x64xf32>, %o: tensor<1x2x16x64xf32>)
    -> tensor<1x2x16x64xf32> {
  // expected-error @below {{output: attn-tile expects the memref form; run one-shot-bufferize first}}
  %r = attn.attention q(%q : tensor<1x2x16x64xf32>) k(%k : tensor<1x2x16x64xf32>)
      v(%v : tensor<1x2x16x64xf32>) outs(%o : tensor<1x2x16x64xf32>)
      {config = #cfg} -> tensor<1x2x16x64xf32>
  return %r : tensor<1x2x16x64xf32>
}

// -----

#big = #attn.config<name = "huge", block_m = 4096, block_n = 64, warps = 1, stages = 1, pipeline = simple, acc_in_registers = false, mma = fma>
func.func @scratch_too_large(%q: memref<1x2x16x64xf32>, %k: memref<1x2x16x64xf32>,
                             %v: memref<1x2x16x64xf32>, %o: memref<1x2x16x64xf32>) {
  // expected-error @below {{config: block_m = 4096 and block_n = 64 with D = 64, Dv = 64 need 2130176 bytes of scratch per block; expected at most 1048576}}
  attn.attention q(%q : memref<1x2x16x64xf32>) k(%k : memref<1x2x16x64xf32>)
      v(%v : memref<1x2x16x64xf32>) outs(%o : memref<1x2x16x64xf32>)
      {config = #big}
  return
}
