// O += P V is left in flight across the key-block loop's back edge; no
// instruction may touch its accumulators before the next wgmma wait (ptxas
// does not diagnose that). utils/wgmma-check.py walks every path of the
// PTX from each uncompleted wgmma chain to the wait that completes it (a
// `wait_group N` once N groups were committed after it), for each wgmma
// tile of the sm_90a family, and must find the hand-written hazards.
// RUN: attn-opt %s -split-input-file --attn-to-nvvm="chip=sm_90a format=isa select-config=false" \
// RUN:   | sed -n 's/.*assembly = "\(.*\)">\].*/\1/p' \
// RUN:   | sed 's/\\0A/\n/g; s/\\09/\t/g; s/\\22/"/g' > %t.ptx
// RUN: %wgmma-check %t.ptx | FileCheck %s
// RUN: not %wgmma-check %S/Inputs/wgmma-hazard.ptx | FileCheck %s --check-prefix=HAZARD
// RUN: not %wgmma-check %S/Inputs/wgmma-wait-pending.ptx | FileCheck %s --check-prefix=PENDING

// CHECK: fwd_bf16_d64_none_m192n128w12s2: 1 async wgmma chains, no hazard
// CHECK: fwd_f16_d64_causal_m128n128w8s2: 1 async wgmma chains, no hazard
// CHECK: fwd_bf16_d128_causal_bottom_right_softcap_m128n128w8s2: 1 async wgmma chains, no hazard
// CHECK: fwd_bf16_d256_sliding_window_m128n64w8s2: 1 async wgmma chains, no hazard
// CHECK: fwd_bf16_d64_none_m256n64w16s2: 1 async wgmma chains, no hazard
// CHECK: fwd_f16_d128_causal_m192n64w12s2: 1 async wgmma chains, no hazard
// HAZARD: hazard: line 31 touches %r2 of the async wgmma chain at line 20 before a wait
// PENDING: pending_ok: 2 async wgmma chains, no hazard
// PENDING-NEXT: pending_hazard: line {{[0-9]+}} touches %r12 of the async wgmma chain at line {{[0-9]+}} before a wait

#cfg = #attn.config<name = "wgmma_d64_m192n128w12", block_m = 192, block_n = 128, warps = 12, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @d64(%q: memref<?x16x?x64xbf16>, %o: memref<?x16x?x64xbf16>) {
  attn.attention q(%q : memref<?x16x?x64xbf16>) k(%q : memref<?x16x?x64xbf16>) v(%q : memref<?x16x?x64xbf16>) outs(%o : memref<?x16x?x64xbf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "wgmma_d64_m128n128w8", block_m = 128, block_n = 128, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @d64_causal(%q: memref<?x16x?x64xf16>, %o: memref<?x16x?x64xf16>) {
  attn.attention q(%q : memref<?x16x?x64xf16>) k(%q : memref<?x16x?x64xf16>) v(%q : memref<?x16x?x64xf16>) outs(%o : memref<?x16x?x64xf16>) {mask = #attn.mask<causal>, config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "wgmma_d128_m128n128w8", block_m = 128, block_n = 128, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @d128(%q: memref<?x16x?x128xbf16>, %o: memref<?x16x?x128xbf16>, %lse: memref<?x16x?xf32>) {
  attn.attention q(%q : memref<?x16x?x128xbf16>) k(%q : memref<?x16x?x128xbf16>) v(%q : memref<?x16x?x128xbf16>) outs(%o : memref<?x16x?x128xbf16>) lse(%lse : memref<?x16x?xf32>) {mask = #attn.mask<causal_bottom_right>, softcap = 30.0 : f32, config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "wgmma_d256_m128n64w8", block_m = 128, block_n = 64, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @d256(%q: memref<?x16x?x256xbf16>, %o: memref<?x16x?x256xbf16>) {
  attn.attention q(%q : memref<?x16x?x256xbf16>) k(%q : memref<?x16x?x256xbf16>) v(%q : memref<?x16x?x256xbf16>) outs(%o : memref<?x16x?x256xbf16>) {mask = #attn.mask<sliding_window>, window = array<i64: 128, 0>, config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "wgmma_d64_m256n64w16", block_m = 256, block_n = 64, warps = 16, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @d64_four_groups(%q: memref<?x16x?x64xbf16>, %o: memref<?x16x?x64xbf16>) {
  attn.attention q(%q : memref<?x16x?x64xbf16>) k(%q : memref<?x16x?x64xbf16>) v(%q : memref<?x16x?x64xbf16>) outs(%o : memref<?x16x?x64xbf16>) {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "wgmma_d128_m192n64w12", block_m = 192, block_n = 64, warps = 12, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @d128_three_groups(%q: memref<?x16x?x128xf16>, %o: memref<?x16x?x128xf16>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%q : memref<?x16x?x128xf16>) v(%q : memref<?x16x?x128xf16>) outs(%o : memref<?x16x?x128xf16>) {mask = #attn.mask<causal>, config = #cfg}
  return
}
