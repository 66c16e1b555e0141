//===- AttnAttrs.h - attn attributes and enums ------------------*- C++ -*-===//

#ifndef ATTNDIALECT_IR_ATTNATTRS_H
#define ATTNDIALECT_IR_ATTNATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "AttnDialect/IR/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "AttnDialect/IR/AttnAttrs.h.inc"

namespace mlir::attn {
/// Both causal alignments: query row i sees about i + 1 keys (the work of
/// a query block grows with its index).
inline bool isCausal(MaskKind kind) {
  return kind == MaskKind::Causal || kind == MaskKind::CausalBottomRight;
}
} // namespace mlir::attn

#endif // ATTNDIALECT_IR_ATTNATTRS_H
