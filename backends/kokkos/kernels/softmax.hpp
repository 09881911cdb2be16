// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SOFTMAX over the last dim (ints[0] = 1: log_softmax), numerically stable:
// each row subtracts its max before exp. out and in0 have the same sizes and
// any strides. One work item per row; the sum of exponentials accumulates in
// float64 for float32 rows.
#pragma once
#include <Kokkos_Core.hpp>
#include <type_traits>

#include "kokkos/kernels/dispatch.hpp"

namespace vnn::kernels {

template <class Exec, class T>
void softmax_typed(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& in, bool log_out) {
  using C = compute_t<T>;
  const T* x = typed<T>(in);
  T* o = typed<T>(out);
  vnn_tensor_desc lo = out, li = in;
  const int nd = in.ndim;
  const int64_t n = nd > 0 ? in.sizes[nd - 1] : 1;
  const int64_t xs = nd > 0 ? in.strides[nd - 1] : 1, os = nd > 0 ? out.strides[nd - 1] : 1;
  lo.ndim = li.ndim = nd > 0 ? nd - 1 : 0;
  const StridedIndex oi(lo), xi(li);
  int64_t rows = 1;
  for (int i = 0; i + 1 < nd; ++i) rows *= in.sizes[i];
  if (n == 0 || rows == 0) return;
  Kokkos::parallel_for("vnn::softmax", Range<Exec>(exec, 0, rows), KOKKOS_LAMBDA(int64_t r) {
    const T* xr = x + xi(r);
    T* orow = o + oi(r);
    C mx = load(xr[0]);
    for (int64_t j = 1; j < n; ++j) {
      C v = load(xr[j * xs]);
      if (v > mx || v != v) mx = v;
    }
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += double(kmath::exp(load(xr[j * xs]) - mx));
    if (log_out) {
      C lse = C(kmath::log(sum));
      for (int64_t j = 0; j < n; ++j) orow[j * os] = store<T>(load(xr[j * xs]) - mx - lse);
    } else {
      C inv = C(1.0 / sum);
      for (int64_t j = 0; j < n; ++j) orow[j * os] = store<T>(kmath::exp(load(xr[j * xs]) - mx) * inv);
    }
  });
}

// float32, float64 and 16-bit storage (computed in float32, the sum in
// float64).
template <class Exec>
bool softmax(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& in, int64_t log_out) {
  if (in.dtype != out.dtype || in.ndim != out.ndim) return refuse("takes in and out of one dtype and rank");
  dispatch_types<FloatingAndHalfTypes>("softmax", out.dtype,
                                       [&](auto t) { softmax_typed<Exec, decltype(t)>(exec, out, in, log_out != 0); });
  return true;
}

}  // namespace vnn::kernels
