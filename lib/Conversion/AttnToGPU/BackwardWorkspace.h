//===- BackwardWorkspace.h - the buffers of a backward plan -----*- C++ -*-===//
//
// A backward plan's workspace holds buffers one after the other, each
// starting at a multiple of kWorkspaceAlignment bytes: delta [B, Hq, Sq];
// dq_accum [B, Hq, Sq, D] in the plans that add dQ by atomics, or in blocks
// of 64 query rows where a plan adds it by one bulk reduction a chunk
// (usesBlockedDqAccum: [B, Hq, Sq rounded up to 64, D rounded up to 64],
// each block's 64 rows a run of D / 64 units of 64 x 64 f32, a unit's row r
// holding column c at ((c / 4) ^ (r % 8)) * 4 + c % 4, so that the quads'
// stores into the staging area are conflict-free and the unit goes out as it
// is); in a plan that orders dQ (KernelSpec::orderedDq), dq_order [B, Hq, Sq
// rounded up to 64] i32, the counter of each block of 64 rows at its first row
// (the key blocks that have added to it, or that come before its first
// visitor); with the bias
// gradient, dbias_accum in its summed shape (atomic plans), or dbias_full
// [B, Hq, Sq, Sk] when it is summed at all (deterministic plans: main writes
// every element once, or, when dbias is summed over query rows, row 0 alone
// with each (b, h)'s sum over its rows; a last stage sums them in a fixed
// order; an unsummed dbias is written directly and the buffer is empty).
// The plan's metadata lists them (the runtime sizes the workspace from that
// list, docs/BundleFormat.md), the kernels address them and the IR launcher
// allocates them through this one description.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_BACKWARDWORKSPACE_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_BACKWARDWORKSPACE_H

#include "AttnDialect/Conversion/AttnToGPU/KernelABI.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"
#include <functional>
#include <optional>

namespace mlir {
namespace attn {

/// One buffer of 4-byte elements (f32; dq_order's i32) over the plan's dims
/// (docs/BundleFormat.md's symbols).
struct WorkspaceBuffer {
  llvm::StringRef name;
  llvm::SmallVector<llvm::StringRef, 4> dims;
  llvm::StringRef dtype = "f32";
};

/// The workspace of `spec`'s plan, in order; `blockedDq`: dq_accum in
/// blocks of 64 rows (BackwardSharedMemoryLayout::dqStageBlocked).
inline llvm::SmallVector<WorkspaceBuffer>
getBackwardWorkspace(const KernelSpec &spec, bool blockedDq) {
  llvm::SmallVector<WorkspaceBuffer> buffers = {
      {"delta", {"batch", "heads_q", "seqlen_q"}}};
  // A deterministic plan computes dQ in registers (its main_q pass), or
  // orders its reductions.
  // In blocks, rows of D rounded up to 64 where D is not a multiple of it
  // (slices on warpgroups: whole 64 x 64 units).
  if (spec.dqInMain())
    buffers.push_back(
        {"dq_accum",
         {"batch", "heads_q", blockedDq ? "seqlen_q_64" : "seqlen_q",
          blockedDq && spec.headDim % 64 ? "head_dim_64" : "head_dim"}});
  if (spec.orderedDq())
    buffers.push_back({"dq_order", {"batch", "heads_q", "seqlen_q_64"}, "i32"});
  if (spec.dbiasType && !spec.deterministic)
    buffers.push_back(
        {"dbias_accum",
         {"bias_batch", "bias_heads", "bias_seqlen_q", "bias_seqlen_k"}});
  // bias_summed is 1 when dbias is summed over a broadcast dimension, else 0.
  if (spec.dbiasType && spec.deterministic)
    buffers.push_back(
        {"dbias_full",
         {"bias_summed", "batch", "heads_q", "seqlen_q", "seqlen_k"}});
  return buffers;
}

/// The arithmetic getWorkspaceOffset builds: a dim's value (nullopt from
/// `staticDim` when not a constant, then `dynamicDim`), constants, products,
/// sums and rounding up to a multiple (i64 in a kernel, index on the host).
struct WorkspaceArith {
  std::function<std::optional<int64_t>(llvm::StringRef)> staticDim;
  std::function<Value(llvm::StringRef)> dynamicDim;
  std::function<Value(int64_t)> constant;
  std::function<Value(Value, Value)> mul, add;
  std::function<Value(Value, int64_t)> alignUp;
};

/// The byte offset of buffer `name` of `buffers`, or the workspace's size
/// (the last buffer's end) when `name` is empty: the buffers before it,
/// each start rounded up to kWorkspaceAlignment. A buffer's bytes are the
/// product of its dynamic dims times 4 and its constant dims.
inline Value getWorkspaceOffset(llvm::ArrayRef<WorkspaceBuffer> buffers,
                                llvm::StringRef name, const WorkspaceArith &a) {
  Value end;
  for (const WorkspaceBuffer &buffer : buffers) {
    Value start = end ? a.alignUp(end, kWorkspaceAlignment) : Value();
    if (buffer.name == name)
      return start ? start : a.constant(0);
    Value size;
    int64_t factor = 4;
    for (llvm::StringRef dim : buffer.dims) {
      if (std::optional<int64_t> s = a.staticDim(dim)) {
        factor *= *s;
        continue;
      }
      Value d = a.dynamicDim(dim);
      size = size ? a.mul(size, d) : d;
    }
    size = size ? a.mul(size, a.constant(factor)) : a.constant(factor);
    end = start ? a.add(start, size) : size;
  }
  assert(name.empty() && "not a buffer of this workspace");
  return end;
}

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_BACKWARDWORKSPACE_H
