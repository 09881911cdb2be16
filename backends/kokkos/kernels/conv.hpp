// IM2COL / COL2IM for conv2d (docs/ops.md has the descriptor contract).
//  IM2COL: in0 image [N, C, H, W] (any strides) -> out col
//          [N, C*kh*kw, OH*OW] (any strides); padding reads as 0.
//  COL2IM: in0 col [N, C*kh*kw, OH*OW] (any strides) -> out image
//          [N, C, H, W]; the adjoint of IM2COL. One work item per image row
//          gathers every column entry that IM2COL copied from that row, so
//          overlapping patches accumulate without atomics or races.
//  conv2d passes col as a permuted view of a [C*kh*kw, N, OH*OW] buffer
//  (the layout of its single batched GEMM); the strides carry that.
//  ints = {kh, kw, sh, sw, ph, pw, dh, dw}; float32 and float64 (conv2d
//  runs 16-bit operands on float32 copies: col2im accumulates).
#pragma once
#include <Kokkos_Core.hpp>

#include "kokkos/kernels/dispatch.hpp"

namespace vnn::kernels {

struct Conv2dGeom {
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
};

// Reads ints[0..7]; false for too few or out-of-range values (a malformed
// request must not index out of bounds).
inline bool conv2d_geom(const int64_t* ints, int32_t n, Conv2dGeom* g) {
  if (!ints || n < 8) return false;
  *g = Conv2dGeom{ints[0], ints[1], ints[2], ints[3], ints[4], ints[5], ints[6], ints[7]};
  return g->kh > 0 && g->kw > 0 && g->sh > 0 && g->sw > 0 && g->ph >= 0 && g->pw >= 0 && g->dh > 0 && g->dw > 0;
}

inline int64_t conv2d_out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  int64_t span = in + 2 * p - d * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;
}

// Checks that image and col descriptors agree with the geometry.
inline bool conv2d_shapes_ok(const vnn_tensor_desc& img, const vnn_tensor_desc& col, const Conv2dGeom& g,
                             int64_t* oh, int64_t* ow) {
  if (img.ndim != 4 || col.ndim != 3 || img.dtype != col.dtype) return false;
  *oh = conv2d_out_size(img.sizes[2], g.kh, g.sh, g.ph, g.dh);
  *ow = conv2d_out_size(img.sizes[3], g.kw, g.sw, g.pw, g.dw);
  return col.sizes[0] == img.sizes[0] && col.sizes[1] == img.sizes[1] * g.kh * g.kw && col.sizes[2] == *oh * *ow;
}

// ceil(a / b) for b > 0 and any sign of a.
KOKKOS_INLINE_FUNCTION int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

template <class Exec, class T>
void im2col_typed(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& in, const Conv2dGeom g,
                  int64_t OH, int64_t OW) {
  const T* x = typed<T>(in);
  T* o = typed<T>(out);
  const int64_t C = in.sizes[1], H = in.sizes[2], W = in.sizes[3];
  const int64_t s0 = in.strides[0], s1 = in.strides[1], s2 = in.strides[2], s3 = in.strides[3], xo = in.offset;
  const int64_t o0 = out.strides[0], o1 = out.strides[1], o2 = out.strides[2], oo = out.offset;
  const int64_t K = g.kh * g.kw;
  // One work item per column row (n, c, ki, kj), all OH*OW entries: the
  // 64-bit divisions happen once per row, and the valid ow range of the
  // tap (inside the image horizontally) once per row too, so the inner
  // loop is a plain strided copy (a unit-stride one in the common case).
  const int64_t total = in.sizes[0] * C * K;
  Kokkos::parallel_for("vnn::im2col", Range<Exec>(exec, 0, total), KOKKOS_LAMBDA(int64_t i) {
    const int64_t row = i % (C * K), n = i / (C * K);
    const int64_t kj = row % g.kw, ki = (row / g.kw) % g.kh, c = row / K;
    const int64_t shift = kj * g.dw - g.pw;  // w = ow * sw + shift
    int64_t lo = ceil_div(-shift, g.sw), hi = ceil_div(W - shift, g.sw);
    if (lo < 0) lo = 0;
    if (lo > OW) lo = OW;
    if (hi > OW) hi = OW;
    if (hi < lo) hi = lo;
    const bool unit = g.sw == 1 && s3 == 1 && o2 == 1;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t h = oh * g.sh - g.ph + ki * g.dh;
      T* dst = o + oo + n * o0 + row * o1 + oh * OW * o2;
      if (h < 0 || h >= H) {
        for (int64_t ow = 0; ow < OW; ++ow) dst[ow * o2] = T(0);
        continue;
      }
      const T* src = x + xo + n * s0 + c * s1 + h * s2;
      for (int64_t ow = 0; ow < lo; ++ow) dst[ow * o2] = T(0);
      if (unit) {
        const T* sp = src + shift;
        for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = sp[ow];
      } else {
        for (int64_t ow = lo; ow < hi; ++ow) dst[ow * o2] = src[(ow * g.sw + shift) * s3];
      }
      for (int64_t ow = hi; ow < OW; ++ow) dst[ow * o2] = T(0);
    }
  });
}

template <class Exec, class T>
void col2im_typed(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& in, const Conv2dGeom g,
                  int64_t OH, int64_t OW) {
  const T* col = typed<T>(in);
  T* o = typed<T>(out);
  const int64_t C = out.sizes[1], H = out.sizes[2], W = out.sizes[3];
  const int64_t s0 = in.strides[0], s1 = in.strides[1], s2 = in.strides[2], co = in.offset;
  const int64_t o0 = out.strides[0], o1 = out.strides[1], o2 = out.strides[2], o3 = out.strides[3], oo = out.offset;
  // One work item per image row (n, c, h): it owns the whole row, so the
  // column entries of every tap can be added into it without races, and
  // the index math (divisibility by the stride, the valid ow range) is done
  // once per tap and row, not per pixel. Taps are summed in (ki, kj) order.
  const int64_t total = out.sizes[0] * C * H;
  Kokkos::parallel_for("vnn::col2im", Range<Exec>(exec, 0, total), KOKKOS_LAMBDA(int64_t i) {
    const int64_t h = i % H, c = (i / H) % C, n = i / (H * C);
    T* dst = o + oo + n * o0 + c * o1 + h * o2;
    const bool unit = g.sw == 1 && o3 == 1 && s2 == 1;
    for (int64_t w = 0; w < W; ++w) dst[w * o3] = T(0);
    for (int64_t ki = 0; ki < g.kh; ++ki) {
      const int64_t hh = h + g.ph - ki * g.dh;
      if (hh < 0 || hh % g.sh != 0 || hh / g.sh >= OH) continue;
      const int64_t oh = hh / g.sh;
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        // w = ow * sw + shift must lie in [0, W).
        const int64_t shift = kj * g.dw - g.pw;
        int64_t lo = ceil_div(-shift, g.sw), hi = ceil_div(W - shift, g.sw);
        if (lo < 0) lo = 0;
        if (hi > OW) hi = OW;
        const int64_t row = (c * g.kh + ki) * g.kw + kj;
        const T* src = col + co + n * s0 + row * s1 + oh * OW * s2;
        if (unit) {  // a plain vectorisable add (conv2d's layout, stride 1)
          T* dp = dst + shift;
          for (int64_t ow = lo; ow < hi; ++ow) dp[ow] += src[ow];
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) dst[(ow * g.sw + shift) * o3] += src[ow * s2];
        }
      }
    }
  });
}

// col2im == false: IM2COL (in0 image, out col); true: COL2IM.
template <class Exec>
bool im2col(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& in, const int64_t* ints,
            int32_t num_ints, bool col2im) {
  Conv2dGeom g;
  int64_t oh = 0, ow = 0;
  if (!conv2d_geom(ints, num_ints, &g)) return false;
  const vnn_tensor_desc& img = col2im ? out : in;
  const vnn_tensor_desc& col = col2im ? in : out;
  if (!conv2d_shapes_ok(img, col, g, &oh, &ow)) return false;
  dispatch_types<FloatingTypes>(col2im ? "col2im" : "im2col", out.dtype, [&](auto t) {
    using T = decltype(t);
    col2im ? col2im_typed<Exec, T>(exec, out, in, g, oh, ow) : im2col_typed<Exec, T>(exec, out, in, g, oh, ow);
  });
  return true;
}

}  // namespace vnn::kernels
