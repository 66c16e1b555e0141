// RUN: attn-opt %s -split-input-file -verify-diagnostics

// scale and softcap are finite positive f32 values.

func.func @negative_scale(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{scale: expected a finite positive f32, got -2.500000e+00 : f32}}
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : memref<1x4x8x16xf16>) {scale = -2.5 : f32}
  return
}

// -----

func.func @zero_scale(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{scale: expected a finite positive f32, got 0.000000e+00 : f32}}
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : memref<1x4x8x16xf16>) {scale = 0.0 : f32}
  return
}

// -----

func.func @nan_scale(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{scale: expected a finite positive f32, got 0x7FC00000 : f32}}
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : memref<1x4x8x16xf16>) {scale = 0x7FC00000 : f32}
  return
}

// -----

func.func @inf_scale(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{scale: expected a finite positive f32, got 0x7F800000 : f32}}
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : memref<1x4x8x16xf16>) {scale = 0x7F800000 : f32}
  return
}

// -----

func.func @f64_scale(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{attribute 'scale' failed to satisfy constraint: 32-bit float attribute}}
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : memref<1x4x8x16xf16>) {scale = 0.5 : f64}
  return
}

// -----

func.func @zero_softcap(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{softcap: expected a finite positive f32, got 0.000000e+00 : f32}}
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : memref<1x4x8x16xf16>) {softcap = 0.0 : f32}
  return
}

// -----

func.func @negative_softcap(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{softcap: expected a finite positive f32, got -3.000000e+01 : f32}}
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : memref<1x4x8x16xf16>) {softcap = -30.0 : f32}
  return
}

// -----

func.func @inf_softcap(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{softcap: expected a finite positive f32, got 0x7F800000 : f32}}
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : memref<1x4x8x16xf16>) {softcap = 0x7F800000 : f32}
  return
}
