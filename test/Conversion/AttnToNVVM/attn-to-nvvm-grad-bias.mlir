// RUN: attn-opt %s --convert-attn-to-nvvm=chip=sm_90a | FileCheck %s

// The bias gradient on the GPU: the plan adds dbias_accum (f32, the summed
// bias gradient's extents) to the workspace, zero_dbias before main (which
// adds dS there when dbias is summed over a dimension, else writes dbias
// directly) and convert_dbias after it; the launch from IR sizes the
// workspace with grad_bias's shape and launches all five stages in order.

#bwd = #attn.config<name = "bwd_d64_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>

// CHECK: module attributes {attn.kernels = [{{{.*}}bias = "same"{{.*}}bias_grad = true
// CHECK-SAME: name = "bwd_bf16_d64_causal_bias_dbias_m64n64w4s2"
// CHECK-SAME: stages = [{{{.*}}entry = "[[P:bwd_bf16_d64_causal_bias_dbias_m64n64w4s2]]_pre"
// CHECK-SAME: entry = "[[P]]_zero_dbias", grid = [{block = 128 : i64, dim = "bias_seqlen_q"}, {dim = "bias_heads"}, {dim = "bias_batch"}], name = "zero_dbias", threads = 128 : i64, zeroes = ["dbias_accum"]
// CHECK-SAME: entry = "[[P]]_main"{{.*}}reduces = ["dq_accum", "dbias_accum"]
// CHECK-SAME: entry = "[[P]]_dq"
// CHECK-SAME: entry = "[[P]]_dbias"{{.*}}name = "convert_dbias"{{.*}}reads = ["dbias_accum"]
// CHECK-SAME: workspace = [{{.*}}name = "delta"{{.*}}name = "dq_accum"}, {dims = ["bias_batch", "bias_heads", "bias_seqlen_q", "bias_seqlen_k"], dtype = "f32", name = "dbias_accum"}]

// CHECK-LABEL: func.func @grad_bias
// CHECK: gpu.alloc
// CHECK: gpu.launch_func  @[[P]]::@[[P]]_pre
// CHECK: gpu.launch_func  @[[P]]::@[[P]]_zero_dbias
// CHECK: gpu.launch_func  @[[P]]::@[[P]]_main
// CHECK: gpu.launch_func  @[[P]]::@[[P]]_dq
// CHECK: gpu.launch_func  @[[P]]::@[[P]]_dbias
// CHECK: gpu.func @[[P]]_main(
// CHECK: llvm.atomicrmw fadd
func.func @grad_bias(%q: memref<2x8x?x64xbf16>, %lse: memref<2x8x?xf32>, %bias: memref<1x8x?x?xbf16>, %db: memref<1x8x?x?xbf16>) {
  attn.attention_grad q(%q : memref<2x8x?x64xbf16>) k(%q : memref<2x8x?x64xbf16>) v(%q : memref<2x8x?x64xbf16>) o(%q : memref<2x8x?x64xbf16>) do(%q : memref<2x8x?x64xbf16>) lse(%lse : memref<2x8x?xf32>) bias(%bias : memref<1x8x?x?xbf16>) outs(%q, %q, %q : memref<2x8x?x64xbf16>, memref<2x8x?x64xbf16>, memref<2x8x?x64xbf16>) grad_bias(%db : memref<1x8x?x?xbf16>) {mask = #attn.mask<causal>, config = #bwd}
  return
}
