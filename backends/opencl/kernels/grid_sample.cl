// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GRID_SAMPLE / GRID_SAMPLE_BACKWARD (backend_abi.h, docs/ops.md), step for
// step the Kokkos kernel backends/kokkos/kernels/grid_sample.hpp: one work
// item per grid point finds its taps (bilinear 4 / trilinear 8, nearest 1,
// bicubic 16) with their weights and the weights' derivatives, then runs
// over the channels; the backward scatter-adds into dx with a
// compare-and-swap loop (OpenCL 1.2 has integer atomics only) and writes
// the point's own dgrid.
// Defines: RT (float or double); GS_FP64 with double.
// Operands travel as a buffer and a long8 (offset, batch stride, channel /
// coordinate stride, spatial strides innermost first).
#ifdef GS_FP64
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
typedef ulong gs_bits;
#define GS_TO_BITS(v) as_ulong(v)
#define GS_FROM_BITS(b) as_double(b)
#define GS_CMPXCHG(p, a, b) atom_cmpxchg(p, a, b)
#else
typedef uint gs_bits;
#define GS_TO_BITS(v) as_uint(v)
#define GS_FROM_BITS(b) as_float(b)
#define GS_CMPXCHG(p, a, b) atomic_cmpxchg(p, a, b)
#endif
typedef RT T;

inline void gs_atomic_add(__global T* p, T v) {
  volatile __global gs_bits* bits = (volatile __global gs_bits*)p;
  gs_bits expect = *bits, was;
  for (;;) {
    was = GS_CMPXCHG(bits, expect, GS_TO_BITS(GS_FROM_BITS(expect) + v));
    if (was == expect) return;
    expect = was;
  }
}

// Not finite or outside int range: -100, a coordinate naming no pixel.
inline T gs_safe(T v) { return (v - v == (T)0 && v <= (T)2147483646.0 && v >= (T)-2147483648.0) ? v : (T)-100; }

inline T gs_unnormalize(T c, long size, int align, T* mult) {
  *mult = align ? (T)(size - 1) / (T)2 : (T)size / (T)2;
  return align ? (c + (T)1) / (T)2 * (T)(size - 1) : ((c + (T)1) * (T)size - (T)1) / (T)2;
}

inline T gs_clip(T v, long size, T* grad) {
  const T top = (T)(size - 1);
  const bool below = v <= (T)0, above = !below && v >= top;
  *grad = below || above ? (T)0 : (T)1;
  return below ? (T)0 : above ? top : v;
}

inline T gs_reflect(T v, long twice_low, long twice_high, T* grad) {
  if (twice_low == twice_high) {
    *grad = (T)0;
    return (T)0;
  }
  const T base = (T)twice_low / (T)2, span = (T)(twice_high - twice_low) / (T)2;
  v -= base;
  const T sign = v < (T)0 ? (T)-1 : (T)1;
  v = fabs(v);
  const T extra = fmod(v, span);
  const bool flipped = fmod(floor(v / span), (T)2) != (T)0;
  *grad = flipped ? -sign : sign;
  return flipped ? span - extra + base : extra + base;
}

inline T gs_pad(T v, long size, int pad, int align, T* grad) {
  T ga = (T)1, gb = (T)1;
  if (pad == VNN_GRID_PAD_BORDER) {
    v = gs_clip(v, size, &ga);
  } else if (pad == VNN_GRID_PAD_REFLECTION) {
    v = align ? gs_reflect(v, 0, 2 * (size - 1), &ga) : gs_reflect(v, -1, 2 * size - 1, &ga);
    v = gs_clip(v, size, &gb);
  }
  *grad = *grad * ga * gb;
  return gs_safe(v);
}

// Cubic convolution (A = -0.75): the 4 tap weights at t and their negated
// derivatives in t.
inline void gs_cubic(T t, T* w, T* dw) {
  const T A = (T)-0.75;
  const T p = t + (T)1, q = (T)1 - t, r = (T)2 - t, m = (T)-1 - t;
  w[0] = ((A * p - (T)5 * A) * p + (T)8 * A) * p - (T)4 * A;
  w[1] = ((A + (T)2) * t - (A + (T)3)) * t * t + (T)1;
  w[2] = ((A + (T)2) * q - (A + (T)3)) * q * q + (T)1;
  w[3] = ((A * r - (T)5 * A) * r + (T)8 * A) * r - (T)4 * A;
  dw[0] = ((T)-3 * A * m - (T)10 * A) * m - (T)8 * A;
  dw[1] = ((T)-3 * (A + (T)2) * -t - (T)2 * (A + (T)3)) * -t;
  dw[2] = ((T)3 * (A + (T)2) * q - (T)2 * (A + (T)3)) * q;
  dw[3] = ((T)3 * A * r - (T)10 * A) * r + (T)8 * A;
}

// The taps of one point: offset of each inside x's and dx's (n, c) planes
// (ok: inside x), weight and d weight / d pixel coordinate per dim.
typedef struct {
  int n;
  bool ok[16];
  long xo[16], dxo[16];
  T w[16], dw[16][3];
  T mult[3];
} gs_taps;

inline long gs_dot(const long* pos, long8 s, int dims) {
  long off = pos[0] * s.s3 + pos[1] * s.s4;
  return dims == 3 ? off + pos[2] * s.s5 : off;
}

inline void gs_tap(gs_taps* t, int k, const long* pos, const long* in, int dims, long8 xs, long8 dxs) {
  bool ok = true;
  for (int d = 0; d < dims; ++d) ok = ok && pos[d] >= 0 && pos[d] < in[d];
  t->ok[k] = ok;
  t->xo[k] = ok ? gs_dot(pos, xs, dims) : 0;
  t->dxo[k] = ok ? gs_dot(pos, dxs, dims) : 0;
}

void gs_find_taps(gs_taps* t, const T* coord, int dims, int mode, int pad, int align, const long* in, long8 xs,
                  long8 dxs) {
  long pos[3] = {0, 0, 0};
  if (mode == VNN_GRID_BICUBIC) {
    T base[2], wt[2][4], dwt[2][4];
    for (int d = 0; d < 2; ++d) {
      const T c = gs_unnormalize(coord[d], in[d], align, &t->mult[d]);
      base[d] = floor(c);
      gs_cubic(c - base[d], wt[d], dwt[d]);
    }
    t->n = 16;
    for (int k = 0; k < 16; ++k) {
      const int i = k % 4, j = k / 4;
      T ignored = (T)1;
      pos[0] = (long)gs_pad(base[0] - (T)1 + (T)i, in[0], pad, align, &ignored);
      pos[1] = (long)gs_pad(base[1] - (T)1 + (T)j, in[1], pad, align, &ignored);
      gs_tap(t, k, pos, in, 2, xs, dxs);
      t->w[k] = wt[0][i] * wt[1][j];
      t->dw[k][0] = -dwt[0][i] * wt[1][j];
      t->dw[k][1] = -dwt[1][j] * wt[0][i];
    }
    return;
  }
  T src[3];
  for (int d = 0; d < dims; ++d)
    src[d] = gs_pad(gs_unnormalize(coord[d], in[d], align, &t->mult[d]), in[d], pad, align, &t->mult[d]);
  if (mode == VNN_GRID_NEAREST) {
    t->n = 1;
    t->w[0] = (T)1;
    for (int d = 0; d < dims; ++d) pos[d] = (long)rint(src[d]), t->dw[0][d] = (T)0;
    gs_tap(t, 0, pos, in, dims, xs, dxs);
    return;
  }
  // (Tri)linear: bit d of corner k steps dim d; weight = product over dims
  // of (1 - frac) or frac, x first as PyTorch multiplies.
  T low[3], fr[3][2];
  for (int d = 0; d < dims; ++d) {
    low[d] = floor(src[d]);
    fr[d][0] = low[d] + (T)1 - src[d];
    fr[d][1] = src[d] - low[d];
  }
  t->n = 1 << dims;
  for (int k = 0; k < t->n; ++k) {
    T w = (T)1;
    for (int d = 0; d < dims; ++d) {
      pos[d] = (long)low[d] + ((k >> d) & 1);
      w *= fr[d][(k >> d) & 1];
      T slope = ((k >> d) & 1) ? (T)1 : (T)-1;
      for (int e = 0; e < dims; ++e)
        if (e != d) slope *= fr[e][(k >> e) & 1];
      t->dw[k][d] = slope;
    }
    t->w[k] = w;
    gs_tap(t, k, pos, in, dims, xs, dxs);
  }
}

// Point p: batch n (returned), spatial position q innermost first.
inline long gs_unravel(long p, const long* out, int dims, long* q) {
  for (int d = 0; d < dims; ++d) {
    q[d] = p % out[d];
    p /= out[d];
  }
  return p;
}

// Point p's batch n (returned), position q and taps.
long gs_point(gs_taps* t, long p, long* q, __global const T* grid, long8 gs, int dims, int mode, int pad, int align,
              const long* in, const long* out, long8 xs, long8 dxs) {
  const long n = gs_unravel(p, out, dims, q);
  const long g0 = gs.s0 + n * gs.s1 + gs_dot(q, gs, dims);
  T coord[3] = {(T)0, (T)0, (T)0};
  for (int d = 0; d < dims; ++d) coord[d] = grid[g0 + d * gs.s2];
  gs_find_taps(t, coord, dims, mode, pad, align, in, xs, dxs);
  return n;
}

__kernel void vnn_grid_sample_fwd(int dims, int mode, int pad, int align, long C, long4 in4, long4 out4,
                                  long points, __global const T* x, long8 xs, __global const T* grid, long8 gs,
                                  __global T* y, long8 ys) {
  const long in[3] = {in4.s0, in4.s1, in4.s2}, out[3] = {out4.s0, out4.s1, out4.s2};
  VNN_ITEMS(p, points) {
    long q[3] = {0, 0, 0};
    gs_taps t;
    const long n = gs_point(&t, p, q, grid, gs, dims, mode, pad, align, in, out, xs, xs);
    const long x0 = xs.s0 + n * xs.s1, y0 = ys.s0 + n * ys.s1 + gs_dot(q, ys, dims);
    for (long c = 0; c < C; ++c) {
      T acc = (T)0;
      for (int k = 0; k < t.n; ++k)
        if (t.ok[k]) acc += x[x0 + c * xs.s2 + t.xo[k]] * t.w[k];
      y[y0 + c * ys.s2] = acc;
    }
  }
}

__kernel void vnn_grid_sample_bwd(int dims, int mode, int pad, int align, long C, long4 in4, long4 out4,
                                  long points, __global const T* x, long8 xs, __global const T* grid, long8 gs,
                                  __global const T* dy, long8 ys, __global T* dx, long8 dxs, __global T* dgrid,
                                  long8 dgs) {
  const long in[3] = {in4.s0, in4.s1, in4.s2}, out[3] = {out4.s0, out4.s1, out4.s2};
  VNN_ITEMS(p, points) {
    long q[3] = {0, 0, 0};
    gs_taps t;
    const long n = gs_point(&t, p, q, grid, gs, dims, mode, pad, align, in, out, xs, dxs);
    const long x0 = xs.s0 + n * xs.s1, dx0 = dxs.s0 + n * dxs.s1, y0 = ys.s0 + n * ys.s1 + gs_dot(q, ys, dims);
    T gsum[3] = {(T)0, (T)0, (T)0};
    for (long c = 0; c < C; ++c) {
      const T go = dy[y0 + c * ys.s2];
      for (int k = 0; k < t.n; ++k) {
        if (!t.ok[k]) continue;
        gs_atomic_add(dx + dx0 + c * dxs.s2 + t.dxo[k], t.w[k] * go);
        const T v = x[x0 + c * xs.s2 + t.xo[k]] * go;
        for (int d = 0; d < dims; ++d) gsum[d] += v * t.dw[k][d];
      }
    }
    const long d0 = dgs.s0 + n * dgs.s1 + gs_dot(q, dgs, dims);
    for (int d = 0; d < dims; ++d) dgrid[d0 + d * dgs.s2] = t.mult[d] * gsum[d];
  }
}
