//===- AttnAttrs.td - attn attributes and enums -------------*- tablegen -*-===//

#ifndef ATTN_ATTRS_TD
#define ATTN_ATTRS_TD

include "AttnDialect/IR/AttnDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Mask kind
//===----------------------------------------------------------------------===//

def Attn_MaskNone : I32EnumAttrCase<"None", 0, "none">;
def Attn_MaskCausal : I32EnumAttrCase<"Causal", 1, "causal">;
def Attn_MaskCausalBottomRight
    : I32EnumAttrCase<"CausalBottomRight", 2, "causal_bottom_right">;
def Attn_MaskSlidingWindow
    : I32EnumAttrCase<"SlidingWindow", 3, "sliding_window">;

def Attn_MaskKind : I32EnumAttr<"MaskKind", "which keys a query row may see",
    [Attn_MaskNone, Attn_MaskCausal, Attn_MaskCausalBottomRight,
     Attn_MaskSlidingWindow]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_MaskKindAttr : EnumAttr<Attn_Dialect, Attn_MaskKind, "mask"> {
  let summary = "Attention mask kind";
  let description = [{
    With query row `i` in `[0, Sq)` and key column `j` in `[0, Sk)`:
    * `none`: every key is visible.
    * `causal`: `j <= i` (aligned to the top-left corner, as
      `torch.nn.functional.scaled_dot_product_attention(is_causal=True)`).
    * `causal_bottom_right`: `j <= i + Sk - Sq` (FlashAttention >= 2.1).
    * `sliding_window`: `i + Sk - Sq - left <= j <= i + Sk - Sq + right`
      with `window = [left, right]`, bottom-right aligned as FlashAttention's
      `window_size`; a negative bound is unbounded.
  }];
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Software pipeline kind of a tile configuration
//===----------------------------------------------------------------------===//

def Attn_PipelineSimple : I32EnumAttrCase<"Simple", 0, "simple">;
def Attn_PipelineCpAsync : I32EnumAttrCase<"CpAsync", 1, "cp_async">;
def Attn_PipelineTmaWs : I32EnumAttrCase<"TmaWarpSpecialized", 2, "tma_ws">;
def Attn_PipelineLdsDouble : I32EnumAttrCase<"LdsDoubleBuffer", 3, "lds_double">;

def Attn_PipelineKind : I32EnumAttr<"PipelineKind",
    "how K/V tiles are staged through shared memory / LDS",
    [Attn_PipelineSimple, Attn_PipelineCpAsync, Attn_PipelineTmaWs,
     Attn_PipelineLdsDouble]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_PipelineKindAttr
    : EnumAttr<Attn_Dialect, Attn_PipelineKind, "pipeline"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Tile configuration
//===----------------------------------------------------------------------===//

def Attn_ConfigAttr : AttrDef<Attn_Dialect, "Config"> {
  let mnemonic = "config";
  let summary = "Tile configuration chosen for one attention op";
  let description = [{
    The tiling the lowering follows: each workgroup owns `block_m` query rows
    of one (batch, head) and walks the keys `block_n` at a time, with
    `warps` warps (waves on AMD), `stages` shared-memory stages of the
    given `pipeline` kind. `block_m` and `block_n` are powers of two or
    multiples of 16 (at most 4096), `warps` a power of two or a multiple of
    4 (at most 32; 12 warps are three warpgroups owning 192 rows), `stages`
    is in [1, 8]; `name` and `mma` are not empty. Which shapes a lowering
    handles is its own check. `acc_in_registers` says whether the output
    accumulator stays in registers. `mma` names the matrix instruction
    (for example `"mma.m16n8k16"`, `"wgmma.m64nNk16"`, `"mfma.32x32x8"`,
    `"fma"` on the host), and `name` the tile-table entry it came from.

    Example:
    ```mlir
    #attn.config<name = "sm80_f16_d128_m128n64", block_m = 128, block_n = 64,
                 warps = 4, stages = 2, pipeline = cp_async,
                 acc_in_registers = true, mma = "mma.m16n8k16">
    ```
  }];
  let parameters = (ins
    StringRefParameter<"tile-table entry">:$name,
    "int64_t":$block_m,
    "int64_t":$block_n,
    "int64_t":$warps,
    "int64_t":$stages,
    "::mlir::attn::PipelineKind":$pipeline,
    "bool":$acc_in_registers,
    StringRefParameter<"matrix instruction">:$mma
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Attn_TargetAttr : AttrDef<Attn_Dialect, "Target"> {
  let mnemonic = "target";
  let summary = "The chip a module is compiled for";
  let description = [{
    Names a chip of the tile tables (`sm_80`, `sm_86`, `sm_89`, `sm_90a`,
    `gfx90a`, `gfx942`, `gfx950`, `gfx1100`, `gfx1201`, or `host`). Passes
    read its capabilities from the tables rather than comparing strings.

    Example: `#attn.target<chip = "sm_90a">`
  }];
  let parameters = (ins StringRefParameter<"chip name">:$chip);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // ATTN_ATTRS_TD
