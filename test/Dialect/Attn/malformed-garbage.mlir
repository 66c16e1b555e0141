// Garbage input: not MLIR at all, binary bytes, an unknown op of the attn
// dialect. Each gets a diagnostic and exit status 1.
// RUN: split-file %s %t
// RUN: %python %S/Inputs/exit-status.py attn-opt %t/text.mlir | FileCheck %s --check-prefix=TEXT
// RUN: printf '\x00\xff\xfe\x01ML\xef\xbe\xad' > %t/binary.mlir
// RUN: %python %S/Inputs/exit-status.py attn-opt %t/binary.mlir | FileCheck %s --check-prefix=BINARY
// RUN: %python %S/Inputs/exit-status.py attn-opt %t/unknown-op.mlir | FileCheck %s --check-prefix=UNKNOWN
// RUN: %python %S/Inputs/exit-status.py attn-opt %t/keyword.mlir | FileCheck %s --check-prefix=KEYWORD

// TEXT: error:
// TEXT: exit status: 1
// BINARY: error:
// BINARY: exit status: 1
// UNKNOWN: error: custom op 'attn.attend' is unknown
// UNKNOWN: exit status: 1
// KEYWORD: error: custom op 'attn.attention' expected 'q'
// KEYWORD: exit status: 1

//--- text.mlir
this is not MLIR } { %%% attn.attention
//--- unknown-op.mlir
func.func @f() {
  attn.attend
  return
}
//--- keyword.mlir
func.func @f(%q: memref<1x4x8x16xf16>) {
  attn.attention query(%q : memref<1x4x8x16xf16>)
  return
}
