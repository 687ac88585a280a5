/*===- attn_runtime.h - load and launch attn's generated kernels -*- C -*-===//
 *
 * A plain C ABI over the CUDA driver API. It loads the PTX and manifest that
 * attn's compiler writes, checks every argument before launch (shapes,
 * strides, alignment, dtypes, the manifest), picks the grid and dynamic
 * shared memory, and launches on the caller's stream. Nothing invalid ever
 * reaches the GPU: every failure returns a status and leaves a readable
 * message in attn_last_error().
 *
 * Tensors are described in LOGICAL order whatever their memory layout:
 * Q [B, Hq, Sq, D], K [B, Hkv, Sk, D], V [B, Hkv, Sk, Dv], O [B, Hq, Sq, Dv],
 * LSE [B, Hq, Sq] (f32), and for the backward dO like O and dQ, dK, dV like
 * Q, K, V, with strides in elements. PyTorch's BHSD and FlashAttention's
 * BSHD are both just strides; the last dim must be contiguous (stride 1).
 * An optional mask (attn_options.mask) is [B, Hq, Sq, Sk] in the same
 * logical order, each dim the full size or 1. Paged decode
 * (attn_decode_paged) takes K and V as page pools [P, Hkv, page_size, D]
 * and [P, Hkv, page_size, Dv] (vLLM's [P, page_size, Hkv, D] storage is
 * strides too), a block table i32 [B, max_pages] and lengths i32 [B].
 * A packed (variable-length) batch (attn_forward_varlen) holds its B
 * sequences back to back: Q [1, Hq, T, D], O [1, Hq, T, Dv], LSE [1, Hq, T]
 * with offsets i32 [B + 1] (FlashAttention's varlen [T, H, D] is strides
 * too), its keys packed the same way, K [1, Hkv, Tk, D], or paged. A block
 * mask (attn_options.block_mask) lists, per query block, the key blocks
 * to visit: i32 counts [B, Hq, QB] and indices [B, Hq, QB, N].
 *===----------------------------------------------------------------------===*/

#ifndef ATTN_RUNTIME_ATTN_RUNTIME_H
#define ATTN_RUNTIME_ATTN_RUNTIME_H

#include <stdint.h>

/* The library is built with hidden visibility; this marks its API. */
#if defined(__GNUC__)
#define ATTN_RUNTIME_API __attribute__((visibility("default")))
#else
#define ATTN_RUNTIME_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum attn_status {
  ATTN_OK = 0,
  ATTN_ERROR_INVALID_ARGUMENT = 1, /* null pointer, bad enum, bad option */
  ATTN_ERROR_SHAPE = 2,            /* sizes that do not fit together */
  ATTN_ERROR_STRIDE = 3,           /* last dim not contiguous, bad strides */
  ATTN_ERROR_ALIGNMENT = 4,        /* pointer or row not 16-byte aligned */
  ATTN_ERROR_DTYPE = 5,            /* dtype not what the kernel was built for */
  ATTN_ERROR_MANIFEST = 6,         /* unreadable or inconsistent manifest/PTX */
  ATTN_ERROR_NO_KERNEL = 7,        /* no kernel in the module fits the call */
  ATTN_ERROR_CUDA = 8              /* a CUDA driver call failed */
} attn_status;

typedef enum attn_dtype {
  ATTN_F32 = 0,
  ATTN_F16 = 1,
  ATTN_BF16 = 2,
  ATTN_BOOL = 3, /* 1 byte, nonzero = true; boolean masks, mod operands */
  ATTN_I32 = 4,  /* 4 bytes; offsets, kv_lens, block_table, mod operands */
  ATTN_I64 = 5   /* 8 bytes; mod operands only */
} attn_dtype;

typedef enum attn_causal {
  ATTN_CAUSAL_NONE = 0,
  ATTN_CAUSAL_TOP_LEFT = 1,    /* query i sees keys j <= i */
  ATTN_CAUSAL_BOTTOM_RIGHT = 2 /* query i sees keys j <= i + Sk - Sq */
} attn_causal;

/* A device tensor in logical order (see above). `rank` is 4, or 3 for LSE;
 * the offsets and kv_lens have rank 1, a block_table rank 2, a block mask's
 * counts rank 3, a mod operand 0 to 4 (the entries of shape and strides
 * past `rank` are ignored). */
typedef struct attn_tensor {
  void *data; /* device pointer (CUdeviceptr) */
  attn_dtype dtype;
  int32_t rank;
  int64_t shape[4];
  int64_t strides[4]; /* in elements */
} attn_tensor;

/* A block mask (FlexAttention's BlockMask): see docs/Runtime.md. The keys
 * are cut into KB = ceil(Sk / block_k) key blocks and the queries into
 * QB = ceil(Sq / block_q) query blocks. Query block qb of batch b and
 * query head h visits the key blocks kv_indices[b, h, qb, 0 :
 * kv_counts[b, h, qb]] with the mask modification and the other masks
 * applied, and full_kv_indices[b, h, qb, 0 : full_kv_counts[b, h, qb]]
 * without the mask modification (fully visible but for options->mask,
 * causal and window); it skips every other key block. q_* are the transposes
 * (key block kb: the query blocks that visit it, partially and fully), which
 * attn_backward needs and attn_forward ignores (their data may be NULL there).
 * All i32; the B and Hq dims of each are the full size or 1 (broadcast). Counts
 * past the indices' last dim are clamped by the kernels; the caller guarantees
 * every index in [0, KB) ([0, QB) for q_*) and no block twice in one block's
 * two lists (the kernels clamp indices into range, so other values cannot make
 * them read out of bounds, but give wrong results). */
typedef struct attn_block_mask {
  int64_t block_q, block_k;    /* BQ, BK: the kernels' blocks=BQxBK */
  attn_tensor kv_counts;       /* i32 [B, Hq, QB] */
  attn_tensor kv_indices;      /* i32 [B, Hq, QB, N], N >= 1 */
  attn_tensor full_kv_counts;  /* i32 [B, Hq, QB] */
  attn_tensor full_kv_indices; /* i32 [B, Hq, QB, N2], N2 >= 1 */
  attn_tensor q_counts;        /* attn_backward only: i32 [B, Hq, KB] */
  attn_tensor q_indices;       /* i32 [B, Hq, KB, M], M >= 1 */
  attn_tensor full_q_counts;   /* i32 [B, Hq, KB] */
  attn_tensor full_q_indices;  /* i32 [B, Hq, KB, M2], M2 >= 1 */
} attn_block_mask;

/* Attention options shared by forward, decode and backward. A null
 * `options` pointer means the defaults {0, ATTN_CAUSAL_NONE, -1, NULL, 0,
 * NULL, NULL, NULL, 0}; options initialised with fewer fields (or zeroed)
 * have no mask, use deterministic backward kernels only, no modification,
 * no block mask and no mod operands.
 *
 * `mask` (attn_forward and attn_backward; decode rejects one) is a
 * rank-4 tensor in logical order [B, Hq, Sq, Sk] whose dims are each the
 * full size or 1 (1 broadcasts over that dim; its stride is then ignored),
 * strides in elements, none negative; no alignment or contiguity is
 * required.
 *   - additive: dtype = q's dtype; added to the scaled scores before the
 *     softmax (-inf hides a key);
 *   - boolean: dtype ATTN_BOOL, one byte per element, nonzero keeps the key
 *     and zero hides it (PyTorch's boolean attn_mask).
 * It combines with causal and window (a key must pass both). A query row
 * that sees no key gets O = 0 and LSE = -inf. The module needs kernels
 * built for that mask kind (manifest mask=add or mask=bool),
 * ATTN_ERROR_NO_KERNEL otherwise.
 *
 * `atomic_dq` (attn_backward only; the other calls ignore it): nonzero lets
 * attn_backward use the module's atomic-dQ backward kernels (manifest
 * dq=atomic: the dK/dV kernel sums dQ with f32 atomic adds instead of a
 * second pass over the keys, so dq is not bitwise reproducible run to run)
 * where the module has all three for the call; zero (the default) uses
 * only deterministic kernels (dq=ordered, else those that recompute dQ).
 *
 * `mod` (every call that launches kernels, and attn_decode_splits and
 * attn_decode_paged_splits): the score/mask modification the call applies,
 * by the name its kernels carry in the manifest (mod=NAME: FlexAttention's
 * score_mod / mask_mod compiled into them). The call then uses only
 * kernels with that mod, and a call with NULL or "" (the default) only
 * kernels without one; the decode_combine kernel has none and serves both.
 * A name is 1 to 64 characters of [A-Za-z0-9_]
 * (ATTN_ERROR_INVALID_ARGUMENT otherwise); one that the module has no
 * kernel of for the call is ATTN_ERROR_NO_KERNEL, naming the
 * modifications the module has. The string is read during the call
 * only.
 *
 * `block_mask` (attn_forward and attn_backward; the decode calls and
 * attn_forward_varlen reject one): a block mask (attn_block_mask above,
 * FlexAttention's BlockMask) that says which key blocks each query block
 * visits. The call then uses only kernels built for its block sizes
 * (manifest blocks=BQxBK, BQ = block_q, BK = block_k), and a call without
 * one (NULL, the default) only kernels without the key; one that the
 * module has no kernel of for the call is ATTN_ERROR_NO_KERNEL, naming the
 * block sizes the module has. It combines with the other masks, causal
 * and window (a key must pass all of them). attn_forward reads its kv_*
 * tensors, attn_backward all eight. The struct is read during the call
 * only; the tensors' values never by the host.
 *
 * `mod_operands` and `num_mod_operands` (wherever `mod` is read): the
 * tensors the modification reads (FlexAttention's captured tensors: a
 * per-token document id, a relative-position bias table, per-head ALiBi
 * slopes), in the order of the kernels' manifest key
 * mod_operands=T0:R0,T1:R1,...; 0 to 16 of them, and none without `mod`
 * (ATTN_ERROR_INVALID_ARGUMENT otherwise, and for a count > 0 with a NULL
 * array). Each is an attn_tensor of rank 0 to 4 and any dtype, independent
 * of q's (f32, f16, bf16, bool, i32, i64), every size in [1, 2^31 - 1],
 * no negative stride (a dim of size 1 goes to the kernels with stride 0,
 * whatever its stride), its data pointer aligned to its element size. The count
 * must be what the call's kernels read (ATTN_ERROR_INVALID_ARGUMENT, naming
 * it), each tensor's dtype (ATTN_ERROR_DTYPE) and rank (ATTN_ERROR_SHAPE) the
 * manifest's. The kernels read them on the device and clamp every index
 * into [0, size - 1] per dim, so they never read outside a tensor (an
 * index out of range reads the edge element: a wrong result, never a
 * fault); the host never reads their values. The array is read during the
 * call only.
 *
 * Compatibility: `mask`, then `atomic_dq`, `mod`, `block_mask` and
 * `mod_operands` with `num_mod_operands` were added at the end of the
 * struct, so options initialised with fewer fields or zeroed get the
 * defaults above. The struct grew with them from 16 to 24, 32, 40, 48 and
 * 64 bytes; the runtime reads all of it (it has no size field), so a
 * program compiled against an older header must be rebuilt. */
typedef struct attn_options {
  float scale; /* <= 0: 1/sqrt(D); else within [2^-64, 2^64] */
  attn_causal causal;
  int64_t window;     /* < 0: none; else needs a causal kind */
  const attn_tensor *mask; /* NULL: none */
  int32_t atomic_dq;       /* 0: deterministic backward kernels only */
  const char *mod;         /* NULL or "": no modification */
  const attn_block_mask *block_mask; /* NULL: none */
  /* NULL: none; else num_mod_operands tensors */
  const attn_tensor *mod_operands;
  int64_t num_mod_operands; /* 0 to 16 */
  /* f32 calls: 0 takes the 3xTF32 kernels only (f32's accuracy); else an
   * f32=tf32 kernel (attn-compile --tf32: one TF32 product per step,
   * 10-bit mantissas) where the module has one, else the 3xTF32 one. */
  int32_t allow_tf32;
} attn_options;

typedef struct attn_module attn_module;

/* Loads `manifest_path` and the PTX file it names (relative to it) into the
 * current CUDA context, which launches then use (it is pushed when another
 * context is current). A manifest may have one section per target chip,
 * each with its own PTX and kernels; the module loads one of them, chosen
 * by the current device's compute capability: of the targets that run on
 * it (sm_90a on exactly sm_90, sm_80 on sm_80 and later), the arch-specific
 * one, else the highest. None is ATTN_ERROR_MANIFEST, naming the targets
 * and the device. The manifest is read and checked before the driver is
 * touched (ATTN_ERROR_MANIFEST), and so is the PTX when the manifest has a
 * single section; no driver, no device or no current context is
 * ATTN_ERROR_CUDA. The driver (libcuda.so.1) is opened at run time, so a
 * program linking this library starts without one. ATTN_RUNTIME_VERBOSE=1
 * prints the chosen section and each kernel's registers, local memory and
 * shared memory to stderr at load; =2 also prints every launch.
 * ATTN_RUNTIME_CHECK=1 (read here too) turns on the module's checked mode
 * for attn_decode_paged and attn_forward_varlen (see those calls). */
ATTN_RUNTIME_API attn_status attn_module_load(const char *manifest_path,
                                              attn_module **module);
ATTN_RUNTIME_API void attn_module_destroy(attn_module *module);

/* The target of the manifest section that attn_module_load chose ("sm_90a",
 * "sm_80"): the module has that section's kernels and no others. NULL for a
 * null module; the string lives as long as the module. */
ATTN_RUNTIME_API const char *attn_module_target(const attn_module *module);

/* The message of the last failure on this thread ("" when none); a
 * successful call leaves it as it was. */
ATTN_RUNTIME_API const char *attn_last_error(void);

/* O = softmax(scale Q K^T + causal/window mask + options->mask) V, over
 * the key blocks options->block_mask lets each query block see (all
 * without one); writes LSE when `lse` is non-null. */
ATTN_RUNTIME_API attn_status
attn_forward(attn_module *module, const attn_tensor *q, const attn_tensor *k,
             const attn_tensor *v, const attn_tensor *o, const attn_tensor *lse,
             const attn_options *options, void *stream);

/* attn_forward over a packed (variable-length) batch of B sequences, one
 * launch: varlen prefill (packed keys) or chunked prefill (new queries
 * against a paged KV cache). q [1, Hq, T, D], o [1, Hq, T, Dv] and lse
 * [1, Hq, T] (f32, optional) hold the sequences' rows back to back:
 * sequence b has rows [query_offsets[b], query_offsets[b + 1]), with
 * query_offsets i32 [B + 1]. Its keys are, with exactly one of the two:
 *   - key_offsets (i32 [B + 1]): rows [key_offsets[b], key_offsets[b + 1])
 *     of k [1, Hkv, Tk, D] and v [1, Hkv, Tk, Dv];
 *   - kv_lens (i32 [B]) and block_table (i32 [B, max_pages]): kv_lens[b]
 *     keys of the page pools k [P, Hkv, page_size, D] and v
 *     [P, Hkv, page_size, Dv], key j at slot j % page_size of page
 *     block_table[b][j / page_size], as attn_decode_paged reads them.
 * The other pointers are null. Any strides with the last dim contiguous
 * (FlashAttention's varlen [T, H, D] is [1, H, T, D] by strides); the
 * checks are attn_forward's and attn_decode_paged's, the index tensors
 * with a 4-byte aligned data pointer and their last dim contiguous.
 * Options as attn_forward's but no mask and no block mask (options->mask
 * or options->block_mask is ATTN_ERROR_INVALID_ARGUMENT); causal alignment
 * and window apply per sequence (bottom_right: query i of sequence b sees
 * keys j <= i + Sk_b - Sq_b). The module needs a forward kernel with q=packed
 * and kv=packed or kv=paged (docs/KernelABI.md); attn_forward never takes
 * one, nor this call another.
 *
 * The offsets and lengths are device data, which the host never reads.
 * The caller guarantees query_offsets[0] = 0, never decreasing, ending at
 * T (key_offsets likewise, ending at Tk), block_table entries in [0, P)
 * for the pages a sequence's keys occupy, and max_seqlen_q >= every
 * sequence's query count: the grid is (ceil(max_seqlen_q / block_q), Hq,
 * B), and a longer sequence's rows past max_seqlen_q are not written.
 * max_seqlen_q <= 0 means T (always enough, more CTAs, which return at
 * once); more than T is clamped to T. The kernel clamps the offsets into
 * [0, T] and [0, Tk] and kv_lens to [0, max_pages * page_size]; rows no
 * sequence covers are not written; a sequence without keys gets O = 0 and
 * LSE = -inf. T, Tk and max_pages * page_size must be below 2^31 (i32
 * offsets and lengths count them), B and Hq at most 65535 (the grid).
 *
 * Checked mode, for debugging: when the module was loaded with
 * ATTN_RUNTIME_CHECK=1, the call, after the checks above, copies the
 * offsets (and lengths and block table) to the host on `stream`, waits for
 * the stream (cuStreamSynchronize), and fails with ATTN_ERROR_SHAPE, naming
 * the tensor, index and value, unless the offsets start at 0, never
 * decrease and end at T (Tk), every kv_lens[b] is in
 * [0, max_pages * page_size], every block_table entry of a page the keys
 * occupy is in [0, P), and, for 0 < max_seqlen_q < T, no sequence has more
 * query rows than max_seqlen_q. It cannot run on a stream being captured
 * into a CUDA graph (ATTN_ERROR_INVALID_ARGUMENT). */
ATTN_RUNTIME_API attn_status attn_forward_varlen(
    attn_module *module, const attn_tensor *q, const attn_tensor *k,
    const attn_tensor *v, const attn_tensor *query_offsets,
    const attn_tensor *key_offsets, const attn_tensor *kv_lens,
    const attn_tensor *block_table, const attn_tensor *o,
    const attn_tensor *lse, int64_t max_seqlen_q, const attn_options *options,
    void *stream);

/* Split-KV decode (Flash-Decoding): partial kernel over `num_splits` chunks
 * of the keys, then the combine kernel. num_splits <= 0 picks the count from
 * the shape and the device's SM count; a count above the number of key tiles
 * (ceil(Sk / block_kv)) is clamped to it: attn_decode_splits() says which
 * count a call uses. The (Hq / Hkv) * Sq query rows of a KV head go in
 * tiles of the decode_partial kernel's `rows`, one CTA each per split.
 * `workspace` is device memory, 256-byte aligned, of at least
 * attn_decode_workspace_size(q, v, attn_decode_splits(...)) bytes (of v it
 * reads only Dv, so a paged call passes its v_cache): the f32 partial
 * results, N * B * Hq * Sq * (Dv + 1) * 4 bytes, then the (B + 1) i32
 * offsets of attn_decode_paged's balanced work list, each part 256-byte
 * aligned; one size for every decode call. */
ATTN_RUNTIME_API int64_t attn_decode_workspace_size(const attn_tensor *q,
                                                    const attn_tensor *v,
                                                    int64_t num_splits);
ATTN_RUNTIME_API attn_status
attn_decode(attn_module *module, const attn_tensor *q, const attn_tensor *k,
            const attn_tensor *v, const attn_tensor *o, const attn_tensor *lse,
            const attn_options *options, int64_t num_splits, void *workspace,
            int64_t workspace_bytes, void *stream);

/* Sets *splits to the split count attn_decode uses for these arguments and
 * `num_splits` (<= 0: the default, enough B * Hkv * splits CTAs to fill
 * whole waves of the device's SMs, 1 when B * Hkv alone fills it). Fails, as
 * attn_decode would, when q, k, v or the options are not a valid decode call
 * for the module. (attn_decode_workspace_size returns -1, with
 * attn_last_error() set, on bad arguments.) */
ATTN_RUNTIME_API attn_status attn_decode_splits(
    attn_module *module, const attn_tensor *q, const attn_tensor *k,
    const attn_tensor *v, const attn_options *options, int64_t num_splits,
    int64_t *splits);

/* Split-KV decode over a paged KV cache (vLLM's PagedAttention layout): as
 * attn_decode, but sequence b's keys are kv_lens[b] rows of pages of the
 * pools k_cache [P, Hkv, page_size, D] and v_cache [P, Hkv, page_size, Dv]
 * (any strides, last dim contiguous): key j (0 <= j < kv_lens[b]) is slot
 * j % page_size of page block_table[b][j / page_size]. block_table is i32
 * [B, max_pages], kv_lens i32 [B], each with its last dim contiguous and a
 * 4-byte aligned data pointer; q, o, lse, the options (no mask, no block
 * mask) and the workspace are attn_decode's, on the paged decode_partial kernel
 * (manifest kv=paged) and the same decode_combine kernel, or on the
 * balanced pair below.
 *
 * Block table entries and lengths are device data, which the host never
 * reads: one call serves every step of a CUDA graph whose lengths change.
 * The caller guarantees block_table[b][p] in [0, P) for every
 * p < ceil(kv_lens[b] / page_size) (only the checked mode below checks
 * it); the kernel clamps each kv_lens[b] to
 * [0, max_pages * page_size], and a sequence of length 0 gets O = 0 and
 * LSE = -inf. Each split covers ceil(kv_lens[b] / N) keys of its
 * sequence; the default split count comes from the capacity Sk = max_pages
 * * page_size, B * Hkv and the SMs, with more splits than attn_decode
 * takes for B > 1, since ragged lengths leave the longest sequence's
 * splits for last (docs/Runtime.md); the workspace
 * attn_decode_workspace_size(q, v_cache, n): v_cache only gives Dv there.
 * max_pages * page_size must be below 2^31 (kv_lens cannot count more keys).
 *
 * Balanced kernels: where the module has a paged decode_partial kernel
 * with manifest splits=balanced for the call, the call takes it and the
 * decode_combine kernel with splits=balanced of its dtype and Dv
 * (ATTN_ERROR_NO_KERNEL without one) instead. They cut the batch's keys,
 * not each sequence's, into N * B work items of one chunk of keys each,
 * which the partial kernel computes from kv_lens on the device, so that
 * ragged lengths leave no SM waiting for the longest sequence; N is
 * `num_splits` as above, its default the balanced kernels' own model
 * (docs/Runtime.md), and the workspace the same size. Without such a
 * kernel the call launches the per-sequence kernels above.
 *
 * Checked mode, for debugging: when the module was loaded with
 * ATTN_RUNTIME_CHECK=1, the call, after its other checks, copies kv_lens
 * and block_table to the host on `stream`, waits for the stream
 * (cuStreamSynchronize), and fails with ATTN_ERROR_SHAPE, naming the
 * tensor, index and value, unless every kv_lens[b] is in
 * [0, max_pages * page_size] and block_table[b][p] in [0, P) for every
 * p < ceil(kv_lens[b] / page_size). It cannot run on a stream being
 * captured into a CUDA graph (ATTN_ERROR_INVALID_ARGUMENT). */
ATTN_RUNTIME_API attn_status attn_decode_paged(
    attn_module *module, const attn_tensor *q, const attn_tensor *k_cache,
    const attn_tensor *v_cache, const attn_tensor *block_table,
    const attn_tensor *kv_lens, const attn_tensor *o, const attn_tensor *lse,
    const attn_options *options, int64_t num_splits, void *workspace,
    int64_t workspace_bytes, void *stream);

/* Sets *splits to the split count attn_decode_paged uses for these
 * arguments and `num_splits` (<= 0: the default), as attn_decode_splits
 * does for attn_decode; fails as attn_decode_paged would on bad inputs. */
ATTN_RUNTIME_API attn_status attn_decode_paged_splits(
    attn_module *module, const attn_tensor *q, const attn_tensor *k_cache,
    const attn_tensor *v_cache, const attn_tensor *block_table,
    const attn_tensor *kv_lens, const attn_options *options, int64_t num_splits,
    int64_t *splits);

/* Gradients of attn_forward by recomputation (FlashAttention-2's backward):
 * from q, k, v, o, dout (dO, O's shape and dtype) and the forward's lse,
 * writes dq, dk, dv (q's, k's, v's shapes, the operands' dtype; any layout
 * by strides, last dim contiguous). Deterministic by default: the same
 * inputs give bitwise the same gradients. GQA: dk, dv sum over the query
 * heads of a group. Options as attn_forward (mask, block mask with all
 * eight of its tensors, causal, window, scale); a query row that sees no
 * key contributes nothing (its dq row is 0). lse
 * is required (f32 [B, Hq, Sq], as attn_forward wrote it for the same
 * options). `workspace` is device memory, 256-byte aligned, of
 * attn_backward_workspace_size(q) bytes, or of
 * attn_backward_atomic_workspace_size(q) where the call's kernels
 * accumulate dQ (below). Launches three kernels on
 * `stream`, in this order: backward_dot (the row statistics), backward_kv
 * (dk, dv), backward_q (dq); the module needs all three of one dQ mode
 * for the call's dtype, head dims, causal and mask kind, else
 * ATTN_ERROR_NO_KERNEL naming the kinds missing (ATTN_ERROR_DTYPE, as for
 * attn_forward, when its backward kernels all have other dtypes).
 *
 * The dQ modes (manifest key dq): the recompute mode (no key) has
 * backward_q recompute dQ in a pass of its own; the two accumulating modes
 * have backward_dot zero an f32 dQ accumulator, backward_kv add every
 * tile's dQ to it and backward_q convert it into dq (same order and grids).
 * dq=ordered is deterministic: backward_kv's CTAs take turns, through i32
 * turns that backward_dot also zeroes, in an order fixed by the tile
 * indices, so dq is bitwise reproducible; dq=atomic adds with atomics in
 * whatever order the CTAs run, so dq is not bitwise reproducible run to
 * run. dk and dv are deterministic in every mode. Selection: with
 * options->atomic_dq zero (or no options), the module's dq=ordered set for
 * the call where it has all three, else its recompute set; with atomic_dq
 * nonzero, its dq=atomic set where it has all three, else that same
 * deterministic choice. One call never mixes modes. A module that has the
 * call's kernels only with dq=atomic is ATTN_ERROR_NO_KERNEL without
 * atomic_dq, saying to set options.atomic_dq.
 *
 * The workspace: one 16-byte record of f32 row statistics per query row at
 * offset 0, {LSE log2(e) (+inf where LSE = -inf), D = rowsum(dO * O), 0,
 * 0}, f32 [B, Hq, Sq, 4]; for the accumulating modes the accumulator, f32
 * [B, Hq, Sq, D] contiguous, at A = round_up(B * Hq * Sq * 16, 256), and the
 * turns, i32 [B, Hq, Sq] contiguous, at T = round_up(A + B * Hq * Sq * D * 4,
 * 256) (the dq=atomic kernels leave them unused: one layout serves both).
 * attn_backward_workspace_size(q) returns B * Hq * Sq * 16, the records,
 * which is what a call whose kernels recompute dQ needs;
 * attn_backward_atomic_workspace_size(q) returns T + B * Hq * Sq * 4, what
 * a call whose kernels accumulate (dq=atomic or dq=ordered) needs, else
 * ATTN_ERROR_INVALID_ARGUMENT naming both sizes (the call never falls back
 * to other kernels for want of workspace).
 *
 * attn_backward_workspace_size and attn_backward_atomic_workspace_size
 * return -1, with attn_last_error() set, on a bad q, or when the workspace
 * would exceed 2^50 bytes. */
ATTN_RUNTIME_API int64_t attn_backward_workspace_size(const attn_tensor *q);
ATTN_RUNTIME_API int64_t
attn_backward_atomic_workspace_size(const attn_tensor *q);
ATTN_RUNTIME_API attn_status attn_backward(
    attn_module *module, const attn_tensor *q, const attn_tensor *k,
    const attn_tensor *v, const attn_tensor *o, const attn_tensor *dout,
    const attn_tensor *lse, const attn_tensor *dq, const attn_tensor *dk,
    const attn_tensor *dv, const attn_options *options, void *workspace,
    int64_t workspace_bytes, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_RUNTIME_ATTN_RUNTIME_H */
