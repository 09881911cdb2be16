// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// conv2d over zero-padded planes (host side: ops_conv_direct.cpp run_plane):
// stride 1, dilation 1, one group. The input is first copied into planes
// with the padding written as zeros (vnn_conv2d_pad), so that output pixel
// p = oh * PWP + ow of the padded-width plane reads tap (ki, kj) at
// p + ki * PWP + kj: for a run of consecutive p those are consecutive
// addresses, one vector load, and the convolution becomes the wide-n GEMM
// micro-kernel (kernels/gemm.cl vnn_gemm_widen) with the column matrix
// never written: per tap RNV vector loads of the plane, RM scalar weights
// broadcast, RM x RNV vector multiply-adds. The PWP - POW columns past a
// row's end are computed and dropped (12% for 14-wide rows).
//
// The data gradient is the same kernel on dy padded by (KH - 1 - PH,
// KW - 1 - PW), with the weights flipped and their channel axes swapped
// (vnn_conv2d_plane_weights, flip = 1). No division in the
// inner loops, no bounds checks: the plane stride PS leaves zeros past each
// plane's last row for the reads of the last, partial pixel block.

// dst[plane][r][c] = src[plane][r - pt][c - pl] inside the source, else 0,
// for rows r < php of width pwp, then zeros up to the plane stride ps.
// Item (padded row r, plane); row php stands for the plane's zero tail.
__kernel void vnn_conv2d_pad(__global T* dst, __global const T* src, long src_off, int sh, int sw, int pt, int pl,
                             int php, int pwp, int ps) {
  const int r = get_global_id(0);
  const long plane = get_global_id(1);
  if (r > php) return;
  __global T* d = dst + plane * ps;
  if (r == php) {
    for (int c = php * pwp; c < ps; ++c) d[c] = (T)0;
    return;
  }
  d += r * pwp;
  const int h = r - pt;
  if (h < 0 || h >= sh) {
    for (int c = 0; c < pwp; ++c) d[c] = (T)0;
    return;
  }
  const __global T* s = src + src_off + plane * sh * sw + h * sw;
  for (int c = 0; c < pl; ++c) d[c] = (T)0;
  for (int c = 0; c < sw; ++c) d[pl + c] = s[c];
  for (int c = pl + sw; c < pwp; ++c) d[c] = (T)0;
}

#ifdef PLANE
// Defines: T; PC input channels, PO output channels, KH, KW; PHP x PWP
// padded input planes of stride PS; POH x POW output; RM output channels
// and RNV vectors of VW pixels per work item (RM divides PO); LX x LY
// items per group; BIAS.
#define PKK (KH * KW)
#define PCAT_(a, b) a##b
#define PCAT(a, b) PCAT_(a, b)
#if VW == 1
#define PV T
#define PLOAD(p) (*(p))
#define PSTORE(v, p) (*(p) = (v))
#else
#define PV PCAT(T, VW)
#define PLOAD(p) PCAT(vload, VW)(0, p)
#define PSTORE(v, p) PCAT(vstore, VW)(v, 0, p)
#endif

// wt [PC, KK, PO] from the conv2d weight w [O, C, KK] (forward: O = PO,
// C = PC) or, with flip, from w read as [PC, PO, KK] with the taps
// reversed (the data gradient: O = PC, C = PO); grid-stride.
__kernel void vnn_conv2d_plane_weights(__global T* wt, __global const T* w, long w_off, int flip) {
  const int inner = flip ? PO : PC;  // w's second axis
  for (int i = get_global_id(0); i < PO * PC * PKK; i += get_global_size(0)) {
    const int a = i / (inner * PKK), b = (i / PKK) % inner, t = i % PKK;
    if (flip) wt[(a * PKK + PKK - 1 - t) * PO + b] = w[w_off + i];
    else wt[(b * PKK + t) * PO + a] = w[w_off + i];
  }
}

// y[n, o0 .. o0+RM, pixels p0 .. p0+RNV*VW of the padded-width plane];
// dim 0 over pixel blocks, dim 1 over channel blocks, dim 2 over images.
// wt is [PC, KK, PO]: the RM weights of a tap are adjacent.
__kernel __attribute__((reqd_work_group_size(LX, LY, 1)))
void vnn_conv2d_plane(__global T* y, long y_off, __global const T* xp, __global const T* wt, __global const T* b,
                      long b_off) {
  const int p0 = get_global_id(0) * (RNV * VW), o0 = get_global_id(1) * RM;
  const long n = get_global_id(2);
  if (p0 >= POH * PWP || o0 >= PO) return;  // the grid is rounded up to whole groups
  const __global T* xs = xp + n * PC * PS + p0;
  const __global T* ws = wt + o0;
  PV acc[RM][RNV];
#pragma unroll
  for (int i = 0; i < RM; ++i)
#pragma unroll
    for (int j = 0; j < RNV; ++j) acc[i][j] = (PV)0;
  for (int c = 0; c < PC; ++c, xs += PS, ws += PKK * PO) {
#pragma unroll
    for (int ki = 0; ki < KH; ++ki)
#pragma unroll
      for (int kj = 0; kj < KW; ++kj) {
        PV bv[RNV];
#pragma unroll
        for (int j = 0; j < RNV; ++j) bv[j] = PLOAD(xs + ki * PWP + kj + j * VW);
#pragma unroll
        for (int i = 0; i < RM; ++i) {
          const T av = ws[(ki * KW + kj) * PO + i];
#pragma unroll
          for (int j = 0; j < RNV; ++j) acc[i][j] += av * bv[j];
        }
      }
  }
#pragma unroll
  for (int i = 0; i < RM; ++i) {
    const T bias = BIAS ? b[b_off + o0 + i] : (T)0;
    __global T* ys = y + y_off + (n * PO + o0 + i) * (POH * POW);
#pragma unroll
    for (int j = 0; j < RNV; ++j) {
      T lanes[VW];
      PSTORE(acc[i][j], lanes);
#pragma unroll
      for (int l = 0; l < VW; ++l) {
        const int p = p0 + j * VW + l, oh = p / PWP, ow = p - oh * PWP;
        if (oh < POH && ow < POW) ys[oh * POW + ow] = lanes[l] + bias;
      }
    }
  }
}
#endif  // PLANE
