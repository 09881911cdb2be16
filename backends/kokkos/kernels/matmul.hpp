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
//    strided-batched call. Both map the op through common/gemm_plan.hpp.
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
  // Not the 16-bit types: the core runs those through float32 (and a
  // vendor BLAS with float32 accumulation where a device has one).
  dispatch_types<ArithmeticTypes>("matmul", out.dtype,
                                  [&](auto t) { matmul_typed<Exec, decltype(t)>(exec, out, a, b, s, alpha, beta); });
  return true;
}

// ---- vendor BLAS -----------------------------------------------------------

// Blas supplies gemm(bool trans_a, bool trans_b, m, n, k, alpha, a, lda, b,
// ldb, beta, c, ldc) for float and double, row-major. Only for spaces whose
// memory the host reads; returns false for other dtypes. Operands that BLAS
// cannot read in place are packed into a host buffer per batch.
template <class Blas>
bool matmul_blas(const vnn_tensor_desc& out, const vnn_tensor_desc& a, const vnn_tensor_desc& b, double alpha,
                 double beta) {
  GemmPlan p;
  if (!plan_gemm(out, a, b, &p)) return false;
  auto run = [&](auto t) {
    using T = decltype(t);
    if (p.batch * p.m * p.n == 0) return;
    std::vector<T> packed_a, packed_b;
    if (!p.a.ok) packed_a.resize(size_t(p.m * p.k));
    if (!p.b.ok) packed_b.resize(size_t(p.k * p.n));
    const int nd = a.ndim;
    const T* x = typed<T>(a);
    const T* y = typed<T>(b);
    T* o = typed<T>(out) + out.offset;
    for (int64_t bi = 0; bi < p.batch; ++bi) {
      const T* xa = x + batch_offset(a, bi);
      const T* yb = y + batch_offset(b, bi);
      int64_t lda = p.a.ld, ldb = p.b.ld;
      if (!p.a.ok) {
        const int64_t rs = a.strides[nd - 2], cs = a.strides[nd - 1];
        for (int64_t i = 0; i < p.m; ++i)
          for (int64_t q = 0; q < p.k; ++q) packed_a[size_t(i * p.k + q)] = xa[i * rs + q * cs];
        xa = packed_a.data();
        lda = p.k > 1 ? p.k : 1;
      }
      if (!p.b.ok) {
        const int64_t rs = b.strides[nd - 2], cs = b.strides[nd - 1];
        for (int64_t q = 0; q < p.k; ++q)
          for (int64_t j = 0; j < p.n; ++j) packed_b[size_t(q * p.n + j)] = yb[q * rs + j * cs];
        yb = packed_b.data();
        ldb = p.n > 1 ? p.n : 1;
      }
      Blas::gemm(p.a.ok && p.a.trans, p.b.ok && p.b.trans, p.m, p.n, p.k, T(alpha), xa, lda, yb, ldb, T(beta),
                 o + bi * p.stride_c, p.ldc);
    }
  };
  return try_dispatch_types<FloatingTypes>(out.dtype, run);
}

// A device BLAS (cuBLAS, hipBLAS) on the queue exec: Blas supplies
//   static bool supports(int32_t dtype);
//   static void gemm(const Exec&, int32_t dtype, const GemmPlan&, double
//                    alpha, double beta, const void* a, int64_t a_off,
//                    const void* b, int64_t b_off, void* c, int64_t c_off);
// gemm: one strided-batched row-major call over plan.batch batches (offsets
// and strides in elements), throwing on a vendor error. Operands BLAS
// cannot read in place are first packed contiguous on the device (a COPY
// kernel into a scratch buffer); batch layouts with no single stride (a
// broadcast dim inside a real one) become one call per batch.
template <class Blas, class Mem, class Exec>
bool matmul_device_blas(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a_in,
                        const vnn_tensor_desc& b_in, double alpha, double beta) {
  GemmPlan p;
  if (!Blas::supports(out.dtype) || !plan_gemm(out, a_in, b_in, &p)) return false;
  if (p.batch * p.m * p.n == 0) return true;
  // Freed at return while the gemm may still be queued: safe, since freeing
  // device memory (cudaFree / hipFree under Kokkos) waits for the device.
  // Only operands BLAS cannot read in place pay for it.
  using Scratch = Kokkos::View<char*, Mem>;
  Scratch scratch_a, scratch_b;
  vnn_tensor_desc a = a_in, b = b_in;
  auto pack = [&](const vnn_tensor_desc& d, int64_t elems, Scratch& buf) {
    buf = Scratch(Kokkos::ViewAllocateWithoutInitializing("vnn::gemm_pack"), size_t(elems) * dtype_bytes(d.dtype));
    vnn_tensor_desc packed = packed_desc(d, buf.data());
    if (!copy(exec, packed, d)) throw std::runtime_error("matmul: packing an operand for BLAS failed (dtype " +
                                                          std::to_string(d.dtype) + ")");
    return packed;
  };
  if (!p.a.ok) a = pack(a_in, p.batch * p.m * p.k, scratch_a);
  if (!p.b.ok) b = pack(b_in, p.batch * p.k * p.n, scratch_b);
  if (!p.a.ok || !p.b.ok) plan_gemm(out, a, b, &p);
  if (p.uniform) {
    Blas::gemm(exec, out.dtype, p, alpha, beta, a.data, a.offset, b.data, b.offset, out.data, out.offset);
    return true;
  }
  GemmPlan one = p;
  one.batch = 1;
  for (int64_t bi = 0; bi < p.batch; ++bi)
    Blas::gemm(exec, out.dtype, one, alpha, beta, a.data, batch_offset(a, bi), b.data, batch_offset(b, bi),
               out.data, out.offset + bi * p.stride_c);
  return true;
}

}  // namespace vnn::kernels
