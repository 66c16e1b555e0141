// RUN: attn-opt %s | FileCheck %s
// RUN: attn-opt %s | attn-opt | FileCheck %s

// The attributes on their own, as later passes attach them to modules and ops.
// `mma` prints as a keyword; the quoted spelling of older files still parses.
// `align_bytes` prints only when it is not the default 16.

// CHECK: module attributes
// CHECK-SAME: test.config = #attn.config<name = "gfx942_bf16_d128", block_m = 128, block_n = 64, warps = 4, stages = 1, pipeline = lds_double, acc_in_registers = false, mma = mfma.32x32x8>
// CHECK-SAME: test.config16 = #attn.config<name = "aligned", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>,
// CHECK-SAME: test.config2 = #attn.config<name = "unaligned", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16, align_bytes = 2>
// CHECK-SAME: test.config3wg = #attn.config<name = "three_warpgroups", block_m = 192, block_n = 128, warps = 12, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>
// CHECK-SAME: test.legacy = #attn.config<name = "quoted", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>
// CHECK-SAME: test.masks = [#attn.mask<none>, #attn.mask<causal>, #attn.mask<causal_bottom_right>, #attn.mask<sliding_window>]
// CHECK-SAME: test.pipelines = [#attn.pipeline<simple>, #attn.pipeline<cp_async>, #attn.pipeline<tma_ws>, #attn.pipeline<lds_double>]
module attributes {
  test.config = #attn.config<name = "gfx942_bf16_d128", block_m = 128, block_n = 64, warps = 4, stages = 1, pipeline = lds_double, acc_in_registers = false, mma = mfma.32x32x8>,
  test.config16 = #attn.config<name = "aligned", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16, align_bytes = 16>,
  test.config2 = #attn.config<name = "unaligned", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16, align_bytes = 2>,
  test.config3wg = #attn.config<name = "three_warpgroups", block_m = 192, block_n = 128, warps = 12, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = wgmma.m64nNk16>,
  test.masks = [#attn.mask<none>, #attn.mask<causal>, #attn.mask<causal_bottom_right>, #attn.mask<sliding_window>],
  test.legacy = #attn.config<name = "quoted", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = "mma.m16n8k16">,
  test.pipelines = [#attn.pipeline<simple>, #attn.pipeline<cp_async>, #attn.pipeline<tma_ws>, #attn.pipeline<lds_double>]
} {
}
