// The gradients of examples/attention.mlir's attention (bf16, 16 query heads
// sharing 4 key/value heads, causal): given the forward's output, its
// logsumexp and the loss gradient dO, dQ, dK and dV. `attn-opt
// --attn-to-nvvm` compiles it into a three-kernel backward plan.
func.func @attention_grad(%q: tensor<2x16x2048x128xbf16>,
                          %k: tensor<2x4x2048x128xbf16>,
                          %v: tensor<2x4x2048x128xbf16>,
                          %o: tensor<2x16x2048x128xbf16>,
                          %do: tensor<2x16x2048x128xbf16>,
                          %lse: tensor<2x16x2048xf32>)
    -> (tensor<2x16x2048x128xbf16>, tensor<2x4x2048x128xbf16>,
        tensor<2x4x2048x128xbf16>) {
  %dq0 = tensor.empty() : tensor<2x16x2048x128xbf16>
  %dk0 = tensor.empty() : tensor<2x4x2048x128xbf16>
  %dv0 = tensor.empty() : tensor<2x4x2048x128xbf16>
  %dq, %dk, %dv = attn.attention_grad
      q(%q : tensor<2x16x2048x128xbf16>) k(%k : tensor<2x4x2048x128xbf16>)
      v(%v : tensor<2x4x2048x128xbf16>) o(%o : tensor<2x16x2048x128xbf16>)
      do(%do : tensor<2x16x2048x128xbf16>) lse(%lse : tensor<2x16x2048xf32>)
      outs(%dq0, %dk0, %dv0 : tensor<2x16x2048x128xbf16>,
           tensor<2x4x2048x128xbf16>, tensor<2x4x2048x128xbf16>)
      {mask = #attn.mask<causal>}
      -> tensor<2x16x2048x128xbf16>, tensor<2x4x2048x128xbf16>,
         tensor<2x4x2048x128xbf16>
  return %dq, %dk, %dv : tensor<2x16x2048x128xbf16>, tensor<2x4x2048x128xbf16>,
                         tensor<2x4x2048x128xbf16>
}
