//===- TileTable.h - per-architecture tile tables ---------------*- C++ -*-===//

#ifndef ATTNDIALECT_TARGET_TILETABLE_H
#define ATTNDIALECT_TARGET_TILETABLE_H

namespace mlir {
namespace attn {} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_TARGET_TILETABLE_H
