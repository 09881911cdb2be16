// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// POOL2D / POOL2D_BACKWARD (docs/ops.md has the descriptor contract).
//  ints = vnn_pool2d_params {mode, kh, kw, sh, sw, ph, pw, dh, dw,
//  count_include_pad, divisor_override (0: none)}; mode a vnn_pool_mode
//  (adaptive modes take their windows from the output size, PyTorch's
//  start = floor(o*H/OH), end = ceil((o+1)*H/OH)).
//  POOL2D: in0 [N, C, H, W] -> out [N, C, OH, OW]; max modes also write
//          outputs[1], int64 indices into the H*W plane.
//  POOL2D_BACKWARD: in0 grad_out [N, C, OH, OW], in1 indices (max modes)
//          -> out grad_in [N, C, H, W]. One work item per input pixel
//          gathers from the outputs whose window holds it: no atomics, no
//          races. An index that names no pixel of its window adds nothing.
// float32, float64 and 16-bit storage (float32 sums and maxima, one
// rounding per output); every tensor any strides.
#pragma once
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/op_params.hpp"
#include "kokkos/kernels/dispatch.hpp"

namespace vnn::kernels {

// The geometry is the ABI's vnn_pool2d_params, decoded once by
// common/op_params.hpp; a plain C struct, captured by value on devices.
using Pool2dGeom = vnn_pool2d_params;

// Window along one axis for output o: positions start + k * step, k < count.
KOKKOS_INLINE_FUNCTION void pool_window(bool adaptive, int64_t o, int64_t O, int64_t I, int64_t k, int64_t s,
                                        int64_t p, int64_t d, int64_t* start, int64_t* count, int64_t* step) {
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

// The avg divisor of one output (PyTorch's avg_pool2d rule).
KOKKOS_INLINE_FUNCTION int64_t pool_divisor(const Pool2dGeom& g, int64_t hs, int64_t hc, int64_t ws, int64_t wc,
                                            int64_t H, int64_t W) {
  if (g.mode == VNN_POOL_ADAPTIVE_AVG) return hc * wc;
  if (g.divisor_override > 0) return g.divisor_override;
  int64_t he = hs + hc, we = ws + wc;
  int64_t hep = he < H + g.pad_h ? he : H + g.pad_h, wep = we < W + g.pad_w ? we : W + g.pad_w;
  if (g.count_include_pad) return (hep - hs) * (wep - ws);
  int64_t h0 = hs > 0 ? hs : 0, w0 = ws > 0 ? ws : 0, h1 = he < H ? he : H, w1 = we < W ? we : W;
  return (h1 - h0) * (w1 - w0);
}

// One step of the max scan: v at flat index pos against the running best,
// the generic path's rule "take if v > best or v is NaN" (so a NaN best only
// yields to a later NaN) without a branch: the index follows by a mask, the
// value by selects the compiler turns into max / blend instructions.
template <class C, class I = int64_t>
KOKKOS_INLINE_FUNCTION void max_step(C v, I pos, C& best, I& arg) {
  const bool isn = v != v;
  const bool take = isn | (v > best);
  const I m = -static_cast<I>(take);
  arg ^= (arg ^ pos) & m;
  const C mx = v > best ? v : best;  // keeps best when either is NaN
  best = isn ? v : mx;
}

// One output row of max pooling without padding (PyTorch's default): every
// window lies inside the plane, so the generic path's per-output window
// setup and per-tap bounds checks go away, and the geometry lives in
// registers (arguments by value: the closure's members would be reloaded
// after every store through the int64 index pointer, which may alias them).
// The scan is branch-free (max_step): on real activations "v > best" is a
// coin flip, and mispredicted branches cost more than the whole window (4x
// slower). Same scan order and rule as the generic path (first maximum,
// NaN wins), so values and indices match.
template <class T>
KOKKOS_INLINE_FUNCTION void max_pool_row_nopad(const T* row, T* out, int64_t* idx, int64_t h0, int64_t W, int64_t OW,
                                               int64_t kh, int64_t kw, int64_t sw, int64_t dh, int64_t dw,
                                               int64_t s2, int64_t s3, int64_t o3, int64_t i3) {
  using C = compute_t<T>;
  const bool k2 = kh == 2 && kw == 2 && dh == 1 && dw == 1;  // the CNN case: fully unrolled
  for (int64_t ow = 0; ow < OW; ++ow) {
    const int64_t w0 = ow * sw, base = h0 * W + w0;
    const T* p = row + w0 * s3;
    C best = load(p[0]);
    int64_t arg = base;
    if (k2) {
      max_step<C>(load(p[s3]), base + 1, best, arg);
      max_step<C>(load(p[s2]), base + W, best, arg);
      max_step<C>(load(p[s2 + s3]), base + W + 1, best, arg);
    } else {
      for (int64_t a = 0; a < kh; ++a)
        for (int64_t b = (a == 0 ? 1 : 0); b < kw; ++b)
          max_step<C>(load(p[a * dh * s2 + b * dw * s3]), base + a * dh * W + b * dw, best, arg);
    }
    out[ow * o3] = store<T>(best);
    if (idx) idx[ow * i3] = arg;
  }
}

// The CNN case (2x2 window, stride 2, no padding, unit stride along W for
// every operand, W < 2^30): the same scan as max_pool_row_nopad on plain
// row pointers, keeping the winning tap's offset (0, 1, W, W + 1) in 32
// bits, which the compiler vectorises (64x32x28x28 -> 14x14: from ~12
// cycles per output, scalar, to SIMD; the offset in 64 bits cost a third
// more).
template <class T>
KOKKOS_INLINE_FUNCTION void max_pool_row_2x2(const T* r0, const T* r1, T* out, int64_t* idx, int64_t base, int32_t W,
                                             int64_t OW) {
  using C = compute_t<T>;
  auto scan = [&](int64_t ow, C& best, int32_t& tap) {
    best = load(r0[2 * ow]);
    tap = 0;
    max_step<C, int32_t>(load(r0[2 * ow + 1]), 1, best, tap);
    max_step<C, int32_t>(load(r1[2 * ow]), W, best, tap);
    max_step<C, int32_t>(load(r1[2 * ow + 1]), W + 1, best, tap);
  };
  C best;
  int32_t tap;
  if (idx) {  // two loops: a store under a condition kept the loop scalar
    for (int64_t ow = 0; ow < OW; ++ow) {
      scan(ow, best, tap);
      out[ow] = store<T>(best);
      idx[ow] = base + 2 * ow + tap;
    }
  } else {
    for (int64_t ow = 0; ow < OW; ++ow) {
      scan(ow, best, tap);
      out[ow] = store<T>(best);
    }
  }
}

template <class Exec, class T>
void pool2d_typed(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc* idx, const vnn_tensor_desc& in,
                  const Pool2dGeom g) {
  const T* x = typed<T>(in);
  T* o = typed<T>(out);
  int64_t* ix = idx ? typed<int64_t>(*idx) : nullptr;
  const int64_t C = in.sizes[1], H = in.sizes[2], W = in.sizes[3], OH = out.sizes[2], OW = out.sizes[3];
  const int64_t s0 = in.strides[0], s1 = in.strides[1], s2 = in.strides[2], s3 = in.strides[3], xo = in.offset;
  const int64_t o0 = out.strides[0], o1 = out.strides[1], o2 = out.strides[2], o3 = out.strides[3], oo = out.offset;
  int64_t i0 = 0, i1 = 0, i2 = 0, i3 = 0, io = 0;
  if (idx) i0 = idx->strides[0], i1 = idx->strides[1], i2 = idx->strides[2], i3 = idx->strides[3], io = idx->offset;
  const bool is_max = vnn_pool_is_max(g.mode), adaptive = vnn_pool_is_adaptive(g.mode);
  // One work item per output row: the (n, c, oh) split and the vertical
  // window are computed once per row, not per element.
  const int64_t rows = out.sizes[0] * C * OH;
  // Only when every window of the requested output fits the plane (a
  // descriptor asking for a larger output takes the checked path).
  const bool inside = OH > 0 && OW > 0 && (OH - 1) * g.stride_h + (g.kernel_h - 1) * g.dilation_h < H &&
                      (OW - 1) * g.stride_w + (g.kernel_w - 1) * g.dilation_w < W;
  if (g.mode == VNN_POOL_MAX && g.pad_h == 0 && g.pad_w == 0 && inside) {
    const int64_t kh = g.kernel_h, kw = g.kernel_w, sh = g.stride_h, sw = g.stride_w;
    const int64_t dh = g.dilation_h, dw = g.dilation_w;
    if (kh == 2 && kw == 2 && sh == 2 && sw == 2 && dh == 1 && dw == 1 && s3 == 1 && o3 == 1 && (!ix || i3 == 1) &&
        W < (int64_t(1) << 30)) {
      const int32_t W32 = int32_t(W);
      Kokkos::parallel_for("vnn::max_pool2d_2x2", Range<Exec>(exec, 0, rows), KOKKOS_LAMBDA(int64_t r) {
        const int64_t oh = r % OH, nc = r / OH, c = nc % C, n = nc / C;
        const T* r0 = x + xo + n * s0 + c * s1 + 2 * oh * s2;
        max_pool_row_2x2<T>(r0, r0 + s2, o + oo + n * o0 + c * o1 + oh * o2,
                            ix ? ix + io + n * i0 + c * i1 + oh * i2 : nullptr, 2 * oh * W, W32, OW);
      });
      return;
    }
    Kokkos::parallel_for("vnn::max_pool2d_nopad", Range<Exec>(exec, 0, rows), KOKKOS_LAMBDA(int64_t r) {
      const int64_t oh = r % OH, nc = r / OH, c = nc % C, n = nc / C;
      const int64_t h0 = oh * sh;
      max_pool_row_nopad<T>(x + xo + n * s0 + c * s1 + h0 * s2, o + oo + n * o0 + c * o1 + oh * o2,
                            ix ? ix + io + n * i0 + c * i1 + oh * i2 : nullptr, h0, W, OW, kh, kw, sw, dh, dw, s2, s3,
                            o3, i3);
    });
    return;
  }
  Kokkos::parallel_for("vnn::pool2d", Range<Exec>(exec, 0, rows), KOKKOS_LAMBDA(int64_t r) {
    const int64_t oh = r % OH, nc = r / OH, c = nc % C, n = nc / C;
    int64_t hs, hc, hst;
    pool_window(adaptive, oh, OH, H, g.kernel_h, g.stride_h, g.pad_h, g.dilation_h, &hs, &hc, &hst);
    const T* plane = x + xo + n * s0 + c * s1;
    for (int64_t ow = 0; ow < OW; ++ow) {
      int64_t ws, wc, wst;
      pool_window(adaptive, ow, OW, W, g.kernel_w, g.stride_w, g.pad_w, g.dilation_w, &ws, &wc, &wst);
      compute_t<T> best = 0, sum = 0;
      int64_t arg = -1;
      for (int64_t a = 0; a < hc; ++a) {
        const int64_t h = hs + a * hst;
        if (h < 0 || h >= H) continue;
        for (int64_t b = 0; b < wc; ++b) {
          const int64_t w = ws + b * wst;
          if (w < 0 || w >= W) continue;
          const compute_t<T> v = load(plane[h * s2 + w * s3]);
          sum += v;
          // NaN wins, as in PyTorch.
          if (arg < 0 || v > best || v != v) {
            best = v;
            arg = h * W + w;
          }
        }
      }
      const int64_t at = oo + n * o0 + c * o1 + oh * o2 + ow * o3;
      if (is_max) {
        o[at] = store<T>(best);
        if (ix) ix[io + n * i0 + c * i1 + oh * i2 + ow * i3] = arg;
      } else {
        o[at] = store<T>(sum / compute_t<T>(pool_divisor(g, hs, hc, ws, wc, H, W)));
      }
    }
  });
}

// v where c holds, else +0.0, by masking v's bits: the select written as
// c ? v : 0 became a branch, which a random argmax mispredicts (the 2x2
// backward below ran at 2x the time).
template <class T>
KOKKOS_INLINE_FUNCTION T keep_if(bool c, T v) {
  using U = std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
  static_assert(sizeof(U) == sizeof(T), "keep_if: 2-, 4- or 8-byte element types");
  U bits;
  memcpy(&bits, &v, sizeof bits);
  bits &= static_cast<U>(U(0) - U(c));
  memcpy(&v, &bits, sizeof bits);
  return v;
}

// The range of outputs along one axis whose window may hold input position
// h (members are re-checked by the caller).
KOKKOS_INLINE_FUNCTION void pool_sources(bool adaptive, int64_t h, int64_t I, int64_t O, int64_t k, int64_t s,
                                         int64_t p, int64_t d, int64_t* lo, int64_t* hi) {
  if (adaptive) {
    *lo = (h * O) / I;
    *hi = ((h + 1) * O + I - 1) / I - 1;
  } else {
    const int64_t num = h + p - (k - 1) * d;
    *lo = num <= 0 ? 0 : (num + s - 1) / s;
    *hi = (h + p) / s;
  }
  if (*hi > O - 1) *hi = O - 1;
  if (*lo < 0) *lo = 0;
}

template <class Exec, class T>
void pool2d_backward_typed(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& grad,
                           const vnn_tensor_desc* idx, const Pool2dGeom g) {
  const T* gy = typed<T>(grad);
  T* o = typed<T>(out);
  const int64_t* ix = idx ? typed<int64_t>(*idx) : nullptr;
  const int64_t C = out.sizes[1], H = out.sizes[2], W = out.sizes[3], OH = grad.sizes[2], OW = grad.sizes[3];
  const int64_t g0 = grad.strides[0], g1 = grad.strides[1], g2 = grad.strides[2], g3 = grad.strides[3];
  const int64_t go = grad.offset;
  const int64_t o0 = out.strides[0], o1 = out.strides[1], o2 = out.strides[2], o3 = out.strides[3], oo = out.offset;
  int64_t i0 = 0, i1 = 0, i2 = 0, i3 = 0, io = 0;
  if (idx) i0 = idx->strides[0], i1 = idx->strides[1], i2 = idx->strides[2], i3 = idx->strides[3], io = idx->offset;
  const bool is_max = vnn_pool_is_max(g.mode), adaptive = vnn_pool_is_adaptive(g.mode);
  const int64_t total = out.sizes[0] * C * H * W;
  // Max pooling with disjoint windows (the common stride == kernel case):
  // every input pixel receives from at most one output, so zero the
  // gradient and scatter each output's gradient to its argmax, race-free
  // and with no window search per input pixel.
  const bool disjoint = g.mode == VNN_POOL_MAX && g.stride_h >= g.dilation_h * (g.kernel_h - 1) + 1 &&
                        g.stride_w >= g.dilation_w * (g.kernel_w - 1) + 1;
  if (disjoint) {
    const int64_t planes = out.sizes[0] * C, HW = H * W;
    const int64_t kh = g.kernel_h, kw = g.kernel_w, sh = g.stride_h, sw = g.stride_w, ph = g.pad_h, pw = g.pad_w;
    const int64_t dh = g.dilation_h, dw = g.dilation_w;
    if (kh == 2 && kw == 2 && sh == 2 && sw == 2 && ph == 0 && pw == 0 && dh == 1 && dw == 1 && o3 == 1 && g3 == 1 &&
        i3 == 1 && 2 * OH <= H && 2 * OW <= W) {
      // The CNN case: each output's four pixels are written in one pass
      // (its gradient where the index names the pixel, else 0), then the
      // rows and columns no window covers are zeroed. No separate zeroing
      // pass and no division per output (the generic path's at / W was most
      // of its time). An index naming no pixel of its window routes nothing.
      Kokkos::parallel_for("vnn::max_pool2d_backward_2x2", Range<Exec>(exec, 0, planes), KOKKOS_LAMBDA(int64_t p) {
        const int64_t n = p / C, c = p % C;
        T* plane = o + oo + n * o0 + c * o1;
        const int64_t* pix = ix + io + n * i0 + c * i1;
        const T* pg = gy + go + n * g0 + c * g1;
        const T zero = store<T>(0.0f);  // +0: all bits clear, as keep_if's
        for (int64_t oh = 0; oh < OH; ++oh) {
          T* q0 = plane + 2 * oh * o2;
          T* q1 = q0 + o2;
          const int64_t* ir = pix + oh * i2;
          const T* gr = pg + oh * g2;
          const int64_t base = 2 * oh * W;
          for (int64_t ow = 0; ow < OW; ++ow) {
            const int64_t at = ir[ow] - (base + 2 * ow);
            const T v = gr[ow];
            q0[2 * ow] = keep_if(at == 0, v);
            q0[2 * ow + 1] = keep_if(at == 1, v);
            q1[2 * ow] = keep_if(at == W, v);
            q1[2 * ow + 1] = keep_if(at == W + 1, v);
          }
          for (int64_t w = 2 * OW; w < W; ++w) q0[w] = q1[w] = zero;
        }
        for (int64_t h = 2 * OH; h < H; ++h)
          for (int64_t w = 0; w < W; ++w) plane[h * o2 + w] = zero;
      });
      return;
    }
    // One work item per plane: zero it, then route each output's gradient.
    // An index naming no pixel of its own window adds nothing (checked
    // here: with disjoint windows it would land on another output's pixel).
    Kokkos::parallel_for("vnn::pool2d_backward_scatter", Range<Exec>(exec, 0, planes), KOKKOS_LAMBDA(int64_t p) {
      const int64_t n = p / C, c = p % C;
      T* plane = o + oo + n * o0 + c * o1;
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) plane[h * o2 + w * o3] = store<T>(0.0f);
      const int64_t* pix = ix + io + n * i0 + c * i1;
      const T* pg = gy + go + n * g0 + c * g1;
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          const int64_t at = pix[oh * i2 + ow * i3];
          if (at < 0 || at >= HW) continue;  // not a position of this plane: nothing to route
          const int64_t h = at / W, w = at - h * W;
          const int64_t dh0 = h - (oh * sh - ph), dw0 = w - (ow * sw - pw);
          const bool in_window = dh0 >= 0 && dh0 <= (kh - 1) * dh && dw0 >= 0 && dw0 <= (kw - 1) * dw &&
                                 (dh == 1 || dh0 % dh == 0) && (dw == 1 || dw0 % dw == 0);
          if (in_window) plane[h * o2 + w * o3] = pg[oh * g2 + ow * g3];
        }
    });
    return;
  }
  Kokkos::parallel_for("vnn::pool2d_backward", Range<Exec>(exec, 0, total), KOKKOS_LAMBDA(int64_t i) {
    const int64_t w = i % W, h = (i / W) % H, c = (i / (W * H)) % C, n = i / (W * H * C);
    int64_t ohl, ohh, owl, owh;
    pool_sources(adaptive, h, H, OH, g.kernel_h, g.stride_h, g.pad_h, g.dilation_h, &ohl, &ohh);
    pool_sources(adaptive, w, W, OW, g.kernel_w, g.stride_w, g.pad_w, g.dilation_w, &owl, &owh);
    compute_t<T> sum = 0;
    for (int64_t oh = ohl; oh <= ohh; ++oh) {
      int64_t hs, hc, hst;
      pool_window(adaptive, oh, OH, H, g.kernel_h, g.stride_h, g.pad_h, g.dilation_h, &hs, &hc, &hst);
      if (h < hs || (h - hs) % hst != 0 || (h - hs) / hst >= hc) continue;
      for (int64_t ow = owl; ow <= owh; ++ow) {
        int64_t ws, wc, wst;
        pool_window(adaptive, ow, OW, W, g.kernel_w, g.stride_w, g.pad_w, g.dilation_w, &ws, &wc, &wst);
        if (w < ws || (w - ws) % wst != 0 || (w - ws) / wst >= wc) continue;
        const compute_t<T> gv = load(gy[go + n * g0 + c * g1 + oh * g2 + ow * g3]);
        if (is_max) {
          if (ix[io + n * i0 + c * i1 + oh * i2 + ow * i3] == h * W + w) sum += gv;
        } else {
          sum += gv / compute_t<T>(pool_divisor(g, hs, hc, ws, wc, H, W));
        }
      }
    }
    o[oo + n * o0 + c * o1 + h * o2 + w * o3] = store<T>(sum);
  });
}

// backward == false: POOL2D (outputs[0] values, outputs[1] indices for max
// modes); true: POOL2D_BACKWARD (inputs[1] indices for max modes).
template <class Exec>
bool pool2d(const Exec& exec, const vnn_op& op, bool backward) {
  Pool2dGeom g;
  if (!decode_pool2d(op, &g) || op.num_inputs < 1 || op.num_outputs < 1) return false;
  const bool is_max = vnn_pool_is_max(g.mode);
  const vnn_tensor_desc& out = op.outputs[0];
  const vnn_tensor_desc& in = op.inputs[0];
  const vnn_tensor_desc* idx = nullptr;
  if (is_max) {
    if (backward ? op.num_inputs < 2 : op.num_outputs < 2) return false;
    idx = backward ? &op.inputs[1] : &op.outputs[1];
    if (idx->dtype != VNN_INT64 || idx->ndim != 4) return false;
  }
  if (in.ndim != 4 || out.ndim != 4 || in.dtype != out.dtype || in.sizes[0] != out.sizes[0] ||
      in.sizes[1] != out.sizes[1])
    return false;
  const vnn_tensor_desc& small = backward ? in : out;  // [N, C, OH, OW]
  if (idx)
    for (int k = 0; k < 4; ++k)
      if (idx->sizes[k] != small.sizes[k]) return false;
  dispatch_types<FloatingAndHalfTypes>(backward ? "pool2d_backward" : "pool2d", out.dtype, [&](auto t) {
    using T = decltype(t);
    backward ? pool2d_backward_typed<Exec, T>(exec, out, in, idx, g) : pool2d_typed<Exec, T>(exec, out, idx, in, g);
  });
  return true;
}

}  // namespace vnn::kernels
