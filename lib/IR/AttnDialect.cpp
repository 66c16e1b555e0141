//===- AttnDialect.cpp - attn dialect ---------------------------*- C++ -*-===//

#include "AttnDialect/IR/AttnDialect.h"
#include "AttnDialect/IR/AttnAttrs.h"
#include "AttnDialect/IR/AttnOps.h"

using namespace mlir;
using namespace mlir::attn;

#include "AttnDialect/IR/AttnDialect.cpp.inc"

void AttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "AttnDialect/IR/AttnOps.cpp.inc"
      >();
  registerAttributes();
}
