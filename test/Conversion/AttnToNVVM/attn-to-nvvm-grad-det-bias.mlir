// RUN: attn-opt %s --convert-attn-to-nvvm=chip=sm_90a | FileCheck %s
// RUN: attn-opt %s --attn-to-nvvm="chip=sm_90a format=isa select-config=false" | sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' | sed 's/\\0A/\n/g; s/\\09/\t/g' | FileCheck %s --check-prefix=PTX

// A deterministic plan with the bias gradient adds nothing by atomics: no
// dbias_accum, no zero_dbias stage, no red/atom anywhere. An unsummed dbias
// is written directly by main; one summed over a broadcast dimension goes
// to dbias_full [B, Hq, Sq, Sk] (sized by bias_summed, 0 or 1: empty when
// unsummed), zeroed by pre, written once per element by main and summed in
// an order fixed by the shape by the last stage (reduce_dbias, `_dbias`:
// 32 key columns a workgroup, 8 threads sharing each column's rows or, for
// one row, its summed positions in runs added in run order through shared
// memory; f32 loads, one store of the bias type per element).

#bwd = #attn.config<name = "bwd_d64_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16, deterministic = true>

// CHECK: module attributes {attn.kernels = [{{{.*}}bias_grad = true
// CHECK-SAME: deterministic = true
// CHECK-SAME: name = "[[P:bwd_bf16_d64_causal_bias_dbias_det_m64n64w4s2]]"
// CHECK-SAME: stages = [{{{.*}}name = "pre", threads = 128 : i64, zeroes = ["dbias_full"]}, {{{.*}}name = "main_kv"{{.*}}name = "main_q", reads = ["delta"], threads = 128 : i64}, {dynamic_smem = 1024 : i64, {{.*}}grid = [{block = 32 : i64, dim = "bias_seqlen_k"}, {dim = "bias_heads"}, {dim = "bias_batch"}], name = "reduce_dbias", reads = ["dbias_full"], threads = 256 : i64}]
// CHECK-SAME: workspace = [{dims = ["batch", "heads_q", "seqlen_q"], dtype = "f32", name = "delta"}, {dims = ["bias_summed", "batch", "heads_q", "seqlen_q", "seqlen_k"], dtype = "f32", name = "dbias_full"}]}

// CHECK-LABEL: func.func @det_bias
// CHECK-NOT: cf.assert
// CHECK: gpu.alloc
// CHECK: gpu.launch_func  @[[P]]::@[[P]]_pre
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.launch_func  @[[P]]::@[[P]]_main
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.launch_func  @[[P]]::@[[P]]_main_q
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.launch_func  @[[P]]::@[[P]]_dbias
// CHECK-NOT: gpu.launch_func

// PTX-LABEL: .entry bwd_bf16_d64_causal_bias_dbias_det_m64n64w4s2_pre(
// PTX-NOT: {{^[[:space:]]*(red|atom)\.}}
// PTX-LABEL: .entry bwd_bf16_d64_causal_bias_dbias_det_m64n64w4s2_main(
// PTX-NOT: {{^[[:space:]]*(red|atom)\.}}
// PTX: mma.sync
// PTX-LABEL: .entry bwd_bf16_d64_causal_bias_dbias_det_m64n64w4s2_main_q(
// PTX-NOT: {{^[[:space:]]*(red|atom)\.}}
// PTX-LABEL: .entry bwd_bf16_d64_causal_bias_dbias_det_m64n64w4s2_dbias(
// PTX-NOT: {{^[[:space:]]*(red|atom)\.}}
// PTX-DAG: ld.global.b32
// PTX-DAG: add.rn.f32
// PTX-DAG: cvt.rn.bf16.f32
// PTX-DAG: st.global.b16
// PTX-NOT: {{^[[:space:]]*(red|atom)\.}}
// PTX-NOT: .entry
func.func @det_bias(%q: memref<2x8x?x64xbf16>, %lse: memref<2x8x?xf32>, %bias: memref<2x8x?x?xbf16>, %db: memref<2x8x?x?xbf16>) {
  attn.attention_grad q(%q : memref<2x8x?x64xbf16>) k(%q : memref<2x8x?x64xbf16>) v(%q : memref<2x8x?x64xbf16>) o(%q : memref<2x8x?x64xbf16>) do(%q : memref<2x8x?x64xbf16>) lse(%lse : memref<2x8x?xf32>) bias(%bias : memref<2x8x?x?xbf16>) outs(%q, %q, %q : memref<2x8x?x64xbf16>, memref<2x8x?x64xbf16>, memref<2x8x?x64xbf16>) grad_bias(%db : memref<2x8x?x?xbf16>) {mask = #attn.mask<causal>, config = #bwd}
  return
}
