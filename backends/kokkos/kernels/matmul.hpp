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
#pragma once
#include <Kokkos_Core.hpp>
#include <type_traits>
#include <vector>

#include "kokkos/kernels/types.hpp"

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
  if (a.ndim < 2 || b.ndim != a.ndim || out.ndim != a.ndim) return false;
  int nd = a.ndim;
  s->m = a.sizes[nd - 2];
  s->k = a.sizes[nd - 1];
  s->n = b.sizes[nd - 1];
  if (b.sizes[nd - 2] != s->k || out.sizes[nd - 2] != s->m || out.sizes[nd - 1] != s->n) return false;
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
  switch (out.dtype) {
    case VNN_FLOAT32: matmul_typed<Exec, float>(exec, out, a, b, s, alpha, beta); return true;
    case VNN_FLOAT64: matmul_typed<Exec, double>(exec, out, a, b, s, alpha, beta); return true;
    case VNN_INT32: matmul_typed<Exec, int32_t>(exec, out, a, b, s, alpha, beta); return true;
    case VNN_INT64: matmul_typed<Exec, int64_t>(exec, out, a, b, s, alpha, beta); return true;
    default: return false;
  }
}

// ---- host BLAS -------------------------------------------------------------

// How one [rows, cols] operand goes to a row-major gemm.
struct BlasOperand {
  bool ok = false;     // usable in place
  bool trans = false;  // stored column-major: pass Trans
  int64_t ld = 0;
};

inline BlasOperand blas_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  BlasOperand op;
  int64_t r1 = rows > 1 ? rows : 1, c1 = cols > 1 ? cols : 1;
  if ((cols <= 1 || cs == 1) && (rows <= 1 || rs >= c1)) {
    op.ok = true;
    op.ld = rows <= 1 ? c1 : rs;
  } else if ((rows <= 1 || rs == 1) && (cols <= 1 || cs >= r1)) {
    op.ok = true;
    op.trans = true;
    op.ld = cols <= 1 ? r1 : cs;
  }
  return op;
}

// Blas supplies gemm(bool trans_a, bool trans_b, m, n, k, alpha, a, lda, b,
// ldb, beta, c, ldc) for float and double, row-major. Only for spaces whose
// memory the host reads; returns false for other dtypes.
template <class Blas>
bool matmul_blas(const vnn_tensor_desc& out, const vnn_tensor_desc& a, const vnn_tensor_desc& b, double alpha,
                 double beta) {
  MatmulShape s;
  if (!matmul_shape(out, a, b, &s)) return false;
  auto run = [&](auto t) {
    using T = decltype(t);
    if (s.batch * s.m * s.n == 0) return;
    const StridedIndex ab = batch_index(a), bb = batch_index(b);
    BlasOperand pa = blas_operand(s.m, s.k, s.a_rs, s.a_cs), pb = blas_operand(s.k, s.n, s.b_rs, s.b_cs);
    std::vector<T> packed_a, packed_b;
    if (!pa.ok) packed_a.resize(size_t(s.m * s.k));
    if (!pb.ok) packed_b.resize(size_t(s.k * s.n));
    const T* x = typed<T>(a);
    const T* y = typed<T>(b);
    T* o = typed<T>(out) + out.offset;
    for (int64_t bi = 0; bi < s.batch; ++bi) {
      const T* xa = x + ab(bi);
      const T* yb = y + bb(bi);
      int64_t lda = pa.ld, ldb = pb.ld;
      if (!pa.ok) {
        if (bi == 0 || a.ndim > 2) {
          for (int64_t i = 0; i < s.m; ++i)
            for (int64_t p = 0; p < s.k; ++p) packed_a[size_t(i * s.k + p)] = xa[i * s.a_rs + p * s.a_cs];
        }
        xa = packed_a.data();
        lda = s.k > 1 ? s.k : 1;
      }
      if (!pb.ok) {
        if (bi == 0 || b.ndim > 2) {
          for (int64_t p = 0; p < s.k; ++p)
            for (int64_t j = 0; j < s.n; ++j) packed_b[size_t(p * s.n + j)] = yb[p * s.b_rs + j * s.b_cs];
        }
        yb = packed_b.data();
        ldb = s.n > 1 ? s.n : 1;
      }
      Blas::gemm(pa.ok && pa.trans, pb.ok && pb.trans, s.m, s.n, s.k, T(alpha), xa, lda, yb, ldb, T(beta),
                 o + bi * s.m * s.n, s.n > 1 ? s.n : 1);
    }
  };
  switch (out.dtype) {
    case VNN_FLOAT32: run(float{}); return true;
    case VNN_FLOAT64: run(double{}); return true;
    default: return false;
  }
}

}  // namespace vnn::kernels
