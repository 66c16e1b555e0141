// attn-specialize-sizes: a copy of a dynamic-length op per size class whose
// tile differs from the general one (docs/Tuning.md), chosen by scf.if.
// RUN: attn-opt %s -split-input-file -attn-specialize-sizes="target=sm_90a size-hints=1,512,4096,16384" | FileCheck %s --check-prefix=HINTS
// RUN: attn-opt %s -split-input-file -attn-specialize-sizes="target=sm_90a tuning=%attn_src_root/test/Transforms/Inputs/sm_90a-size-classes.json sm-count=132" | FileCheck %s --check-prefix=TUNED
// RUN: attn-opt %s -split-input-file -attn-specialize-sizes="target=sm_90a tuning=%attn_src_root/test/Transforms/Inputs/sm_90a-size-classes.json" | FileCheck %s --check-prefix=NOSMS

// The tables at the hints: D = 64 takes tma_d64_m128n128w12 (the TMA form
// of ws_d64_m128n128w12) from its seqlen_min (4096; the hints 512 and 4096
// meet at 1448, below it).
// HINTS-LABEL: func.func @d64
// HINTS-DAG:   %[[SQ:.*]] = tensor.dim %{{.*}}, %c2{{.*}} : tensor<?x8x?x64xbf16>
// HINTS-DAG:   %[[MIN:.*]] = arith.constant 4096 : index
// HINTS:       %[[C:.*]] = arith.cmpi sge, %[[SQ]], %[[MIN]] : index
// HINTS:       scf.if %{{.*}} -> (tensor<?x8x?x64xbf16>) {
// HINTS-NEXT:    attn.attention {{.*}}name = "tma_d64_m128n128w12"
// HINTS:       } else {
// HINTS-NEXT:    attn.attention {{.*}}name = "wgmma_d64_m128n64w8"
// With the H100 file's D = 64, 80 and 96 entries as of 2026-11-26
// (Inputs/sm_90a-size-classes.json: the mechanism, not today's data; its
// ws_* entries resolve to their TMA forms): its
// ws_d64_m192n128w16 entry for 1449..2896 (>= 21 x 132 workgroups) and its
// tma_d64_m192n128w16 entry from 2897 (>= 20 x 132) are one tile, so one
// unbounded class from 1449 down to the smaller grid, 20 x 132 = 2640 workgroups
// (B x 8 heads x ceil(Sq / 192): the class's block_m); the general tile
// below. The two classes of one D = 64 op nest in @d64_f16.
// TUNED-LABEL: func.func @d64
// TUNED:       arith.constant 1449 : index
// TUNED-NOT:   arith.cmpi sle
// TUNED:       arith.ceildivui %{{.*}}, %c192{{.*}} : index
// TUNED:       arith.cmpi sge, %{{.*}}, %c2640{{.*}} : index
// TUNED:       scf.if
// TUNED-NEXT:    attn.attention {{.*}}attn.size_class = {min_blocks_per_sm = 20 : i64, seqlen_min = 1449 : i64}{{.*}}name = "tma_d64_m192n128w16"
// TUNED:       } else {
// TUNED-NEXT:    attn.attention
// TUNED-NOT:     attn.size_class
// TUNED-SAME:    name = "wgmma_d64_m128n64w8"
// TUNED-NEXT:    scf.yield
// TUNED-NEXT:  }
// TUNED-NEXT:  return
func.func @d64(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x8x?x64xbf16>,
               %v: tensor<?x8x?x64xbf16>, %o: tensor<?x8x?x64xbf16>)
    -> tensor<?x8x?x64xbf16> {
  %r = attn.attention q(%q : tensor<?x8x?x64xbf16>) k(%k : tensor<?x8x?x64xbf16>)
      v(%v : tensor<?x8x?x64xbf16>) outs(%o : tensor<?x8x?x64xbf16>)
      -> tensor<?x8x?x64xbf16>
  return %r : tensor<?x8x?x64xbf16>
}

// -----

// The H100 file at f16 D = 64: the D = 128 bucket's three-stage ring
// tma_d128_m128n128w12s3 for 725..1448 on grids of at least 31 x 132 = 4092
// workgroups (ceil(Sq / 128)), then, nested in its else,
// tma_d64_m192n128w16 from 1449 on at least 20 x 132 = 2640 (ceil(Sq / 192));
// the general tile below. The tables alone have one class, as for bf16.
// HINTS-LABEL: func.func @d64_f16
// HINTS:       arith.constant 4096 : index
// HINTS:       scf.if
// HINTS-NEXT:    attn.attention {{.*}}name = "tma_d64_m128n128w12"
// HINTS:       } else {
// HINTS-NEXT:    attn.attention {{.*}}name = "wgmma_d64_m128n64w8"
// TUNED-LABEL: func.func @d64_f16
// TUNED:       arith.constant 725 : index
// TUNED:       arith.constant 1448 : index
// TUNED:       arith.ceildivui %{{.*}}, %c128{{.*}} : index
// TUNED:       arith.cmpi sge, %{{.*}}, %c4092{{.*}} : index
// TUNED:       scf.if
// TUNED-NEXT:    attn.attention {{.*}}attn.size_class = {min_blocks_per_sm = 31 : i64, seqlen_max = 1448 : i64, seqlen_min = 725 : i64}{{.*}}name = "tma_d128_m128n128w12s3"
// TUNED:       } else {
// TUNED:         arith.constant 1449 : index
// TUNED:         arith.ceildivui %{{.*}}, %c192{{.*}} : index
// TUNED:         arith.cmpi sge, %{{.*}}, %c2640{{.*}} : index
// TUNED:         scf.if
// TUNED-NEXT:      attn.attention {{.*}}attn.size_class = {min_blocks_per_sm = 20 : i64, seqlen_min = 1449 : i64}{{.*}}name = "tma_d64_m192n128w16"
// TUNED:         } else {
// TUNED-NEXT:      attn.attention
// TUNED-NOT:       attn.size_class
// TUNED-SAME:      name = "wgmma_d64_m128n64w8"
// NOSMS-LABEL: func.func @d64_f16
// NOSMS-NOT:   scf.if
// NOSMS:       return
func.func @d64_f16(%q: tensor<?x8x?x64xf16>, %k: tensor<?x8x?x64xf16>,
                   %v: tensor<?x8x?x64xf16>, %o: tensor<?x8x?x64xf16>)
    -> tensor<?x8x?x64xf16> {
  %r = attn.attention q(%q : tensor<?x8x?x64xf16>) k(%k : tensor<?x8x?x64xf16>)
      v(%v : tensor<?x8x?x64xf16>) outs(%o : tensor<?x8x?x64xf16>)
      -> tensor<?x8x?x64xf16>
  return %r : tensor<?x8x?x64xf16>
}

// -----

// The H100 file's D = 96 entries as they were measured on the cp.async
// kernels (the built-in file has dropped their two-stage ring since): the
// two-stage ring from 5793 on grids of at least 20 x 132 workgroups (B x 8
// heads x ceil(Sq / 128)), the tables' three-stage one below. Without
// sm-count that class is left out, and nothing else differs. The tables
// alone have no class for D = 96.
// HINTS-LABEL: func.func @d96
// HINTS-NOT:   scf.if
// HINTS:       return
// TUNED-LABEL: func.func @d96
// TUNED:       %[[SQ:.*]] = tensor.dim %arg0, %c2{{.*}}
// TUNED:       %[[QB:.*]] = arith.ceildivui %[[SQ]], %c128{{.*}} : index
// TUNED:       %[[B:.*]] = tensor.dim %arg0, %c0{{.*}}
// TUNED:       %[[QBB:.*]] = arith.muli %[[QB]], %[[B]] : index
// TUNED:       %[[ALL:.*]] = arith.muli %[[QBB]], %c8{{.*}} : index
// TUNED:       arith.cmpi sge, %[[ALL]], %c2640{{.*}} : index
// TUNED:       scf.if
// TUNED-NEXT:    attn.attention {{.*}}attn.size_class = {min_blocks_per_sm = 20 : i64, seqlen_min = 5793 : i64}{{.*}}name = "tma_d128_m128n128w12"
// TUNED:       } else {
// TUNED-NEXT:    attn.attention
// TUNED-NOT:     attn.size_class
// TUNED-SAME:    name = "tma_d128_m128n128w12s3"
// NOSMS-LABEL: func.func @d96
// NOSMS-NOT:   scf.if
// NOSMS:       return
func.func @d96(%q: tensor<?x8x?x96xbf16>, %k: tensor<?x8x?x96xbf16>,
               %v: tensor<?x8x?x96xbf16>, %o: tensor<?x8x?x96xbf16>)
    -> tensor<?x8x?x96xbf16> {
  %r = attn.attention q(%q : tensor<?x8x?x96xbf16>) k(%k : tensor<?x8x?x96xbf16>)
      v(%v : tensor<?x8x?x96xbf16>) outs(%o : tensor<?x8x?x96xbf16>)
      -> tensor<?x8x?x96xbf16>
  return %r : tensor<?x8x?x96xbf16>
}

// -----

// A bounded class (causal f16 D = 96, 1..362) on memrefs: no results; the
// two-stage ring from 5793 nests in its else.
// TUNED-LABEL: func.func @causal_memref
// TUNED-DAG:   arith.constant 362 : index
// TUNED:       arith.cmpi sle
// TUNED:       scf.if %{{.*}} {
// TUNED-NEXT:    attn.attention {{.*}}name = "mma_d128_m128n64w4"
// TUNED:       } else {
// TUNED:         arith.constant 5793 : index
// TUNED:         scf.if %{{.*}} {
// TUNED-NEXT:      attn.attention {{.*}}name = "tma_d128_m128n128w12"
// TUNED:         } else {
// TUNED-NEXT:      attn.attention {{.*}}name = "tma_d128_m128n128w12s3"
func.func @causal_memref(%q: memref<?x8x?x96xf16>, %k: memref<?x8x?x96xf16>,
                         %v: memref<?x8x?x96xf16>, %o: memref<?x8x?x96xf16>) {
  attn.attention q(%q : memref<?x8x?x96xf16>) k(%k : memref<?x8x?x96xf16>)
      v(%v : memref<?x8x?x96xf16>) outs(%o : memref<?x8x?x96xf16>)
      {mask = #attn.mask<causal>}
  return
}

// -----

// Static lengths, and ops that carry a config, are left alone.
// HINTS-LABEL: func.func @static
// HINTS-NOT:   scf.if
// HINTS:       return
func.func @static(%q: tensor<1x8x16384x128xbf16>, %k: tensor<1x8x16384x128xbf16>,
                  %v: tensor<1x8x16384x128xbf16>, %o: tensor<1x8x16384x128xbf16>)
    -> tensor<1x8x16384x128xbf16> {
  %r = attn.attention q(%q : tensor<1x8x16384x128xbf16>) k(%k : tensor<1x8x16384x128xbf16>)
      v(%v : tensor<1x8x16384x128xbf16>) outs(%o : tensor<1x8x16384x128xbf16>)
      -> tensor<1x8x16384x128xbf16>
  return %r : tensor<1x8x16384x128xbf16>
}

// -----

// RUN: not attn-opt %s -split-input-file -attn-specialize-sizes="target=sm_99" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt %s -split-input-file -attn-specialize-sizes="target=sm_90a size-hints=0,512" 2>&1 | FileCheck %s --check-prefix=HINT
// CHIP: error: attn-specialize-sizes: unknown target 'sm_99'
// HINT: error: attn-specialize-sizes: size-hints must be positive and sm-count not negative
