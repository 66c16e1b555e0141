//===- AttnOps.td - attn operations -------------------------*- tablegen -*-===//

#ifndef ATTN_OPS_TD
#define ATTN_OPS_TD

include "AttnDialect/IR/AttnDialect.td"
include "AttnDialect/IR/AttnAttrs.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpAsmInterface.td"

// An operand that is a tensor or a memref. The description names the operand
// and its layout so that ODS's own type error (which can only say
// "operand #N") still tells the user which operand is wrong; the verifier
// checks ranks and sizes.
class Attn_Shaped<string name, string layout>
    : Type<CPred<"::llvm::isa<::mlir::TensorType, ::mlir::BaseMemRefType>($_self)">,
           "tensor or memref of shape " # layout # " (" # name # ")",
           "::mlir::ShapedType">;

// Attributes shared by the forward and backward ops.
defvar AttnSemanticAttrs = (ins
  OptionalAttr<F32Attr>:$scale,
  DefaultValuedAttr<Attn_MaskKindAttr, "::mlir::attn::MaskKind::None">:$mask,
  OptionalAttr<DenseI64ArrayAttr>:$window,
  OptionalAttr<F32Attr>:$softcap,
  OptionalAttr<Attn_ConfigAttr>:$config
);

def Attn_AttentionOp : Attn_Op<"attention", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DestinationStyleOpInterface]> {
  let summary = "Fused scaled-dot-product attention (forward)";
  let description = [{
    Computes, for every batch `b`, query head `h` and query row `i`:

    ```
    s[j]   = scale * dot(q[b, h, i, :], k[b, h / G, j, :])   G = Hq / Hkv
    s[j]   = softcap * tanh(s[j] / softcap)                  if softcap is set
    s[j]  += bias[b, h, i, j]                                 if bias is given
    s[j]   = -inf                                             if masked
    p      = exp(s - max(s)) / sum(exp(s - max(s)))
    p[j]   = keep(b, h, i, j) ? p[j] / (1 - dropout_p) : 0    with dropout
    out[b, h, i, :] = sum_j p[j] * v[b, h / G, j, :]
    lse[b, h, i]    = max(s) + log(sum(exp(s - max(s))))      if lse is given
    ```

    `lse` is that of the scores before dropout.

    Shapes: `query` is `[B, Hq, Sq, D]`, `key` `[B, Hkv, Sk, D]`, `value`
    `[B, Hkv, Sk, Dv]`, `output` `[B, Hq, Sq, Dv]`, `lse` `[B, Hq, Sq]` (f32).
    `Hq` must be a multiple of `Hkv` (grouped-query and multi-query
    attention). `bias` is additive and broadcastable to `[B, Hq, Sq, Sk]`
    (each of its four dimensions equals the full size or is 1). Element types
    are f16, bf16 or f32, the same for query, key, value and output;
    accumulation is in f32. `B`, `Sq` and `Sk` may be dynamic (and zero);
    `Hq` and `Hkv` are static and positive in every operand, and so are `D`
    and `Dv` where static (dynamic ones lower on the GPU only, with a
    `config` whose `max_head_dim` bounds them). A
    static size is at most 2^31 - 1 (the kernel ABI passes extents as i32).
    Operands are all tensors or all memrefs.

    A row whose keys are all masked gets zeros and `lse = -inf`.

    `scale` defaults to `1/sqrt(D)`. `mask` (see `#attn.mask`) selects
    causal or sliding-window masking; `window = array<i64: left, right>` is
    required by `sliding_window` and rejected otherwise; its bounds fit in
    i32 and at least one is non-negative. `softcap`, when set, must be
    finite and positive, and so must an explicit `scale`. See
    docs/AttnDialect.md for the full semantics. `config` is attached by `attn-select-config` and read
    by the tiling passes.

    Dropout: with `dropout(%p, %seed, %offset : f32, i64, i32)` each
    probability is kept with probability `1 - p` and scaled by `1 / (1 - p)`.
    `keep` is counter-based (Philox4x32-10 keyed by `seed`; the counter holds
    the position and `offset`), so the backward regenerates the same mask
    from the same three values; docs/AttnDialect.md defines it bit for bit.
    `p` is a run-time value in [0, 1) (values outside are clamped into it).

    Serving forms (docs/AttnDialect.md gives the details); none takes a
    bias or dropout, and every mask applies per sequence, with that
    sequence's lengths:

    - packed variable-length batch: `cu_seqlens_q` and `cu_seqlens_k` (i32,
      `[N + 1]` each, non-decreasing offsets) split the rows of a `B = 1`
      problem into `N` sequences; sequence `s` owns query rows
      `[cu_seqlens_q[s], cu_seqlens_q[s + 1])` and key rows
      `[cu_seqlens_k[s], cu_seqlens_k[s + 1])`. Query rows outside every
      sequence are not written.
    - KV cache: `seqlens_k` (i32 `[B]`): batch `b` attends to its first
      `seqlens_k[b]` keys (clamped to `[0, Sk]`).
    - paged KV cache: `block_table` (i32 `[B, P]`, with `seqlens_k`): `key`
      and `value` are pages `[num_pages, Hkv, page_size, D]`, and key `j` of
      batch `b` is row `j % page_size` of page `block_table[b, j /
      page_size]`; `Sk = P * page_size`.

    The op is in destination-passing style: on tensors it returns the
    updated `output` (and `lse`); on memrefs it writes them in place and has
    no results. `one-shot-bufferize` turns the first form into the second.

    Example:
    ```mlir
    %o, %lse = attn.attention
        q(%q : tensor<2x16x2048x128xbf16>) k(%k : tensor<2x4x2048x128xbf16>)
        v(%v : tensor<2x4x2048x128xbf16>)
        outs(%o0 : tensor<2x16x2048x128xbf16>) lse(%l0 : tensor<2x16x2048xf32>)
        {mask = #attn.mask<causal>}
        -> tensor<2x16x2048x128xbf16>, tensor<2x16x2048xf32>
    ```
  }];

  let arguments = !con((ins
    Attn_Shaped<"query", "[B, Hq, Sq, D]">:$query,
    Attn_Shaped<"key", "[B, Hkv, Sk, D]">:$key,
    Attn_Shaped<"value", "[B, Hkv, Sk, Dv]">:$value,
    Optional<Attn_Shaped<"bias", "broadcastable to [B, Hq, Sq, Sk]">>:$bias,
    Optional<Attn_Shaped<"cu_seqlens_q", "[N + 1] i32">>:$cu_seqlens_q,
    Optional<Attn_Shaped<"cu_seqlens_k", "[N + 1] i32">>:$cu_seqlens_k,
    Optional<Attn_Shaped<"seqlens_k", "[B] i32">>:$seqlens_k,
    Optional<Attn_Shaped<"block_table", "[B, P] i32">>:$block_table,
    Optional<F32>:$dropout_p,
    Optional<I64>:$dropout_seed,
    Optional<I32>:$dropout_offset,
    Attn_Shaped<"output", "[B, Hq, Sq, Dv]">:$output,
    Optional<Attn_Shaped<"lse", "[B, Hq, Sq]">>:$lse
  ), AttnSemanticAttrs);
  let results = (outs Variadic<AnyRankedTensor>:$results);

  let assemblyFormat = [{
    `q` `(` $query `:` type($query) `)`
    `k` `(` $key `:` type($key) `)`
    `v` `(` $value `:` type($value) `)`
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`cu_seqlens_q` `(` $cu_seqlens_q^ `:` type($cu_seqlens_q) `)`)?
    (`cu_seqlens_k` `(` $cu_seqlens_k^ `:` type($cu_seqlens_k) `)`)?
    (`seqlens_k` `(` $seqlens_k^ `:` type($seqlens_k) `)`)?
    (`block_table` `(` $block_table^ `:` type($block_table) `)`)?
    (`dropout` `(` $dropout_p^ `,` $dropout_seed `,` $dropout_offset `)`)?
    `outs` `(` $output `:` type($output) `)`
    (`lse` `(` $lse^ `:` type($lse) `)`)?
    attr-dict (`->` type($results)^)?
  }];

  let extraClassDeclaration = [{
    /// The scale applied to q.k, with the 1/sqrt(D) default resolved; NaN
    /// when that default needs a dynamic D (hasStaticScale() is false).
    float getScaleValue();
    /// Whether the scale is known before run time (given, or D static).
    bool hasStaticScale() {
      return getScale() ||
             !::llvm::cast<::mlir::ShapedType>(getQuery().getType())
                  .isDynamicDim(3);
    }
    /// Window bounds [left, right]; negative means unbounded.
    std::pair<int64_t, int64_t> getWindowBounds();
    /// Whether the op drops probabilities (has the dropout operands).
    bool hasDropout() { return static_cast<bool>(getDropoutP()); }
    /// How the sequences are laid out (cu_seqlens, seqlens_k, block_table).
    ::mlir::attn::SeqLayout getSeqLayout();
    bool hasPureTensorSemantics() {
      return ::llvm::isa<::mlir::RankedTensorType>(getOutput().getType());
    }
    MutableOperandRange getDpsInitsMutable();
  }];
  let hasVerifier = 1;
}

def Attn_AttentionGradOp : Attn_Op<"attention_grad", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DestinationStyleOpInterface]> {
  let summary = "Gradient of fused attention (backward)";
  let description = [{
    Given the forward inputs, its `output` and `lse`, and the gradient
    `grad_output` of the loss with respect to `output`, computes `dq`, `dk`
    and `dv` (and, with `grad_bias`, `dbias`) with the same masking, scale,
    softcap and bias semantics as `attn.attention` (FlashAttention-2's
    backward). With `s` the forward's score of (i, j) (scaled, soft-capped,
    biased, masked), `t = tanh(scale * q.k / softcap)`, and `G = Hq / Hkv`:

    ```
    p[i, j]    = exp(s[i, j] - lse[i])              0 where masked or lse = -inf
    delta[i]   = dot(do[i, :], o[i, :])
    dp[i, j]   = dot(do[i, :], v[j, :])
    ds[i, j]   = p[i, j] * (dp[i, j] - delta[i])    gradient of s
    dsr[i, j]  = ds[i, j] * (1 - t^2)               if softcap is set, else ds
    dq[i, :]   = scale * sum_j dsr[i, j] * k[j, :]
    dk[j, :]   = scale * sum_i dsr[i, j] * q[i, :]  summed over the G heads
    dv[j, :]   = sum_i p[i, j] * do[i, :]           summed over the G heads
    dbias[b', h', i', j'] = sum of ds over every (b, h, i, j) that reads
                            bias[b', h', i', j'] (its broadcast dimensions)
    ```

    With `dropout(%p, %seed, %offset)`, the same values the forward took:
    with `z[i, j] = keep(b, h, i, j) / (1 - p)` (0 where dropped),
    `dv` sums `p[i, j] * z[i, j] * do[i, :]` and `ds[i, j] = p[i, j] *
    (z[i, j] * dp[i, j] - delta[i])` (`delta` from the dropped output).

    Shapes as for `attn.attention`; `grad_output` matches `output`, `dq`
    matches `query`, `dk` matches `key` and `dv` matches `value`, all in the
    query's element type. `grad_bias` needs `bias`, has its shape, and has
    its element type or f32 (accumulation is f32 either way). `lse` is the
    forward's (f32, `-inf` for rows that see no key: they contribute
    nothing). In destination-passing style like the forward op: the inits
    `grad_query`, `grad_key`, `grad_value` and `grad_bias` are fully
    overwritten.

    Example:
    ```mlir
    %dq, %dk, %dv, %db = attn.attention_grad
        q(%q : tensor<1x8x128x64xf16>) k(%k : tensor<1x8x128x64xf16>)
        v(%v : tensor<1x8x128x64xf16>) o(%o : tensor<1x8x128x64xf16>)
        do(%do : tensor<1x8x128x64xf16>) lse(%lse : tensor<1x8x128xf32>)
        bias(%b : tensor<1x8x128x128xf16>)
        outs(%dq0, %dk0, %dv0 : tensor<1x8x128x64xf16>,
             tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>)
        grad_bias(%db0 : tensor<1x8x128x128xf32>)
        {mask = #attn.mask<causal>}
        -> tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>,
           tensor<1x8x128x64xf16>, tensor<1x8x128x128xf32>
    ```
  }];

  let arguments = !con((ins
    Attn_Shaped<"query", "[B, Hq, Sq, D]">:$query,
    Attn_Shaped<"key", "[B, Hkv, Sk, D]">:$key,
    Attn_Shaped<"value", "[B, Hkv, Sk, Dv]">:$value,
    Attn_Shaped<"output", "[B, Hq, Sq, Dv]">:$output,
    Attn_Shaped<"grad_output", "[B, Hq, Sq, Dv]">:$grad_output,
    Attn_Shaped<"lse", "[B, Hq, Sq]">:$lse,
    Optional<Attn_Shaped<"bias", "broadcastable to [B, Hq, Sq, Sk]">>:$bias,
    Optional<F32>:$dropout_p,
    Optional<I64>:$dropout_seed,
    Optional<I32>:$dropout_offset,
    Attn_Shaped<"grad_query", "[B, Hq, Sq, D]">:$grad_query,
    Attn_Shaped<"grad_key", "[B, Hkv, Sk, D]">:$grad_key,
    Attn_Shaped<"grad_value", "[B, Hkv, Sk, Dv]">:$grad_value,
    Optional<Attn_Shaped<"grad_bias", "the shape of bias">>:$grad_bias
  ), AttnSemanticAttrs);
  let results = (outs Variadic<AnyRankedTensor>:$results);

  let assemblyFormat = [{
    `q` `(` $query `:` type($query) `)`
    `k` `(` $key `:` type($key) `)`
    `v` `(` $value `:` type($value) `)`
    `o` `(` $output `:` type($output) `)`
    `do` `(` $grad_output `:` type($grad_output) `)`
    `lse` `(` $lse `:` type($lse) `)`
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`dropout` `(` $dropout_p^ `,` $dropout_seed `,` $dropout_offset `)`)?
    `outs` `(` $grad_query `,` $grad_key `,` $grad_value `:`
        type($grad_query) `,` type($grad_key) `,` type($grad_value) `)`
    (`grad_bias` `(` $grad_bias^ `:` type($grad_bias) `)`)?
    attr-dict (`->` type($results)^)?
  }];

  let extraClassDeclaration = [{
    /// The scale applied to q.k, with the 1/sqrt(D) default resolved; NaN
    /// when that default needs a dynamic D (hasStaticScale() is false).
    float getScaleValue();
    /// Whether the scale is known before run time (given, or D static).
    bool hasStaticScale() {
      return getScale() ||
             !::llvm::cast<::mlir::ShapedType>(getQuery().getType())
                  .isDynamicDim(3);
    }
    /// Window bounds [left, right]; negative means unbounded.
    std::pair<int64_t, int64_t> getWindowBounds();
    /// Whether the op drops probabilities (has the dropout operands).
    bool hasDropout() { return static_cast<bool>(getDropoutP()); }
    bool hasPureTensorSemantics() {
      return ::llvm::isa<::mlir::RankedTensorType>(getGradQuery().getType());
    }
    MutableOperandRange getDpsInitsMutable();
  }];
  let hasVerifier = 1;
}

#endif // ATTN_OPS_TD
