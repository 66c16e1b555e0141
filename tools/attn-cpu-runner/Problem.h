//===- Problem.h - one attention problem of attn-cpu-runner -----*- C++ -*-===//
//
// A problem is a shape plus the op's semantics. Problems whose compiled
// module would be identical (same dtype, heads, head dims, mask, bias layout,
// ...) share one JIT-compiled kernel: B, Sq and Sk are dynamic in it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTNCPURUNNER_PROBLEM_H
#define ATTN_TOOLS_ATTNCPURUNNER_PROBLEM_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn_runner {

enum class DType { F32, F16, BF16 };

struct Problem {
  int64_t batch = 1, hq = 1, hkv = 1, sq = 1, sk = 1, d = 64, dv = 0;
  DType dtype = DType::F32;
  /// none, causal, causal_bottom_right or sliding_window.
  std::string mask = "none";
  int64_t windowLeft = -1, windowRight = -1;
  /// Bias shape; each dimension is 1 or the full size of [B, Hq, Sq, Sk].
  std::optional<std::array<int64_t, 4>> bias;
  bool biasF32 = false;
  std::optional<float> scale, softcap;
  bool lse = false;
  /// Run attn.attention_grad instead of attn.attention; with gradBias, it
  /// also computes grad_bias (in the bias's element type, or f32).
  bool backward = false;
  bool gradBias = false, gradBiasF32 = false;
  /// Dropout: the probability (none without it), the seed and the offset.
  std::optional<float> dropoutP;
  uint64_t dropoutSeed = 0;
  uint32_t dropoutOffset = 0;
  uint64_t seed = 1;
  /// Tile sizes to attach as #attn.config; 0 lets attn-select-config pick.
  int64_t blockM = 0, blockN = 0;
  /// The op's serving form: dense, varlen (cu_seqlens; seqlensQ and
  /// seqlensK give each sequence's lengths, sq/sk are unused), kvcache
  /// (seqlens_k = seqlensK per batch, sk is the cache's capacity) or paged
  /// (the same, in pages of pageSize keys, shuffled over a shared pool).
  std::string layout = "dense";
  std::vector<int64_t> seqlensQ, seqlensK;
  int64_t pageSize = 0;
  /// attn-to-cpu's kv-splits: the split-KV merge, for kvcache and paged.
  int64_t kvSplits = 1;

  /// The attn.attention (or attn.attention_grad) module computing this
  /// problem (func @attn with dynamic B, Sq, Sk). Equal strings mean one
  /// compiled kernel serves both.
  std::string moduleText() const;
  /// One line describing the problem, for reports.
  std::string describe() const;
};

/// Parses problem flags (`--hq 8 --dtype bf16 ...`) into `p`. Returns an
/// error message naming the flag, or "" on success.
std::string parseProblemFlags(llvm::ArrayRef<std::string> args, Problem &p);

llvm::StringRef dtypeName(DType t);

} // namespace attn_runner

#endif // ATTN_TOOLS_ATTNCPURUNNER_PROBLEM_H
