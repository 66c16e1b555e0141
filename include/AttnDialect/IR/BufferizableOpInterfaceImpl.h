//===- BufferizableOpInterfaceImpl.h - attn bufferization -------*- C++ -*-===//

#ifndef ATTNDIALECT_IR_BUFFERIZABLEOPINTERFACEIMPL_H
#define ATTNDIALECT_IR_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
namespace attn {
/// Lets one-shot-bufferize turn the tensor form of attn ops into their
/// memref form.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);
} // namespace attn
} // namespace mlir

#endif // ATTNDIALECT_IR_BUFFERIZABLEOPINTERFACEIMPL_H
