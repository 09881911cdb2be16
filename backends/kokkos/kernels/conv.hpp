// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// IM2COL / COL2IM for conv2d (docs/ops.md has the descriptor contract).
//  IM2COL: in0 image [N, C, H, W] (any strides) -> out col
//          [N, C*kh*kw, OH*OW] (any strides); padding reads as 0.
//  COL2IM: in0 col [N, C*kh*kw, OH*OW] (any strides) -> out image
//          [N, C, H, W]; the adjoint of IM2COL. One work item per image row
//          gathers every column entry that IM2COL copied from that row, so
//          overlapping patches accumulate without atomics or races.
//  conv2d passes col as a permuted view of a [C*kh*kw, N, OH*OW] buffer
//  (the layout of its single batched GEMM); the strides carry that.
//  ints = vnn_conv2d_params {kh, kw, sh, sw, ph, pw, dh, dw}; float32 and float64 (conv2d
//  runs 16-bit operands on float32 copies: col2im accumulates).
#pragma once
#include <Kokkos_Core.hpp>

#include "common/op_params.hpp"
#include "kokkos/kernels/dispatch.hpp"

namespace vnn::kernels {

// The geometry is the ABI's vnn_conv2d_params, decoded once by
// common/op_params.hpp; a plain C struct, captured by value on devices.
using Conv2dGeom = vnn_conv2d_params;

inline int64_t conv2d_out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  int64_t span = in + 2 * p - d * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;
}

// Checks that image and col descriptors agree with the geometry.
inline bool conv2d_shapes_ok(const vnn_tensor_desc& img, const vnn_tensor_desc& col, const Conv2dGeom& g,
                             int64_t* oh, int64_t* ow) {
  if (img.ndim != 4 || col.ndim != 3 || img.dtype != col.dtype) return false;
  *oh = conv2d_out_size(img.sizes[2], g.kernel_h, g.stride_h, g.pad_h, g.dilation_h);
  *ow = conv2d_out_size(img.sizes[3], g.kernel_w, g.stride_w, g.pad_w, g.dilation_w);
  return col.sizes[0] == img.sizes[0] && col.sizes[1] == img.sizes[1] * g.kernel_h * g.kernel_w &&
         col.sizes[2] == *oh * *ow;
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
  const int64_t K = g.kernel_h * g.kernel_w;
  // One work item per column row (n, c, ki, kj), all OH*OW entries: the
  // 64-bit divisions happen once per row, and the valid ow range of the
  // tap (inside the image horizontally) once per row too, so the inner
  // loop is a plain strided copy (a unit-stride one in the common case).
  const int64_t total = in.sizes[0] * C * K;
  Kokkos::parallel_for("vnn::im2col", Range<Exec>(exec, 0, total), KOKKOS_LAMBDA(int64_t i) {
    const int64_t row = i % (C * K), n = i / (C * K);
    const int64_t kj = row % g.kernel_w, ki = (row / g.kernel_w) % g.kernel_h, c = row / K;
    const int64_t shift = kj * g.dilation_w - g.pad_w;  // w = ow * sw + shift
    int64_t lo = ceil_div(-shift, g.stride_w), hi = ceil_div(W - shift, g.stride_w);
    if (lo < 0) lo = 0;
    if (lo > OW) lo = OW;
    if (hi > OW) hi = OW;
    if (hi < lo) hi = lo;
    const bool unit = g.stride_w == 1 && s3 == 1 && o2 == 1;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t h = oh * g.stride_h - g.pad_h + ki * g.dilation_h;
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
        for (int64_t ow = lo; ow < hi; ++ow) dst[ow * o2] = src[(ow * g.stride_w + shift) * s3];
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
    const bool unit = g.stride_w == 1 && o3 == 1 && s2 == 1;
    for (int64_t w = 0; w < W; ++w) dst[w * o3] = T(0);
    for (int64_t ki = 0; ki < g.kernel_h; ++ki) {
      const int64_t hh = h + g.pad_h - ki * g.dilation_h;
      if (hh < 0 || hh % g.stride_h != 0 || hh / g.stride_h >= OH) continue;
      const int64_t oh = hh / g.stride_h;
      for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
        // w = ow * sw + shift must lie in [0, W).
        const int64_t shift = kj * g.dilation_w - g.pad_w;
        int64_t lo = ceil_div(-shift, g.stride_w), hi = ceil_div(W - shift, g.stride_w);
        if (lo < 0) lo = 0;
        if (hi > OW) hi = OW;
        const int64_t row = (c * g.kernel_h + ki) * g.kernel_w + kj;
        const T* src = col + co + n * s0 + row * s1 + oh * OW * s2;
        if (unit) {  // a plain vectorisable add (conv2d's layout, stride 1)
          T* dp = dst + shift;
          for (int64_t ow = lo; ow < hi; ++ow) dp[ow] += src[ow];
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) dst[(ow * g.stride_w + shift) * o3] += src[ow * s2];
        }
      }
    }
  });
}

// col2im == false: IM2COL (in0 image, out col); true: COL2IM.
template <class Exec>
bool im2col(const Exec& exec, const vnn_op& op, bool col2im) {
  Conv2dGeom g;
  int64_t oh = 0, ow = 0;
  if (!decode_conv2d(op, &g) || op.num_inputs < 1 || op.num_outputs < 1) return false;
  const vnn_tensor_desc& out = op.outputs[0];
  const vnn_tensor_desc& in = op.inputs[0];
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
