// RUN: attn-opt %s -split-input-file --convert-attn-to-nvvm=chip=sm_90a | FileCheck %s

// GQA (8 query heads, 2 kv heads), causal, bf16, 32 rows per warp.

#cfg = #attn.config<name = "sm90_m128n64w4", block_m = 128, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>

// CHECK: module attributes {attn.kernels = [{align_bytes = 16 : i64, bias = "none", block_m = 128 : i64, block_n = 64 : i64, chip = "sm_90a"
// CHECK-SAME: dtype = "bf16", dynamic_smem = 104448 : i64, entry = "fwd_bf16_d128_causal_m128n64w4s2", head_dim = 128 : i64, head_dim_v = 128 : i64, mask = "causal"
// CHECK-SAME: platform = "cuda", seqlen_k_multiple = 1 : i64, seqlen_q_multiple = 1 : i64, softcap = false, threads = 128 : i64}], gpu.container_module}

// CHECK-LABEL: func.func @causal_gqa
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<1>
// CHECK: %[[GX:.*]] = arith.ceildivui %{{.*}}, %c128 : index
// CHECK: gpu.launch_func @fwd_bf16_d128_causal_m128n64w4s2::@fwd_bf16_d128_causal_m128n64w4s2 blocks in (%[[GX]], %c8, %{{.*}}) threads in (%c128{{.*}}, %c1{{.*}}, %c1{{.*}}) dynamic_shared_memory_size %c104448_i32
// CHECK-SAME: args(%{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : i32, %c8_i32 : i32, %c2_i32 : i32, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i64,
// CHECK-NOT: attn.attention

// CHECK: gpu.module @fwd_bf16_d128_causal_m128n64w4s2 [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx81">]
// CHECK: llvm.mlir.global external @attn_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK: gpu.func @fwd_bf16_d128_causal_m128n64w4s2(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i64, {{.*}}, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: i32, %{{.*}}: i32) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// Causal: the query blocks run in reverse, the ones with the most keys first.
// CHECK: %[[BX:.*]] = arith.index_castui %block_id_x
// CHECK: %[[GD:.*]] = arith.index_castui %grid_dim_x
// CHECK: %[[LAST:.*]] = arith.subi %[[GD]], %c1_i32
// CHECK: arith.subi %[[LAST]], %[[BX]] : i32
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 1
// CHECK: scf.for
// CHECK: nvvm.ldmatrix %{{.*}} {{{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {{{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK: gpu.shuffle xor
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: nvvm.ldmatrix %{{.*}} {{{.*}}layout = #nvvm.mma_layout<col>, num = 4 : i32
// CHECK: scf.yield
// O leaves in 16-byte runs: each quad of lanes transposes its column
// pairs by shuffles (storeRowsByQuads).
// CHECK: gpu.shuffle xor
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
func.func @causal_gqa(%q: memref<?x8x?x128xbf16>, %k: memref<?x2x?x128xbf16>, %v: memref<?x2x?x128xbf16>, %o: memref<?x8x?x128xbf16>, %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x128xbf16>) k(%k : memref<?x2x?x128xbf16>) v(%v : memref<?x2x?x128xbf16>) outs(%o : memref<?x8x?x128xbf16>) lse(%lse : memref<?x8x?xf32>) {mask = #attn.mask<causal>, config = #cfg}
  return
}

// -----

// Two ops with the same problem and config share one kernel; no lse gives a
// null pointer; f16 operands are <2 x f16>.

#cfg = #attn.config<name = "sm80_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mma.m16n8k16>

// CHECK: module attributes {attn.kernels = [{{{[^}]*}}entry = "fwd_f16_d64_none_m64n64w4s1"{{[^}]*}}}], gpu.container_module}
// CHECK-LABEL: func.func @shared_kernel
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr<1>
// CHECK: gpu.launch_func @fwd_f16_d64_none_m64n64w4s1::@fwd_f16_d64_none_m64n64w4s1 {{.*}} args({{.*}}, %[[NULL]] : !llvm.ptr<1>, %[[NULL]] : !llvm.ptr<1>,
// CHECK: gpu.launch_func @fwd_f16_d64_none_m64n64w4s1::@fwd_f16_d64_none_m64n64w4s1
// CHECK: gpu.module @fwd_f16_d64_none_m64n64w4s1
// CHECK-NOT: gpu.grid_dim
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {{.*}} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: gpu.module
func.func @shared_kernel(%q: memref<2x4x100x64xf16>, %k: memref<2x4x300x64xf16>, %v: memref<2x4x300x64xf16>, %o: memref<2x4x100x64xf16>) {
  attn.attention q(%q : memref<2x4x100x64xf16>) k(%k : memref<2x4x300x64xf16>) v(%v : memref<2x4x300x64xf16>) outs(%o : memref<2x4x100x64xf16>) {config = #cfg}
  attn.attention q(%q : memref<2x4x100x64xf16>) k(%k : memref<2x4x300x64xf16>) v(%v : memref<2x4x300x64xf16>) outs(%o : memref<2x4x100x64xf16>) {config = #cfg}
  return
}

// -----

// Sliding window: the window bounds become the last two kernel arguments.

#cfg = #attn.config<name = "sm80_m64n32w4", block_m = 64, block_n = 32, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>

// CHECK-LABEL: func.func @window
// CHECK-DAG: %[[L:.*]] = arith.constant 128 : i32
// CHECK-DAG: %[[R:.*]] = arith.constant 0 : i32
// CHECK: gpu.launch_func @fwd_f16_d64_sliding_window_m64n32w4s2::@fwd_f16_d64_sliding_window_m64n32w4s2 {{.*}}, %[[L]] : i32, %[[R]] : i32)
func.func @window(%q: memref<1x2x?x64xf16>, %k: memref<1x2x?x64xf16>, %v: memref<1x2x?x64xf16>, %o: memref<1x2x?x64xf16>) {
  attn.attention q(%q : memref<1x2x?x64xf16>) k(%k : memref<1x2x?x64xf16>) v(%v : memref<1x2x?x64xf16>) outs(%o : memref<1x2x?x64xf16>) {mask = #attn.mask<sliding_window>, window = array<i64: 128, 0>, config = #cfg}
  return
}
