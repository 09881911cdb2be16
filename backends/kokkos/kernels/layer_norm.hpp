// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// LAYER_NORM / LAYER_NORM_BACKWARD: layer normalization over the last dim
// of a [R, D] matrix in one pass per row, on host spaces (OpenMP, Serial);
// device spaces decline (VNN_STATUS_UNSUPPORTED) and the core composes the
// op from reductions and elementwise ops there. The semantics are the ABI
// comment above VNN_OP_LAYER_NORM (backend_abi.h) and docs/ops.md:
//   forward:  mean = sum x / D, var = sum (x - mean)^2 / D (two passes over
//             the row, as the composed op), rstd = 1 / sqrt(var + eps),
//             y = (x - mean) rstd w + b
//   backward: xhat = (x - mean) rstd, gh = dy w, a = mean(gh),
//             c = mean(gh xhat), dx = (gh - a - xhat c) rstd,
//             dw = sum over rows dy xhat, db = sum over rows dy.
// dw / db: each block of kRows rows sums its own partial [D] rows, then the
// blocks are added in block order: deterministic whatever the thread count.
// The composed op took 11 (forward) and 13 (backward) passes over [R, D]
// with a temporary each (the GPT example's step: 9 LayerNorms of
// [2048, 128], a fifth of its CPU time).
#pragma once
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kokkos/kernels/dispatch.hpp"
#include "kokkos/kernels/entry.hpp"

namespace vnn::kernels {

template <class T>
struct LayerNormArgs {
  int64_t R = 0, D = 0;
  const T* x = nullptr;  // rows at x + r * ldx
  int64_t ldx = 0;
  const T* w = nullptr;  // [D] or null
  const T* b = nullptr;
  T* y = nullptr;  // forward: out [R, D] at y + r * ldy; backward: dx
  int64_t ldy = 0;
  T* mean = nullptr;  // [R], stride sm
  T* rstd = nullptr;  // [R], stride sr
  int64_t sm = 1, sr = 1;
  T eps = T(0);
  const T* dy = nullptr;  // backward
  int64_t lddy = 0;
  T* dw = nullptr;  // [D] or null, unit stride
  T* db = nullptr;
};

#if !defined(__CUDACC__) && !defined(__HIPCC__)

template <class T>
inline void layer_norm_row(const LayerNormArgs<T>& a, int64_t r) {
  const int64_t D = a.D;
  const T* x = a.x + r * a.ldx;
  T* y = a.y + r * a.ldy;
  T s = T(0);
#if defined(_OPENMP)
#pragma omp simd reduction(+ : s)
#endif
  for (int64_t j = 0; j < D; ++j) s += x[j];
  const T m = s / T(D);
  T v = T(0);
#if defined(_OPENMP)
#pragma omp simd reduction(+ : v)
#endif
  for (int64_t j = 0; j < D; ++j) v += (x[j] - m) * (x[j] - m);
  const T rs = T(1) / std::sqrt(v / T(D) + a.eps);
  a.mean[r * a.sm] = m;
  a.rstd[r * a.sr] = rs;
  if (a.w && a.b) {
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (int64_t j = 0; j < D; ++j) y[j] = (x[j] - m) * rs * a.w[j] + a.b[j];
  } else if (a.w) {
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (int64_t j = 0; j < D; ++j) y[j] = (x[j] - m) * rs * a.w[j];
  } else if (a.b) {
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (int64_t j = 0; j < D; ++j) y[j] = (x[j] - m) * rs + a.b[j];
  } else {
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (int64_t j = 0; j < D; ++j) y[j] = (x[j] - m) * rs;
  }
}

// dx of row r; adds dy xhat and dy into pw / pb (the block's partial sums)
// when they are given.
template <class T>
inline void layer_norm_backward_row(const LayerNormArgs<T>& a, int64_t r, T* pw, T* pb) {
  const int64_t D = a.D;
  const T* x = a.x + r * a.ldx;
  const T* dy = a.dy + r * a.lddy;
  T* dx = a.y + r * a.ldy;
  const T m = a.mean[r * a.sm], rs = a.rstd[r * a.sr];
  T sa = T(0), sc = T(0);
  if (a.w) {
#if defined(_OPENMP)
#pragma omp simd reduction(+ : sa, sc)
#endif
    for (int64_t j = 0; j < D; ++j) {
      const T gh = dy[j] * a.w[j];
      sa += gh;
      sc += gh * ((x[j] - m) * rs);
    }
  } else {
#if defined(_OPENMP)
#pragma omp simd reduction(+ : sa, sc)
#endif
    for (int64_t j = 0; j < D; ++j) {
      sa += dy[j];
      sc += dy[j] * ((x[j] - m) * rs);
    }
  }
  const T ma = sa / T(D), mc = sc / T(D);
  if (a.w) {
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (int64_t j = 0; j < D; ++j) {
      const T xh = (x[j] - m) * rs;
      dx[j] = (dy[j] * a.w[j] - ma - xh * mc) * rs;
    }
  } else {
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (int64_t j = 0; j < D; ++j) {
      const T xh = (x[j] - m) * rs;
      dx[j] = (dy[j] - ma - xh * mc) * rs;
    }
  }
  if (pw) {
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (int64_t j = 0; j < D; ++j) {
      pw[j] += dy[j] * ((x[j] - m) * rs);
      pb[j] += dy[j];
    }
  }
}

template <class Exec, class T>
void layer_norm_host(const Exec& exec, const LayerNormArgs<T>& a, bool backward) {
  using Policy = Kokkos::RangePolicy<Exec, Kokkos::IndexType<int64_t>>;
  if (!backward) {
    Kokkos::parallel_for("vnn::layer_norm", Policy(exec, 0, a.R), [=](int64_t r) { layer_norm_row(a, r); });
    exec.fence();
    return;
  }
  constexpr int64_t kRows = 64;
  const int64_t blocks = (a.R + kRows - 1) / kRows, D = a.D;
  const bool params = a.dw != nullptr;
  Kokkos::View<T*, Kokkos::HostSpace> part(std::string("vnn::layer_norm_partials"),
                                           size_t(params ? 2 * blocks * D : 0));  // zeroed
  T* p = part.data();
  Kokkos::parallel_for("vnn::layer_norm_backward", Policy(exec, 0, blocks), [=](int64_t blk) {
    T* pw = params ? p + 2 * blk * D : nullptr;
    T* pb = params ? pw + D : nullptr;
    const int64_t end = (blk + 1) * kRows < a.R ? (blk + 1) * kRows : a.R;
    for (int64_t r = blk * kRows; r < end; ++r) layer_norm_backward_row(a, r, pw, pb);
  });
  exec.fence();
  if (!params) return;
  for (int64_t j = 0; j < D; ++j) a.dw[j] = T(0), a.db[j] = T(0);
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const T* pw = p + 2 * blk * D;
    const T* pb = pw + D;
    for (int64_t j = 0; j < D; ++j) a.dw[j] += pw[j], a.db[j] += pb[j];
  }
}

#endif

// The request's operands; false (refuse) where they are not what the ABI
// comment says: 2-D x with unit last stride, one floating dtype throughout,
// [R] statistics, [D] parameters and gradients with unit stride.
template <class T>
bool layer_norm_args(const vnn_op& op, bool backward, LayerNormArgs<T>* out) {
  LayerNormArgs<T>& a = *out;
  const int64_t flags = op.num_ints > 0 ? op.ints[0] : 0;
  const bool has_w = (flags & 1) != 0, has_b = !backward && (flags & 2) != 0;
  const int32_t need_in = backward ? 4 + int32_t(has_w) : 1 + int32_t(has_w) + int32_t(has_b);
  const int32_t need_out = backward ? (has_w ? 3 : 1) : 3;
  if (op.num_inputs != need_in || op.num_outputs != need_out || (!backward && op.num_scalars < 1))
    return refuse("takes ", need_in, " inputs and ", need_out, " outputs for these flags (", flags, "), got ",
                  op.num_inputs, " and ", op.num_outputs);
  const vnn_tensor_desc& x = op.inputs[backward ? 1 : 0];
  const vnn_tensor_desc& y = op.outputs[0];
  if (x.ndim != 2 || y.ndim != 2 || x.strides[1] != 1 || y.strides[1] != 1 || y.sizes[0] != x.sizes[0] ||
      y.sizes[1] != x.sizes[1])
    return refuse("x and the first output must be [R, D] with unit last strides");
  a.R = x.sizes[0], a.D = x.sizes[1];
  auto vec = [&](const vnn_tensor_desc& d, int64_t n) {
    return d.ndim == 1 && d.sizes[0] == n && (n <= 1 || d.strides[0] >= 1) && d.dtype == x.dtype;
  };
  auto dense = [&](const vnn_tensor_desc& d, int64_t n) { return vec(d, n) && (n <= 1 || d.strides[0] == 1); };
  a.x = typed<T>(x) + x.offset, a.ldx = x.strides[0];
  a.y = typed<T>(y) + y.offset, a.ldy = y.strides[0];
  if (!backward) {
    const vnn_tensor_desc &m = op.outputs[1], &rs = op.outputs[2];
    if (!vec(m, a.R) || !vec(rs, a.R)) return refuse("mean and rstd must be [R] of x's dtype");
    a.mean = typed<T>(m) + m.offset, a.sm = m.strides[0];
    a.rstd = typed<T>(rs) + rs.offset, a.sr = rs.strides[0];
    int32_t i = 1;
    if (has_w) {
      if (!dense(op.inputs[i], a.D)) return refuse("weight must be [D] with unit stride");
      a.w = typed<T>(op.inputs[i]) + op.inputs[i].offset, ++i;
    }
    if (has_b) {
      if (!dense(op.inputs[i], a.D)) return refuse("bias must be [D] with unit stride");
      a.b = typed<T>(op.inputs[i]) + op.inputs[i].offset;
    }
    a.eps = T(op.scalars[0]);
  } else {
    const vnn_tensor_desc &dy = op.inputs[0], &m = op.inputs[2], &rs = op.inputs[3];
    if (dy.ndim != 2 || dy.sizes[0] != a.R || dy.sizes[1] != a.D || dy.strides[1] != 1 || !vec(m, a.R) ||
        !vec(rs, a.R))
      return refuse("dy must be [R, D] with unit last stride, mean and rstd [R]");
    a.dy = typed<T>(dy) + dy.offset, a.lddy = dy.strides[0];
    a.mean = typed<T>(m) + m.offset, a.sm = m.strides[0];
    a.rstd = typed<T>(rs) + rs.offset, a.sr = rs.strides[0];
    if (has_w) {
      if (!dense(op.inputs[4], a.D) || !dense(op.outputs[1], a.D) || !dense(op.outputs[2], a.D))
        return refuse("weight, dw and db must be [D] with unit stride");
      a.w = typed<T>(op.inputs[4]) + op.inputs[4].offset;
      a.dw = typed<T>(op.outputs[1]) + op.outputs[1].offset;
      a.db = typed<T>(op.outputs[2]) + op.outputs[2].offset;
    }
  }
  for (int32_t i = 0; i < op.num_inputs; ++i)
    if (op.inputs[i].dtype != x.dtype) return refuse("every operand must have x's dtype");
  for (int32_t i = 0; i < op.num_outputs; ++i)
    if (op.outputs[i].dtype != x.dtype) return refuse("every output must have x's dtype");
  return true;
}

template <class Exec>
bool layer_norm(VNN_KOKKOS_LAYER_NORM_PARAMS(Exec)) {
  const bool backward = op.kind == VNN_OP_LAYER_NORM_BACKWARD;
  if constexpr (!Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible) {
    (void)exec, (void)backward;
    return refuse("host spaces only (the core composes it elsewhere)");
  } else {
#if !defined(__CUDACC__) && !defined(__HIPCC__)
    if (op.num_inputs < 1 || op.num_outputs < 1) return refuse("needs inputs and outputs");
    const int32_t dt = op.inputs[backward ? (op.num_inputs > 1 ? 1 : 0) : 0].dtype;
    if (dt == VNN_FLOAT32) {
      LayerNormArgs<float> a;
      if (!layer_norm_args(op, backward, &a)) return false;
      layer_norm_host(exec, a, backward);
      return true;
    }
    if (dt == VNN_FLOAT64) {
      LayerNormArgs<double> a;
      if (!layer_norm_args(op, backward, &a)) return false;
      layer_norm_host(exec, a, backward);
      return true;
    }
    return refuse("float32 and float64 only (the core composes the others)");
#else
    (void)exec, (void)backward;
    return refuse("host spaces only");
#endif
  }
}

}  // namespace vnn::kernels
