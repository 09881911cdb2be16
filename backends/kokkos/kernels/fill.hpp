// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// FILL: every element of a strided output = one value.
#pragma once
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kokkos/kernels/types.hpp"

namespace vnn::kernels {

// The fill value as PyTorch converts a scalar for an integer tensor: through
// int64 (saturated there, NaN as 0), then wrapped to the element type, so
// -5 fills uint8 with 251. The OpenCL plugin does the same (dtype.cpp
// scalar_bits); a plain cast of an out-of-range double is undefined.
template <class T>
T fill_value(double value) {
  if constexpr (std::is_integral_v<T>) {  // every integer storage type (Bool is a struct)
    if (value != value) return T(0);
    if (value <= -9.2233720368547758e18) return T(std::numeric_limits<int64_t>::min());
    if (value >= 9.2233720368547758e18) return T(std::numeric_limits<int64_t>::max());
    return T(static_cast<int64_t>(value));
  } else {
    return store<T>(value);
  }
}

template <class Exec, class T>
void fill_typed(const Exec& exec, const vnn_tensor_desc& out, double value) {
  T* o = typed<T>(out);
  const T v = fill_value<T>(value);
  const StridedIndex oi(out);
  if (oi.contiguous) {
    // Kept free of index math so that it vectorises: with oi(i) in the loop
    // GCC stored one float per ~3 cycles (zeros of 6.4 MB: 1.3 ms on 2
    // cores, against 0.55 ms for a read-and-write mul of the same size).
    T* op = o + oi.offset;
    Kokkos::parallel_for("vnn::fill_contiguous", Range<Exec>(exec, 0, numel(out)),
                         KOKKOS_LAMBDA(int64_t i) { op[i] = v; });
    return;
  }
  Kokkos::parallel_for("vnn::fill", Range<Exec>(exec, 0, numel(out)),
                       KOKKOS_LAMBDA(int64_t i) { o[oi(i)] = v; });
}

template <class Exec>
bool fill(const Exec& exec, const vnn_tensor_desc& out, double value) {
  return dispatch_dtype(out.dtype, [&](auto t) { fill_typed<Exec, decltype(t)>(exec, out, value); });
}

}  // namespace vnn::kernels
