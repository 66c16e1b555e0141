//===- TileTable.cpp - per-architecture tile tables -------------*- C++ -*-===//

#include "AttnDialect/Target/TileTable.h"
