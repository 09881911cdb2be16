// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SORT and SEARCHSORTED (backend_abi.h, docs/ops.md); the same algorithm as
// backends/kokkos/kernels/sort.hpp: each element becomes an unsigned key
// ordered as PyTorch orders (NaN above +inf, -0.0 equal to 0.0, descending
// = the complement) paired with its position in the row; pairs compare by
// (key, position), so any correct merge is stable. vnn_sort_blocks sorts
// blocks of `block` pairs by insertion, each vnn_sort_merge pass merges
// runs of w into runs of 2w (every item writes `span` outputs from the
// merge path's crossing of its first one), vnn_sort_finish writes the
// positions and the values decoded from the keys.
// Defines: T (storage type), DT (its vnn_dtype), WIDE (1: (key, position)
// as ulong2; 0: a 32-bit key and the position packed in one ulong); for
// vnn_searchsorted also OUT_T (long or int).

#if DT == VNN_FLOAT32
typedef uint UK;
inline UK sort_key(T x) {
  if (isnan(x)) return 0xffffffffu;
  const uint u = as_uint(x == 0.0f ? 0.0f : x);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
inline T sort_value(UK k, __global const T* stored) {
  if (k == 0xffffffffu || k == 0x80000000u) return *stored;  // NaN payload, sign of zero
  return as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}
#elif DT == VNN_FLOAT64
typedef ulong UK;
inline UK sort_key(T x) {
  if (isnan(x)) return ~(ulong)0;
  const ulong u = as_ulong(x == 0.0 ? 0.0 : x);
  return (u >> 63) ? ~u : (u | ((ulong)1 << 63));
}
inline T sort_value(UK k, __global const T* stored) {
  if (k == ~(ulong)0 || k == ((ulong)1 << 63)) return *stored;
  return as_double((k >> 63) ? (k & ~((ulong)1 << 63)) : ~k);
}
#elif DT == VNN_INT32
typedef uint UK;
inline UK sort_key(T x) { return as_uint(x) ^ 0x80000000u; }
inline T sort_value(UK k, __global const T* stored) { return as_int(k ^ 0x80000000u); }
#elif DT == VNN_INT64
typedef ulong UK;
inline UK sort_key(T x) { return as_ulong(x) ^ ((ulong)1 << 63); }
inline T sort_value(UK k, __global const T* stored) { return as_long(k ^ ((ulong)1 << 63)); }
#elif DT == VNN_BOOL
typedef uint UK;
inline UK sort_key(T x) { return x != 0; }
inline T sort_value(UK k, __global const T* stored) { return (T)k; }
#else
typedef uint UK;
inline UK sort_key(T x) { return x; }
inline T sort_value(UK k, __global const T* stored) { return (T)k; }
#endif

#if WIDE
typedef ulong2 E;
#define E_MAKE(k, p) ((ulong2)((ulong)(k), (ulong)(p)))
#define E_KEY(e) ((e).s0)
#define E_POS(e) ((long)(e).s1)
#define E_LESS(a, b) ((a).s0 < (b).s0 || ((a).s0 == (b).s0 && (a).s1 < (b).s1))
#else
typedef ulong E;
#define E_MAKE(k, p) (((ulong)(k) << 32) | (ulong)(p))
#define E_KEY(e) ((e) >> 32)
#define E_POS(e) ((long)((e) & 0xffffffffUL))
#define E_LESS(a, b) ((a) < (b))
#endif

#define SORT_FLIP(descending) ((descending) ? (UK)(~(UK)0) : (UK)0)

__kernel void vnn_sort_blocks(__global E* pairs, __global const T* in, long in_off, long rows, long n, long block,
                              int descending) {
  const long blocks = (n + block - 1) / block;
  const UK flip = SORT_FLIP(descending);
  VNN_ITEMS(t, rows * blocks) {
    const long r = t / blocks, begin = (t % blocks) * block;
    const long end = min(begin + block, n);
    __global E* row = pairs + r * n;
    __global const T* x = in + in_off + r * n;
    for (long j = begin; j < end; ++j) {
      const E e = E_MAKE((UK)(sort_key(x[j]) ^ flip), j);
      long k = j;
      for (; k > begin && E_LESS(e, row[k - 1]); --k) row[k] = row[k - 1];
      row[k] = e;
    }
  }
}

__kernel void vnn_sort_merge(__global const E* from, __global E* to, long rows, long n, long w, long span) {
  const long items = (n + span - 1) / span;
  VNN_ITEMS(t, rows * items) {
    const long r = t / items, first = (t % items) * span;
    const long start = first / (2 * w) * (2 * w);
    const long mid = min(start + w, n), stop = min(start + 2 * w, n);
    __global const E* a = from + r * n + start;
    __global const E* b = from + r * n + mid;
    const long na = mid - start, nb = stop - mid, diag = first - start;
    long lo = diag > nb ? diag - nb : 0, hi = min(diag, na);
    while (lo < hi) {  // the merge path's crossing of diagonal diag
      const long m = (lo + hi) / 2;
      if (E_LESS(b[diag - m - 1], a[m])) hi = m;
      else lo = m + 1;
    }
    long i = lo, j = diag - lo;
    const long count = min(stop - first, span);
    __global E* out = to + r * n + first;
    if (nb == 0) {  // the row's last run, with no partner
      for (long k = 0; k < count; ++k) out[k] = a[i + k];
    } else {
      // Branch-free: both heads read (clamped to their runs), one kept.
      for (long k = 0; k < count; ++k) {
        const E x = a[min(i, na - 1)], y = b[min(j, nb - 1)];
        const int take_a = j >= nb || (i < na && E_LESS(x, y));
        out[k] = take_a ? x : y;
        i += take_a;
        j += !take_a;
      }
    }
  }
}

__kernel void vnn_sort_finish(__global const E* pairs, __global const T* in, long in_off, __global T* values,
                              long v_off, __global long* positions, long p_off, long total, long n, int descending) {
  const UK flip = SORT_FLIP(descending);
  VNN_ITEMS(t, total) {
    const E e = pairs[t];
    const long j = E_POS(e);
    positions[p_off + t] = j;
    values[v_off + t] = sort_value((UK)((UK)E_KEY(e) ^ flip), in + in_off + (t - t % n) + j);
  }
}

// CPU devices, long rows: an LSD radix sort of the pairs (in position
// order) by key, 8 bits a pass, as backends/kokkos/kernels/sort.hpp's
// radix_row: item (row, chunk) counts its chunk's digits, one item per row
// turns the counts into each (digit, chunk)'s first slot, and item (row,
// chunk) scatters its chunk in order (stable). counts: [rows, chunks, 256].
__kernel void vnn_sort_radix_count(__global const E* pairs, __global long* counts, long rows, long n, long chunks,
                                   int shift) {
  VNN_ITEMS(t, rows * chunks) {
    const long r = t / chunks, c = t % chunks, per = (n + chunks - 1) / chunks;
    __global long* own = counts + t * 256;
    for (int d = 0; d < 256; ++d) own[d] = 0;
    __global const E* row = pairs + r * n;
    const long end = min((c + 1) * per, n);
    for (long i = c * per; i < end; ++i) ++own[(E_KEY(row[i]) >> shift) & 255];
  }
}

__kernel void vnn_sort_radix_offsets(__global long* counts, long rows, long chunks) {
  VNN_ITEMS(r, rows) {
    __global long* row = counts + r * chunks * 256;
    long next = 0;
    for (int d = 0; d < 256; ++d)
      for (long c = 0; c < chunks; ++c) {
        const long k = row[c * 256 + d];
        row[c * 256 + d] = next;
        next += k;
      }
  }
}

__kernel void vnn_sort_radix_scatter(__global const E* from, __global E* to, __global long* counts, long rows,
                                     long n, long chunks, int shift) {
  VNN_ITEMS(t, rows * chunks) {
    const long r = t / chunks, c = t % chunks, per = (n + chunks - 1) / chunks;
    __global long* own = counts + t * 256;
    __global const E* row = from + r * n;
    __global E* out = to + r * n;
    const long end = min((c + 1) * per, n);
    for (long i = c * per; i < end; ++i) out[own[(E_KEY(row[i]) >> shift) & 255]++] = row[i];
  }
}

// CPU devices, many shorter rows: one item sorts a whole row by the same
// radix, sequentially (rows in parallel); the sorted row ends in `pairs`.
__kernel void vnn_sort_radix_rows(__global E* pairs, __global E* scratch, long rows, long n, int key_bits) {
  VNN_ITEMS(r, rows) {
    __global E* from = pairs + r * n;
    __global E* to = scratch + r * n;
    long slot[256];
    for (int shift = 0; shift < key_bits; shift += 8) {
      for (int d = 0; d < 256; ++d) slot[d] = 0;
      for (long i = 0; i < n; ++i) ++slot[(E_KEY(from[i]) >> shift) & 255];
      long next = 0;
      int one_digit = 0;
      for (int d = 0; d < 256; ++d) {
        const long k = slot[d];
        one_digit = one_digit || k == n;
        slot[d] = next;
        next += k;
      }
      if (one_digit) continue;
      for (long i = 0; i < n; ++i) to[slot[(E_KEY(from[i]) >> shift) & 255]++] = from[i];
      __global E* t = from;
      from = to;
      to = t;
    }
    if (from != pairs + r * n)
      for (long i = 0; i < n; ++i) pairs[r * n + i] = from[i];
  }
}

#ifdef OUT_T
// PyTorch's comparisons: left, the first position whose element is not < v;
// right, not <= v (NaN values and unsorted rows give its answers too).
__kernel void vnn_searchsorted(__global const T* seq, long s_off, long seq_rows, long n, __global const T* v,
                               long v_off, __global OUT_T* out, long o_off, long rows, long m, int right) {
  VNN_ITEMS(t, rows * m) {
    __global const T* row = seq + s_off + (seq_rows == 1 ? 0 : (t / m) * n);
    const T x = v[v_off + t];
    long lo = 0, hi = n;
    while (lo < hi) {
      const long mid = lo + (hi - lo) / 2;
      const T y = row[mid];
      if (right ? !(y > x) : !(y >= x)) lo = mid + 1;
      else hi = mid;
    }
    out[o_off + t] = (OUT_T)lo;
  }
}
#endif
