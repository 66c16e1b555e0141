// RUN: attn-opt %s --convert-attn-to-nvvm=chip=sm_90a | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-nvvm=chip=sm_90a | FileCheck %s --check-prefix=ROWS
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
// PTX: shfl.sync.bfly.b32
// PTX-NOT: {{^[[:space:]]*(red|atom)\.}}
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
// When dbias is summed over query rows (its Sq stride 0 where Sq > 1, or
// Sq = 1: a key-padding bias; summed && extent 1, decided at run time) main
// sums each head's rows itself and writes row 0 of dbias_full alone, so
// pre zeroes row 0 alone (the key blocks no query row sees are not
// written). Per element, main then stores nothing; per query block it
// adds up each key row over the lanes holding its query columns (xor 1, 2:
// mma.sync's four lanes of a row), one lane per row (lane & 3 == 0) keeps
// the head's running sum in shared memory (restarted at the head's first
// block) and stores it to dbias_full at the head's last block. The
// reduce then reads row 0 alone.
// ROWS-LABEL: gpu.func @bwd_bf16_d64_causal_bias_dbias_det_m64n64w4s2_pre(
// ROWS: } else {
// ROWS: %[[ONE:.*]] = arith.cmpi eq, %{{.*}}, %c1_i64{{.*}} : i64
// ROWS: %[[SUMROWS:.*]] = arith.andi %{{.*}}, %[[ONE]] : i1
// ROWS: %[[OTHER:.*]] = arith.xori %[[SUMROWS]], %true{{.*}} : i1
// ROWS: %[[ROW0:.*]] = arith.cmpi eq, %{{.*}}, %c0_i32{{.*}} : i32
// ROWS: %[[ZERO:.*]] = arith.ori %[[OTHER]], %[[ROW0]] : i1
// ROWS: scf.if %[[ZERO]] {
// ROWS: scf.for
// ROWS: llvm.store %{{.*}} : f32, !llvm.ptr<1>
// ROWS-LABEL: gpu.func @bwd_bf16_d64_causal_bias_dbias_det_m64n64w4s2_main(
// ROWS: %[[ISONE:.*]] = arith.cmpi eq, %{{.*}}, %c1_i64{{.*}} : i64
// ROWS: %[[MAINROWS:.*]] = arith.andi %{{.*}}, %[[ISONE]] : i1
// ROWS: scf.for %[[T:.*]] = {{.*}} iter_args(
// The pair's query block, then the same index for first and last.
// ROWS: arith.remui %[[T]], %[[BLOCKS:.*]] : i32
// ROWS: %[[I:.*]] = arith.remui %[[T]], %[[BLOCKS]] : i32
// ROWS: %[[FIRST:.*]] = arith.cmpi eq, %[[I]], %c0_i32{{.*}} : i32
// ROWS: %[[LASTI:.*]] = arith.subi %[[BLOCKS]], %c1_i32{{.*}} : i32
// ROWS: %[[LAST:.*]] = arith.cmpi eq, %[[I]], %[[LASTI]] : i32
// Per element: stored only when the rows are not summed.
// ROWS: %[[NOTROWS:.*]] = arith.xori %[[MAINROWS]], %true{{.*}} : i1
// ROWS: arith.andi %{{.*}}, %[[NOTROWS]] : i1
// ROWS: scf.if %[[MAINROWS]] {
// ROWS: %[[SH1:.*]], %{{.*}} = gpu.shuffle  xor %[[SUM0:.*]], %c1_i32{{.*}}, %c32_i32{{.*}} : f32
// ROWS: %[[R1:.*]] = arith.addf %[[SUM0]], %[[SH1]] : f32
// ROWS: %[[SH2:.*]], %{{.*}} = gpu.shuffle  xor %[[R1]], %c2_i32{{.*}}, %c32_i32{{.*}} : f32
// ROWS: %[[R2:.*]] = arith.addf %[[R1]], %[[SH2]] : f32
// ROWS: gpu.shuffle  xor
// ROWS: gpu.shuffle  xor
// ROWS: %[[GROUP:.*]] = arith.andi %{{.*}}, %c3_i32 : i32
// ROWS: %[[LEADER:.*]] = arith.cmpi eq, %[[GROUP]], %c0_i32{{.*}} : i32
// ROWS: scf.if %[[LEADER]] {
// ROWS: %[[AT:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// ROWS: %[[OLD:.*]] = llvm.load %[[AT]] {{.*}} : !llvm.ptr<3> -> f32
// ROWS: %[[PREV:.*]] = arith.select %[[FIRST]], %{{.*}}, %[[OLD]] : f32
// ROWS: %[[TOTAL:.*]] = arith.addf %[[PREV]], %[[R2]] : f32
// ROWS: llvm.store %[[TOTAL]], %[[AT]] {{.*}} : f32, !llvm.ptr<3>
// ROWS: %[[INKEYS:.*]] = arith.andi %[[LAST]], %{{.*}} : i1
// ROWS: scf.if %[[INKEYS]] {
// ROWS: llvm.store %[[TOTAL]], %{{.*}} : f32, !llvm.ptr<1>
// ROWS: }
// (The i32 shuffles after it transpose dK and dV pairs for 16-byte stores.)
// ROWS-NOT: gpu.shuffle {{.*}} : f32
// ROWS-LABEL: gpu.func @bwd_bf16_d64_causal_bias_dbias_det_m64n64w4s2_main_q(
// ROWS-NOT: gpu.shuffle {{.*}} : f32
// ROWS-LABEL: gpu.func @bwd_bf16_d64_causal_bias_dbias_det_m64n64w4s2_dbias(
// One row of dbias: the summed batch (arg 12) and heads (arg 13) of row 0;
// never Sq (arg 15) rows.
// ROWS: } else {
// ROWS: arith.select %{{.*}}, %arg12, %c1_i32{{.*}} : i32
// ROWS: arith.select %{{.*}}, %arg13, %c1_i32{{.*}} : i32
// ROWS-NOT: %arg15
// ROWS: arith.ceildivui
func.func @det_bias(%q: memref<2x8x?x64xbf16>, %lse: memref<2x8x?xf32>, %bias: memref<2x8x?x?xbf16>, %db: memref<2x8x?x?xbf16>) {
  attn.attention_grad q(%q : memref<2x8x?x64xbf16>) k(%q : memref<2x8x?x64xbf16>) v(%q : memref<2x8x?x64xbf16>) o(%q : memref<2x8x?x64xbf16>) do(%q : memref<2x8x?x64xbf16>) lse(%lse : memref<2x8x?xf32>) bias(%bias : memref<2x8x?x?xbf16>) outs(%q, %q, %q : memref<2x8x?x64xbf16>, memref<2x8x?x64xbf16>, memref<2x8x?x64xbf16>) grad_bias(%db : memref<2x8x?x?xbf16>) {mask = #attn.mask<causal>, config = #bwd}
  return
}
