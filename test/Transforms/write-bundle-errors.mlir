// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-write-bundle="dir=%t"

// expected-error @+1 {{attn-write-bundle: module has no 'attn.kernels' metadata; run convert-attn-to-nvvm or convert-attn-to-rocdl first}}
module {
}

// -----

// expected-error @+1 {{attn-write-bundle: kernel module @k is not a gpu.binary: run gpu-module-to-binary (format=bin) first}}
module attributes {gpu.container_module, attn.kernels = [{module = "k", name = "k", platform = "cuda", chip = "sm_90a"}]} {
  gpu.module @k {
  }
}

// -----

module attributes {gpu.container_module, attn.kernels = [{module = "k", name = "k", platform = "cuda", chip = "sm_90a"}]} {
  // expected-error @+1 {{attn-write-bundle: gpu.binary @k holds no binary object (compile with format=bin)}}
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "// ptx">]
}
