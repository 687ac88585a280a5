//===- CudaDriver.h - the CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// The runtime opens libcuda.so.1 with dlopen on first use instead of linking
// it: a program that links attn_runtime starts on a machine without a GPU
// driver (CI, a login node), checks arguments and manifests there, and gets
// ATTN_ERROR_CUDA with a message from attn_module_load.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_CUDADRIVER_H
#define ATTN_LIB_RUNTIME_CUDADRIVER_H

#include <cuda.h>

#include <string>

namespace attn::runtime {

// The driver entry points the runtime calls. cuda.h maps some names to
// versioned symbols (cuCtxPushCurrent -> cuCtxPushCurrent_v2); the members
// and the looked-up symbols follow the same mapping.
#define ATTN_CUDA_DRIVER_FUNCTIONS(X)                                          \
  X(cuInit)                                                                    \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuCtxGetCurrent)                                                           \
  X(cuCtxGetDevice)                                                            \
  X(cuCtxPushCurrent)                                                          \
  X(cuCtxPopCurrent)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDeviceGetName)                                                           \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncGetAttribute)                                                        \
  X(cuFuncSetAttribute)                                                        \
  X(cuLaunchKernel)

struct CudaDriver {
#define ATTN_CUDA_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  ATTN_CUDA_DRIVER_FUNCTIONS(ATTN_CUDA_DRIVER_MEMBER)
#undef ATTN_CUDA_DRIVER_MEMBER
  /// CUDA 12.4+; null on older drivers (the parameter check is skipped).
  decltype(&::cuFuncGetParamInfo) funcGetParamInfo = nullptr;
  /// CUDA 12.0+; null on older drivers, which cannot launch kernels that
  /// take tensor maps.
  decltype(&::cuTensorMapEncodeTiled) tensorMapEncodeTiled = nullptr;
  /// What the checked mode (ATTN_RUNTIME_CHECK=1) reads the index tensors
  /// back with; null when the driver lacks them (then only that mode fails).
  decltype(&::cuMemcpyDtoHAsync) memcpyDtoHAsync = nullptr;
  decltype(&::cuStreamSynchronize) streamSynchronize = nullptr;
  /// CUDA 10.0+; null: the checked mode cannot tell a capturing stream.
  decltype(&::cuStreamIsCapturing) streamIsCapturing = nullptr;

  /// "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)".
  std::string errorString(CUresult result) const;
};

/// The driver, opened and initialized (cuInit) on first use. Null, with
/// ATTN_ERROR_CUDA and a message as the last error, when that failed.
const CudaDriver *cudaDriver();

} // namespace attn::runtime

#endif // ATTN_LIB_RUNTIME_CUDADRIVER_H
