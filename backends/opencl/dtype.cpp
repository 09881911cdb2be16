// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtype.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "vnn/backend_abi.h"

namespace vnn_opencl {
namespace {

// Indexed by vnn_dtype. Bool is stored as one byte holding 0 or 1; the
// 16-bit floats are "half" so kernels can use vload_half/vstore_half_rte
// (allowed without cl_khr_fp16), bfloat16 is raw ushort.
const DtypeInfo kDtypes[] = {
    {"float32", "float", "uint", 4},    {"float64", "double", "ulong", 8},
    {"int32", "int", "uint", 4},        {"int64", "long", "ulong", 8},
    {"uint8", "uchar", "uchar", 1},     {"bool", "uchar", "uchar", 1},
    {"float16", "half", "ushort", 2},   {"bfloat16", "ushort", "ushort", 2},
    {"int8", "char", "uchar", 1},       {"int16", "short", "ushort", 2},
};

// Rounds |value| to a binary format with `mbits` stored mantissa bits and
// `ebits` exponent bits, nearest even, with subnormals and overflow to inf.
// Scaling by a power of two is exact in double, so nearbyint does the one
// and only rounding.
uint16_t round_small_float(double value, int mbits, int ebits) {
  const int bias = (1 << (ebits - 1)) - 1;
  const uint32_t sign = std::signbit(value) ? 1u << (mbits + ebits) : 0u;
  const uint32_t inf = ((1u << ebits) - 1u) << mbits;
  if (std::isnan(value)) return static_cast<uint16_t>(sign | inf | (1u << (mbits - 1)));
  double a = std::fabs(value);
  if (std::isinf(a)) return static_cast<uint16_t>(sign | inf);
  if (a == 0.0) return static_cast<uint16_t>(sign);
  int e = 0;
  std::frexp(a, &e);
  int exp = e - 1;  // a in [2^exp, 2^(exp+1))
  if (exp < 1 - bias) exp = 1 - bias;  // subnormal range: fixed scale
  double q = std::nearbyint(std::ldexp(a, mbits - exp));
  const double top = std::ldexp(1.0, mbits + 1);
  if (q >= top) {  // rounded up into the next binade
    q /= 2;
    ++exp;
  }
  if (exp > bias) return static_cast<uint16_t>(sign | inf);
  uint32_t m = static_cast<uint32_t>(q);
  if (m < (1u << mbits)) return static_cast<uint16_t>(sign | m);  // subnormal
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exp + bias) << mbits) |
                               (m - (1u << mbits)));
}

template <typename T>
T saturate(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

template <typename T>
uint64_t bits_of(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof v);
  return b;
}

}  // namespace

const DtypeInfo* dtype_info(int32_t dtype) {
  if (dtype < 0 || dtype >= static_cast<int32_t>(sizeof kDtypes / sizeof kDtypes[0])) return nullptr;
  return &kDtypes[dtype];
}

uint16_t float16_bits(double value) { return round_small_float(value, 10, 5); }
uint16_t bfloat16_bits(double value) { return round_small_float(value, 7, 8); }

uint64_t scalar_bits(double value, int32_t dtype) {
  switch (dtype) {
    case VNN_FLOAT32: return bits_of(static_cast<float>(value));
    case VNN_FLOAT64: return bits_of(value);
    // Integers as PyTorch converts a scalar: saturated to int64, then
    // wrapped (-5 fills uint8 with 251), as the Kokkos fill does.
    case VNN_INT32: return bits_of(static_cast<int32_t>(saturate<int64_t>(value)));
    case VNN_INT64: return bits_of(saturate<int64_t>(value));
    case VNN_UINT8: return bits_of(static_cast<uint8_t>(saturate<int64_t>(value)));
    case VNN_INT8: return bits_of(static_cast<uint8_t>(saturate<int64_t>(value)));
    case VNN_INT16: return bits_of(static_cast<uint16_t>(saturate<int64_t>(value)));
    case VNN_BOOL: return value != 0.0 ? 1u : 0u;
    case VNN_FLOAT16: return float16_bits(value);
    case VNN_BFLOAT16: return bfloat16_bits(value);
    default: return 0;
  }
}

}  // namespace vnn_opencl
