// COPY: strided to strided, converting between any two dtypes.
#pragma once
#include "kokkos/kernels/types.hpp"

namespace vnn::kernels {

template <class Exec, class To, class From>
void copy_typed(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& in) {
  To* o = typed<To>(out);
  const From* x = typed<From>(in);
  const StridedIndex oi(out), xi(in);
  Kokkos::parallel_for("vnn::copy", Range<Exec>(exec, 0, numel(out)),
                       KOKKOS_LAMBDA(int64_t i) { o[oi(i)] = store<To>(load(x[xi(i)])); });
}

template <class Exec>
bool copy(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& in) {
  bool known = false;
  dispatch_dtype(out.dtype, [&](auto to) {
    known = dispatch_dtype(in.dtype, [&](auto from) {
      copy_typed<Exec, decltype(to), decltype(from)>(exec, out, in);
    });
  });
  return known;
}

}  // namespace vnn::kernels
