// RUN: attn-opt %s -split-input-file -attn-tile -canonicalize -cse | FileCheck %s

#cfg = #attn.config<name = "host_m16n64", block_m = 16, block_n = 64, warps = 1, stages = 1, pipeline = simple, acc_in_registers = false, mma = fma>

// Grid over (B, Hq, ceil(Sq / block_m)) mapped to GPU blocks, a kv-block loop
// of step block_n with an exp2-domain online softmax, tile-sized scratch
// only: with Sq = Sk = 1000 no 1000x1000 buffer may appear.
// CHECK-LABEL: func @mha_no_mask
// CHECK-NOT: memref<1000x1000
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %[[MB:.*]]) in (2, 4, 63)
// CHECK-DAG: memref.alloca() : memref<16x64xf32>
// CHECK-DAG: memref.alloca() : memref<64xf32>
// CHECK-DAG: memref.alloca() : memref<16xf32>
// CHECK: scf.for %[[KB:.*]] = %c0 to %c1000 step %c64
// CHECK: vector.reduction <add>
// CHECK: vector.reduction <maximumf>
// CHECK: math.exp2 %{{.*}} : f32
// CHECK: math.exp2 %{{.*}} : vector<64xf32>
// CHECK: vector.fma
// CHECK: vector.transfer_write
// CHECK: {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
// CHECK-NOT: memref<1000x1000
// CHECK-NOT: attn.attention
func.func @mha_no_mask(%q: memref<2x4x1000x64xf32>, %k: memref<2x4x1000x64xf32>,
                       %v: memref<2x4x1000x64xf32>, %o: memref<2x4x1000x64xf32>) {
  attn.attention q(%q : memref<2x4x1000x64xf32>) k(%k : memref<2x4x1000x64xf32>)
      v(%v : memref<2x4x1000x64xf32>) outs(%o : memref<2x4x1000x64xf32>)
      {config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "host_m16n64", block_m = 16, block_n = 64, warps = 1, stages = 1, pipeline = simple, acc_in_registers = false, mma = fma>

// Causal: the kv loop stops at the last key the block's last row sees
// (blocks past the diagonal are skipped) and the diagonal block is masked
// per element. GQA: query head h reads kv head h / 4. log2(e) is folded into
// the scale 1/sqrt(64) (0.125 * 1.4427 = 0.18034). lse = (m + log2 l) * ln 2.
// CHECK-LABEL: func @gqa_causal_lse
// CHECK-DAG: %[[SCALE:.*]] = arith.constant dense<0.180336878> : vector<64xf32>
// CHECK-DAG: %[[LN2:.*]] = arith.constant 0.693147182 : f32
// CHECK-DAG: %[[SQ:.*]] = memref.dim %arg0, %c2
// CHECK-DAG: %[[SK:.*]] = memref.dim %arg1, %c2
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %[[MB:.*]]) in
// CHECK: %[[KVH:.*]] = arith.divui %[[H]], %c4
// CHECK: %[[ROW0:.*]] = arith.muli %[[MB]], %c16
// CHECK: %[[END0:.*]] = arith.addi %[[ROW0]], %c16
// CHECK: %[[END:.*]] = arith.minsi %[[END0]], %[[SQ]]
// CHECK: arith.mulf %{{.*}}, %[[SCALE]]
// CHECK: %[[HI0:.*]] = arith.maxsi %[[END]], %c0
// CHECK: %[[HI:.*]] = arith.minsi %[[HI0]], %[[SK]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[HI]] step %c64
// CHECK: vector.transfer_read %arg1[%[[B]], %[[KVH]],
// CHECK: arith.cmpi sle
// CHECK: arith.select
// CHECK: vector.transfer_read %arg2[%[[B]], %[[KVH]],
// CHECK: %[[LOG2L:.*]] = math.log2
// CHECK: %[[SUM:.*]] = arith.addf %{{.*}}, %[[LOG2L]]
// CHECK: arith.mulf %[[SUM]], %[[LN2]]
// CHECK: memref.store %{{.*}}, %arg4[%[[B]], %[[H]],
func.func @gqa_causal_lse(%q: memref<?x8x?x64xbf16>, %k: memref<?x2x?x64xbf16>,
                          %v: memref<?x2x?x64xbf16>, %o: memref<?x8x?x64xbf16>,
                          %l: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x64xbf16>) k(%k : memref<?x2x?x64xbf16>)
      v(%v : memref<?x2x?x64xbf16>) outs(%o : memref<?x8x?x64xbf16>)
      lse(%l : memref<?x8x?xf32>) {mask = #attn.mask<causal>, config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "host_m16n64", block_m = 16, block_n = 64, warps = 1, stages = 1, pipeline = simple, acc_in_registers = false, mma = fma>

// Sliding window (128, 0): the kv loop starts at the block holding the first
// key the block's first row sees, so blocks left of the window are skipped.
// CHECK-LABEL: func @window
// CHECK: scf.forall
// CHECK: %[[ROW0:.*]] = arith.muli %{{.*}}, %c16
// CHECK: %[[LO0:.*]] = arith.subi %[[ROW0]], %c128
// CHECK: %[[LO1:.*]] = arith.maxsi %[[LO0]], %c0
// CHECK: %[[LO:.*]] = arith.minsi %[[LO1]], %[[HI:.*]] : index
// CHECK: %[[NB:.*]] = arith.divui %[[LO]], %c64
// CHECK: %[[FIRST:.*]] = arith.muli %[[NB]], %c64
// CHECK: scf.for %{{.*}} = %[[FIRST]] to %[[HI]] step %c64
// CHECK-NOT: memref<1000x1000
func.func @window(%q: memref<2x4x1000x64xf32>, %k: memref<2x4x1000x64xf32>,
                  %v: memref<2x4x1000x64xf32>, %o: memref<2x4x1000x64xf32>) {
  attn.attention q(%q : memref<2x4x1000x64xf32>) k(%k : memref<2x4x1000x64xf32>)
      v(%v : memref<2x4x1000x64xf32>) outs(%o : memref<2x4x1000x64xf32>)
      {mask = #attn.mask<sliding_window>, window = array<i64: 128, 0>,
       config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "host_m16n64", block_m = 16, block_n = 64, warps = 1, stages = 1, pipeline = simple, acc_in_registers = false, mma = fma>

// Softcap then bias on natural-log scores, then log2(e); the bias's
// broadcast batch dimension is read at index 0.
// CHECK-LABEL: func @bias_softcap
// CHECK-DAG: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-DAG: %[[CAP:.*]] = arith.constant 3.000000e+01 : f32
// CHECK: scf.for
// CHECK: vector.reduction <add>
// CHECK: %[[T:.*]] = math.tanh
// CHECK: %[[S:.*]] = arith.mulf %[[T]], %[[CAP]]
// CHECK: %[[BIAS:.*]] = memref.load %arg3[%c0, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x4x?x?xf32>
// CHECK: %[[SB:.*]] = arith.addf %[[S]], %[[BIAS]]
// CHECK: arith.mulf %[[SB]], %[[LOG2E]]
func.func @bias_softcap(%q: memref<?x4x?x32xf16>, %k: memref<?x4x?x32xf16>,
                        %v: memref<?x4x?x32xf16>, %b: memref<1x4x?x?xf32>,
                        %o: memref<?x4x?x32xf16>) {
  attn.attention q(%q : memref<?x4x?x32xf16>) k(%k : memref<?x4x?x32xf16>)
      v(%v : memref<?x4x?x32xf16>) bias(%b : memref<1x4x?x?xf32>)
      outs(%o : memref<?x4x?x32xf16>) {softcap = 30.0 : f32, config = #cfg}
  return
}
