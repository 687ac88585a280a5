//===- AttnOps.td - attn operations ------------------------*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "attn/Dialect/Attn/IR/AttnAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// The attributes every attention op shares. `window` counts the keys a query
// may see before its causal diagonal: query i sees key j iff
// diag(i) - window <= j <= diag(i), diag(i) = i (top_left) or i + Sk - Sq
// (bottom_right).
defvar Attn_CommonAttrs = (ins
  OptionalAttr<F32Attr>:$scale,
  DefaultValuedAttr<Attn_CausalKindAttr, "::mlir::attn::CausalKind::None">:$causal,
  OptionalAttr<I64Attr>:$window,
  DefaultValuedAttr<Attn_LayoutAttr, "::mlir::attn::Layout::BHSD">:$layout);

defvar Attn_CommonDescription = [{
    Logical shapes, whatever the layout: Q `[B, Hq, Sq, D]`, K `[B, Hkv, Sk, D]`,
    V `[B, Hkv, Sk, Dv]`, O `[B, Hq, Sq, Dv]`. With `layout = #attn.layout<bshd>`
    the two middle dimensions of Q, K, V, O (and dO, dQ, dK, dV) are stored
    swapped. Hq must be a multiple of Hkv (GQA, MQA): query head h reads
    key/value head `h / (Hq / Hkv)`. B, Sq and Sk may be dynamic; head counts
    and head dims must be static, head dims at most 65536. Q, K, V share one element type (f16, bf16
    or f32); accumulation and softmax statistics are f32.

    Attributes:
    - `scale` (default `1/sqrt(D)`): multiplies Q K^T.
    - `causal`: `none`, `top_left` (query i sees keys j <= i) or
      `bottom_right` (j <= i + Sk - Sq).
    - `window`: sliding window; with a causal kind, query i also cannot see
      keys j < diag(i) - window, where diag(i) is the causal limit above.
    - `mask`: an optional operand broadcastable (numpy rules, right-aligned)
      to `[B, Hq, Sq, Sk]`: float values are added to the scores; `i1` values
      keep a score where true and mask it where false.

    A query row that sees no key (fully masked) yields O = 0 and LSE = -inf.
}];

// The score and mask modifications (optional regions) of the forward,
// split-KV and gradient ops, and the tensors they read.
defvar Attn_ModRegions = (region MaxSizedRegion<1>:$score_mod,
                                 MaxSizedRegion<1>:$mask_mod);

defvar Attn_ModDescription = [{

    Score and mask modifications (FlexAttention's `score_mod` and
    `mask_mod`), optional regions of one block each:
    - `score_mod` `(b: index, h: index, i: index, j: index, s: f32,
      t0, ..., tN) -> f32` replaces the scaled score `s = scale * q_i . k_j`
      of query i and key j of batch b and query head h (soft-capping
      `cap * tanh(s / cap)`, ALiBi `s - slope(h) * |i - j|`, a bias read
      from a tensor);
    - `mask_mod` `(b: index, h: index, i: index, j: index, t0, ..., tN) ->
      i1` hides key j from query i where it yields false (prefix-LM,
      document masks, strided patterns).
    Both end in `attn.yield`. `t0, ..., tN` are the `mod_operands`, in
    order: tensors the regions read with `tensor.extract` (and nothing
    else). A region uses only its own arguments and values it defines
    (constants included); its ops have scalar operands and results, no
    regions and no side effects. i and j are positions in the sequence (of
    the packed sequence b, with offsets; j is the logical key of a paged
    cache). The score modification comes first; the mask operand, the
    causal kind, the window and `mask_mod` then apply to its result.
    `mod_name` (letters, digits and `_`, at most 64) names the pair for the
    GPU kernels' names and manifest (`mod=`), by which the runtime's callers
    pick them; without it they are named by a hash of the regions.
}];

// The block mask of the forward and gradient ops (block-sparse attention).
defvar Attn_BlockMaskDescription = [{

    Block masks (block-sparse attention, FlexAttention's `BlockMask`):
    `block_size = array<i64: BQ, BK>` cuts the queries into QB =
    ceil(Sq / BQ) blocks of BQ rows and the keys into KB = ceil(Sk / BK)
    blocks of BK keys, and `block_mask(counts, indices[, full_counts,
    full_indices])` lists, for query block qb of batch b and query head h,
    the key blocks it visits: `indices[b, h, qb, n]` for
    `n < counts[b, h, qb]` (counts i32 `[B, Hq, QB]`, indices i32
    `[B, Hq, QB, N]`; B and Hq may be 1 to broadcast). Keys of those
    blocks are decided by the other masks and `mask_mod`; keys of the
    blocks in the optional full lists are visible without `mask_mod` (the
    mask operand, the causal kind and the window still apply); keys of
    every other block are hidden, and the lowerings never load them. A
    count is clamped into `[0, N]`. The caller guarantees that entries lie
    in `[0, KB)` and that no block appears twice among one query block's
    two lists (the lowerings clamp entries into range, so that nothing is
    read out of bounds, but the result is then unspecified).
    `attn.attention_grad` also takes `q_block_mask(...)`: the same lists
    transposed (for key block kb, the query blocks that visit it, `[B, Hq,
    KB]` and `[B, Hq, KB, M]`), as many as `block_mask` has, for its
    loop over query tiles per key tile. Not with a packed batch or a KV
    cache.
}];

// The per-sequence key counts and the paged KV cache of the forward and
// split-KV ops.
defvar Attn_KvCacheDescription = [{

    KV cache operands (serving):
    - `kv_lens` (i32 `[B]`): sequence b has `kv_lens[b]` keys, the first
      ones of its K/V rows (Sk is then the capacity, the most keys a
      sequence may have); a length outside `[0, Sk]` is clamped into it.
      Causal alignment, the window and the split chunks are per sequence:
      with `bottom_right`, query i of sequence b sees keys
      `j <= i + kv_lens[b] - Sq`. A sequence of length 0 gives O = 0 and
      LSE = -inf.
    - `block_table` (i32 `[B, max_pages]`, needs `kv_lens`): K and V are
      page pools, logical `[P, Hkv, page_size, D]` and `[P, Hkv, page_size,
      Dv]` stored in the op's layout (with `bshd`, `[P, page_size, Hkv, D]`:
      vLLM's and FlashInfer's cache). Key j of sequence b is row
      `j mod page_size` of page `block_table[b, j floordiv page_size]`; the
      capacity Sk is `max_pages * page_size`. Entries that a sequence's
      length reaches must lie in `[0, P)`; the others are never read.
}];

// Packed (variable-length) batches of attn.attention.
defvar Attn_VarlenDescription = [{

    Packed batches (variable-length prefill, FlashAttention's varlen):
    - `query_offsets` (i32 `[B + 1]`): Q, O and LSE hold the B sequences
      back to back: Q is `[1, Hq, T, D]` stored in the op's layout
      (`[1, T, Hq, D]` in bshd, FlashAttention's `[T, Hq, D]`), O likewise,
      LSE `[1, Hq, T]`; sequence b's queries are rows
      `[query_offsets[b], query_offsets[b + 1])`. B is the offsets' size
      minus 1.
    - `key_offsets` (i32 `[B + 1]`, needs `query_offsets`): K and V are
      packed too (`[1, Hkv, Tk, D]`); sequence b's keys are rows
      `[key_offsets[b], key_offsets[b + 1])`. Without it, the keys come from
      `kv_lens` (with or without a block table) or are dense `[B, Hkv, Sk,
      D]`.
    Sq and Sk, for the causal alignment and the window, are each
    sequence's own. The offsets must start at 0, never decrease and end at
    T (Tk); offsets outside `[0, T]` are clamped into it, and rows that no
    sequence covers are left unspecified (the kernels do not write them).
    A packed batch takes no mask operand.
}];

def Attn_AttentionOp : Attn_Op<"attention", [Pure, AttrSizedOperandSegments]> {
  let summary = "scaled-dot-product attention: softmax(scale Q K^T + mask) V";
  let description = !strconcat([{
    Computes `O = softmax(scale * Q K^T + mask) V` and, when a second result
    is present, the natural-log log-sum-exp of each score row,
    `LSE = m + log(l)` (f32, shape `[B, Hq, Sq]`).
  }], Attn_CommonDescription, Attn_ModDescription, Attn_BlockMaskDescription,
  Attn_KvCacheDescription, Attn_VarlenDescription, [{

    Example:

    ```mlir
    %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>}
        : tensor<2x8x77x64xf16>, tensor<2x2x129x64xf16>, tensor<2x2x129x64xf16>
        -> tensor<2x8x77x64xf16>, tensor<2x8x77xf32>
    ```
  }]);
  let arguments = !con((ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$value,
    Optional<RankedTensorOf<[I32]>>:$query_offsets,
    Optional<RankedTensorOf<[I32]>>:$key_offsets,
    Optional<RankedTensorOf<[I32]>>:$kv_lens,
    Optional<RankedTensorOf<[I32]>>:$block_table,
    Optional<AnyRankedTensor>:$mask,
    Variadic<RankedTensorOf<[I32]>>:$block_mask,
    Variadic<AnyRankedTensor>:$mod_operands), Attn_CommonAttrs,
    (ins OptionalAttr<StrAttr>:$mod_name,
         OptionalAttr<DenseI64ArrayAttr>:$block_size));
  let results = (outs AnyRankedTensor:$output, Optional<AnyRankedTensor>:$lse);
  let regions = Attn_ModRegions;
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`query_offsets` `(` $query_offsets^ `:` type($query_offsets) `)`)?
    (`key_offsets` `(` $key_offsets^ `:` type($key_offsets) `)`)?
    (`kv_lens` `(` $kv_lens^ `:` type($kv_lens) `)`)?
    (`block_table` `(` $block_table^ `:` type($block_table) `)`)?
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`block_mask` `(` $block_mask^ `:` type($block_mask) `)`)?
    (`mod_operands` `(` $mod_operands^ `:` type($mod_operands) `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value)
    `->` type($output) (`,` type($lse)^)?
    (`score_mod` $score_mod^)? (`mask_mod` $mask_mod^)?
  }];
  let hasVerifier = 1;
}

def Attn_AttentionPartialOp : Attn_Op<"attention_partial",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "attention over each of `num_splits` key/value chunks (split-KV)";
  let description = !strconcat([{
    The first half of split-KV (Flash-Decoding) attention. The keys are cut
    into `num_splits` chunks of `ceil(Sk / num_splits)` consecutive positions
    (the last chunks may be short or empty). For each chunk s the op computes
    the attention of every query over that chunk alone: a normalised partial
    output `O_s` and its log-sum-exp `LSE_s`. A chunk that is empty or fully
    masked for a query has `O_s = 0` and `LSE_s = -inf`. `attn.combine`
    merges the chunks into the full attention.

    Results are f32 and always ordered `[num_splits, B, Hq, Sq, Dv]` and
    `[num_splits, B, Hq, Sq]`, whatever the layout of the operands. With
    `kv_lens` the chunks are per sequence: `ceil(kv_lens[b] / num_splits)`
    keys each.

    With `balanced` (needs `kv_lens`) the work is balanced across the
    batch instead (FlashInfer's split-KV plan): the chunks have one size
    for the whole batch, and each sequence takes as many as its length
    needs. With N = `num_splits`, L_b = `kv_lens[b]` clamped to `[0, Sk]`
    and T = sum_b L_b, the candidate chunks are `c_m = min(Sk, max(128,
    128 * ceil(T / (128 * max(1, m)))))` keys (at least 1) for m = N * B,
    N * B - ceil(B / 2) and (N - 1) * B, and the chunk c is the first whose
    item count `sum_b ceil(L_b / c_m)` is at most N * B (the last always
    is: SplitWork.h). Sequence b has `n_b = ceil(L_b / c)` chunks, and the
    third result `split_offsets` (i32 `[B + 1]`) holds
    `split_offsets[b] = sum_{b' < b} n_b'`, which is at most N * B. Item
    `w = split_offsets[b] + s` of the results `[N * B, 1, Hq, Sq, Dv]` and
    `[N * B, 1, Hq, Sq]` is chunk s of sequence b, keys `[s c, min((s + 1)
    c, L_b))`; the items past `split_offsets[B]` have O = 0 and LSE =
    -inf. `attn.combine` with `split_offsets` merges them.
  }], Attn_CommonDescription, Attn_ModDescription, Attn_KvCacheDescription, [{

    Examples:

    ```mlir
    %po, %plse = attn.attention_partial %q, %k, %v {num_splits = 4 : i64}
        : tensor<8x32x1x128xbf16>, tensor<8x8x4096x128xbf16>, tensor<8x8x4096x128xbf16>
        -> tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32>
    %bo, %blse, %offsets = attn.attention_partial %q, %k, %v
        kv_lens(%lens : tensor<8xi32>) {num_splits = 4 : i64, balanced}
        : tensor<8x32x1x128xbf16>, tensor<8x8x4096x128xbf16>, tensor<8x8x4096x128xbf16>
        -> tensor<32x1x32x1x128xf32>, tensor<32x1x32x1xf32>, tensor<9xi32>
    ```
  }]);
  let arguments = !con((ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$value,
    Optional<RankedTensorOf<[I32]>>:$kv_lens,
    Optional<RankedTensorOf<[I32]>>:$block_table,
    Optional<AnyRankedTensor>:$mask,
    Variadic<AnyRankedTensor>:$mod_operands,
    I64Attr:$num_splits), Attn_CommonAttrs,
    (ins OptionalAttr<StrAttr>:$mod_name, UnitAttr:$balanced));
  let results = (outs AnyRankedTensor:$partial_output,
                      AnyRankedTensor:$partial_lse,
                      Optional<RankedTensorOf<[I32]>>:$split_offsets);
  let regions = Attn_ModRegions;
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`kv_lens` `(` $kv_lens^ `:` type($kv_lens) `)`)?
    (`block_table` `(` $block_table^ `:` type($block_table) `)`)?
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`mod_operands` `(` $mod_operands^ `:` type($mod_operands) `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value)
    `->` type($partial_output) `,` type($partial_lse)
    (`,` type($split_offsets)^)?
    (`score_mod` $score_mod^)? (`mask_mod` $mask_mod^)?
  }];
  let hasVerifier = 1;
}

def Attn_CombineOp : Attn_Op<"combine", [Pure]> {
  let summary = "merge split-KV partial outputs by their log-sum-exp";
  let description = [{
    The second half of split-KV attention: from partial outputs `O_s`
    `[N, B, Hq, Sq, Dv]` (f32) and their `LSE_s` `[N, B, Hq, Sq]` (f32) it
    forms `LSE = log sum_s exp(LSE_s)` and `O = sum_s exp(LSE_s - LSE) O_s`.
    A split with `LSE_s = -inf` contributes nothing; when every split is
    empty, O = 0 and LSE = -inf. The output is written in `layout` with the
    result's element type (f16, bf16 or f32); the optional second result is
    the merged LSE `[B, Hq, Sq]` (f32).

    With `split_offsets` (i32 `[B + 1]`, from a `balanced`
    `attn.attention_partial`) the partial results are work items
    `[W, 1, Hq, Sq, Dv]` and `[W, 1, Hq, Sq]`, and sequence b merges items
    `[split_offsets[b], split_offsets[b + 1])` (each offset clamped into
    `[0, W]` and to at least the one before, so that no offset reads past
    the items).

    Example:

    ```mlir
    %o = attn.combine %po, %plse {layout = #attn.layout<bshd>}
        : tensor<4x8x32x1x128xf32>, tensor<4x8x32x1xf32> -> tensor<8x1x32x128xbf16>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$partial_output,
    AnyRankedTensor:$partial_lse,
    Optional<RankedTensorOf<[I32]>>:$split_offsets,
    DefaultValuedAttr<Attn_LayoutAttr, "::mlir::attn::Layout::BHSD">:$layout);
  let results = (outs AnyRankedTensor:$output, Optional<AnyRankedTensor>:$lse);
  let assemblyFormat = [{
    $partial_output `,` $partial_lse
    (`split_offsets` `(` $split_offsets^ `:` type($split_offsets) `)`)?
    attr-dict `:` type($partial_output) `,`
    type($partial_lse) `->` type($output) (`,` type($lse)^)?
  }];
  let hasVerifier = 1;
}

def Attn_AttentionGradOp : Attn_Op<"attention_grad", [Pure,
    AttrSizedOperandSegments]> {
  let summary = "gradients of attention by recomputation";
  let description = !strconcat([{
    Given Q, K, V, the forward output O, its gradient dO and the forward LSE,
    returns dQ, dK, dV of `O = softmax(scale * Q K^T + mask) V` with respect
    to Q, K and V (the mask is not differentiated). The probabilities are
    recomputed as `P = exp(scale * Q K^T + mask - LSE)`, so no `Sq x Sk`
    operand exists; with `Di = rowsum(dO * O)`, `dS = P * (dO V^T - Di)`,
    `dQ = scale dS K`, `dK = scale dS^T Q`, `dV = P^T dO`, where dK and dV
    sum over the query heads that share a key/value head. Rows with
    LSE = -inf (fully masked) contribute nothing. dO has O's type; dQ, dK,
    dV have Q's, K's and V's. With a `score_mod` the gradient flows through
    it: dS is multiplied by the derivative of the region with respect to
    its score argument, which the lowerings derive from the region's ops
    (forward-mode, op by op), so the region's ops that depend on the score
    must be ones with a derivative rule (arith add, sub, mul, div, neg,
    maximum/minimum, select, extf/truncf, math exp, exp2, log, log2, tanh,
    sqrt, absf, fma); the verifier names any other.
  }], Attn_CommonDescription, Attn_ModDescription, Attn_BlockMaskDescription, [{

    Example:

    ```mlir
    %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
        : tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>,
          tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>, tensor<2x8x128xf32>
        -> tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>
    ```
  }]);
  let arguments = !con((ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$value,
    AnyRankedTensor:$output,
    AnyRankedTensor:$grad_output,
    AnyRankedTensor:$lse,
    Optional<AnyRankedTensor>:$mask,
    Variadic<RankedTensorOf<[I32]>>:$block_mask,
    Variadic<RankedTensorOf<[I32]>>:$q_block_mask,
    Variadic<AnyRankedTensor>:$mod_operands), Attn_CommonAttrs,
    (ins OptionalAttr<StrAttr>:$mod_name,
         OptionalAttr<DenseI64ArrayAttr>:$block_size));
  let results = (outs AnyRankedTensor:$grad_query, AnyRankedTensor:$grad_key,
                      AnyRankedTensor:$grad_value);
  let regions = Attn_ModRegions;
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $output `,` $grad_output `,` $lse
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`block_mask` `(` $block_mask^ `:` type($block_mask) `)`)?
    (`q_block_mask` `(` $q_block_mask^ `:` type($q_block_mask) `)`)?
    (`mod_operands` `(` $mod_operands^ `:` type($mod_operands) `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `,`
    type($output) `,` type($grad_output) `,` type($lse)
    `->` type($grad_query) `,` type($grad_key) `,` type($grad_value)
    (`score_mod` $score_mod^)? (`mask_mod` $mask_mod^)?
  }];
  let hasVerifier = 1;
}

def Attn_YieldOp : Attn_Op<"yield", [Pure, Terminator,
    ParentOneOf<["AttentionOp", "AttentionPartialOp", "AttentionGradOp"]>]> {
  let summary = "ends a score or mask modification";
  let description = [{
    Yields the modified score (f32) of a `score_mod` region or the keep
    predicate (i1) of a `mask_mod` region.

    ```mlir
    attn.yield %s : f32
    ```
  }];
  let arguments = (ins AnyTypeOf<[F32, I1]>:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

include "attn/Dialect/Attn/IR/AttnTileOps.td"

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
