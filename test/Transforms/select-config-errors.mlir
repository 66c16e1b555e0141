// Rejections list every candidate with its reason, one note each.
// RUN: attn-opt %s -split-input-file -attn-select-config=target=gfx1100 -verify-diagnostics

// D = 320 is above every chip's maximum; on gfx1100 LDS and registers also
// overflow. The f32 candidates say so too, after their element type.
func.func @d320(%q: tensor<1x8x?x320xf16>, %k: tensor<1x8x?x320xf16>,
                %v: tensor<1x8x?x320xf16>, %o: tensor<1x8x?x320xf16>)
    -> tensor<1x8x?x320xf16> {
  // expected-error @+8 {{no tile candidate of gfx1100 fits this op (f16, D = 320, Dv = 320)}}
  // expected-note @+7 {{candidate 'wmma_d64_m64n64w4': head dim D = 320: gfx1100 handles at most 256}}
  // expected-note @+6 {{candidate 'wmma_d128_m64n64w4': head dim D = 320: gfx1100 handles at most 256}}
  // expected-note @+5 {{candidate 'wmma_d128_m64n32w4': head dim D = 320: gfx1100 handles at most 256}}
  // expected-note @+4 {{candidate 'wmma_d256_m64n32w4': head dim D = 320: gfx1100 handles at most 256; shared memory: 83968 bytes > 65536 max of gfx1100 (1 stages x block_n 32 x (D 320 + Dv 320 + pad) + block_m 64 x Q row); registers: estimated 296 per thread > 256 max of gfx1100}}
  // expected-note @+3 {{candidate 'wmma_d256_m32n32w2': dispatch: used only on gfx1201}}
  // expected-note @+2 {{candidate 'fma_m32n32w4': element type f16: the candidate handles f32; head dim D = 320: gfx1100 handles at most 256}}
  // expected-note @+1 {{candidate 'fma_m16n16w2': element type f16: the candidate handles f32; head dim D = 320: gfx1100 handles at most 256}}
  %r = attn.attention q(%q : tensor<1x8x?x320xf16>) k(%k : tensor<1x8x?x320xf16>)
      v(%v : tensor<1x8x?x320xf16>) outs(%o : tensor<1x8x?x320xf16>)
      -> tensor<1x8x?x320xf16>
  return %r : tensor<1x8x?x320xf16>
}

// -----

// A dynamic head dim has no tile to choose; attn-bundle's any-D variants
// carry a config with max_head_dim.
func.func @dynamic_d(%q: tensor<1x8x?x?xf16>, %o: tensor<1x8x?x?xf16>) -> tensor<1x8x?x?xf16> {
  // expected-error @+1 {{query, key and value must be ranked 4-D with static head dims for the tile tables to choose a tile; a dynamic head dim needs a #attn.config with max_head_dim (attn-bundle's any-D variants)}}
  %r = attn.attention q(%q : tensor<1x8x?x?xf16>) k(%q : tensor<1x8x?x?xf16>) v(%q : tensor<1x8x?x?xf16>) outs(%o : tensor<1x8x?x?xf16>) -> tensor<1x8x?x?xf16>
  return %r : tensor<1x8x?x?xf16>
}
