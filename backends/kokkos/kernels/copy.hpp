// COPY: strided to strided, converting between any two dtypes.
#pragma once
#include "kokkos/kernels/types.hpp"

namespace vnn::kernels {

template <class Exec, class To, class From>
void copy_typed(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& in) {
  To* o = typed<To>(out);
  const From* x = typed<From>(in);
  const StridedIndex oi(out), xi(in);
  if (oi.contiguous && xi.contiguous) {
    To* op = o + oi.offset;
    const From* xp = x + xi.offset;
    Kokkos::parallel_for("vnn::copy_contiguous", Range<Exec>(exec, 0, numel(out)),
                         KOKKOS_LAMBDA(int64_t i) { op[i] = store<To>(load(xp[i])); });
    return;
  }
  bool same_shape = out.ndim == in.ndim;
  for (int i = 0; same_shape && i < out.ndim; ++i) same_shape = out.sizes[i] == in.sizes[i];
  if (!same_shape) {  // a reshaping copy: element order only
    Kokkos::parallel_for("vnn::copy", Range<Exec>(exec, 0, numel(out)),
                         KOKKOS_LAMBDA(int64_t i) { o[oi(i)] = store<To>(load(x[xi(i)])); });
    return;
  }
  // Permuted / broadcast copies: rows x runs, offsets once per run (the
  // same fast path as elementwise.hpp).
  const vnn_tensor_desc* descs[2] = {&out, &in};
  const StridedRuns<2> runs(descs);
  Kokkos::parallel_for("vnn::copy_runs", Range<Exec>(exec, 0, runs.count), KOKKOS_LAMBDA(int64_t w) {
    int64_t off[2];
    const int64_t len = runs.start(w, off);
    const int64_t so = runs.step[0], sx = runs.step[1];
    To* op = o + off[0];
    const From* xp = x + off[1];
    for (int64_t j = 0; j < len; ++j) op[j * so] = store<To>(load(xp[j * sx]));
  });
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
