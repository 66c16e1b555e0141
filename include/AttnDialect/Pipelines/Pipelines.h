//===- Pipelines.h - attn pass pipelines ------------------------*- C++ -*-===//

#ifndef ATTNDIALECT_PIPELINES_PIPELINES_H
#define ATTNDIALECT_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"
#include <string>

namespace mlir {
class OpPassManager;
namespace attn {

/// Options of attn-to-nvvm.
struct AttnToNVVMPipelineOptions
    : public PassPipelineOptions<AttnToNVVMPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("sm_80, sm_86, sm_89 or sm_90a"),
      llvm::cl::init("sm_90a")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("isa (PTX text), bin (cubin), or llvm (stop before "
                     "serialization)"),
      llvm::cl::init("isa")};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit", llvm::cl::desc("CUDA toolkit root (ptxas)"),
      llvm::cl::init("/usr/local/cuda")};
  PassOptions::Option<bool> selectConfig{
      *this, "select-config",
      llvm::cl::desc("Run attn-select-config first (off: every op already "
                     "carries a #attn.config)"),
      llvm::cl::init(true)};
  PassOptions::ListOption<int64_t> sizeHints{
      *this, "size-hints",
      llvm::cl::desc("Lengths dynamic Sq and Sk are expected at: ops get a "
                     "copy per size class (attn-specialize-sizes, with the "
                     "tuning file's classes where it has entries)")};
  PassOptions::Option<std::string> tuning{
      *this, "tuning",
      llvm::cl::desc("Tuning file (docs/Tuning.md) for attn-specialize-sizes "
                     "and attn-select-config"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> smCount{
      *this, "sm-count",
      llvm::cl::desc("attn-specialize-sizes' sm-count: multiprocessors of "
                     "the target GPU (0: unknown)"),
      llvm::cl::init(0)};
};

/// Options of attn-to-rocdl.
struct AttnToROCDLPipelineOptions
    : public PassPipelineOptions<AttnToROCDLPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("gfx90a, gfx942, gfx950, gfx1100 or gfx1201"),
      llvm::cl::init("gfx942")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("isa (AMDGPU assembly), bin (hsaco), or llvm"),
      llvm::cl::init("isa")};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("ROCm toolkit root holding amdgcn/bitcode and "
                     "llvm/bin/ld.lld"),
      llvm::cl::init("")};
  PassOptions::ListOption<int64_t> sizeHints{
      *this, "size-hints",
      llvm::cl::desc("Lengths dynamic Sq and Sk are expected at: ops get a "
                     "copy per size class (attn-specialize-sizes, with the "
                     "tuning file's classes where it has entries)")};
  PassOptions::Option<std::string> tuning{
      *this, "tuning",
      llvm::cl::desc("Tuning file (docs/Tuning.md) for attn-specialize-sizes "
                     "and attn-select-config"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> smCount{
      *this, "sm-count",
      llvm::cl::desc("attn-specialize-sizes' sm-count: multiprocessors of "
                     "the target GPU (0: unknown)"),
      llvm::cl::init(0)};
};

/// Options of attn-to-cpu.
struct AttnToCPUPipelineOptions
    : public PassPipelineOptions<AttnToCPUPipelineOptions> {
  PassOptions::Option<int64_t> kvSplits{
      *this, "kv-splits",
      llvm::cl::desc("Split the keys of KV-cache ops in this many parts "
                     "(attn-tile's kv-splits)"),
      llvm::cl::init(1)};
};

void buildAttnToNVVMPipeline(OpPassManager &pm,
                             const AttnToNVVMPipelineOptions &options);
void buildAttnToROCDLPipeline(OpPassManager &pm,
                              const AttnToROCDLPipelineOptions &options);
void buildAttnToCPUPipeline(OpPassManager &pm,
                            const AttnToCPUPipelineOptions &options);

/// Registers attn-to-nvvm, attn-to-rocdl and attn-to-cpu.
void registerAttnPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_PIPELINES_PIPELINES_H
