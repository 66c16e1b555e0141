//===- QuadStores.h - accumulator rows stored in 16-byte runs ---*- C++ -*-===//
//
// Private to the AttnToGPU kernels. In the m16n8 accumulator layout (mma.sync
// and wgmma alike) a row's four lanes hold column pairs 2t + 8i: stored as
// they lie, each warp instruction writes half-sectors of 8 rows. The forward
// output and the backward's dK, dV and dQ go out here instead as 16-byte
// runs: each quad transposes its packed pairs by shuffles first.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_QUADSTORES_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_QUADSTORES_H

#include "AttnDialect/Conversion/AttnToGPU/GPUTargetInfo.h"

namespace mlir {
namespace attn {

/// Whether storeRowsByQuads takes rows of `layout` whose `width` columns
/// are its elements' pairs (8i, 8i + 1), i < width / 8, of the 16-bit
/// `type`, on rows aligned to `alignBytes`: a warp of 32, the m16n8 layout
/// (AccLayout::quadColumnPairs), a width that is a multiple of 32 and
/// 16-byte alignment.
bool canStoreRowsByQuads(const GPUTargetInfo &target, const AccLayout &layout,
                         Type type, int64_t width, int64_t alignBytes);

/// Stores those rows (elements `vals(e)`, already of `type`) as 16-byte
/// stores: lane t of a row's quad stores columns 8 (4m + t) .. + 7 of row
/// `rowOf(slot)` at `rowBase(row)` (the row's column 0) when the row is
/// below `rowLimit` (uniform over the quad; the shuffles run in every lane).
void storeRowsByQuads(OpBuilder &b, Location loc, const GPUTargetInfo &target,
                      const AccLayout &layout, Type type, int64_t width,
                      function_ref<Value(unsigned slot)> rowOf, Value rowLimit,
                      function_ref<Value(Value row)> rowBase,
                      function_ref<Value(unsigned)> vals);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_QUADSTORES_H
