// REDUCE: out[r] = f(in[r, j] for j over the trailing k dims), one
// work-group per output row (groups loop over rows), each work item walking
// j = lid, lid + WG, ... and the group merging its WG partials by a tree in
// local memory.
//
// Defines: T / DT input storage type and vnn_dtype code, O output storage
// type, FN vnn_reduce_fn code, WG work-group size (a power of two).
//
// Accumulation (as the Kokkos backends): float sums, means and products in
// double where the device has fp64, integers in long; max/min in the input
// type, NaN-propagating; argmax/argmin take the first index of the extreme
// value, a NaN counting as the extreme (the first NaN wins).

#if DT == VNN_FLOAT32 || DT == VNN_FLOAT64
#define IS_FLOAT 1
#endif

#if DT == VNN_FLOAT64
#define CT double
#elif DT == VNN_FLOAT32
#define CT float
#elif DT == VNN_INT64
#define CT long
#else
#define CT int
#endif

#if FN <= VNN_REDUCE_PROD
#ifdef IS_FLOAT
#ifdef HAS_FP64
#define ACC double
#else
#define ACC float
#endif
#else
#define ACC long
#endif
#else
#define ACC CT
#endif

#ifdef IS_FLOAT
#define VNN_ISNAN(v) isnan(v)
#define VNN_LOWEST (-INFINITY)
#define VNN_HIGHEST INFINITY
#elif DT == VNN_INT64
#define VNN_ISNAN(v) 0
#define VNN_LOWEST LONG_MIN
#define VNN_HIGHEST LONG_MAX
#else
#define VNN_ISNAN(v) 0
#define VNN_LOWEST INT_MIN
#define VNN_HIGHEST INT_MAX
#endif

inline long vnn_strided(long i, int nd, long8 sizes, long8 strides) {
  return nd <= 1 ? i * strides.s0 : vnn_dot8(vnn_unravel(i, nd, sizes), strides);
}

#if FN == VNN_REDUCE_SUM || FN == VNN_REDUCE_MEAN
#define INIT ((ACC)0)
#define ADD(a, v) ((a) + (ACC)(v))
#elif FN == VNN_REDUCE_PROD
#define INIT ((ACC)1)
#define ADD(a, v) ((a) * (ACC)(v))
#elif FN == VNN_REDUCE_MAX || FN == VNN_REDUCE_MIN
#if FN == VNN_REDUCE_MAX
#define INIT VNN_LOWEST
#define BEATS(v, a) ((v) > (a))
#else
#define INIT VNN_HIGHEST
#define BEATS(v, a) ((v) < (a))
#endif
inline ACC vnn_extreme(ACC a, ACC v) {
  if (VNN_ISNAN(a)) return a;
  return (VNN_ISNAN(v) || BEATS(v, a)) ? v : a;
}
#define ADD(a, v) vnn_extreme((a), (v))
#elif FN == VNN_REDUCE_ARGMAX || FN == VNN_REDUCE_ARGMIN
#if FN == VNN_REDUCE_ARGMAX
#define BEATS(v, a) ((v) > (a))
#else
#define BEATS(v, a) ((v) < (a))
#endif
// Does (v, i) replace the current best (a, ai)? ai < 0: nothing yet.
inline int vnn_better(CT v, long i, CT a, long ai) {
  if (ai < 0) return i >= 0;
  if (i < 0) return 0;
  int vn = VNN_ISNAN(v), an = VNN_ISNAN(a);
  if (vn || an) return vn && (!an || i < ai);
  if (v == a) return i < ai;
  return BEATS(v, a);
}
#else
#error unknown FN
#endif

__kernel void vnn_reduce(__global O* out, long out_off, __global const T* in, long in_off,
                         long outer, long inner,
                         int lead_ndim, long8 lead_sizes, long8 out_strides, long8 in_lead_strides,
                         int trail_ndim, long8 trail_sizes, long8 trail_strides) {
  const int lid = get_local_id(0);
#if FN == VNN_REDUCE_ARGMAX || FN == VNN_REDUCE_ARGMIN
  __local CT sval[WG];
  __local long sidx[WG];
#else
  __local ACC sacc[WG];
#endif
  for (long r = get_group_id(0); r < outer; r += get_num_groups(0)) {
    const long base = in_off + vnn_strided(r, lead_ndim, lead_sizes, in_lead_strides);
#if FN == VNN_REDUCE_ARGMAX || FN == VNN_REDUCE_ARGMIN
    CT best = 0;
    long bi = -1;
    for (long j = lid; j < inner; j += WG) {
      CT v = (CT)in[base + vnn_strided(j, trail_ndim, trail_sizes, trail_strides)];
      if (vnn_better(v, j, best, bi)) {
        best = v;
        bi = j;
      }
    }
    sval[lid] = best;
    sidx[lid] = bi;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
      if (lid < s && vnn_better(sval[lid + s], sidx[lid + s], sval[lid], sidx[lid])) {
        sval[lid] = sval[lid + s];
        sidx[lid] = sidx[lid + s];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
      long res = sidx[0] < 0 ? 0 : sidx[0];
      out[out_off + vnn_strided(r, lead_ndim, lead_sizes, out_strides)] = (O)res;
    }
#else
    ACC a = INIT;
    for (long j = lid; j < inner; j += WG)
      a = ADD(a, (CT)in[base + vnn_strided(j, trail_ndim, trail_sizes, trail_strides)]);
    sacc[lid] = a;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
      if (lid < s) sacc[lid] = ADD(sacc[lid], sacc[lid + s]);
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
      ACC res = sacc[0];
#if FN == VNN_REDUCE_MEAN
      res = res / (ACC)inner;
#endif
      out[out_off + vnn_strided(r, lead_ndim, lead_sizes, out_strides)] = (O)res;
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);  // the next row reuses the local arrays
  }
}
