//===- HostTensor.cpp - host buffers in attn's element types --------------===//

#include "HostTensor.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace harness;

bool harness::parseDType(const std::string &name, DType &out) {
  if (name == "f32")
    out = DType::F32;
  else if (name == "f16")
    out = DType::F16;
  else if (name == "bf16")
    out = DType::BF16;
  else if (name == "i1")
    out = DType::I1;
  else if (name == "i32")
    out = DType::I32;
  else
    return false;
  return true;
}

std::string harness::dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I1:
    return "i1";
  case DType::I32:
    return "i32";
  }
  return "?";
}

namespace {
uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t toBF16(float f) {
  uint32_t u = floatBits(f);
  if (std::isnan(f))
    return 0x7fc0;
  u += 0x7fff + ((u >> 16) & 1); // round to nearest, ties to even
  return static_cast<uint16_t>(u >> 16);
}

float fromBF16(uint16_t h) { return bitsFloat(static_cast<uint32_t>(h) << 16); }

float fromF16(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31)
    v = mant ? std::numeric_limits<float>::quiet_NaN()
             : std::numeric_limits<float>::infinity();
  else
    v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

uint16_t toF16(double v) {
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  double a = std::fabs(v);
  if (std::isnan(v))
    return 0x7e00;
  if (a >= 65520.0) // rounds to infinity
    return sign | 0x7c00;
  if (a < std::ldexp(1.0, -14)) {
    // Subnormal: units of 2^-24, round half to even.
    double units = std::nearbyint(a * std::ldexp(1.0, 24));
    return sign | static_cast<uint16_t>(units);
  }
  int e;
  double m = std::frexp(a, &e); // a = m * 2^e, m in [0.5, 1)
  double units = std::nearbyint(m * 2048.0); // 11 significant bits
  if (units == 2048.0) {
    units = 1024.0;
    ++e;
  }
  int biased = e - 1 + 15;
  if (biased >= 31)
    return sign | 0x7c00;
  return sign | static_cast<uint16_t>(biased << 10) |
         static_cast<uint16_t>(static_cast<int>(units) - 1024);
}
} // namespace

double harness::roundTo(DType t, double v) {
  switch (t) {
  case DType::F32:
    return static_cast<float>(v);
  case DType::F16:
    return fromF16(toF16(v));
  case DType::BF16:
    return fromBF16(toBF16(static_cast<float>(v)));
  case DType::I1:
    return v != 0 ? 1.0 : 0.0;
  case DType::I32:
    return static_cast<double>(static_cast<int32_t>(v));
  }
  return v;
}

std::string harness::checkTensorSize(const std::string &what,
                                     const std::vector<int64_t> &shape) {
  std::string dims = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    dims += (i ? ", " : "") + std::to_string(shape[i]);
  dims += "]";
  int64_t count = 1;
  bool overflow = false;
  for (int64_t d : shape) {
    if (d < 0)
      return what + " has shape " + dims + ": a negative size";
    overflow = overflow || __builtin_mul_overflow(count, d, &count);
  }
  if (!overflow && count <= kMaxTensorElements)
    return "";
  return what + " of shape " + dims + " holds " +
         (overflow ? std::string("more than 2^63") : std::to_string(count)) +
         " elements, more than the runner's limit of 2^27 = " +
         std::to_string(kMaxTensorElements);
}

HostTensor::HostTensor(DType dtype, std::vector<int64_t> shape)
    : dtype(dtype), shape(std::move(shape)) {
  bytes.assign(numElements() * elementBytes(), 0);
}

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

size_t HostTensor::elementBytes() const {
  switch (dtype) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I1:
    return 1;
  }
  return 4;
}

double HostTensor::get(int64_t i) const {
  const uint8_t *p = bytes.data() + i * elementBytes();
  uint16_t h;
  float f;
  switch (dtype) {
  case DType::F32:
    std::memcpy(&f, p, 4);
    return f;
  case DType::F16:
    std::memcpy(&h, p, 2);
    return fromF16(h);
  case DType::BF16:
    std::memcpy(&h, p, 2);
    return fromBF16(h);
  case DType::I1:
    return *p ? 1.0 : 0.0;
  case DType::I32: {
    int32_t x;
    std::memcpy(&x, p, 4);
    return x;
  }
  }
  return 0;
}

void HostTensor::set(int64_t i, double v) {
  uint8_t *p = bytes.data() + i * elementBytes();
  uint16_t h;
  float f;
  switch (dtype) {
  case DType::F32:
    f = static_cast<float>(v);
    std::memcpy(p, &f, 4);
    return;
  case DType::F16:
    h = toF16(v);
    std::memcpy(p, &h, 2);
    return;
  case DType::BF16:
    h = toBF16(static_cast<float>(v));
    std::memcpy(p, &h, 2);
    return;
  case DType::I1:
    *p = v != 0;
    return;
  case DType::I32: {
    int32_t x = static_cast<int32_t>(v);
    std::memcpy(p, &x, 4);
    return;
  }
  }
}

std::vector<double> HostTensor::toDoubles() const {
  std::vector<double> out(numElements());
  for (int64_t i = 0; i < numElements(); ++i)
    out[i] = get(i);
  return out;
}

Descriptor::Descriptor(HostTensor &t) {
  int64_t rank = t.shape.size();
  auto ptr = reinterpret_cast<int64_t>(t.bytes.data());
  words = {ptr, ptr, 0};
  words.insert(words.end(), t.shape.begin(), t.shape.end());
  std::vector<int64_t> strides(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * t.shape[i + 1];
  words.insert(words.end(), strides.begin(), strides.end());
}

HostTensor harness::readDescriptor(const int64_t *words, int64_t rank,
                                DType dtype) {
  std::vector<int64_t> shape(words + 3, words + 3 + rank);
  const int64_t *strides = words + 3 + rank;
  HostTensor t(dtype, shape);
  auto *base = reinterpret_cast<const uint8_t *>(words[1]);
  size_t eb = t.elementBytes();
  // Gather through the strides: results need not be contiguous.
  std::vector<int64_t> idx(rank, 0);
  for (int64_t flat = 0; flat < t.numElements(); ++flat) {
    int64_t off = words[2];
    for (int64_t d = 0; d < rank; ++d)
      off += idx[d] * strides[d];
    std::memcpy(t.bytes.data() + flat * eb, base + off * eb, eb);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
  return t;
}
