// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SOFTMAX over the last dim (LOG_OUT=1: log_softmax), numerically stable:
// each row subtracts its max before exp. vnn_softmax: one work-group per row
// (groups loop over rows); max and the sum of exponentials are merged by
// trees in local memory. vnn_softmax_items: one work item per row, for
// short rows (a classifier's 10 logits) where a group per row would idle
// most of its items and pay a barrier per tree level. The sum accumulates
// in double where the device has fp64.
//
// Defines: T storage type, DT its dtype code (float32, float64, or 16-bit
// storage computed in float32 through common.cl's VNN_LD / VNN_ST), WG
// work-group size (a power of two), LOG_OUT 0 or 1.

#define CT VNN_CT
#ifdef HAS_FP64
#define ST double
#else
#define ST float
#endif

inline long vnn_strided(long i, int nd, long8 sizes, long8 strides) {
  return nd <= 1 ? i * strides.s0 : vnn_dot8(vnn_unravel(i, nd, sizes), strides);
}

// NaN-propagating max.
inline CT vnn_max_nan(CT a, CT v) { return (isnan(a) || !(isnan(v) || v > a)) ? a : v; }

// Writes elements j0, j0 + step, ... < n of one row from its max and sum.
inline void vnn_softmax_write(__global T* out, long ob, long out_s, __global const T* in, long ib, long in_s,
                              long j0, long n, long step, CT mx, ST sum) {
#if LOG_OUT
  CT lse = (CT)log(sum);
  for (long j = j0; j < n; j += step) VNN_ST(out, ob + j * out_s, VNN_LD(in, ib + j * in_s) - mx - lse);
#else
  CT inv = (CT)((ST)1 / sum);
  for (long j = j0; j < n; j += step) VNN_ST(out, ob + j * out_s, exp(VNN_LD(in, ib + j * in_s) - mx) * inv);
#endif
}

__kernel void vnn_softmax(__global T* out, long out_off, __global const T* in, long in_off,
                          long rows, long n, long out_s, long in_s,
                          int lead_ndim, long8 lead_sizes, long8 out_strides, long8 in_strides) {
  const int lid = get_local_id(0);
  __local CT smax[WG];
  __local ST ssum[WG];
  for (long r = get_group_id(0); r < rows; r += get_num_groups(0)) {
    const long ib = in_off + vnn_strided(r, lead_ndim, lead_sizes, in_strides);
    const long ob = out_off + vnn_strided(r, lead_ndim, lead_sizes, out_strides);
    CT mx = -INFINITY;
    for (long j = lid; j < n; j += WG) mx = vnn_max_nan(mx, VNN_LD(in, ib + j * in_s));
    smax[lid] = mx;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
      if (lid < s) smax[lid] = vnn_max_nan(smax[lid], smax[lid + s]);
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    mx = smax[0];
    ST sum = 0;
    for (long j = lid; j < n; j += WG) sum += (ST)exp(VNN_LD(in, ib + j * in_s) - mx);
    ssum[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
      if (lid < s) ssum[lid] += ssum[lid + s];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    sum = ssum[0];
    // Every item has read the row before any writes it (out may alias in).
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    vnn_softmax_write(out, ob, out_s, in, ib, in_s, lid, n, WG, mx, sum);
    barrier(CLK_LOCAL_MEM_FENCE);  // the next row reuses the local arrays
  }
}

__kernel void vnn_softmax_items(__global T* out, long out_off, __global const T* in, long in_off,
                                long rows, long n, long out_s, long in_s,
                                int lead_ndim, long8 lead_sizes, long8 out_strides, long8 in_strides) {
  VNN_ITEMS(r, rows) {
    const long ib = in_off + vnn_strided(r, lead_ndim, lead_sizes, in_strides);
    const long ob = out_off + vnn_strided(r, lead_ndim, lead_sizes, out_strides);
    CT mx = -INFINITY;
    for (long j = 0; j < n; ++j) mx = vnn_max_nan(mx, VNN_LD(in, ib + j * in_s));
    ST sum = 0;
    for (long j = 0; j < n; ++j) sum += (ST)exp(VNN_LD(in, ib + j * in_s) - mx);
    vnn_softmax_write(out, ob, out_s, in, ib, in_s, 0, n, 1, mx, sum);
  }
}
