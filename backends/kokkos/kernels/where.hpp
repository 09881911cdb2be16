// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// WHERE: out = cond ? a : b over strided, same-shape operands (broadcast
// inputs carry stride 0). cond is bool; a, b and out share one dtype.
#pragma once
#include <Kokkos_Core.hpp>

#include "kokkos/kernels/dispatch.hpp"
#include "kokkos/kernels/types.hpp"

namespace vnn::kernels {

template <class Exec, class T>
void where_typed(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& cond,
                 const vnn_tensor_desc& a, const vnn_tensor_desc& b) {
  T* o = typed<T>(out);
  const Bool* c = typed<Bool>(cond);  // bytes: any non-zero value is true
  const T* x = typed<T>(a);
  const T* y = typed<T>(b);
  const StridedIndex oi(out), ci(cond), xi(a), yi(b);
  // Elements are copied as stored (no compute type): float16 bits and NaN
  // payloads pass through unchanged.
  Kokkos::parallel_for("vnn::where", Range<Exec>(exec, 0, numel(out)), KOKKOS_LAMBDA(int64_t i) {
    o[oi(i)] = c[ci(i)].bits != 0 ? x[xi(i)] : y[yi(i)];
  });
}

template <class Exec>
bool where(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& cond, const vnn_tensor_desc& a,
           const vnn_tensor_desc& b) {
  if (cond.dtype != VNN_BOOL || a.dtype != out.dtype || b.dtype != out.dtype)
    return refuse("takes a bool condition and a, b, out of one dtype");
  return dispatch_dtype(out.dtype, [&](auto t) { where_typed<Exec, decltype(t)>(exec, out, cond, a, b); });
}

}  // namespace vnn::kernels
