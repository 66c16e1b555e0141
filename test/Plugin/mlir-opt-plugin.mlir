// A stock mlir-opt (the installed one, not attn-opt) loads AttnPlugin.so as
// a dialect plugin and a pass plugin and runs attn-to-nvvm; the passes of a
// plugin are named in --pass-pipeline, as mlir-opt builds its --<pass>
// flags before it loads plugins.

// RUN: mlir-opt %s --load-dialect-plugin=%attn_plugin --load-pass-plugin=%attn_plugin --pass-pipeline='builtin.module(attn-to-nvvm{chip=sm_90a format=isa})' | FileCheck %s
// RUN: mlir-opt %s --load-dialect-plugin=%attn_plugin --load-pass-plugin=%attn_plugin --pass-pipeline='builtin.module(attn-select-config{target=sm_80})' | FileCheck %s --check-prefix=CONFIG
// The dialect plugin alone parses and prints attn.
// RUN: mlir-opt %s --load-dialect-plugin=%attn_plugin | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: mlir-opt %s --load-dialect-plugin=%attn_plugin --load-pass-plugin=%attn_plugin --help | FileCheck %s --check-prefix=HELP

// The sm_90a kernel: wgmma for D = 64, PTX text in the gpu.binary.
// CHECK-LABEL: llvm.func @f(
// CHECK: gpu.launch_func {{ *}}@fwd_bf16_d64_causal_m128n64w8s2::@fwd_bf16_d64_causal_m128n64w8s2
// CHECK: gpu.binary @fwd_bf16_d64_causal_m128n64w8s2
// CHECK-SAME: .entry fwd_bf16_d64_causal_m128n64w8s2
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16

// CONFIG-LABEL: func.func @f
// CONFIG: config = #attn.config<name = "mma_d64_m{{[0-9]+}}n{{[0-9]+}}w{{[0-9]+}}

// ROUNDTRIP-LABEL: func.func @f
// ROUNDTRIP: attn.attention q(%{{.*}} : memref<1x8x128x64xbf16>)

// HELP-DAG: --load-pass-plugin
// HELP-DAG: --load-dialect-plugin

func.func @f(%q: memref<1x8x128x64xbf16>, %k: memref<1x2x256x64xbf16>,
             %v: memref<1x2x256x64xbf16>, %o: memref<1x8x128x64xbf16>) {
  attn.attention q(%q : memref<1x8x128x64xbf16>) k(%k : memref<1x2x256x64xbf16>)
      v(%v : memref<1x2x256x64xbf16>) outs(%o : memref<1x8x128x64xbf16>)
      {mask = #attn.mask<causal>}
  return
}
