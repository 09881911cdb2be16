// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GRID_SAMPLE / GRID_SAMPLE_BACKWARD (backend_abi.h, docs/ops.md): x
// [N, C, (D,) H, W] sampled at the normalized points of grid [N, (Do,) Ho,
// Wo, dims], PyTorch's grid_sampler semantics (unnormalize, padding by
// clipping or reflection, out-of-range coordinates sent to -100 so that
// they read nothing). Written once for every Kokkos space.
//
// One work item per grid point: its taps (bilinear 4 or 8, nearest 1,
// bicubic 16) are found once, each with its weight and the weight's
// derivative along every coordinate, then every channel is a dot product
// over them. The backward scatter-adds w * dout into dx atomically (points
// may share taps) and writes the point's own dgrid, race-free.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>

#include "common/grid_sample_params.hpp"
#include "kokkos/kernels/dispatch.hpp"
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/types.hpp"

namespace vnn::kernels {

// A strided operand: x-like [N, C, spatial...] (sc the channel stride) or
// grid-like [N, spatial..., dims] (sc the coordinate stride); s[a] the
// stride of spatial dim a counted from the innermost (W, H, D).
template <class T>
struct GsOperand {
  T* p = nullptr;
  int64_t sn = 0, sc = 0, s[3] = {0, 0, 0};
};

template <class T>
GsOperand<T> gs_operand(const vnn_tensor_desc* d, bool grid_like) {
  GsOperand<T> o;
  if (!d) return o;
  const int nd = d->ndim, spatial = nd - 2;
  o.p = typed<T>(*d) + d->offset;
  o.sn = d->strides[0];
  o.sc = grid_like ? d->strides[nd - 1] : d->strides[1];
  for (int a = 0; a < spatial; ++a) o.s[a] = d->strides[(grid_like ? nd - 2 : nd - 1) - a];
  return o;
}

template <class T>
struct GridSampleArgs {
  int dims = 2, mode = 0, pad = 0;
  bool align = false;
  int64_t C = 0, in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  GsOperand<T> x, grid, y, dx, dgrid;  // y: out (forward) or dout (backward)
};

// A coordinate outside int range or not finite goes to -100, which names
// no pixel, as PyTorch's safe_downgrade_to_int_range.
template <class T> KOKKOS_INLINE_FUNCTION T gs_safe(T v) {
  const bool finite = v - v == T(0);
  return finite && v <= T(2147483646.0) && v >= T(-2147483648.0) ? v : T(-100);
}

// [-1, 1] -> pixel coordinates; *mult = d(pixel) / d(normalized).
template <class T> KOKKOS_INLINE_FUNCTION T gs_unnormalize(T c, int64_t size, bool align, T* mult) {
  if (align) {
    *mult = T(size - 1) / T(2);
    return (c + T(1)) / T(2) * T(size - 1);
  }
  *mult = T(size) / T(2);
  return ((c + T(1)) * T(size) - T(1)) / T(2);
}

// Clipped to [0, size - 1]; *grad 0 where clipped.
template <class T> KOKKOS_INLINE_FUNCTION T gs_clip(T v, int64_t size, T* grad) {
  const T hi = T(size - 1);
  *grad = T(0);
  if (v <= T(0)) return T(0);
  if (v >= hi) return hi;
  *grad = T(1);
  return v;
}

// Reflected into [twice_low / 2, twice_high / 2]; *grad is +-1.
template <class T> KOKKOS_INLINE_FUNCTION T gs_reflect(T v, int64_t twice_low, int64_t twice_high, T* grad) {
  if (twice_low == twice_high) {
    *grad = T(0);
    return T(0);
  }
  const T low = T(twice_low) / T(2), span = T(twice_high - twice_low) / T(2);
  T sign = T(1);
  v -= low;
  if (v < T(0)) sign = T(-1), v = -v;
  const T extra = kmath::fmod(v, span), flips = kmath::floor(v / span);
  const bool even = kmath::fmod(flips, T(2)) == T(0);
  *grad = even ? sign : -sign;
  return even ? extra + low : span - extra + low;
}

// A pixel coordinate after the padding rule (PyTorch's compute_coordinates);
// *grad *= its derivative.
template <class T> KOKKOS_INLINE_FUNCTION T gs_pad(T v, int64_t size, int pad, bool align, T* grad) {
  T g1 = T(1), g2 = T(1);
  if (pad == VNN_GRID_PAD_BORDER) {
    v = gs_clip(v, size, &g1);
  } else if (pad == VNN_GRID_PAD_REFLECTION) {
    v = align ? gs_reflect(v, 0, 2 * (size - 1), &g1) : gs_reflect(v, -1, 2 * size - 1, &g1);
    v = gs_clip(v, size, &g2);
  }
  *grad = *grad * g1 * g2;
  return gs_safe(v);
}

// Cubic convolution weights (A = -0.75) of the 4 taps at t in [0, 1), and
// the negated derivatives of those weights in t.
template <class T> KOKKOS_INLINE_FUNCTION void gs_cubic(T t, T* w, T* dw) {
  const T A = T(-0.75);
  T u = t + T(1);
  w[0] = ((A * u - T(5) * A) * u + T(8) * A) * u - T(4) * A;
  w[1] = ((A + T(2)) * t - (A + T(3))) * t * t + T(1);
  u = T(1) - t;
  w[2] = ((A + T(2)) * u - (A + T(3))) * u * u + T(1);
  u = T(2) - t;
  w[3] = ((A * u - T(5) * A) * u + T(8) * A) * u - T(4) * A;
  u = T(-1) - t;
  dw[0] = (T(-3) * A * u - T(10) * A) * u - T(8) * A;
  u = -t;
  dw[1] = (T(-3) * (A + T(2)) * u - T(2) * (A + T(3))) * u;
  u = T(1) - t;
  dw[2] = (T(3) * (A + T(2)) * u - T(2) * (A + T(3))) * u;
  u = T(2) - t;
  dw[3] = (T(3) * A * u - T(10) * A) * u + T(8) * A;
}

// The taps of one grid point: position per spatial dim (valid: inside x),
// weight, and d weight / d pixel coordinate per dim.
template <class T>
struct GsTaps {
  int n = 0;
  bool valid[16];
  int64_t pos[16][3];
  T w[16], dw[16][3];
  T mult[3];  // d pixel coordinate / d normalized coordinate
};

template <class T>
KOKKOS_INLINE_FUNCTION void gs_taps(const GridSampleArgs<T>& a, const T* coord, GsTaps<T>& t) {
  const int D = a.dims;
  if (a.mode == VNN_GRID_BICUBIC) {  // 2-D: 4 x 4 taps around floor(coordinate)
    T lo[2], wt[2][4], dwt[2][4];
    for (int d = 0; d < 2; ++d) {
      const T c = gs_unnormalize(coord[d], a.in[d], a.align, &t.mult[d]);
      lo[d] = kmath::floor(c);
      gs_cubic(c - lo[d], wt[d], dwt[d]);
    }
    t.n = 16;
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i) {
        const int k = j * 4 + i;
        T unused = T(1);
        bool ok = true;
        for (int d = 0; d < 2; ++d) {
          const T p = gs_pad(lo[d] - T(1) + T(d == 0 ? i : j), a.in[d], a.pad, a.align, &unused);
          t.pos[k][d] = int64_t(p);
          ok = ok && t.pos[k][d] >= 0 && t.pos[k][d] < a.in[d];
        }
        t.valid[k] = ok;
        t.w[k] = wt[0][i] * wt[1][j];
        t.dw[k][0] = -dwt[0][i] * wt[1][j];
        t.dw[k][1] = -dwt[1][j] * wt[0][i];
      }
    return;
  }
  T src[3];
  for (int d = 0; d < D; ++d) {
    src[d] = gs_unnormalize(coord[d], a.in[d], a.align, &t.mult[d]);
    src[d] = gs_pad(src[d], a.in[d], a.pad, a.align, &t.mult[d]);
  }
  if (a.mode == VNN_GRID_NEAREST) {
    t.n = 1;
    t.w[0] = T(1);
    t.valid[0] = true;
    for (int d = 0; d < D; ++d) {
      t.pos[0][d] = int64_t(kmath::nearbyint(src[d]));
      t.valid[0] = t.valid[0] && t.pos[0][d] >= 0 && t.pos[0][d] < a.in[d];
      t.dw[0][d] = T(0);
    }
    return;
  }
  // (Tri)linear: corner k takes floor + bit d of k along dim d; its weight
  // is the product of (1 - frac) or frac per dim, in PyTorch's order.
  T lo[3], f[3][2];
  for (int d = 0; d < D; ++d) {
    lo[d] = kmath::floor(src[d]);
    f[d][0] = lo[d] + T(1) - src[d];
    f[d][1] = src[d] - lo[d];
  }
  t.n = 1 << D;
  for (int k = 0; k < t.n; ++k) {
    t.valid[k] = true;
    t.w[k] = T(1);
    for (int d = 0; d < D; ++d) {
      const int bit = (k >> d) & 1;
      t.pos[k][d] = int64_t(lo[d]) + bit;
      t.valid[k] = t.valid[k] && t.pos[k][d] >= 0 && t.pos[k][d] < a.in[d];
      t.w[k] *= f[d][bit];
      T dd = bit ? T(1) : T(-1);
      for (int e = 0; e < D; ++e)
        if (e != d) dd *= f[e][(k >> e) & 1];
      t.dw[k][d] = dd;
    }
  }
}

template <class T>
KOKKOS_INLINE_FUNCTION int64_t gs_offset(const GsOperand<T>& o, const int64_t* pos, int dims) {
  int64_t off = 0;
  for (int d = 0; d < dims; ++d) off += pos[d] * o.s[d];
  return off;
}

// Point i: its batch n and spatial position (innermost first).
template <class T>
KOKKOS_INLINE_FUNCTION int64_t gs_point(const GridSampleArgs<T>& a, int64_t i, int64_t* q) {
  for (int d = 0; d < a.dims; ++d) {
    q[d] = i % a.out[d];
    i /= a.out[d];
  }
  return i;
}

// Point i's batch n (returned), position q and taps.
template <class T>
KOKKOS_INLINE_FUNCTION int64_t gs_point_taps(const GridSampleArgs<T>& a, int64_t i, int64_t* q, GsTaps<T>& t) {
  const int64_t n = gs_point(a, i, q);
  const T* g = a.grid.p + n * a.grid.sn + gs_offset(a.grid, q, a.dims);
  T coord[3] = {T(0), T(0), T(0)};
  for (int d = 0; d < a.dims; ++d) coord[d] = g[d * a.grid.sc];
  gs_taps(a, coord, t);
  return n;
}

template <class T>
KOKKOS_INLINE_FUNCTION void gs_point_forward(const GridSampleArgs<T>& a, int64_t i) {
  int64_t q[3] = {0, 0, 0};
  GsTaps<T> t;
  const int64_t n = gs_point_taps(a, i, q, t);
  int64_t xo[16];
  for (int k = 0; k < t.n; ++k) xo[k] = t.valid[k] ? gs_offset(a.x, t.pos[k], a.dims) : 0;
  const T* xp = a.x.p + n * a.x.sn;
  T* yp = a.y.p + n * a.y.sn + gs_offset(a.y, q, a.dims);
  for (int64_t c = 0; c < a.C; ++c) {
    T acc = T(0);
    for (int k = 0; k < t.n; ++k)
      if (t.valid[k]) acc += xp[c * a.x.sc + xo[k]] * t.w[k];
    yp[c * a.y.sc] = acc;
  }
}

// Atomic: points of other batches may run at the same time (every space
// but the host's batch-per-thread path below).
template <class T, bool Atomic>
KOKKOS_INLINE_FUNCTION void gs_point_backward(const GridSampleArgs<T>& a, int64_t i) {
  int64_t q[3] = {0, 0, 0};
  GsTaps<T> t;
  const int64_t n = gs_point_taps(a, i, q, t);
  int64_t xo[16], dxo[16];
  for (int k = 0; k < t.n; ++k) {
    xo[k] = t.valid[k] ? gs_offset(a.x, t.pos[k], a.dims) : 0;
    dxo[k] = t.valid[k] ? gs_offset(a.dx, t.pos[k], a.dims) : 0;
  }
  const T* xp = a.x.p + n * a.x.sn;
  T* dxp = a.dx.p + n * a.dx.sn;
  const T* gy = a.y.p + n * a.y.sn + gs_offset(a.y, q, a.dims);
  T gsrc[3] = {T(0), T(0), T(0)};
  for (int64_t c = 0; c < a.C; ++c) {
    const T go = gy[c * a.y.sc];
    for (int k = 0; k < t.n; ++k) {
      if (!t.valid[k]) continue;
      T* to = dxp + c * a.dx.sc + dxo[k];
      if constexpr (Atomic) Kokkos::atomic_add(to, t.w[k] * go);
      else *to += t.w[k] * go;
      const T v = xp[c * a.x.sc + xo[k]] * go;
      for (int d = 0; d < a.dims; ++d) gsrc[d] += v * t.dw[k][d];
    }
  }
  T* dg = a.dgrid.p + n * a.dgrid.sn + gs_offset(a.dgrid, q, a.dims);
  for (int d = 0; d < a.dims; ++d) dg[d * a.dgrid.sc] = t.mult[d] * gsrc[d];
}

// A named function (not the dispatch's generic lambda) holds the device
// lambdas: nvcc refuses an extended lambda inside a generic one.
template <class Exec, class T>
void grid_sample_typed(const Exec& exec, const GridSampleOperands& r) {
  GridSampleArgs<T> a;
  a.dims = r.dims, a.mode = int(r.p.mode), a.pad = int(r.p.padding_mode), a.align = r.p.align_corners != 0;
  a.C = r.C;
  for (int d = 0; d < 3; ++d) a.in[d] = r.in[d], a.out[d] = r.out[d];
  a.x = gs_operand<T>(r.x, false), a.grid = gs_operand<T>(r.grid, true), a.y = gs_operand<T>(r.y, false);
  if (r.backward) {
    a.dx = gs_operand<T>(r.dx, false), a.dgrid = gs_operand<T>(r.dgrid, true);
    // On the host with a batch per thread, each batch's points run in one
    // thread with plain adds: dx of a batch is written by that batch only
    // (the CAS loop of a float atomic_add tripled the backward's time).
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible) {
      if (r.N >= int64_t(exec.concurrency())) {
        const int64_t per = r.points / r.N;
        Kokkos::parallel_for("vnn::grid_sample_backward_batches", Range<Exec>(exec, 0, r.N), [=](int64_t n) {
          for (int64_t i = n * per; i < (n + 1) * per; ++i) gs_point_backward<T, false>(a, i);
        });
        return;
      }
    }
    Kokkos::parallel_for("vnn::grid_sample_backward", Range<Exec>(exec, 0, r.points),
                         KOKKOS_LAMBDA(int64_t i) { gs_point_backward<T, true>(a, i); });
  } else {
    Kokkos::parallel_for("vnn::grid_sample", Range<Exec>(exec, 0, r.points),
                         KOKKOS_LAMBDA(int64_t i) { gs_point_forward(a, i); });
  }
}

template <class Exec>
bool grid_sample(VNN_KOKKOS_GRID_SAMPLE_PARAMS(Exec)) {
  GridSampleOperands r;
  std::string why;
  if (!decode_grid_sample(op, &r, &why)) return refuse(why);
  if (r.points == 0) return true;
  dispatch_types<FloatingTypes>(r.backward ? "grid_sample_backward" : "grid_sample", r.dtype,
                                [&](auto tag) { grid_sample_typed<Exec, decltype(tag)>(exec, r); });
  return true;
}

}  // namespace vnn::kernels
