// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MATMUL through a vendor BLAS (see matmul.hpp for the op): the plugin's
// own paths, templated on its Traits' BLAS, so they live beside plugin.hpp
// rather than with the portable kernel, which is compiled in a translation
// unit of its own (kokkos/instantiate/matmul.hpp).
//  - matmul_blas<Blas>(): for host spaces with a BLAS (OpenBLAS on the CPU
//    plugin).
//  - matmul_device_blas<Blas>(): cuBLAS / hipBLAS on a device queue; packs
//    operands BLAS cannot read in place with the COPY kernel.
#pragma once
#include <Kokkos_Core.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/gemm_plan.hpp"
#include "kokkos/kernels/dispatch.hpp"
#include "kokkos/kernels/entry.hpp"

namespace vnn::kernels {


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
    // On exec's device: with several GPUs (Kokkos >= 4.3) a plain
    // allocation would land on Kokkos's first one.
    buf = Scratch(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("vnn::gemm_pack")),
                  size_t(elems) * dtype_bytes(d.dtype));
    vnn_tensor_desc packed = packed_desc(d, buf.data());
    if (!copy(exec, packed, d))
      throw std::runtime_error(vnn::detail::str_cat("matmul: packing a ", vnn::detail::abi_dtype(d.dtype),
                                                    " operand for BLAS failed"));
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
