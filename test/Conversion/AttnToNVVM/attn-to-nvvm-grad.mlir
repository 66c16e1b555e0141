// RUN: attn-opt %s -split-input-file --convert-attn-to-nvvm=chip=sm_90a | FileCheck %s
// Without sm_90's vector reductions dQ is added one float at a time.
// RUN: attn-opt %s -split-input-file --convert-attn-to-nvvm=chip=sm_80 | FileCheck %s --check-prefix=SM80

// attn.attention_grad becomes its backward plan: a workspace (delta, then
// dq_accum at the next 256 bytes), the three stage launches in order on one
// gpu.module, and the plan's bundle metadata (kind = "plan") on the module.
// The main kernel walks the key blocks of a key/value head (grid x =
// ceil(Sk / block_n), y = Hkv) with mma.sync, and adds dQ with atomics.

#bwd = #attn.config<name = "bwd_d64_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mma.m16n8k16>

// CHECK: module attributes {attn.kernels = [{abi = "attn-bwd-v1"
// CHECK-SAME: deterministic = false
// CHECK-SAME: kind = "plan"
// CHECK-SAME: name = "bwd_f16_d64_causal_m64n64w4s1"
// CHECK-SAME: stages = [{dynamic_smem = 0 : i64, entry = "bwd_f16_d64_causal_m64n64w4s1_pre", grid = [{block = 4 : i64, dim = "seqlen_q"}, {dim = "heads_q"}, {dim = "batch"}], name = "pre", threads = 128 : i64, zeroes = ["dq_accum"]}, {dynamic_smem = 46080 : i64, entry = "bwd_f16_d64_causal_m64n64w4s1_main", grid = [{block = 64 : i64, dim = "seqlen_k"}, {dim = "heads_kv"}, {dim = "batch"}], name = "main", reduces = ["dq_accum"], threads = 128 : i64}, {dynamic_smem = 0 : i64, entry = "bwd_f16_d64_causal_m64n64w4s1_dq"
// CHECK-SAME: workspace = [{dims = ["batch", "heads_q", "seqlen_q"], dtype = "f32", name = "delta"}, {dims = ["batch", "heads_q", "seqlen_q", "head_dim"], dtype = "f32", name = "dq_accum"}]

// CHECK-LABEL: func.func @grad
// CHECK: %[[WS:.*]] = gpu.alloc (%{{.*}}) : memref<?xi8>
// CHECK: gpu.launch_func @bwd_f16_d64_causal_m64n64w4s1::@bwd_f16_d64_causal_m64n64w4s1_pre blocks in (%{{.*}}, %c4{{.*}}, %{{.*}}) threads in (%c128
// CHECK: gpu.launch_func @bwd_f16_d64_causal_m64n64w4s1::@bwd_f16_d64_causal_m64n64w4s1_main blocks in (%{{.*}}, %c2{{.*}}, %{{.*}}) threads in (%c128{{.*}}) dynamic_shared_memory_size %c46080_i32
// CHECK: gpu.launch_func @bwd_f16_d64_causal_m64n64w4s1::@bwd_f16_d64_causal_m64n64w4s1_dq
// CHECK: gpu.dealloc %[[WS]] : memref<?xi8>

// CHECK: gpu.module @bwd_f16_d64_causal_m64n64w4s1
// CHECK: gpu.func @bwd_f16_d64_causal_m64n64w4s1_pre
// CHECK: gpu.shuffle xor
// CHECK: gpu.func @bwd_f16_d64_causal_m64n64w4s1_main
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK: nvvm.ldmatrix
// CHECK: nvvm.mma.sync
// CHECK: llvm.inline_asm has_side_effects "red.relaxed.gpu.global.add.v2.f32 [$0], {$1, $2};", "l,f,f"
// CHECK: gpu.func @bwd_f16_d64_causal_m64n64w4s1_dq
// SM80-LABEL: gpu.func @bwd_f16_d64_causal_m64n64w4s1_main
// SM80-NOT: red.relaxed
// SM80: llvm.atomicrmw fadd
// SM80-LABEL: gpu.func @bwd_f16_d64_causal_m64n64w4s1_dq
func.func @grad(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>,
                %o: memref<?x4x?x64xf16>, %lse: memref<?x4x?xf32>,
                %dq: memref<?x4x?x64xf16>, %dk: memref<?x2x?x64xf16>,
                %dv: memref<?x2x?x64xf16>) {
  attn.attention_grad q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x2x?x64xf16>) v(%k : memref<?x2x?x64xf16>) o(%o : memref<?x4x?x64xf16>) do(%o : memref<?x4x?x64xf16>) lse(%lse : memref<?x4x?xf32>) outs(%dq, %dk, %dv : memref<?x4x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16>) {mask = #attn.mask<causal>, config = #bwd}
  return
}

// -----

// Two ops of one spec share the plan's kernels and its metadata entry.

#bwd = #attn.config<name = "bwd_d64_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mma.m16n8k16>

// CHECK: attn.kernels = [{abi = "attn-bwd-v1"
// CHECK-NOT: abi = "attn-bwd-v1"
// CHECK-LABEL: func.func @twice
// CHECK-COUNT-2: gpu.launch_func @bwd_bf16_d64_none_softcap_bias_m64n64w4s1::@bwd_bf16_d64_none_softcap_bias_m64n64w4s1_main
// CHECK-COUNT-1: gpu.module @bwd_bf16_d64_none_softcap_bias_m64n64w4s1
// CHECK: math.tanh
func.func @twice(%q: memref<1x4x128x64xbf16>, %lse: memref<1x4x128xf32>,
                 %bias: memref<1x1x128x128xbf16>) {
  attn.attention_grad q(%q : memref<1x4x128x64xbf16>) k(%q : memref<1x4x128x64xbf16>) v(%q : memref<1x4x128x64xbf16>) o(%q : memref<1x4x128x64xbf16>) do(%q : memref<1x4x128x64xbf16>) lse(%lse : memref<1x4x128xf32>) bias(%bias : memref<1x1x128x128xbf16>) outs(%q, %q, %q : memref<1x4x128x64xbf16>, memref<1x4x128x64xbf16>, memref<1x4x128x64xbf16>) {softcap = 30.0 : f32, config = #bwd}
  attn.attention_grad q(%q : memref<1x4x128x64xbf16>) k(%q : memref<1x4x128x64xbf16>) v(%q : memref<1x4x128x64xbf16>) o(%q : memref<1x4x128x64xbf16>) do(%q : memref<1x4x128x64xbf16>) lse(%lse : memref<1x4x128xf32>) bias(%bias : memref<1x1x128x128xbf16>) outs(%q, %q, %q : memref<1x4x128x64xbf16>, memref<1x4x128x64xbf16>, memref<1x4x128x64xbf16>) {softcap = 30.0 : f32, config = #bwd}
  return
}
