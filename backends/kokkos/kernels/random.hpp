// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RANDOM: counter-based Philox4x32-10 numbers. Element i of the output uses
// key = seed, counter = (offset + i / 4, 0, 0) and word i % 4, so a value
// depends on (seed, offset, i) only: the same on every backend and for any
// thread count. The rounds are vnn/philox.h, shared with the core; the
// arithmetic matches backends/opencl/kernels/random.cl.
#pragma once
#include <cmath>

#include "kokkos/kernels/dispatch.hpp"

// The Philox rounds, shared with the core (vnn/philox.h), as device code.
#define VNN_PHILOX_FN KOKKOS_INLINE_FUNCTION
#include "vnn/philox.h"

namespace vnn::kernels {

// The block that element i draws from.
KOKKOS_INLINE_FUNCTION void philox_block(uint64_t seed, uint64_t offset, int64_t i, uint32_t c[4]) {
  const uint64_t ctr = offset + uint64_t(i) / 4u;
  c[0] = uint32_t(ctr);
  c[1] = uint32_t(ctr >> 32);
  c[2] = 0u;
  c[3] = 0u;
  vnn_philox_rounds(c, uint32_t(seed), uint32_t(seed >> 32));
}

// Uniform [lo, lo + range): float32 from the top 24 bits, float64 from all
// 32; one correctly rounded fma, so every backend agrees bit for bit.
KOKKOS_INLINE_FUNCTION float uniform_value(uint32_t x, float lo, float range) {
  return ::fmaf(range, float(x >> 8) * 5.9604644775390625e-8f, lo);
}
KOKKOS_INLINE_FUNCTION double uniform_value(uint32_t x, double lo, double range) {
  return ::fma(range, double(x) * 2.3283064365386963e-10, lo);
}

// Box-Muller in double: words (0, 1) and (2, 3) of a block are pairs;
// the even word of a pair takes the cosine, the odd one the sine.
KOKKOS_INLINE_FUNCTION double normal_value(const uint32_t c[4], int w) {
  const int p = w & 2;
  const double u1 = (double(c[p]) + 1.0) * 2.3283064365386963e-10;  // (0, 1]
  const double u2 = double(c[p + 1]) * 2.3283064365386963e-10;       // [0, 1)
  const double r = kmath::sqrt(-2.0 * kmath::log(u1));
  const double theta = 6.283185307179586 * u2;
  return (w & 1) ? r * kmath::sin(theta) : r * kmath::cos(theta);
}

template <class Exec, class T>
void random_float(const Exec& exec, const vnn_tensor_desc& out, int64_t fn, uint64_t seed, uint64_t offset,
                  double a, double b) {
  T* o = typed<T>(out);
  const StridedIndex oi(out);
  const T lo = T(a), range = T(b) - T(a);
  const double mean = a, stddev = b;
  const bool normal = fn == VNN_RANDOM_NORMAL;
  Kokkos::parallel_for("vnn::random", Range<Exec>(exec, 0, numel(out)), KOKKOS_LAMBDA(int64_t i) {
    uint32_t c[4];
    philox_block(seed, offset, i, c);
    const int w = int(i & 3);
    if (normal)
      o[oi(i)] = T(mean + stddev * normal_value(c, w));
    else
      o[oi(i)] = uniform_value(c[w], lo, range);
  });
}

// Integers low + (x mod (high - low)) for a 32-bit word x.
template <class Exec, class T>
void random_bits(const Exec& exec, const vnn_tensor_desc& out, uint64_t seed, uint64_t offset, double a,
                 double b) {
  T* o = typed<T>(out);
  const StridedIndex oi(out);
  const int64_t low = int64_t(a);
  const uint64_t range = uint64_t(int64_t(b) - low);
  Kokkos::parallel_for("vnn::randint", Range<Exec>(exec, 0, numel(out)), KOKKOS_LAMBDA(int64_t i) {
    uint32_t c[4];
    philox_block(seed, offset, i, c);
    o[oi(i)] = T(low + int64_t(uint64_t(c[i & 3]) % range));
  });
}

template <class Exec>
bool random(const Exec& exec, const vnn_tensor_desc& out, const int64_t* ints, int32_t num_ints,
            const double* scalars, int32_t num_scalars) {
  if (num_ints < 3 || num_scalars < 2) return false;
  const int64_t fn = ints[0];
  const uint64_t seed = uint64_t(ints[1]), offset = uint64_t(ints[2]);
  const double a = scalars[0], b = scalars[1];
  if (fn == VNN_RANDOM_UNIFORM || fn == VNN_RANDOM_NORMAL) {
    // Other dtypes are filled through a float32 temporary by the core.
    dispatch_types<FloatingTypes>("random", out.dtype, [&](auto t) {
      random_float<Exec, decltype(t)>(exec, out, fn, seed, offset, a, b);
    });
    return true;
  }
  if (fn == VNN_RANDOM_BITS && b > a) {
    dispatch_types<TypeSet<int32_t, int64_t>>("random (bits)", out.dtype, [&](auto t) {
      random_bits<Exec, decltype(t)>(exec, out, seed, offset, a, b);
    });
    return true;
  }
  return false;
}

}  // namespace vnn::kernels
