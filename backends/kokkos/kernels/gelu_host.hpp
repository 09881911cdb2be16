// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The exact GELU, x Phi(x), and its gradient, g (Phi(x) + x phi(x)), for
// contiguous float32 on host spaces: the per-element glibc erff / expf calls
// of the generic functors (elementwise.hpp) cost 3-10 ns each, branch on
// |x| (slower as a network's activations spread during training) and do not
// vectorise. Here erf and exp are branch-free polynomials, compiled for
// AVX-512, AVX2 + FMA and the baseline ISA and chosen at run time (as the
// fused attention's row loops, attention_host.hpp), run over the pool in
// chunks.
//
// With z = |x| / sqrt 2 and e = exp(-z^2) (exp by range reduction and the
// degree-7 Taylor polynomial):
//   z < 1:   Phi(x) = 1/2 + sign(x) z P(z^2) / 2      (P ~ erf(z) / z)
//   z >= 1:  erfc(z) = e t R(t), t = 1 / (1 + z / 2),  Phi(x) = x > 0 ? 1 - erfc / 2 : erfc / 2
//   phi(x) = e / sqrt(2 pi)
// P and R are weighted least-squares fits (relative error) of this file's
// own, to erf(z) / z on [0, 1] and to erfc(z) exp(z^2) / t on [1, 10];
// evaluated in float32 both stay within 3e-7 relative, and the left tail
// (x < 0, Phi = erfc / 2) keeps its relative accuracy where 1 + erf(z)
// would cancel. gelu(+inf) = +inf, NaN stays NaN.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>

namespace vnn::kernels {

#if defined(__GNUC__) || defined(__clang__)
#define VNN_GELU_INLINE inline __attribute__((always_inline))
#else
#define VNN_GELU_INLINE inline
#endif

// exp(y) for y <= 0 (y = -z^2), 0 below -87.3 and for -inf; NaN stays NaN.
VNN_GELU_INLINE float gelu_exp_neg(float y) {
  const float lo = -87.33654f;
  const float yc = y >= lo ? y : lo;  // NaN too: the int conversion below must see a number (UBSan)
  float fn = yc * 1.44269504088896341f;
  fn = (fn + 12582912.0f) - 12582912.0f;  // round to nearest (|fn| < 2^22)
  const int32_t n = int32_t(fn);
  const float r = (yc - fn * 0.693359375f) + fn * 2.12194440e-4f;  // y - n ln 2, ln 2 in two parts
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const uint32_t keep = 0u - uint32_t(!(y < lo));  // all ones unless y < lo
  const uint32_t bits = (uint32_t(n + 127) << 23) & keep;
  float two_n;
  std::memcpy(&two_n, &bits, sizeof two_n);
  // NaN in, NaN out: the quiet-NaN bits ORed in where y is NaN.
  const float e = p * two_n;
  uint32_t out;
  std::memcpy(&out, &e, sizeof out);
  out |= (0u - uint32_t(y != y)) & 0x7fc00000u;
  float r_out;
  std::memcpy(&r_out, &out, sizeof r_out);
  return r_out;
}

// Phi(x) and exp(-x^2 / 2) of one element. Both branches are computed and
// blended arithmetically (erf's polynomial on z clamped to 1, so both are
// finite): a ternary let GCC sink the exp into a branch of its own and give
// up vectorising the forward loop (scalar, 18x slower).
VNN_GELU_INLINE float gelu_cdf(float x, float* e_out) {
  const float z = (x < 0.0f ? -x : x) * 0.70710678118654752f;
  const float u = z * z;
  const float e = gelu_exp_neg(-u);
  // erf(z) for z < 1.
  const float zs = z < 1.0f ? z : 1.0f;
  const float us = zs * zs;
  float p = -5.6315709923e-04f;
  p = p * us + 4.9175929868e-03f;
  p = p * us - 2.6711353618e-02f;
  p = p * us + 1.1280182002e-01f;
  p = p * us - 3.7612326532e-01f;
  p = p * us + 1.1283791227e+00f;
  const float half_small = 0.5f * zs * p;
  // erfc(z) for z >= 1.
  const float t = 1.0f / (1.0f + 0.5f * z);
  float q = -3.9296579545e-02f;
  q = q * t + 2.2346897320e-01f;
  q = q * t - 4.0938755524e-01f;
  q = q * t + 2.2569258155e-01f;
  q = q * t - 6.8758112760e-03f;
  q = q * t + 1.9869883490e-01f;
  q = q * t + 2.4343576737e-01f;
  q = q * t + 2.8238400760e-01f;
  q = q * t + 2.8208422861e-01f;
  const float half_big = 0.5f * e * t * q;
  const float small = float(z < 1.0f), neg = float(x < 0.0f);
  const float up = small * (0.5f + half_small) + (1.0f - small) * (1.0f - half_big);  // Phi(|x|)
  const float down = small * (0.5f - half_small) + (1.0f - small) * half_big;        // Phi(-|x|)
  *e_out = e;
  return neg * down + (1.0f - neg) * up;
}

// Mode 0: out = gelu(x); mode 1: out = g * gelu'(x).
template <int Mode>
VNN_GELU_INLINE void gelu_host_loop(const float* __restrict x, const float* __restrict g, float* __restrict out,
                                    int64_t n) {
#if defined(_OPENMP)
#pragma omp simd
#endif
  for (int64_t i = 0; i < n; ++i) {
    const float xi = x[i];
    float e;
    const float cdf = gelu_cdf(xi, &e);
    if constexpr (Mode == 0) {
      out[i] = xi * cdf;
    } else {
      out[i] = g[i] * (cdf + xi * e * 0.39894228040143268f);  // 1 / sqrt(2 pi)
    }
  }
}

using GeluHostFn = void (*)(const float*, const float*, float*, int64_t);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#if defined(__clang__)
#define VNN_GELU_TARGET_AVX512 \
  __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma"), min_vector_width(512)))
#else
#define VNN_GELU_TARGET_AVX512 \
  __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,prefer-vector-width=512")))
#endif
template <int Mode>
VNN_GELU_TARGET_AVX512 void gelu_host_avx512(const float* x, const float* g, float* out, int64_t n) {
  gelu_host_loop<Mode>(x, g, out, n);
}
template <int Mode>
__attribute__((target("avx2,fma"))) void gelu_host_avx2(const float* x, const float* g, float* out, int64_t n) {
  gelu_host_loop<Mode>(x, g, out, n);
}
#undef VNN_GELU_TARGET_AVX512
#endif
template <int Mode>
void gelu_host_base(const float* x, const float* g, float* out, int64_t n) {
  gelu_host_loop<Mode>(x, g, out, n);
}

template <int Mode>
GeluHostFn gelu_host_pick() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const GeluHostFn fn = [] {
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
      return GeluHostFn(&gelu_host_avx512<Mode>);
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return GeluHostFn(&gelu_host_avx2<Mode>);
    return GeluHostFn(&gelu_host_base<Mode>);
  }();
  return fn;
#else
  return &gelu_host_base<Mode>;
#endif
}

// out[i] = gelu(x[i]) (Mode 0) or g[i] * gelu'(x[i]) (Mode 1), i < n, on
// exec's threads in chunks of 4096 elements.
template <int Mode, class Exec>
void gelu_host(const Exec& exec, const float* x, const float* g, float* out, int64_t n) {
  constexpr int64_t kChunk = 4096;
  const GeluHostFn fn = gelu_host_pick<Mode>();
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  Kokkos::parallel_for(
      "vnn::gelu_host", Kokkos::RangePolicy<Exec, Kokkos::IndexType<int64_t>>(exec, 0, chunks), [=](int64_t c) {
        const int64_t i0 = c * kChunk, len = n - i0 < kChunk ? n - i0 : kChunk;
        fn(x + i0, g ? g + i0 : nullptr, out + i0, len);
      });
}

#undef VNN_GELU_INLINE

}  // namespace vnn::kernels
