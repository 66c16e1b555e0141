//===- AttnAttrs.h - attn attributes and enums ------------------*- C++ -*-===//

#ifndef ATTNDIALECT_IR_ATTNATTRS_H
#define ATTNDIALECT_IR_ATTNATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "AttnDialect/IR/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "AttnDialect/IR/AttnAttrs.h.inc"

#endif // ATTNDIALECT_IR_ATTNATTRS_H
