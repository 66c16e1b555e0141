// RUN: attn-opt %s -attn-select-config=target=sm_75 -verify-diagnostics

// expected-error @+1 {{attn-select-config: unknown target 'sm_75'; known chips: sm_80, sm_86, sm_89, sm_90a, gfx90a, gfx942, gfx950, gfx1100, gfx1201, host}}
module {
}
