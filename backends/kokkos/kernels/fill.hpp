// FILL: every element of a strided output = one value.
#pragma once
#include "kokkos/kernels/types.hpp"

namespace vnn::kernels {

template <class Exec, class T>
void fill_typed(const Exec& exec, const vnn_tensor_desc& out, double value) {
  T* o = typed<T>(out);
  const T v = store<T>(value);
  const StridedIndex oi(out);
  Kokkos::parallel_for("vnn::fill", Range<Exec>(exec, 0, numel(out)),
                       KOKKOS_LAMBDA(int64_t i) { o[oi(i)] = v; });
}

template <class Exec>
bool fill(const Exec& exec, const vnn_tensor_desc& out, double value) {
  return dispatch_dtype(out.dtype, [&](auto t) { fill_typed<Exec, decltype(t)>(exec, out, value); });
}

}  // namespace vnn::kernels
