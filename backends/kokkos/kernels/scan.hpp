// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SCAN: out0[r, j] = in0[r, 0] (+) ... (+) in0[r, j] along the last dim,
// ints[0] = vnn_scan_fn (backend_abi.h); MAX / MIN also write out1, the
// int64 index of the running extreme. out0 and out1 have in0's sizes and any
// strides.
//
// Two shapes of work. With rows enough to fill the space, one work item
// scans one row. Fewer, longer rows (one 16M-element row) run as a blocked
// three-phase scan, so that every thread has a part of each row: each block
// reduces to its total, each row scans its block totals into carries, and
// each block scans again from its carry. The combining step works on a
// (value, index) pair, so cummax / cummin are the same scan as cumsum.
#pragma once
#include <Kokkos_Core.hpp>
#include <type_traits>

#include "kokkos/kernels/dispatch.hpp"
#include "kokkos/kernels/reduction.hpp"

namespace vnn::kernels {

// The running value of a scan and, for MAX / MIN, where it was found.
template <class C>
struct ScanState {
  C v;
  int64_t i;
};

template <class C> KOKKOS_INLINE_FUNCTION bool scan_isnan(C v) { return !(v == v); }

// Integer sums and products wrap, as PyTorch's do (signed overflow would be
// undefined behaviour: the arithmetic happens on the unsigned type).
template <class C> KOKKOS_INLINE_FUNCTION C wrap_add(C a, C b) {
  if constexpr (std::is_integral_v<C>) return C(std::make_unsigned_t<C>(a) + std::make_unsigned_t<C>(b));
  else return a + b;
}
template <class C> KOKKOS_INLINE_FUNCTION C wrap_mul(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    // In at least unsigned int: narrower operands would be promoted to signed int and overflow.
    using U = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, std::make_unsigned_t<C>>;
    return C(U(std::make_unsigned_t<C>(a)) * U(std::make_unsigned_t<C>(b)));
  } else {
    return a * b;
  }
}

// log(exp(a) + exp(b)) without overflow; NaN propagates, -inf is the identity.
template <class C> KOKKOS_INLINE_FUNCTION C log_add_exp(C a, C b) {
  if (scan_isnan(a) || scan_isnan(b)) return a + b;
  const C hi = a > b ? a : b, lo = a > b ? b : a;
  if (lo == -infinity<C>() || hi == infinity<C>()) return hi;
  return hi + C(kmath::log1p(kmath::exp(lo - hi)));
}

// combine(acc, next): acc becomes acc (+) next, acc covering earlier elements.
template <class C, int Fn> struct ScanOp;
template <class C> struct ScanOp<C, VNN_SCAN_SUM> {
  KOKKOS_INLINE_FUNCTION static C identity() { return C(0); }
  KOKKOS_INLINE_FUNCTION static void combine(ScanState<C>& a, const ScanState<C>& b) { a.v = wrap_add(a.v, b.v); }
};
template <class C> struct ScanOp<C, VNN_SCAN_PROD> {
  KOKKOS_INLINE_FUNCTION static C identity() { return C(1); }
  KOKKOS_INLINE_FUNCTION static void combine(ScanState<C>& a, const ScanState<C>& b) { a.v = wrap_mul(a.v, b.v); }
};
// PyTorch's rule: a NaN always takes over (so the latest NaN's index wins),
// nothing takes over from a NaN, and equal values move the index on.
template <class C> struct ScanOp<C, VNN_SCAN_MAX> {
  KOKKOS_INLINE_FUNCTION static C identity() {
    if constexpr (std::is_floating_point_v<C>) return -infinity<C>();
    else return Kokkos::reduction_identity<C>::max();  // the lowest value
  }
  KOKKOS_INLINE_FUNCTION static void combine(ScanState<C>& a, const ScanState<C>& b) {
    if (scan_isnan(b.v) || (!scan_isnan(a.v) && b.v >= a.v)) a = b;
  }
};
template <class C> struct ScanOp<C, VNN_SCAN_MIN> {
  KOKKOS_INLINE_FUNCTION static C identity() {
    if constexpr (std::is_floating_point_v<C>) return infinity<C>();
    else return Kokkos::reduction_identity<C>::min();  // the highest value
  }
  KOKKOS_INLINE_FUNCTION static void combine(ScanState<C>& a, const ScanState<C>& b) {
    if (scan_isnan(b.v) || (!scan_isnan(a.v) && b.v <= a.v)) a = b;
  }
};
template <class C> struct ScanOp<C, VNN_SCAN_LOGSUMEXP> {
  KOKKOS_INLINE_FUNCTION static C identity() { return -infinity<C>(); }
  KOKKOS_INLINE_FUNCTION static void combine(ScanState<C>& a, const ScanState<C>& b) { a.v = log_add_exp(a.v, b.v); }
};

KOKKOS_INLINE_FUNCTION constexpr bool scan_indexed(int fn) { return fn == VNN_SCAN_MAX || fn == VNN_SCAN_MIN; }

// The type a scan of out dtype O computes in: float32 sums, products and
// logsumexps in double (as PyTorch's CPU kernels accumulate), the rest in O.
template <class O, int Fn>
using scan_compute_t = std::conditional_t<std::is_same_v<O, float> && !scan_indexed(Fn), double, O>;

// One scan request's pointers and strides; row(r, b, e, acc) scans
// elements [b, e) of row r from acc.
template <class TI, class TO, int Fn>
struct ScanRows {
  using C = scan_compute_t<TO, Fn>;
  using Op = ScanOp<C, Fn>;
  using State = ScanState<C>;
  const TI* x = nullptr;
  TO* o = nullptr;
  int64_t* idx = nullptr;
  StridedIndex xi, oi, ii;
  int64_t n = 1, xs = 1, os = 1, is = 1;

  KOKKOS_INLINE_FUNCTION State identity() const { return State{Op::identity(), -1}; }
  KOKKOS_INLINE_FUNCTION State reduce(int64_t r, int64_t b, int64_t e) const {
    State acc = identity();
    const TI* xr = x + xi(r);
    if constexpr (Fn == VNN_SCAN_SUM && std::is_floating_point_v<C>) {
      // A block total only seeds the carries: four running sums break the
      // chain of dependent adds (the scan pass itself stays in order).
      C s[4] = {C(0), C(0), C(0), C(0)};
      int64_t j = b;
      for (; j + 4 <= e; j += 4)
        for (int u = 0; u < 4; ++u) s[u] += C(load(xr[(j + u) * xs]));
      for (; j < e; ++j) s[0] += C(load(xr[j * xs]));
      acc.v = (s[0] + s[1]) + (s[2] + s[3]);
    } else {
      for (int64_t j = b; j < e; ++j) Op::combine(acc, State{C(load(xr[j * xs])), j});
    }
    return acc;
  }
  KOKKOS_INLINE_FUNCTION void scan(int64_t r, int64_t b, int64_t e, State acc) const {
    const TI* xr = x + xi(r);
    TO* orow = o + oi(r);
    if constexpr (scan_indexed(Fn)) {
      int64_t* irow = idx + ii(r);
      for (int64_t j = b; j < e; ++j) {
        Op::combine(acc, State{C(load(xr[j * xs])), j});
        orow[j * os] = store<TO>(acc.v);
        irow[j * is] = acc.i;
      }
    } else {
      for (int64_t j = b; j < e; ++j) {
        Op::combine(acc, State{C(load(xr[j * xs])), j});
        orow[j * os] = store<TO>(acc.v);
      }
    }
  }
};

// The leading dims of d (every dim but the last) as a StridedIndex of rows.
inline StridedIndex scan_row_index(const vnn_tensor_desc& d) {
  vnn_tensor_desc lead = d;
  lead.ndim = d.ndim > 0 ? d.ndim - 1 : 0;
  return StridedIndex(lead);
}

template <class Exec, class TI, class TO, int Fn>
void scan_typed(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc* index, const vnn_tensor_desc& in) {
  using K = ScanRows<TI, TO, Fn>;
  using State = typename K::State;
  K k;
  const int nd = in.ndim;
  k.x = typed<TI>(in);
  k.o = typed<TO>(out);
  k.xi = scan_row_index(in);
  k.oi = scan_row_index(out);
  k.n = nd > 0 ? in.sizes[nd - 1] : 1;
  k.xs = nd > 0 ? in.strides[nd - 1] : 1;
  k.os = nd > 0 ? out.strides[nd - 1] : 1;
  if (index) {
    k.idx = typed<int64_t>(*index);
    k.ii = scan_row_index(*index);
    k.is = nd > 0 ? index->strides[nd - 1] : 1;
  }
  const int64_t n = k.n, rows = k.n == 0 ? 0 : numel(in) / k.n;
  if (rows == 0 || n == 0) return;

  // Blocks per row: enough work items to give every thread several, each
  // block long enough for its two passes to outweigh its share of the
  // carry scan.
  const int64_t blocks =
      pieces_per_row(rows, n, int64_t(exec.concurrency()) * 4, is_host_space<Exec> ? 16384 : 1024);
  if (blocks <= 1) {
    Kokkos::parallel_for("vnn::scan_rows", Range<Exec>(exec, 0, rows),
                         KOKKOS_LAMBDA(int64_t r) { k.scan(r, 0, n, k.identity()); });
    return;
  }
  const int64_t len = (n + blocks - 1) / blocks, nb = (n + len - 1) / len;
  Kokkos::View<State*, typename Exec::memory_space> carry(
      Kokkos::view_alloc(exec, std::string("vnn::scan_carries"), Kokkos::WithoutInitializing), rows * nb);
  // 1: each block's total.
  Kokkos::parallel_for("vnn::scan_block_totals", Range<Exec>(exec, 0, rows * nb), KOKKOS_LAMBDA(int64_t w) {
    const int64_t r = w / nb, b = (w - r * nb) * len;
    carry(w) = k.reduce(r, b, b + len < n ? b + len : n);
  });
  // 2: each row's totals scanned into the carry into each block (exclusive).
  Kokkos::parallel_for("vnn::scan_carries", Range<Exec>(exec, 0, rows), KOKKOS_LAMBDA(int64_t r) {
    State acc = k.identity();
    for (int64_t c = 0; c < nb; ++c) {
      const State total = carry(r * nb + c);
      carry(r * nb + c) = acc;
      K::Op::combine(acc, total);
    }
  });
  // 3: each block scanned from its carry.
  Kokkos::parallel_for("vnn::scan_blocks", Range<Exec>(exec, 0, rows * nb), KOKKOS_LAMBDA(int64_t w) {
    const int64_t r = w / nb, b = (w - r * nb) * len;
    k.scan(r, b, b + len < n ? b + len : n, carry(w));
  });
  exec.fence();  // the carries die with this scope
}

template <class Exec, class TI, class TO>
bool scan_fn(const Exec& exec, int64_t fn, const vnn_tensor_desc& out, const vnn_tensor_desc* index,
             const vnn_tensor_desc& in) {
  return dispatch_fn<VNN_SCAN_COUNT_>(fn, [&](auto f) {
    constexpr int Fn = decltype(f)::value;
    if constexpr (Fn == VNN_SCAN_LOGSUMEXP && !std::is_floating_point_v<TO>) {
      return refuse("logcumsumexp takes floating dtypes");
    } else if constexpr (!std::is_same_v<TI, TO> && Fn != VNN_SCAN_SUM && Fn != VNN_SCAN_PROD) {
      return refuse("only cumsum and cumprod widen their input");
    } else {
      scan_typed<Exec, TI, TO, Fn>(exec, out, scan_indexed(Fn) ? index : nullptr, in);
      return true;
    }
  });
}

// in0 float32, float64, int32 or int64 with out0 of the same dtype, or
// (SUM / PROD) bool, uint8 or int32 with out0 int64; out1 (MAX / MIN) int64.
template <class Exec>
bool scan(const Exec& exec, const vnn_op& op) {
  if (op.num_inputs < 1 || op.num_ints < 1) return refuse("needs in0 and ints[0] (the function)");
  const int64_t fn = op.ints[0];
  const bool indexed = fn == VNN_SCAN_MAX || fn == VNN_SCAN_MIN;
  if (op.num_outputs < (indexed ? 2 : 1)) return refuse("cummax and cummin need out1 for the indices");
  const vnn_tensor_desc &in = op.inputs[0], &out = op.outputs[0];
  const vnn_tensor_desc* index = indexed ? &op.outputs[1] : nullptr;
  bool same = in.ndim == out.ndim && (!index || (index->ndim == in.ndim && index->dtype == VNN_INT64));
  for (int i = 0; same && i < in.ndim; ++i)
    same = out.sizes[i] == in.sizes[i] && (!index || index->sizes[i] == in.sizes[i]);
  if (!same) return refuse("out0 (and out1, int64) must have in0's sizes");
  bool ok = false;
  if (in.dtype == out.dtype) {
    dispatch_types<ArithmeticTypes>("scan", out.dtype, [&](auto t) {
      using T = decltype(t);
      ok = scan_fn<Exec, T, T>(exec, fn, out, index, in);
    });
    return ok;
  }
  if (out.dtype != VNN_INT64) return refuse("a widening scan writes int64");
  dispatch_types<TypeSet<Bool, uint8_t, int32_t>>("scan", in.dtype, [&](auto t) {
    ok = scan_fn<Exec, decltype(t), int64_t>(exec, fn, out, index, in);
  });
  return ok;
}

}  // namespace vnn::kernels
