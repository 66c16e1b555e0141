//===- DropoutFragment.cpp - dropout factors of a thread's tile -----------===//

#include "DropoutFragment.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/DenseMap.h"

#include <tuple>

using namespace mlir;
using namespace mlir::attn;

SmallVector<Value> attn::emitDropoutFactors(OpBuilder &b, Location loc,
                                            const DropoutParams &params,
                                            Value bh, const AccLayout &layout,
                                            Value rowBase, Value colBase,
                                            bool basesAligned16,
                                            bool transposed) {
  auto c32 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v).getResult();
  };
  auto add = [&](Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y).getResult();
  };
  Value zero =
      arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(0.0f));
  auto factor = [&](Value keep) {
    return arith::SelectOp::create(b, loc, keep, params.scale, zero)
        .getResult();
  };
  unsigned n = layout.getNumElements();
  SmallVector<Value> out(n);
  // An offset o past a 16-aligned base whose lane part stays below 8 once
  // o % 8 is added: then the element's index is 16 (o / 16) + 8 ((o % 16) /
  // 8) + (lane part + o % 8) with every term but the lane part known here.
  auto structured = [&](int64_t bound, int64_t off) {
    return basesAligned16 && bound > 0 && bound + off % 8 <= 8;
  };
  bool all = true;
  for (unsigned e = 0; e < n && all; ++e)
    all = structured(layout.laneRowBound,
                     layout.rowSlotOffsets[layout.rowSlot[e]]) &&
          structured(layout.laneColBound, layout.colOffsets[e]);
  if (!all) {
    // Any layout: each element's counter from its indices.
    for (unsigned e = 0; e < n; ++e) {
      Value r = add(add(rowBase, layout.laneRow),
                    c32(layout.rowSlotOffsets[layout.rowSlot[e]]));
      Value c = add(add(colBase, layout.laneCol), c32(layout.colOffsets[e]));
      if (transposed)
        std::swap(r, c);
      out[e] = factor(emitDropoutKeep(b, loc, params, bh, r, c));
    }
    return out;
  }
  // Counter word (index) of an element: base / 2 + 8 (o / 16) + o % 8 +
  // lane part; its word within the counter: (o % 16) / 8.
  auto counterWord = [&](Value base, Value lanePart, int64_t off) {
    Value half = arith::ShRUIOp::create(b, loc, base, c32(1));
    return add(add(half, lanePart), c32(8 * (off / 16) + off % 8));
  };
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t>;
  llvm::DenseMap<Key, std::array<Value, 4>> words;
  for (unsigned e = 0; e < n; ++e) {
    int64_t ro = layout.rowSlotOffsets[layout.rowSlot[e]];
    int64_t co = layout.colOffsets[e];
    // (query offset, key offset) and their bases and lane parts.
    int64_t qo = transposed ? co : ro, ko = transposed ? ro : co;
    Key key{qo / 16, qo % 8, ko / 16, ko % 8};
    auto it = words.find(key);
    if (it == words.end()) {
      Value qBase = transposed ? colBase : rowBase;
      Value kBase = transposed ? rowBase : colBase;
      Value qLane = transposed ? layout.laneCol : layout.laneRow;
      Value kLane = transposed ? layout.laneRow : layout.laneCol;
      Value c0 = counterWord(kBase, kLane, ko);
      Value c1 = counterWord(qBase, qLane, qo);
      it = words
               .try_emplace(key,
                            emitPhilox4x32(b, loc, {c0, c1, bh, params.offset},
                                           params.key0, params.key1))
               .first;
    }
    unsigned word = (ko % 16) / 8 + 2 * ((qo % 16) / 8);
    out[e] = factor(emitDropoutKeepWord(b, loc, params, it->second[word]));
  }
  return out;
}
