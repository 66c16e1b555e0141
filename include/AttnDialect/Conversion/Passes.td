//===- Passes.td - attn conversion passes -------------------*- tablegen -*-===//

#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToNVVMPass : Pass<"convert-attn-to-nvvm", "::mlir::ModuleOp"> {
  let summary = "Lower configured attn.attention ops to NVVM kernels";
  let description = [{
    Outlines each memref-form `attn.attention` with a `#attn.config` into a
    `gpu.func` kernel of a `gpu.module` targeting `chip`, following the
    kernel ABI of docs/BundleFormat.md, and replaces the op by a
    `gpu.launch_func`. The config's `mma` picks the tensor-core path:
    `"mma.m16n8k16"` (mma.sync fed by ldmatrix, sm_80+) or
    `"wgmma.m64nNk16"` (warpgroup wgmma.mma_async reading 128-byte-swizzled
    shared memory, sm_90a). Ops with equal problems and configs share one
    kernel.

    Every attn op left after the lowering is an error at its location: an
    `attn.attention` the chip or config cannot serve (with the reason), and
    `attn.attention_grad`, which has no GPU lowering yet. The pass reports
    all of them, then fails. A `chip` that is not an NVIDIA chip of the tile
    tables fails the pass before it looks at any op.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "NVIDIA chip: sm_80, sm_86, sm_89 or sm_90a">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::arith::ArithDialect", "::mlir::cf::ControlFlowDialect",
    "::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
    "::mlir::vector::VectorDialect", "::mlir::math::MathDialect"
  ];
}

def NVVMTensorMapArgsPass
    : Pass<"attn-nvvm-tensor-map-args", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Pass the tensor maps of attn-fwd-v2 kernels by value";
  let description = [{
    Kernels of pipeline `tma_ws` take the tensor maps of q, k and v by value
    (ABI attn-fwd-v2, docs/BundleFormat.md): `!llvm.array<16 x i64>`
    arguments, which the kernel stores to stack slots whose addresses it
    gives TMA. After the conversion to the NVVM dialect this pass makes each
    such argument of an `nvvm.kernel` function a 128-byte `llvm.byval`
    pointer with `nvvm.grid_constant` and points the slots' users at it, so
    the PTX parameter is the CUtensorMap itself (`.param .align 64 .b8
    [128]`) and TMA reads it in place. It cannot happen earlier: the NVVM
    dialect admits `nvvm.grid_constant` only on `llvm.func` kernels, and the
    GPU-to-NVVM conversion does not carry `llvm.byval`.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def ConvertAttnToROCDLPass : Pass<"convert-attn-to-rocdl", "::mlir::ModuleOp"> {
  let summary = "Lower configured attn.attention ops to ROCDL kernels";
  let description = [{
    Outlines each memref-form `attn.attention` with a `#attn.config` into a
    `gpu.func` kernel of a `gpu.module` targeting `chip` (MFMA on gfx9, WMMA
    on gfx11/gfx12, through amdgpu/rocdl), following the kernel ABI of
    docs/BundleFormat.md, and replaces the op by a `gpu.launch_func`. Ops
    with equal problems and configs share one kernel.

    Every attn op left after the lowering is an error at its location: an
    `attn.attention` the chip or config cannot serve (with the reason), and
    `attn.attention_grad`, which has no GPU lowering yet. The pass reports
    all of them, then fails. A `chip` that is not an AMD chip of the tile
    tables fails the pass before it looks at any op.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"gfx942\"",
           "AMD chip: gfx90a, gfx942, gfx950, gfx1100 or gfx1201">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::amdgpu::AMDGPUDialect",
    "::mlir::ROCDL::ROCDLDialect", "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
    "::mlir::vector::VectorDialect", "::mlir::math::MathDialect"
  ];
}

#endif // ATTN_CONVERSION_PASSES_TD
