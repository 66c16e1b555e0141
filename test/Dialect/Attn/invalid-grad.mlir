// RUN: attn-opt %s -split-input-file -verify-diagnostics

// attn.attention_grad checks its forward operands like attn.attention, then
// grad_output against output, lse against [B, Hq, Sq] (f32), and each
// gradient against the operand it differentiates.

func.func @grad_output_shape(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>, %do: tensor<1x4x4x16xf16>, %lse: tensor<1x4x8xf32>, %dq: tensor<1x4x8x16xf16>, %dk: tensor<1x4x8x16xf16>, %dv: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{grad_output: dimension 2 (Sq) is 4 but another operand fixes Sq = 8}}
  %r:3 = attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) o(%o : tensor<1x4x8x16xf16>) do(%do : tensor<1x4x4x16xf16>) lse(%lse : tensor<1x4x8xf32>) outs(%dq, %dk, %dv : tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>
  return
}

// -----

func.func @grad_output_type(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>, %do: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dq: tensor<1x4x8x16xf16>, %dk: tensor<1x4x8x16xf16>, %dv: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{grad_output: expected element type 'f16', got 'f32'}}
  %r:3 = attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) o(%o : tensor<1x4x8x16xf16>) do(%do : tensor<1x4x8x16xf32>) lse(%lse : tensor<1x4x8xf32>) outs(%dq, %dk, %dv : tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>
  return
}

// -----

func.func @lse_rank(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>, %do: tensor<1x4x8x16xf16>, %lse: tensor<1x4x8x1xf32>, %dq: tensor<1x4x8x16xf16>, %dk: tensor<1x4x8x16xf16>, %dv: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{lse: expected rank 3 [B, Hq, Sq], got rank 4}}
  %r:3 = attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) o(%o : tensor<1x4x8x16xf16>) do(%do : tensor<1x4x8x16xf16>) lse(%lse : tensor<1x4x8x1xf32>) outs(%dq, %dk, %dv : tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>
  return
}

// -----

func.func @lse_type(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>, %do: tensor<1x4x8x16xf16>, %lse: tensor<1x4x8xf16>, %dq: tensor<1x4x8x16xf16>, %dk: tensor<1x4x8x16xf16>, %dv: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{lse: expected element type 'f32', got 'f16'}}
  %r:3 = attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) o(%o : tensor<1x4x8x16xf16>) do(%do : tensor<1x4x8x16xf16>) lse(%lse : tensor<1x4x8xf16>) outs(%dq, %dk, %dv : tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>
  return
}

// -----

func.func @grad_query_shape(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>, %do: tensor<1x4x8x16xf16>, %lse: tensor<1x4x8xf32>, %dq: tensor<1x4x8x32xf16>, %dk: tensor<1x4x8x16xf16>, %dv: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{grad_query: dimension 3 (D) is 32 but another operand fixes D = 16}}
  %r:3 = attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) o(%o : tensor<1x4x8x16xf16>) do(%do : tensor<1x4x8x16xf16>) lse(%lse : tensor<1x4x8xf32>) outs(%dq, %dk, %dv : tensor<1x4x8x32xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>) -> tensor<1x4x8x32xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>
  return
}

// -----

func.func @grad_key_heads(%q: tensor<1x4x8x16xf16>, %k: tensor<1x2x8x16xf16>, %v: tensor<1x2x8x16xf16>, %o: tensor<1x4x8x16xf16>, %do: tensor<1x4x8x16xf16>, %lse: tensor<1x4x8xf32>, %dq: tensor<1x4x8x16xf16>, %dk: tensor<1x4x8x16xf16>, %dv: tensor<1x2x8x16xf16>) {
  // expected-error @+1 {{grad_key: dimension 1 (Hkv) is 4 but another operand fixes Hkv = 2}}
  %r:3 = attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x2x8x16xf16>) v(%v : tensor<1x2x8x16xf16>) o(%o : tensor<1x4x8x16xf16>) do(%do : tensor<1x4x8x16xf16>) lse(%lse : tensor<1x4x8xf32>) outs(%dq, %dk, %dv : tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x2x8x16xf16>) -> tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x2x8x16xf16>
  return
}

// -----

func.func @grad_value_type(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>, %do: tensor<1x4x8x16xf16>, %lse: tensor<1x4x8xf32>, %dq: tensor<1x4x8x16xf16>, %dk: tensor<1x4x8x16xf16>, %dv: tensor<1x4x8x16xbf16>) {
  // expected-error @+1 {{grad_value: expected element type 'f16', got 'bf16'}}
  %r:3 = attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) o(%o : tensor<1x4x8x16xf16>) do(%do : tensor<1x4x8x16xf16>) lse(%lse : tensor<1x4x8xf32>) outs(%dq, %dk, %dv : tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xbf16>) -> tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xbf16>
  return
}

// -----

func.func @output_shape(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x32xf16>, %o: tensor<1x4x8x16xf16>, %do: tensor<1x4x8x16xf16>, %lse: tensor<1x4x8xf32>, %dq: tensor<1x4x8x16xf16>, %dk: tensor<1x4x8x16xf16>, %dv: tensor<1x4x8x32xf16>) {
  // expected-error @+1 {{output: dimension 3 (Dv) is 16 but another operand fixes Dv = 32}}
  %r:3 = attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x32xf16>) o(%o : tensor<1x4x8x16xf16>) do(%do : tensor<1x4x8x16xf16>) lse(%lse : tensor<1x4x8xf32>) outs(%dq, %dk, %dv : tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x32xf16>) -> tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x32xf16>
  return
}

// -----

func.func @gqa(%q: tensor<1x4x8x16xf16>, %k: tensor<1x3x8x16xf16>, %v: tensor<1x3x8x16xf16>, %o: tensor<1x4x8x16xf16>, %do: tensor<1x4x8x16xf16>, %lse: tensor<1x4x8xf32>, %dq: tensor<1x4x8x16xf16>, %dk: tensor<1x3x8x16xf16>, %dv: tensor<1x3x8x16xf16>) {
  // expected-error @+1 {{key: query heads Hq = 4 must be a multiple of key/value heads Hkv = 3}}
  %r:3 = attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x3x8x16xf16>) v(%v : tensor<1x3x8x16xf16>) o(%o : tensor<1x4x8x16xf16>) do(%do : tensor<1x4x8x16xf16>) lse(%lse : tensor<1x4x8xf32>) outs(%dq, %dk, %dv : tensor<1x4x8x16xf16>, tensor<1x3x8x16xf16>, tensor<1x3x8x16xf16>) -> tensor<1x4x8x16xf16>, tensor<1x3x8x16xf16>, tensor<1x3x8x16xf16>
  return
}

// -----

func.func @bias_broadcast(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>, %do: tensor<1x4x8x16xf16>, %lse: tensor<1x4x8xf32>, %b: tensor<1x1x4x8xf16>, %dq: tensor<1x4x8x16xf16>, %dk: tensor<1x4x8x16xf16>, %dv: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{bias: dimension 2 is 4, expected 1 or Sq = 8}}
  %r:3 = attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) o(%o : tensor<1x4x8x16xf16>) do(%do : tensor<1x4x8x16xf16>) lse(%lse : tensor<1x4x8xf32>) bias(%b : tensor<1x1x4x8xf16>) outs(%dq, %dk, %dv : tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>
  return
}

// -----

func.func @mixed(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>, %do: tensor<1x4x8x16xf16>, %lse: tensor<1x4x8xf32>, %dq: tensor<1x4x8x16xf16>, %dk: memref<1x4x8x16xf16>, %dv: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{grad_key: expected a tensor like query, got 'memref<1x4x8x16xf16>'}}
  attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) o(%o : tensor<1x4x8x16xf16>) do(%do : tensor<1x4x8x16xf16>) lse(%lse : tensor<1x4x8xf32>) outs(%dq, %dk, %dv : tensor<1x4x8x16xf16>, memref<1x4x8x16xf16>, tensor<1x4x8x16xf16>)
  return
}

// -----

func.func @results_count(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>, %do: tensor<1x4x8x16xf16>, %lse: tensor<1x4x8xf32>, %dq: tensor<1x4x8x16xf16>, %dk: tensor<1x4x8x16xf16>, %dv: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{results: expected 3 (one per init: grad_query, grad_key, grad_value), got 2}}
  %r:2 = attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) o(%o : tensor<1x4x8x16xf16>) do(%do : tensor<1x4x8x16xf16>) lse(%lse : tensor<1x4x8xf32>) outs(%dq, %dk, %dv : tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>
  return
}

// -----

func.func @results_type(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>, %do: tensor<1x4x8x16xf16>, %lse: tensor<1x4x8xf32>, %dq: tensor<1x4x8x16xf16>, %dk: tensor<1x4x8x16xf16>, %dv: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{results: result 2 has type 'tensor<1x4x8x16xf32>' but its init grad_value has type 'tensor<1x4x8x16xf16>'}}
  %r:3 = attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) o(%o : tensor<1x4x8x16xf16>) do(%do : tensor<1x4x8x16xf16>) lse(%lse : tensor<1x4x8xf32>) outs(%dq, %dk, %dv : tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf32>
  return
}

// -----

func.func @window(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>, %do: tensor<1x4x8x16xf16>, %lse: tensor<1x4x8xf32>, %dq: tensor<1x4x8x16xf16>, %dk: tensor<1x4x8x16xf16>, %dv: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{window: mask sliding_window requires window = array<i64: left, right>}}
  %r:3 = attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) o(%o : tensor<1x4x8x16xf16>) do(%do : tensor<1x4x8x16xf16>) lse(%lse : tensor<1x4x8xf32>) outs(%dq, %dk, %dv : tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>) {mask = #attn.mask<sliding_window>} -> tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>
  return
}

// -----

func.func @softcap(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>, %o: tensor<1x4x8x16xf16>, %do: tensor<1x4x8x16xf16>, %lse: tensor<1x4x8xf32>, %dq: tensor<1x4x8x16xf16>, %dk: tensor<1x4x8x16xf16>, %dv: tensor<1x4x8x16xf16>) {
  // expected-error @+1 {{softcap: expected a finite positive f32, got -1.000000e+00 : f32}}
  %r:3 = attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%k : tensor<1x4x8x16xf16>) v(%v : tensor<1x4x8x16xf16>) o(%o : tensor<1x4x8x16xf16>) do(%do : tensor<1x4x8x16xf16>) lse(%lse : tensor<1x4x8xf32>) outs(%dq, %dk, %dv : tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>) {softcap = -1.0 : f32} -> tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>
  return
}

// -----

func.func @memref_with_results(%q: memref<1x4x8x16xf16>, %k: memref<1x4x8x16xf16>, %v: memref<1x4x8x16xf16>, %o: memref<1x4x8x16xf16>, %do: memref<1x4x8x16xf16>, %lse: memref<1x4x8xf32>, %dq: memref<1x4x8x16xf16>, %dk: memref<1x4x8x16xf16>, %dv: memref<1x4x8x16xf16>) {
  // expected-error @+1 {{results: the memref form has no results, got 3}}
  %r:3 = attn.attention_grad q(%q : memref<1x4x8x16xf16>) k(%k : memref<1x4x8x16xf16>) v(%v : memref<1x4x8x16xf16>) o(%o : memref<1x4x8x16xf16>) do(%do : memref<1x4x8x16xf16>) lse(%lse : memref<1x4x8xf32>) outs(%dq, %dk, %dv : memref<1x4x8x16xf16>, memref<1x4x8x16xf16>, memref<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>
  return
}

// -----

// grad_bias is the gradient of bias: it needs one, has its shape, and has
// its element type or f32.

func.func @grad_bias_without_bias(%q: memref<1x4x8x16xf16>, %lse: memref<1x4x8xf32>, %db: memref<1x4x8x8xf32>) {
  // expected-error @+1 {{grad_bias: requires a bias operand (it is the gradient of bias)}}
  attn.attention_grad q(%q : memref<1x4x8x16xf16>) k(%q : memref<1x4x8x16xf16>) v(%q : memref<1x4x8x16xf16>) o(%q : memref<1x4x8x16xf16>) do(%q : memref<1x4x8x16xf16>) lse(%lse : memref<1x4x8xf32>) outs(%q, %q, %q : memref<1x4x8x16xf16>, memref<1x4x8x16xf16>, memref<1x4x8x16xf16>) grad_bias(%db : memref<1x4x8x8xf32>)
  return
}

// -----

func.func @grad_bias_shape(%q: memref<1x4x8x16xf16>, %lse: memref<1x4x8xf32>, %b: memref<1x1x8x8xf16>, %db: memref<1x4x8x8xf16>) {
  // expected-error @+1 {{grad_bias: dimension 1 is 4 but bias has 1 (grad_bias has the shape of bias)}}
  attn.attention_grad q(%q : memref<1x4x8x16xf16>) k(%q : memref<1x4x8x16xf16>) v(%q : memref<1x4x8x16xf16>) o(%q : memref<1x4x8x16xf16>) do(%q : memref<1x4x8x16xf16>) lse(%lse : memref<1x4x8xf32>) bias(%b : memref<1x1x8x8xf16>) outs(%q, %q, %q : memref<1x4x8x16xf16>, memref<1x4x8x16xf16>, memref<1x4x8x16xf16>) grad_bias(%db : memref<1x4x8x8xf16>)
  return
}

// -----

func.func @grad_bias_rank(%q: memref<1x4x8x16xf16>, %lse: memref<1x4x8xf32>, %b: memref<1x1x8x8xf16>, %db: memref<8x8xf16>) {
  // expected-error @+1 {{grad_bias: expected the shape of bias 'memref<1x1x8x8xf16>', got 'memref<8x8xf16>'}}
  attn.attention_grad q(%q : memref<1x4x8x16xf16>) k(%q : memref<1x4x8x16xf16>) v(%q : memref<1x4x8x16xf16>) o(%q : memref<1x4x8x16xf16>) do(%q : memref<1x4x8x16xf16>) lse(%lse : memref<1x4x8xf32>) bias(%b : memref<1x1x8x8xf16>) outs(%q, %q, %q : memref<1x4x8x16xf16>, memref<1x4x8x16xf16>, memref<1x4x8x16xf16>) grad_bias(%db : memref<8x8xf16>)
  return
}

// -----

func.func @grad_bias_type(%q: memref<1x4x8x16xf16>, %lse: memref<1x4x8xf32>, %b: memref<1x1x8x8xf16>, %db: memref<1x1x8x8xbf16>) {
  // expected-error @+1 {{grad_bias: expected element type 'f16' (bias's) or f32, got 'bf16'}}
  attn.attention_grad q(%q : memref<1x4x8x16xf16>) k(%q : memref<1x4x8x16xf16>) v(%q : memref<1x4x8x16xf16>) o(%q : memref<1x4x8x16xf16>) do(%q : memref<1x4x8x16xf16>) lse(%lse : memref<1x4x8xf32>) bias(%b : memref<1x1x8x8xf16>) outs(%q, %q, %q : memref<1x4x8x16xf16>, memref<1x4x8x16xf16>, memref<1x4x8x16xf16>) grad_bias(%db : memref<1x1x8x8xbf16>)
  return
}

// -----

func.func @grad_bias_f32_bias(%q: memref<1x4x8x16xf16>, %lse: memref<1x4x8xf32>, %b: memref<1x1x8x8xf32>, %db: memref<1x1x8x8xf16>) {
  // expected-error @+1 {{grad_bias: expected element type 'f32' (bias's) or f32, got 'f16'}}
  attn.attention_grad q(%q : memref<1x4x8x16xf16>) k(%q : memref<1x4x8x16xf16>) v(%q : memref<1x4x8x16xf16>) o(%q : memref<1x4x8x16xf16>) do(%q : memref<1x4x8x16xf16>) lse(%lse : memref<1x4x8xf32>) bias(%b : memref<1x1x8x8xf32>) outs(%q, %q, %q : memref<1x4x8x16xf16>, memref<1x4x8x16xf16>, memref<1x4x8x16xf16>) grad_bias(%db : memref<1x1x8x8xf16>)
  return
}

// -----

func.func @grad_bias_kind(%q: tensor<1x4x8x16xf16>, %lse: tensor<1x4x8xf32>, %b: tensor<1x1x8x8xf16>, %db: memref<1x1x8x8xf16>) {
  // expected-error @+1 {{grad_bias: expected a tensor like query, got 'memref<1x1x8x8xf16>'}}
  attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%q : tensor<1x4x8x16xf16>) v(%q : tensor<1x4x8x16xf16>) o(%q : tensor<1x4x8x16xf16>) do(%q : tensor<1x4x8x16xf16>) lse(%lse : tensor<1x4x8xf32>) bias(%b : tensor<1x1x8x8xf16>) outs(%q, %q, %q : tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>) grad_bias(%db : memref<1x1x8x8xf16>)
  return
}

// -----

func.func @grad_bias_results(%q: tensor<1x4x8x16xf16>, %lse: tensor<1x4x8xf32>, %b: tensor<1x1x8x8xf16>, %db: tensor<1x1x8x8xf16>) {
  // expected-error @+1 {{results: expected 4 (one per init: grad_query, grad_key, grad_value, grad_bias), got 3}}
  %r:3 = attn.attention_grad q(%q : tensor<1x4x8x16xf16>) k(%q : tensor<1x4x8x16xf16>) v(%q : tensor<1x4x8x16xf16>) o(%q : tensor<1x4x8x16xf16>) do(%q : tensor<1x4x8x16xf16>) lse(%lse : tensor<1x4x8xf32>) bias(%b : tensor<1x1x8x8xf16>) outs(%q, %q, %q : tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>) grad_bias(%db : tensor<1x1x8x8xf16>) -> tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>
  return
}
