// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Host loops that vectorise: an exp that does (libm's is a call per
// element), and the attributes that compile a loop for AVX-512, AVX2 + FMA
// and the baseline ISA, for kernels that pick the variant at run time with
// __builtin_cpu_supports (kernels/attention_host.hpp, kernels/rnn_cell.hpp).
// Host spaces only.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VNN_VEC_X86 1
#if defined(__clang__)
#define VNN_VEC_TARGET_AVX512 \
  __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi,bmi2"), min_vector_width(512)))
#else
#define VNN_VEC_TARGET_AVX512 \
  __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi,bmi2,prefer-vector-width=512")))
#endif
#define VNN_VEC_TARGET_AVX2 __attribute__((target("avx2,fma,bmi,bmi2")))
#endif
#if defined(__GNUC__) || defined(__clang__)
#define VNN_VEC_INLINE inline __attribute__((always_inline))
#else
#define VNN_VEC_INLINE inline
#endif
#if defined(_OPENMP)
#define VNN_VEC_SIMD _Pragma("omp simd")
#else
#define VNN_VEC_SIMD
#endif

namespace vnn::kernels {

// Cephes' expf (range reduction by ln 2 in two parts, degree-6 polynomial,
// ~1 ulp on [-87.3, 88]), written without branches so that it vectorises;
// below -87.3 (and -inf) exactly 0, NaN stays NaN.
VNN_VEC_INLINE float vec_exp(float x) {
  const float lo = -87.33654f, hi = 88.0f;
  float xc = x < lo ? lo : x;
  xc = xc > hi ? hi : xc;
  float fx = xc * 1.44269504088896341f;
  fx = (fx + 12582912.0f) - 12582912.0f;  // round to nearest (|fx| < 2^22)
  const int32_t n = int32_t(fx);
  const float r = xc - fx * 0.693359375f + fx * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const uint32_t keep = 0u - uint32_t(!(x < lo));  // all ones unless x < lo (NaN keeps its NaN)
  const uint32_t bits = (uint32_t(n + 127) << 23) & keep;
  float two_n;
  std::memcpy(&two_n, &bits, sizeof two_n);
  return p * two_n;
}
VNN_VEC_INLINE double vec_exp(double x) { return std::exp(x); }

}  // namespace vnn::kernels
