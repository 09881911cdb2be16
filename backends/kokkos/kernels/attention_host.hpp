// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SDPA / SDPA_BACKWARD on host spaces (OpenMP, Serial): FlashAttention-2 in
// GEMM-sized tiles (see attention.hpp for the op and the device kernels).
//
// Forward, per (n, h, query tile of bq rows) on the pool (dynamic schedule,
// the longest causal tiles first): for each key tile of up to bk keys,
// S = scale Q K^T (one GEMM), the mask and the causal cut, the online
// softmax update of the rows (running max m, sum l, the accumulator
// rescaled by exp(m_old - m_new)), dropout, acc += P V (one GEMM); at the
// end out = acc / l, lse = m + log l.
// Backward, per (n, hk) when there are enough of them to fill the pool:
// for each key tile, every query tile of the G heads of the group:
// S, P = exp(S - lse), dP = dO V^T, dV += Pd^T dO, dS = P (dP - delta),
// dK += scale dS^T Q and dQ += scale dS K, dq accumulating in the output
// rows (one work item owns them): five GEMMs per tile pair, as PyTorch's
// CPU kernel, deterministic. With few (n, hk) pairs the device kernels'
// split: dk / dv per (n, hk, key tile), then dq per (n, hq, query tile)
// (one more product per pair, all of the pool busy).
//
// The products go to the plugin's BLAS (HostGemm: on the CPU plugin
// oneDNN's sgemm where its JIT has AVX-512, else OpenBLAS; both run
// single-threaded inside the parallel region) or, without one, to
// vectorised loops. The
// row loops (max, exp, sums) are compiled three times, for AVX-512, AVX2 +
// FMA and the baseline ISA, and chosen at run time; exp is a polynomial
// (Cephes expf, ~1 ulp) that vectorises, with exp(-inf) = 0 exactly.
#pragma once
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kokkos/kernels/attention.hpp"
#include "kokkos/kernels/vec_math.hpp"

// The ISA variants and inlining of kernels/vec_math.hpp.
#if defined(VNN_VEC_X86)
#define VNN_SDPA_X86 1
#define VNN_SDPA_TARGET_AVX512 VNN_VEC_TARGET_AVX512
#define VNN_SDPA_TARGET_AVX2 VNN_VEC_TARGET_AVX2
#endif
#define VNN_SDPA_INLINE VNN_VEC_INLINE
#if defined(_OPENMP)
#define VNN_SDPA_SIMD _Pragma("omp simd")
#define VNN_SDPA_SIMD_SUM(x) _Pragma(VNN_SDPA_STR(omp simd reduction(+ : x)))
#define VNN_SDPA_SIMD_MAX(x) _Pragma(VNN_SDPA_STR(omp simd reduction(max : x)))
#define VNN_SDPA_STR(...) #__VA_ARGS__
#else
#define VNN_SDPA_SIMD
#define VNN_SDPA_SIMD_SUM(x)
#define VNN_SDPA_SIMD_MAX(x)
#endif

namespace vnn::kernels {

// exp for the softmax loops: vec_exp (kernels/vec_math.hpp), which vectorises.
VNN_SDPA_INLINE float sdpa_exp(float x) { return vec_exp(x); }
VNN_SDPA_INLINE double sdpa_exp(double x) { return vec_exp(x); }

// ---- row loops -------------------------------------------------------------

template <class T>
VNN_SDPA_INLINE T sdpa_row_max(const T* s, int64_t n, T mx) {
  VNN_SDPA_SIMD_MAX(mx)
  for (int64_t c = 0; c < n; ++c) mx = s[c] > mx ? s[c] : mx;
  return mx;
}

// s = exp(s - base); returns the sum.
template <class T>
VNN_SDPA_INLINE T sdpa_row_exp_sum(T* s, int64_t n, T base) {
  T sum = T(0);
  VNN_SDPA_SIMD_SUM(sum)
  for (int64_t c = 0; c < n; ++c) {
    const T e = sdpa_exp(s[c] - base);
    s[c] = e;
    sum += e;
  }
  return sum;
}

template <class T>
VNN_SDPA_INLINE void sdpa_row_exp(T* s, int64_t n, T base) {
  VNN_SDPA_SIMD
  for (int64_t c = 0; c < n; ++c) s[c] = sdpa_exp(s[c] - base);
}

// s += mask[c * ms] for c < n.
template <class T>
VNN_SDPA_INLINE void sdpa_row_add_mask(T* s, int64_t n, const T* m, int64_t ms) {
  if (ms == 1) {
    VNN_SDPA_SIMD
    for (int64_t c = 0; c < n; ++c) s[c] += m[c];
  } else if (ms == 0) {
    const T v = m[0];
    VNN_SDPA_SIMD
    for (int64_t c = 0; c < n; ++c) s[c] += v;
  } else {
    for (int64_t c = 0; c < n; ++c) s[c] += m[c * ms];
  }
}

template <class T>
VNN_SDPA_INLINE void sdpa_row_fill(T* s, int64_t from, int64_t to, T v) {
  for (int64_t c = from; c < to; ++c) s[c] = v;
}

template <class T>
VNN_SDPA_INLINE void sdpa_row_scale(T* s, int64_t n, T f) {
  VNN_SDPA_SIMD
  for (int64_t c = 0; c < n; ++c) s[c] *= f;
}

// The dropout factors (0 or 1 / (1 - p)) of row i, keys j0 .. j0 + n:
// one Philox block per four consecutive element numbers.
template <class T>
VNN_SDPA_INLINE void sdpa_row_dropout(T* f, const SdpaArgs<T>& a, int64_t n_, int64_t h, int64_t i, int64_t j0,
                                      int64_t n) {
  const int64_t e0 = ((n_ * a.Hq + h) * a.L + i) * a.S + j0;
  uint32_t c[4] = {0, 0, 0, 0};
  for (int64_t x = 0; x < n; ++x) {
    const int64_t e = e0 + x;
    if (x == 0 || (e & 3) == 0) philox_block(a.seed, a.offset, e, c);
    f[x] = (c[e & 3] >> 8) >= a.threshold ? a.keep_scale : T(0);
  }
}

// ---- tile products ---------------------------------------------------------

// C = alpha op(A) op(B) + beta C without a BLAS: row-major, vectorised
// along C's rows (A B, A^T B) or along the inner dim (A B^T).
template <class T>
VNN_SDPA_INLINE void sdpa_loop_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* A,
                                    int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    T* c = C + i * ldc;
    if (beta == T(0)) {
      for (int64_t j = 0; j < n; ++j) c[j] = T(0);
    } else if (beta != T(1)) {
      sdpa_row_scale(c, n, beta);
    }
    if (tb) {
      for (int64_t j = 0; j < n; ++j) {
        const T* b = B + j * ldb;
        T s = T(0);
        if (!ta) {
          const T* ar = A + i * lda;
          VNN_SDPA_SIMD_SUM(s)
          for (int64_t p = 0; p < k; ++p) s += ar[p] * b[p];
        } else {
          for (int64_t p = 0; p < k; ++p) s += A[p * lda + i] * b[p];
        }
        c[j] += alpha * s;
      }
    } else {
      for (int64_t p = 0; p < k; ++p) {
        const T av = alpha * (ta ? A[p * lda + i] : A[i * lda + p]);
        const T* b = B + p * ldb;
        VNN_SDPA_SIMD
        for (int64_t j = 0; j < n; ++j) c[j] += av * b[j];
      }
    }
  }
}

template <class T>
VNN_SDPA_INLINE void sdpa_gemm(const HostGemm* g, bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha,
                               const T* A, int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (g) {
    if constexpr (std::is_same_v<T, float>) g->sgemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    else g->dgemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  sdpa_loop_gemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

// A rows x cols tile at p with row stride rs as a BLAS operand: in place
// when BLAS can read it (leading dim >= max(1, cols)), else packed.
template <class T>
VNN_SDPA_INLINE const T* sdpa_tile(const T* p, int64_t rs, int64_t rows, int64_t cols, T* pack, int64_t* ld) {
  const int64_t c1 = cols > 1 ? cols : 1;
  if (rows <= 1 || rs >= c1) {
    *ld = rows <= 1 ? c1 : rs;
    return p;
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) pack[r * c1 + c] = p[r * rs + c];
  *ld = c1;
  return pack;
}

// ---- work items ------------------------------------------------------------

// The host kernels' tiling and per-thread workspace layout.
template <class T>
struct SdpaHostPlan {
  const SdpaArgs<T>* a = nullptr;
  const HostGemm* gemm = nullptr;
  int64_t bq = 0, bk = 0, nqb = 0, nkb = 0;
  int64_t E1 = 1, Ev1 = 1;  // max(E, 1), max(Ev, 1): packed and accumulator row lengths
};

// Forward item w: query tile of (n, h), the longest causal tiles first.
template <class T>
VNN_SDPA_INLINE void sdpa_host_forward_item(const SdpaHostPlan<T>& P, int64_t w, T* ws) {
  const SdpaArgs<T>& a = *P.a;
  const int64_t Bq = P.bq, Bk = P.bk, E = a.E, Ev = a.Ev, E1 = P.E1, Ev1 = P.Ev1;
  const int64_t heads = a.N * a.Hq;
  const int64_t qb = P.nqb - 1 - w / heads, n = (w % heads) / a.Hq, h = w % a.Hq, hk = h / a.G;
  const int64_t i0 = qb * Bq, bq = a.L - i0 < Bq ? a.L - i0 : Bq;
  T* S = ws;
  T* O = S + Bq * Bk;
  T* m = O + Bq * Ev1;
  T* l = m + Bq;
  T* drop = l + Bq;
  T* pq = drop + Bk;
  T* pk = pq + Bq * E1;
  T* pv = pk + Bk * E1;
  const T ninf = sdpa_neg_inf<T>();
  int64_t ldq, ldk, ldv;
  const T* Q = sdpa_tile<T>(a.q.row(n, h, i0), a.q.s2, bq, E, pq, &ldq);
  for (int64_t r = 0; r < bq; ++r) m[r] = ninf, l[r] = T(0);
  for (int64_t x = 0; x < bq * Ev1; ++x) O[x] = T(0);
  const int64_t kend = a.causal ? (a.S < i0 + bq ? a.S : i0 + bq) : a.S;
  for (int64_t j0 = 0; j0 < kend; j0 += Bk) {
    const int64_t bk = kend - j0 < Bk ? kend - j0 : Bk;
    const T* K = sdpa_tile<T>(a.k.row(n, hk, j0), a.k.s2, bk, E, pk, &ldk);
    const T* V = sdpa_tile<T>(a.v.row(n, hk, j0), a.v.s2, bk, Ev, pv, &ldv);
    sdpa_gemm<T>(P.gemm, false, true, bq, bk, E, a.scale, Q, ldq, K, ldk, T(0), S, bk);
    for (int64_t r = 0; r < bq; ++r) {
      T* s = S + r * bk;
      const int64_t i = i0 + r;
      if (a.has_mask) sdpa_row_add_mask(s, bk, a.mask.row(n, h, i) + j0 * a.mask.s3, a.mask.s3);
      if (a.causal) {
        const int64_t cend = i - j0 + 1;  // keys j <= i
        if (cend < bk) sdpa_row_fill(s, cend > 0 ? cend : 0, bk, ninf);
      }
      const T mx = sdpa_row_max(s, bk, m[r]);
      const T base = mx == ninf ? T(0) : mx;  // no finite score yet: every p is 0
      const T alpha = sdpa_exp(m[r] - base);
      const T sum = sdpa_row_exp_sum(s, bk, base);
      l[r] = l[r] * alpha + sum;
      m[r] = mx;
      if (a.dropout) {
        sdpa_row_dropout(drop, a, n, h, i, j0, bk);
        VNN_SDPA_SIMD
        for (int64_t c = 0; c < bk; ++c) s[c] *= drop[c];
      }
      if (alpha != T(1)) sdpa_row_scale(O + r * Ev1, Ev, alpha);
    }
    sdpa_gemm<T>(P.gemm, false, false, bq, Ev, bk, T(1), S, bk, V, ldv, T(1), O, Ev1);
  }
  for (int64_t r = 0; r < bq; ++r) {
    const T inv = l[r] > T(0) ? T(1) / l[r] : T(0);
    T* o = a.out.row(n, h, i0 + r);
    const T* acc = O + r * Ev1;
    VNN_SDPA_SIMD
    for (int64_t d = 0; d < Ev; ++d) o[d] = acc[d] * inv;
    a.lse(n, h, i0 + r) = l[r] > T(0) ? m[r] + std::log(l[r]) : ninf;
  }
}

// The backward's per-buffer layout (one thread's workspace).
template <class T>
struct SdpaHostBwdBuffers {
  T *S, *dP, *D, *acc_a, *acc_b, *pq, *pdo, *pk, *pv;
};
template <class T>
VNN_SDPA_INLINE SdpaHostBwdBuffers<T> sdpa_host_bwd_buffers(const SdpaHostPlan<T>& P, T* ws) {
  const int64_t Bq = P.bq, Bk = P.bk, E1 = P.E1, Ev1 = P.Ev1, big = Bq > Bk ? Bq : Bk;
  SdpaHostBwdBuffers<T> b;
  b.S = ws;
  b.dP = b.S + Bq * Bk;
  b.D = b.dP + Bq * Bk;
  b.acc_a = b.D + Bq * Bk;     // dK (Bk x E) or dQ (Bq x E)
  b.acc_b = b.acc_a + big * E1;  // dV (Bk x Ev)
  b.pq = b.acc_b + Bk * Ev1;
  b.pdo = b.pq + Bq * E1;
  b.pk = b.pdo + Bq * Ev1;
  b.pv = b.pk + Bk * E1;
  return b;
}
template <class T>
int64_t sdpa_host_bwd_workspace(const SdpaHostPlan<T>& P) {
  const int64_t Bq = P.bq, Bk = P.bk, E1 = P.E1, Ev1 = P.Ev1, big = Bq > Bk ? Bq : Bk;
  return 3 * Bq * Bk + big * E1 + Bk * Ev1 + Bq * E1 + Bq * Ev1 + Bk * E1 + Bk * Ev1;
}

// One (query tile, key tile) pair of head h: b.S = P (with dropout b.D =
// Pd = P * f) and b.dP = dS = P * (dP * f - delta), from Q (pre-packed),
// dO, K, V.
template <class T>
VNN_SDPA_INLINE void sdpa_host_bwd_pair(const SdpaHostPlan<T>& P, const SdpaHostBwdBuffers<T>& b, int64_t n,
                                        int64_t h, int64_t i0, int64_t bq, int64_t j0, int64_t bk, const T* Q,
                                        int64_t ldq, const T* dO, int64_t lddo, const T* K, int64_t ldk, const T* V,
                                        int64_t ldv) {
  const SdpaArgs<T>& a = *P.a;
  const T ninf = sdpa_neg_inf<T>();
  sdpa_gemm<T>(P.gemm, false, true, bq, bk, a.E, a.scale, Q, ldq, K, ldk, T(0), b.S, bk);
  sdpa_gemm<T>(P.gemm, false, true, bq, bk, a.Ev, T(1), dO, lddo, V, ldv, T(0), b.dP, bk);
  for (int64_t r = 0; r < bq; ++r) {
    T* s = b.S + r * bk;
    T* dp = b.dP + r * bk;
    const int64_t i = i0 + r;
    const T lse = a.lse(n, h, i), delta = a.delta(n, h, i);
    if (lse == ninf) {  // a row with no finite score: no gradient
      sdpa_row_fill(s, 0, bk, T(0));
      sdpa_row_fill(dp, 0, bk, T(0));
      if (a.dropout) sdpa_row_fill(b.D + r * bk, 0, bk, T(0));
      continue;
    }
    if (a.has_mask) sdpa_row_add_mask(s, bk, a.mask.row(n, h, i) + j0 * a.mask.s3, a.mask.s3);
    if (a.causal) {
      const int64_t cend = i - j0 + 1;
      if (cend < bk) sdpa_row_fill(s, cend > 0 ? cend : 0, bk, ninf);
    }
    sdpa_row_exp(s, bk, lse);
    if (a.dropout) {
      T* f = b.D + r * bk;
      sdpa_row_dropout(f, a, n, h, i, j0, bk);
      VNN_SDPA_SIMD
      for (int64_t c = 0; c < bk; ++c) {
        dp[c] = s[c] * (dp[c] * f[c] - delta);
        f[c] *= s[c];
      }
    } else {
      VNN_SDPA_SIMD
      for (int64_t c = 0; c < bk; ++c) dp[c] = s[c] * (dp[c] - delta);
    }
  }
}

// Key tile [j0, j0 + bk) of (n, hk): dk and dv over the G heads and every
// query tile; with_dq also adds each pair's dS K into dq's rows.
template <class T>
VNN_SDPA_INLINE void sdpa_host_bwd_kv(const SdpaHostPlan<T>& P, int64_t n, int64_t hk, int64_t j0, bool with_dq,
                                      T* ws) {
  const SdpaArgs<T>& a = *P.a;
  const int64_t Bq = P.bq, Bk = P.bk, E = a.E, Ev = a.Ev, E1 = P.E1, Ev1 = P.Ev1;
  const int64_t bk = a.S - j0 < Bk ? a.S - j0 : Bk;
  const SdpaHostBwdBuffers<T> b = sdpa_host_bwd_buffers(P, ws);
  int64_t ldk, ldv, ldq, lddo;
  const T* K = sdpa_tile<T>(a.k.row(n, hk, j0), a.k.s2, bk, E, b.pk, &ldk);
  const T* V = sdpa_tile<T>(a.v.row(n, hk, j0), a.v.s2, bk, Ev, b.pv, &ldv);
  T* dK = b.acc_a;
  T* dV = b.acc_b;
  for (int64_t x = 0; x < bk * E1; ++x) dK[x] = T(0);
  for (int64_t x = 0; x < bk * Ev1; ++x) dV[x] = T(0);
  const int64_t first = a.causal ? (j0 / Bq) * Bq : 0;  // rows i < j0 see none of these keys
  for (int64_t g = 0; g < a.G; ++g) {
    const int64_t h = hk * a.G + g;
    for (int64_t i0 = first; i0 < a.L; i0 += Bq) {
      const int64_t bq = a.L - i0 < Bq ? a.L - i0 : Bq;
      const T* Q = sdpa_tile<T>(a.q.row(n, h, i0), a.q.s2, bq, E, b.pq, &ldq);
      const T* dO = sdpa_tile<T>(a.dout.row(n, h, i0), a.dout.s2, bq, Ev, b.pdo, &lddo);
      sdpa_host_bwd_pair(P, b, n, h, i0, bq, j0, bk, Q, ldq, dO, lddo, K, ldk, V, ldv);
      const T* Pd = a.dropout ? b.D : b.S;
      sdpa_gemm<T>(P.gemm, true, false, bk, Ev, bq, T(1), Pd, bk, dO, lddo, T(1), dV, Ev1);
      sdpa_gemm<T>(P.gemm, true, false, bk, E, bq, a.scale, b.dP, bk, Q, ldq, T(1), dK, E1);
      if (with_dq) {
        const int64_t ldc = bq <= 1 ? E1 : a.dq.s2;
        sdpa_gemm<T>(P.gemm, false, false, bq, E, bk, a.scale, b.dP, bk, K, ldk, T(1), a.dq.row(n, h, i0), ldc);
      }
    }
  }
  for (int64_t c = 0; c < bk; ++c) {
    T* dk = a.dk.row(n, hk, j0 + c);
    T* dv = a.dv.row(n, hk, j0 + c);
    for (int64_t e = 0; e < E; ++e) dk[e] = dK[c * E1 + e];
    for (int64_t d = 0; d < Ev; ++d) dv[d] = dV[c * Ev1 + d];
  }
}

// Fused backward item w = (n, hk): dq of the group's heads zeroed, then
// every key tile with dq.
template <class T>
VNN_SDPA_INLINE void sdpa_host_bwd_group_item(const SdpaHostPlan<T>& P, int64_t w, T* ws) {
  const SdpaArgs<T>& a = *P.a;
  const int64_t n = w / a.Hk, hk = w % a.Hk;
  for (int64_t g = 0; g < a.G; ++g)
    for (int64_t i = 0; i < a.L; ++i) {
      T* dq = a.dq.row(n, hk * a.G + g, i);
      for (int64_t e = 0; e < a.E; ++e) dq[e] = T(0);
    }
  for (int64_t j0 = 0; j0 < a.S; j0 += P.bk) sdpa_host_bwd_kv(P, n, hk, j0, true, ws);
}

// Split backward, pass 1: item w = (n, hk, key tile).
template <class T>
VNN_SDPA_INLINE void sdpa_host_bwd_kv_item(const SdpaHostPlan<T>& P, int64_t w, T* ws) {
  const SdpaArgs<T>& a = *P.a;
  const int64_t kb = w % P.nkb, hk = (w / P.nkb) % a.Hk, n = w / (P.nkb * a.Hk);
  sdpa_host_bwd_kv(P, n, hk, kb * P.bk, false, ws);
}

// Split backward, pass 2: item w = (n, h, query tile), longest causal first.
template <class T>
VNN_SDPA_INLINE void sdpa_host_bwd_q_item(const SdpaHostPlan<T>& P, int64_t w, T* ws) {
  const SdpaArgs<T>& a = *P.a;
  const int64_t Bq = P.bq, Bk = P.bk, E = a.E, Ev = a.Ev, E1 = P.E1;
  const int64_t heads = a.N * a.Hq;
  const int64_t qb = P.nqb - 1 - w / heads, n = (w % heads) / a.Hq, h = w % a.Hq, hk = h / a.G;
  const int64_t i0 = qb * Bq, bq = a.L - i0 < Bq ? a.L - i0 : Bq;
  const SdpaHostBwdBuffers<T> b = sdpa_host_bwd_buffers(P, ws);
  int64_t ldk, ldv, ldq, lddo;
  const T* Q = sdpa_tile<T>(a.q.row(n, h, i0), a.q.s2, bq, E, b.pq, &ldq);
  const T* dO = sdpa_tile<T>(a.dout.row(n, h, i0), a.dout.s2, bq, Ev, b.pdo, &lddo);
  T* dQ = b.acc_a;
  for (int64_t x = 0; x < bq * E1; ++x) dQ[x] = T(0);
  const int64_t kend = a.causal ? (a.S < i0 + bq ? a.S : i0 + bq) : a.S;
  for (int64_t j0 = 0; j0 < kend; j0 += Bk) {
    const int64_t bk = kend - j0 < Bk ? kend - j0 : Bk;
    const T* K = sdpa_tile<T>(a.k.row(n, hk, j0), a.k.s2, bk, E, b.pk, &ldk);
    const T* V = sdpa_tile<T>(a.v.row(n, hk, j0), a.v.s2, bk, Ev, b.pv, &ldv);
    sdpa_host_bwd_pair(P, b, n, h, i0, bq, j0, bk, Q, ldq, dO, lddo, K, ldk, V, ldv);
    sdpa_gemm<T>(P.gemm, false, false, bq, E, bk, a.scale, b.dP, bk, K, ldk, T(1), dQ, E1);
  }
  for (int64_t r = 0; r < bq; ++r) {
    T* dq = a.dq.row(n, h, i0 + r);
    for (int64_t e = 0; e < E; ++e) dq[e] = dQ[r * E1 + e];
  }
}

// Each item kind compiled for AVX-512, AVX2 + FMA and the baseline ISA.
template <class T>
using SdpaHostItem = void (*)(const SdpaHostPlan<T>&, int64_t, T*);

#if defined(VNN_SDPA_X86)
#define VNN_SDPA_ITEM_VARIANTS(name)                                                                         \
  template <class T>                                                                                         \
  VNN_SDPA_TARGET_AVX512 void name##_avx512(const SdpaHostPlan<T>& p, int64_t w, T* ws) { name<T>(p, w, ws); } \
  template <class T>                                                                                         \
  VNN_SDPA_TARGET_AVX2 void name##_avx2(const SdpaHostPlan<T>& p, int64_t w, T* ws) { name<T>(p, w, ws); }     \
  template <class T>                                                                                         \
  void name##_base(const SdpaHostPlan<T>& p, int64_t w, T* ws) { name<T>(p, w, ws); }                         \
  template <class T>                                                                                         \
  SdpaHostItem<T> name##_pick() {                                                                            \
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&                           \
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") && !sdpa_knob("avx2") &&    \
        !sdpa_knob("base"))                                                                                  \
      return &name##_avx512<T>;                                                                              \
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && !sdpa_knob("base"))              \
      return &name##_avx2<T>;                                                                                \
    return &name##_base<T>;                                                                                  \
  }
#else
#define VNN_SDPA_ITEM_VARIANTS(name)                                                               \
  template <class T>                                                                               \
  void name##_base(const SdpaHostPlan<T>& p, int64_t w, T* ws) { name<T>(p, w, ws); }               \
  template <class T>                                                                               \
  SdpaHostItem<T> name##_pick() { return &name##_base<T>; }
#endif
VNN_SDPA_ITEM_VARIANTS(sdpa_host_forward_item)
VNN_SDPA_ITEM_VARIANTS(sdpa_host_bwd_group_item)
VNN_SDPA_ITEM_VARIANTS(sdpa_host_bwd_kv_item)
VNN_SDPA_ITEM_VARIANTS(sdpa_host_bwd_q_item)
#undef VNN_SDPA_ITEM_VARIANTS

// Runs items [0, count) of `item` on exec's threads, each with a workspace
// of `per` elements of its own (dynamic schedule: causal items differ).
template <class Exec, class T>
void sdpa_host_run(const Exec& exec, const char* label, const SdpaHostPlan<T>& plan, SdpaHostItem<T> item,
                   int64_t count, int64_t per) {
  if (count <= 0) return;
  per = (per + 15) / 16 * 16;  // 64-byte rows per thread
  using Token = Kokkos::Experimental::UniqueToken<Exec, Kokkos::Experimental::UniqueTokenScope::Instance>;
  Token token(exec);
  Kokkos::View<T*, Kokkos::HostSpace> ws(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("vnn::sdpa_ws")),
                                         size_t(per) * size_t(token.size()));
  T* base = ws.data();
  using Policy = Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>, Kokkos::IndexType<int64_t>>;
  Kokkos::parallel_for(label, Policy(exec, 0, count).set_chunk_size(1), [=](int64_t w) {
    const int id = token.acquire();
    item(plan, w, base + int64_t(id) * per);
    token.release(id);
  });
  exec.fence();
}

// Query tiles of up to 256 rows (128 below L = 768, as PyTorch's CPU
// kernel), key tiles of 512; smaller query tiles while there are fewer
// than four items per thread.
inline int64_t sdpa_host_query_tile(int64_t L, int64_t heads, int64_t threads) {
  int64_t bq = L >= 768 ? 256 : 128;
  while (bq > 32 && heads * ((L + bq - 1) / bq) < 4 * threads) bq /= 2;
  return bq;
}

template <class Exec, class T>
void sdpa_host(const Exec& exec, const SdpaArgs<T>& a, bool backward, const HostGemm* gemm) {
  const int64_t threads = exec.concurrency() > 0 ? exec.concurrency() : 1;
  SdpaHostPlan<T> P;
  P.a = &a;
  P.gemm = sdpa_knob("noblas") ? nullptr : gemm;
  P.E1 = a.E > 1 ? a.E : 1;
  P.Ev1 = a.Ev > 1 ? a.Ev : 1;
  if (!backward) {
    P.bq = sdpa_host_query_tile(a.L, a.N * a.Hq, threads);
    P.bk = 512;
    P.nqb = (a.L + P.bq - 1) / P.bq;
    const int64_t per = P.bq * P.bk + P.bq * P.Ev1 + 2 * P.bq + P.bk + P.bq * P.E1 + P.bk * P.E1 + P.bk * P.Ev1;
    sdpa_host_run<Exec, T>(exec, "vnn::sdpa_forward", P, sdpa_host_forward_item_pick<T>(), a.N * a.Hq * P.nqb, per);
    return;
  }
  P.bq = a.L >= 128 ? 128 : 64;
  P.bk = 256;
  P.nqb = (a.L + P.bq - 1) / P.bq;
  P.nkb = (a.S + P.bk - 1) / P.bk;
  const int64_t per = sdpa_host_bwd_workspace(P);
  // One item per (n, hk) when those fill the pool to 80% (the split costs
  // one more product per tile pair) and dq's rows take a BLAS product.
  const int64_t groups = a.N * a.Hk, rounds = (groups + threads - 1) / threads;
  const bool dq_rows = a.L <= 1 || a.dq.s2 >= P.E1;
  if (dq_rows && groups * 10 >= 8 * threads * rounds && !sdpa_knob("split")) {
    sdpa_host_run<Exec, T>(exec, "vnn::sdpa_backward", P, sdpa_host_bwd_group_item_pick<T>(), groups, per);
    return;
  }
  sdpa_host_run<Exec, T>(exec, "vnn::sdpa_backward_kv", P, sdpa_host_bwd_kv_item_pick<T>(), groups * P.nkb, per);
  sdpa_host_run<Exec, T>(exec, "vnn::sdpa_backward_q", P, sdpa_host_bwd_q_item_pick<T>(), a.N * a.Hq * P.nqb, per);
}

}  // namespace vnn::kernels
