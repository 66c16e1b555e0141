//===- Reference.cpp - reference attention for attn-cpu-runner --*- C++ -*-===//

#include "Reference.h"
#include <algorithm>
#include <cmath>
#include <limits>

using namespace attn_runner;

namespace {
enum class Mask { None, Causal, BottomRight, Window };

/// Decoded once per call so the per-element test is not a string compare.
Mask maskOf(const Problem &p) {
  if (p.mask == "causal")
    return Mask::Causal;
  if (p.mask == "causal_bottom_right")
    return Mask::BottomRight;
  if (p.mask == "sliding_window")
    return Mask::Window;
  return Mask::None;
}

bool visible(const Problem &p, Mask m, int64_t i, int64_t j) {
  int64_t diag = i + p.sk - p.sq;
  switch (m) {
  case Mask::None:
    return true;
  case Mask::Causal:
    return j <= i;
  case Mask::BottomRight:
    return j <= diag;
  case Mask::Window:
    return (p.windowLeft < 0 || j >= diag - p.windowLeft) &&
           (p.windowRight < 0 || j <= diag + p.windowRight);
  }
  return true;
}
} // namespace

bool attn_runner::referenceVisible(const Problem &p, int64_t i, int64_t j) {
  return visible(p, maskOf(p), i, j);
}

int64_t attn_runner::visiblePairs(const Problem &p) {
  Mask m = maskOf(p);
  int64_t n = 0;
  for (int64_t i = 0; i < p.sq; ++i)
    for (int64_t j = 0; j < p.sk; ++j)
      n += visible(p, m, i, j);
  return n;
}

std::array<uint32_t, 4> attn_runner::philox4x32(std::array<uint32_t, 4> c,
                                                std::array<uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    if (round) {
      key[0] += 0x9E3779B9u;
      key[1] += 0xBB67AE85u;
    }
    uint64_t p0 = uint64_t(0xD2511F53u) * c[0];
    uint64_t p1 = uint64_t(0xCD9E8D57u) * c[2];
    c = {uint32_t(p1 >> 32) ^ c[1] ^ key[0], uint32_t(p1),
         uint32_t(p0 >> 32) ^ c[3] ^ key[1], uint32_t(p0)};
  }
  return c;
}

double attn_runner::dropoutFactor(const Problem &p, int64_t b, int64_t h,
                                  int64_t i, int64_t j) {
  if (!p.dropoutP)
    return 1.0;
  // i = 16 a + 8 x + r, j = 16 c + 8 y + s: word y + 2 x of counter
  // (8 c + s, 8 a + r, b * Hq + h, offset).
  std::array<uint32_t, 4> counter = {uint32_t((j / 16) * 8 + j % 8),
                                     uint32_t((i / 16) * 8 + i % 8),
                                     uint32_t(b * p.hq + h), p.dropoutOffset};
  std::array<uint32_t, 4> words = philox4x32(
      counter, {uint32_t(p.dropoutSeed), uint32_t(p.dropoutSeed >> 32)});
  uint32_t word = words[(j / 8) % 2 + 2 * ((i / 8) % 2)];
  float keepP = *p.dropoutP;
  auto threshold =
      static_cast<uint32_t>(static_cast<uint64_t>(keepP * 4294967296.0f));
  if (word < threshold)
    return 0.0;
  return 1.0f / (1.0f - keepP);
}

double attn_runner::effectiveScale(const Problem &p) {
  return p.scale ? static_cast<double>(*p.scale)
                 : 1.0 / std::sqrt(static_cast<double>(p.d));
}

namespace {
/// Offset of bias[b, h, i, j] with broadcast dimensions read at 0.
int64_t biasOffset(const std::array<int64_t, 4> &shape, int64_t b, int64_t h,
                   int64_t i, int64_t j) {
  int64_t idx[4] = {b, h, i, j};
  int64_t off = 0;
  for (int d = 0; d < 4; ++d)
    off = off * shape[d] + (shape[d] == 1 ? 0 : idx[d]);
  return off;
}
} // namespace

namespace {
/// The scores s[j] of query row i of (b, h) against every key, as the op
/// defines them: -inf where masked. With softcap, t[j] (if given) receives
/// tanh(scale * q.k / softcap). Returns max_j s[j].
double scoreRow(const Problem &p, Mask mask, const double *qi, const double *kh,
                const double *bias, int64_t b, int64_t h, int64_t i,
                std::vector<double> &s, std::vector<double> *t = nullptr) {
  const double inf = std::numeric_limits<double>::infinity();
  double scale = effectiveScale(p), mx = -inf;
  s.assign(p.sk, -inf);
  if (t)
    t->assign(p.sk, 0.0);
  for (int64_t j = 0; j < p.sk; ++j) {
    if (!visible(p, mask, i, j))
      continue;
    double dot = 0;
    for (int64_t c = 0; c < p.d; ++c)
      dot += qi[c] * kh[j * p.d + c];
    dot *= scale;
    if (p.softcap) {
      double tj = std::tanh(dot / *p.softcap);
      if (t)
        (*t)[j] = tj;
      dot = *p.softcap * tj;
    }
    if (bias)
      dot += bias[biasOffset(*p.bias, b, h, i, j)];
    s[j] = dot;
    mx = std::max(mx, dot);
  }
  return mx;
}
} // namespace

void attn_runner::referenceAttention(const Problem &p, const double *q,
                                     const double *k, const double *v,
                                     const double *bias,
                                     std::vector<double> &out,
                                     std::vector<double> &lse) {
  int64_t dv = p.dv ? p.dv : p.d, group = p.hq / p.hkv;
  const double inf = std::numeric_limits<double>::infinity();
  out.assign(p.batch * p.hq * p.sq * dv, 0.0);
  lse.assign(p.batch * p.hq * p.sq, -inf);
  Mask mask = maskOf(p);
  std::vector<double> s;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.hq; ++h) {
      int64_t hk = h / group;
      const double *kh = k + (b * p.hkv + hk) * p.sk * p.d;
      const double *vh = v + (b * p.hkv + hk) * p.sk * dv;
      for (int64_t i = 0; i < p.sq; ++i) {
        const double *qi = q + ((b * p.hq + h) * p.sq + i) * p.d;
        double mx = scoreRow(p, mask, qi, kh, bias, b, h, i, s);
        if (mx == -inf)
          continue;
        double sum = 0;
        double *oi = out.data() + ((b * p.hq + h) * p.sq + i) * dv;
        for (int64_t j = 0; j < p.sk; ++j) {
          if (s[j] == -inf)
            continue;
          double e = std::exp(s[j] - mx);
          sum += e;
          double kept = e * dropoutFactor(p, b, h, i, j);
          for (int64_t c = 0; c < dv; ++c)
            oi[c] += kept * vh[j * dv + c];
        }
        for (int64_t c = 0; c < dv; ++c)
          oi[c] /= sum;
        lse[(b * p.hq + h) * p.sq + i] = mx + std::log(sum);
      }
    }
}

void attn_runner::referenceAttentionGrad(const Problem &p, const double *q,
                                         const double *k, const double *v,
                                         const double *bias, const double *o,
                                         const double *dO, const double *lse,
                                         Gradients &g) {
  int64_t dv = p.dv ? p.dv : p.d, group = p.hq / p.hkv;
  const double inf = std::numeric_limits<double>::infinity();
  double scale = effectiveScale(p);
  g.dq.assign(p.batch * p.hq * p.sq * p.d, 0.0);
  g.dk.assign(p.batch * p.hkv * p.sk * p.d, 0.0);
  g.dv.assign(p.batch * p.hkv * p.sk * dv, 0.0);
  if (p.bias) {
    g.dbias.assign((*p.bias)[0] * (*p.bias)[1] * (*p.bias)[2] * (*p.bias)[3],
                   0.0);
    g.dbiasScale.assign(g.dbias.size(), 0.0);
  }
  Mask mask = maskOf(p);
  std::vector<double> s, t;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.hq; ++h) {
      int64_t hk = h / group;
      const double *kh = k + (b * p.hkv + hk) * p.sk * p.d;
      const double *vh = v + (b * p.hkv + hk) * p.sk * dv;
      double *dkh = g.dk.data() + (b * p.hkv + hk) * p.sk * p.d;
      double *dvh = g.dv.data() + (b * p.hkv + hk) * p.sk * dv;
      for (int64_t i = 0; i < p.sq; ++i) {
        int64_t row = (b * p.hq + h) * p.sq + i;
        // Empty rows (lse = -inf) contribute nothing.
        if (lse[row] == -inf)
          continue;
        const double *qi = q + row * p.d, *oi = o + row * dv,
                     *doi = dO + row * dv;
        double *dqi = g.dq.data() + row * p.d;
        scoreRow(p, mask, qi, kh, bias, b, h, i, s, &t);
        double delta = 0;
        for (int64_t c = 0; c < dv; ++c)
          delta += doi[c] * oi[c];
        for (int64_t j = 0; j < p.sk; ++j) {
          if (s[j] == -inf)
            continue;
          double pj = std::exp(s[j] - lse[row]), dp = 0;
          for (int64_t c = 0; c < dv; ++c)
            dp += doi[c] * vh[j * dv + c];
          // O = (P * Z) V: dV takes P * Z, and dP = Z * (dO . v).
          double z = dropoutFactor(p, b, h, i, j);
          dp *= z;
          double ds = pj * (dp - delta);
          if (bias) {
            int64_t at = biasOffset(*p.bias, b, h, i, j);
            g.dbias[at] += ds;
            g.dbiasScale[at] += std::abs(ds);
          }
          double dsr = ds * scale * (p.softcap ? 1 - t[j] * t[j] : 1.0);
          for (int64_t c = 0; c < dv; ++c)
            dvh[j * dv + c] += pj * z * doi[c];
          for (int64_t c = 0; c < p.d; ++c) {
            dkh[j * p.d + c] += dsr * qi[c];
            dqi[c] += dsr * kh[j * p.d + c];
          }
        }
      }
    }
}

void attn_runner::naiveAttention(const Problem &p, const float *q,
                                 const float *k, const float *v,
                                 const float *bias, float *out) {
  int64_t dv = p.dv ? p.dv : p.d, group = p.hq / p.hkv;
  float scale = static_cast<float>(effectiveScale(p));
  const float inf = std::numeric_limits<float>::infinity();
  Mask mask = maskOf(p);
  std::vector<float> s(p.sq * p.sk);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.hq; ++h) {
      int64_t hk = h / group;
      const float *qh = q + (b * p.hq + h) * p.sq * p.d;
      const float *kh = k + (b * p.hkv + hk) * p.sk * p.d;
      const float *vh = v + (b * p.hkv + hk) * p.sk * dv;
      float *oh = out + (b * p.hq + h) * p.sq * dv;
      // S = scale * Q K^T, then bias, mask, row softmax, O = P V.
      for (int64_t i = 0; i < p.sq; ++i)
        for (int64_t j = 0; j < p.sk; ++j) {
          float dot = 0;
          for (int64_t c = 0; c < p.d; ++c)
            dot += qh[i * p.d + c] * kh[j * p.d + c];
          dot *= scale;
          if (p.softcap)
            dot = *p.softcap * std::tanh(dot / *p.softcap);
          if (bias)
            dot += bias[biasOffset(*p.bias, b, h, i, j)];
          s[i * p.sk + j] = visible(p, mask, i, j) ? dot : -inf;
        }
      for (int64_t i = 0; i < p.sq; ++i) {
        float *row = &s[i * p.sk];
        float mx = *std::max_element(row, row + p.sk);
        float sum = 0;
        for (int64_t j = 0; j < p.sk; ++j) {
          row[j] = mx == -inf ? 0.0f : std::exp(row[j] - mx);
          sum += row[j];
        }
        for (int64_t j = 0; j < p.sk; ++j)
          row[j] = sum > 0 ? row[j] / sum : 0.0f;
      }
      // Loop order i, j, c keeps the innermost loop contiguous (and
      // auto-vectorized), so the baseline is naive but not a strawman.
      for (int64_t i = 0; i < p.sq; ++i) {
        float *oi = oh + i * dv;
        std::fill(oi, oi + dv, 0.0f);
        for (int64_t j = 0; j < p.sk; ++j) {
          float pij = s[i * p.sk + j];
          for (int64_t c = 0; c < dv; ++c)
            oi[c] += pij * vh[j * dv + c];
        }
      }
    }
}
