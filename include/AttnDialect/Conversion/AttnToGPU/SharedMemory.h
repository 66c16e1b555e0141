//===- SharedMemory.h - the kernels' dynamic shared memory ------*- C++ -*-===//
//
// Every kernel carves one dynamic shared-memory buffer (extern __shared__)
// into tiles, and the forward kernel and the backward plan's main kernel
// stage their tiles into it the same way: 16-byte chunks, consecutive
// threads on consecutive chunks of a row (coalesced), rows past the end
// zero-filled so the matrix instructions read zeros, never garbage.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNDIALECT_CONVERSION_ATTNTOGPU_SHAREDMEMORY_H
#define ATTNDIALECT_CONVERSION_ATTNTOGPU_SHAREDMEMORY_H

#include "AttnDialect/Conversion/AttnToGPU/GPUTargetInfo.h"

namespace mlir {
namespace attn {

/// Declares the dynamic shared-memory buffer in `gpuModule` unless it is
/// there already.
void declareDynamicSharedMemory(OpBuilder &b, Location loc,
                                gpu::GPUModuleOp gpuModule,
                                const GPUTargetInfo &target);

/// A static shared-memory buffer of `count` elements of `elemType`, private
/// to `kernel` (named after it), declared in the kernel's module; returns
/// its base (16-byte aligned) inside the kernel.
Value getStaticSharedMemory(OpBuilder &b, Location loc, gpu::GPUFuncOp kernel,
                            Type elemType, int64_t count,
                            const GPUTargetInfo &target);

/// The buffer's base inside a kernel of that module, rounded up to
/// `alignment` bytes when `alignment` > 16 (the base is only 16-byte
/// aligned: the kernel reserves alignment slack for it).
Value getDynamicSharedMemoryBase(OpBuilder &b, Location loc,
                                 gpu::GPUFuncOp kernel, int64_t alignment);

/// Address (`!llvm.ptr<3>`) of the 16-byte chunk `c` of row `r` of `tile`,
/// padded or swizzled as the tile says. `r` and `c` are i32.
Value getSharedChunkAddress(OpBuilder &b, Location loc, const SharedTile &tile,
                            Value r, Value c);

/// Copies rows [rowStart, rowStart + tile.rows) of the row-major global
/// matrix `src` (`cols` <= tile.cols columns, rows `rowStride` elements
/// apart, an i64) into `tile`, by the `threads` threads of the workgroup
/// (this one is `tid`); rows at or past `rowLimit` and columns at or past
/// `cols` are zero-filled. Issued with target.emitCopyToShared: the
/// caller commits, waits and adds the barrier. `src` is `alignBytes`-aligned.
/// `rowOffset`, when set, gives the i64 element offset of a row from `src`
/// instead of row * rowStride (a paged cache looks its rows up); it is only
/// emitted for every row of the tile but its result is used only for rows
/// below `rowLimit`, so it must clamp what it reads. `dynamicCols` (i32, at
/// most tile.cols), when set, replaces `cols`: a head dim known at run time.
/// `fixedColumns` (swizzled tiles, no `rowOffset`) keeps each thread on the
/// same chunk columns of rows 8 or more apart, where the tile allows it, so
/// that its shared addresses differ by constants and its global ones by a
/// stride step: few registers, for a producer warpgroup that has few.
void emitTileCopy(OpBuilder &b, Location loc, const GPUTargetInfo &target,
                  const SharedTile &tile, int64_t cols, Value tid,
                  int64_t threads, Value src, Value rowStart, Value rowLimit,
                  Value rowStride, int64_t alignBytes,
                  function_ref<Value(Value row)> rowOffset = {},
                  Value dynamicCols = {}, bool fixedColumns = false);

} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_CONVERSION_ATTNTOGPU_SHAREDMEMORY_H
