//===- Runtime.cpp - the C API of attn_runtime.h --------------------------===//
//
// Loads a manifest and its PTX into the current context, and launches the
// plans of Plan.cpp. No C++ exception leaves this file: every entry point
// catches and reports them as a status.
//
//===----------------------------------------------------------------------===//

#include "attn-runtime/attn_runtime.h"

#include "CudaDriver.h"
#include "Error.h"
#include "Manifest.h"
#include "Plan.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <new>
#include <sstream>

using namespace attn::runtime;

struct attn_module {
  Manifest manifest;
  /// The section loaded for the device, in manifest.sections: the only
  /// kernels the module has.
  const ManifestSection *section = nullptr;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  std::vector<CUfunction> functions; // parallel to section->kernels
  int smCount = 0;
  int verbose = 0;
  /// ATTN_RUNTIME_CHECK=1: attn_decode_paged and attn_forward_varlen read
  /// their index tensors back and check them before launching.
  bool check = false;

  CUfunction function(const KernelSpec *kernel) const {
    return functions[static_cast<size_t>(kernel - section->kernels.data())];
  }
};

namespace {

attn_status readFile(const std::string &path, const char *what,
                     std::string &text) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail(ATTN_ERROR_MANIFEST, std::string("cannot read ") + what + " '" +
                                         path + "': " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  text = buffer.str();
  return ATTN_OK;
}

attn_status cudaFailure(const CudaDriver &driver, const std::string &call,
                        CUresult result) {
  return fail(ATTN_ERROR_CUDA, call + " failed: " + driver.errorString(result));
}

/// Makes `context` current for its lifetime if another one is.
class ContextScope {
public:
  ContextScope(const CudaDriver &driver, CUcontext context) : driver(driver) {
    CUcontext current = nullptr;
    if (driver.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == context)
      return;
    status = driver.cuCtxPushCurrent(context);
    pushed = status == CUDA_SUCCESS;
  }
  ~ContextScope() {
    if (pushed) {
      CUcontext popped;
      driver.cuCtxPopCurrent(&popped);
    }
  }
  CUresult status = CUDA_SUCCESS;

private:
  const CudaDriver &driver;
  bool pushed = false;
};

/// Compares the parameters of a compiled kernel with docs/KernelABI.md.
attn_status checkParams(const CudaDriver &driver, const KernelSpec &kernel,
                        CUfunction function) {
  if (!driver.funcGetParamInfo)
    return ATTN_OK;
  std::vector<size_t> expected = abiParamSizes(kernel);
  std::string abi = abiName(kernel);
  std::vector<size_t> sizes;
  CUresult end = CUDA_SUCCESS;
  while (sizes.size() <= expected.size()) {
    size_t offset = 0, size = 0;
    end = driver.funcGetParamInfo(function, sizes.size(), &offset, &size);
    if (end != CUDA_SUCCESS)
      break;
    sizes.push_back(size);
  }
  // An index past the last parameter is CUDA_ERROR_INVALID_VALUE; any other
  // answer means the driver cannot tell, and the check is skipped.
  if (sizes.empty() || (end != CUDA_SUCCESS && end != CUDA_ERROR_INVALID_VALUE))
    return ATTN_OK;
  size_t count = sizes.size();
  for (size_t i = 0; i < count && i < expected.size(); ++i)
    if (sizes[i] != expected[i])
      return failf(ATTN_ERROR_MANIFEST,
                   "kernel '%s' (manifest line %d): parameter %zu has %zu "
                   "bytes, the ABI of %s says %zu (docs/KernelABI.md)",
                   kernel.name.c_str(), kernel.line, i, sizes[i], abi.c_str(),
                   expected[i]);
  if (count != expected.size())
    return failf(ATTN_ERROR_MANIFEST,
                 "kernel '%s' (manifest line %d) has %s%zu parameters, the "
                 "ABI of %s has %zu (docs/KernelABI.md)",
                 kernel.name.c_str(), kernel.line,
                 count > expected.size() ? "more than " : "",
                 count > expected.size() ? expected.size() : count,
                 abi.c_str(), expected.size());
  return ATTN_OK;
}

std::string directoryOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// Reads the PTX file of `section` (relative to the manifest at
/// `manifestPath`) into `ptx` and checks it against the section.
attn_status readPtx(const std::string &manifestPath,
                    const ManifestSection &section, std::string &ptxPath,
                    std::string &ptx) {
  ptxPath = section.ptxFile[0] == '/'
                ? section.ptxFile
                : directoryOf(manifestPath) + "/" + section.ptxFile;
  if (attn_status s = readFile(ptxPath, "PTX", ptx))
    return s;
  return checkPtx(section, ptx, ptxPath);
}

attn_status loadModule(const char *manifestPath, attn_module &m) {
  const std::string path(manifestPath);
  std::string text;
  if (attn_status s = readFile(path, "manifest", text))
    return s;
  if (attn_status s = parseManifest(text, path, m.manifest))
    return s;
  // A manifest of one section leaves no choice: its PTX is read and checked
  // before the driver is touched, so that a machine without one still sees
  // those errors. With several, the device decides which PTX to read.
  std::string ptxPath, ptx;
  if (m.manifest.sections.size() == 1) {
    m.section = &m.manifest.sections.front();
    if (attn_status s = readPtx(path, *m.section, ptxPath, ptx))
      return s;
  }

  const CudaDriver *driver = cudaDriver();
  if (!driver)
    return ATTN_ERROR_CUDA;
  if (CUresult r = driver->cuCtxGetCurrent(&m.context))
    return cudaFailure(*driver, "cuCtxGetCurrent", r);
  if (!m.context)
    return fail(ATTN_ERROR_CUDA,
                "attn_module_load: no current CUDA context on this thread; "
                "make one current first (cuDevicePrimaryCtxRetain + "
                "cuCtxSetCurrent, or any CUDA call of the CUDA runtime or "
                "PyTorch)");
  CUdevice device;
  if (CUresult r = driver->cuCtxGetDevice(&device))
    return cudaFailure(*driver, "cuCtxGetDevice", r);
  int major = 0, minor = 0, optin = 0;
  driver->cuDeviceGetAttribute(
      &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  driver->cuDeviceGetAttribute(
      &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  driver->cuDeviceGetAttribute(
      &m.smCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
  driver->cuDeviceGetAttribute(
      &optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device);
  int deviceSm = major * 10 + minor;
  const ManifestSection *chosen = m.manifest.chooseSection(deviceSm);
  if (!chosen)
    return failf(ATTN_ERROR_MANIFEST,
                 "%s: the kernels target %s, the current device is sm_%d",
                 manifestPath, m.manifest.describeTargets().c_str(), deviceSm);
  if (!m.section) {
    m.section = chosen;
    if (attn_status s = readPtx(path, *m.section, ptxPath, ptx))
      return s;
  }
  char deviceName[128] = "?";
  driver->cuDeviceGetName(deviceName, sizeof(deviceName), device);
  if (m.verbose)
    std::fprintf(stderr,
                 "attn-runtime: %s: the section of target %s (line %d; the "
                 "manifest targets %s) for %s (sm_%d), PTX %s\n",
                 manifestPath, m.section->target.c_str(), m.section->line,
                 m.manifest.describeTargets().c_str(), deviceName, deviceSm,
                 ptxPath.c_str());

  // The JIT's error log is what tells a compiler engineer why PTX failed.
  std::vector<char> log(16384, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {
      log.data(), reinterpret_cast<void *>(static_cast<uintptr_t>(log.size()))};
  if (CUresult r = driver->cuModuleLoadDataEx(&m.module, ptx.c_str(), 2,
                                              options, values)) {
    m.module = nullptr;
    std::string message =
        "cuModuleLoadDataEx(" + ptxPath + ") failed: " + driver->errorString(r);
    if (log[0])
      message += "\n" + std::string(log.data());
    return fail(ATTN_ERROR_CUDA, message);
  }

  for (const KernelSpec &k : m.section->kernels) {
    CUfunction function = nullptr;
    if (CUresult r =
            driver->cuModuleGetFunction(&function, m.module, k.name.c_str()))
      return cudaFailure(*driver, "cuModuleGetFunction(" + k.name + ")", r);
    if (attn_status s = checkParams(*driver, k, function))
      return s;
    int maxThreads = 0, regs = 0, local = 0, staticSmem = 0;
    driver->cuFuncGetAttribute(
        &maxThreads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function);
    driver->cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, function);
    driver->cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
                               function);
    driver->cuFuncGetAttribute(&staticSmem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                               function);
    // The kernels' dynamic shared memory comes after their static shared
    // memory (the one byte of the symbol it is addressed through), and a
    // block asks for more than 48 KiB of the two together only with the
    // attribute set.
    if (k.smem + staticSmem > optin)
      return failf(ATTN_ERROR_MANIFEST,
                   "kernel '%s' (manifest line %d) asks for smem=%lld bytes "
                   "(and has %d of static shared memory), the device allows "
                   "%d per block",
                   k.name.c_str(), k.line, static_cast<long long>(k.smem),
                   staticSmem, optin);
    if (k.smem + staticSmem > 48 * 1024) {
      if (CUresult r = driver->cuFuncSetAttribute(
              function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
              static_cast<int>(k.smem)))
        return cudaFailure(*driver,
                           "cuFuncSetAttribute(" + k.name +
                               ", MAX_DYNAMIC_SHARED_SIZE_BYTES=" +
                               std::to_string(k.smem) + ")",
                           r);
    }
    if (m.verbose)
      std::fprintf(stderr,
                   "attn-runtime: %s on %s (sm_%d, %d SMs): regs=%d "
                   "local=%dB static_smem=%dB smem=%lldB threads=%lld "
                   "max_threads=%d\n",
                   k.name.c_str(), deviceName, deviceSm, m.smCount, regs, local,
                   staticSmem, static_cast<long long>(k.smem),
                   static_cast<long long>(k.threads), maxThreads);
    if (k.threads > maxThreads)
      return failf(ATTN_ERROR_MANIFEST,
                   "kernel '%s' (manifest line %d) launches threads=%lld, "
                   "the compiled kernel allows at most %d (regs=%d)",
                   k.name.c_str(), k.line, static_cast<long long>(k.threads),
                   maxThreads, regs);
    m.functions.push_back(function);
  }
  return ATTN_OK;
}

template <typename T> std::string listString(const T *values, int count) {
  std::string s = "[";
  for (int i = 0; i < count; ++i)
    s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

/// The L2 promotion of every tensor map: a box row of 128 bytes (the
/// 128-byte swizzle's) is one L2 request of its own size. With 256-byte
/// promotion an H200 looked up 25% more L2 sectors than the tensors hold
/// (ncu, decode B = 8, Hq = 32, Hkv = 8, 128k keys: 167.8M sectors from the
/// SMs for 134.2M, L2 throughput 97%) and decode reached 0.91x to 0.94x
/// cuDNN's GB/s; with 128 bytes (CUTLASS's choice) the lookups are the
/// tensors' and decode runs at 0.99x to 1.01x, the forward and backward
/// unchanged (docs/GPU.md).
constexpr CUtensorMapL2promotion kTensorMapL2Promotion =
    CU_TENSOR_MAP_L2_PROMOTION_L2_128B;

/// Encodes the tensor map a plan describes (Plan.h) into `map`; the
/// module's context must be current (the driver asks for one).
attn_status encodeTensorMap(const CudaDriver &driver, const KernelSpec &kernel,
                            const TensorMapArg &t, CUtensorMap &map) {
  if (!driver.tensorMapEncodeTiled)
    return failf(ATTN_ERROR_CUDA,
                 "kernel '%s' takes tensor maps, but the CUDA driver has no "
                 "cuTensorMapEncodeTiled (CUDA 12.0 and later drivers have "
                 "it)",
                 kernel.name.c_str());
  CUtensorMapDataType type =
      t.dtype == ATTN_BF16  ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
      : t.dtype == ATTN_F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                            : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  CUtensorMapSwizzle swizzle = t.swizzle == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                               : t.swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                               : t.swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                 : CU_TENSOR_MAP_SWIZZLE_NONE;
  const cuuint32_t elementStrides[4] = {1, 1, 1, 1};
  // Out-of-bounds elements read as zero: the kernels rely on it for the
  // rows and keys past the end of a ragged sequence.
  if (CUresult r = driver.tensorMapEncodeTiled(
          &map, type, 4, reinterpret_cast<void *>(t.address), t.dims, t.strides,
          t.box, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
          kTensorMapL2Promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE))
    return cudaFailure(
        driver,
        "cuTensorMapEncodeTiled(" + std::string(t.tensor) + " of kernel '" +
            kernel.name + "': " + dtypeName(t.dtype) + " dims " +
            listString(t.dims, 4) + ", strides " + listString(t.strides, 3) +
            " bytes, box " + listString(t.box, 4) + ", swizzle " +
            (t.swizzle ? std::to_string(t.swizzle) + "B" : "none") + ")",
        r);
  return ATTN_OK;
}

/// Launches `launches` in order on `stream`. The tensor maps of all of them
/// are encoded first, so that a map the driver refuses (or a driver without
/// cuTensorMapEncodeTiled) fails the call before any of its kernels runs:
/// the backward's backward_dot takes no maps, the two kernels after it may.
attn_status launchAll(const attn_module &m,
                      std::initializer_list<const Launch *> launches,
                      void *stream) {
  const CudaDriver *driver = cudaDriver();
  if (!driver)
    return ATTN_ERROR_CUDA;
  static_assert(alignof(CUtensorMap) >= 64 &&
                    sizeof(CUtensorMap) == kTensorMapBytes,
                "a tensor map parameter is 128 bytes, 64-byte aligned");
  ContextScope scope(*driver, m.context);
  if (scope.status != CUDA_SUCCESS)
    return cudaFailure(*driver, "cuCtxPushCurrent", scope.status);
  std::vector<std::vector<CUtensorMap>> maps;
  for (const Launch *l : launches) {
    maps.emplace_back(l->tensorMaps.size());
    for (size_t i = 0; i < l->tensorMaps.size(); ++i)
      if (attn_status s = encodeTensorMap(*driver, *l->kernel, l->tensorMaps[i],
                                          maps.back()[i]))
        return s;
  }
  size_t index = 0;
  for (const Launch *l : launches) {
    // One entry per kernel parameter: its word, or for a tensor map the 128
    // bytes of the CUtensorMap, which the driver copies by value.
    std::vector<void *> params(l->args.size());
    for (size_t i = 0; i < l->args.size(); ++i)
      params[i] = const_cast<uint64_t *>(&l->args[i]);
    std::vector<CUtensorMap> &launchMaps = maps[index++];
    for (size_t i = 0; i < launchMaps.size(); ++i)
      params[l->tensorMaps[i].param] = &launchMaps[i];
    if (m.verbose > 1)
      std::fprintf(stderr,
                   "attn-runtime: launch %s grid=(%u,%u,%u) block=%u smem=%u "
                   "params=%zu\n",
                   l->kernel->name.c_str(), l->grid[0], l->grid[1], l->grid[2],
                   l->block, l->smem, l->args.size());
    if (CUresult r = driver->cuLaunchKernel(
            m.function(l->kernel), l->grid[0], l->grid[1], l->grid[2], l->block,
            1, 1, l->smem, static_cast<CUstream>(stream), params.data(),
            nullptr))
      return cudaFailure(*driver, "cuLaunchKernel(" + l->kernel->name + ")", r);
  }
  return ATTN_OK;
}

attn_status launch(const attn_module &m, const Launch &l, void *stream) {
  return launchAll(m, {&l}, stream);
}

//===----------------------------------------------------------------------===//
// The checked mode (ATTN_RUNTIME_CHECK=1)
//===----------------------------------------------------------------------===//

/// Reads i32 index tensors (rank 1, or rank 2 with rows of contiguous
/// elements) from the device to the host on the caller's stream, so that
/// the copies see what earlier work on it wrote. read() queues a copy;
/// finish() waits for them all.
class IndexReader {
public:
  IndexReader(const CudaDriver &driver, const char *api, CUstream stream)
      : driver(driver), api(api), stream(stream) {}

  /// Fails when the stream is being captured into a CUDA graph, which the
  /// synchronisation would break, or when the driver cannot copy.
  attn_status start() {
    if (!driver.memcpyDtoHAsync || !driver.streamSynchronize)
      return failf(ATTN_ERROR_CUDA,
                   "%s: ATTN_RUNTIME_CHECK is set, but the CUDA driver has no "
                   "cuMemcpyDtoHAsync or cuStreamSynchronize to read the "
                   "index tensors with",
                   api);
    if (!driver.streamIsCapturing)
      return ATTN_OK;
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    if (CUresult r = driver.streamIsCapturing(stream, &capture))
      return cudaFailure(driver, "cuStreamIsCapturing", r);
    if (capture != CU_STREAM_CAPTURE_STATUS_NONE)
      return failf(ATTN_ERROR_INVALID_ARGUMENT,
                   "%s: the stream is being captured into a CUDA graph, and "
                   "ATTN_RUNTIME_CHECK=1 reads the index tensors back to the "
                   "host, which synchronises it; unset ATTN_RUNTIME_CHECK to "
                   "capture (the checked mode is for debugging eager calls)",
                   api);
    return ATTN_OK;
  }

  /// Queues the copy of `t`'s elements into `values`, row after row.
  attn_status read(const attn_tensor &t, std::vector<int32_t> &values) {
    int64_t rows = t.rank == 2 ? t.shape[0] : 1;
    int64_t columns = t.shape[t.rank - 1];
    int64_t rowStride = t.rank == 2 ? t.strides[0] : columns;
    values.resize(static_cast<size_t>(rows * columns));
    auto base = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(t.data));
    // Contiguous rows (or one row) take a single copy.
    if (rows == 1 || rowStride == columns)
      return copy(values.data(), base, rows * columns);
    for (int64_t r = 0; r < rows; ++r)
      if (attn_status s =
              copy(values.data() + r * columns,
                   base + static_cast<CUdeviceptr>(r * rowStride) * 4, columns))
        return s;
    return ATTN_OK;
  }

  /// Waits for the copies.
  attn_status finish() {
    if (CUresult r = driver.streamSynchronize(stream))
      return cudaFailure(driver, "cuStreamSynchronize", r);
    return ATTN_OK;
  }

private:
  attn_status copy(int32_t *to, CUdeviceptr from, int64_t count) {
    if (CUresult r = driver.memcpyDtoHAsync(
            to, from, static_cast<size_t>(count) * sizeof(int32_t), stream))
      return cudaFailure(driver, "cuMemcpyDtoHAsync", r);
    return ATTN_OK;
  }

  const CudaDriver &driver;
  const char *api;
  CUstream stream;
};

/// kv_lens[b] in [0, max_pages * page_size], and block_table[b][p] in
/// [0, P) for the pages the keys of sequence b occupy.
attn_status checkPageValues(const char *api, const std::vector<int32_t> &lens,
                            const std::vector<int32_t> &table, int64_t maxPages,
                            int64_t pageSize, int64_t pages) {
  int64_t capacity = maxPages * pageSize;
  for (size_t b = 0; b < lens.size(); ++b) {
    int64_t length = lens[b];
    if (length < 0 || length > capacity)
      return failf(ATTN_ERROR_SHAPE,
                   "%s: kv_lens[%zu] = %" PRId64 " is outside [0, %" PRId64
                   "]: a sequence holds at most max_pages * page_size = "
                   "%" PRId64 " * %" PRId64 " keys",
                   api, b, length, capacity, maxPages, pageSize);
    int64_t used = (length + pageSize - 1) / pageSize;
    for (int64_t p = 0; p < used; ++p) {
      int64_t page = table[b * static_cast<size_t>(maxPages) + p];
      if (page < 0 || page >= pages)
        return failf(ATTN_ERROR_SHAPE,
                     "%s: block_table[%zu][%" PRId64 "] = %" PRId64
                     " is outside [0, %" PRId64 "): the pools have P = "
                     "%" PRId64 " pages, and the kv_lens[%zu] = %" PRId64
                     " keys of sequence %zu occupy its pages 0 to %" PRId64,
                     api, b, p, page, pages, pages, b, length, b, used - 1);
    }
  }
  return ATTN_OK;
}

/// offsets[0] = 0, never decreasing, offsets[B] = `rows`.
attn_status checkOffsetValues(const char *api, const char *name,
                              const std::vector<int32_t> &offsets, int64_t rows,
                              const char *rowsName, const char *tensor) {
  if (offsets[0] != 0)
    return failf(ATTN_ERROR_SHAPE,
                 "%s: %s[0] = %" PRId32 ", must be 0 (the first sequence "
                 "starts at row 0)",
                 api, name, offsets[0]);
  for (size_t i = 1; i < offsets.size(); ++i)
    if (offsets[i] < offsets[i - 1])
      return failf(ATTN_ERROR_SHAPE,
                   "%s: %s[%zu] = %" PRId32 " is less than %s[%zu] = %" PRId32
                   ": offsets never decrease (sequence %zu would have %" PRId64
                   " rows)",
                   api, name, i, offsets[i], name, i - 1, offsets[i - 1], i - 1,
                   int64_t(offsets[i]) - offsets[i - 1]);
  size_t last = offsets.size() - 1;
  if (offsets[last] != rows)
    return failf(ATTN_ERROR_SHAPE,
                 "%s: %s[%zu] = %" PRId32 ", must be %s = %" PRId64
                 " (the rows of %s): the sequences cover every row",
                 api, name, last, offsets[last], rowsName, rows, tensor);
  return ATTN_OK;
}

/// Reads the index tensors of `reads` (those not null) back to the host on
/// the caller's stream, in the module's context.
attn_status
readIndices(const attn_module &m, const char *api, void *stream,
            std::initializer_list<
                std::pair<const attn_tensor *, std::vector<int32_t> *>>
                reads) {
  const CudaDriver *driver = cudaDriver();
  if (!driver)
    return ATTN_ERROR_CUDA;
  ContextScope scope(*driver, m.context);
  if (scope.status != CUDA_SUCCESS)
    return cudaFailure(*driver, "cuCtxPushCurrent", scope.status);
  IndexReader reader(*driver, api, static_cast<CUstream>(stream));
  if (attn_status s = reader.start())
    return s;
  for (const auto &[tensor, values] : reads)
    if (tensor)
      if (attn_status s = reader.read(*tensor, *values))
        return s;
  return reader.finish();
}

/// attn_decode_paged under ATTN_RUNTIME_CHECK, after the host's checks.
attn_status checkDecodeIndices(const attn_module &m, const char *api,
                               const DecodeTensors &t, void *stream) {
  std::vector<int32_t> lens, table;
  if (attn_status s = readIndices(m, api, stream,
                                  {{t.kvLens, &lens}, {t.blockTable, &table}}))
    return s;
  return checkPageValues(api, lens, table, t.blockTable->shape[1],
                         t.k->shape[2], t.k->shape[0]);
}

/// attn_forward_varlen under ATTN_RUNTIME_CHECK, after the host's checks;
/// `maxSeqlenQ` as the call clamped it (<= 0: none).
attn_status checkVarlenIndices(const attn_module &m, const char *api,
                               const ForwardTensors &t, int64_t maxSeqlenQ,
                               void *stream) {
  std::vector<int32_t> queryOffsets, keyOffsets, lens, table;
  // Packed keys (key_offsets) or a paged cache (kv_lens, block_table): the
  // others are null.
  if (attn_status s = readIndices(m, api, stream,
                                  {{t.queryOffsets, &queryOffsets},
                                   {t.keyOffsets, &keyOffsets},
                                   {t.kvLens, &lens},
                                   {t.blockTable, &table}}))
    return s;
  if (attn_status s = checkOffsetValues(api, "query_offsets", queryOffsets,
                                        t.q->shape[2], "T", "q"))
    return s;
  if (t.keyOffsets) {
    if (attn_status s = checkOffsetValues(api, "key_offsets", keyOffsets,
                                          t.k->shape[2], "Tk", "k"))
      return s;
  } else if (attn_status s =
                 checkPageValues(api, lens, table, t.blockTable->shape[1],
                                 t.k->shape[2], t.k->shape[0])) {
    return s;
  }
  if (maxSeqlenQ <= 0)
    return ATTN_OK;
  for (size_t b = 0; b + 1 < queryOffsets.size(); ++b) {
    int64_t rows = int64_t(queryOffsets[b + 1]) - queryOffsets[b];
    if (rows > maxSeqlenQ)
      return failf(ATTN_ERROR_SHAPE,
                   "%s: sequence %zu has %" PRId64 " query rows "
                   "(query_offsets[%zu] = %" PRId32 " to [%zu] = %" PRId32
                   "), more than max_seqlen_q = %" PRId64
                   ": its rows past max_seqlen_q would not be written",
                   api, b, rows, b, queryOffsets[b], b + 1, queryOffsets[b + 1],
                   maxSeqlenQ);
  }
  return ATTN_OK;
}

attn_status internalError(const char *api, const char *what) {
  return failf(ATTN_ERROR_INVALID_ARGUMENT, "%s: internal error: %s", api,
               what);
}

/// attn_decode_splits and attn_decode_paged_splits.
attn_status decodeSplits(const char *api, attn_module *module,
                         const DecodeTensors &tensors,
                         const attn_options *options, int64_t numSplits,
                         int64_t *splits) {
  if (!module)
    return failf(ATTN_ERROR_INVALID_ARGUMENT, "%s: module is null", api);
  if (!splits)
    return failf(ATTN_ERROR_INVALID_ARGUMENT, "%s: splits is null", api);
  try {
    return resolveSplits(*module->section, module->smCount, tensors, options,
                         numSplits, *splits);
  } catch (...) {
    return internalError(api, "unexpected exception");
  }
}

/// attn_decode and attn_decode_paged: the partial kernel, then the combine
/// on the same stream, which orders them.
attn_status decode(const char *api, attn_module *module,
                   const DecodeTensors &tensors, const attn_options *options,
                   int64_t numSplits, void *workspace, int64_t workspaceBytes,
                   void *stream) {
  if (!module)
    return failf(ATTN_ERROR_INVALID_ARGUMENT, "%s: module is null", api);
  try {
    DecodePlan plan;
    if (attn_status s =
            planDecode(*module->section, module->smCount, tensors, options,
                       numSplits, workspace, workspaceBytes, plan))
      return s;
    if (module->check && tensors.paged)
      if (attn_status s = checkDecodeIndices(*module, api, tensors, stream))
        return s;
    if (attn_status s = launch(*module, plan.partial, stream))
      return s;
    return launch(*module, plan.combine, stream);
  } catch (...) {
    return internalError(api, "unexpected exception");
  }
}

} // namespace

extern "C" {

attn_status attn_module_load(const char *manifest_path, attn_module **module) {
  if (!module)
    return fail(ATTN_ERROR_INVALID_ARGUMENT,
                "attn_module_load: module is null");
  *module = nullptr;
  if (!manifest_path)
    return fail(ATTN_ERROR_INVALID_ARGUMENT,
                "attn_module_load: manifest_path is null");
  try {
    auto m = std::make_unique<attn_module>();
    if (const char *v = std::getenv("ATTN_RUNTIME_VERBOSE"))
      m->verbose = std::atoi(v);
    if (const char *c = std::getenv("ATTN_RUNTIME_CHECK"))
      m->check = std::atoi(c) != 0;
    if (attn_status s = loadModule(manifest_path, *m)) {
      attn_module_destroy(m.release());
      return s;
    }
    *module = m.release();
    return ATTN_OK;
  } catch (const std::bad_alloc &) {
    return fail(ATTN_ERROR_INVALID_ARGUMENT, "attn_module_load: out of memory");
  } catch (...) {
    return internalError("attn_module_load", "unexpected exception");
  }
}

void attn_module_destroy(attn_module *module) {
  if (!module)
    return;
  if (module->module) {
    if (const CudaDriver *driver = cudaDriver()) {
      ContextScope scope(*driver, module->context);
      driver->cuModuleUnload(module->module);
    }
  }
  delete module;
}

const char *attn_module_target(const attn_module *module) {
  return module ? module->section->target.c_str() : nullptr;
}

const char *attn_last_error(void) { return lastError(); }

attn_status attn_forward(attn_module *module, const attn_tensor *q,
                         const attn_tensor *k, const attn_tensor *v,
                         const attn_tensor *o, const attn_tensor *lse,
                         const attn_options *options, void *stream) {
  if (!module)
    return fail(ATTN_ERROR_INVALID_ARGUMENT, "attn_forward: module is null");
  try {
    Launch plan;
    if (attn_status s = planForward(*module->section, module->smCount, q, k, v,
                                    o, lse, options, plan))
      return s;
    return launch(*module, plan, stream);
  } catch (...) {
    return internalError("attn_forward", "unexpected exception");
  }
}

attn_status attn_forward_varlen(attn_module *module, const attn_tensor *q,
                                const attn_tensor *k, const attn_tensor *v,
                                const attn_tensor *query_offsets,
                                const attn_tensor *key_offsets,
                                const attn_tensor *kv_lens,
                                const attn_tensor *block_table,
                                const attn_tensor *o, const attn_tensor *lse,
                                int64_t max_seqlen_q,
                                const attn_options *options, void *stream) {
  if (!module)
    return fail(ATTN_ERROR_INVALID_ARGUMENT,
                "attn_forward_varlen: module is null");
  try {
    ForwardTensors tensors{
        q, k, v, query_offsets, key_offsets, kv_lens, block_table, o, lse};
    Launch plan;
    if (attn_status s = planForwardVarlen(*module->section, tensors,
                                          max_seqlen_q, options, plan))
      return s;
    // More rows than T is clamped to T, which the offsets' check covers.
    if (module->check)
      if (attn_status s = checkVarlenIndices(
              *module, "attn_forward_varlen", tensors,
              max_seqlen_q < q->shape[2] ? max_seqlen_q : 0, stream))
        return s;
    return launch(*module, plan, stream);
  } catch (...) {
    return internalError("attn_forward_varlen", "unexpected exception");
  }
}

int64_t attn_decode_workspace_size(const attn_tensor *q, const attn_tensor *v,
                                   int64_t num_splits) {
  try {
    return decodeWorkspaceBytes(q, v, num_splits);
  } catch (...) {
    internalError("attn_decode_workspace_size", "unexpected exception");
    return -1;
  }
}

attn_status attn_decode_splits(attn_module *module, const attn_tensor *q,
                               const attn_tensor *k, const attn_tensor *v,
                               const attn_options *options, int64_t num_splits,
                               int64_t *splits) {
  DecodeTensors tensors{q, k, v};
  return decodeSplits("attn_decode_splits", module, tensors, options,
                      num_splits, splits);
}

attn_status attn_decode(attn_module *module, const attn_tensor *q,
                        const attn_tensor *k, const attn_tensor *v,
                        const attn_tensor *o, const attn_tensor *lse,
                        const attn_options *options, int64_t num_splits,
                        void *workspace, int64_t workspace_bytes,
                        void *stream) {
  DecodeTensors tensors{q, k,  v, /*blockTable=*/nullptr, /*kvLens=*/nullptr,
                        o, lse};
  return decode("attn_decode", module, tensors, options, num_splits, workspace,
                workspace_bytes, stream);
}

attn_status attn_decode_paged_splits(attn_module *module, const attn_tensor *q,
                                     const attn_tensor *k_cache,
                                     const attn_tensor *v_cache,
                                     const attn_tensor *block_table,
                                     const attn_tensor *kv_lens,
                                     const attn_options *options,
                                     int64_t num_splits, int64_t *splits) {
  DecodeTensors tensors{q,       k_cache, v_cache, block_table,
                        kv_lens, nullptr, nullptr, /*paged=*/true};
  return decodeSplits("attn_decode_paged_splits", module, tensors, options,
                      num_splits, splits);
}

attn_status
attn_decode_paged(attn_module *module, const attn_tensor *q,
                  const attn_tensor *k_cache, const attn_tensor *v_cache,
                  const attn_tensor *block_table, const attn_tensor *kv_lens,
                  const attn_tensor *o, const attn_tensor *lse,
                  const attn_options *options, int64_t num_splits,
                  void *workspace, int64_t workspace_bytes, void *stream) {
  DecodeTensors tensors{q,       k_cache, v_cache, block_table,
                        kv_lens, o,       lse,     /*paged=*/true};
  return decode("attn_decode_paged", module, tensors, options, num_splits,
                workspace, workspace_bytes, stream);
}

int64_t attn_backward_workspace_size(const attn_tensor *q) {
  try {
    return backwardWorkspaceBytes(q);
  } catch (...) {
    internalError("attn_backward_workspace_size", "unexpected exception");
    return -1;
  }
}

int64_t attn_backward_atomic_workspace_size(const attn_tensor *q) {
  try {
    return backwardAccumulatorWorkspaceBytes(q);
  } catch (...) {
    internalError("attn_backward_atomic_workspace_size",
                  "unexpected exception");
    return -1;
  }
}

attn_status attn_backward(attn_module *module, const attn_tensor *q,
                          const attn_tensor *k, const attn_tensor *v,
                          const attn_tensor *o, const attn_tensor *dout,
                          const attn_tensor *lse, const attn_tensor *dq,
                          const attn_tensor *dk, const attn_tensor *dv,
                          const attn_options *options, void *workspace,
                          int64_t workspace_bytes, void *stream) {
  if (!module)
    return fail(ATTN_ERROR_INVALID_ARGUMENT, "attn_backward: module is null");
  try {
    const BackwardTensors tensors = {q, k, v, o, dout, lse, dq, dk, dv};
    BackwardPlan plan;
    if (attn_status s = planBackward(*module->section, tensors, options,
                                     workspace, workspace_bytes, plan))
      return s;
    // One stream orders them: the other two read the D that the first
    // writes (and the accumulator and turns that it zeroes).
    return launchAll(*module, {&plan.dot, &plan.keyValue, &plan.query}, stream);
  } catch (...) {
    return internalError("attn_backward", "unexpected exception");
  }
}

} // extern "C"
