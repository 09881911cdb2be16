// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// REDUCE: out[o] = f(in0[o, j] for j over the trailing k dims).
//
// Accumulation: float32 sums, means and products accumulate in float64
// (then round once to float32); float64 in float64; integers in int64. Each
// thread keeps four independent accumulators (unrolled by 4) that are
// merged at the end, so long rows vectorise and the rounding error of a
// float64 sum stays far below float32 resolution.
//
// Parallel strategy: with many outputs, one thread per output row reduces
// the whole row. With few outputs (down to a full reduction), every row is
// split into chunks: a first pass reduces each chunk to a partial
// accumulator, a second merges the partials of a row in chunk order (so the
// result does not depend on the thread count). Host spaces give each chunk
// a contiguous slice; device spaces interleave (chunk c takes j = c, c+C,
// ...) so that neighbouring threads read neighbouring elements.
#pragma once
#include <Kokkos_Core.hpp>
#include <type_traits>

#include "kokkos/kernels/dispatch.hpp"

namespace vnn::kernels {

// Maps j in [0, inner) of the trailing dims to an element offset; collapses
// the trailing dims to one stride where their layout allows. Where they do
// not but end in a unit-stride block (N, H, W of [N, C, H, W] after the
// core moved C first: BatchNorm's statistics, a conv bias gradient), j
// walks runs of `run` unit-stride elements and `runs` maps a run number to
// its offset, so the 64-bit divisions happen once per run, not per element.
struct TrailingIndex {
  bool linear = true;
  int64_t stride = 1;
  StridedIndex general;
  int64_t run = 1;  // > 1: the run path applies
  StridedIndex runs;

  TrailingIndex() = default;
  TrailingIndex(const vnn_tensor_desc& in, int k) {
    vnn_tensor_desc d{};
    d.ndim = 0;
    for (int i = in.ndim - k; i < in.ndim; ++i)
      if (in.sizes[i] != 1) {
        d.sizes[d.ndim] = in.sizes[i];
        d.strides[d.ndim] = in.strides[i];
        ++d.ndim;
      }
    general = StridedIndex(d);
    // Collapsible to one stride: each dim's stride equals the next one's
    // stride times the next one's size.
    linear = true;
    for (int i = 0; i + 1 < d.ndim; ++i)
      if (int64_t step; !checked::mul(d.strides[i + 1], d.sizes[i + 1], &step) || d.strides[i] != step) linear = false;
    stride = d.ndim > 0 ? d.strides[d.ndim - 1] : 1;
    if (!linear && d.strides[d.ndim - 1] == 1) {  // !linear: d.ndim >= 2
      int i = d.ndim - 1;
      run = d.sizes[i];
      while (i > 0 && d.strides[i - 1] == run) run *= d.sizes[--i];  // within numel(in): no overflow
      vnn_tensor_desc rd{};
      rd.ndim = i;
      for (int q = 0; q < i; ++q) rd.sizes[q] = d.sizes[q], rd.strides[q] = d.strides[q];
      runs = StridedIndex(rd);
    }
  }
  KOKKOS_INLINE_FUNCTION int64_t operator()(int64_t j) const { return linear ? j * stride : general(j); }
};

// The leading (kept) dims of in0, as a StridedIndex.
inline StridedIndex leading_index(const vnn_tensor_desc& in, int k) {
  vnn_tensor_desc d = in;
  d.ndim = in.ndim - k;
  return StridedIndex(d);
}

template <class C> struct ArgAcc { C v; int64_t i; };

template <class C> KOKKOS_INLINE_FUNCTION bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) return v != v;
  else return false;
}

// One reduction: init(), add(acc, value, index), merge(acc, other) and
// finish(acc, count) -> value stored in the output.
template <class T, int Fn> struct ReduceOp;

template <class T> using wide_t =
    std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>;

template <class T> struct ReduceOp<T, VNN_REDUCE_SUM> {
  using Acc = wide_t<T>;
  KOKKOS_INLINE_FUNCTION static Acc init() { return Acc(0); }
  KOKKOS_INLINE_FUNCTION static void add(Acc& a, compute_t<T> v, int64_t) { a += Acc(v); }
  KOKKOS_INLINE_FUNCTION static void merge(Acc& a, const Acc& b) { a += b; }
  KOKKOS_INLINE_FUNCTION static Acc finish(const Acc& a, int64_t) { return a; }
};
template <class T> struct ReduceOp<T, VNN_REDUCE_MEAN> : ReduceOp<T, VNN_REDUCE_SUM> {
  using Acc = wide_t<T>;
  KOKKOS_INLINE_FUNCTION static Acc finish(const Acc& a, int64_t n) { return a / Acc(n); }
};
template <class T> struct ReduceOp<T, VNN_REDUCE_PROD> {
  using Acc = wide_t<T>;
  KOKKOS_INLINE_FUNCTION static Acc init() { return Acc(1); }
  KOKKOS_INLINE_FUNCTION static void add(Acc& a, compute_t<T> v, int64_t) { a *= Acc(v); }
  KOKKOS_INLINE_FUNCTION static void merge(Acc& a, const Acc& b) { a *= b; }
  KOKKOS_INLINE_FUNCTION static Acc finish(const Acc& a, int64_t) { return a; }
};

template <class C> KOKKOS_INLINE_FUNCTION C infinity() {
  if constexpr (std::is_same_v<C, float>) {
    return bits_float(0x7f800000u);
  } else {
    union { uint64_t u; double d; } v{0x7ff0000000000000ull};
    return v.d;
  }
}

// max / min propagate NaN (like PyTorch).
template <class T, bool Max> struct ExtremeOp {
  using C = compute_t<T>;
  using Acc = C;
  KOKKOS_INLINE_FUNCTION static Acc init() {
    if constexpr (std::is_floating_point_v<C>) return Max ? -infinity<C>() : infinity<C>();
    else if constexpr (Max) return Kokkos::reduction_identity<C>::max();  // the lowest value
    else return Kokkos::reduction_identity<C>::min();
  }
  KOKKOS_INLINE_FUNCTION static void add(Acc& a, C v, int64_t) {
    if (is_nan(a)) return;
    if (is_nan(v) || (Max ? v > a : v < a)) a = v;
  }
  KOKKOS_INLINE_FUNCTION static void merge(Acc& a, const Acc& b) { add(a, b, 0); }
  KOKKOS_INLINE_FUNCTION static Acc finish(const Acc& a, int64_t) { return a; }
};
template <class T> struct ReduceOp<T, VNN_REDUCE_MAX> : ExtremeOp<T, true> {};
template <class T> struct ReduceOp<T, VNN_REDUCE_MIN> : ExtremeOp<T, false> {};

// argmax / argmin: the first index of the extreme value; a NaN counts as
// the extreme (the first NaN wins), like PyTorch.
template <class T, bool Max> struct ArgOp {
  using C = compute_t<T>;
  using Acc = ArgAcc<C>;
  KOKKOS_INLINE_FUNCTION static Acc init() { return Acc{ExtremeOp<T, Max>::init(), -1}; }
  KOKKOS_INLINE_FUNCTION static bool better(C v, int64_t i, const Acc& a) {
    if (a.i < 0) return true;
    bool vn = is_nan(v), an = is_nan(a.v);
    if (vn || an) return vn && (!an || i < a.i);
    if (v == a.v) return i < a.i;
    return Max ? v > a.v : v < a.v;
  }
  KOKKOS_INLINE_FUNCTION static void add(Acc& a, C v, int64_t i) {
    if (better(v, i, a)) a = Acc{v, i};
  }
  KOKKOS_INLINE_FUNCTION static void merge(Acc& a, const Acc& b) {
    if (b.i >= 0) add(a, b.v, b.i);
  }
  KOKKOS_INLINE_FUNCTION static int64_t finish(const Acc& a, int64_t) { return a.i < 0 ? 0 : a.i; }
};
template <class T> struct ReduceOp<T, VNN_REDUCE_ARGMAX> : ArgOp<T, true> {};
template <class T> struct ReduceOp<T, VNN_REDUCE_ARGMIN> : ArgOp<T, false> {};

// Reduces elements j = first, first + step, ... < end of one row.
template <class Op, class T>
KOKKOS_INLINE_FUNCTION typename Op::Acc reduce_slice(const T* x, int64_t base, const TrailingIndex& ti,
                                                     int64_t first, int64_t end, int64_t step) {
  using Acc = typename Op::Acc;
  Acc a0 = Op::init(), a1 = Op::init(), a2 = Op::init(), a3 = Op::init();
  int64_t j = first;
  if (ti.linear && ti.stride == 1 && step == 1) {
    // Unit stride: four neighbouring elements per step into four
    // accumulators, a shape the compiler turns into one vector add.
    const T* p = x + base;
    for (; j + 3 < end; j += 4) {
      Op::add(a0, load(p[j]), j);
      Op::add(a1, load(p[j + 1]), j + 1);
      Op::add(a2, load(p[j + 2]), j + 2);
      Op::add(a3, load(p[j + 3]), j + 3);
    }
    for (; j < end; ++j) Op::add(a0, load(p[j]), j);
  } else if (ti.linear) {
    const int64_t s = ti.stride;
    for (; j + 3 * step < end; j += 4 * step) {
      Op::add(a0, load(x[base + j * s]), j);
      Op::add(a1, load(x[base + (j + step) * s]), j + step);
      Op::add(a2, load(x[base + (j + 2 * step) * s]), j + 2 * step);
      Op::add(a3, load(x[base + (j + 3 * step) * s]), j + 3 * step);
    }
    for (; j < end; j += step) Op::add(a0, load(x[base + j * s]), j);
  } else if (ti.run > 1 && step == 1) {
    while (j < end) {  // run by run, each as the unit-stride case above
      const int64_t r = j / ti.run, at = j - r * ti.run;
      const int64_t n = ti.run - at < end - j ? ti.run - at : end - j;
      const T* p = x + base + ti.runs(r) + at;
      int64_t i = 0;
      for (; i + 3 < n; i += 4) {
        Op::add(a0, load(p[i]), j + i);
        Op::add(a1, load(p[i + 1]), j + i + 1);
        Op::add(a2, load(p[i + 2]), j + i + 2);
        Op::add(a3, load(p[i + 3]), j + i + 3);
      }
      for (; i < n; ++i) Op::add(a0, load(p[i]), j + i);
      j += n;
    }
  } else {
    for (; j < end; j += step) Op::add(a0, load(x[base + ti.general(j)]), j);
  }
  Op::merge(a0, a1);
  Op::merge(a2, a3);
  Op::merge(a0, a2);
  return a0;
}

template <class Exec>
constexpr bool is_host_space = Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;

// Pieces to cut each of `rows` rows of n elements into so that there are
// about `target` work items, each piece at least min_piece long (1: a
// work item per row). The reductions' chunks and the scans' blocks.
inline int64_t pieces_per_row(int64_t rows, int64_t n, int64_t target, int64_t min_piece) {
  if (rows >= target || n < 2 * min_piece) return 1;
  const int64_t pieces = (target + rows - 1) / rows;
  return pieces < n / min_piece ? pieces : n / min_piece;
}

template <class Exec, class T, class O, int Fn>
void reduce_typed(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& in, int k) {
  using Op = ReduceOp<T, Fn>;
  using Acc = typename Op::Acc;
  const T* x = typed<T>(in);
  O* o = typed<O>(out);
  const StridedIndex oi(out), lead = leading_index(in, k);
  const TrailingIndex ti(in, k);
  const int64_t outer = numel(out);
  int64_t inner = 1;
  // A sub-product of in's sizes: bounded by numel(in), which run() checked.
  for (int i = in.ndim - k; i < in.ndim; ++i)
    if (!checked::mul(inner, in.sizes[i], &inner)) return;
  if (outer == 0) return;

  if (is_host_space<Exec>) {  // not constexpr: nvcc rejects a first capture inside if constexpr
    // Column reductions: the kept elements are adjacent (unit stride) and
    // the reduced dims step over whole rows of them (a bias gradient: a
    // [rows, C] gradient summed over rows). A row per output would walk
    // memory with a large stride; instead a work item takes a block of
    // adjacent outputs and adds row after row of it, a unit-stride,
    // vectorisable loop. Each output still accumulates its elements in
    // order j = 0, 1, ..., so the result does not depend on the blocking.
    constexpr int64_t kCols = 64;
    if (lead.contiguous && oi.contiguous && ti.linear && ti.stride >= outer && outer >= 8 && inner >= 8) {
      const int64_t blocks = (outer + kCols - 1) / kCols, step = ti.stride;
      Kokkos::parallel_for("vnn::reduce_columns", Range<Exec>(exec, 0, blocks), KOKKOS_LAMBDA(int64_t b) {
        const int64_t c0 = b * kCols, n = outer - c0 < kCols ? outer - c0 : kCols;
        Acc acc[kCols];
        for (int64_t c = 0; c < n; ++c) acc[c] = Op::init();
        const T* p = x + lead(c0);
        for (int64_t j = 0; j < inner; ++j, p += step)
          for (int64_t c = 0; c < n; ++c) Op::add(acc[c], load(p[c]), j);
        for (int64_t c = 0; c < n; ++c) o[oi(c0 + c)] = store<O>(Op::finish(acc[c], inner));
      });
      return;
    }
  }

  // Chunks per row: enough work items to fill the space, each >= min_chunk.
  const int64_t chunks =
      pieces_per_row(outer, inner, int64_t(exec.concurrency()) * 4, is_host_space<Exec> ? 4096 : 256);

  if (chunks <= 1) {
    Kokkos::parallel_for("vnn::reduce_rows", Range<Exec>(exec, 0, outer), KOKKOS_LAMBDA(int64_t r) {
      Acc a = reduce_slice<Op>(x, lead(r), ti, 0, inner, 1);
      o[oi(r)] = store<O>(Op::finish(a, inner));
    });
    return;
  }
  Kokkos::View<Acc*, typename Exec::memory_space> part(
      Kokkos::view_alloc(exec, std::string("vnn::reduce_partials"), Kokkos::WithoutInitializing), outer * chunks);
  const int64_t len = (inner + chunks - 1) / chunks;
  const int64_t nchunks = chunks;
  Kokkos::parallel_for("vnn::reduce_chunks", Range<Exec>(exec, 0, outer * chunks), KOKKOS_LAMBDA(int64_t w) {
    int64_t r = w / nchunks, c = w % nchunks;
    if (is_host_space<Exec>) {  // not constexpr: nvcc rejects a first capture inside if constexpr
      int64_t b = c * len, e = b + len < inner ? b + len : inner;
      part(w) = reduce_slice<Op>(x, lead(r), ti, b, e, 1);
    } else {
      part(w) = reduce_slice<Op>(x, lead(r), ti, c, inner, nchunks);
    }
  });
  Kokkos::parallel_for("vnn::reduce_merge", Range<Exec>(exec, 0, outer), KOKKOS_LAMBDA(int64_t r) {
    Acc a = part(r * nchunks);
    for (int64_t c = 1; c < nchunks; ++c) Op::merge(a, part(r * nchunks + c));
    o[oi(r)] = store<O>(Op::finish(a, inner));
  });
  exec.fence();  // the partials die with this scope
}

// The one output dtype each (function, input dtype) pair produces:
// ARGMAX/ARGMIN int64; SUM/PROD of integers int64; MEAN floats only;
// everything else the input dtype.
template <int Fn, class T> struct ReduceOut {
  static constexpr bool wide = Fn == VNN_REDUCE_ARGMAX || Fn == VNN_REDUCE_ARGMIN ||
                               (std::is_integral_v<T> && (Fn == VNN_REDUCE_SUM || Fn == VNN_REDUCE_PROD));
  using type = std::conditional_t<wide, int64_t, T>;
};

template <class O> constexpr int32_t dtype_code() {
  if constexpr (std::is_same_v<O, float>) return VNN_FLOAT32;
  else if constexpr (std::is_same_v<O, double>) return VNN_FLOAT64;
  else if constexpr (std::is_same_v<O, int32_t>) return VNN_INT32;
  else return VNN_INT64;
}

template <class Exec, int Fn, class T>
bool reduce_out(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& in, int k) {
  using O = typename ReduceOut<Fn, T>::type;
  if constexpr (Fn == VNN_REDUCE_MEAN && !std::is_floating_point_v<T>) {
    return refuse("mean of an integer dtype has no output dtype");
  } else {
    if (out.dtype != dtype_code<O>())
      return refuse("the output of ", vnn::detail::abi_dtype(in.dtype), " is ", vnn::detail::abi_dtype(dtype_code<O>()),
                    ", not ", vnn::detail::abi_dtype(out.dtype));
    reduce_typed<Exec, T, O, Fn>(exec, out, in, k);
    return true;
  }
}

template <class Exec, int Fn>
bool reduce_fn(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& in, int k) {
  bool ok = false;
  dispatch_types<ArithmeticTypes>("reduce", in.dtype,
                                  [&](auto t) { ok = reduce_out<Exec, Fn, decltype(t)>(exec, out, in, k); });
  return ok;
}

// Input dtypes: float32, float64, int32, int64; the output dtype is fixed by
// (fn, input dtype) as ReduceOut says; any other pairing is unsupported.
template <class Exec>
bool reduce(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& in, int64_t fn, int64_t k) {
  if (k < 0 || k > in.ndim || out.ndim != in.ndim - k)
    return refuse("reducing the last ", k, " of ", in.ndim, " dims cannot give a ", out.ndim, "-D output");
  int kk = int(k);
  switch (fn) {
    case VNN_REDUCE_SUM: return reduce_fn<Exec, VNN_REDUCE_SUM>(exec, out, in, kk);
    case VNN_REDUCE_MEAN: return reduce_fn<Exec, VNN_REDUCE_MEAN>(exec, out, in, kk);
    case VNN_REDUCE_PROD: return reduce_fn<Exec, VNN_REDUCE_PROD>(exec, out, in, kk);
    case VNN_REDUCE_MAX: return reduce_fn<Exec, VNN_REDUCE_MAX>(exec, out, in, kk);
    case VNN_REDUCE_MIN: return reduce_fn<Exec, VNN_REDUCE_MIN>(exec, out, in, kk);
    case VNN_REDUCE_ARGMAX: return reduce_fn<Exec, VNN_REDUCE_ARGMAX>(exec, out, in, kk);
    case VNN_REDUCE_ARGMIN: return reduce_fn<Exec, VNN_REDUCE_ARGMIN>(exec, out, in, kk);
    default: return false;
  }
}

}  // namespace vnn::kernels
