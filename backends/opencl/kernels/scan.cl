// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SCAN: out[r, j] = in[r, 0] (+) ... (+) in[r, j] along the last dim (see
// backend_abi.h vnn_scan_fn); MAX / MIN also write idx[r, j], the int64
// index of the running extreme. ops_scan.cpp picks the shape of work:
// - vnn_scan_rows: one work item per row, scanning it serially (short rows,
//   or rows enough to fill a CPU device);
// - vnn_scan_chunk_totals, vnn_scan_carries, vnn_scan_chunks (CPU
//   devices): rows cut into chunks, one work item per chunk: each chunk's
//   total, then each row's totals scanned into carries, then each chunk
//   scanned serially from its carry;
// - vnn_scan_totals, vnn_scan_carries, vnn_scan_blocks (GPUs): rows cut into
//   blocks of WG * PER elements, one work-group per block: each block's
//   total (a tree in local memory), then each row's totals scanned into the
//   carry into each block, then each block scanned from its carry. Inside a
//   block every item scans its PER elements serially and the group scans
//   the WG item totals with the work-efficient up-sweep / down-sweep
//   (Blelloch) in local memory. The block scan reads the input again instead
//   of patching a first result, so float32 sums keep their float64 carry.
//
// Defines: TI / DTI input storage type and vnn_dtype, TO / DT output storage
// type and vnn_dtype, FN the vnn_scan_fn, WG the work-group size (a power
// of two), PER the elements per item.

#if DT == VNN_FLOAT32 || DT == VNN_FLOAT64
#define IS_FLOAT 1
#endif
#if FN == VNN_SCAN_MAX || FN == VNN_SCAN_MIN
#define INDEXED 1
#endif

// The compute type: float32 sums, products and logsumexps in double where
// the device has it (as the Kokkos backends), otherwise the output type.
#if DT == VNN_FLOAT32 && !defined(INDEXED) && defined(HAS_FP64)
#define CT double
#elif DT == VNN_FLOAT32
#define CT float
#elif DT == VNN_FLOAT64
#define CT double
#elif DT == VNN_INT64
#define CT long
#define UT ulong
#else
#define CT int
#define UT uint
#endif

#ifdef IS_FLOAT
#define VNN_ISNAN(v) isnan(v)
#else
#define VNN_ISNAN(v) 0
#endif

#if DTI == VNN_BOOL
#define LOAD(v) ((CT)((v) != 0))
#else
#define LOAD(v) ((CT)(v))
#endif

// The running value and, for MAX / MIN, where it was found. A struct tag
// of its own per function: one program holds every function's copy of this
// file (ops_scan.cpp scan_siblings), and CT differs between them.
#define VNN_SCAN_CAT2(a, b) a##b
#define VNN_SCAN_CAT(a, b) VNN_SCAN_CAT2(a, b)
#define State struct VNN_SCAN_CAT(vnn_scan_state_, FN)
State {
  CT v;
  long i;
};

#if FN == VNN_SCAN_SUM
#define IDENTITY ((CT)0)
#ifdef IS_FLOAT
#define COMBINE_V(a, b) ((a) + (b))
#else  // integers wrap, as PyTorch's (on the unsigned type: no overflow)
#define COMBINE_V(a, b) ((CT)((UT)(a) + (UT)(b)))
#endif
#elif FN == VNN_SCAN_PROD
#define IDENTITY ((CT)1)
#ifdef IS_FLOAT
#define COMBINE_V(a, b) ((a) * (b))
#else
#define COMBINE_V(a, b) ((CT)((UT)(a) * (UT)(b)))
#endif
#elif FN == VNN_SCAN_LOGSUMEXP
#define IDENTITY ((CT)(-INFINITY))
// log(exp(a) + exp(b)) without overflow; NaN propagates, -inf is the identity.
inline CT vnn_log_add_exp(CT a, CT b) {
  if (isnan(a) || isnan(b)) return a + b;
  CT hi = a > b ? a : b, lo = a > b ? b : a;
  if (lo == (CT)(-INFINITY) || hi == (CT)INFINITY) return hi;
  return hi + log1p(exp(lo - hi));
}
#define COMBINE_V(a, b) vnn_log_add_exp((a), (b))
#elif FN == VNN_SCAN_MAX
#ifdef IS_FLOAT
#define IDENTITY ((CT)(-INFINITY))
#elif DT == VNN_INT64
#define IDENTITY LONG_MIN
#else
#define IDENTITY INT_MIN
#endif
#define TAKES(b, a) ((b) >= (a))
#elif FN == VNN_SCAN_MIN
#ifdef IS_FLOAT
#define IDENTITY ((CT)INFINITY)
#elif DT == VNN_INT64
#define IDENTITY LONG_MAX
#else
#define IDENTITY INT_MAX
#endif
#define TAKES(b, a) ((b) <= (a))
#else
#error unknown FN
#endif

// a (+) b, a covering the earlier elements. MAX / MIN follow PyTorch: a NaN
// always takes over (the latest NaN's index wins), nothing takes over from
// a NaN, equal values move the index on.
inline State vnn_combine(State a, State b) {
#ifdef INDEXED
  return (VNN_ISNAN(b.v) || (!VNN_ISNAN(a.v) && TAKES(b.v, a.v))) ? b : a;
#else
  a.v = COMBINE_V(a.v, b.v);
  return a;
#endif
}

inline State vnn_identity(void) {
  State s;
  s.v = IDENTITY;
  s.i = -1;
  return s;
}

inline State vnn_element(__global const TI* in, long x0, long xs, long j) {
  State s;
  s.v = LOAD(in[x0 + j * xs]);
  s.i = j;
  return s;
}

// The combination of elements [b, e) of a row starting at x0. A float sum
// only seeds carries: four running sums break its chain of dependent adds.
inline State vnn_range_total(__global const TI* in, long x0, long xs, long b, long e) {
  State acc = vnn_identity();
#if FN == VNN_SCAN_SUM && defined(IS_FLOAT)
  CT s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  long j = b;
  for (; j + 4 <= e; j += 4) {
    s0 += LOAD(in[x0 + j * xs]);
    s1 += LOAD(in[x0 + (j + 1) * xs]);
    s2 += LOAD(in[x0 + (j + 2) * xs]);
    s3 += LOAD(in[x0 + (j + 3) * xs]);
  }
  for (; j < e; ++j) s0 += LOAD(in[x0 + j * xs]);
  acc.v = (s0 + s1) + (s2 + s3);
#else
  for (long j = b; j < e; ++j) acc = vnn_combine(acc, vnn_element(in, x0, xs, j));
#endif
  return acc;
}

// Row r's first element in a tensor whose leading dims have these strides.
inline long vnn_row_offset(long r, int lnd, long8 sizes, long8 strides) {
  return lnd <= 1 ? r * strides.s0 : vnn_dot8(vnn_unravel(r, lnd, sizes), strides);
}

#define SCAN_ARGS                                                                                      \
  __global TO *out, long oo, __global long *idx, long io, __global const TI *in, long xo, long rows, long n, \
      long os, long is, long xs, int lnd, long8 lsizes, long8 l_os, long8 l_is, long8 l_xs

// Scans [b, e) of one row from acc, writing every running value.
#ifdef INDEXED
#define WRITE(j, s)                   \
  out[o0 + (j) * os] = (TO)(s).v;     \
  idx[i0 + (j) * is] = (s).i;
#else
#define WRITE(j, s) out[o0 + (j) * os] = (TO)(s).v;
#endif

#define ROW_BASES(r)                                         \
  const long x0 = xo + vnn_row_offset((r), lnd, lsizes, l_xs); \
  const long o0 = oo + vnn_row_offset((r), lnd, lsizes, l_os); \
  const long i0 = io + vnn_row_offset((r), lnd, lsizes, l_is);

__kernel void vnn_scan_rows(SCAN_ARGS) {
  VNN_ITEMS(r, rows) {
    ROW_BASES(r)
    (void)i0;
    State acc = vnn_identity();
    for (long j = 0; j < n; ++j) {
      acc = vnn_combine(acc, vnn_element(in, x0, xs, j));
      WRITE(j, acc)
    }
  }
}

// Rows cut into `nchunks` chunks of `chunk` elements, one work item per
// chunk scanning it serially (CPU devices, whose work items run as loops
// on a core: a group's barriers and strided items cost more there than a
// second read of the row).
#define CHUNK_PLACE                                              \
  const long r = g / nchunks, c0 = (g - r * nchunks) * chunk;    \
  const long c1 = c0 + chunk < n ? c0 + chunk : n;

__kernel void vnn_scan_chunk_totals(SCAN_ARGS, long nchunks, long chunk, __global CT* tv, __global long* ti) {
  VNN_ITEMS(g, rows * nchunks) {
    CHUNK_PLACE
    const State acc = vnn_range_total(in, xo + vnn_row_offset(r, lnd, lsizes, l_xs), xs, c0, c1);
    tv[g] = acc.v;
    ti[g] = acc.i;
  }
}

__kernel void vnn_scan_chunks(SCAN_ARGS, long nchunks, long chunk, __global CT* tv, __global long* ti) {
  VNN_ITEMS(g, rows * nchunks) {
    CHUNK_PLACE
    ROW_BASES(r)
    (void)i0;
    State acc = {tv[g], ti[g]};
    for (long j = c0; j < c1; ++j) {
      acc = vnn_combine(acc, vnn_element(in, x0, xs, j));
      WRITE(j, acc)
    }
  }
}

#define BLOCK (WG * PER)

// Block `g` of the grid: its row, its first element and the item's part.
#define BLOCK_PLACE                                   \
  const long g = get_group_id(0);                     \
  const long r = g / nblocks, blk = g - r * nblocks;  \
  const int lid = get_local_id(0);                    \
  const long b0 = blk * BLOCK + (long)lid * PER;      \
  const long b1 = b0 + PER < n ? b0 + PER : n;

__kernel void vnn_scan_totals(SCAN_ARGS, long nblocks, __global CT* tv, __global long* ti) {
  __local CT lv[WG];
  __local long li[WG];
  BLOCK_PLACE
  const State acc = vnn_range_total(in, xo + vnn_row_offset(r, lnd, lsizes, l_xs), xs, b0, b1);
  lv[lid] = acc.v;
  li[lid] = acc.i;
  barrier(CLK_LOCAL_MEM_FENCE);
  // A tree whose pairs keep their order (the left half is earlier).
  for (int s = 1; s < WG; s <<= 1) {
    if ((lid & (2 * s - 1)) == 0) {
      State a = {lv[lid], li[lid]}, b = {lv[lid + s], li[lid + s]};
      State c = vnn_combine(a, b);
      lv[lid] = c.v;
      li[lid] = c.i;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    tv[g] = lv[0];
    ti[g] = li[0];
  }
}

// Each row's block totals become the carries into its blocks (exclusive).
__kernel void vnn_scan_carries(long rows, long nblocks, __global CT* tv, __global long* ti) {
  VNN_ITEMS(r, rows) {
    State acc = vnn_identity();
    for (long c = r * nblocks; c < (r + 1) * nblocks; ++c) {
      State total = {tv[c], ti[c]};
      tv[c] = acc.v;
      ti[c] = acc.i;
      acc = vnn_combine(acc, total);
    }
  }
}

// has_carry 0: a single block per row, no totals pass before it.
__kernel void vnn_scan_blocks(SCAN_ARGS, long nblocks, __global CT* tv, __global long* ti, int has_carry) {
  __local CT lv[WG];
  __local long li[WG];
  BLOCK_PLACE
  ROW_BASES(r)
  (void)i0;
  const State acc = vnn_range_total(in, x0, xs, b0, b1);
  lv[lid] = acc.v;
  li[lid] = acc.i;
  barrier(CLK_LOCAL_MEM_FENCE);
  // Up-sweep: each node holds the combination of its subtree, left first.
  for (int s = 1; s < WG; s <<= 1) {
    const int right = (lid + 1) * 2 * s - 1;
    if (right < WG) {
      State a = {lv[right - s], li[right - s]}, b = {lv[right], li[right]};
      State c = vnn_combine(a, b);
      lv[right] = c.v;
      li[right] = c.i;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  // Down-sweep from the identity at the root: each node's exclusive prefix.
  if (lid == 0) {
    lv[WG - 1] = IDENTITY;
    li[WG - 1] = -1;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s >= 1; s >>= 1) {
    const int right = (lid + 1) * 2 * s - 1;
    if (right < WG) {
      State left = {lv[right - s], li[right - s]}, prefix = {lv[right], li[right]};
      lv[right - s] = prefix.v;
      li[right - s] = prefix.i;
      State c = vnn_combine(prefix, left);
      lv[right] = c.v;
      li[right] = c.i;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  State run = vnn_identity();
  if (has_carry) {
    run.v = tv[g];
    run.i = ti[g];
  }
  State before = {lv[lid], li[lid]};
  run = vnn_combine(run, before);
  for (long j = b0; j < b1; ++j) {
    run = vnn_combine(run, vnn_element(in, x0, xs, j));
    WRITE(j, run)
  }
}
