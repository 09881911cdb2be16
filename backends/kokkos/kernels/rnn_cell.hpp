// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RNN_CELL / RNN_CELL_BACKWARD: one recurrent step of a batch (RNN tanh /
// relu, LSTM, GRU) in one pass over [B, H]: the biases are added, the gates
// activated and the state updated per element, from the two GEMM results
// xg = x W_ih^T and hg = h W_hh^T the core computed. Written once for every
// Kokkos space (host and device); the semantics are the ABI comment above
// VNN_OP_RNN_CELL (backend_abi.h) and docs/ops.md, PyTorch's gate orders:
//   LSTM  i, f, g, o: c' = f c + i g, h' = o tanh(c')
//   GRU   r, z, n:    n = tanh(x_n + b_in + r (h_n + b_hn)), h' = (1 - z) n + z h
// The forward saves what the backward needs (LSTM: the activated gates;
// GRU: r, z, n and h_n + b_hn), so the backward is one pass as well.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>

#include "common/rnn_cell_params.hpp"
#include "kokkos/kernels/dispatch.hpp"
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/types.hpp"
#if !defined(__CUDACC__) && !defined(__HIPCC__)
#include "kokkos/kernels/vec_math.hpp"
#endif

namespace vnn::kernels {

// A row-major matrix operand: element (b, j) at p[b * ld + j].
template <class T>
struct RnnMat {
  T* p = nullptr;
  int64_t ld = 0;
  KOKKOS_INLINE_FUNCTION T& operator()(int64_t b, int64_t j) const { return p[b * ld + j]; }
};

// Every operand of one request; in[] / out[] in the ABI's order for the mode.
template <class T>
struct RnnCellArgs {
  int64_t B = 0, H = 0;
  int mode = 0;
  bool bias = false;
  RnnMat<const T> in[5];
  const T* b_ih = nullptr;
  const T* b_hh = nullptr;
  RnnMat<T> out[3];
};

template <class T> KOKKOS_INLINE_FUNCTION T rnn_sigmoid(T x) {
  const T e = kmath::exp(-kmath::fabs(x));
  return x >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e);
}

// Pre-activation k (gate k of G) of element (b, j): both GEMM results and both biases.
template <class T>
KOKKOS_INLINE_FUNCTION T rnn_pre(const RnnCellArgs<T>& a, int64_t b, int64_t j, int k) {
  const int64_t col = int64_t(k) * a.H + j;
  T v = a.in[0](b, col) + a.in[1](b, col);
  if (a.bias) v += a.b_ih[col] + a.b_hh[col];
  return v;
}

template <class T>
KOKKOS_INLINE_FUNCTION void rnn_cell_forward_elem(const RnnCellArgs<T>& a, int64_t b, int64_t j) {
  const int64_t H = a.H;
  if (a.mode == VNN_RNN_TANH || a.mode == VNN_RNN_RELU) {
    const T v = rnn_pre(a, b, j, 0);
    a.out[0](b, j) = a.mode == VNN_RNN_TANH ? kmath::tanh(v) : (v > T(0) ? v : (v == v ? T(0) : v));
  } else if (a.mode == VNN_RNN_LSTM) {
    const T i = rnn_sigmoid(rnn_pre(a, b, j, 0)), f = rnn_sigmoid(rnn_pre(a, b, j, 1));
    const T g = kmath::tanh(rnn_pre(a, b, j, 2)), o = rnn_sigmoid(rnn_pre(a, b, j, 3));
    const T c = f * a.in[2](b, j) + i * g;
    a.out[0](b, j) = o * kmath::tanh(c);
    a.out[1](b, j) = c;
    a.out[2](b, j) = i, a.out[2](b, H + j) = f, a.out[2](b, 2 * H + j) = g, a.out[2](b, 3 * H + j) = o;
  } else {
    const T r = rnn_sigmoid(rnn_pre(a, b, j, 0)), z = rnn_sigmoid(rnn_pre(a, b, j, 1));
    T hn = a.in[1](b, 2 * H + j), xn = a.in[0](b, 2 * H + j);
    if (a.bias) hn += a.b_hh[2 * H + j], xn += a.b_ih[2 * H + j];
    const T n = kmath::tanh(xn + r * hn);
    a.out[0](b, j) = (T(1) - z) * n + z * a.in[2](b, j);
    a.out[1](b, j) = r, a.out[1](b, H + j) = z, a.out[1](b, 2 * H + j) = n, a.out[1](b, 3 * H + j) = hn;
  }
}

template <class T>
KOKKOS_INLINE_FUNCTION void rnn_cell_backward_elem(const RnnCellArgs<T>& a, int64_t b, int64_t j) {
  const int64_t H = a.H;
  const T dh = a.in[0](b, j);
  if (a.mode == VNN_RNN_TANH) {
    const T h = a.in[1](b, j);
    a.out[0](b, j) = dh * (T(1) - h * h);
  } else if (a.mode == VNN_RNN_RELU) {
    a.out[0](b, j) = a.in[1](b, j) > T(0) ? dh : T(0);
  } else if (a.mode == VNN_RNN_LSTM) {
    const RnnMat<const T>& s = a.in[2];
    const T i = s(b, j), f = s(b, H + j), g = s(b, 2 * H + j), o = s(b, 3 * H + j);
    const T tc = kmath::tanh(a.in[4](b, j));
    const T dct = a.in[1](b, j) + dh * o * (T(1) - tc * tc);
    a.out[0](b, j) = dct * g * i * (T(1) - i);
    a.out[0](b, H + j) = dct * a.in[3](b, j) * f * (T(1) - f);
    a.out[0](b, 2 * H + j) = dct * i * (T(1) - g * g);
    a.out[0](b, 3 * H + j) = dh * tc * o * (T(1) - o);
    a.out[1](b, j) = dct * f;
  } else {
    const RnnMat<const T>& s = a.in[1];
    const T r = s(b, j), z = s(b, H + j), n = s(b, 2 * H + j), hn = s(b, 3 * H + j), h = a.in[2](b, j);
    const T dn = dh * (T(1) - z) * (T(1) - n * n);
    const T dz = dh * (h - n) * z * (T(1) - z);
    const T dr = dn * hn * r * (T(1) - r);
    a.out[0](b, j) = dr, a.out[0](b, H + j) = dz, a.out[0](b, 2 * H + j) = dn;
    a.out[1](b, j) = dr, a.out[1](b, H + j) = dz, a.out[1](b, 2 * H + j) = dn * r;
    a.out[2](b, j) = dh * z;
  }
}

// The kernel's view of a decoded request (common/rnn_cell_params.hpp).
template <class T>
RnnCellArgs<T> rnn_cell_args(const RnnCellOperands& r) {
  RnnCellArgs<T> a;
  a.B = r.B, a.H = r.H, a.mode = r.mode, a.bias = r.bias;
  for (int k = 0; k < r.n_in; ++k) a.in[k] = {typed<const T>(*r.in[k]) + r.in[k]->offset, r.in[k]->strides[0]};
  for (int k = 0; k < r.n_out; ++k) a.out[k] = {typed<T>(*r.out[k]) + r.out[k]->offset, r.out[k]->strides[0]};
  if (r.bias) a.b_ih = typed<const T>(*r.b_ih) + r.b_ih->offset, a.b_hh = typed<const T>(*r.b_hh) + r.b_hh->offset;
  return a;
}

#if !defined(__CUDACC__) && !defined(__HIPCC__)

// ---- host rows: the same equations as the element functions above, each
// row's columns in one loop that vectorises (exp through vec_exp; tanh as
// 2 sigmoid(2x) - 1, within 2e-7 of libm's in float32), compiled for
// AVX-512, AVX2 + FMA and the baseline ISA and picked at run time.

template <class T> VNN_VEC_INLINE T vec_sigmoid(T x) { return T(1) / (T(1) + vec_exp(-x)); }
template <class T> VNN_VEC_INLINE T vec_tanh(T x) { return T(2) / (T(1) + vec_exp(T(-2) * x)) - T(1); }

template <class T, bool Bias>
VNN_VEC_INLINE void rnn_forward_row(const RnnCellArgs<T>& a, int64_t b) {
  const int64_t H = a.H;
  const T* x = a.in[0].p + b * a.in[0].ld;
  const T* h = a.in[1].p + b * a.in[1].ld;
  const T* bi = a.b_ih;
  const T* bh = a.b_hh;
  T* out = a.out[0].p + b * a.out[0].ld;
#define VNN_RNN_PRE(k, j) (x[(k) * H + (j)] + h[(k) * H + (j)] + (Bias ? bi[(k) * H + (j)] + bh[(k) * H + (j)] : T(0)))
  if (a.mode == VNN_RNN_TANH) {
    VNN_VEC_SIMD
    for (int64_t j = 0; j < H; ++j) out[j] = vec_tanh(VNN_RNN_PRE(0, j));
  } else if (a.mode == VNN_RNN_RELU) {
    VNN_VEC_SIMD
    for (int64_t j = 0; j < H; ++j) {
      const T v = VNN_RNN_PRE(0, j);
      out[j] = v > T(0) ? v : (v == v ? T(0) : v);
    }
  } else if (a.mode == VNN_RNN_LSTM) {
    const T* cp = a.in[2].p + b * a.in[2].ld;
    T* co = a.out[1].p + b * a.out[1].ld;
    T* s = a.out[2].p + b * a.out[2].ld;
    VNN_VEC_SIMD
    for (int64_t j = 0; j < H; ++j) {
      const T i = vec_sigmoid(VNN_RNN_PRE(0, j)), f = vec_sigmoid(VNN_RNN_PRE(1, j));
      const T g = vec_tanh(VNN_RNN_PRE(2, j)), o = vec_sigmoid(VNN_RNN_PRE(3, j));
      const T c = f * cp[j] + i * g;
      out[j] = o * vec_tanh(c);
      co[j] = c;
      s[j] = i, s[H + j] = f, s[2 * H + j] = g, s[3 * H + j] = o;
    }
  } else {
    const T* hp = a.in[2].p + b * a.in[2].ld;
    T* s = a.out[1].p + b * a.out[1].ld;
    VNN_VEC_SIMD
    for (int64_t j = 0; j < H; ++j) {
      const T r = vec_sigmoid(VNN_RNN_PRE(0, j)), z = vec_sigmoid(VNN_RNN_PRE(1, j));
      const T hn = h[2 * H + j] + (Bias ? bh[2 * H + j] : T(0));
      const T n = vec_tanh(x[2 * H + j] + (Bias ? bi[2 * H + j] : T(0)) + r * hn);
      out[j] = (T(1) - z) * n + z * hp[j];
      s[j] = r, s[H + j] = z, s[2 * H + j] = n, s[3 * H + j] = hn;
    }
  }
#undef VNN_RNN_PRE
}

template <class T>
VNN_VEC_INLINE void rnn_backward_row(const RnnCellArgs<T>& a, int64_t b) {
  const int64_t H = a.H;
  const T* dh = a.in[0].p + b * a.in[0].ld;
  T* d0 = a.out[0].p + b * a.out[0].ld;
  if (a.mode == VNN_RNN_TANH || a.mode == VNN_RNN_RELU) {
    const T* h = a.in[1].p + b * a.in[1].ld;
    if (a.mode == VNN_RNN_TANH) {
      VNN_VEC_SIMD
      for (int64_t j = 0; j < H; ++j) d0[j] = dh[j] * (T(1) - h[j] * h[j]);
    } else {
      VNN_VEC_SIMD
      for (int64_t j = 0; j < H; ++j) d0[j] = h[j] > T(0) ? dh[j] : T(0);
    }
  } else if (a.mode == VNN_RNN_LSTM) {
    const T* dc = a.in[1].p + b * a.in[1].ld;
    const T* s = a.in[2].p + b * a.in[2].ld;
    const T* cp = a.in[3].p + b * a.in[3].ld;
    const T* c = a.in[4].p + b * a.in[4].ld;
    T* dcp = a.out[1].p + b * a.out[1].ld;
    VNN_VEC_SIMD
    for (int64_t j = 0; j < H; ++j) {
      const T i = s[j], f = s[H + j], g = s[2 * H + j], o = s[3 * H + j];
      const T tc = vec_tanh(c[j]);
      const T dct = dc[j] + dh[j] * o * (T(1) - tc * tc);
      d0[j] = dct * g * i * (T(1) - i);
      d0[H + j] = dct * cp[j] * f * (T(1) - f);
      d0[2 * H + j] = dct * i * (T(1) - g * g);
      d0[3 * H + j] = dh[j] * tc * o * (T(1) - o);
      dcp[j] = dct * f;
    }
  } else {
    const T* s = a.in[1].p + b * a.in[1].ld;
    const T* hp = a.in[2].p + b * a.in[2].ld;
    T* d1 = a.out[1].p + b * a.out[1].ld;
    T* d2 = a.out[2].p + b * a.out[2].ld;
    VNN_VEC_SIMD
    for (int64_t j = 0; j < H; ++j) {
      const T r = s[j], z = s[H + j], n = s[2 * H + j], hn = s[3 * H + j];
      const T dn = dh[j] * (T(1) - z) * (T(1) - n * n);
      const T dz = dh[j] * (hp[j] - n) * z * (T(1) - z);
      const T dr = dn * hn * r * (T(1) - r);
      d0[j] = dr, d0[H + j] = dz, d0[2 * H + j] = dn;
      d1[j] = dr, d1[H + j] = dz, d1[2 * H + j] = dn * r;
      d2[j] = dh[j] * z;
    }
  }
}

template <class T>
VNN_VEC_INLINE void rnn_host_rows(const RnnCellArgs<T>& a, int64_t b0, int64_t b1, bool backward) {
  for (int64_t b = b0; b < b1; ++b) {
    if (backward) rnn_backward_row(a, b);
    else if (a.bias) rnn_forward_row<T, true>(a, b);
    else rnn_forward_row<T, false>(a, b);
  }
}

template <class T>
using RnnHostRows = void (*)(const RnnCellArgs<T>&, int64_t, int64_t, bool);

#if defined(VNN_VEC_X86)
template <class T>
VNN_VEC_TARGET_AVX512 void rnn_host_rows_avx512(const RnnCellArgs<T>& a, int64_t b0, int64_t b1, bool backward) {
  rnn_host_rows(a, b0, b1, backward);
}
template <class T>
VNN_VEC_TARGET_AVX2 void rnn_host_rows_avx2(const RnnCellArgs<T>& a, int64_t b0, int64_t b1, bool backward) {
  rnn_host_rows(a, b0, b1, backward);
}
#endif
template <class T>
void rnn_host_rows_base(const RnnCellArgs<T>& a, int64_t b0, int64_t b1, bool backward) {
  rnn_host_rows(a, b0, b1, backward);
}

// The widest variant this CPU runs, chosen once.
template <class T>
RnnHostRows<T> rnn_host_rows_pick() {
  static const RnnHostRows<T> pick = [] {
#if defined(VNN_VEC_X86)
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
      return &rnn_host_rows_avx512<T>;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &rnn_host_rows_avx2<T>;
#endif
    return &rnn_host_rows_base<T>;
  }();
  return pick;
}

#endif

template <class Exec, class T>
void rnn_cell_run(const Exec& exec, const RnnCellArgs<T>& a, bool backward) {
  const int64_t H = a.H;
#if !defined(__CUDACC__) && !defined(__HIPCC__)
  if constexpr (Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible) {
    // Host: rows on the pool, each row one vectorised loop per gate set.
    const RnnHostRows<T> rows = rnn_host_rows_pick<T>();
    Kokkos::parallel_for(backward ? "vnn::rnn_cell_backward" : "vnn::rnn_cell", Range<Exec>(exec, 0, a.B),
                         [=](int64_t b) { rows(a, b, b + 1, backward); });
    return;
  }
#endif
  if (backward)
    Kokkos::parallel_for("vnn::rnn_cell_backward", Range<Exec>(exec, 0, a.B * H),
                         KOKKOS_LAMBDA(int64_t e) { rnn_cell_backward_elem(a, e / H, e % H); });
  else
    Kokkos::parallel_for("vnn::rnn_cell", Range<Exec>(exec, 0, a.B * H),
                         KOKKOS_LAMBDA(int64_t e) { rnn_cell_forward_elem(a, e / H, e % H); });
}

template <class Exec>
bool rnn_cell(VNN_KOKKOS_RNN_CELL_PARAMS(Exec)) {
  RnnCellOperands r;
  std::string why;
  if (!decode_rnn_cell(op, &r, &why)) return refuse(why);
  if (r.B * r.H == 0) return true;
  if (r.dtype == VNN_FLOAT64) rnn_cell_run(exec, rnn_cell_args<double>(r), r.backward);
  else rnn_cell_run(exec, rnn_cell_args<float>(r), r.backward);
  return true;
}

}  // namespace vnn::kernels
