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
