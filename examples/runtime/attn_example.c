/*===- attn_example.c - run attn's generated kernels from C ---------------===//
 *
 * A complete application of attn_runtime.h: it makes a CUDA context, loads
 * the manifest and PTX that attn's compiler wrote, fills Q, K, V with random
 * values on the host, runs attn_forward (or attn_decode) on the device, and
 * checks O and LSE against a float64 reference computed on the CPU.
 *
 *   attn_example MANIFEST [--dtype bf16|f16|f32] [--causal none|top_left|
 *       bottom_right] [--window W] [--layout bhsd|bshd] [--decode]
 *       [--splits N] [--shape B,Hq,Hkv,Sq,Sk,D] [--seed S]
 *
 * Prints the errors and PASS or FAIL; exits 0 on PASS, 1 on FAIL, 2 when the
 * runtime or CUDA reports an error (the message says which).
 *===----------------------------------------------------------------------===*/

#include "attn-runtime/attn_runtime.h"

#include <cuda.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Relative norm error ||O - ref|| / ||ref|| allowed per dtype, and the
 * absolute LSE error (LSE is f32 in every case). */
static double tolerance(attn_dtype dtype) {
  return dtype == ATTN_BF16 ? 1e-2 : dtype == ATTN_F16 ? 2e-3 : 1e-4;
}
static const double kLseTolerance = 1e-3;

/*===----------------------------------------------------------------------===
 * Element types on the host
 *===----------------------------------------------------------------------===*/

static uint32_t bitsOf(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof(x));
  return x;
}

static float floatOf(uint32_t x) {
  float f;
  memcpy(&f, &x, sizeof(f));
  return f;
}

/* float -> bf16, round to nearest even. */
static uint16_t toBf16(float f) {
  uint32_t x = bitsOf(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return 0x7fc0;
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static float fromBf16(uint16_t h) { return floatOf((uint32_t)h << 16); }

/* float -> IEEE half, round to nearest even (subnormals included). */
static uint16_t toF16(float f) {
  uint32_t x = bitsOf(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exponent = (x >> 23) & 0xffu;
  uint32_t mantissa = x & 0x7fffffu;
  if (exponent == 0xff)
    return (uint16_t)(sign | 0x7c00u | (mantissa ? 0x200u : 0));
  int e = (int)exponent - 127 + 15;
  if (e >= 31)
    return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10)
      return (uint16_t)sign;
    mantissa |= 0x800000u;
    int shift = 14 - e;
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t middle = 1u << (shift - 1);
    if (rest > middle || (rest == middle && (half & 1u)))
      ++half;
    return (uint16_t)(sign | half);
  }
  uint32_t half = sign | ((uint32_t)e << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
    ++half; /* a carry into the exponent is the right rounding */
  return (uint16_t)half;
}

static float fromF16(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    float f = ldexpf((float)mantissa, -24);
    return sign ? -f : f;
  }
  if (exponent == 31)
    return floatOf(sign | 0x7f800000u | (mantissa << 13));
  return floatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

static size_t elementSize(attn_dtype dtype) {
  return dtype == ATTN_F32 ? 4 : 2;
}

static const char *dtypeName(attn_dtype dtype) {
  return dtype == ATTN_BF16 ? "bf16" : dtype == ATTN_F16 ? "f16" : "f32";
}

/* Stores `value` as element `i` of `bytes`; returns the value stored, which
 * the reference then uses. */
static double store(attn_dtype dtype, void *bytes, size_t i, float value) {
  if (dtype == ATTN_F32) {
    ((float *)bytes)[i] = value;
    return value;
  }
  uint16_t h = dtype == ATTN_BF16 ? toBf16(value) : toF16(value);
  ((uint16_t *)bytes)[i] = h;
  return dtype == ATTN_BF16 ? fromBf16(h) : fromF16(h);
}

static double load(attn_dtype dtype, const void *bytes, size_t i) {
  if (dtype == ATTN_F32)
    return ((const float *)bytes)[i];
  uint16_t h = ((const uint16_t *)bytes)[i];
  return dtype == ATTN_BF16 ? fromBf16(h) : fromF16(h);
}

/*===----------------------------------------------------------------------===
 * Random inputs and tensors
 *===----------------------------------------------------------------------===*/

static uint64_t rngState = 0x9e3779b97f4a7c15ull;

static double uniform(void) {
  rngState ^= rngState << 13;
  rngState ^= rngState >> 7;
  rngState ^= rngState << 17;
  return ((rngState >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static float normal(void) {
  double u = uniform(), v = uniform();
  return (float)(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
}

/* A host tensor in logical order [B, H, S, D], stored as BHSD or BSHD. */
typedef struct HostTensor {
  attn_tensor desc; /* data is the device pointer once allocated */
  void *bytes;      /* the stored bits */
  double *values;   /* the same values in logical (BHSD) order */
  size_t count;
} HostTensor;

static void makeTensor(HostTensor *t, attn_dtype dtype, int64_t b, int64_t h,
                       int64_t s, int64_t d, int bshd) {
  memset(t, 0, sizeof(*t));
  t->count = (size_t)(b * h * s * d);
  t->bytes = calloc(t->count, elementSize(dtype));
  t->values = calloc(t->count, sizeof(double));
  attn_tensor desc = {NULL, dtype, 4, {b, h, s, d}, {0, 0, 0, 1}};
  if (bshd) {
    desc.strides[0] = s * h * d;
    desc.strides[1] = d;
    desc.strides[2] = h * d;
  } else {
    desc.strides[0] = h * s * d;
    desc.strides[1] = s * d;
    desc.strides[2] = d;
  }
  t->desc = desc;
}

/* The storage index of logical element (b, h, s, d). */
static size_t offsetOf(const attn_tensor *t, int64_t b, int64_t h, int64_t s,
                       int64_t d) {
  return (size_t)(b * t->strides[0] + h * t->strides[1] + s * t->strides[2] +
                  d);
}

static void fillRandom(HostTensor *t) {
  const int64_t *n = t->desc.shape;
  size_t logical = 0;
  for (int64_t b = 0; b < n[0]; ++b)
    for (int64_t h = 0; h < n[1]; ++h)
      for (int64_t s = 0; s < n[2]; ++s)
        for (int64_t d = 0; d < n[3]; ++d)
          t->values[logical++] =
              store(t->desc.dtype, t->bytes, offsetOf(&t->desc, b, h, s, d),
                    normal());
}

static void freeTensor(HostTensor *t) {
  free(t->bytes);
  free(t->values);
}

/*===----------------------------------------------------------------------===
 * The float64 reference
 *===----------------------------------------------------------------------===*/

typedef struct Problem {
  int64_t B, Hq, Hkv, Sq, Sk, D;
  attn_dtype dtype;
  attn_causal causal;
  int64_t window;
  float scale;
} Problem;

/* O [B, Hq, Sq, D] and LSE [B, Hq, Sq] in logical order. */
static void reference(const Problem *p, const HostTensor *q,
                      const HostTensor *k, const HostTensor *v, double *o,
                      double *lse) {
  double scale = p->scale > 0 ? p->scale : 1.0 / sqrt((double)p->D);
  double *s = malloc(sizeof(double) * (size_t)p->Sk);
  int64_t group = p->Hq / p->Hkv;
  for (int64_t b = 0; b < p->B; ++b)
    for (int64_t h = 0; h < p->Hq; ++h)
      for (int64_t i = 0; i < p->Sq; ++i) {
        int64_t kh = h / group;
        int64_t diag =
            p->causal == ATTN_CAUSAL_TOP_LEFT ? i : i + p->Sk - p->Sq;
        const double *qi = q->values + ((b * p->Hq + h) * p->Sq + i) * p->D;
        double m = -INFINITY;
        for (int64_t j = 0; j < p->Sk; ++j) {
          int visible = 1;
          if (p->causal != ATTN_CAUSAL_NONE)
            visible = j <= diag && (p->window < 0 || j >= diag - p->window);
          s[j] = -INFINITY;
          if (!visible)
            continue;
          const double *kj = k->values + ((b * p->Hkv + kh) * p->Sk + j) * p->D;
          double dot = 0;
          for (int64_t d = 0; d < p->D; ++d)
            dot += qi[d] * kj[d];
          s[j] = scale * dot;
          if (s[j] > m)
            m = s[j];
        }
        double *oi = o + ((b * p->Hq + h) * p->Sq + i) * p->D;
        size_t row = (size_t)((b * p->Hq + h) * p->Sq + i);
        for (int64_t d = 0; d < p->D; ++d)
          oi[d] = 0;
        if (m == -INFINITY) { /* no visible key: O = 0, LSE = -inf */
          lse[row] = -INFINITY;
          continue;
        }
        double l = 0;
        for (int64_t j = 0; j < p->Sk; ++j) {
          if (s[j] == -INFINITY)
            continue;
          double w = exp(s[j] - m);
          l += w;
          const double *vj = v->values + ((b * p->Hkv + kh) * p->Sk + j) * p->D;
          for (int64_t d = 0; d < p->D; ++d)
            oi[d] += w * vj[d];
        }
        for (int64_t d = 0; d < p->D; ++d)
          oi[d] /= l;
        lse[row] = m + log(l);
      }
  free(s);
}

/*===----------------------------------------------------------------------===
 * The application
 *===----------------------------------------------------------------------===*/

#define CHECK_CU(call)                                                         \
  do {                                                                         \
    CUresult result_ = (call);                                                 \
    if (result_ != CUDA_SUCCESS) {                                             \
      const char *name_ = "?";                                                 \
      cuGetErrorName(result_, &name_);                                         \
      fprintf(stderr, "attn_example: %s failed: %s\n", #call, name_);          \
      return 2;                                                                \
    }                                                                          \
  } while (0)

static int usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s MANIFEST [--dtype bf16|f16|f32] [--causal "
          "none|top_left|bottom_right] [--window W] [--layout bhsd|bshd] "
          "[--decode] [--splits N] [--shape B,Hq,Hkv,Sq,Sk,D] [--seed S]\n",
          argv0);
  return 2;
}

static CUresult upload(HostTensor *t, CUdeviceptr *ptr) {
  size_t bytes = t->count * elementSize(t->desc.dtype);
  CUresult r = cuMemAlloc(ptr, bytes);
  if (r != CUDA_SUCCESS)
    return r;
  t->desc.data = (void *)(uintptr_t)*ptr;
  return cuMemcpyHtoD(*ptr, t->bytes, bytes);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return usage(argv[0]);
  const char *manifest = argv[1];
  Problem p = {2, 8, 2, 300, 517, 128, ATTN_BF16, ATTN_CAUSAL_NONE, -1, 0};
  int bshd = 0, decode = 0, shapeGiven = 0;
  int64_t splits = 0;
  for (int i = 2; i < argc; ++i) {
    const char *arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(arg, "--decode")) {
      decode = 1;
      continue;
    }
    if (!value)
      return usage(argv[0]);
    ++i;
    if (!strcmp(arg, "--dtype")) {
      if (!strcmp(value, "bf16"))
        p.dtype = ATTN_BF16;
      else if (!strcmp(value, "f16"))
        p.dtype = ATTN_F16;
      else if (!strcmp(value, "f32"))
        p.dtype = ATTN_F32;
      else
        return usage(argv[0]);
    } else if (!strcmp(arg, "--causal")) {
      if (!strcmp(value, "none"))
        p.causal = ATTN_CAUSAL_NONE;
      else if (!strcmp(value, "top_left"))
        p.causal = ATTN_CAUSAL_TOP_LEFT;
      else if (!strcmp(value, "bottom_right"))
        p.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
      else
        return usage(argv[0]);
    } else if (!strcmp(arg, "--window")) {
      p.window = atoll(value);
    } else if (!strcmp(arg, "--layout")) {
      if (strcmp(value, "bhsd") && strcmp(value, "bshd"))
        return usage(argv[0]);
      bshd = !strcmp(value, "bshd");
    } else if (!strcmp(arg, "--splits")) {
      splits = atoll(value);
    } else if (!strcmp(arg, "--seed")) {
      rngState ^= (uint64_t)atoll(value) * 0x2545f4914f6cdd1dull;
    } else if (!strcmp(arg, "--shape")) {
      long long s[6];
      if (sscanf(value, "%lld,%lld,%lld,%lld,%lld,%lld", &s[0], &s[1], &s[2],
                 &s[3], &s[4], &s[5]) != 6)
        return usage(argv[0]);
      p.B = s[0], p.Hq = s[1], p.Hkv = s[2], p.Sq = s[3], p.Sk = s[4],
      p.D = s[5];
      shapeGiven = 1;
    } else {
      return usage(argv[0]);
    }
  }
  if (decode && !shapeGiven) {
    p.B = 4, p.Hq = 32, p.Hkv = 8, p.Sq = 1, p.Sk = 5000;
  }
  if (p.B < 1 || p.Hq < 1 || p.Hkv < 1 || p.Sq < 1 || p.Sk < 1 || p.D < 1 ||
      p.Hq % p.Hkv) {
    fprintf(stderr, "attn_example: bad shape\n");
    return 2;
  }

  /* A context of our own: the runtime loads into the current one. */
  CUdevice device;
  CUcontext context;
  char name[256];
  int sms = 0, major = 0, minor = 0;
  CHECK_CU(cuInit(0));
  CHECK_CU(cuDeviceGet(&device, 0));
  CHECK_CU(cuDevicePrimaryCtxRetain(&context, device));
  CHECK_CU(cuCtxSetCurrent(context));
  CHECK_CU(cuDeviceGetName(name, sizeof(name), device));
  cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
  cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                       device);
  cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                       device);
  printf("device: %s (sm_%d%d, %d SMs)\n", name, major, minor, sms);

  attn_module *module = NULL;
  if (attn_module_load(manifest, &module) != ATTN_OK) {
    fprintf(stderr, "attn_example: %s\n", attn_last_error());
    return 2;
  }

  HostTensor q, k, v, o;
  makeTensor(&q, p.dtype, p.B, p.Hq, p.Sq, p.D, bshd);
  makeTensor(&k, p.dtype, p.B, p.Hkv, p.Sk, p.D, bshd);
  makeTensor(&v, p.dtype, p.B, p.Hkv, p.Sk, p.D, bshd);
  makeTensor(&o, p.dtype, p.B, p.Hq, p.Sq, p.D, bshd);
  fillRandom(&q);
  fillRandom(&k);
  fillRandom(&v);
  size_t rows = (size_t)(p.B * p.Hq * p.Sq);
  float *lseHost = calloc(rows, sizeof(float));

  CUdeviceptr dq, dk, dv, dO, dLse, dWorkspace = 0;
  CHECK_CU(upload(&q, &dq));
  CHECK_CU(upload(&k, &dk));
  CHECK_CU(upload(&v, &dv));
  size_t oBytes = o.count * elementSize(p.dtype);
  CHECK_CU(cuMemAlloc(&dO, oBytes));
  CHECK_CU(cuMemAlloc(&dLse, rows * sizeof(float)));
  /* Poison the outputs (all-ones bits are NaN in every dtype) so a kernel
   * that skips an element cannot pass. */
  CHECK_CU(cuMemsetD8(dO, 0xff, oBytes));
  CHECK_CU(cuMemsetD8(dLse, 0xff, rows * sizeof(float)));
  o.desc.data = (void *)(uintptr_t)dO;
  attn_tensor lse = {(void *)(uintptr_t)dLse,
                     ATTN_F32,
                     3,
                     {p.B, p.Hq, p.Sq, 0},
                     {p.Hq * p.Sq, p.Sq, 1, 0}};
  attn_options options = {p.scale, p.causal, p.window, NULL, 0,
                          NULL,    NULL,     NULL,     0,        0};

  printf("%s %s B=%lld Hq=%lld Hkv=%lld Sq=%lld Sk=%lld D=%lld causal=%s "
         "window=%lld layout=%s\n",
         decode ? "decode" : "forward", dtypeName(p.dtype), (long long)p.B,
         (long long)p.Hq, (long long)p.Hkv, (long long)p.Sq, (long long)p.Sk,
         (long long)p.D,
         p.causal == ATTN_CAUSAL_NONE       ? "none"
         : p.causal == ATTN_CAUSAL_TOP_LEFT ? "top_left"
                                            : "bottom_right",
         (long long)p.window, bshd ? "bshd" : "bhsd");
  attn_status status;
  if (decode) {
    int64_t n = 0;
    int64_t bytes = -1;
    if (attn_decode_splits(module, &q.desc, &k.desc, &v.desc, &options, splits,
                           &n) == ATTN_OK)
      bytes = attn_decode_workspace_size(&q.desc, &v.desc, n);
    if (bytes < 0) {
      fprintf(stderr, "attn_example: %s\n", attn_last_error());
      return 2;
    }
    printf("splits: %lld (requested %lld), workspace: %lld bytes\n",
           (long long)n, (long long)splits, (long long)bytes);
    CHECK_CU(cuMemAlloc(&dWorkspace, (size_t)bytes));
    status =
        attn_decode(module, &q.desc, &k.desc, &v.desc, &o.desc, &lse, &options,
                    splits, (void *)(uintptr_t)dWorkspace, bytes, NULL);
  } else {
    status = attn_forward(module, &q.desc, &k.desc, &v.desc, &o.desc, &lse,
                          &options, NULL);
  }
  if (status != ATTN_OK) {
    fprintf(stderr, "attn_example: %s\n", attn_last_error());
    return 2;
  }
  CHECK_CU(cuCtxSynchronize());
  CHECK_CU(cuMemcpyDtoH(o.bytes, dO, oBytes));
  CHECK_CU(cuMemcpyDtoH(lseHost, dLse, rows * sizeof(float)));

  double *ref = malloc(sizeof(double) * o.count);
  double *refLse = malloc(sizeof(double) * rows);
  reference(&p, &q, &k, &v, ref, refLse);

  double maxError = 0, errorSq = 0, refSq = 0, lseError = 0;
  size_t bad = 0, logical = 0;
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t h = 0; h < p.Hq; ++h)
      for (int64_t i = 0; i < p.Sq; ++i) {
        for (int64_t d = 0; d < p.D; ++d, ++logical) {
          double got = load(p.dtype, o.bytes, offsetOf(&o.desc, b, h, i, d));
          double want = ref[logical];
          if (!isfinite(got)) {
            ++bad;
            continue;
          }
          double e = fabs(got - want);
          maxError = e > maxError ? e : maxError;
          errorSq += e * e;
          refSq += want * want;
        }
        size_t row = (size_t)((b * p.Hq + h) * p.Sq + i);
        double got = lseHost[row], want = refLse[row];
        if (isinf(want) && want < 0) {
          if (!(isinf(got) && got < 0))
            ++bad;
        } else if (!isfinite(got)) {
          ++bad;
        } else if (fabs(got - want) > lseError) {
          lseError = fabs(got - want);
        }
      }
  double relative = refSq > 0 ? sqrt(errorSq / refSq) : sqrt(errorSq);
  printf("max |O - ref| = %.3e, ||O - ref|| / ||ref|| = %.3e (tolerance "
         "%.0e), max |LSE - ref| = %.3e (tolerance %.0e), non-finite or "
         "wrong -inf: %zu\n",
         maxError, relative, tolerance(p.dtype), lseError, kLseTolerance, bad);
  int pass =
      bad == 0 && relative <= tolerance(p.dtype) && lseError <= kLseTolerance;
  printf("%s\n", pass ? "PASS" : "FAIL");

  free(ref);
  free(refLse);
  free(lseHost);
  freeTensor(&q);
  freeTensor(&k);
  freeTensor(&v);
  freeTensor(&o);
  cuMemFree(dq);
  cuMemFree(dk);
  cuMemFree(dv);
  cuMemFree(dO);
  cuMemFree(dLse);
  if (dWorkspace)
    cuMemFree(dWorkspace);
  attn_module_destroy(module);
  cuDevicePrimaryCtxRelease(device);
  return pass ? 0 : 1;
}
