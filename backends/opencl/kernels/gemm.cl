// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn's own GEMM (MATMUL where CLBlast is absent or a poor fit):
// out[b] = alpha * a[b] @ b[b] + beta * out[b], any strides, stride-0 batch
// dims broadcast. Register-tiled: a work-group of RTSN x RTSM items computes
// a TSM x TSN tile of out, each item a WPTM x WPTN block spread RTSM / RTSN
// apart (neighbouring items touch neighbouring columns: coalesced on GPUs,
// vectorised across items by PoCL), staging TSK-deep slices of a and b in
// local memory. The tile sizes come from the per-device tuner (tuning.cpp).
//
// Split-K: with splits > 1 (only for a single batch) group z sums k range
// [z * k_chunk, (z + 1) * k_chunk) into part[z] and vnn_gemm_splitk_sum
// adds the partial products; that keeps every compute unit busy when the
// output has few tiles but k is long (conv2d weight gradients).
// Accumulates in T (float32 in float32, like BLAS); with beta == 0 out is
// not read (NaN there does not leak).
//
// Defines: T storage type (float, double, int, long), TSM TSN TSK WPTM WPTN
// for vnn_gemm, LK RM RN for vnn_gemm_longk, RNV for vnn_gemm_widen, PACK for
// vnn_gemm_pack (below); each program has one.

#ifdef TSM
#define RTSM (TSM / WPTM)
#define RTSN (TSN / WPTN)
#define NITEMS (RTSM * RTSN)

__kernel __attribute__((reqd_work_group_size(RTSN, RTSM, 1)))
void vnn_gemm(__global T* out, long out_off, __global const T* a, long a_off, __global const T* b, long b_off,
              T alpha, T beta, int use_beta, long m, long n, long k, long a_rs, long a_cs, long b_rs, long b_cs,
              long o_rs, long o_cs, int batch_ndim, long8 batch_sizes, long8 a_bs, long8 b_bs, long8 o_bs,
              long splits, long k_chunk, __global T* part) {
  __local T As[TSK][TSM];
  __local T Bs[TSK][TSN];
  const int tn = get_local_id(0), tm = get_local_id(1);
  const int lid = tm * RTSN + tn;
  const long col0 = get_group_id(0) * TSN, row0 = get_group_id(1) * TSM;
  const long z = get_group_id(2), bi = z / splits, sp = z - bi * splits;
  const long ab = a_off + vnn_strided_offset(bi, batch_ndim, batch_sizes, a_bs);
  const long bb = b_off + vnn_strided_offset(bi, batch_ndim, batch_sizes, b_bs);
  const long ob = out_off + vnn_strided_offset(bi, batch_ndim, batch_sizes, o_bs);
  const long kb = sp * k_chunk, ke = min(k, kb + k_chunk);
  // Loads walk the operand's unit-stride direction with neighbouring items.
  const int a_along_k = a_cs == 1, b_along_n = b_cs == 1 || b_rs != 1;
  T acc[WPTM][WPTN];
  #pragma unroll
  for (int wm = 0; wm < WPTM; ++wm)
    #pragma unroll
    for (int wn = 0; wn < WPTN; ++wn) acc[wm][wn] = (T)0;
  for (long p0 = kb; p0 < ke; p0 += TSK) {
    for (int l = lid; l < TSM * TSK; l += NITEMS) {
      const int kk = a_along_k ? l % TSK : l / TSM, mm = a_along_k ? l / TSK : l % TSM;
      const long r = row0 + mm, p = p0 + kk;
      As[kk][mm] = (r < m && p < ke) ? a[ab + r * a_rs + p * a_cs] : (T)0;
    }
    for (int l = lid; l < TSN * TSK; l += NITEMS) {
      const int kk = b_along_n ? l / TSN : l % TSK, nn = b_along_n ? l % TSN : l / TSK;
      const long c = col0 + nn, p = p0 + kk;
      Bs[kk][nn] = (c < n && p < ke) ? b[bb + p * b_rs + c * b_cs] : (T)0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < TSK; ++kk) {
      T br[WPTN];
      #pragma unroll
      for (int wn = 0; wn < WPTN; ++wn) br[wn] = Bs[kk][tn + wn * RTSN];
      #pragma unroll
      for (int wm = 0; wm < WPTM; ++wm) {
        const T av = As[kk][tm + wm * RTSM];
        #pragma unroll
        for (int wn = 0; wn < WPTN; ++wn) acc[wm][wn] += av * br[wn];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  #pragma unroll
  for (int wm = 0; wm < WPTM; ++wm) {
    const long r = row0 + tm + wm * RTSM;
    if (r >= m) continue;
    #pragma unroll
    for (int wn = 0; wn < WPTN; ++wn) {
      const long c = col0 + tn + wn * RTSN;
      if (c >= n) continue;
      if (splits > 1) {
        part[(sp * m + r) * n + c] = acc[wm][wn];
      } else {
        const long o = ob + r * o_rs + c * o_cs;
        T v = alpha * acc[wm][wn];
        if (use_beta) v += beta * out[o];
        out[o] = v;
      }
    }
  }
}

#endif  // TSM

// out = alpha * sum over the splits of part + beta * out (one batch).
__kernel void vnn_gemm_splitk_sum(__global T* out, long out_off, long o_rs, long o_cs, __global const T* part,
                                  long splits, long m, long n, T alpha, T beta, int use_beta) {
  const long mn = m * n;
  VNN_ITEMS(i, mn) {
    T s = (T)0;
    for (long p = 0; p < splits; ++p) s += part[p * mn + i];
    const long r = i / n, c = i - r * n;
    const long o = out_off + r * o_rs + c * o_cs;
    T v = alpha * s;
    if (use_beta) v += beta * out[o];
    out[o] = v;
  }
}

// dst[r * cols + c] = src[src_off + r * rs + c * cs]: a strided rows x
// cols operand packed contiguous for vnn_gemm_widen (x @ W^T's W^T). Each
// work item moves one PACK x PACK block, its inner loop along src's unit
// (smaller) stride, so both sides stay within a few cache lines per item; a
// plain strided copy walks dst in order and misses a line per element.
// Where src's rows are unit-stride (W^T) and the block is whole, it goes
// as 16 vector loads down src's columns and 16 vector stores along dst's
// rows, transposed in private memory: 0.16 -> 0.07 ms for the MLP's 784 x
// 256 on PoCL (the host makes groups one block wide, see ops_gemm.cpp).
#ifdef PACK
__kernel void vnn_gemm_pack(__global T* dst, __global const T* src, long src_off, long rows, long cols, long rs,
                            long cs) {
  const long c0 = get_global_id(0) * PACK, r0 = get_global_id(1) * PACK;
  if (c0 >= cols || r0 >= rows) return;
  const long r1 = min(rows, r0 + PACK), c1 = min(cols, c0 + PACK);
#if PACK == 16
  if (rs == 1 && r1 - r0 == 16 && c1 - c0 == 16) {
    const __global T* s = src + src_off + r0 + c0 * cs;
    __global T* d = dst + r0 * cols + c0;
    T tile[16][16];  // [c][r]
#pragma unroll
    for (int c = 0; c < 16; ++c) vstore16(vload16(0, s + c * cs), 0, &tile[c][0]);
#pragma unroll
    for (int r = 0; r < 16; ++r) {
      T row[16];
#pragma unroll
      for (int c = 0; c < 16; ++c) row[c] = tile[c][r];
      vstore16(vload16(0, row), 0, d + r * cols);
    }
    return;
  }
#endif
  if (rs <= cs) {
    for (long c = c0; c < c1; ++c)
      for (long r = r0; r < r1; ++r) dst[r * cols + c] = src[src_off + r * rs + c * cs];
  } else {
    for (long r = r0; r < r1; ++r)
      for (long c = c0; c < c1; ++c) dst[r * cols + c] = src[src_off + r * rs + c * cs];
  }
}
#endif  // PACK

// Long-k GEMM (conv2d weight gradients: gy [O, N*L] @ col^T, k = N*L far
// above m and n): a work-group of LK items computes an RM x RN block of
// out; each item sums its share of the k range for all RM x RN outputs
// (every load feeds RM or RN products), and one local-memory pass adds the
// LK partial sums. With VW > 1 (both operands k-contiguous: a_cs == b_rs
// == 1, the host checks) the loads are VW-wide vloads, the device's
// preferred float vector width. BLOCKED (CPUs) gives each item one
// contiguous run of k (it walks its own cache lines); otherwise (GPUs)
// VW-wide steps interleave across the group (neighbouring items touch
// neighbouring memory: coalesced). Rows / columns past the edge are clamped
// to the last one (loaded, never stored) so the inner loop has no branch.
// Split-K and batches as vnn_gemm (group z = batch * splits + split).
//
// Defines: T, LK (work-group size), RM, RN, VW (1, 2, 4, 8, 16), BLOCKED.
#ifdef LK
#if VW == 1
typedef T TV;
#define LOAD_A(i, p) a[ar[i] + (p) * a_cs]
#define LOAD_B(j, p) b[bc[j] + (p) * b_rs]
#else
#define VCAT2(x, y) x##y
#define VCAT(x, y) VCAT2(x, y)
typedef VCAT(T, VW) TV;
#define LOAD_A(i, p) VCAT(vload, VW)(0, a + ar[i] + (p))
#define LOAD_B(j, p) VCAT(vload, VW)(0, b + bc[j] + (p))
#endif

__kernel __attribute__((reqd_work_group_size(LK, 1, 1)))
void vnn_gemm_longk(__global T* out, long out_off, __global const T* a, long a_off, __global const T* b, long b_off,
                    T alpha, T beta, int use_beta, long m, long n, long k, long a_rs, long a_cs, long b_rs,
                    long b_cs, long o_rs, long o_cs, int batch_ndim, long8 batch_sizes, long8 a_bs, long8 b_bs,
                    long8 o_bs, long splits, long k_chunk, __global T* part) {
  __local T red[RM * RN][LK];
  const int lid = get_local_id(0);
  const long c0 = get_group_id(0) * RN, r0 = get_group_id(1) * RM;
  const long z = get_group_id(2), bi = z / splits, sp = z - bi * splits;
  const long ab = a_off + vnn_strided_offset(bi, batch_ndim, batch_sizes, a_bs);
  const long bb = b_off + vnn_strided_offset(bi, batch_ndim, batch_sizes, b_bs);
  const long ob = out_off + vnn_strided_offset(bi, batch_ndim, batch_sizes, o_bs);
  const long kb = sp * k_chunk, ke = min(k, kb + k_chunk);
  long ar[RM], bc[RN];
  #pragma unroll
  for (int i = 0; i < RM; ++i) ar[i] = ab + min(r0 + i, m - 1) * a_rs;
  #pragma unroll
  for (int j = 0; j < RN; ++j) bc[j] = bb + min(c0 + j, n - 1) * b_cs;
  // Whole VW-wide steps of [kb, ke): this item's v0, v0 + vstep, ... < v1.
  const long nvec = max(ke - kb, 0L) / VW;
#if BLOCKED
  const long per = (nvec + LK - 1) / LK, v0 = lid * per, v1 = min(nvec, v0 + per), vstep = 1;
#else
  const long v0 = lid, v1 = nvec, vstep = LK;
#endif
  TV acc[RM][RN];
  #pragma unroll
  for (int i = 0; i < RM; ++i)
    #pragma unroll
    for (int j = 0; j < RN; ++j) acc[i][j] = (TV)0;
  for (long v = v0; v < v1; v += vstep) {
    const long p = kb + v * VW;
    TV av[RM], bv[RN];
    #pragma unroll
    for (int i = 0; i < RM; ++i) av[i] = LOAD_A(i, p);
    #pragma unroll
    for (int j = 0; j < RN; ++j) bv[j] = LOAD_B(j, p);
    #pragma unroll
    for (int i = 0; i < RM; ++i)
      #pragma unroll
      for (int j = 0; j < RN; ++j) acc[i][j] += av[i] * bv[j];
  }
  // Fold the lanes, then the scalar tail of k past the whole steps.
  T s[RM][RN];
  #pragma unroll
  for (int i = 0; i < RM; ++i)
    #pragma unroll
    for (int j = 0; j < RN; ++j) {
#if VW == 1
      s[i][j] = acc[i][j];
#else
      T lanes[VW];
      VCAT(vstore, VW)(acc[i][j], 0, lanes);
      T t = (T)0;
      #pragma unroll
      for (int l = 0; l < VW; ++l) t += lanes[l];
      s[i][j] = t;
#endif
    }
  for (long p = kb + nvec * VW + lid; p < ke; p += LK)
    #pragma unroll
    for (int i = 0; i < RM; ++i)
      #pragma unroll
      for (int j = 0; j < RN; ++j) s[i][j] += a[ar[i] + p * a_cs] * b[bc[j] + p * b_rs];
  #pragma unroll
  for (int i = 0; i < RM; ++i)
    #pragma unroll
    for (int j = 0; j < RN; ++j) red[i * RN + j][lid] = s[i][j];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int o = lid; o < RM * RN; o += LK) {
    T t = (T)0;
    for (int l = 0; l < LK; ++l) t += red[o][l];
    const long r = r0 + o / RN, c = c0 + o % RN;
    if (r >= m || c >= n) continue;
    if (splits > 1) {
      part[(sp * m + r) * n + c] = t;
    } else {
      const long oi = ob + r * o_rs + c * o_cs;
      T v = alpha * t;
      if (use_beta) v += beta * out[oi];
      out[oi] = v;
    }
  }
}
#endif  // LK

// Wide-n GEMM (conv2d forward W @ col and input gradient W^T @ gy: n =
// N*OH*OW far above m, b n-contiguous): each item computes RM rows x RNV
// VW-wide vectors of columns, a register block as BLAS micro-kernels use:
// per step of k, RNV vector loads of b and RM scalars of a broadcast into
// RM * RNV vector multiply-adds. A work-group of LX x LY items covers LY *
// RM rows, so one b strip serves them from cache. The last, partial
// column block computes the whole block that ends at column n (vector
// loads as the others) and stores only its own columns; where n is below
// one block it goes element by element (element by element, n = 784's
// last half block had taken a quarter of the MLP's GEMM time). No split-K
// (group z is the batch).
//
// Defines: T, VW (1, 2, 4, 8, 16; VW > 1 needs b_cs == 1, the host
// checks), RM, RNV, LX, LY.
#ifdef RNV
#if VW == 1
typedef T TW;
#define LOAD_BW(p, c) b[bb + (p) * b_rs + (c) * b_cs]
#else
#define WCAT2(x, y) x##y
#define WCAT(x, y) WCAT2(x, y)
typedef WCAT(T, VW) TW;
#define LOAD_BW(p, c) WCAT(vload, VW)(0, b + bb + (p) * b_rs + (c))
#endif

__kernel __attribute__((reqd_work_group_size(LX, LY, 1)))
void vnn_gemm_widen(__global T* out, long out_off, __global const T* a, long a_off, __global const T* b, long b_off,
                    T alpha, T beta, int use_beta, long m, long n, long k, long a_rs, long a_cs, long b_rs,
                    long b_cs, long o_rs, long o_cs, int batch_ndim, long8 batch_sizes, long8 a_bs, long8 b_bs,
                    long8 o_bs, long splits, long k_chunk, __global T* part) {
  const long c0 = get_global_id(0) * (RNV * VW), r0 = get_global_id(1) * RM, bi = get_group_id(2);
  if (c0 >= n || r0 >= m) return;  // the grid is rounded up to whole groups
  const long ab = a_off + vnn_strided_offset(bi, batch_ndim, batch_sizes, a_bs);
  const long bb = b_off + vnn_strided_offset(bi, batch_ndim, batch_sizes, b_bs);
  const long ob = out_off + vnn_strided_offset(bi, batch_ndim, batch_sizes, o_bs);
  long ar[RM];
  #pragma unroll
  for (int i = 0; i < RM; ++i) ar[i] = ab + min(r0 + i, m - 1) * a_rs;
  // The partial block at the right edge: the full block ending at n, its
  // columns below c0 (another item's) computed and not stored.
  const long cs = c0 + RNV * VW > n && n >= RNV * VW ? n - RNV * VW : c0;
  if (cs + RNV * VW > n) {  // n below one block
    for (int i = 0; i < RM && r0 + i < m; ++i)
      for (long c = c0; c < n; ++c) {
        T t = (T)0;
        for (long p = 0; p < k; ++p) t += a[ar[i] + p * a_cs] * b[bb + p * b_rs + c * b_cs];
        const long oi = ob + (r0 + i) * o_rs + c * o_cs;
        T v = alpha * t;
        if (use_beta) v += beta * out[oi];
        out[oi] = v;
      }
    return;
  }
  TW acc[RM][RNV];
  #pragma unroll
  for (int i = 0; i < RM; ++i)
    #pragma unroll
    for (int j = 0; j < RNV; ++j) acc[i][j] = (TW)0;
  for (long p = 0; p < k; ++p) {
    TW bv[RNV];
    #pragma unroll
    for (int j = 0; j < RNV; ++j) bv[j] = LOAD_BW(p, cs + j * VW);
    #pragma unroll
    for (int i = 0; i < RM; ++i) {
      const T av = a[ar[i] + p * a_cs];
      #pragma unroll
      for (int j = 0; j < RNV; ++j) acc[i][j] += av * bv[j];
    }
  }
  for (int i = 0; i < RM && r0 + i < m; ++i)
    #pragma unroll
    for (int j = 0; j < RNV; ++j) {
      T lanes[VW];
#if VW == 1
      lanes[0] = acc[i][j];
#else
      WCAT(vstore, VW)(acc[i][j], 0, lanes);
#endif
      #pragma unroll
      for (int l = 0; l < VW; ++l) {
        const long c = cs + j * VW + l;
        if (c < c0) continue;
        const long oi = ob + (r0 + i) * o_rs + c * o_cs;
        T v = alpha * lanes[l];
        if (use_beta) v += beta * out[oi];
        out[oi] = v;
      }
    }
}
#endif  // RNV
