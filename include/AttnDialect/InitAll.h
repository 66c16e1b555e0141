//===- InitAll.h - register everything attn provides ------------*- C++ -*-===//
//
// Entry points for tools that embed attn. Nothing here relies on static
// initializers: a tool calls these explicitly.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNDIALECT_INITALL_H
#define ATTNDIALECT_INITALL_H

namespace mlir {
class DialectRegistry;
namespace attn {

/// Adds the attn dialect, its interface models, and the upstream dialects
/// (and their interface models) that attn pipelines produce or consume.
void registerAllDialects(DialectRegistry &registry);

/// Registers attn's passes and pipelines (attn-to-cpu, attn-to-nvvm,
/// attn-to-rocdl) with the global pass registry.
void registerAllPasses();

} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_INITALL_H
