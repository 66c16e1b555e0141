//===- GPUTargetInfo.h - per-target hooks of the GPU kernel ------*- C++
//-*-===//
//
// The attention kernel skeleton (AttentionKernel.h) is written once; what
// differs between NVIDIA and AMD is behind two interfaces:
//
//  * GPUTargetInfo: warp size, cross-lane shuffles, global->shared copies
//    (cp.async on NVIDIA, plain loads + stores where there is no async copy),
//    shared-memory padding, the gpu.module target attribute, and which
//    problems the target lowers at all.
//  * MmaEmitter: the matrix instructions of one warp and the register layout
//    of their accumulators (AccLayout), for the two products of the kernel:
//    S = Q K^T and O += P V.
//
// The skeleton never looks at a chip name: it asks these objects.
//
// Memory model the hooks share: global memory is `!llvm.ptr<1>` (bare device
// pointers of the kernel ABI), shared memory / LDS is `!llvm.ptr<3>` into one
// dynamic shared-memory buffer the skeleton carves into tiles. Both NVPTX and
// AMDGPU use these address spaces.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNDIALECT_CONVERSION_ATTNTOGPU_GPUTARGETINFO_H
#define ATTNDIALECT_CONVERSION_ATTNTOGPU_GPUTARGETINFO_H

#include "AttnDialect/Conversion/AttnToGPU/KernelABI.h"
#include "AttnDialect/Target/TileTable.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/ErrorHandling.h"
#include <memory>

namespace mlir {
namespace attn {

/// Which (row, col) of a warp's [rows x cols] f32 accumulator tile each
/// element of a lane holds. Element `e` of lane `l` is at
///   row = laneRow(l) + rowSlotOffsets[rowSlot[e]]
///   col = laneCol(l) + colOffsets[e].
/// A "row slot" is one of the distinct rows a lane holds; the online softmax
/// keeps one running max and sum per slot. Lanes that hold parts of the same
/// row are reached from each other by xor-shuffles with `rowReduceXor`.
struct AccLayout {
  Value laneRow; // i32
  Value laneCol; // i32
  SmallVector<int64_t> rowSlotOffsets;
  SmallVector<unsigned> rowSlot;
  SmallVector<int64_t> colOffsets;
  SmallVector<int32_t> rowReduceXor;
  /// laneCol is a multiple of this (pairs of columns can then be loaded or
  /// stored as one aligned access).
  int64_t laneColMultiple = 1;
  /// Exclusive bounds of laneRow and laneCol when known (0: unknown); with
  /// them, elements that share a dropout counter are found at compile time
  /// (DropoutFragment.h).
  int64_t laneRowBound = 0, laneColBound = 0;
  /// The m16n8 accumulator layout: laneCol = 2 (lane % 4), so a row's
  /// columns 8i + 2t, +1 lie in lane t of its quad of consecutive lanes
  /// (storeRowsByQuads transposes them by shuffles).
  bool quadColumnPairs = false;

  unsigned getNumElements() const { return rowSlot.size(); }
  unsigned getNumRowSlots() const { return rowSlotOffsets.size(); }
  /// Whether elements e and e + 1 are columns 2j and 2j + 1 of one row (one
  /// 2-element access where laneCol is even too).
  bool startsColumnPair(unsigned e) const {
    return e + 1 < rowSlot.size() && rowSlot[e + 1] == rowSlot[e] &&
           colOffsets[e + 1] == colOffsets[e] + 1 && colOffsets[e] % 2 == 0;
  }
};

/// How the skeleton lays tiles out in shared memory.
enum class SharedTileLayout {
  /// Row-major, every row padded by the target's padding (ldmatrix, LDS).
  Padded,
  /// The 128-byte swizzle the Hopper tensor cores read through matrix
  /// descriptors: the tile is cut into column panels of 128 bytes (64
  /// 16-bit elements), each panel row-major with 128-byte rows, and the
  /// 16-byte chunk c of row r stored at chunk c ^ (r % 8). Panels and the
  /// tile base are 1024-byte aligned.
  Swizzle128B,
};

/// A tile in shared memory: `rows` x `cols` elements of `elemType`. Padded
/// tiles are row-major with rows `rowStride` elements apart (cols plus
/// padding); swizzled tiles have rowStride == cols.
struct SharedTile {
  Value base; // !llvm.ptr<3>
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t rowStride = 0;
  Type elemType;
  SharedTileLayout layout = SharedTileLayout::Padded;
};

/// The matrix instructions of one warp (wave). One emitter serves one kernel
/// (one KernelSpec); it may cache lane-dependent values it computes once.
class MmaEmitter {
public:
  virtual ~MmaEmitter();

  /// Query rows one warp owns; block_m = rowsPerWarp * the warps that
  /// compute (all but a warp-specialized producer warpgroup).
  virtual int64_t getRowsPerWarp() const = 0;

  /// The shared-memory layout the emitter reads its tiles in.
  virtual SharedTileLayout getSharedTileLayout() const {
    return SharedTileLayout::Padded;
  }

  /// Called by every thread after its copies to shared memory completed and
  /// before the barrier that publishes them: matrix units that read shared
  /// memory through another proxy (wgmma) need a fence here.
  virtual void emitSharedWritesVisible(OpBuilder &b, Location loc) {}

  /// Layout of the scores S [rowsPerWarp x block_n] and of the output
  /// accumulator O [rowsPerWarp x Dv]. Both must have the same laneRow and
  /// row slots: the softmax rescales O with the per-slot factors of S.
  virtual AccLayout getScoreLayout(OpBuilder &b, Location loc, Value lane) = 0;
  virtual AccLayout getOutputLayout(OpBuilder &b, Location loc, Value lane) = 0;

  /// Loads this warp's query rows [warpRow, warpRow + rowsPerWarp) of `q`
  /// into registers, in whatever form computeScores wants (called once).
  virtual SmallVector<Value> loadQuery(OpBuilder &b, Location loc, Value lane,
                                       const SharedTile &q, Value warpRow) = 0;

  /// S = Q K^T for the key tile `k` [block_n x D]; f32 values in
  /// getScoreLayout order.
  virtual SmallVector<Value> computeScores(OpBuilder &b, Location loc,
                                           Value lane, ArrayRef<Value> query,
                                           const SharedTile &k) = 0;

  /// Returns acc + P V for probabilities `p` (f32, getScoreLayout order) and
  /// the value tile `v` [block_n x Dv]; `acc` and the result are f32 in
  /// getOutputLayout order.
  virtual SmallVector<Value> accumulateOutput(OpBuilder &b, Location loc,
                                              Value lane, ArrayRef<Value> p,
                                              const SharedTile &v,
                                              ArrayRef<Value> acc) = 0;

  /// P (f32, getScoreLayout order) in the form the matrix instructions of
  /// accumulateOutput read (default: unchanged), so that a P kept across a
  /// key block holds no more registers than they need.
  virtual SmallVector<Value> packProbabilities(OpBuilder &b, Location loc,
                                               ArrayRef<Value> p) {
    return SmallVector<Value>(p);
  }
  /// accumulateOutput for probabilities that packProbabilities returned.
  virtual SmallVector<Value> accumulatePackedOutput(OpBuilder &b, Location loc,
                                                    Value lane,
                                                    ArrayRef<Value> packed,
                                                    const SharedTile &v,
                                                    ArrayRef<Value> acc) {
    return accumulateOutput(b, loc, lane, packed, v, acc);
  }

  /// `acc` + P V (from zero when `acc` is empty) for P [64 rows x block_n]
  /// starting at `p`'s base, laid out in getSharedTileLayout as a query tile
  /// of `p.rows` rows, and the value tile `v`; in flight as accumulateOutput
  /// leaves it. Only for emitters whose tiles are read through matrix
  /// descriptors (getSharedTileLayout Swizzle128B: wgmma).
  virtual SmallVector<Value> accumulateSharedOutput(OpBuilder &b, Location loc,
                                                    const SharedTile &p,
                                                    const SharedTile &v,
                                                    ArrayRef<Value> acc) {
    llvm_unreachable("no shared-memory scores operand");
  }

  /// True when accumulateOutput returns before its matrix instructions
  /// finished (they keep reading the V tile and writing the result
  /// registers). The next computeScores then completes them too, and the
  /// skeleton reorders its key-block loop so that the V buffer is reused
  /// only after a barrier that follows computeScores; after the loop it
  /// calls waitOutput before reading O.
  virtual bool hasAsyncOutput() const { return false; }
  /// Waits until at most `pending` of the products issued last are still
  /// running (0: all done); returns `acc`, which those before them wrote, as
  /// values that are only read after the wait.
  virtual SmallVector<Value> waitOutput(OpBuilder &b, Location loc,
                                        ArrayRef<Value> acc,
                                        int64_t pending = 0) {
    return SmallVector<Value>(acc);
  }
  /// computeScores, left in flight where products are asynchronous
  /// (hasAsyncOutput): the scores may only be read through waitOutput.
  /// Issuing another product before that wait overlaps the two.
  virtual SmallVector<Value> issueScores(OpBuilder &b, Location loc, Value lane,
                                         ArrayRef<Value> query,
                                         const SharedTile &k) {
    return computeScores(b, loc, lane, query, k);
  }
  /// `init` + Q K^T (`init` in getScoreLayout order), issued as issueScores
  /// is: products that start from registers begin at `init` instead of
  /// zero, and others add it afterwards.
  virtual SmallVector<Value> issueScoresOnto(OpBuilder &b, Location loc,
                                             Value lane, ArrayRef<Value> query,
                                             const SharedTile &k,
                                             ArrayRef<Value> init);
};

/// The tables' `fma` instruction (gpu_fma): float32 attention on scalar
/// FMAs, for any target (FmaEmitter.cpp).
std::unique_ptr<MmaEmitter> createFmaEmitter(const KernelSpec &spec,
                                             int64_t warpSize);

/// float32 runs on `fma` and `fma` on float32 only, forward only (the
/// backward plans use the matrix instructions): an error naming the mismatch
/// otherwise.
LogicalResult checkFmaElementType(const KernelSpec &spec, Direction direction,
                                  function_ref<InFlightDiagnostic()> emitError);

/// Per-target parts of the kernel other than the matrix instructions.
class GPUTargetInfo {
public:
  explicit GPUTargetInfo(const ChipSpec &chip) : chip(chip) {}
  virtual ~GPUTargetInfo();

  /// The chip's tile-table entry: the one source of its facts (shared
  /// memory, padding, instructions and their tiling rules).
  const ChipSpec &getChipSpec() const { return chip; }
  /// The chip, as the bundle names it ("sm_90a", "gfx942").
  StringRef getChip() const { return chip.name; }
  /// "cuda" or "hip" (bundle.json's platform).
  virtual StringRef getPlatform() const = 0;
  unsigned getWarpSize() const { return chip.warpSize; }
  virtual unsigned getGlobalAddressSpace() const { return 1; }
  virtual unsigned getSharedAddressSpace() const { return 3; }
  /// Shared memory a workgroup may use (bytes).
  int64_t getMaxSharedMemoryBytes() const { return chip.smemMaxBytes; }
  /// Elements added to every padded shared-memory row so the target's tile
  /// loads are free of bank conflicts.
  int64_t getSharedRowPadding() const { return chip.smemRowPadElems; }

  /// The target attribute of the gpu.module holding the kernels.
  virtual Attribute getTargetAttr(MLIRContext *ctx) const = 0;

  /// Fails, with a diagnostic naming what is unsupported, when this target
  /// cannot lower `spec` (element type, head dims, config's mma/pipeline).
  /// `direction` says which kernel: the forward kernel or the backward
  /// plan's (whose tile follows the table's backward rules).
  virtual LogicalResult
  checkSupported(const KernelSpec &spec, Direction direction,
                 function_ref<InFlightDiagnostic()> emitError) const = 0;

  virtual std::unique_ptr<MmaEmitter>
  createMmaEmitter(const KernelSpec &spec) const = 0;

  /// Whether attn.attention_grad lowers to this target's backward plan
  /// (AttentionGradKernel.h); the driver reports it unlowered otherwise.
  virtual bool lowersBackward() const { return false; }

  /// Value of `v` (32-bit) held by lane `lane ^ offset`.
  virtual Value emitShuffleXor(OpBuilder &b, Location loc, Value v,
                               int32_t offset) const;

  /// 2^v for f32 `v` (-inf gives 0); the softmax's only transcendental.
  /// Default: math.exp2.
  virtual Value emitExp2(OpBuilder &b, Location loc, Value v) const;

  /// Copies `bytes` (16) from global `src` to shared `dst`, or writes zeros
  /// when `valid` (i1) is false. `src` is only `alignBytes`-aligned (the
  /// config's align_bytes: 16, or as little as the element size). When
  /// `validBytes` (i32, a multiple of alignBytes unless readsPartialChunks)
  /// is set, only that many
  /// leading bytes are read and the rest are zeros (a row's head-dim tail);
  /// `src` is readable whenever `valid` holds. May be asynchronous: the
  /// copies issued before emitCopyCommit form a group, and emitCopyWait(n)
  /// waits until at most `n` groups are in flight. The skeleton adds the
  /// barrier.
  virtual void emitCopyToShared(OpBuilder &b, Location loc, Value dst,
                                Value src, int64_t bytes, int64_t alignBytes,
                                Value valid, Value validBytes = {}) const = 0;
  /// Whether emitCopyToShared with `alignBytes` reads any `validBytes` in
  /// [0, bytes] (not only multiples of alignBytes) in one copy, as cp.async
  /// with a source size does.
  virtual bool readsPartialChunks(int64_t alignBytes) const { return false; }
  virtual void emitCopyCommit(OpBuilder &b, Location loc) const {}
  virtual void emitCopyWait(OpBuilder &b, Location loc, int pending) const {}

  /// Warp-specialized pipelines (the target's checkConfig admits them only
  /// where these are implemented). A split arrive/wait barrier in shared
  /// memory at `bar`: init for `count` arrivals (one thread), arrive
  /// (release), and wait until the phase of parity `parity` (i32) has
  /// completed (acquire).
  virtual void emitBarrierInit(OpBuilder &b, Location loc, Value bar,
                               int64_t count) const;
  virtual void emitBarrierArrive(OpBuilder &b, Location loc, Value bar) const;
  virtual void emitBarrierWait(OpBuilder &b, Location loc, Value bar,
                               Value parity) const;
  /// Sets this warpgroup's registers per thread (up or down) to `count`.
  virtual void emitSetMaxRegisters(OpBuilder &b, Location loc, int64_t count,
                                   bool increase) const;
  /// Tensor-map copies (pipeline tma_ws): arrive on `bar` expecting `bytes`
  /// more of asynchronous transfers in this phase; copy the box at
  /// `coords` (i32, innermost first) of the tensor map at generic `map`
  /// into shared `dst`, completing `bytes` of `bar`'s transaction count.
  virtual void emitBarrierArriveExpectBytes(OpBuilder &b, Location loc,
                                            Value bar, int64_t bytes) const;
  virtual void emitTensorTileLoad(OpBuilder &b, Location loc, Value dst,
                                  Value map, ValueRange coords,
                                  Value bar) const;

  /// Atomically adds `values` (f32) to consecutive floats at global `ptr`,
  /// which is aligned to all of them. Default: one atomicrmw fadd each.
  virtual void emitAtomicAddF32(OpBuilder &b, Location loc, Value ptr,
                                ArrayRef<Value> values) const;

  /// Bulk reductions from shared memory (sm_90's cp.reduce.async.bulk):
  /// whether the target has them; add the `bytes` (a multiple of 16) of f32
  /// at shared `src` to global `dst` (both 16-byte aligned) asynchronously,
  /// in this thread's current bulk group; close that group; wait until at
  /// most `pending` of this thread's groups are running (`readOnly`: only
  /// until they have read their shared sources). A thread publishes its
  /// shared writes to the reductions by a fence (MmaEmitter::
  /// emitSharedWritesVisible) and a barrier.
  virtual bool hasBulkReduceF32() const { return false; }
  /// `pred` (i1), when given, issues the reduction only where it holds,
  /// without a branch.
  virtual void emitBulkReduceAddF32(OpBuilder &b, Location loc, Value dst,
                                    Value src, int64_t bytes,
                                    Value pred = {}) const;
  virtual void emitBulkCommit(OpBuilder &b, Location loc) const;
  virtual void emitBulkWait(OpBuilder &b, Location loc, int64_t pending,
                            bool readOnly) const;
  /// Barrier `id` (i32, 1..15) among the `threads` threads (a multiple of
  /// the warp size) that reach it: a warpgroup's alone.
  virtual void emitNamedBarrier(OpBuilder &b, Location loc, Value id,
                                int64_t threads) const;
  /// Arrives at named barrier `id` without waiting for it.
  virtual void emitNamedBarrierArrive(OpBuilder &b, Location loc, Value id,
                                      int64_t threads) const;
  /// Orders the shared memory accesses of a warp's lanes before what any of
  /// them does next (all lanes reach it).
  virtual void emitWarpSync(OpBuilder &b, Location loc) const;
  /// Ordered reductions (KernelSpec::orderedDq), with the bulk ones: waits
  /// until the i32 at global `counter` reads `turn` (acquire, device
  /// scope), ordering the bulk reductions this thread issues next after
  /// what the turn's last holder added; and after this thread's reductions
  /// have completed (emitBulkWait 0), publishes them and adds 1 to
  /// `counter` (release, device scope).
  virtual void emitWaitForTurn(OpBuilder &b, Location loc, Value counter,
                               Value turn) const;
  virtual void emitPassTurn(OpBuilder &b, Location loc, Value counter) const;
  /// The device's multiprocessor count (i32): ordered dQ's launch order
  /// (MainStageEmitter::emit).
  virtual Value emitMultiprocessorCount(OpBuilder &b, Location loc) const;

  /// Programmatic dependent launch: whether a kernel may let the next
  /// kernel on its stream start before it completes, the next one waiting
  /// for it before it reads what it wrote (split-KV's combine kernel; the
  /// bundle then says the runtime may launch the combine early). Targets
  /// that say so implement the two emitters below.
  virtual bool hasDependentLaunch() const { return false; }
  /// Lets the kernel launched after this one start; it changes nothing of
  /// this kernel's memory order.
  virtual void emitLaunchDependents(OpBuilder &b, Location loc) const;
  /// Waits until the kernels this one was launched after have completed
  /// and their writes are visible; loads after it are never moved above it.
  virtual void emitWaitForPrerequisites(OpBuilder &b, Location loc) const;

  /// Target attributes on the kernel (launch bounds and the like).
  virtual void annotateKernel(gpu::GPUFuncOp func,
                              const KernelSpec &spec) const {}
  /// The registers a thread of the backward kernel `spec` is capped at
  /// below the target's per-thread maximum (annotateKernel asks for more
  /// workgroups per SM), or 0 where it is not.
  virtual int64_t getBackwardRegisterCap(const KernelSpec &spec) const {
    return 0;
  }

protected:
  /// emitCopyToShared by synchronous loads of `alignBytes` each, those at or
  /// past `validBytes` (when set) or of an invalid chunk not issued but
  /// zeros, then one store to shared memory. `wholeChunkBranch` loads a
  /// chunk that `validBytes` covers whole in one branch and only the row's
  /// last piece by piece in another.
  void emitPiecewiseCopyToShared(OpBuilder &b, Location loc, Value dst,
                                 Value src, int64_t bytes, int64_t alignBytes,
                                 Value valid, Value validBytes,
                                 bool wholeChunkBranch = false) const;

  const ChipSpec &chip;
};

} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_CONVERSION_ATTNTOGPU_GPUTARGETINFO_H
