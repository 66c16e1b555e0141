//===- Reference.h - reference attention for attn-cpu-runner ----*- C++ -*-===//
//
// Written independently of the compiler (own mask arithmetic) so that it is
// an oracle for it. Tensors are dense row-major [B, H, S, D].
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTNCPURUNNER_REFERENCE_H
#define ATTN_TOOLS_ATTNCPURUNNER_REFERENCE_H

#include "Problem.h"
#include <array>
#include <cstdint>
#include <vector>

namespace attn_runner {

/// Whether query row `i` sees key `j` under `p`'s mask.
bool referenceVisible(const Problem &p, int64_t i, int64_t j);

/// The four words of Philox4x32-10 for `counter` under `key` (Random123's
/// definition, written here independently of the compiler's emitter).
std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter,
                                   std::array<uint32_t, 2> key);

/// What dropout multiplies probability (b, h, i, j) by: 1 / (1 - p) where
/// the mask of docs/AttnDialect.md keeps it, 0 where it drops it; 1 without
/// dropout.
double dropoutFactor(const Problem &p, int64_t b, int64_t h, int64_t i,
                     int64_t j);

/// How many (query, key) pairs of one (batch, head) the mask lets through.
int64_t visiblePairs(const Problem &p);

/// The scale of q.k: the problem's, or 1/sqrt(D).
double effectiveScale(const Problem &p);

/// float64 attention. `bias` is dense in the problem's bias shape (or null).
/// Resizes and fills `out` [B, Hq, Sq, Dv] and `lse` [B, Hq, Sq].
void referenceAttention(const Problem &p, const double *q, const double *k,
                        const double *v, const double *bias,
                        std::vector<double> &out, std::vector<double> &lse);

/// float64 gradients of attention, dense like their operands.
struct Gradients {
  std::vector<double> dq, dk, dv;
  /// In the bias's shape; empty without a bias.
  std::vector<double> dbias;
  /// The sum of |ds| behind each dbias element: the scale of its rounding
  /// error. Along a broadcast key dimension the ds of a row sum to zero
  /// (softmax ignores a constant added to a row), so dbias itself is no
  /// scale there.
  std::vector<double> dbiasScale;
};

/// float64 gradients as attn.attention_grad defines them, from the op's
/// inputs: `o` and `lse` are taken as given (delta = rowsum(dO * o), p =
/// exp(s - lse)), so the reference sees exactly what the kernel sees.
void referenceAttentionGrad(const Problem &p, const double *q, const double *k,
                            const double *v, const double *bias,
                            const double *o, const double *dO,
                            const double *lse, Gradients &grads);

/// The textbook float32 implementation the benchmark compares against:
/// materializes the [Sq, Sk] score matrix of each (batch, head), then a
/// softmax and a matrix product.
void naiveAttention(const Problem &p, const float *q, const float *k,
                    const float *v, const float *bias, float *out);

} // namespace attn_runner

#endif // ATTN_TOOLS_ATTNCPURUNNER_REFERENCE_H
