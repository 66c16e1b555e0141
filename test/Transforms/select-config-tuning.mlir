// attn-select-config with a tuning file (docs/Tuning.md,
// test/Target/Inputs/tuning-sm_90a.json: bf16 D = 128, no mask: the
// general tile up to 4096, wgmma_d128_m192n64w12 from 4097; causal:
// mma_d128_m64n64w4 up to 1024) and with a size hint for dynamic lengths.
// RUN: attn-opt %s -split-input-file -attn-select-config="target=sm_90a tuning=%attn_src_root/test/Target/Inputs/tuning-sm_90a.json" | FileCheck %s --check-prefix=TUNED
// RUN: attn-opt %s -split-input-file -attn-select-config="target=sm_90a tuning=%attn_src_root/test/Target/Inputs/tuning-sm_90a.json size-hint=16384" | FileCheck %s --check-prefix=HINTED
// RUN: attn-opt %s -split-input-file -attn-select-config="target=sm_90a size-hint=16384" | FileCheck %s --check-prefix=TABLES
// RUN: attn-opt %s -split-input-file -attn-select-config="target=sm_90a" | FileCheck %s --check-prefix=PLAIN

// Static lengths in a tuned range: its tile.
// TUNED-LABEL:  func.func @long
// TUNED:        name = "wgmma_d128_m192n64w12"
// HINTED-LABEL: func.func @long
// HINTED:       name = "wgmma_d128_m192n64w12"
// TABLES-LABEL: func.func @long
// TABLES:       name = "tma_d128_m128n128w12s3"
// PLAIN-LABEL:  func.func @long
// PLAIN:        name = "tma_d128_m128n128w12s3"
func.func @long(%q: tensor<1x8x6000x128xbf16>, %k: tensor<1x8x6000x128xbf16>,
                %v: tensor<1x8x6000x128xbf16>, %o: tensor<1x8x6000x128xbf16>)
    -> tensor<1x8x6000x128xbf16> {
  %r = attn.attention q(%q : tensor<1x8x6000x128xbf16>) k(%k : tensor<1x8x6000x128xbf16>)
      v(%v : tensor<1x8x6000x128xbf16>) outs(%o : tensor<1x8x6000x128xbf16>)
      -> tensor<1x8x6000x128xbf16>
  return %r : tensor<1x8x6000x128xbf16>
}

// -----

// Dynamic lengths: the general tile, unless the size hint falls in a tuned
// range. The tables' own seqlen_min tile for D = 128 (m192n64w12, 8192)
// ranks after the warp-specialized general tile (priority 0 against -1), so
// the hint alone changes nothing.
// TUNED-LABEL:  func.func @dynamic
// TUNED:        name = "tma_d128_m128n128w12s3"
// HINTED-LABEL: func.func @dynamic
// HINTED:       name = "wgmma_d128_m192n64w12"
// TABLES-LABEL: func.func @dynamic
// TABLES:       name = "tma_d128_m128n128w12s3"
// PLAIN-LABEL:  func.func @dynamic
// PLAIN:        name = "tma_d128_m128n128w12s3"
func.func @dynamic(%q: tensor<1x8x?x128xbf16>, %k: tensor<1x8x?x128xbf16>,
                   %v: tensor<1x8x?x128xbf16>, %o: tensor<1x8x?x128xbf16>)
    -> tensor<1x8x?x128xbf16> {
  %r = attn.attention q(%q : tensor<1x8x?x128xbf16>) k(%k : tensor<1x8x?x128xbf16>)
      v(%v : tensor<1x8x?x128xbf16>) outs(%o : tensor<1x8x?x128xbf16>)
      -> tensor<1x8x?x128xbf16>
  return %r : tensor<1x8x?x128xbf16>
}

// -----

// Causal, short: the tuned mma.sync tile; Sq and Sk in different ranges
// take the tables' tile.
// TUNED-LABEL:  func.func @causal_short
// TUNED:        name = "mma_d128_m64n64w4"
// TUNED-LABEL:  func.func @causal_mixed
// TUNED:        name = "tma_d128_m128n128w12s3"
// PLAIN-LABEL:  func.func @causal_short
// PLAIN:        name = "tma_d128_m128n128w12s3"
func.func @causal_short(%q: tensor<1x8x1000x128xbf16>, %k: tensor<1x8x1000x128xbf16>,
                        %v: tensor<1x8x1000x128xbf16>, %o: tensor<1x8x1000x128xbf16>)
    -> tensor<1x8x1000x128xbf16> {
  %r = attn.attention q(%q : tensor<1x8x1000x128xbf16>) k(%k : tensor<1x8x1000x128xbf16>)
      v(%v : tensor<1x8x1000x128xbf16>) outs(%o : tensor<1x8x1000x128xbf16>)
      {mask = #attn.mask<causal>} -> tensor<1x8x1000x128xbf16>
  return %r : tensor<1x8x1000x128xbf16>
}
func.func @causal_mixed(%q: tensor<1x8x1000x128xbf16>, %k: tensor<1x8x2000x128xbf16>,
                        %v: tensor<1x8x2000x128xbf16>, %o: tensor<1x8x1000x128xbf16>)
    -> tensor<1x8x1000x128xbf16> {
  %r = attn.attention q(%q : tensor<1x8x1000x128xbf16>) k(%k : tensor<1x8x2000x128xbf16>)
      v(%v : tensor<1x8x2000x128xbf16>) outs(%o : tensor<1x8x1000x128xbf16>)
      {mask = #attn.mask<causal>} -> tensor<1x8x1000x128xbf16>
  return %r : tensor<1x8x1000x128xbf16>
}

// -----

// A file for another chip, and one measured with another compiler.
// RUN: not attn-opt %s -split-input-file -attn-select-config="target=sm_80 tuning=%attn_src_root/test/Target/Inputs/tuning-sm_90a.json" 2>&1 | FileCheck %s --check-prefix=OTHER
// RUN: not attn-opt %s -split-input-file -attn-select-config="target=sm_90a size-hint=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: split-file %attn_src_root/test/Target/tuning-file.test %t
// RUN: attn-opt %s -split-input-file -attn-select-config="target=sm_90a tuning=%t/stale.json" 2>&1 | FileCheck %s --check-prefix=STALE
// OTHER: error: attn-select-config: tuning file '{{.*}}tuning-sm_90a.json' is for sm_90a, not sm_80
// NEGATIVE: error: attn-select-config: size-hint must not be negative, got -1
// STALE: warning: attn-select-config: {{.*}}stale.json: measured with kernels of 'LLVM 21.1.0'

// The NVVM and ROCDL pipelines pass size hints and tuning on:
// attn-specialize-sizes, then attn-select-config.
// RUN: echo 'module {}' | attn-opt --attn-to-nvvm="size-hints=512,16384 sm-count=132 tuning=%attn_src_root/test/Target/Inputs/tuning-sm_90a.json" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=NVVM
// RUN: echo 'module {}' | attn-opt --attn-to-rocdl="size-hints=512" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROCDL
// RUN: echo 'module {}' | attn-opt --attn-to-nvvm --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAINPIPE
// NVVM: attn-specialize-sizes{size-hints={512,16384} sm-count=132 target=sm_90a tuning={{.*}}tuning-sm_90a.json},
// NVVM-NEXT: attn-select-config{force= profile= size-hint=0 target=sm_90a tuning={{.*}}tuning-sm_90a.json}
// ROCDL: attn-specialize-sizes{size-hints={512} sm-count=0 target=gfx942 tuning=},
// ROCDL-NEXT: attn-select-config{force= profile= size-hint=0 target=gfx942 tuning=}
// PLAINPIPE-NOT: attn-specialize-sizes
// PLAINPIPE: attn-select-config
