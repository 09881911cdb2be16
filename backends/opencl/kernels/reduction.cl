// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// REDUCE: out[r] = f(in[r, j] for j over the trailing k dims). Three
// shapes of work (ops.cpp run_reduce picks one):
// - vnn_reduce: one work-group per output row (groups loop over rows), each
//   work item walking j = lid, lid + WG, ... and the group merging its WG
//   partials by a tree in local memory;
// - vnn_reduce_items: one work item per row, walking it serially (short
//   rows, e.g. a bias gradient's 64 batch rows: a group per row would leave
//   most items idle and pay a barrier per tree level);
// - vnn_reduce_part + vnn_reduce_merge: few long rows, each cut into
//   `parts` chunks of `chunk` elements, one work-group per chunk writing a
//   partial (the accumulator, or for argmax/argmin the winning index) to a
//   scratch buffer, then one item per row merging its partials in chunk
//   order, so the result does not depend on scheduling.
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

#if FN == VNN_REDUCE_ARGMAX || FN == VNN_REDUCE_ARGMIN
#define IS_ARG 1
#define PART long  // a partial: the index of the chunk's winner (-1: none)
#else
#define PART ACC
#endif

#define VNN_AT(j) ((CT)in[base + vnn_strided((j), trail_ndim, trail_sizes, trail_strides)])

// for (j = j0; j < j1; j += step), with o_ the offset of element j of the
// row: over several trail dims the multi-index advances by step's digits
// (common.cl vnn_advance) instead of an unravel, a division per dim, per
// element (a sum over dims 0, 2 of [64, 32, 784], a conv bias gradient,
// took 6 ms on PoCL that way). Past the row's end the digits are not used.
// An empty row (a trail size 0: a sum over the batch of an empty batch)
// unravels nothing: the unravel would divide by that 0 (SIGFPE on PoCL).
#define TRAIL_OFF(j) (trail_ndim <= 1 ? (j) * trail_strides.s0 : vnn_dot8(ix_, trail_strides))
#define TRAIL_LOOP(j0, j1, step)                                                                     \
  const bool flat_ = trail_ndim <= 1 || (j0) >= (j1);                                                \
  const long8 st_ = flat_ ? (long8)(0) : vnn_unravel((step), trail_ndim, trail_sizes);                \
  long8 ix_ = flat_ ? (long8)(0) : vnn_unravel((j0), trail_ndim, trail_sizes);                        \
  for (long j = (j0), o_ = TRAIL_OFF(j0); j < (j1);                                            \
       j += (step), ix_ = vnn_advance(ix_, st_, trail_ndim, trail_sizes), o_ = TRAIL_OFF(j))

#ifdef IS_ARG
// The running winner (best, bi) of elements j0, j0 + step, ... < j1.
#define ROW_SCAN(j0, j1, step)                         \
  TRAIL_LOOP(j0, j1, step) {                           \
    CT v_ = (CT)in[base + o_];                         \
    if (vnn_better(v_, j, best, bi)) {                 \
      best = v_;                                       \
      bi = j;                                          \
    }                                                  \
  }

// Merges the group's (best, bi) in local memory; every item returns the
// group's winning index.
inline long vnn_group_arg(__local CT* sval, __local long* sidx, CT best, long bi, int lid) {
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
  long res = sidx[0];
  barrier(CLK_LOCAL_MEM_FENCE);  // the next row reuses the local arrays
  return res;
}
#define FINAL(a) ((O)((a) < 0 ? 0 : (a)))
#else
#define ROW_SCAN(j0, j1, step) \
  TRAIL_LOOP(j0, j1, step) a = ADD(a, (CT)in[base + o_]);

// Merges the group's partials in local memory; every item returns the total.
inline ACC vnn_group_acc(__local ACC* sacc, ACC a, int lid) {
  sacc[lid] = a;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s > 0; s >>= 1) {
    if (lid < s) sacc[lid] = ADD(sacc[lid], sacc[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  ACC res = sacc[0];
  barrier(CLK_LOCAL_MEM_FENCE);  // the next row reuses the local arrays
  return res;
}
#if FN == VNN_REDUCE_MEAN
#define FINAL(a) ((O)((a) / (ACC)inner))
#else
#define FINAL(a) ((O)(a))
#endif
#endif

#ifdef IS_ARG
#define LOCALS             \
  __local CT sval[WG];     \
  __local long sidx[WG];
#define START \
  CT best = 0; \
  long bi = -1;
#define GROUP_RESULT vnn_group_arg(sval, sidx, best, bi, lid)
#define ITEM_RESULT bi
#else
#define LOCALS __local ACC sacc[WG];
#define START ACC a = INIT;
#define GROUP_RESULT vnn_group_acc(sacc, a, lid)
#define ITEM_RESULT a
#endif

#define REDUCE_ARGS                                                                          \
  __global O *out, long out_off, __global const T *in, long in_off, long outer, long inner,   \
      int lead_ndim, long8 lead_sizes, long8 out_strides, long8 in_lead_strides, int trail_ndim, \
      long8 trail_sizes, long8 trail_strides
#define ROW_BASE(r) (in_off + vnn_strided((r), lead_ndim, lead_sizes, in_lead_strides))
#define OUT_AT(r) out[out_off + vnn_strided((r), lead_ndim, lead_sizes, out_strides)]

__kernel void vnn_reduce(REDUCE_ARGS) {
  const int lid = get_local_id(0);
  LOCALS
  for (long r = get_group_id(0); r < outer; r += get_num_groups(0)) {
    const long base = ROW_BASE(r);
    START
    ROW_SCAN(lid, inner, WG)
    PART res = GROUP_RESULT;
    if (lid == 0) OUT_AT(r) = FINAL(res);
  }
}

__kernel void vnn_reduce_items(REDUCE_ARGS) {
  VNN_ITEMS(r, outer) {
    const long base = ROW_BASE(r);
    START
    ROW_SCAN(0, inner, 1)
    OUT_AT(r) = FINAL(ITEM_RESULT);
  }
}

// Group g reduces chunk g % parts of row g / parts into part[g].
__kernel void vnn_reduce_part(REDUCE_ARGS, long parts, long chunk, __global PART* part) {
  const int lid = get_local_id(0);
  LOCALS
  for (long g = get_group_id(0); g < outer * parts; g += get_num_groups(0)) {
    const long r = g / parts, j0 = (g - r * parts) * chunk;
    const long j1 = min(inner, j0 + chunk);
    const long base = ROW_BASE(r);
    START
    ROW_SCAN(j0 + lid, j1, WG)
    PART res = GROUP_RESULT;
    if (lid == 0) part[g] = res;
  }
}

// Row r's result from part[r * parts + p], p = 0 .. parts - 1, in order.
__kernel void vnn_reduce_merge(REDUCE_ARGS, long parts, long chunk, __global const PART* part) {
  VNN_ITEMS(r, outer) {
    const long base = ROW_BASE(r);
    START
    for (long p = 0; p < parts; ++p) {
#ifdef IS_ARG
      const long j = part[r * parts + p];
      if (j >= 0) {
        CT v = VNN_AT(j);
        if (vnn_better(v, j, best, bi)) {
          best = v;
          bi = j;
        }
      }
#else
      a = ADD(a, part[r * parts + p]);
#endif
    }
    (void)base;
    (void)chunk;
    OUT_AT(r) = FINAL(ITEM_RESULT);
  }
}

#if defined(VW) && (FN == VNN_REDUCE_SUM || FN == VNN_REDUCE_MEAN || FN == VNN_REDUCE_PROD)
// Rows side by side (ops.cpp run_reduce): out[c] = f(in[c + j * ts] for
// j < inner), a bias gradient's column sums. VW adjacent rows per item as
// one vector of accumulators, one vector load per step of j, each row
// still summed in order (the same result as vnn_reduce_items); the last
// item takes the tail. One item per row had walked its row alone at a
// stride, and PoCL kept that scalar: a column sum of [2048, 512] took
// 6.4 ms.
#define VNN_CAT_(a, b) a##b
#define VNN_CAT(a, b) VNN_CAT_(a, b)
#define VACC VNN_CAT(ACC, VW)
#if FN == VNN_REDUCE_PROD
#define VSTEP(a, v) ((a) * VNN_CAT(convert_, VACC)(v))
#else
#define VSTEP(a, v) ((a) + VNN_CAT(convert_, VACC)(v))
#endif
#if FN == VNN_REDUCE_MEAN
#define VFINAL(a) VNN_CAT(convert_, VNN_CAT(O, VW))((a) / (VACC)inner)
#else
#define VFINAL(a) VNN_CAT(convert_, VNN_CAT(O, VW))(a)
#endif

__kernel void vnn_reduce_cols(__global O* out, long out_off, __global const T* in, long in_off, long outer, long inner,
                              long ts) {
  VNN_ITEMS(v, (outer + VW - 1) / VW) {
    const long c = v * VW;
    if (c + VW <= outer) {
      VACC a = (VACC)(INIT);
      for (long j = 0; j < inner; ++j) a = VSTEP(a, VNN_CAT(vload, VW)(0, in + in_off + c + j * ts));
      VNN_CAT(vstore, VW)(VFINAL(a), 0, out + out_off + c);
    } else {
      for (long r = c; r < outer; ++r) {
        ACC a = INIT;
        for (long j = 0; j < inner; ++j) a = ADD(a, (CT)in[in_off + r + j * ts]);
        out[out_off + r] = FINAL(a);
      }
    }
  }
}
#endif
