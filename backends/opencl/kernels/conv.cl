// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// IM2COL / COL2IM for conv2d (docs/ops.md has the contract; the Kokkos
// twin is backends/kokkos/kernels/conv.hpp). IM2COL: one work item per
// output row segment; COL2IM: one per image pixel. Grid-stride. COL2IM gathers per image pixel: no atomics, no races.
//
// Defines: T storage type (float or double).
// g = (kh, kw, sh, sw, ph, pw, dh, dw); dims = (N, C, H, W) of the image.

__kernel void vnn_im2col(__global T* out, long out_off, long4 os, __global const T* in, long in_off, long4 is,
                         long4 dims, long8 g, long OH, long OW) {
  const long C = dims.s1, H = dims.s2, W = dims.s3, K = g.s0 * g.s1;
  // One work item per output row segment (n, row, oh): divisions once per OW elements.
  const long total = dims.s0 * C * K * OH;
  for (long i = get_global_id(0); i < total; i += get_global_size(0)) {
    const long oh = i % OH, row = (i / OH) % (C * K), n = i / (OH * C * K);
    const long kj = row % g.s1, ki = (row / g.s1) % g.s0, c = row / K;
    const long h = oh * g.s2 - g.s4 + ki * g.s6;
    const long dst = out_off + n * os.s0 + row * os.s1 + oh * OW * os.s2;
    const long src = in_off + n * is.s0 + c * is.s1 + h * is.s2;
    const int row_in = h >= 0 && h < H;
    long w = kj * g.s7 - g.s5;
    for (long ow = 0; ow < OW; ++ow, w += g.s3)
      out[dst + ow * os.s2] = (row_in && w >= 0 && w < W) ? in[src + w * is.s3] : (T)0;
  }
}

__kernel void vnn_col2im(__global T* out, long out_off, long4 os, __global const T* col, long col_off, long4 cs,
                         long4 dims, long8 g, long OH, long OW) {
  const long C = dims.s1, H = dims.s2, W = dims.s3;
  const long total = dims.s0 * C * H * W;
  for (long i = get_global_id(0); i < total; i += get_global_size(0)) {
    const long w = i % W, h = (i / W) % H, c = (i / (W * H)) % C, n = i / (W * H * C);
    T sum = (T)0;
    for (long ki = 0; ki < g.s0; ++ki) {
      const long hh = h + g.s4 - ki * g.s6;
      if (hh < 0 || hh % g.s2 != 0 || hh / g.s2 >= OH) continue;
      for (long kj = 0; kj < g.s1; ++kj) {
        const long ww = w + g.s5 - kj * g.s7;
        if (ww < 0 || ww % g.s3 != 0 || ww / g.s3 >= OW) continue;
        const long row = (c * g.s0 + ki) * g.s1 + kj, l = (hh / g.s2) * OW + ww / g.s3;
        sum += col[col_off + n * cs.s0 + row * cs.s1 + l * cs.s2];
      }
    }
    out[out_off + n * os.s0 + c * os.s1 + h * os.s2 + w * os.s3] = sum;
  }
}

#ifdef CONV_DIRECT
// Direct conv2d for the whole-pass kinds (CONV2D, CONV2D_BACKWARD_DATA,
// CONV2D_BACKWARD_WEIGHT; host side in ops_conv_direct.cpp): no column
// buffer, no permuting copy, no separate bias pass. Dense NCHW operands,
// every size but the batch a build option (one program per layer shape,
// cached), so the tap loops have compile-time trip counts and the index
// math divides by constants. Consecutive work items take consecutive
// pixels: their loads are contiguous, which PoCL vectorises across items
// and GPUs coalesce; weights are the same for all items of a group.
//
// Defines (CV_ prefixed): T; C, H, W (input), O, OH, OW (output), KH, KW,
// SH, SW, PH, PW, DH, DW; CG = C/groups, OG = O/groups; BLK the channels
// per work item (output channels forward and for the weight gradient,
// input channels for the data gradient; it divides OG resp. CG); PX the
// pixels per work item (forward, data gradient) or the input channels per
// work item (weight gradient; it divides CG); BIAS.
// The host passes the sizes as CV_C, CV_H, ...; the short names below are
// defined after every other kernel of the program, so they reach only this
// block.
#define C CV_C
#define H CV_H
#define W CV_W
#define O CV_O
#define OH CV_OH
#define OW CV_OW
#define KH CV_KH
#define KW CV_KW
#define SH CV_SH
#define SW CV_SW
#define PH CV_PH
#define PW CV_PW
#define DH CV_DH
#define DW CV_DW
#define CG CV_CG
#define OG CV_OG
#define BLK CV_BLK
#define HAS_BIAS CV_BIAS
#define PX CV_PX
#define KK (KH * KW)
#define HW (H * W)
#define OHW (OH * OW)

#define CV_CAT_(a, b) a##b
#define CV_CAT(a, b) CV_CAT_(a, b)
#if BLK == 1
#define VT T
#define VLOAD(p) (*(p))
#define VSTORE(v, p) (*(p) = (v))
#else
#define VT CV_CAT(T, BLK)
#define VLOAD(p) CV_CAT(vload, BLK)(0, p)
#define VSTORE(v, p) CV_CAT(vstore, BLK)(v, 0, p)
#endif
#define OWB ((OW + PX - 1) / PX)
#define WB ((W + PX - 1) / PX)

// The forward and data-gradient kernels are register-blocked as a GEMM
// micro-kernel: each work item holds PX pixels of one row x BLK channels
// as PX vectors of BLK lanes (explicit vectors: PoCL's vectoriser does not
// reach across the channel loop), one vector weight load and PX scalar
// image loads per tap. The weights come in the layout whose BLK channels
// are contiguous (vnn_conv2d_weight_layout).

// wt = w [O, CG, KK] as [CG, KK, O] (forward) or [O, KK, CG] (data
// gradient, DATA_LAYOUT = 1); grid-stride.
__kernel void vnn_conv2d_weight_layout(__global T* wt, __global const T* w, long w_off, int data_layout) {
  for (int i = get_global_id(0); i < O * CG * KK; i += get_global_size(0)) {
    const int o = i / (CG * KK), cl = (i / KK) % CG, t = i % KK;
    wt[data_layout ? (o * KK + t) * CG + cl : (cl * KK + t) * O + o] = w[w_off + i];
  }
}

// y[n, o0 .. o0+BLK, oh, ow0 .. ow0+PX] = bias + sum over c, ki, kj; dim 0
// over N * OH * ceil(OW / PX) row segments, dim 1 over BLK-channel blocks.
__kernel void vnn_conv2d_direct(__global T* y, long y_off, __global const T* x, long x_off, __global const T* wt,
                                __global const T* b, long b_off, int total) {
  const int i = get_global_id(0);
  if (i >= total) return;  // the grid is rounded up to whole groups
  const int o0 = get_global_id(1) * BLK;
  const int n = i / (OH * OWB), r = i - n * (OH * OWB), oh = r / OWB, ow0 = (r - oh * OWB) * PX;
  const int h0 = oh * SH - PH;
  const __global T* xs = x + x_off + (n * C + (o0 / OG) * CG) * HW;
  const __global T* ws = wt + o0;
  VT acc[PX];
  const VT init = HAS_BIAS ? VLOAD(b + b_off + o0) : (VT)0;
#pragma unroll
  for (int q = 0; q < PX; ++q) acc[q] = init;
  for (int c = 0; c < CG; ++c, xs += HW, ws += KK * O) {
#pragma unroll
    for (int ki = 0; ki < KH; ++ki) {
      const int h = h0 + ki * DH;
      const int hin = h >= 0 && h < H;
#pragma unroll
      for (int kj = 0; kj < KW; ++kj) {
        const VT wv = VLOAD(ws + (ki * KW + kj) * O);
#pragma unroll
        for (int q = 0; q < PX; ++q) {
          const int v = (ow0 + q) * SW - PW + kj * DW;
          const T xv = (hin && v >= 0 && v < W) ? xs[h * W + v] : (T)0;
          acc[q] += xv * wv;
        }
      }
    }
  }
  __global T* ys = y + y_off + (n * O + o0) * OHW + oh * OW + ow0;
#pragma unroll
  for (int q = 0; q < PX; ++q) {
    if (ow0 + q < OW) {  // not a break: LLVM cannot fully unroll a loop with one
      T lanes[BLK];
      VSTORE(acc[q], lanes);
#pragma unroll
      for (int j = 0; j < BLK; ++j) ys[j * OHW + q] = lanes[j];
    }
  }
}

// dx[n, c0 .. c0+BLK, h, v0 .. v0+PX] gathered from the outputs whose
// window holds each pixel (no col2im, no atomics); dim 0 over N * H *
// ceil(W / PX) row segments, dim 1 over BLK-channel blocks (within a group).
__kernel void vnn_conv2d_direct_data(__global T* dx, long dx_off, __global const T* dy, long dy_off,
                                     __global const T* wt, int total) {
  const int i = get_global_id(0);
  if (i >= total) return;
  const int c0 = get_global_id(1) * BLK, grp = c0 / CG;
  const int n = i / (H * WB), r = i - n * (H * WB), h = r / WB, v0 = (r - h * WB) * PX;
  const __global T* ys = dy + dy_off + (n * O + grp * OG) * OHW;
  const __global T* ws = wt + grp * OG * KK * CG + (c0 - grp * CG);
  VT acc[PX];
#pragma unroll
  for (int q = 0; q < PX; ++q) acc[q] = (VT)0;
  for (int o = 0; o < OG; ++o, ys += OHW, ws += KK * CG) {
#pragma unroll
    for (int ki = 0; ki < KH; ++ki) {
      const int th = h + PH - ki * DH, oh = th / SH;
      const int hin = th >= 0 && th % SH == 0 && oh < OH;
#pragma unroll
      for (int kj = 0; kj < KW; ++kj) {
        const VT wv = VLOAD(ws + (ki * KW + kj) * CG);
#pragma unroll
        for (int q = 0; q < PX; ++q) {
          const int tv = v0 + q + PW - kj * DW, ow = tv / SW;
          const T g = (hin && tv >= 0 && tv % SW == 0 && ow < OW) ? ys[oh * OW + ow] : (T)0;
          acc[q] += g * wv;
        }
      }
    }
  }
  __global T* xs = dx + dx_off + (n * C + c0) * HW + h * W + v0;
#pragma unroll
  for (int q = 0; q < PX; ++q) {
    if (v0 + q < W) {
      T lanes[BLK];
      VSTORE(acc[q], lanes);
#pragma unroll
      for (int j = 0; j < BLK; ++j) xs[j * HW + q] = lanes[j];
    }
  }
}

// dyt = dy [N, O, OH*OW] as [N, OH*OW, O] (the weight gradient's vector
// loads take BLK consecutive output channels of one pixel), in tiles of
// 16 pixels x 16 channels: item (pixel tile, channel tile, image) reads
// its tile along dy's rows and writes it along dyt's, so both sides stay
// within 16 cache lines; one element per item with the loads 784 floats
// apart took 3.6 ms for conv1's 1.6 M elements on PoCL. A whole tile goes
// as 16 vector loads and 16 vector stores through private memory (element
// by element, PoCL made gathers of them across items: 1.26 -> 0.44 ms for
// conv1, 0.55 -> 0.22 for conv2).
#define GT 16
__kernel void vnn_conv2d_grad_layout(__global T* dyt, __global const T* dy, long dy_off) {
  const int p0 = get_global_id(0) * GT, o0 = get_global_id(1) * GT;
  const long n = get_global_id(2);
  if (p0 >= OHW || o0 >= O) return;
  const int np = min(GT, OHW - p0), no = min(GT, O - o0);
  T tile[GT][GT];
  const __global T* src = dy + dy_off + (n * O + o0) * OHW + p0;
  __global T* dst = dyt + (n * OHW + p0) * O + o0;
  if (np == GT && no == GT) {
#pragma unroll
    for (int oo = 0; oo < GT; ++oo) vstore16(vload16(0, src + oo * OHW), 0, &tile[oo][0]);  // [o][p]
#pragma unroll
    for (int pp = 0; pp < GT; ++pp) {
      T row[GT];
#pragma unroll
      for (int oo = 0; oo < GT; ++oo) row[oo] = tile[oo][pp];
      vstore16(vload16(0, row), 0, dst + pp * O);
    }
    return;
  }
  for (int oo = 0; oo < no; ++oo)
    for (int pp = 0; pp < np; ++pp) tile[pp][oo] = src[oo * OHW + pp];
  for (int pp = 0; pp < np; ++pp)
    for (int oo = 0; oo < no; ++oo) dst[pp * O + oo] = tile[pp][oo];
}

// Partial weight (and bias) gradients of one chunk of images: each work
// item holds RO x BLK output channels (RO vectors of BLK lanes) x PX input
// channels x KK taps and walks every pixel of the chunk's images: per pixel
// RO vector loads of dyt and PX x KK scalar image loads, from x padded into
// planes of XPS elements, XHP x XWP (conv_plane.cl vnn_conv2d_pad): no
// bounds checks, every tap a plain load. Item i = (chunk q, channel block,
// output block), output blocks fastest. Chunk q writes
// part[q * (O * CG * KK + O) + ...]: dw at (o * CG + cl) * KK + t, dbias
// (from the items of the first channel block) at O * CG * KK + o.
#define RO CV_RO
#define XWP (W + 2 * PW)
#define XHP (H + 2 * PH)
#define XPS CV_XPS
// Output and channel blocks of the weight gradient, at least 1: the program
// of a shape this kernel does not take (CG < PX) compiles without a
// division by zero.
#define WOB (O / (BLK * RO) > 0 ? O / (BLK * RO) : 1)
#define WCB (CG / PX > 0 ? CG / PX : 1)
__kernel void vnn_conv2d_direct_weight(__global T* part, __global const T* dyt, __global const T* xp, int nb,
                                       int chunk_images, int total) {
  const int i = get_global_id(0);
  if (i >= total) return;
  const int ob = i % WOB, cb = (i / WOB) % WCB, q = i / (WOB * WCB);
  const int o0 = ob * BLK * RO, cl0 = cb * PX, grp = o0 / OG;
  VT acc[RO][PX][KK];
  VT accb[RO];
#pragma unroll
  for (int r = 0; r < RO; ++r) {
    accb[r] = (VT)0;
#pragma unroll
    for (int c = 0; c < PX; ++c)
#pragma unroll
      for (int t = 0; t < KK; ++t) acc[r][c][t] = (VT)0;
  }
  const int n1 = min(nb, (q + 1) * chunk_images);
  for (int n = q * chunk_images; n < n1; ++n) {
    const __global T* xs = xp + ((long)n * C + grp * CG + cl0) * XPS;
    const __global T* ys = dyt + (long)n * OHW * O + o0;
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow, ys += O) {
        VT g[RO];
#pragma unroll
        for (int r = 0; r < RO; ++r) {
          g[r] = VLOAD(ys + r * BLK);
          accb[r] += g[r];
        }
        const __global T* xw = xs + oh * SH * XWP + ow * SW;
#pragma unroll
        for (int ki = 0; ki < KH; ++ki)
#pragma unroll
          for (int kj = 0; kj < KW; ++kj)
#pragma unroll
            for (int c = 0; c < PX; ++c) {
              const T xv = xw[c * XPS + ki * DH * XWP + kj * DW];
#pragma unroll
              for (int r = 0; r < RO; ++r) acc[r][c][ki * KW + kj] += xv * g[r];
            }
      }
  }
  __global T* dst = part + (long)q * (O * CG * KK + O);
  T lanes[BLK];
#pragma unroll
  for (int r = 0; r < RO; ++r) {
    const int ob0 = o0 + r * BLK;
#pragma unroll
    for (int c = 0; c < PX; ++c)
#pragma unroll
      for (int t = 0; t < KK; ++t) {
        VSTORE(acc[r][c][t], lanes);
#pragma unroll
        for (int j = 0; j < BLK; ++j) dst[((ob0 + j) * CG + cl0 + c) * KK + t] = lanes[j];
      }
    if (cb == 0) {
      VSTORE(accb[r], lanes);
#pragma unroll
      for (int j = 0; j < BLK; ++j) dst[O * CG * KK + ob0 + j] = lanes[j];
    }
  }
}

// dw (and dbias) = the sum of the chunks' partial gradients (grid-stride).
__kernel void vnn_conv2d_direct_weight_sum(__global T* dw, long dw_off, __global T* db, long db_off, int has_db,
                                           __global const T* part, int chunks) {
  const int total = O * CG * KK + O;
  for (int i = get_global_id(0); i < total; i += get_global_size(0)) {
    T s = (T)0;
    for (int q = 0; q < chunks; ++q) s += part[(long)q * total + i];
    if (i < O * CG * KK) dw[dw_off + i] = s;
    else if (has_db) db[db_off + i - O * CG * KK] = s;
  }
}
#endif  // CONV_DIRECT
