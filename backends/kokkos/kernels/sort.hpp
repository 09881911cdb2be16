// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SORT and SEARCHSORTED (backend_abi.h, docs/ops.md), written once for every
// Kokkos space.
//
// SORT: each element becomes an unsigned key that orders as PyTorch does
// (NaN above +inf, -0.0 equal to 0.0, descending = the key's complement)
// paired with its position in the row. Pairs compare by (key, position), so
// no two are equal and any correct merge is stable. A row of N is sorted
// in 1 + log2(N / kBlock) parallel passes:
//   1. every block of kBlock pairs of a row sorted by insertion (one item
//      per block);
//   2. runs of w merged into runs of 2w, w = kBlock, 2 kBlock, ...: each
//      item writes `span` consecutive outputs of one merge, starting where
//      the merge path crosses its first output (a binary search), so one
//      16M-element row keeps every thread busy in every pass;
//   3. the positions go to out1 and the values to out0, decoded from the
//      keys (exact; only a zero or NaN key reads the input again, for the
//      sign of zero and the NaN's payload).
// 32-bit keys travel packed with the position in one uint64 (8 bytes a
// pair), 64-bit keys as a (key, position) struct. On host spaces rows of
// kRadixRow or more take an LSD radix sort of the pairs instead of steps
// 1-2 (radix_row: 4 passes over a 16M-element row against 19 merges), and
// many rows of kRowRadix or more the same radix one row per item
// (radix_each_row).
//
// SEARCHSORTED: one binary search per value, with PyTorch's comparisons
// (left: the first position whose element is not < v; right: not <= v), so
// NaN values and rows that are not sorted give its positions.
#pragma once
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/op_params.hpp"
#include "kokkos/kernels/dispatch.hpp"
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/types.hpp"

namespace vnn::kernels {
namespace sorting {

// Pairs sorted by insertion before the first merge pass (a power of two).
inline constexpr int64_t kBlock = 32;

// The bits of a double as uint64 and back (types.hpp's float_bits for doubles).
template <class To, class From>
KOKKOS_INLINE_FUNCTION To bits_as(From f) {
  union { From f; To t; } v{f};
  return v.t;
}

// Key<T>: key(x) orders as PyTorch's ascending sort; value(key, stored)
// inverts it (stored: the input element, read only where the key cannot
// tell, as -0.0 from 0.0).
template <class T> struct Key;
template <> struct Key<float> {
  using U = uint32_t;
  KOKKOS_INLINE_FUNCTION static U key(float x) {
    if (x != x) return 0xffffffffu;
    const U u = float_bits(x == 0.0f ? 0.0f : x);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  }
  KOKKOS_INLINE_FUNCTION static float value(U k, const float* stored) {
    if (k == 0xffffffffu || k == 0x80000000u) return *stored;
    return bits_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
  }
};
template <> struct Key<double> {
  using U = uint64_t;
  KOKKOS_INLINE_FUNCTION static U key(double x) {
    if (x != x) return ~uint64_t(0);
    const U u = bits_as<uint64_t>(x == 0.0 ? 0.0 : x);
    return (u >> 63) ? ~u : (u | (uint64_t(1) << 63));
  }
  KOKKOS_INLINE_FUNCTION static double value(U k, const double* stored) {
    if (k == ~uint64_t(0) || k == (uint64_t(1) << 63)) return *stored;
    return bits_as<double>((k >> 63) ? (k & ~(uint64_t(1) << 63)) : ~k);
  }
};
template <> struct Key<int32_t> {
  using U = uint32_t;
  KOKKOS_INLINE_FUNCTION static U key(int32_t x) { return uint32_t(x) ^ 0x80000000u; }
  KOKKOS_INLINE_FUNCTION static int32_t value(U k, const int32_t*) { return int32_t(k ^ 0x80000000u); }
};
template <> struct Key<int64_t> {
  using U = uint64_t;
  KOKKOS_INLINE_FUNCTION static U key(int64_t x) { return uint64_t(x) ^ (uint64_t(1) << 63); }
  KOKKOS_INLINE_FUNCTION static int64_t value(U k, const int64_t*) { return int64_t(k ^ (uint64_t(1) << 63)); }
};
template <> struct Key<uint8_t> {
  using U = uint32_t;
  KOKKOS_INLINE_FUNCTION static U key(uint8_t x) { return x; }
  KOKKOS_INLINE_FUNCTION static uint8_t value(U k, const uint8_t*) { return uint8_t(k); }
};
template <> struct Key<Bool> {
  using U = uint32_t;
  KOKKOS_INLINE_FUNCTION static U key(Bool x) { return x.bits != 0; }
  KOKKOS_INLINE_FUNCTION static Bool value(U k, const Bool*) { return Bool{uint8_t(k)}; }
};

// A 32-bit key and a position below 2^32 in one ordered uint64.
struct PackedPair {
  using E = uint64_t;
  KOKKOS_INLINE_FUNCTION static E make(uint64_t key, int64_t pos) { return (key << 32) | uint64_t(pos); }
  KOKKOS_INLINE_FUNCTION static uint64_t key(E e) { return e >> 32; }
  KOKKOS_INLINE_FUNCTION static int64_t pos(E e) { return int64_t(e & 0xffffffffu); }
  KOKKOS_INLINE_FUNCTION static bool less(E a, E b) { return a < b; }
};
// Any key with any position.
struct WidePair {
  struct E {
    uint64_t key;
    int64_t pos;
  };
  KOKKOS_INLINE_FUNCTION static E make(uint64_t key, int64_t pos) { return E{key, pos}; }
  KOKKOS_INLINE_FUNCTION static uint64_t key(E e) { return e.key; }
  KOKKOS_INLINE_FUNCTION static int64_t pos(E e) { return e.pos; }
  KOKKOS_INLINE_FUNCTION static bool less(E a, E b) { return a.key < b.key || (a.key == b.key && a.pos < b.pos); }
};

// Rows at least this long sort by radix on host spaces (radix_row); rows
// from kRowRadix, when there are enough of them to fill the threads, by
// radix one row per item (radix_each_row).
inline constexpr int64_t kRadixRow = 65536;
inline constexpr int64_t kRowRadix = 256;

#if !defined(__CUDACC__) && !defined(__HIPCC__)
// Host spaces, long rows: an LSD radix sort of one row of pairs (in position
// order) by key, 8 bits a pass: each pass counts the digits of every chunk
// of the row, turns the counts into each (digit, chunk)'s first slot and
// scatters each chunk in order, so equal keys keep their position order
// (stable, as the merges). A pass whose digit is the same for the whole row
// is skipped. 4 passes for 32-bit keys, 8 for 64-bit ones, against
// log2(N / kBlock) merges. Returns the buffer holding the sorted row.
template <class Exec, class P, class U>
typename P::E* radix_row(const Exec& exec, typename P::E* src, typename P::E* dst, int64_t n) {
  using E = typename P::E;
  const int64_t chunks = 4 * int64_t(exec.concurrency() > 0 ? exec.concurrency() : 1);
  const int64_t per = (n + chunks - 1) / chunks;
  std::vector<int64_t> counts(size_t(chunks) * 256);
  for (int shift = 0; shift < int(sizeof(U)) * 8; shift += 8) {
    std::fill(counts.begin(), counts.end(), int64_t(0));
    int64_t* slot = counts.data();
    const E* from = src;
    E* to = dst;
    Kokkos::parallel_for("vnn::sort_radix_count", Range<Exec>(exec, 0, chunks), [=](int64_t c) {
      const int64_t end = (c + 1) * per < n ? (c + 1) * per : n;
      int64_t* own = slot + c * 256;
      for (int64_t i = c * per; i < end; ++i) ++own[(P::key(from[i]) >> shift) & 255];
    });
    exec.fence();
    int64_t next = 0;
    bool one_digit = false;
    for (int d = 0; d < 256; ++d) {
      const int64_t first = next;
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t k = slot[c * 256 + d];
        slot[c * 256 + d] = next;
        next += k;
      }
      one_digit = one_digit || next - first == n;
    }
    if (one_digit) continue;
    Kokkos::parallel_for("vnn::sort_radix_scatter", Range<Exec>(exec, 0, chunks), [=](int64_t c) {
      const int64_t end = (c + 1) * per < n ? (c + 1) * per : n;
      int64_t* own = slot + c * 256;
      for (int64_t i = c * per; i < end; ++i) to[own[(P::key(from[i]) >> shift) & 255]++] = from[i];
    });
    exec.fence();
    std::swap(src, dst);
  }
  return src;
}

// Host spaces, many rows of kRowRadix to kRadixRow: each item sorts whole
// rows by the same LSD radix (stable), sequentially; rows run in parallel.
// The sorted rows end in src.
template <class Exec, class P, class U>
void radix_each_row(const Exec& exec, typename P::E* src, typename P::E* dst, int64_t rows, int64_t n) {
  using E = typename P::E;
  Kokkos::parallel_for("vnn::sort_radix_rows", Range<Exec>(exec, 0, rows), [=](int64_t r) {
    E* from = src + r * n;
    E* to = dst + r * n;
    int64_t slot[256];
    for (int shift = 0; shift < int(sizeof(U)) * 8; shift += 8) {
      for (int d = 0; d < 256; ++d) slot[d] = 0;
      for (int64_t i = 0; i < n; ++i) ++slot[(P::key(from[i]) >> shift) & 255];
      int64_t next = 0;
      bool one_digit = false;
      for (int d = 0; d < 256; ++d) {
        const int64_t k = slot[d];
        one_digit = one_digit || k == n;
        slot[d] = next;
        next += k;
      }
      if (one_digit) continue;
      for (int64_t i = 0; i < n; ++i) to[slot[(P::key(from[i]) >> shift) & 255]++] = from[i];
      E* t = from;
      from = to;
      to = t;
    }
    if (from != src + r * n)
      for (int64_t i = 0; i < n; ++i) src[r * n + i] = from[i];
  });
  exec.fence();
}
#endif

template <class Exec, class P, class T>
void sort_rows(const Exec& exec, const T* in, T* values, int64_t* positions, int64_t rows, int64_t n,
               bool descending) {
  using E = typename P::E;
  using U = typename Key<T>::U;
  using Mem = typename Exec::memory_space;
  constexpr bool host = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;
  // Outputs per merge item: long sequential runs on CPU threads, short ones
  // on GPU threads (a power of two, so an item never spans two merges).
  constexpr int64_t kChunk = host ? 4096 : 256;
  const int64_t total = rows * n;
  const U flip = descending ? U(~U(0)) : U(0);
  Kokkos::View<E*, Mem> buf_a(Kokkos::view_alloc(Kokkos::WithoutInitializing, "vnn::sort_pairs"), size_t(total));
  Kokkos::View<E*, Mem> buf_b(Kokkos::view_alloc(Kokkos::WithoutInitializing, "vnn::sort_pairs_merged"),
                              size_t(n > kBlock ? total : 0));
  E* src = buf_a.data();
  E* dst = buf_b.data();
  const bool long_radix = host && n >= kRadixRow;
  const bool row_radix = host && !long_radix && n >= kRowRadix && rows >= 2 * int64_t(exec.concurrency());
  const bool radix = long_radix || row_radix;
  // Radix rows start from the pairs in position order (blocks of 1).
  const int64_t block = radix ? 1 : kBlock;

  const int64_t blocks = (n + block - 1) / block;
  Kokkos::parallel_for("vnn::sort_blocks", Range<Exec>(exec, 0, rows * blocks), KOKKOS_LAMBDA(int64_t t) {
    const int64_t r = t / blocks, begin = (t % blocks) * block;
    const int64_t end = begin + block < n ? begin + block : n;
    E* row = src + r * n;
    const T* x = in + r * n;
    for (int64_t j = begin; j < end; ++j) {
      const E e = P::make(uint64_t(U(Key<T>::key(x[j]) ^ flip)), j);
      int64_t k = j;
      for (; k > begin && P::less(e, row[k - 1]); --k) row[k] = row[k - 1];
      row[k] = e;
    }
  });

#if !defined(__CUDACC__) && !defined(__HIPCC__)
  if constexpr (host) {
    if (row_radix) {
      radix_each_row<Exec, P, U>(exec, src, dst, rows, n);
    } else if (long_radix) {
      exec.fence();
      for (int64_t r = 0; r < rows; ++r) {
        E* sorted = radix_row<Exec, P, U>(exec, src + r * n, dst + r * n, n);
        if (sorted != src + r * n) {  // an odd number of passes ran: back into src
          E* row = src + r * n;
          Kokkos::parallel_for("vnn::sort_radix_copy", Range<Exec>(exec, 0, n), [=](int64_t i) { row[i] = sorted[i]; });
          exec.fence();
        }
      }
    }
  }
#endif
  for (int64_t w = radix ? n : kBlock; w < n; w *= 2) {
    const int64_t span = kChunk < 2 * w ? kChunk : 2 * w;
    const int64_t items = (n + span - 1) / span;
    const E* from = src;
    E* to = dst;
    Kokkos::parallel_for("vnn::sort_merge", Range<Exec>(exec, 0, rows * items), KOKKOS_LAMBDA(int64_t t) {
      const int64_t r = t / items, first = (t % items) * span;
      const int64_t start = first / (2 * w) * (2 * w);
      const int64_t mid = start + w < n ? start + w : n, stop = start + 2 * w < n ? start + 2 * w : n;
      const E* a = from + r * n + start;
      const E* b = from + r * n + mid;
      const int64_t na = mid - start, nb = stop - mid, diag = first - start;
      // The merge path's crossing of diagonal `diag`: i outputs from a.
      int64_t lo = diag > nb ? diag - nb : 0, hi = diag < na ? diag : na;
      while (lo < hi) {
        const int64_t m = (lo + hi) / 2;
        if (P::less(b[diag - m - 1], a[m])) hi = m;
        else lo = m + 1;
      }
      int64_t i = lo, j = diag - lo;
      const int64_t count = stop - first < span ? stop - first : span;
      E* out = to + r * n + first;
      if (nb == 0) {  // the row's last run, with no partner
        for (int64_t k = 0; k < count; ++k) out[k] = a[i + k];
        return;
      }
      // Branch-free: both heads read (clamped to their runs), one kept.
      for (int64_t k = 0; k < count; ++k) {
        const E x = a[i < na ? i : na - 1], y = b[j < nb ? j : nb - 1];
        const bool take_a = j >= nb || (i < na && P::less(x, y));
        out[k] = take_a ? x : y;
        i += take_a;
        j += !take_a;
      }
    });
    src = to;
    dst = const_cast<E*>(from);
  }

  const E* sorted = src;
  Kokkos::parallel_for("vnn::sort_finish", Range<Exec>(exec, 0, total), KOKKOS_LAMBDA(int64_t t) {
    const E e = sorted[t];
    const int64_t j = P::pos(e);
    positions[t] = j;
    values[t] = Key<T>::value(U(U(P::key(e)) ^ flip), in + (t - t % n) + j);
  });
  exec.fence();
}

using SortTypes = TypeSet<float, double, int32_t, int64_t, uint8_t, Bool>;

template <class T, class Exec, class O>
void search_rows(const Exec& exec, const T* seq, int64_t seq_rows, int64_t n, const T* v, O* out, int64_t rows,
                 int64_t m, bool right) {
  Kokkos::parallel_for("vnn::searchsorted", Range<Exec>(exec, 0, rows * m), KOKKOS_LAMBDA(int64_t t) {
    const T* row = seq + (seq_rows == 1 ? 0 : (t / m) * n);
    const compute_t<T> x = load(v[t]);
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      const compute_t<T> y = load(row[mid]);
      if (right ? !(y > x) : !(y >= x)) lo = mid + 1;
      else hi = mid;
    }
    out[t] = O(lo);
  });
  exec.fence();
}

}  // namespace sorting

template <class Exec>
bool sort(VNN_KOKKOS_SORT_PARAMS(Exec)) {
  using namespace sorting;
  SortRows s;
  const char* why = nullptr;
  if (!decode_sort(op, &s, &why)) return refuse(why);
  if (s.rows * s.n == 0) return true;
  const vnn_tensor_desc &in = op.inputs[0], &vals = op.outputs[0], &pos = op.outputs[1];
  dispatch_types<SortTypes>("sort", in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = typed<T>(in) + in.offset;
    T* v = typed<T>(vals) + vals.offset;
    int64_t* p = typed<int64_t>(pos) + pos.offset;
    if (sizeof(typename Key<T>::U) == 4 && s.n <= int64_t(0xffffffffu))
      sort_rows<Exec, PackedPair, T>(exec, x, v, p, s.rows, s.n, s.descending);
    else
      sort_rows<Exec, WidePair, T>(exec, x, v, p, s.rows, s.n, s.descending);
  });
  return true;
}

template <class Exec>
bool searchsorted(VNN_KOKKOS_SEARCHSORTED_PARAMS(Exec)) {
  using namespace sorting;
  SearchRows s;
  const char* why = nullptr;
  if (!decode_searchsorted(op, &s, &why)) return refuse(why);
  if (s.rows * s.m == 0) return true;
  const vnn_tensor_desc &seq = op.inputs[0], &v = op.inputs[1], &out = op.outputs[0];
  dispatch_types<SortTypes>("searchsorted", seq.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* q = typed<T>(seq) + seq.offset;
    const T* x = typed<T>(v) + v.offset;
    if (out.dtype == VNN_INT64)
      search_rows<T>(exec, q, s.seq_rows, s.n, x, typed<int64_t>(out) + out.offset, s.rows, s.m, s.right);
    else
      search_rows<T>(exec, q, s.seq_rows, s.n, x, typed<int32_t>(out) + out.offset, s.rows, s.m, s.right);
  });
  return true;
}

}  // namespace vnn::kernels
