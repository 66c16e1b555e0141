//===- Compile.cpp - compile modules into bundle kernels --------*- C++ -*-===//
//
// One MLIRContext per module, its own threading off: the parallelism is
// across modules, on LLVM's thread pool, which also runs ptxas (or the
// AMDGPU backend) for several kernels at once. Diagnostics are collected per
// module and printed in job order, so the output does not depend on the
// schedule.
//
//===----------------------------------------------------------------------===//

#include "Compile.h"
#include "AttnDialect/Pipelines/Pipelines.h"
#include "KernelCache.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace mlir::attn;

LogicalResult attn::buildBundlePipeline(OpPassManager &pm,
                                        const CompileOptions &options,
                                        llvm::raw_ostream &errors) {
  switch (options.chip->vendor) {
  case Vendor::Nvidia: {
    AttnToNVVMPipelineOptions nvvm;
    nvvm.chip = options.chip->name;
    nvvm.format = "bin";
    nvvm.toolkit = options.toolkit;
    nvvm.selectConfig = options.selectConfig;
    nvvm.tuning = options.tuningFile;
    buildAttnToNVVMPipeline(pm, nvvm);
    return success();
  }
  case Vendor::Amd: {
    // attn-select-config leaves ops that carry a config alone.
    AttnToROCDLPipelineOptions rocdl;
    rocdl.chip = options.chip->name;
    rocdl.format = "bin";
    rocdl.toolkit = options.toolkit;
    rocdl.tuning = options.tuningFile;
    buildAttnToROCDLPipeline(pm, rocdl);
    return success();
  }
  case Vendor::Host:
    break;
  }
  errors << "chip '" << options.chip->name
         << "' is the host; bundles hold GPU kernels (NVIDIA chips: "
         << getKnownChipNames(Vendor::Nvidia)
         << "; AMD chips: " << getKnownChipNames(Vendor::Amd) << ")";
  return failure();
}

namespace {
/// What compiling one job left.
struct JobResult {
  FailureOr<std::vector<BundleKernel>> kernels = failure();
  bool cached = false;
  std::string diagnostics;
};

/// Builds, compiles and collects the kernels of one job.
JobResult runJob(const DialectRegistry &registry, const CompileJob &job,
                 unsigned task, const CompileOptions &options,
                 KernelCache *cache) {
  JobResult result;
  MLIRContext ctx(registry, MLIRContext::Threading::DISABLED);
  // The location names the variant; its thousands of lines of IR would bury
  // the message (attn-opt on --print-family's output shows them).
  ctx.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  llvm::raw_string_ostream diagnostics(result.diagnostics);
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx, diagnostics);
  OwningOpRef<ModuleOp> module = job.build(ctx);
  if (!module)
    return result;

  std::string key;
  if (cache) {
    // Locations do not reach the kernels; leaving them out lets a family
    // whose variant names changed hit the cache.
    std::string ir;
    llvm::raw_string_ostream os(ir);
    module->print(os, OpPrintingFlags().enableDebugInfo(false));
    key = cache->getKey(ir);
    if (std::optional<std::vector<BundleKernel>> hit =
            cache->lookup(task, key)) {
      result.kernels = std::move(*hit);
      result.cached = true;
      return result;
    }
  }

  {
    PassManager pm(&ctx);
    if (failed(applyPassManagerCLOptions(pm)))
      return result;
    auto timing = std::make_unique<DefaultTimingManager>();
    applyDefaultTimingManagerCLOptions(*timing);
    if (timing->isEnabled()) {
      timing->setOutput(createOutputStrategy(
          DefaultTimingManager::OutputFormat::Text, diagnostics));
      pm.enableTiming(std::move(timing));
    }
    if (failed(buildBundlePipeline(pm, options, diagnostics)) ||
        failed(pm.run(*module)))
      return result;
  }
  result.kernels = getBundleKernels(*module);
  if (cache && succeeded(result.kernels))
    if (llvm::Error e = cache->store(task, key, *result.kernels))
      llvm::WithColor::warning(diagnostics, "attn-bundle")
          << "cannot cache " << job.name << ": " << llvm::toString(std::move(e))
          << "\n";
  return result;
}
} // namespace

FailureOr<std::vector<BundleKernel>>
attn::compileJobs(const DialectRegistry &registry, ArrayRef<CompileJob> jobs,
                  const CompileOptions &options, CompileStats &stats) {
  std::unique_ptr<KernelCache> cache;
  if (!options.cacheDir.empty()) {
    // The key covers the pipeline with every option, as text.
    OpPassManager pm("builtin.module");
    std::string pipeline;
    llvm::raw_string_ostream os(pipeline);
    if (succeeded(buildBundlePipeline(pm, options, os)))
      pm.printAsTextualPipeline(os);
    llvm::Expected<std::unique_ptr<KernelCache>> opened =
        KernelCache::open(options.cacheDir, jobs.size(), options, pipeline);
    if (opened)
      cache = std::move(*opened);
    else
      llvm::WithColor::warning(llvm::errs(), "attn-bundle")
          << "compiling without a cache: " << llvm::toString(opened.takeError())
          << "\n";
  }

  std::vector<JobResult> results(jobs.size());
  {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(options.jobs));
    for (unsigned i = 0, e = jobs.size(); i < e; ++i)
      pool.async([&, i] {
        results[i] = runJob(registry, jobs[i], i, options, cache.get());
      });
    pool.wait();
  }
  if (cache)
    cache->prune();

  bool ok = true;
  std::vector<BundleKernel> kernels;
  llvm::StringSet<> files;
  for (JobResult &r : results) {
    llvm::errs() << r.diagnostics;
    if (failed(r.kernels)) {
      ok = false;
      continue;
    }
    ++(r.cached ? stats.cached : stats.compiled);
    for (BundleKernel &k : *r.kernels)
      if (files.insert(k.file).second)
        kernels.push_back(std::move(k));
  }
  if (!ok)
    return failure();
  return kernels;
}
