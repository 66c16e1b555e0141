// bf16 grouped-query attention (16 query heads sharing 4 key/value heads),
// causal, returning the logsumexp: the shape class of a 2k-context decoder
// layer. `attn-opt --attn-to-nvvm` compiles it for the H100.
func.func @attention(%q: tensor<2x16x2048x128xbf16>,
                     %k: tensor<2x4x2048x128xbf16>,
                     %v: tensor<2x4x2048x128xbf16>)
    -> (tensor<2x16x2048x128xbf16>, tensor<2x16x2048xf32>) {
  %o0 = tensor.empty() : tensor<2x16x2048x128xbf16>
  %l0 = tensor.empty() : tensor<2x16x2048xf32>
  %o, %lse = attn.attention
      q(%q : tensor<2x16x2048x128xbf16>) k(%k : tensor<2x4x2048x128xbf16>)
      v(%v : tensor<2x4x2048x128xbf16>)
      outs(%o0 : tensor<2x16x2048x128xbf16>) lse(%l0 : tensor<2x16x2048xf32>)
      {mask = #attn.mask<causal>}
      -> tensor<2x16x2048x128xbf16>, tensor<2x16x2048xf32>
  return %o, %lse : tensor<2x16x2048x128xbf16>, tensor<2x16x2048xf32>
}
