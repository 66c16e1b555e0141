// RUN: attn-opt %s -split-input-file --convert-attn-to-nvvm=chip=sm_90a | FileCheck %s

// The Hopper kernel: two warpgroups, Q/K/V staged by cp.async into
// 128-byte-swizzled tiles (1 KiB-aligned base), S = Q K^T as one wgmma chain
// that waits, O += P V as one chain left in flight across the loop's back
// edge, and one wait before the epilogue reads O.

#cfg = #attn.config<name = "wg", block_m = 128, block_n = 128, warps = 8, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>

// CHECK: module attributes {attn.kernels = [{{{.*}}dynamic_smem = 164864 : i64, entry = "fwd_bf16_d128_causal_m128n128w8s2"{{.*}}threads = 256 : i64}]
// CHECK-LABEL: func.func @causal
// CHECK: gpu.launch_func @fwd_bf16_d128_causal_m128n128w8s2::@fwd_bf16_d128_causal_m128n128w8s2 {{.*}} threads in (%c256{{.*}}, %c1{{.*}}, %c1{{.*}}) dynamic_shared_memory_size %c164864_i32
// CHECK: gpu.func @fwd_bf16_d128_causal_m128n128w8s2({{.*}} kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// The base rounded up to 1024 bytes: -addr & 1023.
// CHECK: %[[ADDR:.*]] = llvm.ptrtoint %{{.*}} : !llvm.ptr<3> to i32
// CHECK: %[[NEG:.*]] = arith.subi %{{.*}}, %[[ADDR]] : i32
// CHECK: arith.andi %[[NEG]], %c1023_i32 : i32
// Swizzle: chunk (c % 8) ^ (r % 8).
// CHECK: arith.xori
// CHECK: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// S = Q K^T: 8 k-steps (D = 128), both operands from shared memory, scale-d
// false on the first step, waits.
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $64, 0;\0Awgmma.fence.sync.aligned;\0Awgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0,{{.*}}$63}, $65, $66, p, 1, 1, 0, 0;
// CHECK-SAME: $79, $80, 1, 1, 1, 0, 0;\0Awgmma.commit_group.sync.aligned;\0Awgmma.wait_group.sync.aligned 0;\0A}"
// The next block's loads only after every warp's previous P V completed.
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// O += P V: P from registers, V transposed (imm-trans-b = 1), no wait.
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0Awgmma.fence.sync.aligned;\0Awgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0,{{.*}}$63}, {$128,$129,$130,$131}, $132, 1, 1, 1, 1;
// CHECK-SAME: wgmma.commit_group.sync.aligned;\0A}", "=f,{{.*}},0,1,2,{{.*}},63,r,r,r,r,l,
// CHECK-NOT: wait_group
// CHECK: scf.yield
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "wgmma.wait_group.sync.aligned 0;"
// O leaves in 16-byte runs: each quad of lanes transposes its column
// pairs by shuffles (storeRowsByQuads).
// CHECK: gpu.shuffle xor
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
func.func @causal(%q: memref<?x4x?x128xbf16>, %o: memref<?x4x?x128xbf16>) {
  attn.attention q(%q : memref<?x4x?x128xbf16>) k(%q : memref<?x4x?x128xbf16>) v(%q : memref<?x4x?x128xbf16>) outs(%o : memref<?x4x?x128xbf16>) {mask = #attn.mask<causal>, config = #cfg}
  return
}

// -----

// Three warpgroups (384 threads) for D = 64; f16 operands.

#cfg = #attn.config<name = "wg3", block_m = 192, block_n = 128, warps = 12, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>

// CHECK: dynamic_smem = 91136 : i64, entry = "fwd_f16_d64_none_m192n128w12s2"
// CHECK: %[[GX:.*]] = arith.ceildivui %{{.*}}, %c192 : index
// CHECK: gpu.launch_func {{.*}} blocks in (%[[GX]], {{.*}}) threads in (%c384
// CHECK: known_block_size = array<i32: 384, 1, 1>
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
func.func @three_warpgroups(%q: memref<?x4x?x64xf16>, %o: memref<?x4x?x64xf16>) {
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%q : memref<?x4x?x64xf16>) v(%q : memref<?x4x?x64xf16>) outs(%o : memref<?x4x?x64xf16>) {config = #cfg}
  return
}
