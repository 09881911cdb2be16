// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// COPY: strided to strided, converting between any two dtypes.
#pragma once
#include "kokkos/kernels/types.hpp"

namespace vnn::kernels {

// A transposing copy: out's last dim unit-stride, in's unit-stride dim the
// one before it (x.t().contiguous(), after the core's dim coalescing: 2 dims,
// or 3 with a batch dim). Run-wise, one side would read a new cache line
// per element; 32x32 tiles keep both sides' lines in L1. False: not such a
// copy.
template <class Exec, class To, class From>
bool copy_transposed(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& in) {
  const int nd = out.ndim;
  if (nd < 2 || nd > 3 || in.ndim != nd) return false;
  if (out.strides[nd - 1] != 1 || in.strides[nd - 2] != 1 || in.strides[nd - 1] == 1) return false;
  constexpr int64_t kTile = 32;
  const int64_t B = nd == 3 ? out.sizes[0] : 1, R = out.sizes[nd - 2], Cn = out.sizes[nd - 1];
  const int64_t ob = nd == 3 ? out.strides[0] : 0, ib = nd == 3 ? in.strides[0] : 0;
  const int64_t orow = out.strides[nd - 2], icol = in.strides[nd - 1];
  const int64_t tr = (R + kTile - 1) / kTile, tc = (Cn + kTile - 1) / kTile;
  To* o = typed<To>(out) + out.offset;
  const From* x = typed<From>(in) + in.offset;
  Kokkos::parallel_for("vnn::copy_transposed", Range<Exec>(exec, 0, B * tr * tc), KOKKOS_LAMBDA(int64_t w) {
    const int64_t b = w / (tr * tc), t = w - b * (tr * tc);
    const int64_t r0 = (t / tc) * kTile, c0 = (t % tc) * kTile;
    const int64_t r1 = r0 + kTile < R ? r0 + kTile : R, c1 = c0 + kTile < Cn ? c0 + kTile : Cn;
    To* op = o + b * ob;
    const From* xp = x + b * ib;
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t c = c0; c < c1; ++c) op[r * orow + c] = store<To>(load(xp[r + c * icol]));
  });
  return true;
}

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
  if (copy_transposed<Exec, To, From>(exec, out, in)) return;
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
