// RUN: attn-opt %s -convert-attn-to-rocdl=chip=gfx803 -verify-diagnostics
// RUN: attn-opt %s -convert-attn-to-rocdl=chip=sm_90a -verify-diagnostics

// The chip must be an AMD chip of the tile tables.
// expected-error @+1 {{convert-attn-to-rocdl: option 'chip' is '}}
module {
}
