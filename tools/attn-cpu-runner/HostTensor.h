//===- HostTensor.h - host buffers in attn's element types ------*- C++ -*-===//
//
// Host-side tensors stored in the exact bits the compiled code reads (f32,
// f16, bf16, i1 as one byte, i32), with float64 access for the reference, and
// the strided memref descriptors that MLIR's C interface passes.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_CPU_RUNNER_HOSTTENSOR_H
#define ATTN_TOOLS_CPU_RUNNER_HOSTTENSOR_H

#include <cstdint>
#include <string>
#include <vector>

namespace harness {

enum class DType { F32, F16, BF16, I1, I32 };

/// Parses "f32", "f16", "bf16", "i1", "i32"; returns false otherwise.
bool parseDType(const std::string &name, DType &out);
std::string dtypeName(DType t);

/// Rounds a value to the nearest representable value of `t` (ties to even).
double roundTo(DType t, double v);

/// The most elements the runner allocates for one tensor (2^27: 512 MiB of
/// f32, 1 GiB as the reference's doubles). Shapes are checked against it
/// before anything is allocated (docs/Limits.md).
constexpr int64_t kMaxTensorElements = int64_t(1) << 27;

/// "" when a tensor of `shape` (every size >= 0) holds at most
/// kMaxTensorElements, else a message saying how many it holds (or that
/// the count overflows int64) and the limit; `what` names the tensor.
std::string checkTensorSize(const std::string &what,
                            const std::vector<int64_t> &shape);

struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  HostTensor() = default;
  HostTensor(DType dtype, std::vector<int64_t> shape);

  int64_t numElements() const;
  size_t elementBytes() const;
  double get(int64_t i) const;
  /// Stores `v` rounded to the element type.
  void set(int64_t i, double v);
  std::vector<double> toDoubles() const;
};

/// The memref descriptor of the C interface for any rank:
/// {allocated, aligned, offset, sizes[rank], strides[rank]}, all 8 bytes.
struct Descriptor {
  std::vector<int64_t> words;
  explicit Descriptor(HostTensor &t);
};

/// Reads a result descriptor of `rank` at `words` into a host tensor.
HostTensor readDescriptor(const int64_t *words, int64_t rank, DType dtype);

} // namespace harness

#endif // ATTN_TOOLS_CPU_RUNNER_HOSTTENSOR_H
