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

// -----

// attn.attention_grad: the same checks; its scratch is the K, V, dK and dV
// tiles of one key block (4 * block_n * 2 * (D + Dv) bytes).

func.func @grad_no_config(%t: memref<1x2x16x64xf32>, %lse: memref<1x2x16xf32>) {
  // expected-error @below {{config: attn-tile needs a #attn.config attribute; run attn-select-config first}}
  attn.attention_grad q(%t : memref<1x2x16x64xf32>) k(%t : memref<1x2x16x64xf32>) v(%t : memref<1x2x16x64xf32>) o(%t : memref<1x2x16x64xf32>) do(%t : memref<1x2x16x64xf32>) lse(%lse : memref<1x2x16xf32>) outs(%t, %t, %t : memref<1x2x16x64xf32>, memref<1x2x16x64xf32>, memref<1x2x16x64xf32>)
  return
}

// -----

#cfg = #attn.config<name = "host_bwd_m32n32", block_m = 32, block_n = 32, warps = 1, stages = 1, pipeline = simple, acc_in_registers = false, mma = fma>
func.func @grad_tensor_form(%t: tensor<1x2x16x64xf32>, %lse: tensor<1x2x16xf32>) {
  // expected-error @below {{grad_query: attn-tile expects the memref form; run one-shot-bufferize first}}
  %r:3 = attn.attention_grad q(%t : tensor<1x2x16x64xf32>) k(%t : tensor<1x2x16x64xf32>) v(%t : tensor<1x2x16x64xf32>) o(%t : tensor<1x2x16x64xf32>) do(%t : tensor<1x2x16x64xf32>) lse(%lse : tensor<1x2x16xf32>) outs(%t, %t, %t : tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>) {config = #cfg} -> tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>
  return
}

// -----

#big = #attn.config<name = "huge", block_m = 16, block_n = 2048, warps = 1, stages = 1, pipeline = simple, acc_in_registers = false, mma = fma>
func.func @grad_scratch_too_large(%t: memref<1x2x16x64xf32>, %lse: memref<1x2x16xf32>) {
  // expected-error @below {{config: block_m = 16 and block_n = 2048 with D = 64, Dv = 64 need 2097152 bytes of scratch per block; expected at most 1048576}}
  attn.attention_grad q(%t : memref<1x2x16x64xf32>) k(%t : memref<1x2x16x64xf32>) v(%t : memref<1x2x16x64xf32>) o(%t : memref<1x2x16x64xf32>) do(%t : memref<1x2x16x64xf32>) lse(%lse : memref<1x2x16xf32>) outs(%t, %t, %t : memref<1x2x16x64xf32>, memref<1x2x16x64xf32>, memref<1x2x16x64xf32>) {config = #big}
  return
}

// -----

// The host loop nest sizes its vectors by the head dims.
#cfg = #attn.config<name = "host_m32n64", block_m = 32, block_n = 64, warps = 1, stages = 1, pipeline = simple, acc_in_registers = true, mma = fma, max_head_dim = 64>
func.func @dynamic_head_dim(%q: memref<1x2x8x?xf32>, %o: memref<1x2x8x?xf32>) {
  // expected-error @+1 {{has a dynamic head dim: attn-tile (the host pipeline) needs static D and Dv; the GPU lowerings take it with a config's max_head_dim}}
  attn.attention q(%q : memref<1x2x8x?xf32>) k(%q : memref<1x2x8x?xf32>) v(%q : memref<1x2x8x?xf32>) outs(%o : memref<1x2x8x?xf32>) {config = #cfg}
  return
}
