// RUN: attn-opt %s -split-input-file -verify-diagnostics --convert-attn-to-nvvm=chip=sm_90a

// align_bytes below the element size cannot hold for any tensor.

#bwd = #attn.config<name = "bwd_d64_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mma.m16n8k16, align_bytes = 1>
func.func @unaligned(%q: memref<1x4x128x64xf16>, %lse: memref<1x4x128xf32>) {
  // expected-error @below {{config 'bwd_d64_m64n64w4' has align_bytes = 1, below the 2-byte elements of 'f16'}}
  attn.attention_grad q(%q : memref<1x4x128x64xf16>) k(%q : memref<1x4x128x64xf16>) v(%q : memref<1x4x128x64xf16>) o(%q : memref<1x4x128x64xf16>) do(%q : memref<1x4x128x64xf16>) lse(%lse : memref<1x4x128xf32>) outs(%q, %q, %q : memref<1x4x128x64xf16>, memref<1x4x128x64xf16>, memref<1x4x128x64xf16>) {config = #bwd}
  return
}

// -----

// wgmma's dQ product takes the block's query rows a warpgroup (64 rows) at
// a time.

#bwd = #attn.config<name = "wg", block_m = 32, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @wgmma(%q: memref<1x4x128x64xf16>, %lse: memref<1x4x128xf32>) {
  // expected-error @below {{config 'wg' is not supported on sm_90a: tile: block_m 32 is not a multiple of the 64 rows of a wgmma.m64nNk16 warpgroup (the dQ product)}}
  attn.attention_grad q(%q : memref<1x4x128x64xf16>) k(%q : memref<1x4x128x64xf16>) v(%q : memref<1x4x128x64xf16>) o(%q : memref<1x4x128x64xf16>) do(%q : memref<1x4x128x64xf16>) lse(%lse : memref<1x4x128xf32>) outs(%q, %q, %q : memref<1x4x128x64xf16>, memref<1x4x128x64xf16>, memref<1x4x128x64xf16>) {config = #bwd}
  return
}

// -----

// Each warp owns 16 key rows: block_n = 16 x warps.

#bwd = #attn.config<name = "w8", block_m = 64, block_n = 64, warps = 8, stages = 1, pipeline = simple, acc_in_registers = true, mma = mma.m16n8k16>
func.func @rows(%q: memref<1x4x128x64xf16>, %lse: memref<1x4x128xf32>) {
  // expected-error @below {{config 'w8' is not supported on sm_90a: tile: block_n 64 over 8 computing warps must give the 16 key rows per warp of mma.m16n8k16}}
  attn.attention_grad q(%q : memref<1x4x128x64xf16>) k(%q : memref<1x4x128x64xf16>) v(%q : memref<1x4x128x64xf16>) o(%q : memref<1x4x128x64xf16>) do(%q : memref<1x4x128x64xf16>) lse(%lse : memref<1x4x128xf32>) outs(%q, %q, %q : memref<1x4x128x64xf16>, memref<1x4x128x64xf16>, memref<1x4x128x64xf16>) {config = #bwd}
  return
}

// -----

// block_m is the score width of the transposed products: one the
// instruction handles.

#bwd = #attn.config<name = "m48", block_m = 48, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mma.m16n8k16>
func.func @width(%q: memref<1x4x128x64xf16>, %lse: memref<1x4x128xf32>) {
  // expected-error @below {{config 'm48' is not supported on sm_90a: tile: block_m 48 is a score width mma.m16n8k16 does not handle}}
  attn.attention_grad q(%q : memref<1x4x128x64xf16>) k(%q : memref<1x4x128x64xf16>) v(%q : memref<1x4x128x64xf16>) o(%q : memref<1x4x128x64xf16>) do(%q : memref<1x4x128x64xf16>) lse(%lse : memref<1x4x128xf32>) outs(%q, %q, %q : memref<1x4x128x64xf16>, memref<1x4x128x64xf16>, memref<1x4x128x64xf16>) {config = #bwd}
  return
}

// -----

#bwd = #attn.config<name = "bwd_d64_m64n64w4", block_m = 64, block_n = 64, warps = 4, stages = 1, pipeline = simple, acc_in_registers = true, mma = mma.m16n8k16>
func.func @tensors(%q: tensor<1x4x128x64xf16>, %lse: tensor<1x4x128xf32>) {
  // expected-error @below {{expected memref operands (run one-shot-bufferize first)}}
  %r:3 = attn.attention_grad q(%q : tensor<1x4x128x64xf16>) k(%q : tensor<1x4x128x64xf16>) v(%q : tensor<1x4x128x64xf16>) o(%q : tensor<1x4x128x64xf16>) do(%q : tensor<1x4x128x64xf16>) lse(%lse : tensor<1x4x128xf32>) outs(%q, %q, %q : tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) {config = #bwd} -> tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>
  return
}

// -----

// A backward tile's producer warpgroup copies with cp.async: tma_ws has no
// backward form.

#bwd = #attn.config<name = "tma", block_m = 64, block_n = 128, warps = 12, stages = 2, pipeline = tma_ws, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @tma(%q: memref<1x4x128x128xbf16>, %lse: memref<1x4x128xf32>) {
  // expected-error @below {{config 'tma' is not supported on sm_90a: tile: pipeline tma_ws in the backward: only cp_async_ws, with a warpgroup instruction (wgmma)}}
  attn.attention_grad q(%q : memref<1x4x128x128xbf16>) k(%q : memref<1x4x128x128xbf16>) v(%q : memref<1x4x128x128xbf16>) o(%q : memref<1x4x128x128xbf16>) do(%q : memref<1x4x128x128xbf16>) lse(%lse : memref<1x4x128xf32>) outs(%q, %q, %q : memref<1x4x128x128xbf16>, memref<1x4x128x128xbf16>, memref<1x4x128x128xbf16>) {config = #bwd}
  return
}

// -----

// The producer warpgroup's main orders whole 64 x 64 units of dQ, one per
// computing warpgroup: not at D = 64 (one unit on two warpgroups).

#bwd = #attn.config<name = "ws", block_m = 64, block_n = 128, warps = 12, stages = 2, pipeline = cp_async_ws, acc_in_registers = true, mma = wgmma.m64nNk16, deterministic = true>
func.func @wsdet(%q: memref<1x4x128x64xbf16>, %lse: memref<1x4x128xf32>) {
  // expected-error @below {{config 'ws': deterministic: pipeline cp_async_ws orders one 64-column unit of dQ per computing warpgroup (fewer with dropout), and D = 64 has 1, the tile 2 warpgroups}}
  attn.attention_grad q(%q : memref<1x4x128x64xbf16>) k(%q : memref<1x4x128x64xbf16>) v(%q : memref<1x4x128x64xbf16>) o(%q : memref<1x4x128x64xbf16>) do(%q : memref<1x4x128x64xbf16>) lse(%lse : memref<1x4x128xf32>) outs(%q, %q, %q : memref<1x4x128x64xbf16>, memref<1x4x128x64xbf16>, memref<1x4x128x64xbf16>) {config = #bwd}
  return
}

// -----

// Nor with the bias gradient: its sums over query rows would live in the
// dS tile, which the ordered dQ product reads (slices on warpgroups hand
// theirs to the dQ writer instead).

#bwd = #attn.config<name = "ws", block_m = 64, block_n = 128, warps = 12, stages = 2, pipeline = cp_async_ws, acc_in_registers = true, mma = wgmma.m64nNk16, deterministic = true>
func.func @wsdetdbias(%q: memref<1x4x128x128xbf16>, %lse: memref<1x4x128xf32>, %bias: memref<1x4x128x128xbf16>) {
  // expected-error @below {{config 'ws': deterministic: pipeline cp_async_ws orders dQ from its dS tile, where the bias gradient's sums over query rows would be kept (the dQ pass plans compute it)}}
  attn.attention_grad q(%q : memref<1x4x128x128xbf16>) k(%q : memref<1x4x128x128xbf16>) v(%q : memref<1x4x128x128xbf16>) o(%q : memref<1x4x128x128xbf16>) do(%q : memref<1x4x128x128xbf16>) lse(%lse : memref<1x4x128xf32>) bias(%bias : memref<1x4x128x128xbf16>) outs(%q, %q, %q : memref<1x4x128x128xbf16>, memref<1x4x128x128xbf16>, memref<1x4x128x128xbf16>) grad_bias(%bias : memref<1x4x128x128xbf16>) {config = #bwd}
  return
}

// -----

// The computing warps own the key rows: a producer tile's block_n is 16
// per computing warp (here 8 of 12).

#bwd = #attn.config<name = "ws64", block_m = 64, block_n = 64, warps = 12, stages = 2, pipeline = cp_async_ws, acc_in_registers = true, mma = wgmma.m64nNk16>
func.func @wsrows(%q: memref<1x4x128x128xbf16>, %lse: memref<1x4x128xf32>) {
  // expected-error @below {{config 'ws64' is not supported on sm_90a: tile: block_n 64 over 8 computing warps must give the 16 key rows per warp of wgmma.m64nNk16}}
  attn.attention_grad q(%q : memref<1x4x128x128xbf16>) k(%q : memref<1x4x128x128xbf16>) v(%q : memref<1x4x128x128xbf16>) o(%q : memref<1x4x128x128xbf16>) do(%q : memref<1x4x128x128xbf16>) lse(%lse : memref<1x4x128xf32>) outs(%q, %q, %q : memref<1x4x128x128xbf16>, memref<1x4x128x128xbf16>, memref<1x4x128x128xbf16>) {config = #bwd}
  return
}

// -----

// head_split on a producer tile puts one slice on each computing
// warpgroup: three computing warpgroups cannot hold two slices.

#bwd = #attn.config<name = "ws3", block_m = 64, block_n = 64, warps = 16, stages = 2, pipeline = cp_async_ws, acc_in_registers = true, mma = wgmma.m64nNk16, head_split = 2>
func.func @wsslices(%q: memref<1x4x128x256xbf16>, %lse: memref<1x4x128xf32>) {
  // expected-error @below {{config 'ws3' is not supported on sm_90a: tile: head_split 2 on a producer tile takes one computing warpgroup a slice, 12 computing warps given}}
  attn.attention_grad q(%q : memref<1x4x128x256xbf16>) k(%q : memref<1x4x128x256xbf16>) v(%q : memref<1x4x128x256xbf16>) o(%q : memref<1x4x128x256xbf16>) do(%q : memref<1x4x128x256xbf16>) lse(%lse : memref<1x4x128xf32>) outs(%q, %q, %q : memref<1x4x128x256xbf16>, memref<1x4x128x256xbf16>, memref<1x4x128x256xbf16>) {config = #bwd}
  return
}

// -----

// The warpgroups run one code: every one computes slice 0's width, the
// last at most one 64-column step past the tile. Three slices of D = 256
// (128, 128 and none) leave the third warpgroup nothing.

#bwd = #attn.config<name = "ws3", block_m = 64, block_n = 64, warps = 16, stages = 2, pipeline = cp_async_ws, acc_in_registers = true, mma = wgmma.m64nNk16, head_split = 3>
func.func @wsslices3(%q: memref<1x4x128x256xbf16>, %lse: memref<1x4x128xf32>) {
  // expected-error @below {{config 'ws3' has head_split 3, which leaves slice 2 of D = 256 or Dv = 256 empty}}
  attn.attention_grad q(%q : memref<1x4x128x256xbf16>) k(%q : memref<1x4x128x256xbf16>) v(%q : memref<1x4x128x256xbf16>) o(%q : memref<1x4x128x256xbf16>) do(%q : memref<1x4x128x256xbf16>) lse(%lse : memref<1x4x128xf32>) outs(%q, %q, %q : memref<1x4x128x256xbf16>, memref<1x4x128x256xbf16>, memref<1x4x128x256xbf16>) {config = #bwd}
  return
}

// -----

// A deterministic plan cannot split into kernels of their own: the dQ pass
// keeps whole rows of dQ (the slices on warpgroups order dQ instead).

#bwd = #attn.config<name = "w4h2", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16, head_split = 2, deterministic = true>
func.func @detsplit(%q: memref<1x4x128x256xbf16>, %lse: memref<1x4x128xf32>) {
  // expected-error @below {{config 'w4h2' has head_split 2; the deterministic dQ pass keeps whole rows of dQ}}
  attn.attention_grad q(%q : memref<1x4x128x256xbf16>) k(%q : memref<1x4x128x256xbf16>) v(%q : memref<1x4x128x256xbf16>) o(%q : memref<1x4x128x256xbf16>) do(%q : memref<1x4x128x256xbf16>) lse(%lse : memref<1x4x128xf32>) outs(%q, %q, %q : memref<1x4x128x256xbf16>, memref<1x4x128x256xbf16>, memref<1x4x128x256xbf16>) {config = #bwd}
  return
}

// -----

// Without slices on the warpgroups ordered dQ takes whole 64 x 64 units
// of dQ's rows (the slices pad their rows to 64 floats, any D): D = 96 on
// the D = 128 producer tile has no deterministic plan there.

#bwd = #attn.config<name = "ws", block_m = 64, block_n = 128, warps = 12, stages = 2, pipeline = cp_async_ws, acc_in_registers = true, mma = wgmma.m64nNk16, deterministic = true>
func.func @detodd(%q: memref<1x4x128x96xbf16>, %lse: memref<1x4x128xf32>) {
  // expected-error @below {{config 'ws': deterministic: pipeline cp_async_ws orders whole 64 x 64 units of dQ (block_m 64, two or more computing warpgroups, D a multiple of 64, or any D with head_split on the warpgroups); D = 96}}
  attn.attention_grad q(%q : memref<1x4x128x96xbf16>) k(%q : memref<1x4x128x96xbf16>) v(%q : memref<1x4x128x96xbf16>) o(%q : memref<1x4x128x96xbf16>) do(%q : memref<1x4x128x96xbf16>) lse(%lse : memref<1x4x128xf32>) outs(%q, %q, %q : memref<1x4x128x96xbf16>, memref<1x4x128x96xbf16>, memref<1x4x128x96xbf16>) {config = #bwd}
  return
}

// -----

// The slices stage half of each 64-column unit of dQ in a panel of dO: Dv
// needs as many panels as D has units.

#bwd = #attn.config<name = "w12", block_m = 64, block_n = 64, warps = 12, stages = 2, pipeline = cp_async_ws, acc_in_registers = true, mma = wgmma.m64nNk16, head_split = 2>
func.func @slicesdv(%q: memref<1x4x128x256xbf16>, %v: memref<1x4x128x128xbf16>, %lse: memref<1x4x128xf32>) {
  // expected-error @below {{config 'w12' is not supported on sm_90a: tile: slices on warpgroups stage dQ's 4 units of 64 columns (D = 256) in the Q/dO ring, half of each in a 64-column panel of dO, and Dv = 128 has 2}}
  attn.attention_grad q(%q : memref<1x4x128x256xbf16>) k(%q : memref<1x4x128x256xbf16>) v(%v : memref<1x4x128x128xbf16>) o(%v : memref<1x4x128x128xbf16>) do(%v : memref<1x4x128x128xbf16>) lse(%lse : memref<1x4x128xf32>) outs(%q, %q, %v : memref<1x4x128x256xbf16>, memref<1x4x128x256xbf16>, memref<1x4x128x128xbf16>) {config = #bwd}
  return
}
