// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Per-dtype facts the host side needs: names, sizes, kernel storage types,
// and the exact conversion of a double scalar into each dtype's bits.
#ifndef VNN_OPENCL_DTYPE_HPP
#define VNN_OPENCL_DTYPE_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace vnn_opencl {

struct DtypeInfo {
  const char* name;          // "float32", for messages
  const char* storage;       // OpenCL C element type of its buffers
  const char* bits_storage;  // unsigned type of the same size (FILL writes bits)
  size_t size;
};

// nullptr for a code that is not a vnn_dtype.
const DtypeInfo* dtype_info(int32_t dtype);

// `value` converted to `dtype` as the C cast would (to bool: value != 0;
// float16/bfloat16: round to nearest even; out-of-range integers saturate
// and NaN becomes 0 instead of C's undefined behaviour), returned as the
// element's little-endian bit pattern in the low dtype_info()->size bytes.
uint64_t scalar_bits(double value, int32_t dtype);

// A double scalar as the integer kernel argument type I: NaN to 0, out of
// range saturated (a plain cast would be undefined behaviour).
template <typename I>
I saturating(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

// Round to nearest even into IEEE binary16 / bfloat16 bits.
uint16_t float16_bits(double value);
uint16_t bfloat16_bits(double value);

}  // namespace vnn_opencl

#endif
