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
// A producer warpgroup copies K/V tiles with cp.async into a ring of stages
// guarded by mbarriers; the other warpgroups only compute.
def Attn_PipelineCpAsyncWs
    : I32EnumAttrCase<"CpAsyncWarpSpecialized", 4, "cp_async_ws">;

def Attn_PipelineKind : I32EnumAttr<"PipelineKind",
    "how K/V tiles are staged through shared memory / LDS",
    [Attn_PipelineSimple, Attn_PipelineCpAsync, Attn_PipelineTmaWs,
     Attn_PipelineLdsDouble, Attn_PipelineCpAsyncWs]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_PipelineKindAttr
    : EnumAttr<Attn_Dialect, Attn_PipelineKind, "pipeline"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Tile-table enums
//===----------------------------------------------------------------------===//

// The spellings are TileTables.json's; the parser symbolizes them and
// rejects anything else (docs/TileTables.md).

def Attn_MmaM16N8K16 : I32EnumAttrCase<"MmaM16N8K16", 0, "mma.m16n8k16">;
def Attn_WgmmaM64NNK16 : I32EnumAttrCase<"WgmmaM64NNK16", 1, "wgmma.m64nNk16">;
def Attn_Mfma32x32x8 : I32EnumAttrCase<"Mfma32x32x8", 2, "mfma.32x32x8">;
def Attn_Mfma16x16x16 : I32EnumAttrCase<"Mfma16x16x16", 3, "mfma.16x16x16">;
def Attn_Mfma32x32x16 : I32EnumAttrCase<"Mfma32x32x16", 4, "mfma.32x32x16">;
def Attn_Mfma16x16x32 : I32EnumAttrCase<"Mfma16x16x32", 5, "mfma.16x16x32">;
def Attn_Wmma16x16x16 : I32EnumAttrCase<"Wmma16x16x16", 6, "wmma.16x16x16">;
def Attn_Fma : I32EnumAttrCase<"Fma", 7, "fma">;

def Attn_MatrixInstrKind : I32EnumAttr<"MatrixInstrKind",
    "matrix instruction a kernel is built on",
    [Attn_MmaM16N8K16, Attn_WgmmaM64NNK16, Attn_Mfma32x32x8,
     Attn_Mfma16x16x16, Attn_Mfma32x32x16, Attn_Mfma16x16x32,
     Attn_Wmma16x16x16, Attn_Fma]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
  let description = [{
    The instructions the tile tables describe (`instruction_sets` of
    TileTables.json, where each one's shape and tiling rules live):
    * `mma.m16n8k16`: PTX `mma.sync` (sm_80+).
    * `wgmma.m64nNk16`: PTX `wgmma.mma_async` (sm_90a).
    * `mfma.32x32x8`, `mfma.16x16x16`: CDNA MFMA (gfx90a+);
      `mfma.32x32x16`, `mfma.16x16x32`: the double-K MFMA of gfx950.
    * `wmma.16x16x16`: RDNA3/RDNA4 WMMA.
    * `fma`: scalar/vector FMA on the host.
  }];
}

def Attn_ElementF16 : I32EnumAttrCase<"F16", 0, "f16">;
def Attn_ElementBF16 : I32EnumAttrCase<"BF16", 1, "bf16">;
def Attn_ElementF32 : I32EnumAttrCase<"F32", 2, "f32">;

def Attn_ElementType : I32EnumAttr<"ElementType",
    "element type of q, k, v and o in the tile tables",
    [Attn_ElementF16, Attn_ElementBF16, Attn_ElementF32]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_SeqDense : I32EnumAttrCase<"Dense", 0, "dense">;
def Attn_SeqVarlen : I32EnumAttrCase<"Varlen", 1, "varlen">;
def Attn_SeqKVCache : I32EnumAttrCase<"KVCache", 2, "kvcache">;
def Attn_SeqPaged : I32EnumAttrCase<"Paged", 3, "paged">;

def Attn_SeqLayout : I32EnumAttr<"SeqLayout",
    "how attn.attention's sequences are laid out: dense [B, H, S, D], packed "
    "with cu_seqlens (varlen), a KV cache with per-batch key counts "
    "(kvcache), or a paged KV cache (paged)",
    [Attn_SeqDense, Attn_SeqVarlen, Attn_SeqKVCache, Attn_SeqPaged]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_VendorNvidia : I32EnumAttrCase<"Nvidia", 0, "nvidia">;
def Attn_VendorAmd : I32EnumAttrCase<"Amd", 1, "amd">;
def Attn_VendorHost : I32EnumAttrCase<"Host", 2, "host">;

def Attn_Vendor : I32EnumAttr<"Vendor",
    "whose chip a tile-table entry describes (which lowering serves it)",
    [Attn_VendorNvidia, Attn_VendorAmd, Attn_VendorHost]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_DirectionForward : I32EnumAttrCase<"Forward", 0, "forward">;
def Attn_DirectionBackward : I32EnumAttrCase<"Backward", 1, "backward">;

def Attn_Direction : I32EnumAttr<"Direction",
    "forward or backward attention kernel",
    [Attn_DirectionForward, Attn_DirectionBackward]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
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
    is in [1, 8]; `name` is not empty. Which shapes a lowering handles is
    its own check. `acc_in_registers` says whether the output accumulator
    stays in registers. `mma` is the matrix instruction (one of
    `mma.m16n8k16`, `wgmma.m64nNk16`, `mfma.32x32x8`, `mfma.16x16x16`,
    `mfma.32x32x16`, `mfma.16x16x32`, `wmma.16x16x16`, or `fma` on the
    host; the quoted form `"mma.m16n8k16"` is accepted too), and `name` the
    tile-table entry it came from. `align_bytes` (optional, default 16; a
    power of two in [1, 16]) is the byte alignment the kernel assumes of the
    base pointers and of the strides of q, k, v and o: the GPU lowerings load
    and store global memory in chunks of at most that many bytes (16: one
    `cp.async` of 16 bytes per chunk; the element size: element-wide loads, for
    views that start anywhere), and the bundle's `align_bytes` condition says
    the same. A lowering rejects a value below the element size.
    `max_head_dim` (optional, default 0) is for an op whose head dims are
    dynamic: the kernel then serves any D and Dv up to it (its tiles are
    padded to it, D and Dv are kernel arguments); 0 for static head dims.
    `deterministic` (optional, default false), on an `attn.attention_grad`,
    asks for a plan without atomics: dQ by its own pass over query blocks
    instead of atomic adds, so the gradients are bit-reproducible.
    `head_split` (optional, default 1; at most 4), on an
    `attn.attention_grad`, computes the columns of dK, dV and dQ in that many
    slices, one main kernel each (each recomputes the scores over the whole
    head dim): for head dims whose dK and dV accumulators would not fit the
    registers of one kernel.
    `persistent` (optional, default false), on an `attn.attention` of pipeline
    `tma_ws` over dense sequences: the grid may be smaller than the tiles
    (the runtime launches one workgroup an SM); each workgroup walks
    (query block, head, batch) tiles in turn, longest first under a causal
    mask, and its producer loads the next tile's Q and K/V while the
    computing warpgroups finish and store the current one.
    `overlap_softmax` (optional, default false), on an `attn.attention` of
    pipeline `tma_ws`: each computing warpgroup issues S = Q K^T of key
    block j and O += P V of block j - 1 together and runs the softmax of j
    while the second is in flight (FlashAttention-3's intra-warpgroup
    overlap); K and V get mbarriers of their own, so that K of a later block
    is loaded while V of block j - 1 is still read.

    Example:
    ```mlir
    #attn.config<name = "sm80_f16_d128_m128n64", block_m = 128, block_n = 64,
                 warps = 4, stages = 2, pipeline = cp_async,
                 acc_in_registers = true, mma = mma.m16n8k16>
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
    "::mlir::attn::MatrixInstrKind":$mma,
    DefaultValuedParameter<"int64_t", "16",
                           "global alignment (bytes)">:$align_bytes,
    DefaultValuedParameter<"int64_t", "0",
                           "largest dynamic head dim">:$max_head_dim,
    DefaultValuedParameter<"bool", "false",
                           "backward without atomics">:$deterministic,
    DefaultValuedParameter<"int64_t", "1",
                           "backward column slices">:$head_split,
    DefaultValuedParameter<"bool", "false",
                           "forward over a persistent grid">:$persistent,
    DefaultValuedParameter<"bool", "false",
                           "softmax under the previous block's P V">:$overlap_softmax
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // ATTN_ATTRS_TD
