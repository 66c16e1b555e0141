//===- attn-cpu-runner.cpp - JIT-run attn.attention on the host -*- C++ -*-===//
//
// Builds the attn.attention module of each problem, lowers it with
// attn-to-cpu, JIT-compiles it with MLIR's ExecutionEngine, runs it on random
// inputs and compares with a float64 reference computed from the same
// rounded inputs. Problems come from the command line or from list files
// (one problem per line) so that CI amortizes start-up and compilation over
// many shapes: problems whose modules are equal share a compiled kernel.
//
// --backward runs attn.attention_grad instead: O and lse come from the
// float64 reference forward (rounded as the op takes them), and dq, dk, dv
// (and dbias) are compared with float64 gradients of those same inputs.
//
// --bench times the compiled kernel against a naive float32 implementation
// instead of checking it (the backward: the kernel alone).
//
//===----------------------------------------------------------------------===//

#include "Problem.h"
#include "Reference.h"

#include "AttnDialect/InitAll.h"
#include "AttnDialect/Pipelines/Pipelines.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>

using namespace attn_runner;

namespace {

/// MLIR's ranked memref descriptor (the C interface's argument).
template <int N> struct MemRefDesc {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[N];
  int64_t strides[N];
};

template <int N> MemRefDesc<N> describe(void *data, const int64_t (&sizes)[N]) {
  MemRefDesc<N> desc;
  desc.allocated = desc.aligned = data;
  desc.offset = 0;
  int64_t stride = 1;
  for (int i = N - 1; i >= 0; --i) {
    desc.sizes[i] = sizes[i];
    desc.strides[i] = stride;
    stride *= sizes[i];
  }
  return desc;
}

/// Round to nearest even, as arith.truncf does; NaN stays NaN. (The
/// compiler's __bf16 conversion needs a runtime helper libgcc may lack.)
uint16_t floatToBF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f))
    return 0x7fc0;
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

float bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// A tensor in the kernel's element type, with the float64 value of every
/// (rounded) element for the reference.
struct Buffer {
  DType type = DType::F32;
  std::vector<uint8_t> bytes;
  std::vector<double> exact;

  size_t elemSize() const { return type == DType::F32 ? 4 : 2; }
  void resize(DType t, size_t n) {
    type = t;
    bytes.assign(n * elemSize(), 0);
    exact.assign(n, 0.0);
  }
  size_t size() const { return exact.size(); }
  void set(size_t i, double v) {
    float f = static_cast<float>(v);
    switch (type) {
    case DType::F32:
      std::memcpy(&bytes[4 * i], &f, 4);
      exact[i] = f;
      return;
    case DType::F16: {
      _Float16 h = static_cast<_Float16>(f);
      std::memcpy(&bytes[2 * i], &h, 2);
      exact[i] = static_cast<float>(h);
      return;
    }
    case DType::BF16: {
      uint16_t h = floatToBF16(f);
      std::memcpy(&bytes[2 * i], &h, 2);
      exact[i] = bf16ToFloat(h);
      return;
    }
    }
  }
  double get(size_t i) const {
    switch (type) {
    case DType::F32: {
      float f;
      std::memcpy(&f, &bytes[4 * i], 4);
      return f;
    }
    case DType::F16: {
      _Float16 h;
      std::memcpy(&h, &bytes[2 * i], 2);
      return static_cast<float>(h);
    }
    case DType::BF16: {
      uint16_t h;
      std::memcpy(&h, &bytes[2 * i], 2);
      return bf16ToFloat(h);
    }
    }
    return 0;
  }
  void fillRandom(std::mt19937_64 &rng) {
    std::normal_distribution<double> dist(0.0, 1.0);
    for (size_t i = 0; i < size(); ++i)
      set(i, dist(rng));
  }
  /// NaN everywhere, so that an element the kernel does not write fails.
  void poison() {
    for (size_t i = 0; i < size(); ++i)
      set(i, std::nan(""));
  }
  std::vector<float> asFloat() const {
    return std::vector<float>(exact.begin(), exact.end());
  }
};

/// Calls `visit(i)` for every i where a[i] and ref[i] are finite. Returns
/// NaN when `a` has a NaN, inf when a non-finite entry differs from the
/// reference (-inf lse of empty rows must match exactly), else nullopt.
std::optional<double> forEachFinite(const std::vector<double> &a,
                                    const std::vector<double> &ref,
                                    llvm::function_ref<void(size_t)> visit) {
  for (size_t i = 0; i < ref.size(); ++i) {
    // A NaN reference marks an element the op must leave alone (poisoned
    // with NaN before the call).
    if (std::isnan(ref[i])) {
      if (!std::isnan(a[i]))
        return std::numeric_limits<double>::infinity();
      continue;
    }
    if (std::isnan(a[i]))
      return std::nan("");
    if (!std::isfinite(ref[i]) || !std::isfinite(a[i])) {
      if (a[i] != ref[i])
        return std::numeric_limits<double>::infinity();
      continue;
    }
    visit(i);
  }
  return std::nullopt;
}

/// ||a - ref|| / ||scale|| (absolute when scale is 0); `scale` is `ref`
/// unless given.
double relFrobenius(const std::vector<double> &a,
                    const std::vector<double> &ref,
                    const std::vector<double> *scale = nullptr) {
  double num = 0, den = 0;
  std::optional<double> special = forEachFinite(a, ref, [&](size_t i) {
    double s = scale ? (*scale)[i] : ref[i];
    num += (a[i] - ref[i]) * (a[i] - ref[i]);
    den += s * s;
  });
  if (special)
    return *special;
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

/// max |a - ref| / max |scale|: a wrong row or column is a small share of
/// the Frobenius norm but all of this one.
double relMaxError(const std::vector<double> &a, const std::vector<double> &ref,
                   const std::vector<double> *scale = nullptr) {
  double err = 0, largest = 0;
  std::optional<double> special = forEachFinite(a, ref, [&](size_t i) {
    err = std::max(err, std::abs(a[i] - ref[i]));
    largest = std::max(largest, std::abs(scale ? (*scale)[i] : ref[i]));
  });
  if (special)
    return *special;
  return largest > 0 ? err / largest : err;
}

double tolerance(DType t) {
  // f32: accumulation order and the exp2 approximation only. 16-bit types:
  // dominated by rounding the output to 8 (bf16) or 11 (f16) bits.
  switch (t) {
  case DType::F32:
    return 1e-5;
  case DType::F16:
    return 1e-2;
  case DType::BF16:
    return 2e-2;
  }
  return 0;
}

struct Options {
  std::vector<std::string> problemFiles;
  std::vector<std::string> problemFlags;
  bool bench = false;
  int reps = 5;
  /// Added to every problem's seed: CI runs fixed seeds, a developer fuzzes
  /// with fresh ones and reproduces a failure from the printed seed.
  uint64_t seedOffset = 0;
  bool printModule = false;
  /// Print each problem's dropout keep-mask (rows of 0/1) instead of
  /// running it.
  bool printDropoutMask = false;
};

class Runner {
public:
  Runner() {
    mlir::DialectRegistry registry;
    mlir::attn::registerAllDialects(registry);
    context = std::make_unique<mlir::MLIRContext>(registry);
  }

  /// Checks (or benchmarks) one problem; returns false when it fails.
  bool run(const Problem &p, const Options &opts);

private:
  mlir::ExecutionEngine *compile(const Problem &p, const Options &opts);
  /// Calls the compiled @attn with the memref descriptors `descs`.
  bool invoke(mlir::ExecutionEngine *engine, std::vector<void *> &descs);
  bool runForward(const Problem &p, const Options &opts,
                  mlir::ExecutionEngine *engine);
  bool runBackward(const Problem &p, const Options &opts,
                   mlir::ExecutionEngine *engine);
  bool runServing(const Problem &p, mlir::ExecutionEngine *engine);

  std::unique_ptr<mlir::MLIRContext> context;
  llvm::StringMap<std::unique_ptr<mlir::ExecutionEngine>> engines;
  std::unique_ptr<llvm::TargetMachine> tm;
};

mlir::ExecutionEngine *Runner::compile(const Problem &p, const Options &opts) {
  std::string text = p.moduleText();
  // The split count is a pipeline option, not in the module.
  std::string key = text + "// kv-splits " + std::to_string(p.kvSplits);
  auto it = engines.find(key);
  if (it != engines.end())
    return it->second.get();
  if (opts.printModule)
    llvm::outs() << text;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, context.get());
  if (!module) {
    llvm::errs() << "error: could not parse the module of " << p.describe()
                 << "\n";
    return nullptr;
  }
  mlir::PassManager pm(context.get());
  mlir::attn::AttnToCPUPipelineOptions pipelineOptions;
  pipelineOptions.kvSplits = p.kvSplits;
  mlir::attn::buildAttnToCPUPipeline(pm, pipelineOptions);
  if (mlir::failed(pm.run(*module))) {
    llvm::errs() << "error: attn-to-cpu failed on " << p.describe() << "\n";
    return nullptr;
  }
  if (!tm) {
    auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!builder) {
      llvm::errs() << "error: " << llvm::toString(builder.takeError()) << "\n";
      return nullptr;
    }
    builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    auto machine = builder->createTargetMachine();
    if (!machine) {
      llvm::errs() << "error: " << llvm::toString(machine.takeError()) << "\n";
      return nullptr;
    }
    tm = std::move(*machine);
  }
  auto transformer = mlir::makeOptimizingTransformer(3, 0, tm.get());
  mlir::ExecutionEngineOptions engineOpts;
  engineOpts.transformer = transformer;
  engineOpts.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  // A fresh target machine per engine: the engine takes ownership.
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto engineTm = builder->createTargetMachine();
  if (!engineTm) {
    llvm::errs() << "error: " << llvm::toString(engineTm.takeError()) << "\n";
    return nullptr;
  }
  auto engine =
      mlir::ExecutionEngine::create(*module, engineOpts, std::move(*engineTm));
  if (!engine) {
    llvm::errs() << "error: JIT compilation failed: "
                 << llvm::toString(engine.takeError()) << "\n";
    return nullptr;
  }
  mlir::ExecutionEngine *result = engine->get();
  engines[key] = std::move(*engine);
  return result;
}

/// The random inputs of the forward op, in the problem's types.
struct Inputs {
  Buffer q, k, v, bias;
  int64_t biasSizes[4] = {1, 1, 1, 1};
  const double *biasExact() const {
    return bias.size() ? bias.exact.data() : nullptr;
  }
};

Inputs randomInputs(const Problem &p, std::mt19937_64 &rng) {
  int64_t dv = p.dv ? p.dv : p.d;
  Inputs in;
  in.q.resize(p.dtype, p.batch * p.hq * p.sq * p.d);
  in.k.resize(p.dtype, p.batch * p.hkv * p.sk * p.d);
  in.v.resize(p.dtype, p.batch * p.hkv * p.sk * dv);
  in.q.fillRandom(rng);
  in.k.fillRandom(rng);
  in.v.fillRandom(rng);
  if (p.bias) {
    std::copy(p.bias->begin(), p.bias->end(), in.biasSizes);
    in.bias.resize(p.biasF32 ? DType::F32 : p.dtype,
                   in.biasSizes[0] * in.biasSizes[1] * in.biasSizes[2] *
                       in.biasSizes[3]);
    in.bias.fillRandom(rng);
  }
  return in;
}

bool reportForward(const Problem &p, const Buffer &out,
                   const std::vector<double> &refOut, const Buffer &lse,
                   const std::vector<double> &refLse);

/// The kernel's values of `buf` as float64.
std::vector<double> values(const Buffer &buf) {
  std::vector<double> out(buf.size());
  for (size_t i = 0; i < buf.size(); ++i)
    out[i] = buf.get(i);
  return out;
}

using Clock = std::chrono::steady_clock;

double millis(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// invoke() passes each entry of `descs` by address: the C interface takes
/// memref descriptors by pointer, so an entry is a descriptor's address; a
/// scalar is passed by storing its bytes in the entry itself.
template <typename T> void *scalarEntry(T v) {
  static_assert(sizeof(T) <= sizeof(void *), "a scalar fits an entry");
  void *entry = nullptr;
  std::memcpy(&entry, &v, sizeof(T));
  return entry;
}

/// The dropout operands (f32 p, i64 seed, i32 offset), when the problem has
/// them.
void pushDropoutArgs(const Problem &p, std::vector<void *> &descs) {
  if (!p.dropoutP)
    return;
  descs.push_back(scalarEntry(*p.dropoutP));
  descs.push_back(scalarEntry(p.dropoutSeed));
  descs.push_back(scalarEntry(p.dropoutOffset));
}

bool Runner::invoke(mlir::ExecutionEngine *engine, std::vector<void *> &descs) {
  std::vector<void *> args;
  for (void *&d : descs)
    args.push_back(&d);
  if (llvm::Error err = engine->invokePacked("_mlir_ciface_attn", args)) {
    llvm::errs() << "error: " << llvm::toString(std::move(err)) << "\n";
    return false;
  }
  return true;
}

bool Runner::run(const Problem &p, const Options &opts) {
  mlir::ExecutionEngine *engine = compile(p, opts);
  if (!engine) {
    llvm::outs() << "FAIL " << p.describe() << " (compilation)\n";
    return false;
  }
  if (p.layout != "dense")
    return runServing(p, engine);
  return p.backward ? runBackward(p, opts, engine)
                    : runForward(p, opts, engine);
}

/// The serving forms: every sequence is checked against the dense float64
/// reference of that sequence alone, so the oracle shares no indexing with
/// the kernel. Query rows outside every sequence must stay untouched.
bool Runner::runServing(const Problem &p, mlir::ExecutionEngine *engine) {
  int64_t dv = p.dv ? p.dv : p.d;
  bool varlen = p.layout == "varlen", paged = p.layout == "paged";
  std::mt19937_64 rng(p.seed * 0x9E3779B97F4A7C15ull + 12345);
  int64_t n = varlen ? p.seqlensQ.size() : p.batch;
  // Row offsets of each sequence (varlen: packed, with 3 spare rows at the
  // end that no sequence owns).
  std::vector<int32_t> cuQ(n + 1, 0), cuK(n + 1, 0);
  for (int64_t s = 0; varlen && s < n; ++s) {
    cuQ[s + 1] = cuQ[s] + p.seqlensQ[s];
    cuK[s + 1] = cuK[s] + p.seqlensK[s];
  }
  int64_t pagesPerSeq = paged ? (p.sk + p.pageSize - 1) / p.pageSize : 0;
  int64_t capacity = paged ? pagesPerSeq * p.pageSize : p.sk;
  int64_t rowsQ = varlen ? cuQ[n] + 3 : p.sq, rowsK = varlen ? cuK[n] : p.sk;
  int64_t bq = varlen ? 1 : p.batch;
  // Pages: the pool holds two spare pages and is handed out shuffled.
  int64_t numPages = n * pagesPerSeq + 2;
  std::vector<int32_t> table(n * pagesPerSeq);
  std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), rng);
  std::vector<int32_t> lens(p.seqlensK.begin(), p.seqlensK.end());

  Buffer q, k, v, out, lse;
  q.resize(p.dtype, bq * p.hq * rowsQ * p.d);
  int64_t kb = paged ? numPages : bq, ks = paged ? p.pageSize : rowsK;
  k.resize(p.dtype, kb * p.hkv * ks * p.d);
  v.resize(p.dtype, kb * p.hkv * ks * dv);
  q.fillRandom(rng);
  k.fillRandom(rng);
  v.fillRandom(rng);
  out.resize(p.dtype, bq * p.hq * rowsQ * dv);
  lse.resize(DType::F32, bq * p.hq * rowsQ);
  out.poison();
  lse.poison();

  auto qD = describe(q.bytes.data(), {bq, p.hq, rowsQ, p.d});
  auto kD = describe(k.bytes.data(), {kb, p.hkv, ks, p.d});
  auto vD = describe(v.bytes.data(), {kb, p.hkv, ks, dv});
  auto oD = describe(out.bytes.data(), {bq, p.hq, rowsQ, dv});
  auto lD = describe(lse.bytes.data(), {bq, p.hq, rowsQ});
  auto cqD = describe(cuQ.data(), {n + 1});
  auto ckD = describe(cuK.data(), {n + 1});
  auto lensD = describe(lens.data(), {n});
  auto tD = describe(table.data(), {n, pagesPerSeq});
  std::vector<void *> descs = {&qD, &kD, &vD};
  if (varlen)
    descs.insert(descs.end(), {&cqD, &ckD});
  else
    descs.push_back(&lensD);
  if (paged)
    descs.push_back(&tD);
  descs.push_back(&oD);
  if (p.lse)
    descs.push_back(&lD);
  if (!invoke(engine, descs)) {
    llvm::outs() << "FAIL " << p.describe() << " (invocation)\n";
    return false;
  }

  // Where row `i` of sequence `s` lives in q/out ([.., D] from `last`) and
  // key `j` in k/v.
  auto qAt = [&](int64_t s, int64_t h, int64_t i, int64_t last) {
    return varlen ? (h * rowsQ + cuQ[s] + i) * last
                  : ((s * p.hq + h) * rowsQ + i) * last;
  };
  auto kAt = [&](int64_t s, int64_t h, int64_t j, int64_t last) {
    if (paged)
      return ((table[s * pagesPerSeq + j / p.pageSize] * p.hkv + h) *
                  p.pageSize +
              j % p.pageSize) *
             last;
    return varlen ? (h * rowsK + cuK[s] + j) * last
                  : ((s * p.hkv + h) * rowsK + j) * last;
  };
  std::vector<double> refOut(out.size(), std::nan("")),
      refLse(lse.size(), std::nan(""));
  for (int64_t s = 0; s < n; ++s) {
    Problem one = p;
    one.layout = "dense";
    one.batch = 1;
    one.sq = varlen ? p.seqlensQ[s] : p.sq;
    one.sk = varlen ? p.seqlensK[s]
                    : std::clamp<int64_t>(p.seqlensK[s], 0, capacity);
    std::vector<double> qs, ks2, vs, o1, l1;
    for (int64_t h = 0; h < p.hq; ++h)
      for (int64_t i = 0; i < one.sq; ++i)
        for (int64_t c = 0; c < p.d; ++c)
          qs.push_back(q.exact[qAt(s, h, i, p.d) + c]);
    for (int64_t h = 0; h < p.hkv; ++h)
      for (int64_t j = 0; j < one.sk; ++j) {
        for (int64_t c = 0; c < p.d; ++c)
          ks2.push_back(k.exact[kAt(s, h, j, p.d) + c]);
        for (int64_t c = 0; c < dv; ++c)
          vs.push_back(v.exact[kAt(s, h, j, dv) + c]);
      }
    referenceAttention(one, qs.data(), ks2.data(), vs.data(), nullptr, o1, l1);
    for (int64_t h = 0; h < p.hq; ++h)
      for (int64_t i = 0; i < one.sq; ++i) {
        for (int64_t c = 0; c < dv; ++c)
          refOut[qAt(s, h, i, dv) + c] = o1[(h * one.sq + i) * dv + c];
        refLse[qAt(s, h, i, 1)] = l1[h * one.sq + i];
      }
  }
  // Unowned rows: NaN in both (forEachFinite fails a finite value there).
  return reportForward(p, out, refOut, lse, refLse);
}

bool Runner::runForward(const Problem &p, const Options &opts,
                        mlir::ExecutionEngine *engine) {
  int64_t dv = p.dv ? p.dv : p.d;
  std::mt19937_64 rng(p.seed * 0x9E3779B97F4A7C15ull + 12345);
  Inputs in = randomInputs(p, rng);
  Buffer out, lse;
  out.resize(p.dtype, p.batch * p.hq * p.sq * dv);
  lse.resize(DType::F32, p.batch * p.hq * p.sq);
  out.poison();
  lse.poison();

  auto qD = describe(in.q.bytes.data(), {p.batch, p.hq, p.sq, p.d});
  auto kD = describe(in.k.bytes.data(), {p.batch, p.hkv, p.sk, p.d});
  auto vD = describe(in.v.bytes.data(), {p.batch, p.hkv, p.sk, dv});
  auto oD = describe(out.bytes.data(), {p.batch, p.hq, p.sq, dv});
  auto lD = describe(lse.bytes.data(), {p.batch, p.hq, p.sq});
  auto bD = describe(in.bias.bytes.data(), in.biasSizes);
  std::vector<void *> descs = {&qD, &kD, &vD};
  if (p.bias)
    descs.push_back(&bD);
  pushDropoutArgs(p, descs);
  descs.push_back(&oD);
  if (p.lse)
    descs.push_back(&lD);

  if (opts.bench) {
    std::vector<double> ours, naive;
    std::vector<float> qf = in.q.asFloat(), kf = in.k.asFloat(),
                       vf = in.v.asFloat(), bf = in.bias.asFloat(),
                       of(out.size());
    for (int r = 0; r < opts.reps; ++r) {
      auto t0 = Clock::now();
      if (!invoke(engine, descs))
        return false;
      auto t1 = Clock::now();
      naiveAttention(p, qf.data(), kf.data(), vf.data(),
                     p.bias ? bf.data() : nullptr, of.data());
      auto t2 = Clock::now();
      ours.push_back(millis(t1 - t0));
      naive.push_back(millis(t2 - t1));
    }
    double tOurs = median(ours), tNaive = median(naive);
    // Useful work only: pairs the mask hides are not counted.
    double flops = 2.0 * p.batch * p.hq * visiblePairs(p) * (p.d + dv);
    llvm::outs() << llvm::format(
        "BENCH %s attn_ms=%.3f naive_ms=%.3f speedup=%.2f attn_gflops=%.2f "
        "naive_gflops=%.2f\n",
        p.describe().c_str(), tOurs, tNaive, tNaive / tOurs,
        flops / tOurs * 1e-6, flops / tNaive * 1e-6);
    return true;
  }

  if (!invoke(engine, descs)) {
    llvm::outs() << "FAIL " << p.describe() << " (invocation)\n";
    return false;
  }
  std::vector<double> refOut, refLse;
  referenceAttention(p, in.q.exact.data(), in.k.exact.data(), in.v.exact.data(),
                     in.biasExact(), refOut, refLse);
  return reportForward(p, out, refOut, lse, refLse);
}

/// Compares a forward's output (and lse) with the reference, prints the
/// PASS/FAIL line, and says whether it passed.
bool reportForward(const Problem &p, const Buffer &out,
                   const std::vector<double> &refOut, const Buffer &lse,
                   const std::vector<double> &refLse) {
  double outErr = relFrobenius(values(out), refOut);
  double tol = tolerance(p.dtype);
  bool ok = outErr <= tol;
  std::string lseText;
  if (p.lse) {
    double lseErr = relFrobenius(values(lse), refLse);
    // lse is f32 for every dtype and computed from the same rounded inputs.
    ok &= lseErr <= 1e-5;
    lseText = llvm::formatv(" lse_err={0:e2}", lseErr).str();
  }
  llvm::outs() << (ok ? "PASS " : "FAIL ") << p.describe()
               << llvm::formatv(" out_err={0:e2}", outErr) << lseText
               << " tol=" << tol << "\n";
  return ok;
}

bool Runner::runBackward(const Problem &p, const Options &opts,
                         mlir::ExecutionEngine *engine) {
  int64_t dv = p.dv ? p.dv : p.d;
  std::mt19937_64 rng(p.seed * 0x9E3779B97F4A7C15ull + 12345);
  Inputs in = randomInputs(p, rng);
  // O and lse come from the float64 reference forward, rounded as the op
  // takes them (O to the input type, lse to f32): the check does not
  // depend on the forward kernel.
  std::vector<double> refOut, refLse;
  referenceAttention(p, in.q.exact.data(), in.k.exact.data(), in.v.exact.data(),
                     in.biasExact(), refOut, refLse);
  Buffer o, dO, lse, dq, dk, dvBuf, dbias;
  o.resize(p.dtype, refOut.size());
  lse.resize(DType::F32, refLse.size());
  for (size_t i = 0; i < refOut.size(); ++i)
    o.set(i, refOut[i]);
  for (size_t i = 0; i < refLse.size(); ++i)
    lse.set(i, refLse[i]);
  dO.resize(p.dtype, refOut.size());
  dO.fillRandom(rng);
  dq.resize(p.dtype, in.q.size());
  dk.resize(p.dtype, in.k.size());
  dvBuf.resize(p.dtype, in.v.size());
  dq.poison();
  dk.poison();
  dvBuf.poison();
  if (p.gradBias) {
    dbias.resize(p.gradBiasF32 ? DType::F32 : in.bias.type, in.bias.size());
    dbias.poison();
  }

  auto qD = describe(in.q.bytes.data(), {p.batch, p.hq, p.sq, p.d});
  auto kD = describe(in.k.bytes.data(), {p.batch, p.hkv, p.sk, p.d});
  auto vD = describe(in.v.bytes.data(), {p.batch, p.hkv, p.sk, dv});
  auto oD = describe(o.bytes.data(), {p.batch, p.hq, p.sq, dv});
  auto doD = describe(dO.bytes.data(), {p.batch, p.hq, p.sq, dv});
  auto lD = describe(lse.bytes.data(), {p.batch, p.hq, p.sq});
  auto bD = describe(in.bias.bytes.data(), in.biasSizes);
  auto dqD = describe(dq.bytes.data(), {p.batch, p.hq, p.sq, p.d});
  auto dkD = describe(dk.bytes.data(), {p.batch, p.hkv, p.sk, p.d});
  auto dvD = describe(dvBuf.bytes.data(), {p.batch, p.hkv, p.sk, dv});
  auto dbD = describe(dbias.bytes.data(), in.biasSizes);
  std::vector<void *> descs = {&qD, &kD, &vD, &oD, &doD, &lD};
  if (p.bias)
    descs.push_back(&bD);
  pushDropoutArgs(p, descs);
  descs.insert(descs.end(), {&dqD, &dkD, &dvD});
  if (p.gradBias)
    descs.push_back(&dbD);

  if (opts.bench) {
    std::vector<double> times;
    for (int r = 0; r < opts.reps; ++r) {
      auto t0 = Clock::now();
      if (!invoke(engine, descs))
        return false;
      times.push_back(millis(Clock::now() - t0));
    }
    double t = median(times);
    // Per visible pair: S = QK^T and dQ, dK (D each), dP and dV (Dv each).
    double flops = 2.0 * p.batch * p.hq * visiblePairs(p) * (3 * p.d + 2 * dv);
    llvm::outs() << llvm::format("BENCH %s attn_ms=%.3f attn_gflops=%.2f\n",
                                 p.describe().c_str(), t, flops / t * 1e-6);
    return true;
  }

  if (!invoke(engine, descs)) {
    llvm::outs() << "FAIL " << p.describe() << " (invocation)\n";
    return false;
  }
  Gradients ref;
  referenceAttentionGrad(p, in.q.exact.data(), in.k.exact.data(),
                         in.v.exact.data(), in.biasExact(), o.exact.data(),
                         dO.exact.data(), lse.exact.data(), ref);
  double tol = tolerance(p.dtype);
  bool ok = true;
  std::string text;
  // Each gradient passes both the forward's relative Frobenius error and
  // the relative max error (which a wrong tail row cannot hide from). dbias
  // is measured against the sum of |ds| it adds up (Gradients::dbiasScale).
  auto check = [&](llvm::StringRef name, const Buffer &got,
                   const std::vector<double> &want, double limit,
                   const std::vector<double> *scale = nullptr) {
    std::vector<double> v = values(got);
    double err = relFrobenius(v, want, scale),
           maxErr = relMaxError(v, want, scale);
    ok &= err <= limit && maxErr <= limit;
    text += llvm::formatv(" {0}_err={1:e2}/{2:e2}", name, err, maxErr).str();
  };
  check("dq", dq, ref.dq, tol);
  check("dk", dk, ref.dk, tol);
  check("dv", dvBuf, ref.dv, tol);
  if (p.gradBias)
    check("dbias", dbias, ref.dbias, tolerance(dbias.type), &ref.dbiasScale);
  llvm::outs() << (ok ? "PASS " : "FAIL ") << p.describe() << text
               << " tol=" << tol << "\n";
  return ok;
}

/// Splits a problem-list line into flags; '#' starts a comment.
std::vector<std::string> splitLine(llvm::StringRef line) {
  line = line.split('#').first;
  llvm::SmallVector<llvm::StringRef> parts;
  line.split(parts, ' ', -1, /*KeepEmpty=*/false);
  std::vector<std::string> out;
  for (llvm::StringRef s : parts)
    if (!s.trim().empty())
      out.push_back(s.trim().str());
  return out;
}

/// --philox C0,C1,C2,C3,K0,K1: the reference generator's known answers.
int printPhilox(llvm::StringRef spec) {
  llvm::SmallVector<llvm::StringRef> parts;
  spec.split(parts, ',');
  uint32_t v[6];
  if (parts.size() != 6 || llvm::any_of(llvm::enumerate(parts), [&](auto it) {
        return it.value().getAsInteger(0, v[it.index()]);
      })) {
    llvm::errs() << "error: --philox expects six 32-bit integers "
                    "C0,C1,C2,C3,K0,K1, got '"
                 << spec << "'\n";
    return 2;
  }
  auto words = philox4x32({v[0], v[1], v[2], v[3]}, {v[4], v[5]});
  llvm::outs() << llvm::format("%08x %08x %08x %08x\n", words[0], words[1],
                               words[2], words[3]);
  return 0;
}

void usage() {
  llvm::errs()
      << "usage: attn-cpu-runner [--problems FILE]... [--bench] [--reps N]\n"
         "                       [--seed-offset N] [--print-module] "
         "[PROBLEM FLAGS]\n"
         "problem flags: --batch --hq --hkv --sq --sk --d --dv --dtype "
         "f32|f16|bf16\n"
         "  --mask none|causal|causal_bottom_right|sliding_window "
         "--window L,R\n"
         "  --bias BxHxSqxSk | --bias-f32 BxHxSqxSk  --scale S --softcap C "
         "--lse --seed N\n"
         "  --backward (run attn.attention_grad; O and lse from the float64 "
         "reference)\n"
         "  --grad-bias | --grad-bias-f32 (with --backward: also dbias, in "
         "the bias's type or f32)\n"
         "  --block-m M --block-n N (attach a config instead of "
         "attn-select-config)\n"
         "  --layout dense|varlen|kvcache|paged --seqlens-q L,.. "
         "--seqlens-k L,.. --page-size P\n"
         "  --kv-splits N (kvcache, paged: split the keys, merge by lse)\n"
         "  --dropout P --dropout-seed S --dropout-offset O (dense layout)\n"
         "  --print-dropout-mask (print the reference's keep-mask rows)\n"
         "or: attn-cpu-runner --philox C0,C1,C2,C3,K0,K1 (prints the four "
         "words of the reference Philox4x32-10)\n";
}
} // namespace

int main(int argc, char **argv) {
  Options opts;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a = argv[i];
    if (a == "--problems" && i + 1 < argc)
      opts.problemFiles.push_back(argv[++i]);
    else if (a == "--bench")
      opts.bench = true;
    else if (a == "--reps" && i + 1 < argc)
      opts.reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--seed-offset" && i + 1 < argc)
      opts.seedOffset = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--print-module")
      opts.printModule = true;
    else if (a == "--print-dropout-mask")
      opts.printDropoutMask = true;
    else if (a == "--philox" && i + 1 < argc)
      return printPhilox(argv[++i]);
    else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else
      opts.problemFlags.push_back(a.str());
  }

  // Each problem with its origin, for error messages.
  std::vector<std::pair<std::string, std::vector<std::string>>> lines;
  for (const std::string &file : opts.problemFiles) {
    auto buf = llvm::MemoryBuffer::getFile(file);
    if (!buf) {
      llvm::errs() << "error: cannot read problem list '" << file
                   << "': " << buf.getError().message() << "\n";
      return 2;
    }
    llvm::SmallVector<llvm::StringRef> fileLines;
    (*buf)->getBuffer().split(fileLines, '\n');
    for (auto [n, line] : llvm::enumerate(fileLines)) {
      std::vector<std::string> flags = splitLine(line);
      if (flags.empty())
        continue;
      // Command-line flags apply to every listed problem unless it overrides
      // them.
      std::vector<std::string> all = opts.problemFlags;
      all.insert(all.end(), flags.begin(), flags.end());
      lines.push_back({file + ":" + std::to_string(n + 1), all});
    }
  }
  if (opts.problemFiles.empty())
    lines.push_back({"command line", opts.problemFlags});

  std::vector<std::pair<std::string, Problem>> problems;
  for (auto &[where, flags] : lines) {
    Problem p;
    std::string err = parseProblemFlags(flags, p);
    if (!err.empty()) {
      llvm::errs() << where << ": error: " << err << "\n";
      usage();
      return 2;
    }
    p.seed += opts.seedOffset;
    problems.push_back({where, p});
  }

  if (opts.printDropoutMask) {
    for (auto &[where, p] : problems)
      for (int64_t b = 0; b < p.batch; ++b)
        for (int64_t h = 0; h < p.hq; ++h)
          for (int64_t i = 0; i < p.sq; ++i) {
            for (int64_t j = 0; j < p.sk; ++j)
              llvm::outs() << (dropoutFactor(p, b, h, i, j) != 0 ? '1' : '0');
            llvm::outs() << "\n";
          }
    return 0;
  }
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  Runner runner;
  int passed = 0, failed = 0;
  for (auto &[where, p] : problems)
    (runner.run(p, opts) ? passed : failed)++;
  if (!opts.bench)
    llvm::outs() << passed << " passed, " << failed << " failed\n";
  return failed ? 1 : 0;
}
