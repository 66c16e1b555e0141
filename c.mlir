#cfg = #attn.config<name = "t", block_m = 32, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
func.func @f(%q: memref<?x8x?x128xbf16>, %k: memref<?x2x?x128xbf16>, %lse: memref<?x8x?xf32>, %p: f32, %s: i64, %off: i32) {
  attn.attention_grad q(%q : memref<?x8x?x128xbf16>) k(%k : memref<?x2x?x128xbf16>) v(%k : memref<?x2x?x128xbf16>) o(%q : memref<?x8x?x128xbf16>) do(%q : memref<?x8x?x128xbf16>) lse(%lse : memref<?x8x?xf32>) dropout(%p, %s, %off) outs(%q, %k, %k : memref<?x8x?x128xbf16>, memref<?x2x?x128xbf16>, memref<?x2x?x128xbf16>) {mask = #attn.mask<causal>, config = #cfg}
  return
}
