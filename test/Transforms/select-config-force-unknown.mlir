// RUN: attn-opt %s -attn-select-config="target=gfx1201 force=nope" -verify-diagnostics

// expected-error @+1 {{attn-select-config: force names unknown candidate 'nope' of gfx1201; known: wmma_d64_m64n64w4, wmma_d128_m64n64w4, wmma_d128_m64n32w4, wmma_d256_m64n32w4, wmma_d256_m32n32w2}}
module {
}
