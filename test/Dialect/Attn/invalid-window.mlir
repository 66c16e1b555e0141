// RUN: attn-opt %s -split-input-file -verify-diagnostics

// window = array<i64: left, right> goes with mask sliding_window and only
// with it; a negative bound is unbounded, but not both.

func.func @missing_window(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{window: mask sliding_window requires window = array<i64: left, right>}}
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : memref<1x4x8x16xf16>) {mask = #attn.mask<sliding_window>}
  return
}

// -----

func.func @window_on_causal(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{window: only valid with mask sliding_window, but mask is causal}}
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : memref<1x4x8x16xf16>) {mask = #attn.mask<causal>, window = array<i64: 4, 0>}
  return
}

// -----

func.func @window_without_mask(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{window: only valid with mask sliding_window, but mask is none}}
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : memref<1x4x8x16xf16>) {window = array<i64: 4, 0>}
  return
}

// -----

func.func @window_size(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{window: expected 2 values [left, right], got 3}}
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : memref<1x4x8x16xf16>) {mask = #attn.mask<sliding_window>, window = array<i64: 4, 0, 1>}
  return
}

// -----

func.func @window_unbounded(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{window: both bounds are unbounded (negative); use mask none}}
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : memref<1x4x8x16xf16>) {mask = #attn.mask<sliding_window>, window = array<i64: -1, -1>}
  return
}

// -----

func.func @window_huge(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{window: right bound is 9223372036854775807, expected a value in [-2147483648, 2147483647] (negative means unbounded)}}
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : memref<1x4x8x16xf16>) {mask = #attn.mask<sliding_window>, window = array<i64: 4, 9223372036854775807>}
  return
}

// -----

func.func @window_very_negative(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{window: left bound is -9223372036854775808, expected a value in [-2147483648, 2147483647]}}
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : memref<1x4x8x16xf16>) {mask = #attn.mask<sliding_window>, window = array<i64: -9223372036854775808, 3>}
  return
}

// -----

func.func @window_wrong_type(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{attribute 'window' failed to satisfy constraint: i64 dense array attribute}}
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) outs(%o : memref<1x4x8x16xf16>) {mask = #attn.mask<sliding_window>, window = array<i32: 4, 0>}
  return
}
