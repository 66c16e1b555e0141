// RUN: attn-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(gpu.module(attn-nvvm-tensor-map-args))' | FileCheck %s

// A tensor map argument (!llvm.array<16 x i64>) of a kernel becomes a byval
// grid constant, and its stack slot's users read the parameter in place.
// CHECK-LABEL: llvm.func @kernel
// CHECK-SAME: %[[P:.*]]: !llvm.ptr<1>, %[[MAP:.*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK-NOT: llvm.alloca
// CHECK-NOT: llvm.store
// CHECK: nvvm.prefetch tensormap, %[[MAP]]
// Functions that are not kernels keep their arguments.
// CHECK-LABEL: llvm.func @helper
// CHECK-SAME: !llvm.array<16 x i64>
gpu.module @m {
  llvm.func @kernel(%p: !llvm.ptr<1>, %map: !llvm.array<16 x i64>) attributes {nvvm.kernel} {
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %slot = llvm.alloca %c1 x !llvm.array<16 x i64> {alignment = 64 : i64} : (i32) -> !llvm.ptr
    llvm.store %map, %slot {alignment = 64 : i64} : !llvm.array<16 x i64>, !llvm.ptr
    nvvm.prefetch tensormap, %slot : !llvm.ptr
    llvm.return
  }
  llvm.func @helper(%map: !llvm.array<16 x i64>) {
    llvm.return
  }
}

// -----

// A map read as a value cannot be passed in place.
gpu.module @m {
  // expected-error @below {{tensor map argument 0 is used other than by a store to a stack slot}}
  llvm.func @kernel(%map: !llvm.array<16 x i64>) attributes {nvvm.kernel} {
    %x = llvm.extractvalue %map[0] : !llvm.array<16 x i64>
    llvm.return
  }
}
