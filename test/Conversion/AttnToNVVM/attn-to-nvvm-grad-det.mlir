// RUN: attn-opt %s --convert-attn-to-nvvm=chip=sm_90a | FileCheck %s
// RUN: attn-opt %s --attn-to-nvvm="chip=sm_90a format=isa select-config=false" | sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' | sed 's/\\0A/\n/g; s/\\09/\t/g' | FileCheck %s --check-prefix=PTX

// A deterministic config (`deterministic = true`): a plan without atomics.
// `main_q` computes dQ in registers, one workgroup per 64 query rows (16 per
// warp) walking the key blocks its rows see, and first delta =
// rowsum(dO * O) of its rows (16-byte loads of O and dO, summed over the
// four lanes of a row), which it writes to the workspace; `main` (stage
// main_kv, launched after it) reads delta and computes dK and dV. No `pre`
// stage, no red/atom instruction in any kernel: the gradients are
// bit-reproducible.

#bwd = #attn.config<name = "bwd_d64_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16, deterministic = true>

// CHECK: module attributes {attn.kernels = [{{{.*}}deterministic = true
// CHECK-SAME: name = "[[P:bwd_bf16_d64_causal_det_m64n64w4s2]]"
// CHECK-SAME: stages = [{{{.*}}entry = "[[P]]_main_q", grid = [{block = 64 : i64, dim = "seqlen_q"}, {dim = "heads_q"}, {dim = "batch"}], name = "main_q", threads
// CHECK-SAME: entry = "[[P]]_main"{{.*}}name = "main_kv", reads = ["delta"]
// CHECK-SAME: workspace = [{dims = ["batch", "heads_q", "seqlen_q"], dtype = "f32", name = "delta"}]}
// CHECK-NOT: _pre

// CHECK-LABEL: func.func @det
// CHECK: gpu.launch_func  @[[P]]::@[[P]]_main_q
// CHECK: gpu.launch_func  @[[P]]::@[[P]]_main
// CHECK-NOT: gpu.launch_func

// PTX-NOT: _pre(
// PTX-LABEL: .entry bwd_bf16_d64_causal_det_m64n64w4s2_main(
// PTX-NOT: {{^[[:space:]]*(red|atom)\.}}
// PTX: mma.sync
// PTX-LABEL: .entry bwd_bf16_d64_causal_det_m64n64w4s2_main_q(
// PTX-NOT: {{^[[:space:]]*(red|atom)\.}}
// PTX: ld.global.v4.b32
// PTX: shfl.sync.bfly.b32
// PTX: st.global.b32
// PTX-NOT: {{^[[:space:]]*(red|atom)\.}}
// PTX: mma.sync
// PTX-NOT: {{^[[:space:]]*(red|atom)\.}}
func.func @det(%q: memref<2x8x1000x64xbf16>, %lse: memref<2x8x1000xf32>) {
  attn.attention_grad q(%q : memref<2x8x1000x64xbf16>) k(%q : memref<2x8x1000x64xbf16>) v(%q : memref<2x8x1000x64xbf16>) o(%q : memref<2x8x1000x64xbf16>) do(%q : memref<2x8x1000x64xbf16>) lse(%lse : memref<2x8x1000xf32>) outs(%q, %q, %q : memref<2x8x1000x64xbf16>, memref<2x8x1000x64xbf16>, memref<2x8x1000x64xbf16>) {mask = #attn.mask<causal>, config = #bwd}
  return
}
