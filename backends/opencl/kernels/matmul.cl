// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MATMUL: out[b] = alpha * a[b] @ b[b] + beta * out[b] for every batch
// index b, any strides (stride-0 batch dims broadcast). Tiled: a work-group
// of TS x TS items computes a TS x TS tile of out, staging TS x TS tiles of
// a and b through local memory. Dim 0 runs along N, dim 1 along M, dim 2
// over the batch. Accumulates in the element type (float32 in float32, like
// BLAS); with beta == 0 out is not read (NaN there does not leak).
//
// Defines: T storage type (float, double, int, long), TS tile size.

__kernel void vnn_matmul(__global T* out, long out_off, __global const T* a, long a_off,
                         __global const T* b, long b_off, T alpha, T beta, int use_beta,
                         long m, long n, long k,
                         long a_rs, long a_cs, long b_rs, long b_cs, long o_rs, long o_cs,
                         int batch_ndim, long8 batch_sizes, long8 a_bs, long8 b_bs, long8 o_bs) {
  __local T ta[TS][TS];
  __local T tb[TS][TS + 1];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const long col = get_group_id(0) * TS + tx;
  const long row = get_group_id(1) * TS + ty;
  const long bi = get_global_id(2);
  const long ab = a_off + vnn_strided_offset(bi, batch_ndim, batch_sizes, a_bs);
  const long bb = b_off + vnn_strided_offset(bi, batch_ndim, batch_sizes, b_bs);
  const long ob = out_off + vnn_strided_offset(bi, batch_ndim, batch_sizes, o_bs);
  T acc = 0;
  for (long p0 = 0; p0 < k; p0 += TS) {
    // ta[ty][tx] = a[row, p0 + tx]; tb[ty][tx] = b[p0 + ty, col]
    long pa = p0 + tx, pb = p0 + ty;
    ta[ty][tx] = (row < m && pa < k) ? a[ab + row * a_rs + pa * a_cs] : (T)0;
    tb[ty][tx] = (pb < k && col < n) ? b[bb + pb * b_rs + col * b_cs] : (T)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int q = 0; q < TS; ++q) acc += ta[ty][q] * tb[q][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < m && col < n) {
    long o = ob + row * o_rs + col * o_cs;
    T v = alpha * acc;
    if (use_beta) v += beta * out[o];
    out[o] = v;
  }
}
