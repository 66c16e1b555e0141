// RUN: attn-opt %s -split-input-file -attn-tile -canonicalize -cse | FileCheck %s

#cfg = #attn.config<name = "host_bwd_m16n32", block_m = 16, block_n = 32, warps = 1, stages = 1, pipeline = simple, acc_in_registers = false, mma = fma>

// The three stages of FlashAttention-2's backward pass, on GQA 4:2 with
// causal masking, bf16 and Dv != D:
//   1. (B, Hq, ceil(Sq / 16)): delta = rowsum(dO * O) and dQacc = 0 (f32);
//   2. (B, Hkv, ceil(Sk / 32)): K, V, dK, dV tiles of 32 keys; for each of
//      the 2 query heads of the group, the query blocks from the first one
//      the key block's first key is visible to (causal: row >= key), rows
//      recompute P = exp2(S - lse * log2 e) (S with the scale folded with
//      log2 e, as the forward), dV += P dO, dS = P (dP - delta),
//      dK += dS * scale * Q, dQacc += dS * scale * K; dK, dV written once;
//   3. (B, Hq, ceil(Sq / 16)): dq = dQacc rounded to bf16.
// With Sq = Sk = 1000 no 1000x1000 buffer may appear.
// CHECK-LABEL: func @gqa_causal_bf16
// CHECK-NOT: 1000x1000
// CHECK-DAG: %[[QSCALE:.*]] = arith.constant dense<0.180336878> : vector<64xf32>
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 1.250000e-01 : f32
// CHECK-DAG: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[DELTA:.*]] = memref.alloc() : memref<2x4x1000xf32>
// CHECK: %[[DQACC:.*]] = memref.alloc() : memref<2x4x1000x64xf32>
// Stage 1.
// CHECK: scf.forall (%[[B1:.*]], %[[H1:.*]], %{{.*}}) in (2, 4, 63)
// CHECK: %[[O:.*]] = arith.extf {{.*}} : vector<32xbf16> to vector<32xf32>
// CHECK: %[[DO:.*]] = arith.extf {{.*}} : vector<32xbf16> to vector<32xf32>
// CHECK: %[[PROD:.*]] = arith.mulf %[[DO]], %[[O]] : vector<32xf32>
// CHECK: %[[D:.*]] = vector.reduction <add>, %[[PROD]]
// CHECK: memref.store %[[D]], %[[DELTA]][%[[B1]], %[[H1]],
// CHECK: vector.transfer_write %{{.*}}, %[[DQACC]][%[[B1]], %[[H1]],
// CHECK: {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
// Stage 2.
// CHECK: scf.forall (%[[B:.*]], %[[KVH:.*]], %[[NB:.*]]) in (2, 2, 32)
// CHECK: %[[COL0:.*]] = arith.muli %[[NB]], %c32
// CHECK-DAG: %[[KT:.*]] = memref.alloca() : memref<32x64xf32>
// CHECK-DAG: %[[VT:.*]] = memref.alloca() : memref<32x32xf32>
// CHECK-DAG: %[[DKT:.*]] = memref.alloca() : memref<32x64xf32>
// CHECK-DAG: %[[DVT:.*]] = memref.alloca() : memref<32x32xf32>
// CHECK: vector.transfer_read %arg1[%[[B]], %[[KVH]],
// CHECK: vector.transfer_read %arg2[%[[B]], %[[KVH]],
// CHECK: %[[LO0:.*]] = arith.maxsi %[[COL0]], %c0
// CHECK: %[[LO:.*]] = arith.minsi %[[LO0]], %c1000
// CHECK: %[[NQB:.*]] = arith.divui %[[LO]], %c16
// CHECK: %[[FIRST:.*]] = arith.muli %[[NQB]], %c16
// CHECK: scf.for %[[G:.*]] = %c0 to %c2
// CHECK: %[[HBASE:.*]] = arith.muli %[[KVH]], %c2
// CHECK: %[[H:.*]] = arith.addi %[[HBASE]], %[[G]]
// CHECK: scf.for %{{.*}} = %[[FIRST]] to %c1000 step %c16
// CHECK: scf.for %[[ROW:.*]] =
// CHECK: vector.transfer_read %arg0[%[[B]], %[[H]], %[[ROW]], %c0]
// CHECK: %[[LSE:.*]] = memref.load %arg5[%[[B]], %[[H]], %[[ROW]]]
// CHECK: %[[EMPTY:.*]] = arith.cmpf oeq, %[[LSE]], %[[NEGINF]]
// CHECK: %[[LSE2:.*]] = arith.mulf %[[LSE]], %[[LOG2E]]
// CHECK: %[[LSESAFE:.*]] = arith.select %[[EMPTY]], %{{.*}}, %[[LSE2]]
// CHECK: %[[DQ:.*]] = scf.for {{.*}} iter_args(%[[DQIT:.*]] = %{{.*}}) -> (vector<64xf32>)
// CHECK: %[[K:.*]] = vector.load %[[KT]]
// CHECK: %[[V:.*]] = vector.load %[[VT]]
// CHECK: arith.cmpi sle
// CHECK: %[[S:.*]] = arith.select %{{.*}}, %{{.*}}, %[[NEGINF]]
// CHECK: %[[SM:.*]] = arith.subf %[[S]], %[[LSESAFE]]
// CHECK: %[[P:.*]] = math.exp2 %[[SM]] : f32
// CHECK: %[[DP:.*]] = vector.reduction <add>
// CHECK: %[[DPD:.*]] = arith.subf %[[DP]], %{{.*}}
// CHECK: %[[DS:.*]] = arith.mulf %[[P]], %[[DPD]]
// CHECK: %[[DSR:.*]] = arith.mulf %[[DS]], %[[SCALE]]
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK: vector.store %{{.*}}, %[[DVT]]
// CHECK: vector.fma {{.*}} : vector<64xf32>
// CHECK: vector.store %{{.*}}, %[[DKT]]
// CHECK: %[[DQNEXT:.*]] = vector.fma %{{.*}}, %[[K]], %[[DQIT]]
// CHECK: scf.yield %[[DQNEXT]]
// CHECK: %[[ACC:.*]] = vector.transfer_read %[[DQACC]][%[[B]], %[[H]], %[[ROW]], %c0]
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC]], %[[DQ]]
// CHECK: vector.transfer_write %[[SUM]], %[[DQACC]][%[[B]], %[[H]], %[[ROW]], %c0]
// CHECK: vector.load %[[DKT]]
// CHECK: vector.transfer_write {{.*}}, %arg7[%[[B]], %[[KVH]],
// CHECK: vector.load %[[DVT]]
// CHECK: vector.transfer_write {{.*}}, %arg8[%[[B]], %[[KVH]],
// CHECK: {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
// Stage 3.
// CHECK: scf.forall (%[[B3:.*]], %[[H3:.*]], %{{.*}}) in (2, 4, 63)
// CHECK: %[[ACC3:.*]] = vector.transfer_read %[[DQACC]][%[[B3]], %[[H3]],
// CHECK: %[[DQ3:.*]] = arith.truncf %[[ACC3]] : vector<64xf32> to vector<64xbf16>
// CHECK: vector.transfer_write %[[DQ3]], %arg6[%[[B3]], %[[H3]],
// CHECK: {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
// CHECK: memref.dealloc %[[DELTA]]
// CHECK: memref.dealloc %[[DQACC]]
// CHECK-NOT: 1000x1000
// CHECK-NOT: attn.attention_grad
func.func @gqa_causal_bf16(%q: memref<2x4x1000x64xbf16>, %k: memref<2x2x1000x64xbf16>,
                           %v: memref<2x2x1000x32xbf16>, %o: memref<2x4x1000x32xbf16>,
                           %do: memref<2x4x1000x32xbf16>, %lse: memref<2x4x1000xf32>,
                           %dq: memref<2x4x1000x64xbf16>, %dk: memref<2x2x1000x64xbf16>,
                           %dv: memref<2x2x1000x32xbf16>) {
  attn.attention_grad q(%q : memref<2x4x1000x64xbf16>) k(%k : memref<2x2x1000x64xbf16>)
      v(%v : memref<2x2x1000x32xbf16>) o(%o : memref<2x4x1000x32xbf16>)
      do(%do : memref<2x4x1000x32xbf16>) lse(%lse : memref<2x4x1000xf32>)
      outs(%dq, %dk, %dv : memref<2x4x1000x64xbf16>, memref<2x2x1000x64xbf16>,
           memref<2x2x1000x32xbf16>)
      {mask = #attn.mask<causal>, config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "host_bwd_m16n32", block_m = 16, block_n = 32, warps = 1, stages = 1, pipeline = simple, acc_in_registers = false, mma = fma>

// f32: dq and an f32 grad_bias accumulate in place (zeroed in stage 1, no
// accumulator buffer, no stage 3); only delta is allocated. The bias's
// gradient is dS summed along its broadcast dimensions (batch and query row
// read at 0; a dynamic key dimension of size 1 at run time too). Sliding
// window (128, 8): the query blocks start at the one holding the first row
// that sees the block's first key (key - off - 8) and stop after the last
// row that sees its last key (key - off + 128).
// CHECK-LABEL: func @f32_window_grad_bias
// CHECK: %[[DELTA:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x2x?xf32>
// CHECK-NOT: memref.alloc
// CHECK: scf.forall
// CHECK: vector.transfer_write %{{.*}}, %arg7[
// CHECK: } {mapping
// CHECK: %[[DBCOLS:.*]] = memref.dim %arg10, %c3
// CHECK: scf.forall (%{{.*}}, %[[DBH:.*]], %{{.*}}) in (1, 2, 1)
// CHECK: scf.for %[[J:.*]] = %c0 to %[[DBCOLS]]
// CHECK: memref.store %{{.*}}, %arg10[%c0, %[[DBH]], %c0, %[[J]]]
// CHECK: scf.forall (%[[B:.*]], %[[KVH:.*]], %[[NB:.*]]) in
// CHECK: %[[COL0:.*]] = arith.muli %[[NB]], %c32
// CHECK: %[[COLEND:.*]] = arith.minsi
// CHECK: arith.subi %[[COLEND]], %[[COL0]]
// CHECK: %[[OFF:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK: %[[LOD:.*]] = arith.subi %[[COL0]], %[[OFF]]
// CHECK: %[[LOW:.*]] = arith.subi %[[LOD]], %c8
// CHECK: %[[HID:.*]] = arith.subi %[[COLEND]], %[[OFF]]
// CHECK: %[[HIW:.*]] = arith.addi %[[HID]], %c128
// CHECK: %[[HI0:.*]] = arith.maxsi %[[HIW]], %c0
// CHECK: %[[HI:.*]] = arith.minsi %[[HI0]]
// CHECK: %[[LO0:.*]] = arith.maxsi %[[LOW]], %c0
// CHECK: %[[LO:.*]] = arith.minsi %[[LO0]], %[[HI]]
// CHECK: %[[NQB:.*]] = arith.divui %[[LO]], %c16
// CHECK: %[[FIRST:.*]] = arith.muli %[[NQB]], %c16
// CHECK: scf.for %{{.*}} = %[[FIRST]] to %[[HI]] step %c16
// CHECK: scf.for
// CHECK: math.exp2
// CHECK: %[[DS:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: %[[ISONE:.*]] = arith.cmpi eq, %[[DBCOLS]], %c1
// CHECK: %[[JJ:.*]] = arith.select %[[ISONE]], %c0, %{{.*}}
// CHECK: %[[OLD:.*]] = memref.load %arg10[%c0, %{{.*}}, %c0, %[[JJ]]]
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[DS]]
// CHECK: memref.store %[[NEW]], %arg10[%c0, %{{.*}}, %c0, %[[JJ]]]
// CHECK: vector.transfer_read %arg7[
// CHECK: vector.transfer_write %{{.*}}, %arg7[
// CHECK: } {mapping
// CHECK-NOT: scf.forall
// CHECK: memref.dealloc %[[DELTA]]
// CHECK-NOT: memref.dealloc
func.func @f32_window_grad_bias(%q: memref<?x2x?x32xf32>, %k: memref<?x2x?x32xf32>,
                                %v: memref<?x2x?x32xf32>, %o: memref<?x2x?x32xf32>,
                                %do: memref<?x2x?x32xf32>, %lse: memref<?x2x?xf32>,
                                %b: memref<1x2x1x?xf32>, %dq: memref<?x2x?x32xf32>,
                                %dk: memref<?x2x?x32xf32>, %dv: memref<?x2x?x32xf32>,
                                %db: memref<1x2x1x?xf32>) {
  attn.attention_grad q(%q : memref<?x2x?x32xf32>) k(%k : memref<?x2x?x32xf32>)
      v(%v : memref<?x2x?x32xf32>) o(%o : memref<?x2x?x32xf32>)
      do(%do : memref<?x2x?x32xf32>) lse(%lse : memref<?x2x?xf32>)
      bias(%b : memref<1x2x1x?xf32>)
      outs(%dq, %dk, %dv : memref<?x2x?x32xf32>, memref<?x2x?x32xf32>,
           memref<?x2x?x32xf32>)
      grad_bias(%db : memref<1x2x1x?xf32>)
      {mask = #attn.mask<sliding_window>, window = array<i64: 128, 8>,
       config = #cfg}
  return
}

// -----

#cfg = #attn.config<name = "host_bwd_m16n32", block_m = 16, block_n = 32, warps = 1, stages = 1, pipeline = simple, acc_in_registers = false, mma = fma>

// Softcap: tanh(scale * q.k / cap) of the recomputed score gives the cap's
// derivative 1 - tanh^2, applied to dS after dbias took it (the bias is
// added after the cap). A bf16 grad_bias accumulates in an f32 buffer of its
// shape, zeroed in stage 1 and rounded in stage 3.
// CHECK-LABEL: func @softcap_grad_bias_bf16
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[CAP:.*]] = arith.constant 3.000000e+01 : f32
// CHECK: %[[DBACC:.*]] = memref.alloc(%{{.*}}) : memref<1x4x1x?xf32>
// CHECK: memref.store %{{.*}}, %[[DBACC]]
// CHECK: %[[T:.*]] = math.tanh
// CHECK: arith.mulf %[[T]], %[[CAP]]
// CHECK: math.exp2
// CHECK: %[[DS:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: %[[OLD:.*]] = memref.load %[[DBACC]]
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[DS]]
// CHECK: memref.store %[[NEW]], %[[DBACC]]
// CHECK: %[[DSS:.*]] = arith.mulf %[[DS]], %{{.*}} : f32
// CHECK: %[[T2:.*]] = arith.mulf %[[T]], %[[T]]
// CHECK: %[[DERIV:.*]] = arith.subf %[[ONE]], %[[T2]]
// CHECK: %[[DSR:.*]] = arith.mulf %[[DSS]], %[[DERIV]]
// CHECK: vector.broadcast %[[DSR]]
// CHECK: %[[ACC:.*]] = memref.load %[[DBACC]]
// CHECK: %[[R:.*]] = arith.truncf %[[ACC]] : f32 to bf16
// CHECK: memref.store %[[R]], %arg10
// CHECK: memref.dealloc %[[DBACC]]
func.func @softcap_grad_bias_bf16(%q: memref<?x4x?x64xbf16>, %k: memref<?x4x?x64xbf16>,
                                  %v: memref<?x4x?x64xbf16>, %o: memref<?x4x?x64xbf16>,
                                  %do: memref<?x4x?x64xbf16>, %lse: memref<?x4x?xf32>,
                                  %b: memref<1x4x1x?xbf16>, %dq: memref<?x4x?x64xbf16>,
                                  %dk: memref<?x4x?x64xbf16>, %dv: memref<?x4x?x64xbf16>,
                                  %db: memref<1x4x1x?xbf16>) {
  attn.attention_grad q(%q : memref<?x4x?x64xbf16>) k(%k : memref<?x4x?x64xbf16>)
      v(%v : memref<?x4x?x64xbf16>) o(%o : memref<?x4x?x64xbf16>)
      do(%do : memref<?x4x?x64xbf16>) lse(%lse : memref<?x4x?xf32>)
      bias(%b : memref<1x4x1x?xbf16>)
      outs(%dq, %dk, %dv : memref<?x4x?x64xbf16>, memref<?x4x?x64xbf16>,
           memref<?x4x?x64xbf16>)
      grad_bias(%db : memref<1x4x1x?xbf16>)
      {softcap = 30.0 : f32, config = #cfg}
  return
}
