// Tensor-form attention through attn-to-nvvm to PTX (no GPU needed).
// RUN: attn-opt %s --attn-to-nvvm="chip=sm_90a format=isa select-config=false" | FileCheck %s --check-prefix=MLIR
// RUN: attn-opt %s --attn-to-nvvm="chip=sm_90a format=isa select-config=false" \
// RUN:   | sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' | FileCheck %s --check-prefix=PTX

#cfg = #attn.config<name = "sm90_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>

// MLIR: module attributes {attn.kernels = [{{{.*}}entry = "fwd_bf16_d64_causal_m128n64w4s2"
// MLIR-LABEL: llvm.func @fwd
// MLIR: gpu.launch_func @fwd_bf16_d64_causal_m128n64w4s2::@fwd_bf16_d64_causal_m128n64w4s2
// MLIR: gpu.binary @fwd_bf16_d64_causal_m128n64w4s2 [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx81">, {{.*}}assembly = "

// PTX: .target sm_90a
// PTX: .extern .shared .align 16 .b8 attn_smem[];
// PTX: .entry fwd_bf16_d64_causal_m128n64w4s2(
// PTX-DAG: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, %r{{[0-9]+}};
// PTX-DAG: cp.async.wait_group 1;
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx.ftz.f32
// PTX-DAG: st.global.b32
func.func @fwd(%q: tensor<2x8x1024x64xbf16>, %k: tensor<2x8x1024x64xbf16>, %v: tensor<2x8x1024x64xbf16>, %o: tensor<2x8x1024x64xbf16>) -> tensor<2x8x1024x64xbf16> {
  %r = attn.attention q(%q : tensor<2x8x1024x64xbf16>) k(%k : tensor<2x8x1024x64xbf16>) v(%v : tensor<2x8x1024x64xbf16>) outs(%o : tensor<2x8x1024x64xbf16>) {mask = #attn.mask<causal>, config = #cfg} -> tensor<2x8x1024x64xbf16>
  return %r : tensor<2x8x1024x64xbf16>
}
