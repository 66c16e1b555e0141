//===- AttnDialect.td - attn dialect definition ------------*- tablegen -*-===//
//
// The attn dialect: fused scaled-dot-product attention as one op, lowered by
// tiling passes into GPU (NVVM, ROCDL) and CPU kernels.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_TD
#define ATTN_DIALECT_TD

include "mlir/IR/OpBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Fused attention and the tile configurations that lower it";
  let description = [{
    The `attn` dialect models fused scaled-dot-product attention (forward and
    backward) as single operations. Passes attach a per-architecture tile
    configuration (`#attn.config`), tile the op into a FlashAttention-style
    loop nest with an online softmax, and lower the result to NVVM, ROCDL or
    the host.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

#endif // ATTN_DIALECT_TD
