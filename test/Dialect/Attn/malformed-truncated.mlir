// Truncated input: the file ends in the middle of an op, an attribute or a
// type. Each gets a parse diagnostic and exit status 1, never a crash.
// RUN: split-file %s %t
// RUN: %python %S/Inputs/exit-status.py attn-opt %t/op.mlir | FileCheck %s --check-prefix=OP
// RUN: %python %S/Inputs/exit-status.py attn-opt %t/attr.mlir | FileCheck %s --check-prefix=ATTR
// RUN: %python %S/Inputs/exit-status.py attn-opt %t/type.mlir | FileCheck %s --check-prefix=TYPE
// RUN: %python %S/Inputs/exit-status.py attn-opt %t/outs.mlir | FileCheck %s --check-prefix=OUTS

// OP: op.mlir:{{[0-9]+}}:{{[0-9]+}}: error:
// OP: exit status: 1
// ATTR: attr.mlir:{{[0-9]+}}:{{[0-9]+}}: error:
// ATTR: exit status: 1
// TYPE: type.mlir:{{[0-9]+}}:{{[0-9]+}}: error:
// TYPE: exit status: 1
// OUTS: outs.mlir:{{[0-9]+}}:{{[0-9]+}}: error:
// OUTS: exit status: 1

//--- op.mlir
func.func @f(%q: tensor<1x4x8x16xf16>) {
  %r = attn.attention q(%q : tensor<1x4x8x16xf16>) k(%q
//--- attr.mlir
func.func @f(%q: memref<1x4x8x16xf16>) {
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%q : memref<1x4x8x16xf16>) v(%q : memref<1x4x8x16xf16>) outs(%q : memref<1x4x8x16xf16>) {config = #attn.config<name = "x", block_m = 6
//--- type.mlir
func.func @f(%q: tensor<1x4x8x16
//--- outs.mlir
func.func @f(%q: memref<1x4x8x16xf16>) {
  attn.attention q(%q : memref<1x4x8x16xf16>) k(%q : memref<1x4x8x16xf16>) v(%q : memref<1x4x8x16xf16>) outs(
