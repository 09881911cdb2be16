// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MATMUL: out[b] = alpha * a[b] @ b[b] + beta * out[b] for every batch
// index b. a is [B..., M, K], b is [B..., K, N], both with any strides
// (stride-0 batch dims broadcast); out is [B..., M, N] and contiguous.
//
// Two paths:
//  - matmul(): a portable register-blocked kernel for any execution space.
//    Each work item computes a 4x4 tile of out, keeping the 16 sums in
//    registers and streaming a row-block of a and a column-block of b; the
//    tile index runs fastest along N so that neighbouring work items read
//    neighbouring elements of b. Accumulates in the element type (float32
//    in float32, like BLAS).
//  - matmul_blas<Blas>(): for host spaces with a BLAS (OpenBLAS on the CPU
//    plugin): one gemm per batch, passing each operand as NoTrans/Trans
//    with its leading dimension when one of its last two dims is
//    unit-stride, else packing it into a contiguous host buffer first.
//  - matmul_device_blas<Blas>(): cuBLAS / hipBLAS on a device queue, one
//    strided-batched call. Both map the op through common/gemm_plan.hpp and
//    live in matmul_blas.hpp (plugin.hpp includes them, not this kernel).
#pragma once
#include <Kokkos_Core.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "common/gemm_plan.hpp"
#include "kokkos/kernels/copy.hpp"
#include "kokkos/kernels/dispatch.hpp"

namespace vnn::kernels {

// The batch dims (all but the last two) of a matmul operand.
inline StridedIndex batch_index(const vnn_tensor_desc& d) {
  vnn_tensor_desc b = d;
  b.ndim = d.ndim >= 2 ? d.ndim - 2 : 0;
  return StridedIndex(b);
}

struct MatmulShape {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int64_t a_rs = 0, a_cs = 0, b_rs = 0, b_cs = 0;  // row / column strides of a[b] and b[b]
};

inline bool matmul_shape(const vnn_tensor_desc& out, const vnn_tensor_desc& a, const vnn_tensor_desc& b,
                         MatmulShape* s) {
  if (a.ndim < 2 || b.ndim != a.ndim || out.ndim != a.ndim)
    return refuse("takes a, b and out of one rank >= 2, got ", a.ndim, ", ", b.ndim, " and ", out.ndim);
  int nd = a.ndim;
  s->m = a.sizes[nd - 2];
  s->k = a.sizes[nd - 1];
  s->n = b.sizes[nd - 1];
  if (b.sizes[nd - 2] != s->k || out.sizes[nd - 2] != s->m || out.sizes[nd - 1] != s->n)
    return refuse("shapes a ", vnn::detail::desc_sizes(a), ", b ", vnn::detail::desc_sizes(b), ", out ",
                  vnn::detail::desc_sizes(out), " do not agree");
  s->batch = 1;
  for (int i = 0; i < nd - 2; ++i) s->batch *= out.sizes[i];
  s->a_rs = a.strides[nd - 2];
  s->a_cs = a.strides[nd - 1];
  s->b_rs = b.strides[nd - 2];
  s->b_cs = b.strides[nd - 1];
  return true;
}

template <class Exec, class T>
void matmul_typed(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a,
                  const vnn_tensor_desc& b, const MatmulShape& s, double alpha_d, double beta_d) {
  using C = compute_t<T>;
  constexpr int64_t R = 4;  // tile rows and columns
  const T* x = typed<T>(a);
  const T* y = typed<T>(b);
  T* o = typed<T>(out);
  const StridedIndex ab = batch_index(a), bb = batch_index(b);
  const int64_t m = s.m, n = s.n, kk = s.k, out_off = out.offset;
  const int64_t ars = s.a_rs, acs = s.a_cs, brs = s.b_rs, bcs = s.b_cs;
  const int64_t mt = (m + R - 1) / R, nt = (n + R - 1) / R;
  const C alpha = C(alpha_d), beta = C(beta_d);
  const bool use_beta = beta_d != 0.0;
  Kokkos::parallel_for("vnn::matmul", Range<Exec>(exec, 0, s.batch * mt * nt), KOKKOS_LAMBDA(int64_t w) {
    const int64_t jt = w % nt, it = (w / nt) % mt, bi = w / (nt * mt);
    const int64_t i0 = it * R, j0 = jt * R;
    const T* xa = x + ab(bi);
    const T* yb = y + bb(bi);
    T* ob = o + out_off + bi * m * n;
    C acc[R][R];
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < R; ++c) acc[r][c] = C(0);
    if (i0 + R <= m && j0 + R <= n) {
      for (int64_t p = 0; p < kk; ++p) {
        C av[R], bv[R];
        for (int r = 0; r < R; ++r) av[r] = load(xa[(i0 + r) * ars + p * acs]);
        for (int c = 0; c < R; ++c) bv[c] = load(yb[p * brs + (j0 + c) * bcs]);
        for (int r = 0; r < R; ++r)
          for (int c = 0; c < R; ++c) acc[r][c] += av[r] * bv[c];
      }
    } else {  // edge tile
      for (int64_t p = 0; p < kk; ++p)
        for (int r = 0; r < R && i0 + r < m; ++r) {
          C av = load(xa[(i0 + r) * ars + p * acs]);
          for (int c = 0; c < R && j0 + c < n; ++c) acc[r][c] += av * load(yb[p * brs + (j0 + c) * bcs]);
        }
    }
    for (int r = 0; r < R && i0 + r < m; ++r)
      for (int c = 0; c < R && j0 + c < n; ++c) {
        T& dst = ob[(i0 + r) * n + j0 + c];
        C v = alpha * acc[r][c];
        if (use_beta) v += beta * load(dst);
        dst = store<T>(v);
      }
  });
}

// float32, float64, int32, int64.
template <class Exec>
bool matmul(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a, const vnn_tensor_desc& b,
            double alpha, double beta) {
  MatmulShape s;
  if (!matmul_shape(out, a, b, &s)) return false;
  if (s.batch * s.m * s.n == 0) return true;
  // Not the 16-bit types: the core runs those through float32 (and a
  // vendor BLAS with float32 accumulation where a device has one).
  dispatch_types<ArithmeticTypes>("matmul", out.dtype,
                                  [&](auto t) { matmul_typed<Exec, decltype(t)>(exec, out, a, b, s, alpha, beta); });
  return true;
}

}  // namespace vnn::kernels
