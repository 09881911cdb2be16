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
// Defines: T storage type (float, double, int, long), TSM TSN TSK WPTM WPTN.

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
  for (int wm = 0; wm < WPTM; ++wm)
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
      for (int wn = 0; wn < WPTN; ++wn) br[wn] = Bs[kk][tn + wn * RTSN];
      for (int wm = 0; wm < WPTM; ++wm) {
        const T av = As[kk][tm + wm * RTSM];
        for (int wn = 0; wn < WPTN; ++wn) acc[wm][wn] += av * br[wn];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int wm = 0; wm < WPTM; ++wm) {
    const long r = row0 + tm + wm * RTSM;
    if (r >= m) continue;
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

// out = alpha * sum over the splits of part + beta * out (one batch).
__kernel void vnn_gemm_splitk_sum(__global T* out, long out_off, long o_rs, long o_cs, __global const T* part,
                                  long splits, long m, long n, T alpha, T beta, int use_beta) {
  const long mn = m * n;
  for (long i = get_global_id(0); i < mn; i += get_global_size(0)) {
    T s = (T)0;
    for (long p = 0; p < splits; ++p) s += part[p * mn + i];
    const long r = i / n, c = i - r * n;
    const long o = out_off + r * o_rs + c * o_cs;
    T v = alpha * s;
    if (use_beta) v += beta * out[o];
    out[o] = v;
  }
}
