//===- CudaDriver.cpp - the CUDA driver API, loaded at run time -----------===//

#include "CudaDriver.h"

#include "Error.h"

#include <dlfcn.h>

namespace attn::runtime {

#define ATTN_STRINGIFY_EXPANDED(x) ATTN_STRINGIFY(x)
#define ATTN_STRINGIFY(x) #x

namespace {

/// Names for the codes a driver that cannot name them (the toolkit's stub
/// library) returns while loading.
const char *fallbackErrorName(CUresult result) {
  switch (result) {
  case CUDA_ERROR_STUB_LIBRARY:
    return "CUDA_ERROR_STUB_LIBRARY";
  case CUDA_ERROR_NO_DEVICE:
    return "CUDA_ERROR_NO_DEVICE";
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
  case CUDA_ERROR_NOT_INITIALIZED:
    return "CUDA_ERROR_NOT_INITIALIZED";
  default:
    return "CUDA_ERROR_?";
  }
}

} // namespace

std::string CudaDriver::errorString(CUresult result) const {
  const char *name = nullptr;
  const char *text = nullptr;
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = fallbackErrorName(result);
  if (cuGetErrorString(result, &text) != CUDA_SUCCESS || !text)
    text = result == CUDA_ERROR_STUB_LIBRARY
               ? "the CUDA toolkit's stub libcuda was loaded, not a driver"
               : "no description";
  return std::string(name) + " (" + text + ") [" + std::to_string(result) + "]";
}

namespace {

struct LoadedDriver {
  CudaDriver driver;
  std::string error; // empty when usable

  LoadedDriver() {
    void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *why = dlerror();
      error = std::string("cannot load the CUDA driver: ") +
              (why ? why : "libcuda.so.1 not found") +
              "; is an NVIDIA driver installed on this machine?";
      return;
    }
#define ATTN_CUDA_DRIVER_LOAD(name)                                            \
  driver.name = reinterpret_cast<decltype(driver.name)>(                       \
      dlsym(handle, ATTN_STRINGIFY_EXPANDED(name)));                           \
  if (!driver.name) {                                                          \
    error = "the CUDA driver has no symbol " ATTN_STRINGIFY_EXPANDED(          \
        name) "; it is too old for this runtime";                              \
    return;                                                                    \
  }
    ATTN_CUDA_DRIVER_FUNCTIONS(ATTN_CUDA_DRIVER_LOAD)
#undef ATTN_CUDA_DRIVER_LOAD
    driver.funcGetParamInfo = reinterpret_cast<decltype(&::cuFuncGetParamInfo)>(
        dlsym(handle, "cuFuncGetParamInfo"));
    driver.tensorMapEncodeTiled =
        reinterpret_cast<decltype(&::cuTensorMapEncodeTiled)>(
            dlsym(handle, "cuTensorMapEncodeTiled"));
    driver.memcpyDtoHAsync = reinterpret_cast<decltype(&::cuMemcpyDtoHAsync)>(
        dlsym(handle, ATTN_STRINGIFY_EXPANDED(cuMemcpyDtoHAsync)));
    driver.streamSynchronize =
        reinterpret_cast<decltype(&::cuStreamSynchronize)>(
            dlsym(handle, ATTN_STRINGIFY_EXPANDED(cuStreamSynchronize)));
    driver.streamIsCapturing =
        reinterpret_cast<decltype(&::cuStreamIsCapturing)>(
            dlsym(handle, ATTN_STRINGIFY_EXPANDED(cuStreamIsCapturing)));
    // The handle stays open for the life of the process.
    CUresult result = driver.cuInit(0);
    if (result != CUDA_SUCCESS)
      error = "cuInit failed: " + driver.errorString(result);
  }
};

} // namespace

const CudaDriver *cudaDriver() {
  static LoadedDriver loaded;
  if (!loaded.error.empty()) {
    fail(ATTN_ERROR_CUDA, loaded.error);
    return nullptr;
  }
  return &loaded.driver;
}

} // namespace attn::runtime
