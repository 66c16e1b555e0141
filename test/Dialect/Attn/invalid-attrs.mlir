// RUN: attn-opt %s -split-input-file -verify-diagnostics

// #attn.config and #attn.mask reject bad values when parsed;
// each message names the attribute and parameter.

// block_m neither a power of two nor a multiple of 16
// expected-error @+1 {{#attn.config: block_m must be a power of two or a multiple of 16 in [1, 4096], got 200}}
module attributes {test.attr = #attn.config<name = "t", block_m = 200, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>} {}

// -----

// block_n zero
// expected-error @+1 {{#attn.config: block_n must be a power of two or a multiple of 16 in [1, 4096], got 0}}
module attributes {test.attr = #attn.config<name = "t", block_m = 64, block_n = 0, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>} {}

// -----

// block_n negative
// expected-error @+1 {{#attn.config: block_n must be a power of two or a multiple of 16 in [1, 4096], got -64}}
module attributes {test.attr = #attn.config<name = "t", block_m = 64, block_n = -64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>} {}

// -----

// block_m huge
// expected-error @+1 {{#attn.config: block_m must be a power of two or a multiple of 16 in [1, 4096], got 9223372036854775807}}
module attributes {test.attr = #attn.config<name = "t", block_m = 9223372036854775807, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>} {}

// -----

// block_m too large
// expected-error @+1 {{#attn.config: block_m must be a power of two or a multiple of 16 in [1, 4096], got 8192}}
module attributes {test.attr = #attn.config<name = "t", block_m = 8192, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>} {}

// -----

// warps
// expected-error @+1 {{#attn.config: warps must be a power of two or a multiple of 4 in [1, 32], got 3}}
module attributes {test.attr = #attn.config<name = "t", block_m = 64, block_n = 64, warps = 3, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>} {}

// -----

// warps too many
// expected-error @+1 {{#attn.config: warps must be a power of two or a multiple of 4 in [1, 32], got 64}}
module attributes {test.attr = #attn.config<name = "t", block_m = 64, block_n = 64, warps = 64, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>} {}

// -----

// stages zero
// expected-error @+1 {{#attn.config: stages must be in [1, 8], got 0}}
module attributes {test.attr = #attn.config<name = "t", block_m = 64, block_n = 64, warps = 4, stages = 0, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>} {}

// -----

// stages too many
// expected-error @+1 {{#attn.config: stages must be in [1, 8], got 9}}
module attributes {test.attr = #attn.config<name = "t", block_m = 64, block_n = 64, warps = 4, stages = 9, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>} {}

// -----

// empty name
// expected-error @+1 {{#attn.config: name must not be empty}}
module attributes {test.attr = #attn.config<name = "", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>} {}

// -----

// empty mma
// expected-error @+2 {{expected one of [mma.m16n8k16, wgmma.m64nNk16, mfma.32x32x8, mfma.16x16x16, mfma.32x32x16, mfma.16x16x32, wmma.16x16x16, fma] for matrix instruction a kernel is built on, got: }}
// expected-error @+1 {{failed to parse Attn_ConfigAttr parameter 'mma' which is to be a `::mlir::attn::MatrixInstrKind`}}
module attributes {test.attr = #attn.config<name = "t", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = "">} {}

// -----

// unknown mma
// expected-error @+2 {{expected one of [mma.m16n8k16, wgmma.m64nNk16, mfma.32x32x8, mfma.16x16x16, mfma.32x32x16, mfma.16x16x32, wmma.16x16x16, fma] for matrix instruction a kernel is built on, got: mma.m16n8k8}}
// expected-error @+1 {{failed to parse Attn_ConfigAttr parameter 'mma'}}
module attributes {test.attr = #attn.config<name = "t", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k8>} {}

// -----

// unknown pipeline
// expected-error @+2 {{expected one of [simple, cp_async, tma_ws, lds_double, cp_async_ws] for how K/V tiles are staged through shared memory / LDS, got: tma}}
// expected-error @+1 {{failed to parse Attn_ConfigAttr parameter 'pipeline' which is to be a `::mlir::attn::PipelineKind`}}
module attributes {test.attr = #attn.config<name = "t", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = tma, acc_in_registers = true, mma = mma.m16n8k16>} {}

// -----

// missing parameter
// expected-error @+1 {{struct is missing required parameter: block_n}}
module attributes {test.attr = #attn.config<name = "t", block_m = 64>} {}

// -----

// head_split: in [1, 4]
// expected-error @+1 {{#attn.config: head_split must be in [1, 4], got 5}}
module attributes {test.attr = #attn.config<name = "t", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16, head_split = 5>} {}

// -----

// align_bytes: a power of two in [1, 16]
// expected-error @+1 {{#attn.config: align_bytes must be a power of two in [1, 16], got 3}}
module attributes {test.attr = #attn.config<name = "t", block_m = 64, block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16, align_bytes = 3>} {}

// -----

// wrong parameter type
// expected-error @+2 {{expected integer value}}
// expected-error @+1 {{failed to parse Attn_ConfigAttr parameter 'block_m' which is to be a `int64_t`}}
module attributes {test.attr = #attn.config<name = "t", block_m = "64", block_n = 64, warps = 4, stages = 2, pipeline = cp_async, acc_in_registers = true, mma = mma.m16n8k16>} {}

// -----

// unknown mask
// expected-error @+2 {{expected ::mlir::attn::MaskKind to be one of: none, causal, causal_bottom_right, sliding_window}}
// expected-error @+1 {{failed to parse Attn_MaskKindAttr parameter 'value'}}
module attributes {test.attr = #attn.mask<causal_top_left>} {}

// -----

// unknown attribute
// expected-error @+1 {{unknown attribute `masks` in dialect `attn`}}
module attributes {test.attr = #attn.masks<causal>} {}

// -----

// persistent: only the tma_ws producer walks tiles
// expected-error @+1 {{#attn.config: persistent needs pipeline = tma_ws, got cp_async_ws}}
module attributes {test.attr = #attn.config<name = "t", block_m = 128, block_n = 128, warps = 12, stages = 2, pipeline = cp_async_ws, acc_in_registers = true, mma = wgmma.m64nNk16, persistent = true>} {}

// -----

// overlap_softmax: K and V barriers of their own exist in the tma_ws ring only
// expected-error @+1 {{#attn.config: overlap_softmax needs pipeline = tma_ws, got cp_async_ws}}
module attributes {test.attr = #attn.config<name = "t", block_m = 128, block_n = 128, warps = 12, stages = 2, pipeline = cp_async_ws, acc_in_registers = true, mma = wgmma.m64nNk16, overlap_softmax = true>} {}
