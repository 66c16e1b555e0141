// Two variants (priority = op order) compiled to cubins and written as a bundle.
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-opt %s --attn-to-nvvm="chip=sm_90a format=bin select-config=false toolkit=%cuda_toolkit" --attn-write-bundle="dir=%t" -o /dev/null
// RUN: FileCheck %s < %t/bundle.json
// RUN: ls %t | FileCheck %s --check-prefix=FILES
// RUN: llvm-readelf -h %t/fwd_f16_d64_causal_m128n64w4s2.cubin | FileCheck %s --check-prefix=ELF

// CHECK:      "abi": "attn-fwd-v1",
// CHECK-NEXT: "chip": "sm_90a",
// CHECK-NEXT: "platform": "cuda",
// CHECK-NEXT: "schema": "attn-bundle",
// CHECK-NEXT: "toolchain": "LLVM {{[0-9.]+}}",
// CHECK-NEXT: "variants": [
// CHECK:        "binary": "fwd_f16_d64_causal_m128n64w4s2.cubin",
// CHECK-NEXT:   "block_m": 128,
// CHECK-NEXT:   "conditions": {
// CHECK-NEXT:     "align_bytes": 16,
// CHECK-NEXT:     "seqlen_k_multiple": 1,
// CHECK-NEXT:     "seqlen_q_multiple": 1
// CHECK-NEXT:   },
// CHECK-NEXT:   "config": "#attn.config<name = \"sm90_m128n64w4\", block_m = 128, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>",
// CHECK-NEXT:   "dtype": "f16",
// CHECK-NEXT:   "dynamic_smem": 55296,
// CHECK-NEXT:   "entry": "fwd_f16_d64_causal_m128n64w4s2",
// CHECK-NEXT:   "head_dim": 64,
// CHECK-NEXT:   "head_dim_v": 64,
// CHECK-NEXT:   "mask": "causal",
// CHECK-NEXT:   "name": "fwd_f16_d64_causal_m128n64w4s2",
// CHECK-NEXT:   "softcap": false,
// CHECK-NEXT:   "threads": 128
// CHECK:        "binary": "fwd_f16_d64_causal_m64n64w4s2.cubin",
// CHECK:        "threads": 128
// CHECK:      "version": 1

// FILES: bundle.json
// FILES-NEXT: fwd_f16_d64_causal_m128n64w4s2.cubin
// FILES-NEXT: fwd_f16_d64_causal_m64n64w4s2.cubin

// ELF: Machine: NVIDIA CUDA

#best = #attn.config<name = "sm90_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
#fallback = #attn.config<name = "sm90_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
func.func @family(%q: memref<?x1x?x64xf16>, %o: memref<?x1x?x64xf16>) {
  attn.attention q(%q : memref<?x1x?x64xf16>) k(%q : memref<?x1x?x64xf16>) v(%q : memref<?x1x?x64xf16>) outs(%o : memref<?x1x?x64xf16>) {mask = #attn.mask<causal>, config = #best}
  attn.attention q(%q : memref<?x1x?x64xf16>) k(%q : memref<?x1x?x64xf16>) v(%q : memref<?x1x?x64xf16>) outs(%o : memref<?x1x?x64xf16>) {mask = #attn.mask<causal>, config = #fallback}
  return
}
