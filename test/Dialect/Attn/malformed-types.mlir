// Wrong or impossible types: negative, overflowing and non-numeric shapes,
// and a type that does not match the operand's definition. Each gets a
// diagnostic and exit status 1.
// RUN: split-file %s %t
// RUN: %python %S/Inputs/exit-status.py attn-opt %t/negative.mlir | FileCheck %s --check-prefix=NEG
// RUN: %python %S/Inputs/exit-status.py attn-opt %t/overflow.mlir | FileCheck %s --check-prefix=OVERFLOW
// RUN: %python %S/Inputs/exit-status.py attn-opt %t/mismatch.mlir | FileCheck %s --check-prefix=MISMATCH
// RUN: %python %S/Inputs/exit-status.py attn-opt %t/huge.mlir | FileCheck %s --check-prefix=HUGE

// NEG: error:
// NEG: exit status: 1
// OVERFLOW: error:
// OVERFLOW: exit status: 1
// MISMATCH: error: use of value '%q' expects different type than prior uses
// MISMATCH: exit status: 1
// HUGE: error: 'attn.attention' op key: dimension 3 (D) is 9223372036854775807, expected at most 2147483647
// HUGE: exit status: 1

//--- negative.mlir
func.func @f(%q: tensor<1x-4x8x16xf16>) {
  return
}
//--- overflow.mlir
func.func @f(%q: tensor<1x4x99999999999999999999x16xf16>) {
  return
}
//--- mismatch.mlir
func.func @f(%q: memref<1x4x8x16xf16>) {
  attn.attention q(%q : memref<1x4x8x16xf32>) k(%q : memref<1x4x8x16xf16>) v(%q : memref<1x4x8x16xf16>) outs(%q : memref<1x4x8x16xf16>)
  return
}
//--- huge.mlir
func.func @f(%q: memref<?x4x?x9223372036854775807xf16>, %o: memref<?x4x?x16xf16>) {
  attn.attention q(%o : memref<?x4x?x16xf16>) k(%q : memref<?x4x?x9223372036854775807xf16>) v(%o : memref<?x4x?x16xf16>) outs(%o : memref<?x4x?x16xf16>)
  return
}
