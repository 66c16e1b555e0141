// RUN: attn-opt %s -convert-attn-to-rocdl=chip=gfx803 -verify-diagnostics
// RUN: not attn-opt %s -convert-attn-to-rocdl=chip=sm_90a 2>&1 | FileCheck %s

// The chip must be an AMD chip of the tile tables; the pass fails before it
// looks at the module, so the error has no location.
// expected-error @unknown {{convert-attn-to-rocdl: unsupported chip 'gfx803'; expected one of gfx90a, gfx942, gfx950, gfx1100, gfx1201}}
// CHECK: error: convert-attn-to-rocdl: unsupported chip 'sm_90a'; expected one of gfx90a, gfx942, gfx950, gfx1100, gfx1201
module {
}
