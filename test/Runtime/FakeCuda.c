/*===- FakeCuda.c - a CUDA driver that only records what it is asked -----===//
 *
 * Built as libcuda.so.1 in its own folder; with that folder on
 * LD_LIBRARY_PATH the runtime's dlopen finds it instead of a driver, so the
 * tests drive attn_module_load and the launches on a machine without a GPU.
 * It reads each .entry's parameters from the PTX it is given (so
 * cuFuncGetParamInfo reports what the PTX declares: 128 bytes for a tensor
 * map, `.param .align 64 .b8 NAME[128]`), cuTensorMapEncodeTiled prints its
 * arguments and numbers the maps it makes, and cuLaunchKernel prints the
 * launch and every parameter word (a tensor map as `tmap#N`) instead of
 * running anything.
 *
 * Environment: FAKE_CUDA_NO_CONTEXT=1 (no current context), FAKE_CUDA_SM
 * (compute capability, default 90), FAKE_CUDA_SMS (SM count, default 132),
 * FAKE_CUDA_JIT_ERROR=1 (cuModuleLoadDataEx fails with a log),
 * FAKE_CUDA_MAX_THREADS (per kernel, default 1024), FAKE_CUDA_ENCODE_ERROR=1
 * (cuTensorMapEncodeTiled fails), FAKE_CUDA_CAPTURING=1 (cuStreamIsCapturing
 * says every stream is being captured). Built with FAKE_CUDA_NO_TENSOR_MAPS,
 * it has no cuTensorMapEncodeTiled, like a driver older than CUDA 12.
 *
 * Device memory: a test registers host buffers with fakeCudaRegister (found
 * with dlsym), which makes each an allocation whose device address is the
 * buffer's own; cuMemcpyDtoH and cuMemcpyDtoHAsync copy from inside one and
 * print the copy (allocation number, offset, bytes, stream); a copy from
 * anywhere else fails with CUDA_ERROR_INVALID_VALUE. cuStreamSynchronize
 * prints the stream.
 *===----------------------------------------------------------------------===*/

#include <cuda.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KERNELS 256
#define MAX_PARAMS 256

typedef struct FakeFunction {
  char name[128];
  int count;
  size_t sizes[MAX_PARAMS];
} FakeFunction;

static FakeFunction functions[MAX_KERNELS];
static int functionCount;
static int fakeContext, fakeModule;

static int envInt(const char *name, int fallback) {
  const char *v = getenv(name);
  return v ? atoi(v) : fallback;
}

CUresult cuInit(unsigned flags) {
  (void)flags;
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char **name) {
  *name = error == CUDA_ERROR_INVALID_PTX     ? "CUDA_ERROR_INVALID_PTX"
          : error == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE"
                                              : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  (void)error;
  *text = "an error of the fake driver";
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *context) {
  *context = envInt("FAKE_CUDA_NO_CONTEXT", 0) ? NULL : (CUcontext)&fakeContext;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device) {
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext context) {
  (void)context;
  printf("fake-cuda: push context\n");
  return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *context) {
  *context = (CUcontext)&fakeContext;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                              CUdevice device) {
  (void)device;
  int sm = envInt("FAKE_CUDA_SM", 90);
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = sm / 10;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = sm % 10;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = envInt("FAKE_CUDA_SMS", 132);
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *value = 227 * 1024;
    break;
  default:
    *value = 0;
  }
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int length, CUdevice device) {
  (void)device;
  snprintf(name, (size_t)length, "Fake GPU");
  return CUDA_SUCCESS;
}

/* The parameters of each .entry: ".param .u64 name" and the like, or
 * ".param .align A .b8 name[N]". */
static void readEntries(const char *ptx) {
  functionCount = 0;
  const char *p = ptx;
  while ((p = strstr(p, ".entry")) && functionCount < MAX_KERNELS) {
    p += 6;
    while (*p == ' ' || *p == '\t')
      ++p;
    FakeFunction *f = &functions[functionCount++];
    size_t n = strcspn(p, "( \t\n");
    if (n >= sizeof(f->name))
      n = sizeof(f->name) - 1;
    memcpy(f->name, p, n);
    f->name[n] = '\0';
    f->count = 0;
    const char *end = strchr(p, ')');
    const char *q = p;
    while ((q = strstr(q, ".param")) && end && q < end &&
           f->count < MAX_PARAMS) {
      q += 6;
      size_t size = 8;
      if (!strncmp(q, " .f32", 5) || !strncmp(q, " .u32", 5) ||
          !strncmp(q, " .b32", 5) || !strncmp(q, " .s32", 5))
        size = 4;
      const char *bracket = strchr(q, '[');
      const char *line = strchr(q, '\n');
      if (bracket && (!line || bracket < line))
        size = (size_t)atoi(bracket + 1);
      f->sizes[f->count++] = size;
    }
  }
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned count,
                            CUjit_option *options, void **values) {
  if (envInt("FAKE_CUDA_JIT_ERROR", 0)) {
    for (unsigned i = 0; i < count; ++i)
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
        strcpy((char *)values[i], "ptxas fatal   : fake syntax error");
    return CUDA_ERROR_INVALID_PTX;
  }
  readEntries((const char *)image);
  *module = (CUmodule)&fakeModule;
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule module) {
  (void)module;
  printf("fake-cuda: unload\n");
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module,
                             const char *name) {
  (void)module;
  for (int i = 0; i < functionCount; ++i)
    if (!strcmp(functions[i].name, name)) {
      *function = (CUfunction)&functions[i];
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}

CUresult cuFuncGetParamInfo(CUfunction function, size_t index, size_t *offset,
                            size_t *size) {
  FakeFunction *f = (FakeFunction *)function;
  if (index >= (size_t)f->count)
    return CUDA_ERROR_INVALID_VALUE;
  *offset = 0;
  if (size)
    *size = f->sizes[index];
  return CUDA_SUCCESS;
}

CUresult cuFuncGetAttribute(int *value, CUfunction_attribute attribute,
                            CUfunction function) {
  (void)function;
  *value = attribute == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
               ? envInt("FAKE_CUDA_MAX_THREADS", 1024)
           : attribute == CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
               ? envInt("FAKE_CUDA_STATIC_SMEM", 0)
               : 0;
  return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute,
                            int value) {
  FakeFunction *f = (FakeFunction *)function;
  printf("fake-cuda: %s attribute %d = %d\n", f->name, (int)attribute, value);
  return CUDA_SUCCESS;
}

/* The first word of the maps cuTensorMapEncodeTiled makes: "tmap" and the
 * map's number. */
#define TMAP_MAGIC 0x746d617000000000ull

#ifndef FAKE_CUDA_NO_TENSOR_MAPS
static int tensorMapCount;

static void printList(const char *name, const void *values, int count,
                      int bits) {
  printf(" %s=[", name);
  for (int i = 0; i < count; ++i) {
    unsigned long long v = bits == 64 ? ((const cuuint64_t *)values)[i]
                                      : ((const cuuint32_t *)values)[i];
    printf("%s%llu", i ? ", " : "", v);
  }
  printf("]");
}

static const char *dataTypeName(CUtensorMapDataType type) {
  switch (type) {
  case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    return "f16";
  case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
    return "bf16";
  case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    return "f32";
  default:
    return "other";
  }
}

/* Prints the arguments, checks what the driver documents (returning
 * CUDA_ERROR_INVALID_VALUE as it does), and fills the map with its number
 * and arguments. */
CUresult cuTensorMapEncodeTiled(
    CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
    const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
    const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
    CUtensorMapFloatOOBfill oobFill) {
  static const char *swizzles[] = {"none", "32B", "64B", "128B"};
  static const char *promotions[] = {"none", "64B", "128B", "256B"};
  printf("fake-cuda: encode %s rank=%u address=%p", dataTypeName(type), rank,
         address);
  printList("dims", dims, (int)rank, 64);
  printList("strides", strides, (int)rank - 1, 64);
  printList("box", box, (int)rank, 32);
  printList("element_strides", elementStrides, (int)rank, 32);
  printf(" interleave=%s swizzle=%s l2=%s oob=%s\n",
         interleave == CU_TENSOR_MAP_INTERLEAVE_NONE ? "none" : "other",
         (unsigned)swizzle < 4 ? swizzles[swizzle] : "other",
         (unsigned)l2 < 4 ? promotions[l2] : "other",
         oobFill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE ? "zero" : "nan");
  size_t elementBytes = type == CU_TENSOR_MAP_DATA_TYPE_FLOAT32 ? 4 : 2;
  size_t swizzleBytes = swizzle ? (size_t)16 << swizzle : 0;
  const char *bad = NULL;
  if ((uintptr_t)map % 64)
    bad = "map not 64-byte aligned";
  else if (rank < 1 || rank > 5)
    bad = "rank";
  else if ((uintptr_t)address % 16)
    bad = "address not 16-byte aligned";
  for (cuuint32_t i = 0; !bad && i < rank; ++i)
    if (dims[i] < 1 || dims[i] > (1ull << 32))
      bad = "dim not in [1, 2^32]";
    else if (i + 1 < rank && (strides[i] % 16 || strides[i] >= (1ull << 40)))
      bad = "stride not a multiple of 16 below 2^40";
    else if (box[i] < 1 || box[i] > 256)
      bad = "box not in [1, 256]";
    else if (elementStrides[i] < 1 || elementStrides[i] > 8)
      bad = "element stride not in [1, 8]";
  if (!bad && (box[0] * elementBytes) % 16)
    bad = "box row not a multiple of 16 bytes";
  if (!bad && swizzleBytes && box[0] * elementBytes > swizzleBytes)
    bad = "box row wider than the swizzle";
  if (!bad && envInt("FAKE_CUDA_ENCODE_ERROR", 0))
    bad = "FAKE_CUDA_ENCODE_ERROR";
  if (bad) {
    printf("fake-cuda: encode rejected: %s\n", bad);
    return CUDA_ERROR_INVALID_VALUE;
  }
  memset(map, 0, sizeof(*map));
  map->opaque[0] = TMAP_MAGIC | (cuuint64_t)++tensorMapCount;
  map->opaque[1] = (cuuint64_t)(uintptr_t)address;
  for (cuuint32_t i = 0; i < rank && i < 4; ++i)
    map->opaque[2 + i] = dims[i];
  return CUDA_SUCCESS;
}
#endif

#define MAX_ALLOCATIONS 64

typedef struct FakeAllocation {
  uintptr_t begin;
  size_t bytes;
} FakeAllocation;

static FakeAllocation allocations[MAX_ALLOCATIONS];
static int allocationCount;

/* Makes [host, host + bytes) device memory at the same address; returns its
 * number (from 1), or 0 when the table is full. Not a CUDA entry point. */
int fakeCudaRegister(const void *host, size_t bytes) {
  if (allocationCount == MAX_ALLOCATIONS)
    return 0;
  allocations[allocationCount].begin = (uintptr_t)host;
  allocations[allocationCount].bytes = bytes;
  return ++allocationCount;
}

static CUresult copyToHost(void *host, CUdeviceptr device, size_t bytes,
                           CUstream stream, int async) {
  for (int i = 0; i < allocationCount; ++i) {
    FakeAllocation *a = &allocations[i];
    if (device < a->begin || device - a->begin > a->bytes ||
        bytes > a->bytes - (device - a->begin))
      continue;
    printf("fake-cuda: copy%s allocation#%d+%llu bytes=%zu",
           async ? " async" : "", i + 1,
           (unsigned long long)(device - a->begin), bytes);
    if (async)
      printf(" stream=%p", (void *)stream);
    printf("\n");
    memcpy(host, (const void *)(uintptr_t)device, bytes);
    return CUDA_SUCCESS;
  }
  printf("fake-cuda: copy from unregistered device memory 0x%llx bytes=%zu\n",
         (unsigned long long)device, bytes);
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemcpyDtoH_v2(void *host, CUdeviceptr device, size_t bytes) {
  return copyToHost(host, device, bytes, NULL, 0);
}

CUresult cuMemcpyDtoHAsync_v2(void *host, CUdeviceptr device, size_t bytes,
                              CUstream stream) {
  return copyToHost(host, device, bytes, stream, 1);
}

CUresult cuStreamSynchronize(CUstream stream) {
  printf("fake-cuda: synchronize stream=%p\n", (void *)stream);
  return CUDA_SUCCESS;
}

CUresult cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus *status) {
  (void)stream;
  *status = envInt("FAKE_CUDA_CAPTURING", 0) ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                                             : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction function, unsigned gx, unsigned gy,
                        unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, CUstream stream, void **params,
                        void **extra) {
  (void)extra;
  FakeFunction *f = (FakeFunction *)function;
  printf("fake-cuda: launch %s grid=(%u, %u, %u) block=(%u, %u, %u) "
         "smem=%u stream=%p params=%d\n",
         f->name, gx, gy, gz, bx, by, bz, smem, (void *)stream, f->count);
  printf("fake-cuda:  ");
  for (int i = 0; i < f->count; ++i) {
    if (f->sizes[i] == 4) {
      float x;
      memcpy(&x, params[i], 4);
      printf(" %g", (double)x);
    } else if (f->sizes[i] == 128) {
      cuuint64_t first;
      memcpy(&first, params[i], 8);
      if ((first & ~0xffffffffull) == TMAP_MAGIC)
        printf(" tmap#%llu", first & 0xffffffffull);
      else
        printf(" tmap?%llx", first);
      if ((uintptr_t)params[i] % 64)
        printf("(misaligned)");
    } else {
      long long x;
      memcpy(&x, params[i], 8);
      printf(" %lld", x);
    }
  }
  printf("\n");
  return CUDA_SUCCESS;
}
