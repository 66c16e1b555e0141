// The backward plan's kernels through the whole attn-to-nvvm pipeline to
// PTX, assembled by ptxas: the table's mma.sync tiles (sm_80 to sm_89's;
// sm_90a's own are wgmma, nvvm-ptxas-backward-wgmma.mlir) for D = 64
// (block_m 64) and D = 128 (block_m 32), Q and dO double-buffered, fit in registers
// without spills (ptxas 13.0; up to 16 bytes allowed for D = 128), the main kernel
// adds dQ into the f32 workspace with atomics (sm_90's vector reduction
// red.global.add.v2.f32, two floats per instruction) and
// runs its products on mma.sync.
// REQUIRES: ptxas
// RUN: attn-opt %s -split-input-file --attn-to-nvvm="chip=sm_90a format=isa select-config=false" > %t.mlir
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir | sed -n 1p \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.64.ptx
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir | sed -n 2p \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.128.ptx
// RUN: sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' %t.mlir | sed -n 3p \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.256.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.64.ptx
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.64.ptx -o %t.64.cubin 2>&1 | FileCheck %s --check-prefix=D64
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.128.ptx -o %t.128.cubin 2>&1 | FileCheck %s --check-prefix=D128
// RUN: FileCheck %s --check-prefix=SPLIT < %t.mlir
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90a -v %t.256.ptx -o %t.256.cubin > %t.256.log 2>&1
// RUN: FileCheck %s --check-prefix=D256 < %t.256.log
// RUN: not grep -E ' [1-9][0-9]* bytes spill' %t.256.log

// PTX-LABEL: .entry bwd_bf16_d64_causal_m64n64w4s2_pre(
// PTX: shfl.sync.bfly
// PTX-LABEL: .entry bwd_bf16_d64_causal_m64n64w4s2_main(
// PTX: cp.async.cg.shared.global
// PTX: ldmatrix.sync.aligned
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX: red.relaxed.gpu.global.add.v2.f32
// PTX-LABEL: .entry bwd_bf16_d64_causal_m64n64w4s2_dq(

// D64-LABEL: Compiling entry function 'bwd_bf16_d64_causal_m64n64w4s2_main'
// D64-NEXT: Function properties for bwd_bf16_d64_causal_m64n64w4s2_main
// D64-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// D = 256: the columns of dK, dV and dQ in two slices (head_split 2), one
// main kernel each after pre, both without spills.
// SPLIT: name = "bwd_bf16_d256_causal_m32n64w4s2h2"
// SPLIT-SAME: name = "main", reduces = ["dq_accum"]
// SPLIT-SAME: entry = "bwd_bf16_d256_causal_m32n64w4s2h2_main_1"
// SPLIT-SAME: name = "main_1", reduces = ["dq_accum"]
// SPLIT-SAME: name = "convert_dq"
// D256-DAG: Function properties for bwd_bf16_d256_causal_m32n64w4s2h2_main{{$}}
// D256-DAG: Function properties for bwd_bf16_d256_causal_m32n64w4s2h2_main_1{{$}}

// D128-LABEL: Compiling entry function 'bwd_bf16_d128_causal_m32n64w4s2_main'
// D128-NEXT: Function properties for bwd_bf16_d128_causal_m32n64w4s2_main
// D128-NEXT: {{([0-9]|1[0-6])}} bytes stack frame, {{([0-9]|1[0-6])}} bytes spill stores

#d64 = #attn.config<name = "bwd_d64_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
#d128 = #attn.config<name = "bwd_d128_m32n64w4", block_m = 32, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
#d256 = #attn.config<name = "bwd_d256_m32n64w4", block_m = 32, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16, head_split = 2>

func.func @d64(%q: tensor<2x8x1000x64xbf16>, %k: tensor<2x2x1000x64xbf16>, %lse: tensor<2x8x1000xf32>) -> (tensor<2x8x1000x64xbf16>, tensor<2x2x1000x64xbf16>, tensor<2x2x1000x64xbf16>) {
  %r:3 = attn.attention_grad q(%q : tensor<2x8x1000x64xbf16>) k(%k : tensor<2x2x1000x64xbf16>) v(%k : tensor<2x2x1000x64xbf16>) o(%q : tensor<2x8x1000x64xbf16>) do(%q : tensor<2x8x1000x64xbf16>) lse(%lse : tensor<2x8x1000xf32>) outs(%q, %k, %k : tensor<2x8x1000x64xbf16>, tensor<2x2x1000x64xbf16>, tensor<2x2x1000x64xbf16>) {mask = #attn.mask<causal>, config = #d64} -> tensor<2x8x1000x64xbf16>, tensor<2x2x1000x64xbf16>, tensor<2x2x1000x64xbf16>
  return %r#0, %r#1, %r#2 : tensor<2x8x1000x64xbf16>, tensor<2x2x1000x64xbf16>, tensor<2x2x1000x64xbf16>
}

func.func @d128(%q: tensor<2x8x1000x128xbf16>, %k: tensor<2x2x1000x128xbf16>, %lse: tensor<2x8x1000xf32>) -> (tensor<2x8x1000x128xbf16>, tensor<2x2x1000x128xbf16>, tensor<2x2x1000x128xbf16>) {
  %r:3 = attn.attention_grad q(%q : tensor<2x8x1000x128xbf16>) k(%k : tensor<2x2x1000x128xbf16>) v(%k : tensor<2x2x1000x128xbf16>) o(%q : tensor<2x8x1000x128xbf16>) do(%q : tensor<2x8x1000x128xbf16>) lse(%lse : tensor<2x8x1000xf32>) outs(%q, %k, %k : tensor<2x8x1000x128xbf16>, tensor<2x2x1000x128xbf16>, tensor<2x2x1000x128xbf16>) {mask = #attn.mask<causal>, config = #d128} -> tensor<2x8x1000x128xbf16>, tensor<2x2x1000x128xbf16>, tensor<2x2x1000x128xbf16>
  return %r#0, %r#1, %r#2 : tensor<2x8x1000x128xbf16>, tensor<2x2x1000x128xbf16>, tensor<2x2x1000x128xbf16>
}

func.func @d256(%q: tensor<2x8x1000x256xbf16>, %k: tensor<2x2x1000x256xbf16>, %lse: tensor<2x8x1000xf32>) -> (tensor<2x8x1000x256xbf16>, tensor<2x2x1000x256xbf16>, tensor<2x2x1000x256xbf16>) {
  %r:3 = attn.attention_grad q(%q : tensor<2x8x1000x256xbf16>) k(%k : tensor<2x2x1000x256xbf16>) v(%k : tensor<2x2x1000x256xbf16>) o(%q : tensor<2x8x1000x256xbf16>) do(%q : tensor<2x8x1000x256xbf16>) lse(%lse : tensor<2x8x1000xf32>) outs(%q, %k, %k : tensor<2x8x1000x256xbf16>, tensor<2x2x1000x256xbf16>, tensor<2x2x1000x256xbf16>) {mask = #attn.mask<causal>, config = #d256} -> tensor<2x8x1000x256xbf16>, tensor<2x2x1000x256xbf16>, tensor<2x2x1000x256xbf16>
  return %r#0, %r#1, %r#2 : tensor<2x8x1000x256xbf16>, tensor<2x2x1000x256xbf16>, tensor<2x2x1000x256xbf16>
}
