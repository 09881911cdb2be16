// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// POOL2D / POOL2D_BACKWARD (docs/ops.md has the contract; the Kokkos twin
// is backends/kokkos/kernels/pooling.hpp). One work item per output element
// (forward) or per input pixel (backward: a gather over the outputs whose
// window holds the pixel, so no atomics and no races). Grid-stride loops.
//
// Defines: T storage type and DT its dtype code (float32, float64, or 16-bit
// storage computed in float32 through common.cl's VNN_LD / VNN_ST).
// g = (mode, kh, kw, sh, sw, ph, pw, dh), g2 = (dw, count_include_pad,
// divisor_override); mode 0 max, 1 avg, 2 adaptive avg, 3 adaptive max.
// dims = (N, C, H, W) of the input image; OH, OW the pooled plane.

inline void vnn_pool_window(int adaptive, long o, long O, long I, long k, long s, long p, long d, long* start,
                            long* count, long* step) {
  if (adaptive) {
    *start = (o * I) / O;
    *count = ((o + 1) * I + O - 1) / O - *start;
    *step = 1;
  } else {
    *start = o * s - p;
    *count = k;
    *step = d;
  }
}

inline long vnn_pool_divisor(long mode, long cip, long divisor, long ph, long pw, long hs, long hc, long ws, long wc,
                             long H, long W) {
  if (mode == VNN_POOL_ADAPTIVE_AVG) return hc * wc;
  if (divisor > 0) return divisor;
  const long he = hs + hc, we = ws + wc;
  if (cip) return (min(he, H + ph) - hs) * (min(we, W + pw) - ws);
  return (min(he, H) - max(hs, 0L)) * (min(we, W) - max(ws, 0L));
}

__kernel void vnn_pool2d(__global T* out, long out_off, long4 os, __global long* idx, long idx_off, long4 xs,
                         __global const T* in, long in_off, long4 is, long4 dims, long OH, long OW, long8 g,
                         long4 g2) {
  const long C = dims.s1, H = dims.s2, W = dims.s3, mode = g.s0;
  const int is_max = mode == VNN_POOL_MAX || mode == VNN_POOL_ADAPTIVE_MAX, adaptive = mode >= VNN_POOL_ADAPTIVE_AVG;
  const long total = dims.s0 * C * OH * OW;
  for (long i = get_global_id(0); i < total; i += get_global_size(0)) {
    const long ow = i % OW, oh = (i / OW) % OH, c = (i / (OW * OH)) % C, n = i / (OW * OH * C);
    long hs, hc, hst, ws, wc, wst;
    vnn_pool_window(adaptive, oh, OH, H, g.s1, g.s3, g.s5, g.s7, &hs, &hc, &hst);
    vnn_pool_window(adaptive, ow, OW, W, g.s2, g.s4, g.s6, g2.s0, &ws, &wc, &wst);
    const long base = in_off + n * is.s0 + c * is.s1;
    VNN_CT best = 0, sum = 0;
    long arg = -1;
    for (long a = 0; a < hc; ++a) {
      const long h = hs + a * hst;
      if (h < 0 || h >= H) continue;
      for (long b = 0; b < wc; ++b) {
        const long w = ws + b * wst;
        if (w < 0 || w >= W) continue;
        const VNN_CT v = VNN_LD(in, base + h * is.s2 + w * is.s3);
        sum += v;
        if (arg < 0 || v > best || isnan(v)) {  // NaN wins, as in PyTorch
          best = v;
          arg = h * W + w;
        }
      }
    }
    const long at = out_off + n * os.s0 + c * os.s1 + oh * os.s2 + ow * os.s3;
    if (is_max) {
      VNN_ST(out, at, best);
      idx[idx_off + n * xs.s0 + c * xs.s1 + oh * xs.s2 + ow * xs.s3] = arg;
    } else {
      VNN_ST(out, at, sum / (VNN_CT)vnn_pool_divisor(mode, g2.s1, g2.s2, g.s5, g.s6, hs, hc, ws, wc, H, W));
    }
  }
}

inline void vnn_pool_sources(int adaptive, long h, long I, long O, long k, long s, long p, long d, long* lo,
                             long* hi) {
  if (adaptive) {
    *lo = (h * O) / I;
    *hi = ((h + 1) * O + I - 1) / I - 1;
  } else {
    const long num = h + p - (k - 1) * d;
    *lo = num <= 0 ? 0 : (num + s - 1) / s;
    *hi = (h + p) / s;
  }
  *hi = min(*hi, O - 1);
  *lo = max(*lo, 0L);
}

// dims = (N, C, H, W) of grad_in (out); grad_out is [N, C, OH, OW].
__kernel void vnn_pool2d_backward(__global T* out, long out_off, long4 os, __global const long* idx, long idx_off,
                                  long4 xs, __global const T* gy, long gy_off, long4 gs, long4 dims, long OH, long OW,
                                  long8 g, long4 g2) {
  const long C = dims.s1, H = dims.s2, W = dims.s3, mode = g.s0;
  const int is_max = mode == VNN_POOL_MAX || mode == VNN_POOL_ADAPTIVE_MAX, adaptive = mode >= VNN_POOL_ADAPTIVE_AVG;
  const long total = dims.s0 * C * H * W;
  for (long i = get_global_id(0); i < total; i += get_global_size(0)) {
    const long w = i % W, h = (i / W) % H, c = (i / (W * H)) % C, n = i / (W * H * C);
    long ohl, ohh, owl, owh;
    vnn_pool_sources(adaptive, h, H, OH, g.s1, g.s3, g.s5, g.s7, &ohl, &ohh);
    vnn_pool_sources(adaptive, w, W, OW, g.s2, g.s4, g.s6, g2.s0, &owl, &owh);
    VNN_CT sum = 0;
    for (long oh = ohl; oh <= ohh; ++oh) {
      long hs, hc, hst;
      vnn_pool_window(adaptive, oh, OH, H, g.s1, g.s3, g.s5, g.s7, &hs, &hc, &hst);
      if (h < hs || (h - hs) % hst != 0 || (h - hs) / hst >= hc) continue;
      for (long ow = owl; ow <= owh; ++ow) {
        long ws, wc, wst;
        vnn_pool_window(adaptive, ow, OW, W, g.s2, g.s4, g.s6, g2.s0, &ws, &wc, &wst);
        if (w < ws || (w - ws) % wst != 0 || (w - ws) / wst >= wc) continue;
        const VNN_CT gv = VNN_LD(gy, gy_off + n * gs.s0 + c * gs.s1 + oh * gs.s2 + ow * gs.s3);
        if (is_max) {
          if (idx[idx_off + n * xs.s0 + c * xs.s1 + oh * xs.s2 + ow * xs.s3] == h * W + w) sum += gv;
        } else {
          sum += gv / (VNN_CT)vnn_pool_divisor(mode, g2.s1, g2.s2, g.s5, g.s6, hs, hc, ws, wc, H, W);
        }
      }
    }
    VNN_ST(out, out_off + n * os.s0 + c * os.s1 + h * os.s2 + w * os.s3, sum);
  }
}

// Max pooling backward when windows do not overlap (stride >= dilated
// window): an input pixel is the argmax of at most one output, so one work
// item per output writes its gradient there, after grad_in (out) was
// zero-filled. A quarter of the items of the gather above for 2x2 pools,
// and no window search. An index outside its own window routes nothing,
// as in the gather.
inline int vnn_in_window(long x, long o, long k, long s, long p, long d) {
  const long off = x - (o * s - p);
  return off >= 0 && off <= (k - 1) * d && (d == 1 || off % d == 0);
}

__kernel void vnn_maxpool2d_backward_scatter(__global T* out, long out_off, long4 os, __global const long* idx,
                                             long idx_off, long4 xs, __global const T* gy, long gy_off, long4 gs,
                                             long4 dims, long OH, long OW, long8 g, long4 g2) {
  const long C = dims.s1, H = dims.s2, W = dims.s3;
  const long total = dims.s0 * C * OH * OW;
  for (long i = get_global_id(0); i < total; i += get_global_size(0)) {
    const long ow = i % OW, oh = (i / OW) % OH, c = (i / (OW * OH)) % C, n = i / (OW * OH * C);
    const long at = idx[idx_off + n * xs.s0 + c * xs.s1 + oh * xs.s2 + ow * xs.s3];
    if (at < 0 || at >= H * W) continue;
    const long h = at / W, w = at - h * W;
    if (!vnn_in_window(h, oh, g.s1, g.s3, g.s5, g.s7) || !vnn_in_window(w, ow, g.s2, g.s4, g.s6, g2.s0)) continue;
    VNN_ST(out, out_off + n * os.s0 + c * os.s1 + h * os.s2 + w * os.s3,
           VNN_LD(gy, gy_off + n * gs.s0 + c * gs.s1 + oh * gs.s2 + ow * gs.s3));
  }
}

// The CNN case: max pooling 2x2, stride 2, no padding, every operand dense
// NCHW (the host checks; backward also needs H = 2 OH and W = 2 OW, so that
// every pixel lies in one window). One work item per output: two divisions
// to find it, no window loops, and the backward writes its window's four
// pixels itself (its gradient where the index names the pixel, else 0), with
// no zero-fill pass and no division by W. Same scan order and NaN rule as
// vnn_pool2d, so values and indices match it.
// The 2x2 window whose top-left pixel is in[p] (plane index at): its
// maximum into *best, its plane index returned; first in scan order wins
// ties, NaN wins (as vnn_pool2d).
inline long vnn_max_2x2(__global const T* in, long p, long at, long W, VNN_CT* best) {
  VNN_CT b = VNN_LD(in, p);
  long arg = at;
  VNN_CT v = VNN_LD(in, p + 1);
  if (v > b || isnan(v)) b = v, arg = at + 1;
  v = VNN_LD(in, p + W);
  if (v > b || isnan(v)) b = v, arg = at + W;
  v = VNN_LD(in, p + W + 1);
  if (v > b || isnan(v)) b = v, arg = at + W + 1;
  *best = b;
  return arg;
}

__kernel void vnn_maxpool2d_2x2(__global T* out, long out_off, __global long* idx, long idx_off,
                                __global const T* in, long in_off, long H, long W, long OH, long OW, long total) {
  for (long i = get_global_id(0); i < total; i += get_global_size(0)) {
    const long row = i / OW, ow = i - row * OW, plane = row / OH, oh = row - plane * OH;
    const long h0 = 2 * oh, w0 = 2 * ow, at = h0 * W + w0;
    const long p = in_off + plane * H * W + at;
    VNN_CT best;
    const long arg = vnn_max_2x2(in, p, at, W, &best);
    VNN_ST(out, out_off + i, best);
    idx[idx_off + i] = arg;
  }
}

__kernel void vnn_maxpool2d_backward_2x2(__global T* out, long out_off, __global const long* idx, long idx_off,
                                         __global const T* gy, long gy_off, long H, long W, long OH, long OW,
                                         long total) {
  for (long i = get_global_id(0); i < total; i += get_global_size(0)) {
    const long row = i / OW, ow = i - row * OW, plane = row / OH, oh = row - plane * OH;
    const long at = (2 * oh) * W + 2 * ow;
    const long rel = idx[idx_off + i] - at;  // 0, 1, W or W + 1 inside the window
    const VNN_CT g = VNN_LD(gy, gy_off + i), z = 0;
    const long q = out_off + plane * H * W + at;
    VNN_ST(out, q, rel == 0 ? g : z);
    VNN_ST(out, q + 1, rel == 1 ? g : z);
    VNN_ST(out, q + W, rel == W ? g : z);
    VNN_ST(out, q + W + 1, rel == W + 1 ? g : z);
  }
}

// The same two passes on devices whose work items run as loops on a CPU
// thread (the host picks these where Device::one_per_item): one item per
// [H, W] plane, its windows in a loop. PoCL's cost per item and per group
// outweighed four loads and a store: the CNN's first layer (64 x 32 planes
// of 28 x 28) took 2.2 ms forward with an item per output and ~0.7 ms so.
// The backward also zero-fills the last row and column of an odd height or
// width (pixels no window covers), so it takes any H in {2 OH, 2 OH + 1}.
__kernel void vnn_maxpool2d_2x2_planes(__global T* out, long out_off, __global long* idx, long idx_off,
                                       __global const T* in, long in_off, long H, long W, long OH, long OW,
                                       long planes) {
  const long plane = get_global_id(0);
  if (plane >= planes) return;
  const long src = in_off + plane * H * W, dst = plane * OH * OW;
  for (long oh = 0; oh < OH; ++oh) {
    for (long ow = 0; ow < OW; ++ow) {
      const long at = 2 * oh * W + 2 * ow, p = src + at;
      VNN_CT best;
      const long arg = vnn_max_2x2(in, p, at, W, &best);
      const long o = dst + oh * OW + ow;
      VNN_ST(out, out_off + o, best);
      idx[idx_off + o] = arg;
    }
  }
}

__kernel void vnn_maxpool2d_backward_2x2_planes(__global T* out, long out_off, __global const long* idx,
                                                long idx_off, __global const T* gy, long gy_off, long H, long W,
                                                long OH, long OW, long planes) {
  const long plane = get_global_id(0);
  if (plane >= planes) return;
  const long dst = out_off + plane * H * W, src = plane * OH * OW;
  const VNN_CT z = 0;
  for (long oh = 0; oh < OH; ++oh) {
    const long r = dst + 2 * oh * W;
    for (long ow = 0; ow < OW; ++ow) {
      const long at = 2 * oh * W + 2 * ow, o = src + oh * OW + ow;
      const long rel = idx[idx_off + o] - at;  // 0, 1, W or W + 1 inside the window
      const VNN_CT g = VNN_LD(gy, gy_off + o);
      VNN_ST(out, r + 2 * ow, rel == 0 ? g : z);
      VNN_ST(out, r + 2 * ow + 1, rel == 1 ? g : z);
      VNN_ST(out, r + W + 2 * ow, rel == W ? g : z);
      VNN_ST(out, r + W + 2 * ow + 1, rel == W + 1 ? g : z);
    }
    for (long w = 2 * OW; w < W; ++w) {
      VNN_ST(out, r + w, z);
      VNN_ST(out, r + W + w, z);
    }
  }
  for (long p = dst + 2 * OH * W; p < dst + H * W; ++p) VNN_ST(out, p, z);
}
