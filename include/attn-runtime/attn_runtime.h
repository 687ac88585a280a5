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
 * LSE [B, Hq, Sq] (f32), with strides in elements. PyTorch's BHSD and
 * FlashAttention's BSHD are both just strides; the last dim must be
 * contiguous (stride 1).
 *===----------------------------------------------------------------------===*/

#ifndef ATTN_RUNTIME_ATTN_RUNTIME_H
#define ATTN_RUNTIME_ATTN_RUNTIME_H

#include <stdint.h>

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
  ATTN_BF16 = 2
} attn_dtype;

typedef enum attn_causal {
  ATTN_CAUSAL_NONE = 0,
  ATTN_CAUSAL_TOP_LEFT = 1,    /* query i sees keys j <= i */
  ATTN_CAUSAL_BOTTOM_RIGHT = 2 /* query i sees keys j <= i + Sk - Sq */
} attn_causal;

/* A device tensor in logical order (see above). `rank` is 4, or 3 for LSE. */
typedef struct attn_tensor {
  void *data; /* device pointer (CUdeviceptr) */
  attn_dtype dtype;
  int32_t rank;
  int64_t shape[4];
  int64_t strides[4]; /* in elements */
} attn_tensor;

/* Attention options shared by forward and decode. */
typedef struct attn_options {
  float scale;        /* <= 0: 1/sqrt(D) */
  attn_causal causal;
  int64_t window;     /* < 0: none; else needs a causal kind */
} attn_options;

typedef struct attn_module attn_module;

/* Loads `manifest_path` and the PTX files it names (relative to it) into the
 * current CUDA context. */
attn_status attn_module_load(const char *manifest_path, attn_module **module);
void attn_module_destroy(attn_module *module);

/* The message of the last failure on this thread ("" when none). */
const char *attn_last_error(void);

/* O = softmax(scale Q K^T + causal/window mask) V; writes LSE when `lse` is
 * non-null. */
attn_status attn_forward(attn_module *module, const attn_tensor *q,
                         const attn_tensor *k, const attn_tensor *v,
                         const attn_tensor *o, const attn_tensor *lse,
                         const attn_options *options, void *stream);

/* Split-KV decode (Flash-Decoding): partial kernel over `num_splits` chunks
 * of the keys, then the combine kernel. num_splits <= 0 picks the count from
 * the shape and the device's SM count. `workspace` is device memory of at
 * least attn_decode_workspace_size() bytes. */
int64_t attn_decode_workspace_size(const attn_tensor *q, const attn_tensor *v,
                                   int64_t num_splits);
attn_status attn_decode(attn_module *module, const attn_tensor *q,
                        const attn_tensor *k, const attn_tensor *v,
                        const attn_tensor *o, const attn_tensor *lse,
                        const attn_options *options, int64_t num_splits,
                        void *workspace, int64_t workspace_bytes,
                        void *stream);

/* The split count attn_decode uses for num_splits <= 0 (for tests). */
int64_t attn_decode_default_splits(attn_module *module, const attn_tensor *q,
                                   const attn_tensor *k);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_RUNTIME_ATTN_RUNTIME_H */
